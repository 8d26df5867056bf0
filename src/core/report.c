#define _POSIX_C_SOURCE 200809L
#include "core/report.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

static int my_rank, quiet, progress_mode, progress_drawn;

void wb_report_init(int rank, int q, int progress)
{
    my_rank = rank;
    quiet = q;
    progress_mode = progress;
}

int wb_report_enabled(void) { return my_rank == 0 && !quiet; }

void wb_report_printf(const char *fmt, ...)
{
    if (!wb_report_enabled())
        return;
    wb_report_progress_end();
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fflush(stdout);
}

void wb_report_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "wulfbench: rank %d: warning: ", my_rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void wb_report_error(const char *fmt, ...)
{
    if (my_rank != 0)
        return;
    wb_report_progress_end();
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "wulfbench: error: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void wb_report_progress(const char *what, double done_frac, double elapsed_s)
{
    if (my_rank != 0 || quiet || progress_mode == 2)
        return;
    if (progress_mode == 0 && !isatty(STDERR_FILENO))
        return;
    char eta[32] = "--";
    if (done_frac > 0.01) {
        double left = elapsed_s * (1.0 - done_frac) / done_frac;
        snprintf(eta, sizeof eta, "%dm%02ds", (int)(left / 60), (int)left % 60);
    }
    /* On a terminal the line is redrawn in place; elsewhere (always) one line per update. */
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "\033[2K%s: %3.0f%%  elapsed %.0fs  ETA %s\r", what, 100.0 * done_frac, elapsed_s, eta);
    else
        fprintf(stderr, "%s: %3.0f%%  elapsed %.0fs  ETA %s\n", what, 100.0 * done_frac, elapsed_s, eta);
    fflush(stderr);
    progress_drawn = isatty(STDERR_FILENO);
}

void wb_report_progress_end(void)
{
    if (!progress_drawn)
        return;
    fprintf(stderr, "\033[2K\r");
    fflush(stderr);
    progress_drawn = 0;
}
