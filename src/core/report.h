/* report: what rank 0 prints on stdout (tables, progress with ETA) and rank-prefixed diagnostics on stderr. */
#ifndef WB_REPORT_H
#define WB_REPORT_H

/* Set up once after parsing: this rank, --quiet, and --progress (0 auto, 1 always, 2 never). Local. */
void wb_report_init(int rank, int quiet, int progress);

/* Normal output: printed on rank 0 only, to stdout, unless --quiet. Local. */
void wb_report_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A warning from any rank to stderr, prefixed "wulfbench: rank N: warning: ". Local. */
void wb_report_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* An error from rank 0 to stderr as one line "wulfbench: error: ..." (other ranks stay silent). Local. */
void wb_report_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Progress on rank 0: "what" done_frac (0..1) of the work after elapsed_s seconds; drawn
 * on a terminal (stderr) with an ETA, and not at all when stderr is not a terminal (auto). Local. */
void wb_report_progress(const char *what, double done_frac, double elapsed_s);

/* Clear the progress line, if one is drawn. Local. */
void wb_report_progress_end(void);

/* 1 if this rank prints normal output (rank 0 and not quiet). */
int wb_report_enabled(void);

#endif
