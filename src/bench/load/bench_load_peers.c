#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/load/bench_load_int.h"
#include "par/comm.h"
#include "core/error.h"
#include "fftw/fft.h"
#include "core/timer.h"

/* Report a local error to the head, which then ends the step for everyone. */
static void report_fail(struct wb_load_ctx *c, const struct wb_load_step *s, int code, double deadline)
{
    struct wb_load_fail f = {.code = code, .step = s->index};
    snprintf(f.msg, sizeof f.msg, "%s", wb_error_message());
    wb_load_isend_wait(c, &f, (int64_t)sizeof f, 0, WB_LOAD_TAG_FAIL, deadline, "report an error to the head");
}

#ifdef WB_TEST_FAULTS
/* Test builds only: WB_FAULT=load-worker-fail makes a worker's third job fail, load-worker-hang makes it
 * stop responding there, and load-corrupt flips one result byte of every worker's second job. */
static int inject_fault(struct wb_load_ctx *c)
{
    static int jobs;
    const char *fault = getenv("WB_FAULT");
    jobs++;
    if (fault && !strcmp(fault, "load-worker-fail") && jobs == 3)
        return wb_error_set(WB_EFFTW, "injected fault: worker %d could not compute job %d", c->rank, jobs);
    if (fault && !strcmp(fault, "load-worker-hang") && jobs == 3)
        wb_timer_sleep_s(3600);
    if (fault && !strcmp(fault, "load-corrupt") && jobs == 2)
        ((unsigned char *)c->res_buf)[0] ^= 0x40;
    return 0;
}
#endif

static int compute(struct wb_load_ctx *c, double *t_fft_s)
{
    const struct wb_load_opts *t = c->t;
    size_t rb = wb_fft_result_bytes(t->precision, WB_LOAD_FRAME, t->result);
    *t_fft_s = 0;
    for (int f = 0; f < t->files_per_request; f++) {
        double tf = 0;
        const char *in = (const char *)c->job_buf + (size_t)f * (size_t)c->nsamples * c->sample_bytes;
        char *out = (char *)c->res_buf + (size_t)f * (size_t)c->frames * rb;
        int rc = wb_fft_kernel_run(c->kernel, in, c->frames, WB_LOAD_HOP, t->result, out, &tf);
        if (rc)
            return rc;
        *t_fft_s += tf;
    }
    if (t->service_delay_ms > 0)
        wb_timer_sleep_s(t->service_delay_ms * 1e-3);
#ifdef WB_TEST_FAULTS
    return inject_fault(c);
#else
    return 0;
#endif
}

int wb_load_worker_step(struct wb_load_ctx *c, const struct wb_load_step *s)
{
    struct wb_comm_clock k = {c->comm, WB_LOAD_TAG_PING, WB_LOAD_TAG_PONG, WB_LOAD_NPING};
    int rc = wb_comm_clock_answer(&k, 0, 120.0, c->poll_s);
    if (rc == 0)
        rc = wb_load_start_barrier(c);
    if (rc)
        return rc;
    double deadline = wb_timer_now_s() + s->timeout_s + c->grace_s + 30.0;
    int failed = 0;
    for (;;) {
        struct wb_load_msg m;
        MPI_Status st;
        if ((rc = wb_load_irecv_wait(c, &m, (int64_t)sizeof m, 0, MPI_ANY_TAG, deadline, &st, "wait for a job or stop")))
            return rc;
        if (st.MPI_TAG == WB_LOAD_TAG_CTRL && m.code == WB_LOAD_CTRL_STOP && m.step == s->index)
            break;
        if (st.MPI_TAG != WB_LOAD_TAG_JOB || m.step != s->index || m.nbytes != c->req_bytes)
            return wb_error_set(WB_EMPI, "load step s%03d: worker %d got a message it did not expect (tag %d)",
                                s->index, c->rank, st.MPI_TAG);
        if ((rc = wb_load_irecv_wait(c, c->job_buf, m.nbytes, 0, WB_LOAD_TAG_JOB_DATA, deadline, MPI_STATUS_IGNORE,
                             "receive a job's audio")))
            return rc;
        if (failed)
            continue; /* the head knows; it sends nothing new, this only drains what was on its way */
        double w_recv = wb_timer_now_s(), t_fft = 0;
        if ((rc = compute(c, &t_fft))) {
            failed = rc;
            report_fail(c, s, rc, deadline);
            continue;
        }
        double w_send = wb_timer_now_s();
        struct wb_load_msg res = {.step = s->index, .id = m.id, .client = m.client, .nbytes = c->res_bytes,
                                  .t = {w_recv, w_send, w_send - w_recv, t_fft}};
        MPI_Request r[2];
        rc = wb_comm_check(MPI_Isend(&res, (int)sizeof res, MPI_BYTE, 0, WB_LOAD_TAG_RESULT, c->comm, &r[0]),
                           "MPI_Isend (result header)");
        if (rc == 0)
            rc = wb_comm_check(MPI_Isend(c->res_buf, (int)c->res_bytes, MPI_BYTE, 0, WB_LOAD_TAG_RESULT_DATA, c->comm,
                                         &r[1]), "MPI_Isend (result)");
        if (rc == 0)
            rc = wb_comm_wait_until(&r[0], MPI_STATUS_IGNORE, deadline, c->poll_s, "send a result header");
        if (rc == 0)
            rc = wb_comm_wait_until(&r[1], MPI_STATUS_IGNORE, deadline, c->poll_s, "send a result");
        if (rc)
            return rc;
    }
    return failed;
}

struct client {
    struct wb_load_ctx *c;
    const struct wb_load_step *s;
    struct wb_load_source src;
    double t0;
    double *sent_s, *rtt_s;
    int64_t nsent, cap, outstanding;
    struct wb_load_ops ops;
    int stop, cdone_sent, ended, rc;
};

static int client_grow(struct client *k)
{
    if (k->nsent < k->cap)
        return 0;
    int64_t cap = k->cap ? 2 * k->cap : 1024;
    double *a = realloc(k->sent_s, (size_t)cap * sizeof *a);
    if (a)
        k->sent_s = a;
    double *b = realloc(k->rtt_s, (size_t)cap * sizeof *b);
    if (b)
        k->rtt_s = b;
    if (!a || !b)
        return wb_error_set(WB_ENOMEM, "out of memory for %lld requests on a client rank", (long long)cap);
    k->cap = cap;
    return 0;
}

static void client_fail(struct client *k, int rc, double deadline)
{
    if (k->rc == 0) {
        k->rc = rc;
        report_fail(k->c, k->s, rc, deadline);
    }
    k->stop = 1;
}

static int client_send(struct client *k, int client, double t_sched, double now)
{
    struct wb_load_ctx *c = k->c;
    int rc = client_grow(k);
    if (rc)
        return rc;
    struct wb_load_msg *m = malloc(sizeof *m);
    if (!m)
        return wb_error_set(WB_ENOMEM, "out of memory for a request header");
    *m = (struct wb_load_msg){.step = k->s->index, .id = k->nsent, .client = client, .nbytes = c->req_bytes,
                              .t = {t_sched, now}};
    MPI_Request r[2];
    rc = wb_comm_check(MPI_Isend(m, (int)sizeof *m, MPI_BYTE, 0, WB_LOAD_TAG_REQ, c->comm, &r[0]),
                       "MPI_Isend (request header)");
    if (rc) {
        free(m);
        return rc;
    }
    if ((rc = wb_load_ops_add(&k->ops, r[0], (struct wb_load_op){.heap = m})))
        return rc;
    /* Every request shares the one payload buffer: MPI allows concurrent sends from it. */
    rc = wb_comm_check(MPI_Isend(c->payload, (int)c->req_bytes, MPI_BYTE, 0, WB_LOAD_TAG_REQ_DATA, c->comm, &r[1]),
                       "MPI_Isend (request audio)");
    if (rc == 0)
        rc = wb_load_ops_add(&k->ops, r[1], (struct wb_load_op){0});
    if (rc)
        return rc;
    k->sent_s[k->nsent] = now;
    k->rtt_s[k->nsent] = NAN;
    k->nsent++;
    k->outstanding++;
    return 0;
}

static int client_messages(struct client *k, double deadline, int *activity)
{
    struct wb_load_ctx *c = k->c;
    for (int n = 0; n < 64; n++) {
        int flag = 0;
        MPI_Status st;
        int rc = wb_comm_check(MPI_Iprobe(0, MPI_ANY_TAG, c->comm, &flag, &st), "MPI_Iprobe (load client)");
        if (rc || !flag)
            return rc;
        (*activity)++;
        struct wb_load_msg m;
        if ((rc = wb_load_irecv_wait(c, &m, (int64_t)sizeof m, 0, st.MPI_TAG, deadline, MPI_STATUS_IGNORE,
                             "receive from the head")))
            return rc;
        if (m.step != k->s->index)
            return wb_error_set(WB_EMPI, "load step s%03d: client rank %d got a message of step %lld", k->s->index,
                                c->rank, (long long)m.step);
        if (st.MPI_TAG == WB_LOAD_TAG_CTRL) {
            if (m.code == WB_LOAD_CTRL_STOP)
                k->stop = 1;
            else if (m.code == WB_LOAD_CTRL_END && k->cdone_sent)
                k->ended = 1;
            else
                return wb_error_set(WB_EMPI, "load step s%03d: the head ended the step before client rank %d was done",
                                    k->s->index, c->rank);
            continue;
        }
        if (st.MPI_TAG != WB_LOAD_TAG_REPLY || m.id < 0 || m.id >= k->nsent)
            return wb_error_set(WB_EMPI, "load step s%03d: client rank %d got a message it did not expect (tag %d)",
                                k->s->index, c->rank, st.MPI_TAG);
        if (m.nbytes > 0 && (rc = wb_load_irecv_wait(c, c->res_buf, m.nbytes, 0, WB_LOAD_TAG_REPLY_DATA, deadline,
                                             MPI_STATUS_IGNORE, "receive a result")))
            return rc;
        double now = wb_timer_now_s() - k->t0;
        k->rtt_s[m.id] = now - k->sent_s[m.id];
        k->outstanding--;
        wb_load_source_answered(&k->src, (int)m.client, now, m.code == WB_LOAD_REJECTED);
    }
    return 0;
}

static int client_report(struct client *k)
{
    size_t len = 2 * sizeof(int64_t) + (size_t)k->nsent * sizeof(double);
    char *buf = malloc(len);
    if (!buf)
        return wb_error_set(WB_ENOMEM, "out of memory for the client report");
    int64_t step = k->s->index;
    memcpy(buf, &step, sizeof step);
    memcpy(buf + sizeof step, &k->nsent, sizeof k->nsent);
    if (k->nsent > 0)
        memcpy(buf + 2 * sizeof(int64_t), k->rtt_s, (size_t)k->nsent * sizeof(double));
    MPI_Request r;
    int rc = wb_comm_check(MPI_Isend(buf, (int)len, MPI_BYTE, 0, WB_LOAD_TAG_CDONE, k->c->comm, &r),
                           "MPI_Isend (client report)");
    if (rc) {
        free(buf);
        return rc;
    }
    k->cdone_sent = 1;
    return wb_load_ops_add(&k->ops, r, (struct wb_load_op){.heap = buf});
}

int wb_load_client_step(struct wb_load_ctx *c, const struct wb_load_step *s)
{
    struct client k;
    memset(&k, 0, sizeof k);
    k.c = c;
    k.s = s;
    int rc = wb_load_source_init(&k.src, c->t, s, c->rank - c->first_client_rank, c->nclient_ranks, c->seed);
    int brc = wb_load_start_barrier(c);
    if (rc || brc) {
        wb_load_source_free(&k.src);
        return rc ? rc : brc;
    }
    k.t0 = wb_timer_now_s();
    double deadline = k.t0 + s->timeout_s + c->grace_s + 30.0;
    struct wb_timer_backoff idle = {0, c->poll_s};
    for (;;) {
        double now = wb_timer_now_s() - k.t0;
        int activity = 0, client, ndone = 0;
        double t_sched;
        while (!k.stop && !k.cdone_sent && wb_load_source_due(&k.src, now, &client, &t_sched)) {
            if ((rc = client_send(&k, client, t_sched, now)))
                client_fail(&k, rc, deadline);
            activity++;
        }
        if ((rc = client_messages(&k, deadline, &activity)))
            break;
        if ((rc = wb_load_ops_test(&k.ops, NULL, NULL, &ndone)))
            break;
        activity += ndone;
        now = wb_timer_now_s() - k.t0;
        if (!k.cdone_sent && (k.stop || wb_load_source_exhausted(&k.src, now)) && k.outstanding == 0 &&
            k.ops.n == 0 && (rc = client_report(&k)))
            break;
        if (k.ended && k.ops.n == 0)
            break;
        if (wb_timer_now_s() > deadline) {
            rc = wb_error_set(WB_ETIMEOUT, "load step s%03d: client rank %d heard nothing from the head in time",
                              s->index, c->rank);
            break;
        }
        if (activity)
            wb_timer_backoff_reset(&idle);
        else
            wb_timer_backoff_wait(&idle, k.stop ? INFINITY : k.t0 + wb_load_source_next_s(&k.src));
    }
    wb_load_ops_free(&k.ops);
    wb_load_source_free(&k.src);
    free(k.sent_s);
    free(k.rtt_s);
    return rc ? rc : k.rc;
}
