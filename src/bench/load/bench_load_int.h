/* bench_load_int: what the head, workers and client ranks of `wulfbench load` share: messages, roles, records. */
#ifndef WB_BENCH_LOAD_INT_H
#define WB_BENCH_LOAD_INT_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "bench/load/options_load.h"
#include "io/results.h"

struct wb_fft_kernel;

/* One tag per message type; every header is followed by its data message only when nbytes > 0. */
enum wb_load_tag {
    WB_LOAD_TAG_REQ = 7101,  /* client rank -> head: request header */
    WB_LOAD_TAG_REQ_DATA,    /* client rank -> head: the request's audio */
    WB_LOAD_TAG_REPLY,       /* head -> client rank: answer header (status) */
    WB_LOAD_TAG_REPLY_DATA,  /* head -> client rank: the result, when done */
    WB_LOAD_TAG_JOB,         /* head -> worker: job header */
    WB_LOAD_TAG_JOB_DATA,    /* head -> worker: the audio */
    WB_LOAD_TAG_RESULT,      /* worker -> head: result header with the worker's timings */
    WB_LOAD_TAG_RESULT_DATA, /* worker -> head: the result */
    WB_LOAD_TAG_CTRL,        /* head -> worker or client rank: stop or end */
    WB_LOAD_TAG_CDONE,       /* client rank -> head: all answered; count and round trips */
    WB_LOAD_TAG_PING,        /* head -> worker: clock offset probe */
    WB_LOAD_TAG_PONG,        /* worker -> head: its clock */
    WB_LOAD_TAG_FAIL         /* worker or client rank -> head: a local error (struct wb_load_fail) */
};

/* Clock probes per worker and step; the one with the shortest round trip gives the offset. */
#define WB_LOAD_NPING 8

/* Request outcome, as stored in the file. */
enum wb_load_status { WB_LOAD_DONE = 0, WB_LOAD_REJECTED = 1, WB_LOAD_UNFINISHED = 2, WB_LOAD_PENDING = 255 };

/* Control codes in wb_load_msg.code of a WB_LOAD_TAG_CTRL message. */
enum wb_load_ctrl {
    WB_LOAD_CTRL_STOP = 1, /* client: send nothing new; worker: the step is over */
    WB_LOAD_CTRL_END = 2   /* client: the head has everything; leave the step */
};

/* Every header. Only int64 and double, so the layout is the same on every LP64 or ILP32 ARM/x86 node. */
struct wb_load_msg {
    int64_t code;    /* status (reply), control code (ctrl) or 0 */
    int64_t step;    /* the step it belongs to: a stale message is a protocol error */
    int64_t id;      /* request: client rank's sequence number; job/result: head's record index */
    int64_t client;  /* logical client */
    int64_t nbytes;  /* bytes of the data message that follows; 0 none */
    double t[4];     /* reply: -; result: worker's recv, send, compute, fft seconds */
};

struct wb_load_fail {
    int64_t code;
    int64_t step;
    char msg[240];
};

/* Roles: rank 0 is the head, ranks 1..nworkers the workers, the last nclient_ranks ranks the clients. */
enum wb_load_role { WB_LOAD_HEAD, WB_LOAD_WORKER, WB_LOAD_CLIENT };

struct wb_load_ctx {
    const struct wb_load_opts *t;
    MPI_Comm comm;
    int rank, nranks, role;
    int nworkers, nclient_ranks, first_client_rank;
    uint64_t seed;
    int64_t nsamples;        /* per file */
    int64_t frames;          /* STFT frames per file */
    size_t sample_bytes;
    int64_t req_bytes;       /* audio bytes of one request */
    int64_t res_bytes;       /* result bytes of one request */
    void *payload;           /* head (head makes requests) and client ranks: one request's audio */
    struct wb_fft_kernel *kernel; /* workers */
    void *job_buf, *res_buf; /* workers: a job's audio and result; clients: res_buf for replies */
    double poll_s;
    double grace_s;          /* how long the head waits for workers after a step was cut off */
    double *real_minus_wtime_s; /* head: every rank's CLOCK_REALTIME minus wb_timer_now_s, from load_begin */
};

/* One step's settings (the same on every rank) and, on the head, its outcome. */
struct wb_load_rec {
    int32_t client, client_rank, worker;
    uint8_t status, warmup;
    int64_t seq;             /* the client rank's sequence number; -1 on the head */
    double t_submit, t_start, t_done;
    double t_queue, t_dist, t_comp, t_fft, t_ret, t_client;
    double w_recv, w_send;   /* worker clock, from the result header */
    void *buf;               /* the received audio while the head holds it */
};

struct wb_load_step {
    int index;
    double load;             /* clients (closed) or requests/s (open) */
    int clients;             /* closed: logical clients; open: request sources */
    double rate_rps;         /* open loop */
    double duration_s;       /* 0 with --requests */
    int64_t requests;        /* 0 with --duration */
    double timeout_s;        /* the step is cut off after this */
    /* outcome on the head */
    struct wb_load_rec *recs;
    int64_t nrecs;
    int timed_out;
    double t_last_submit_s, t_end_s;
    int64_t verify_mismatches;
    int stopped_worker;      /* a worker rank that never answered a request it held (0 none) */
    double *clock_offset_s;  /* per worker: its wall clock minus the head's, from this step's probes */
    /* Rank 0, from bench/netstat and bench/power (not for a step kept alone): the network counters
     * [nranks] and the step's energy. */
    struct wb_result_net *net;
    struct wb_result_energy energy;
    double stopped_quiet_s;  /* how long that request had been waiting for it */
};

/* A rank's share of a step's request stream: logical clients (closed) or Poisson arrivals (open). */
struct wb_load_source {
    int loop, nclients;
    int *ids;                /* closed: logical client ids */
    double *next_s;          /* closed: when each may send next; INFINITY while waiting */
    int64_t *left;           /* closed: requests each may still send (-1 unlimited) */
    double think_s, end_s;   /* end_s: no request at or after this (INFINITY with --requests) */
    double rate_rps, next_arrival_s;
    int64_t open_left;       /* open: arrivals still to come (-1 unlimited) */
    int open_id;
    uint64_t rng;
};

/* Source for stream k of nk (client rank index, or 0 of 1 on the head) in step s. 0 or WB_ENOMEM. */
int wb_load_source_init(struct wb_load_source *src, const struct wb_load_opts *t, const struct wb_load_step *s,
                        int k, int nk, uint64_t seed);
void wb_load_source_free(struct wb_load_source *src);
/* 1 and the logical client and scheduled time if a request is due at now_s (and mark it sent), else 0. */
int wb_load_source_due(struct wb_load_source *src, double now_s, int *client, double *t_sched_s);
/* The answer for client came at now_s (closed loop: it thinks, then may send again; after a
 * rejection it waits at least WB_LOAD_RETRY_S, so a full queue is not hammered in a tight loop). */
void wb_load_source_answered(struct wb_load_source *src, int client, double now_s, int rejected);
#define WB_LOAD_RETRY_S 0.01
/* 1 once this source will never make another request. */
int wb_load_source_exhausted(const struct wb_load_source *src, double now_s);
/* The earliest time a request may become due (INFINITY if none is scheduled). */
double wb_load_source_next_s(const struct wb_load_source *src);

/* Non-blocking operations in flight, with what to do when each completes. */
struct wb_load_op {
    int kind;                /* the owner's meaning; 0 a plain send */
    int64_t rec;
    void *heap;              /* freed on completion */
    void *pool_buf;          /* returned to pool on completion */
    struct wb_load_pool *pool;
};
struct wb_load_ops {
    MPI_Request *req;
    struct wb_load_op *op;
    int *idx;
    MPI_Status *st;
    int n, cap;
    struct wb_load_op *done_op; /* completed ones, while their callbacks run */
    MPI_Status *done_st;
    int done_cap;
};
/* Add a started operation; 0 or WB_ENOMEM (then the request is left to the caller). */
int wb_load_ops_add(struct wb_load_ops *ops, MPI_Request r, struct wb_load_op op);
/* Test all; calls done(arg, op, status) for each completed one, then forgets them. 0 or an error. */
int wb_load_ops_test(struct wb_load_ops *ops, int (*done)(void *arg, struct wb_load_op *op, MPI_Status *st),
                     void *arg, int *ncompleted);
void wb_load_ops_free(struct wb_load_ops *ops);

/* Buffers of one size, reused. */
struct wb_load_pool {
    size_t size;
    void **free;
    int nfree, cap;
};
void *wb_load_pool_get(struct wb_load_pool *p);
void wb_load_pool_put(struct wb_load_pool *p, void *buf);
void wb_load_pool_destroy(struct wb_load_pool *p);

/* Send or receive nbytes with c's communicator and wait until deadline (wb_timer_now_s time). */
int wb_load_isend_wait(struct wb_load_ctx *c, const void *buf, int64_t nbytes, int dest, int tag, double deadline,
                       const char *what);
int wb_load_irecv_wait(struct wb_load_ctx *c, void *buf, int64_t nbytes, int src, int tag, double deadline,
                       MPI_Status *st, const char *what);
/* Collective: every rank of c starts the step together; non-blocking underneath, so even this wait is bounded. */
int wb_load_start_barrier(struct wb_load_ctx *c);

/* A uniform double in (0, 1) from the state. */
double wb_load_rng_uniform(uint64_t *state);
/* Mix a seed with two numbers into a fresh state. */
uint64_t wb_load_rng_seed(uint64_t seed, uint64_t a, uint64_t b);

/* The step loops of the three roles; all return 0 or an error, never hang (every wait has a deadline). */
int wb_load_head_step(struct wb_load_ctx *c, struct wb_load_step *s);
int wb_load_worker_step(struct wb_load_ctx *c, const struct wb_load_step *s);
int wb_load_client_step(struct wb_load_ctx *c, const struct wb_load_step *s);

/* Why a step failed, on rank 0, and the names the file and table use. */
enum wb_load_reason { WB_LOAD_R_NONE = 0, WB_LOAD_R_LATENCY, WB_LOAD_R_REJECTIONS, WB_LOAD_R_THROUGHPUT };
extern const char *const wb_load_reason_names[];

/* A step's outcome, on rank 0. */
struct wb_load_stats {
    int index;
    double load, rate_rps;
    int clients;
    int64_t submitted, done, rejected, unfinished, measured, measured_done, done_in_window;
    double window_start_s, window_end_s;
    double offered_rps, submitted_rps, completed_rps;
    double p50_s, p95_s, p99_s, max_s, mean_s;
    int timed_out, pass, reason;
    char detail[128];
    int64_t mismatches;
    double t_end_s;
};

static inline int wb_load_closed_loop(const struct wb_load_opts *t) { return t->loop == WB_LOAD_CLOSED; }

struct wb_results;
struct wb_load_ctx;
struct wb_load_step;

/* bench_load_figures.c: a step's figures, on the head. Local. */
/* Counts, rates and latency percentiles of step s into st; WB_EVERIFY when the requests do not add up. */
int wb_load_step_stats(const struct wb_load_ctx *c, const struct wb_load_step *s, struct wb_load_stats *st);
/* Pass or fail against the SLO; a closed-loop step is also compared with the nearest lower load of prev[nprev]. */
void wb_load_evaluate(const struct wb_load_opts *t, struct wb_load_stats *st, const struct wb_load_stats *prev, int nprev);
/* Saturation over st[n]: the highest passing load below the lowest failing one (*sat), and that one
 * (*first_fail); -1 where there is none. */
void wb_load_saturation(const struct wb_load_stats *st, int n, int *sat, int *first_fail);

/* bench_load_print.c: the table on stdout, rank 0. */
void wb_load_print_header(const struct wb_load_ctx *c);
void wb_load_print_row(const struct wb_load_opts *t, const struct wb_load_stats *st);
/* The saturation line, from wb_load_saturation's sat and ff. */
void wb_load_print_summary(const struct wb_load_opts *t, const struct wb_load_stats *st, int sat, int ff,
                           const char *stop_reason);

/* bench_load_write.c. Collective: step s's attributes and records under /load/sNNN, then a flush. */
int wb_load_write_step(struct wb_results *res, const struct wb_load_ctx *c, const struct wb_load_step *s,
                       const struct wb_load_stats *st);
/* The same on rank 0 alone, with no MPI, for a step a worker stopped answering in. */
int wb_load_write_step_alone(struct wb_results *res, const struct wb_load_ctx *c, const struct wb_load_step *s,
                             const struct wb_load_stats *st);
/* Collective: the /load attributes: steps, stop reason, saturation and first failure (sat, ff: indexes or -1). */
int wb_load_write_summary(struct wb_results *res, const struct wb_load_opts *t, const struct wb_load_stats *st, int n,
                          int sat, int ff, const char *stop_reason, int ramp);

#endif
