#define _POSIX_C_SOURCE 200809L
#include "fft_wisdom.h"

#include <stdio.h>
#include <stdlib.h>

#include "error.h"
#include "fft.h"

int wb_fft_wisdom_read_file(const char *path, char **text, int64_t *len)
{
    *text = NULL;
    *len = 0;
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    long sz = fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : -1;
    rewind(fp);
    char *w = malloc((size_t)(sz > 0 ? sz : 0) + 1);
    if (w) {
        *len = sz > 0 && fread(w, 1, (size_t)sz, fp) == (size_t)sz ? sz : 0;
        w[*len] = '\0';
    }
    fclose(fp);
    *text = w;
    return w ? 0 : wb_error_set(WB_ENOMEM, "out of memory for the wisdom file %s", path);
}

int wb_fft_wisdom_save_file(const char *path)
{
    char *w = wb_fft_wisdom_export(), tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *fp = w ? fopen(tmp, "w") : NULL;
    int ok = fp && fputs(w, fp) >= 0;
    if (fp && fclose(fp) != 0)
        ok = 0;
    if (!ok || rename(tmp, path) != 0)
        ok = 0;
    free(w);
    return ok ? 0 : wb_error_set(WB_EIO, "could not save FFTW wisdom to %s", path);
}
