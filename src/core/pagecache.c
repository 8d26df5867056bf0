/* pagecache: drop a file's pages and measure what stayed, for io's cold reads and fft's --input-cache drop. */
#define _GNU_SOURCE
#include "core/pagecache.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sysfs.h"

double wb_pagecache_resident(const char *path)
{
    /* mincore over 64 MiB windows, which a 32-bit address space holds */
    const int64_t window = INT64_C(64) << 20;
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return 1;
    }
    int64_t pg = sysconf(_SC_PAGESIZE), in = 0, total = 0;
    unsigned char *vec = malloc((size_t)(window / pg));
    int ok = vec != NULL;
    for (int64_t at = 0; ok && at < (int64_t)st.st_size; at += window) {
        size_t len = (size_t)((int64_t)st.st_size - at < window ? (int64_t)st.st_size - at : window);
        size_t np = (len + (size_t)pg - 1) / (size_t)pg;
        void *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t)at);
        ok = map != MAP_FAILED && mincore(map, len, vec) == 0;
        for (size_t i = 0; ok && i < np; i++)
            in += vec[i] & 1;
        total += (int64_t)np;
        if (map != MAP_FAILED)
            munmap(map, len);
    }
    free(vec);
    close(fd);
    return !ok ? 1 : total ? (double)in / (double)total : 0;
}

const char *wb_pagecache_drop(const char *path, int global, double *resident)
{
    int fd = open(path, O_RDONLY);
    if (fd >= 0) {
        fdatasync(fd);
        posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        close(fd);
    }
    *resident = wb_pagecache_resident(path);
    /* drop_caches empties every cache of the node, so only when the file's own drop left pages. */
    if (*resident > 0.01 && global) {
        sync();
        if (wb_sysfs_write("/proc/sys/vm/drop_caches", "1") == 0) {
            *resident = wb_pagecache_resident(path);
            return "drop_caches";
        }
    }
    return "fadvise";
}
