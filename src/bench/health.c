#define _POSIX_C_SOURCE 200809L
#include "bench/health.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "par/comm.h"
#include "core/error.h"
#include "io/results.h"
#include "core/sysinfo.h"

/* Once a second: a Pi's SoC heats over seconds, and reading sysfs costs microseconds. */
#define PERIOD_S 1.0
/* Flags that mean "throttling now" and "has happened since boot". */
#define FLAGS_NOW 0xFul
#define FLAGS_SINCE_BOOT 0xF0000ul

struct wb_health {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop, running;
    double temp_c_max, cpu_mhz_min;
    int throttled;               /* 1 seen, 0 not, -1 flags unreadable */
    unsigned long boot_flags;    /* the since-boot flags when the point began */
};

/* One reading, folded into the point's summary. Called with the lock held or before the thread runs. */
static void sample(struct wb_health *h)
{
    double t = wb_sysinfo_temp_c(), mhz = wb_sysinfo_cpu_mhz_min();
    unsigned long flags = 0;
    if (!isnan(t) && !(t <= h->temp_c_max))
        h->temp_c_max = t;
    if (!isnan(mhz) && !(mhz >= h->cpu_mhz_min))
        h->cpu_mhz_min = mhz;
    if (wb_sysinfo_throttle_flags(&flags) == 0) {
        /* Throttling now, or a since-boot flag that was not set when the point began. */
        int seen = (flags & FLAGS_NOW) || (flags & FLAGS_SINCE_BOOT & ~h->boot_flags);
        h->throttled = h->throttled > 0 || seen;
    }
}

static void *sampler(void *arg)
{
    struct wb_health *h = arg;
    pthread_mutex_lock(&h->lock);
    while (!h->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += (time_t)PERIOD_S;
        while (!h->stop && pthread_cond_timedwait(&h->wake, &h->lock, &until) == 0)
            ;
        if (!h->stop)
            sample(h);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

void wb_health_begin(struct wb_health **out)
{
    struct wb_health *h = calloc(1, sizeof *h);
    *out = NULL;
    if (!h)
        return;
    h->temp_c_max = NAN;
    h->cpu_mhz_min = NAN;
    h->throttled = -1;
    unsigned long flags = 0;
    if (wb_sysinfo_throttle_flags(&flags) == 0) {
        h->boot_flags = flags & FLAGS_SINCE_BOOT;
        h->throttled = 0;
    }
    sample(h);
    pthread_mutex_init(&h->lock, NULL);
    pthread_cond_init(&h->wake, NULL);
    h->running = pthread_create(&h->thread, NULL, sampler, h) == 0;
    *out = h;
}

/* This rank's summary of the point. */
struct reading {
    double temp_c_max, cpu_mhz_min;
    int32_t throttled;
};

static void stop(struct wb_health *h, struct reading *me)
{
    memset(me, 0, sizeof *me);
    me->temp_c_max = NAN;
    me->cpu_mhz_min = NAN;
    me->throttled = -1;
    if (!h)
        return;
    pthread_mutex_lock(&h->lock);
    h->stop = 1;
    pthread_cond_signal(&h->wake);
    pthread_mutex_unlock(&h->lock);
    if (h->running)
        pthread_join(h->thread, NULL);
    sample(h);
    me->temp_c_max = h->temp_c_max;
    me->cpu_mhz_min = h->cpu_mhz_min;
    me->throttled = h->throttled;
    pthread_mutex_destroy(&h->lock);
    pthread_cond_destroy(&h->wake);
}

/* One row per node from every rank's reading (all is NULL except on rank 0). */
static int node_rows(const struct reading *all, const int *node, int nranks, int nnodes,
                     struct wb_result_health **out)
{
    struct wb_result_health *rows = all ? calloc((size_t)nnodes, sizeof *rows) : NULL;
    if (all && !rows)
        return wb_error_set(WB_ENOMEM, "out of memory for the health table");
    /* From the last rank down, so the lowest rank of each node speaks for it. */
    for (int r = nranks - 1; all && r >= 0; r--) {
        struct wb_result_health *w = &rows[node[r]];
        w->node = node[r];
        snprintf(w->hostname, sizeof w->hostname, "%s", wb_comm_hostname(r));
        w->temp_c_max = all[r].temp_c_max;
        w->throttled = all[r].throttled;
        w->cpu_mhz_min = all[r].cpu_mhz_min;
    }
    *out = rows;
    return 0;
}

int wb_health_end(struct wb_health **hp, struct wb_result_health **rows, size_t *nrows)
{
    struct reading me;
    stop(*hp, &me);
    free(*hp);
    *hp = NULL;
    if (!rows)
        return 0;
    *rows = NULL;
    *nrows = 0;
    int nranks = wb_comm_size(), rank = wb_comm_rank(), nnodes;
    const int *node = wb_comm_node_map(&nnodes);
    struct reading *all = rank == 0 ? calloc((size_t)nranks, sizeof *all) : NULL;
    int rc = wb_comm_agree(rank == 0 && !all ? wb_error_set(WB_ENOMEM, "out of memory for health") : 0);
    if (rc == 0)
        rc = wb_comm_check(MPI_Gather(&me, sizeof me, MPI_BYTE, all, sizeof me, MPI_BYTE, 0, wb_comm_world()),
                           "MPI_Gather of node health");
    if (rc == 0)
        rc = node_rows(all, node, nranks, nnodes, rows);
    if (rc == 0 && *rows)
        *nrows = (size_t)nnodes;
    free(all);
    return wb_comm_agree(rc);
}
