#define _POSIX_C_SOURCE 200809L
#include "core/exitnote.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void wb_exitnote_write(int exit_status, const char *status)
{
    const char *path = getenv("WB_EXIT_NOTE");
    if (!path || !*path)
        return;
    char line[96];
    size_t n = 0;
    char digits[12];
    int d = 0;
    unsigned v = exit_status < 0 ? 0u : (unsigned)exit_status;
    do
        digits[d++] = (char)('0' + v % 10);
    while ((v /= 10) && d < (int)sizeof digits);
    while (d)
        line[n++] = digits[--d];
    line[n++] = ' ';
    for (const char *s = status; *s && n < sizeof line - 1; s++)
        line[n++] = *s;
    line[n++] = '\n';
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return;
    if (write(fd, line, n) < 0)
        n = 0;
    close(fd);
}
