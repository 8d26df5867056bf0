/* comm: the only module that calls MPI_Init/Finalize/Abort; typed collectives and error agreement. */
#ifndef WB_COMM_H
#define WB_COMM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Start MPI with errors returned, not fatal. Collective over MPI_COMM_WORLD. 0 or WB_EMPI. */
int wb_comm_init(int *argc, char ***argv);
/* Local: WB_EUSAGE when WB_MPI_THREADS held a value other than single or funneled, else 0. */
int wb_comm_threads_check(void);
/* Local: the thread level MPI provided: single, funneled, serialized or multiple. */
const char *wb_comm_threads_name(void);

/* Called at every synchronisation point (wb_comm_agree, wb_comm_barrier) before its collective: how a
 * higher layer (the watchdog, wired by main) learns of progress without comm calling up into it.
 * Must be cheap and signal-safe. Set it from the main thread before the first sync point; NULL: none. */
typedef void (*wb_comm_sync_hook)(void);
void wb_comm_set_sync_hook(wb_comm_sync_hook hook);

/* Finish MPI. Collective. 0 or WB_EMPI. */
int wb_comm_finalize(void);

/* Stop every rank with this exit status (after printing has been done). Not collective. */
_Noreturn void wb_comm_abort(int exit_status);

/* This process's rank in the world communicator. */
int wb_comm_rank(void);

/* Ranks in the world communicator. */
int wb_comm_size(void);

/* The world communicator wulfbench runs on (a duplicate of MPI_COMM_WORLD). */
MPI_Comm wb_comm_world(void);

/* Turn an MPI return code into 0 or WB_EMPI with "what: MPI error text". Local. */
int wb_comm_check(int mpi_rc, const char *what);

/* Collective: agree on an outcome. Every rank passes its local rc (0 or negative);
 * every rank gets the rc of the lowest rank that failed, and that rank's error
 * message becomes the message on every rank. Returns 0 if all succeeded. */
int wb_comm_agree(int rc);

/* Collective reductions over the world communicator: *out gets the reduced value on every
 * rank (v itself when the call fails). 0 or WB_EMPI. Correct on one rank. */
int wb_comm_max_f64(double v, double *out);
int wb_comm_min_f64(double v, double *out);
int wb_comm_sum_f64(double v, double *out);
int wb_comm_sum_i64(int64_t v, int64_t *out);
int wb_comm_max_i64(int64_t v, int64_t *out);

/* Collective: element-wise maximum of v[n] over all ranks, in place on every rank. */
int wb_comm_max_f64_n(double *v, size_t n);

/* Collective: broadcast bytes from rank root. 0 or WB_EMPI. */
int wb_comm_bcast(void *buf, size_t nbytes, int root);

/* Collective: broadcast a NUL-terminated string of capacity cap bytes from rank 0. */
int wb_comm_bcast_str(char *s, size_t cap);

/* Collective: gather one double per rank into out[nranks] on rank 0 (out may be NULL elsewhere). */
int wb_comm_gather_f64(double v, double *out);

/* Collective: gather n doubles per rank into out[nranks * n] (rank-major) on rank 0. */
int wb_comm_gather_f64_n(const double *v, size_t n, double *out);

/* Collective: gather one int64 per rank into out[nranks] on rank 0. */
int wb_comm_gather_i64(int64_t v, int64_t *out);
/* n int64 values from every rank into out[nranks * n] on rank 0, rank by rank. Collective. */
int wb_comm_gather_i64_n(const int64_t *v, size_t n, int64_t *out);

/* Local, after wb_comm_init (which found them with one Allgather): the node index of every rank,
 * [nranks] (ranks on the same hostname share one, numbered by first appearance), and the node count
 * in *nnodes (may be NULL). The map is comm's; valid until wb_comm_finalize. */
const int *wb_comm_node_map(int *nnodes);
/* Local, from the same map: the ranks on node (0 out of range), its lowest rank (-1 out of range), and
 * the most ranks any node has. */
int wb_comm_node_ranks(int node);
int wb_comm_node_first(int node);
int wb_comm_node_ranks_max(void);

/* Local: rank's hostname as wb_comm_init gathered it ("unknown" out of range). */
const char *wb_comm_hostname(int rank);

/* Collective: a communicator of the ranks that share this rank's node (shared memory), and the
 * rank world rank 0 has in it, or -1 when rank 0 is on another node. Free with MPI_Comm_free. */
int wb_comm_split_node(MPI_Comm *node, int *root_local);

/* Ranks that can map memory world rank 0 owns: node is this rank's node communicator,
 * mapped[nranks] is 1 for every rank on rank 0's node (rank 0 included). */
struct wb_comm_shm_group {
    MPI_Comm node;
    int root_local;           /* rank 0's rank in node, or -1 */
    int *mapped;              /* every rank: 1 if rank q maps rank 0's buffers */
    int any;                  /* 1 if any rank other than 0 maps them */
};

/* Collective: build g (node communicators and who maps rank 0's memory). 0 or an error,
 * agreed on every rank. Free with wb_comm_shm_group_free. */
int wb_comm_shm_group_init(struct wb_comm_shm_group *g);

/* Local: 1 when rank q maps rank 0's memory in g (0 when g has no table). */
int wb_comm_shm_maps(const struct wb_comm_shm_group *g, int q);

/* Local: free the node communicator and the table; safe on a zeroed g. 0 or WB_EMPI. */
int wb_comm_shm_group_free(struct wb_comm_shm_group *g);

/* A buffer world rank 0 owns in an MPI shared-memory window, mapped by the ranks of its node. */
struct wb_comm_shm {
    char *ptr;                /* rank 0 and mapping ranks; NULL elsewhere */
    MPI_Win win;
};

/* Collective: a window of bytes on rank 0 (others pass the same value), mapped where g says,
 * in one passive epoch that lasts until wb_comm_shm_free. 0 or an error, agreed on every rank. */
int wb_comm_shm_alloc(struct wb_comm_shm *b, const struct wb_comm_shm_group *g, int64_t bytes);

/* Local: order this rank's plain loads and stores of b against other ranks' (MPI_Win_sync).
 * A no-op on a buffer without a window. 0 or WB_EMPI. */
int wb_comm_shm_sync(const struct wb_comm_shm *b);

/* Collective over the node: end the epoch and free the window; ptr becomes NULL. 0 or WB_EMPI. */
int wb_comm_shm_free(struct wb_comm_shm *b);

struct wb_host;

/* Collective: every rank's host facts (wb_sysinfo_read, with rank and node set) into a fresh
 * *all[nranks] on rank 0 (NULL elsewhere; free it), and the node count in *nnodes on every rank.
 * 0 or an error, agreed on every rank. */
int wb_comm_gather_hosts(struct wb_host **all, int *nnodes);
/* The same for facts the caller has read into *mine (rank and node are set here). Collective. */
int wb_comm_gather_these_hosts(const struct wb_host *mine, struct wb_host **all, int *nnodes);

/* Local: the first line of MPI_Get_library_version, read (and checked) once by wb_comm_init. */
const char *wb_comm_library_version(void);

/* Local: wait for r until deadline_abs_s (wb_timer_now_s time), polling with a back-off up to poll_s
 * (0 spins). On time-out r is cancelled, so a late message cannot land in a buffer the caller gives
 * up. 0, WB_EMPI or WB_ETIMEOUT naming what. */
int wb_comm_wait_until(MPI_Request *r, MPI_Status *st, double deadline_abs_s, double poll_s, const char *what);

/* How clock probes travel: on comm, root sends tag_ping and the peer answers tag_pong with its clock. */
struct wb_comm_clock {
    MPI_Comm comm;
    int tag_ping, tag_pong;
    int nprobe;                 /* probes per peer; the shortest round trip gives the offset */
};

/* Point-to-point, on the root: the clock offset (peer's wb_timer_now_s minus the root's) of each rank
 * first..first+n-1 of k->comm into offset_s[n]. Spins while it waits; a probe unanswered after
 * timeout_s gives WB_ETIMEOUT. Each peer calls wb_comm_clock_answer at the same time. */
int wb_comm_clock_offsets(const struct wb_comm_clock *k, int first, int n, double timeout_s, double *offset_s);

/* Point-to-point, on a peer: answer k->nprobe probes from root, within timeout_s in all, polling
 * with a back-off up to poll_s. 0, WB_EMPI or WB_ETIMEOUT. */
int wb_comm_clock_answer(const struct wb_comm_clock *k, int root, double timeout_s, double poll_s);

/* Collective barrier on the world communicator. */
int wb_comm_barrier(void);

#endif
