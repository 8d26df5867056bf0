/* Input listing: files and folders of WAV files (a folder's *.wav, sorted), as --input names them. */
#define _POSIX_C_SOURCE 200809L
/* Large files on 32-bit boards (Raspberry Pi OS armhf) need a 64-bit off_t for stat. */
#define _FILE_OFFSET_BITS 64

#include "core/audio.h"

#include "core/error.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

struct strlist {
    char **v;
    int n, cap;
};

static int push(struct strlist *l, char *s)
{
    if (!s)
        return wb_error_set(WB_ENOMEM, "input list: out of memory");
    if (l->n + 1 >= l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char **v = realloc(l->v, (size_t)cap * sizeof *v);
        if (!v) {
            free(s);
            return wb_error_set(WB_ENOMEM, "input list: out of memory");
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = s;
    l->v[l->n] = NULL;
    return 0;
}

static char *join_path(const char *dir, const char *name)
{
    size_t a = strlen(dir), b = strlen(name);
    int slash = a > 0 && dir[a - 1] != '/';
    char *s = malloc(a + (size_t)slash + b + 1);
    if (!s)
        return NULL;
    memcpy(s, dir, a);
    if (slash)
        s[a] = '/';
    memcpy(s + a + slash, name, b + 1);
    return s;
}

static int has_wav_ext(const char *name)
{
    size_t n = strlen(name);
    return n > 4 && strcasecmp(name + n - 4, ".wav") == 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int list_dir(const char *dir, struct strlist *l)
{
    DIR *d = opendir(dir);
    if (!d)
        return wb_error_set(WB_EINPUT, "%s: cannot read folder: %s", dir, strerror(errno));
    const int first = l->n;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        /* Dot-files include macOS "._x.wav" resource forks, which are not audio. */
        if (e->d_name[0] == '.' || !has_wav_ext(e->d_name))
            continue;
        char *full = join_path(dir, e->d_name);
        struct stat st;
        if (full && stat(full, &st) == 0 && S_ISDIR(st.st_mode)) {
            free(full);
            continue;
        }
        rc = push(l, full);
    }
    closedir(d);
    if (rc)
        return rc;
    if (l->n == first)
        return wb_error_set(WB_EINPUT, "%s: no .wav files in this folder", dir);
    /* Byte order, not locale order, so every rank and every run sees the same list. */
    qsort(l->v + first, (size_t)(l->n - first), sizeof *l->v, cmp_str);
    return 0;
}

int wb_audio_list_inputs(const char *const *paths, int npaths, char ***files_out, int *nfiles_out)
{
    *files_out = NULL;
    *nfiles_out = 0;
    if (!paths || npaths < 1)
        return wb_error_set(WB_EUSAGE, "no input files or folders given");
    struct strlist l = {NULL, 0, 0};
    int rc = 0;
    for (int i = 0; i < npaths && rc == 0; i++) {
        const char *path = paths[i];
        struct stat st;
        if (!path || !*path)
            rc = wb_error_set(WB_EINPUT, "input %d: empty path", i + 1);
        else if (stat(path, &st) != 0)
            rc = wb_error_set(WB_EINPUT, "%s: cannot use as input: %s", path, strerror(errno));
        else if (S_ISDIR(st.st_mode))
            rc = list_dir(path, &l);
        else
            rc = push(&l, strdup(path));
    }
    if (rc) {
        wb_audio_free_list(&l.v, l.n);
        return rc;
    }
    *files_out = l.v;
    *nfiles_out = l.n;
    return 0;
}

void wb_audio_free_list(char ***files, int nfiles)
{
    if (!files || !*files)
        return;
    for (int i = 0; i < nfiles; i++)
        free((*files)[i]);
    free(*files);
    *files = NULL;
}
