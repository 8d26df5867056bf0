#define _POSIX_C_SOURCE 200809L
#include "fftw/fft_wisdom.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/safeio.h"
#include "core/sysinfo.h"
#include "fftw/fft.h"
#include "par/comm.h"

/* The last line of a wisdom file wulfbench saved: the architecture and FFTW build it was measured
 * with. FFTW's own signature only tells FFTW builds apart, so wisdom carried from an x86 desktop to
 * an ARM board would otherwise be read there. At the end, so the file still starts as FFTW's own
 * tools (fftw-wisdom, fftw_import_wisdom_from_filename) expect. */
#define FINGERPRINT "# wulfbench wisdom for "

static void fingerprint(char *out, size_t cap)
{
    snprintf(out, cap, "%s%s, %s\n", FINGERPRINT, wb_sysinfo_build_arch(), wb_fft_version());
}

/* The FFTW wisdom in a file's text, without the fingerprint of this build; an error naming both
 * builds when the file was saved by another. Files without one (saved by FFTW's tools or older
 * versions) are left to FFTW's own check. */
static int check_fingerprint(const char *path, char **text, int64_t *len)
{
    char mine[256];
    fingerprint(mine, sizeof mine);
    char *line = *text;
    if (strncmp(line, FINGERPRINT, strlen(FINGERPRINT)) != 0) {
        line = strstr(*text, "\n" FINGERPRINT);
        if (!line)
            return 0;
        line++;
    }
    size_t n = strcspn(line, "\n");
    if (strncmp(line, mine, strlen(mine) - 1) != 0 || n != strlen(mine) - 1)
        return wb_error_set(WB_EUSAGE, "--wisdom %s was measured on %.*s; this build is %s, %s: give each "
                                       "architecture its own wisdom file (e.g. wisdom-%s.txt)",
                            path, (int)(n - strlen(FINGERPRINT)), line + strlen(FINGERPRINT),
                            wb_sysinfo_build_arch(), wb_fft_version(), wb_sysinfo_build_arch());
    *len = line - *text;
    *line = '\0';
    return 0;
}

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
    return w ? check_fingerprint(path, text, len) : wb_error_set(WB_ENOMEM, "out of memory for the wisdom file %s", path);
}

int wb_fft_wisdom_share(const char *path)
{
    int rank = wb_comm_rank(), rc = 0;
    char *w = NULL;
    int64_t len = 0;
    if (rank == 0 && path)
        rc = wb_fft_wisdom_read_file(path, &w, &len);
    else if (rank == 0 && !(w = wb_fft_wisdom_export()))
        rc = wb_error_set(WB_ENOMEM, "out of memory for FFTW wisdom");
    else if (rank == 0)
        len = (int64_t)strlen(w);
    rc = wb_comm_agree(rc);
    rc = rc ? rc : wb_comm_bcast(&len, sizeof len, 0);
    if (rc == 0 && len > 0) {
        if (rank != 0 && !(w = malloc((size_t)len + 1)))
            rc = wb_error_set(WB_ENOMEM, "out of memory for FFTW wisdom");
        rc = wb_comm_agree(rc);
        rc = rc ? rc : wb_comm_bcast(w, (size_t)len, 0);
        /* Rank 0 already holds the wisdom it exported. */
        if (rc == 0 && (path || rank != 0)) {
            w[len] = '\0';
            rc = wb_fft_wisdom_import(w);
            if (rc && path)
                rc = wb_error_set(WB_EUSAGE, "--wisdom %s: %s; delete it to plan afresh", path, wb_error_message());
        }
    }
    free(w);
    return wb_comm_agree(rc);
}

int wb_fft_wisdom_save_file(const char *path)
{
    char *w = wb_fft_wisdom_export(), tmp[4200];
    FILE *fp = NULL;
    /* A temp file of our own (mkstemp) beside the target, renamed over it: never through a planted link. */
    int rc = w ? wb_safeio_tmp(path, tmp, sizeof tmp, &fp) : wb_error_set(WB_ENOMEM, "out of memory for wisdom");
    if (rc == 0) {
        char tail[256];
        fingerprint(tail, sizeof tail);
        int ok = fputs(w, fp) >= 0 && fputs("\n", fp) >= 0 && fputs(tail, fp) >= 0;
        ok = fclose(fp) == 0 && ok;
        if (!ok) {
            unlink(tmp);
            rc = wb_error_set(WB_EIO, "could not write FFTW wisdom to %s", tmp);
        }
    }
    if (rc == 0)
        rc = wb_safeio_commit(tmp, path);
    free(w);
    return rc ? wb_error_set(WB_EIO, "could not save FFTW wisdom to %s: %s", path, wb_error_message()) : 0;
}
