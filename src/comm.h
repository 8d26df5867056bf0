/* comm: the only module that calls MPI_Init/Finalize/Abort; typed collectives and error agreement. */
#ifndef WB_COMM_H
#define WB_COMM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

/* Start MPI with errors returned, not fatal. Collective over MPI_COMM_WORLD. 0 or WB_EMPI. */
int wb_comm_init(int *argc, char ***argv);

/* Finish MPI. Collective. */
void wb_comm_finalize(void);

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

/* Collective reductions over the world communicator. */
double wb_comm_max_f64(double v);
double wb_comm_min_f64(double v);
double wb_comm_sum_f64(double v);
int64_t wb_comm_sum_i64(int64_t v);
int64_t wb_comm_max_i64(int64_t v);

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

/* Collective: node index of every rank (ranks on the same hostname share one,
 * numbered by first appearance) into node[nranks] on all ranks; returns the
 * node count, or a negative error. */
int wb_comm_nodes(int *node);

/* Collective: a communicator of the ranks that share this rank's node (shared memory), and the
 * rank world rank 0 has in it, or -1 when rank 0 is on another node. Free with MPI_Comm_free. */
int wb_comm_split_node(MPI_Comm *node, int *root_local);

/* Collective barrier on the world communicator. */
int wb_comm_barrier(void);

#endif
