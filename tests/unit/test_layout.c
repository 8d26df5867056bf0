/* The work layout of `wulfbench fft`: frames per rank, blocks, scatter regions and halos, on odd
 * file lengths and every rank count from 1 to 9. */
#include <stdlib.h>
#include <string.h>

#include "bench/fft/bench_fft_int.h"
#include "core/error.h"
#include "fftw/fft.h"
#include "bench/fft/options_fft.h"
#include "bench/options.h"
#include "wbtest.h"

static struct wb_fft_opts stft(int64_t frame, int64_t hop)
{
    struct wb_options o;
    struct wb_fft_opts f;
    memset(&o, 0, sizeof o);
    memset(&f, 0, sizeof f);
    o.own[0] = (struct wb_options_own){"fft", &f};
    wb_fft_opts_defaults(&o);
    f.frame = frame;
    f.hop = hop;
    return f;
}

static void offsets(const int64_t *len, int n, int64_t *off)
{
    for (int j = 0; j < n; j++)
        off[j] = j ? off[j - 1] + len[j - 1] : 0;
}

static void test_frames_in(void)
{
    WBTEST_CHECK(wb_fftb_frames_in(4095, 4096, 2048) == 0, "a file shorter than a frame has no frames");
    WBTEST_CHECK(wb_fftb_frames_in(4096, 4096, 2048) == 1, "exactly one frame");
    WBTEST_CHECK(wb_fftb_frames_in(6143, 4096, 2048) == 1, "one sample short of a second frame");
    WBTEST_CHECK(wb_fftb_frames_in(6144, 4096, 2048) == 2, "a second frame starts one hop later");
    WBTEST_CHECK(wb_fftb_frames_in(44101, 1024, 333) == 1 + (44101 - 1024) / 333, "odd length, odd hop");
}

/* Units of odd-length files: frames in order, each inside its own file, results back to back. */
static void test_units(void)
{
    struct wb_fft_opts f = stft(1024, 384);
    int64_t len[] = {4097, 1023, 12345, 1024, 7}, off[5];
    offsets(len, 5, off);
    struct wb_fftb_layout l;
    int rc = wb_fftb_layout_build(&l, &f, 5, len, off);
    int64_t want = 0;
    for (int j = 0; j < 5; j++)
        want += wb_fftb_frames_in(len[j], 1024, 384);
    WBTEST_CHECK(rc == 0 && l.nunits == want && l.nfiles == 5, "%lld frames over 5 odd files", (long long)want);
    int inside = 1, results = 1;
    int64_t res = 0;
    for (int64_t u = 0; u < l.nunits; u++) {
        const struct wb_fftb_unit *x = &l.units[u];
        inside &= x->n == 1024 && x->off >= off[x->file] && x->off + x->n <= off[x->file] + len[x->file];
        inside &= u == 0 || x->file > l.units[u - 1].file || x->off == l.units[u - 1].off + 384;
        results &= x->res_off == res && x->res_bytes == (int64_t)wb_fft_result_bytes(f.precision, 1024, f.result);
        res += x->res_bytes;
    }
    WBTEST_CHECK(inside, "every frame lies inside its file, one hop after the last");
    WBTEST_CHECK(results && l.res_total == res && wb_fftb_result_span(&l, 0, l.nunits) == res,
                 "results are back to back and span all of res_total");
    WBTEST_CHECK(wb_fftb_result_span(&l, 3, 3) == 0, "an empty span has no bytes");
    wb_fftb_layout_free(&l);
    WBTEST_CHECK(l.units == NULL, "free clears the units");

    f.mode = WB_MODE_WHOLE;
    rc = wb_fftb_layout_build(&l, &f, 5, len, off);
    int whole = rc == 0 && l.nunits == 5;
    for (int j = 0; whole && j < 5; j++)
        whole = l.units[j].n == len[j] && l.units[j].off == off[j] &&
                l.units[j].res_bytes == (int64_t)wb_fft_result_bytes(f.precision, len[j], f.result);
    WBTEST_CHECK(whole, "whole mode: one transform per file, of the file's own (odd) length");
    wb_fftb_layout_free(&l);
}

/* For one layout and rank count: blocks split the units evenly, the scatter regions never overlap
 * (MPI_Scatterv may not read a location twice), and the halo is exactly what the next frame needs. */
static int check_blocks(const struct wb_fftb_layout *l, int64_t total, int nranks, int first, int64_t frame,
                        int64_t hop, char *why, size_t cap)
{
    int workers = nranks - first;
    int64_t covered = 0, prev_main_end = 0;
    for (int q = 0; q < nranks; q++) {
        int64_t u0, u1, s, m, e;
        wb_fftb_block(l->nunits, nranks, first, q, &u0, &u1);
        wb_fftb_region(l, total, nranks, first, q, &s, &m, &e);
        int64_t n = u1 - u0, lo = l->nunits / workers;
        if (q < first ? n != 0 : (n < lo || n > lo + 1 || u0 != covered))
            return snprintf(why, cap, "rank %d has units [%lld, %lld)", q, (long long)u0, (long long)u1);
        covered = u1;
        if (n == 0) {
            if (s || m || e)
                return snprintf(why, cap, "rank %d has no units but a region", q);
            continue;
        }
        if (s != l->units[u0].off || e != l->units[u1 - 1].off + l->units[u1 - 1].n || s < prev_main_end)
            return snprintf(why, cap, "rank %d region [%lld, %lld) overlaps or misses its frames", q,
                            (long long)s, (long long)e);
        /* The halo: the last frame reaches past where the next block starts, by frame - hop within a file. */
        int same_file = u1 < l->nunits && l->units[u1].file == l->units[u1 - 1].file;
        int64_t halo = same_file ? frame - hop : 0;
        if (e - m != halo || m > e)
            return snprintf(why, cap, "rank %d halo %lld, expected %lld", q, (long long)(e - m), (long long)halo);
        prev_main_end = m;
    }
    if (covered != l->nunits)
        return snprintf(why, cap, "units [%lld, %lld) belong to no rank", (long long)covered,
                        (long long)l->nunits);
    return 0;
}

static void test_blocks_every_rank_count(void)
{
    const int64_t frames[][2] = {{1024, 512}, {1000, 333}, {256, 256}};
    int64_t len[] = {20001, 999, 4099, 33333}, off[4];
    offsets(len, 4, off);
    int64_t total = off[3] + len[3];
    for (size_t k = 0; k < sizeof frames / sizeof frames[0]; k++) {
        struct wb_fft_opts f = stft(frames[k][0], frames[k][1]);
        struct wb_fftb_layout l;
        if (wb_fftb_layout_build(&l, &f, 4, len, off) != 0) {
            WBTEST_CHECK(0, "layout builds");
            continue;
        }
        for (int nranks = 1; nranks <= 9; nranks++)
            for (int first = 0; first <= (nranks > 1); first++) {
                char why[160] = "";
                int bad = check_blocks(&l, total, nranks, first, frames[k][0], frames[k][1], why, sizeof why);
                WBTEST_CHECK(!bad, "frame %lld hop %lld, %d ranks%s: %s", (long long)frames[k][0],
                             (long long)frames[k][1], nranks, first ? ", root only distributes" : "",
                             bad ? why : "even blocks, disjoint regions, halos of frame - hop");
            }
        wb_fftb_layout_free(&l);
    }
}

static void test_more_ranks_than_frames(void)
{
    struct wb_fft_opts f = stft(1024, 512);
    int64_t len[] = {2049}, off[] = {0};
    struct wb_fftb_layout l;
    int rc = wb_fftb_layout_build(&l, &f, 1, len, off);
    int empty = 0;
    for (int q = 0; rc == 0 && q < 9; q++) {
        int64_t u0, u1;
        wb_fftb_block(l.nunits, 9, 0, q, &u0, &u1);
        empty += u1 == u0;
    }
    WBTEST_CHECK(rc == 0 && l.nunits == 3 && empty == 6, "3 frames on 9 ranks: 6 ranks get none");
    wb_fftb_layout_free(&l);
}

int main(void)
{
    test_frames_in();
    test_units();
    test_blocks_every_rank_count();
    test_more_ranks_than_frames();
    return wbtest_done();
}
