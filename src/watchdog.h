/* watchdog: a thread on every rank that ends a run which cannot end itself (--timeout passed,
 * no progress for --stall-timeout, SIGINT or SIGTERM), closing rank 0's result file first.
 * Once started it calls no MPI: a stopped rank or a rank blocked in a collective cannot hold it. */
#ifndef WB_WATCHDOG_H
#define WB_WATCHDOG_H

/* Start the watchdog (timeout_s: whole-run deadline, 0 none; stall_s: longest time without a
 * sync point, 0 none) and the SIGINT/SIGTERM handlers. Ranks tell rank 0 they are alive with
 * small UDP datagrams from their watchdog threads. Collective (one broadcast). 0 or WB_E*. */
int wb_watchdog_start(double timeout_s, double stall_s);

/* This rank reached a synchronisation point (an agree or barrier). Local, cheap, signal-free. */
void wb_watchdog_sync(void);

/* Stop and join the watchdog thread; before MPI_Finalize. Local. */
void wb_watchdog_stop(void);

#endif
