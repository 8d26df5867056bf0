/* exitnote: the line rank 0 leaves for a job script when it ends a run that its launcher may not be
 * able to end (a node cut off): the job scripts' launch guard (jobs/lib.sh wb_launch) reads it. */
#ifndef WB_EXITNOTE_H
#define WB_EXITNOTE_H

/* When env WB_EXIT_NOTE names a file, write "EXIT_STATUS STATUS\n" to it (e.g. "4 timeout").
 * Async-signal-safe (open, write, close; no stdio, no allocation), so any thread may call it on its
 * way to _exit. Local, never fails. */
void wb_exitnote_write(int exit_status, const char *status);

#endif
