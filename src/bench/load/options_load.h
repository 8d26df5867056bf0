/* options_load: the options of `wulfbench load`. */
#ifndef WB_OPTIONS_LOAD_H
#define WB_OPTIONS_LOAD_H

#include <stdint.h>

#include "core/optdef.h"

/* The subcommand table calls these hooks with the whole options (bench/options.h); each works on
 * this subcommand's own block, wb_load_opts_of(o). */
struct wb_options;

enum wb_load_loop { WB_LOAD_CLOSED = 0, WB_LOAD_OPEN = 1 };
enum wb_load_dispatch { WB_LOAD_DYNAMIC = 0, WB_LOAD_ROUND_ROBIN = 1 };
/* Names of the dispatch values, as options and result files spell them; NULL-terminated. */
extern const char *const wb_load_dispatch_names[];

/* Most loads in one --clients or --rates list, and most steps in one run (the ramp's hard stop). */
#define WB_LOAD_MAX_LOADS 64
#define WB_LOAD_MAX_STEPS 48
/* Sample rate of the synthetic request audio (Hz), STFT frame and hop (samples). */
#define WB_LOAD_RATE_HZ 44100
#define WB_LOAD_FRAME 4096
#define WB_LOAD_HOP 2048
/* Client ranks chosen by the program: 1 with 3 or more ranks, else 0 (the head makes the requests). */
#define WB_LOAD_CLIENT_RANKS_AUTO (-1)

struct wb_load_opts {
    int loop;                   /* enum wb_load_loop: --clients gives closed, --rates open */
    double loads[WB_LOAD_MAX_LOADS]; /* logical clients (closed) or requests/s (open), one per step */
    int nloads;                 /* 0: the default list (closed loop 1,2,4) */
    int clients_given, rates_given;
    double think_ms;            /* --think-ms: closed loop pause after each answer */
    int client_ranks;           /* --client-ranks: ranks acting as clients, or WB_LOAD_CLIENT_RANKS_AUTO */
    int files_per_request;      /* --files-per-request */
    double seconds;             /* --seconds: audio per file, s */
    int dispatch;               /* enum wb_load_dispatch */
    int64_t queue_limit;        /* --queue-limit: requests waiting for a worker, at most */
    double duration_s;          /* --duration: length of a step, s (used when requests == 0) */
    int64_t requests;           /* --requests: requests per step instead of a duration; 0 = use duration */
    int duration_given;
    double warmup_s;            /* --warmup-s: requests submitted earlier are flagged warm-up */
    double slo_ms;              /* --slo-ms: p95 latency a step must stay within */
    int ramp;                   /* --ramp: search the saturation point */
    double max_load;            /* --max-load: the ramp's ceiling (clients or requests/s); 0 = auto */
    double step_timeout_s;      /* --step-timeout: a step longer than this is cut off; 0 = auto */
    int precision;              /* enum wb_fft_precision */
    int plan;                   /* enum wb_fft_effort */
    int result;                 /* enum wb_fft_result */
    double service_delay_ms;    /* --service-delay-ms: added to every request on the worker */
    double poll_us;             /* --poll-us: longest idle sleep between polls of head, workers, clients */
};

/* The option table (terminated by a NULL name) and the help summary line. */
extern const struct wb_optdef wb_load_optdefs[];
extern const char wb_load_summary[];

/* Defaults before parsing. */
void wb_load_opts_defaults(struct wb_options *o);
/* Apply option id with argument arg (NULL for flags). 0 or WB_EUSAGE. */
int wb_load_opts_set(struct wb_options *o, int id, const char *arg);
/* Check the combination after parsing, given the common reps/warmup. 0 or WB_EUSAGE. */
int wb_load_opts_validate(struct wb_options *o);
/* Free lists. */
void wb_load_opts_free(struct wb_options *o);

/* The short ramp `wulfbench suite` runs (closed loop from 1 client, 2 s steps, one 5 s file per
 * request; about 10-15 s on 2 cores). Replaces every field with defaults first; allocates nothing. */
void wb_load_opts_compact(struct wb_options *o);

/* The loads the run starts from: the list given, or the default; returns the count. */
int wb_load_opts_loads(const struct wb_load_opts *t, const double **loads);

/* The step timeout in seconds that applies (--step-timeout, or the automatic one). */
double wb_load_opts_step_timeout_s(const struct wb_load_opts *t);

/* The stall window for a run with --stall-timeout stall_s (0: none): a load step makes no sync point
 * while it runs, so the window covers the longest step and a minute more. */
double wb_load_opts_stall_window_s(const struct wb_options *o, double stall_s);

/* The ramp's ceiling that applies (--max-load, or 256 clients / 4096 requests/s). */
double wb_load_opts_max_load(const struct wb_load_opts *t);

/* This subcommand's own block of o (the struct above). */
struct wb_load_opts *wb_load_opts_of(const struct wb_options *o);

#endif
