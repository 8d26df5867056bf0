/* watchdog: a thread on every rank that ends a run which cannot end itself (--timeout passed,
 * no progress for --stall-timeout, SIGINT or SIGTERM), closing rank 0's result file first.
 * Once started it calls no MPI: a stopped rank or a rank blocked in a collective cannot hold it. */
#ifndef WB_WATCHDOG_H
#define WB_WATCHDOG_H

#include <stddef.h>

/* How rank 0's watchdog closes the result file as status ("timeout", "interrupted", ...), from its own
 * thread: wait up to wait_s for the main thread, put the kept file in path[cap] and the flushed points
 * in *points. 0 done, 1 the file stayed busy, 2 no file open, -1 a write failed (message set). Must
 * call no MPI. The watchdog is given it (main passes wb_results_abandon), so it knows no file format. */
typedef int (*wb_watchdog_close_fn)(const char *status, double wait_s, char *path, size_t cap, int *points);

/* Start the watchdog (timeout_s: whole-run deadline, 0 none; stall_s: longest time without a
 * sync point, 0 none; close_file: how it ends rank 0's file, NULL when there is none) and the
 * SIGINT/SIGTERM handlers. Ranks tell rank 0 they are alive with small UDP datagrams from their
 * watchdog threads. Collective (one broadcast). 0 or WB_E*. */
int wb_watchdog_start(double timeout_s, double stall_s, wb_watchdog_close_fn close_file);

/* This rank reached a synchronisation point (an agree or barrier; main makes it comm's sync hook).
 * Local, cheap, signal-free. */
void wb_watchdog_sync(void);

/* What this rank is doing now, for the watchdog's line ("... had not reached sync point 35 during io
 * write on /share"); "" for nothing said. Cut to WB_WATCHDOG_ACTIVITY_CAP - 1 bytes. Local, lock-free:
 * the watchdog thread reads it while the main thread may be blocked anywhere. */
#define WB_WATCHDOG_ACTIVITY_CAP 96
void wb_watchdog_set_activity(const char *what);

/* Rank 0, main thread: a rank stopped answering and can join no collective again, so end the run
 * as the watchdog does: close the file alone (status failed; the points flushed stay readable in
 * PATH.partial), print one line (why, then which file holds what) and _exit 1; mpirun then stops
 * the other ranks. Calls no MPI. */
_Noreturn void wb_watchdog_end(const char *why);

/* Stop and join the watchdog thread; before MPI_Finalize. Local. */
void wb_watchdog_stop(void);

#endif
