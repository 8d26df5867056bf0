/* health: a low-rate sampler of this node's temperature, throttling and CPU frequency while a point
 * runs (a thread that calls no MPI), and the per-node summary of the point, for its writer. */
#ifndef WB_HEALTH_H
#define WB_HEALTH_H

#include <stddef.h>

struct wb_health;
struct wb_result_health;

/* Start sampling now and then about once a second (a thread; no MPI). *h is NULL if the thread could
 * not start, and the point then records what a first and last reading show. Local. */
void wb_health_begin(struct wb_health **h);

/* Stop sampling (one last reading) and, when rows is not NULL, gather every node's maximum temperature,
 * throttling and lowest CPU frequency to rank 0 as *rows[*nrows] (one per node; NULL elsewhere; free
 * it), the point's health/nodes table. Call it after the point's timed part. Collective; frees *h
 * and sets it to NULL. 0 or an error, agreed. */
int wb_health_end(struct wb_health **h, struct wb_result_health **rows, size_t *nrows);

#endif
