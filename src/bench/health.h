/* health: a low-rate sampler of this node's temperature, throttling and CPU frequency while a point
 * runs (a thread that calls no MPI), and the per-node summary of the point in its result group. */
#ifndef WB_HEALTH_H
#define WB_HEALTH_H

struct wb_health;
struct wb_results;

/* Start sampling now and then about once a second (a thread; no MPI). *h is NULL if the thread could
 * not start, and the point then records what a first and last reading show. Local. */
void wb_health_begin(struct wb_health **h);

/* Stop sampling (one last reading) and, when res is not NULL, gather every node's maximum temperature,
 * throttling and lowest CPU frequency to rank 0 and write them to GROUP/health/nodes (e.g. group
 * "/fft/p003"). Call it after the point's timed part. Collective; frees *h and sets it to NULL. */
int wb_health_end(struct wb_health **h, struct wb_results *res, const char *group);

#endif
