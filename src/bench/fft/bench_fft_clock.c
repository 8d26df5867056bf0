/* The clock every schedule keeps for one repetition: the chunk size, phase events on a timeline
 * relative to the repetition's start, and t_gather from the moments the root held each rank's last
 * result; freed with the context. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/fft/bench_fft_int.h"
#include "bench/fft/options_fft.h"
#include "core/error.h"
#include "core/timer.h"
#include "par/comm.h"

/* The line rate assumed when --link-rate is not given: 100 Mbit/s, a Raspberry Pi 3's port. */
#define ASSUMED_RATE_BPS 12.5e6
/* Seconds of the link one chunk should take: long enough that a message's overhead is small, short
 * enough that the first chunk arrives soon and the last leaves little to do after the link is idle. */
#define CHUNK_LINK_S 0.002
/* The most bytes of samples or results one auto chunk's message carries: Open MPI sends a TCP message
 * up to 64 KiB with its headers at once (btl_tcp_eager_limit; 256 B kept for them), a longer one after
 * a handshake with the receiver. The
 * root posts every chunk's send at once, so each longer message's first 64 KiB queue ahead of the rest
 * of chunk 0 (measured: 100 kB chunks at 100 Mbit/s, the first results 296 ms late, not 3 ms). */
#define CHUNK_MSG_BYTES (65536 - 256)
/* A timeline keeps at most this many events over all ranks. */
#define TIMELINE_MAX 4096

int wb_fftb_chunk_choose(struct wb_fftb_ctx *c, const struct wb_fftb_layout *l, int64_t *chunk)
{
    int workers = c->nranks - c->first_compute;
    int64_t biggest = (l->nunits + workers - 1) / workers, smallest = l->nunits / workers;
    const char *what = c->f->mode == WB_MODE_STFT ? "frames" : "files";
    if (c->f->chunk > 0 && c->f->chunk > biggest && l->nunits > 0)
        return wb_error_set(WB_EUSAGE, "--chunk %lld is larger than a rank's block (%lld %s of %lld on %d computing "
                                       "rank%s); give --chunk %lld or less, or leave it out",
                            (long long)c->f->chunk, (long long)biggest, what, (long long)l->nunits, workers,
                            workers > 1 ? "s" : "", (long long)(biggest ? biggest : 1));
    if (c->f->chunk > 0) {
        *chunk = c->f->chunk;
        return 0;
    }
    double rate = isfinite(c->f->link_rate_Bps) ? c->f->link_rate_Bps : ASSUMED_RATE_BPS;
    int64_t samples = l->nunits ? wb_fftb_region_end(l, l->nunits) - wb_fftb_region_start(l, 0) : 0;
    double unit_bytes = l->nunits ? (double)samples * (double)c->sb / (double)l->nunits : 1.0;
    double unit_res_bytes = l->nunits ? (double)l->res_total / (double)l->nunits : 1.0;
    int64_t k = (int64_t)(rate * CHUNK_LINK_S / fmax(unit_bytes, 1.0));
    int64_t msg = (int64_t)(CHUNK_MSG_BYTES / fmax(fmax(unit_bytes, unit_res_bytes), 1.0));
    int64_t cap = smallest / 4 < msg ? smallest / 4 : msg;
    k = k < cap ? k : cap;
    *chunk = k > 1 ? k : 1;
    return 0;
}

int wb_fftb_clock_start(struct wb_fftb_ctx *c)
{
    struct wb_fftb_pipe *p = &c->pipe;
    p->t0_s = wb_timer_now_s();
    p->t_ready_s = 0;
    p->nev = 0;
    if (!p->ev) {
        int per = TIMELINE_MAX / c->nranks;
        p->ev_cap = per > 16 ? per : 16;
        p->ev = malloc((size_t)p->ev_cap * sizeof *p->ev);
    }
    if (c->rank == 0 && !p->t_held_s)
        p->t_held_s = calloc((size_t)c->nranks, sizeof *p->t_held_s);
    if (c->rank == 0 && p->t_held_s)
        memset(p->t_held_s, 0, (size_t)c->nranks * sizeof *p->t_held_s);
    if (!p->ev || (c->rank == 0 && !p->t_held_s))
        return wb_error_set(WB_ENOMEM, "out of memory for the timeline");
    return 0;
}

void wb_fftb_clock_event(struct wb_fftb_ctx *c, int64_t chunk, int phase, double a, double b)
{
    struct wb_fftb_pipe *p = &c->pipe;
    if (p->nev < p->ev_cap)
        p->ev[p->nev++] = (struct wb_fftb_event){(int32_t)chunk, phase, a - p->t0_s, b - p->t0_s};
}

int wb_fftb_clock_finish(struct wb_fftb_ctx *c, struct wb_fftb_timing *t)
{
    double held = c->rank == 0 && c->pipe.t_held_s ? c->pipe.t_held_s[0] : 0;
    int rc = 0;
    if (c->nranks > 1)
        rc = wb_comm_check(MPI_Scatter(c->pipe.t_held_s, 1, MPI_DOUBLE, &held, 1, MPI_DOUBLE, 0, wb_comm_world()),
                           "MPI_Scatter of result times");
    /* A rank without transforms is ready when its distribution ends. */
    double ready = fmax(c->pipe.t_ready_s, t->t_dist_s);
    t->t_gather_s = fmax(0.0, held - ready);
    if (c->rank != 0 && held == 0)
        t->t_gather_s = 0;
    return rc;
}

void wb_fftb_clock_free(struct wb_fftb_ctx *c)
{
    free(c->pipe.ev);
    free(c->pipe.t_held_s);
    c->pipe.ev = NULL;
    c->pipe.t_held_s = NULL;
    c->pipe.nev = c->pipe.ev_cap = 0;
}
