#include "core/error.h"

#include <stdio.h>
#include <string.h>

static char last_msg[1024];
static int last_code;

int wb_error_set(int code, const char *fmt, ...)
{
    /* Format apart first: callers may wrap the last message in a new one (an argument that is last_msg). */
    char msg[sizeof last_msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    memcpy(last_msg, msg, sizeof msg);
    last_code = code;
    return code;
}

const char *wb_error_message(void) { return last_msg; }

int wb_error_code(void) { return last_code; }

void wb_error_clear(void)
{
    last_msg[0] = '\0';
    last_code = WB_OK;
}

int wb_error_exit_status(int code)
{
    switch (code) {
    case WB_OK:
    case WB_EHELP:
    case WB_EVERSION:
        return 0;
    case WB_EUSAGE:
        return 2;
    case WB_EVERIFY:
        return 3;
    case WB_ETIMEOUT:
        return 4;
    default:
        return 1;
    }
}

const char *wb_error_name(int code)
{
    switch (code) {
    case WB_OK: return "ok";
    case WB_EUSAGE: return "usage";
    case WB_EINPUT: return "input";
    case WB_EIO: return "io";
    case WB_ENOMEM: return "memory";
    case WB_EMPI: return "mpi";
    case WB_EFFTW: return "fftw";
    case WB_EVERIFY: return "verify";
    case WB_ETIMEOUT: return "timeout";
    case WB_EEXIST: return "exists";
    case WB_EHELP: return "help";
    case WB_EVERSION: return "version";
    case WB_ESTOPPED: return "stopped";
    default: return "error";
    }
}
