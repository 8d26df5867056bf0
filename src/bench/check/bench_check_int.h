/* bench_check internals: the facts each rank sends rank 0 (bench_check.c) and rank 0's verdicts
 * (bench_check_verdict.c). */
#ifndef WB_BENCH_CHECK_INT_H
#define WB_BENCH_CHECK_INT_H

#include <stddef.h>
#include <stdint.h>

#include "bench/check/bench_check.h"
#include "bench/check/options_check.h"
#include "core/sysinfo.h"

/* One --io-dir as one rank sees it. */
struct wb_check_dir_fact {
    char problem[96];             /* "" usable, else why not ("no such folder", "a read-only mount", ...) */
    int64_t free_bytes;           /* -1 unknown */
    int32_t seen;                 /* 1: rank 0's token is in it */
    int32_t network;              /* 1: on a network filesystem (nfs, smb, fuse) */
};

/* What one rank tells rank 0 about itself. */
struct wb_check_fact {
    struct wb_host h;
    char version[48];
    int64_t mem_avail_bytes;      /* -1 unknown */
    int64_t swap_used_bytes;      /* -1 unknown */
    int64_t throttle_flags;       /* Pi firmware flags, -1 unreadable */
    double real_minus_wtime_s;    /* CLOCK_REALTIME minus wb_timer_now_s, back to back */
    int32_t candidates;           /* interfaces Open MPI's TCP transport may pick from */
    char if_include[64];          /* OMPI_MCA_btl_tcp_if_include, "" if unset */
    struct wb_check_dir_fact io[WB_CHECK_MAX_IO_DIRS];
};

/* Rank 0's view of the whole check. */
struct wb_check_view {
    const struct wb_options *o;
    const struct wb_check_opts *k;
    int nranks, nnodes;
    double timeout_s;
    struct wb_check_fact *fact;   /* [nranks] */
    int *answered;                /* [nranks]: facts arrived */
    int *node;                    /* [nranks]: node index (first appearance of the hostname) */
    double *clock_s;              /* [nranks]: wall-clock offset to rank 0, NaN unknown */
    double *t_recv_s;             /* [nranks * nranks]: [b * n + r] rank b's receive of round r */
    int *reported;                /* [nranks]: exchange report arrived */
    int exchanged;                /* 1 once the exchange ran */
    const int *got;               /* when a rank did not answer: got[q] 0 for it, and the step */
    const char *step;
    char missing[1200];           /* the answer verdict's text, for the last line on stderr */
    int nfail, nwarn;
};

#define WB_CHECK_MSG_BYTES (1 << 20)

/* Rank 0: the node rows and every verdict, counting fails and warnings into v. Local. */
void wb_check_print(struct wb_check_view *v);

/* Rank 0: one verdict line, and its fix on the next; counts it. Local. */
void wb_check_verdict(struct wb_check_view *v, const char *level, const char *fact, const char *fix,
                      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* bench_check_storage.c. A fresh token id into token[cap]. Local. */
void wb_check_storage_token(char *token, size_t cap);
/* Rank 0: make (make 1) or remove (0) the token in each --io-dir, before the others look. Local. */
void wb_check_storage_tokens(const struct wb_check_opts *k, const char *token, int make);
/* This rank's view of each --io-dir into f->io. Local. */
void wb_check_storage_read(const struct wb_check_opts *k, const char *token, struct wb_check_fact *f);
/* Rank 0: the iodir, shared and space verdicts of each --io-dir. Local. */
void wb_check_storage_judge(struct wb_check_view *v);

/* "node 2 (pi3)" for rank q. */
const char *wb_check_node_name(const struct wb_check_view *v, int q, char *buf, int cap);

#endif
