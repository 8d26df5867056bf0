/* io's data: incompressible pages cut from a random pool made from --seed, each stamped with its file
 * and offset so no two pages of a run are alike, and the check a read makes. (The cache drop before a
 * cold read is core/pagecache.) */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "bench/io/bench_io_int.h"
#include "bench/options.h"
#include "core/error.h"
#include "core/rng.h"

void *wb_io_alloc(size_t n)
{
    void *p = NULL;
    if (posix_memalign(&p, WB_IO_PAGE, n ? n : 1) != 0)
        return NULL;
    memset(p, 0, n);
    return p;
}

int wb_io_pool_make(struct wb_io_run *r)
{
    r->pool = wb_io_alloc((size_t)WB_IO_POOL_PAGES * WB_IO_PAGE);
    if (!r->pool)
        return wb_error_set(WB_ENOMEM, "io: out of memory for the data pool");
    uint64_t state = r->o->common.seed ^ UINT64_C(0x696f2d706f6f6c);
    for (size_t i = 0; i < (size_t)WB_IO_POOL_PAGES * WB_IO_PAGE / 8; i++) {
        uint64_t v = wb_rng_next(&state);
        memcpy(r->pool + 8 * i, &v, 8);
    }
    return 0;
}

/* The pool page of page number pg of file key, and the page's 16-byte stamp. */
static const unsigned char *page_of(const struct wb_io_run *r, uint64_t key, int64_t pg, uint64_t stamp[2])
{
    uint64_t h = wb_rng_mix(key * UINT64_C(0x9E3779B97F4A7C15) ^ (uint64_t)pg);
    stamp[0] = h;
    stamp[1] = (uint64_t)pg ^ key;
    return r->pool + (size_t)(h % WB_IO_POOL_PAGES) * WB_IO_PAGE;
}

void wb_io_fill(const struct wb_io_run *r, unsigned char *buf, int64_t len, uint64_t key, int64_t offset)
{
    for (int64_t at = 0; at < len; at += WB_IO_PAGE) {
        uint64_t stamp[2];
        const unsigned char *src = page_of(r, key, (offset + at) / WB_IO_PAGE, stamp);
        size_t n = (size_t)(len - at < WB_IO_PAGE ? len - at : WB_IO_PAGE);
        memcpy(buf + at, src, n);
        memcpy(buf + at, stamp, n < sizeof stamp ? n : sizeof stamp);
    }
}

int64_t wb_io_check(const struct wb_io_run *r, const unsigned char *buf, int64_t len, uint64_t key, int64_t offset)
{
    for (int64_t at = 0; at < len; at += WB_IO_PAGE) {
        uint64_t stamp[2];
        const unsigned char *src = page_of(r, key, (offset + at) / WB_IO_PAGE, stamp);
        size_t n = (size_t)(len - at < WB_IO_PAGE ? len - at : WB_IO_PAGE), s = n < sizeof stamp ? n : sizeof stamp;
        if (memcmp(buf + at, stamp, s) || memcmp(buf + at + s, src + s, n - s)) {
            for (size_t i = 0; i < n; i++)
                if (buf[at + i] != (i < s ? ((const unsigned char *)stamp)[i] : src[i]))
                    return offset + at + (int64_t)i;
        }
    }
    return -1;
}
