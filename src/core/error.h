/* error: error codes, the last error message of this process, and exit codes. */
#ifndef WB_ERROR_H
#define WB_ERROR_H

#include <stdarg.h>

/* Module functions return 0 or one of these (negative). */
enum wb_err {
    WB_OK = 0,
    WB_EUSAGE = -1,   /* bad option or argument: exit 2 */
    WB_EINPUT = -2,   /* bad input file: exit 1 */
    WB_EIO = -3,      /* file system or result file trouble: exit 1 */
    WB_ENOMEM = -4,   /* allocation failed or would be too large: exit 1 */
    WB_EMPI = -5,     /* an MPI call failed: exit 1 */
    WB_EFFTW = -6,    /* FFTW could not plan: exit 1 */
    WB_EVERIFY = -7,  /* a computed or transferred result is wrong: exit 3 */
    WB_ETIMEOUT = -8, /* a step ran out of time: exit 4 */
    WB_EEXIST = -9,   /* the result file exists and --force was not given: exit 1 */
    WB_EHELP = -10,   /* --help was asked for: exit 0 */
    WB_EVERSION = -11, /* --version was asked for: exit 0 */
    WB_ESTOPPED = -12  /* rank 0 only: another rank stopped answering, so no collective can follow: exit 1 */
};

/* Record the message for the error that is being returned; printf-style. Returns code. */
int wb_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The message recorded by the last wb_error_set ("" if none). */
const char *wb_error_message(void);

/* The code recorded by the last wb_error_set (WB_OK if none). */
int wb_error_code(void);

/* Forget the last error. */
void wb_error_clear(void);

/* The process exit status that belongs to an error code (0, 1, 2, 3 or 4). */
int wb_error_exit_status(int code);

/* A short name for an error code, e.g. "usage". */
const char *wb_error_name(int code);

#endif
