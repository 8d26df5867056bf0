/* An LD_PRELOAD library for the tests: the firmware's answer to the mailbox ioctl on a file named
 * .../dev/vcio (no Pi here, and a regular file takes no ioctl), so the PMIC reader's own request and
 * parsing run for real. It answers as the firmware does: GET_GENCMD_RESULT with the command
 * pmic_read_adc gets the text of the file $WB_FAKE_VCIO_TEXT, cut to the request's room; any other
 * request, or a malformed one, gets the error code 0x80000001. Every other ioctl goes to libc's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define MBOX_IOCTL _IOWR(100, 0, char *)

static int is_vcio(int fd)
{
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n < 0)
        return 0;
    path[n] = '\0';
    size_t len = (size_t)n, tail = strlen("/dev/vcio");
    return len >= tail && !strcmp(path + len - tail, "/dev/vcio");
}

static int answer(uint32_t *b)
{
    uint32_t size = b[0];
    const char *want = "pmic_read_adc";
    /* size, code, tag, value size, request length, status, text..., end tag */
    if (size < 7 * 4 || size % 4 || b[1] != 0 || b[2] != 0x00030080u || b[3] + 6 * 4 > size ||
        b[3] < 8 || b[size / 4 - 1] != 0 || strncmp((const char *)&b[6], want, b[3] - 4) != 0) {
        b[1] = 0x80000001u;
        return 0;
    }
    const char *file = getenv("WB_FAKE_VCIO_TEXT");
    FILE *f = file ? fopen(file, "r") : NULL;
    char *text = (char *)&b[6];
    size_t room = b[3] - 4, len = f ? fread(text, 1, room - 1, f) : 0;
    if (f)
        fclose(f);
    text[len] = '\0';
    b[1] = 0x80000000u;
    b[4] = 0x80000000u | (uint32_t)(4 + len + 1);
    b[5] = 0;
    return 0;
}

int ioctl(int fd, unsigned long request, ...)
{
    va_list ap;
    va_start(ap, request);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (request == (unsigned long)MBOX_IOCTL && is_vcio(fd))
        return answer(arg);
    static int (*real)(int, unsigned long, ...);
    if (!real)
        real = (int (*)(int, unsigned long, ...))dlsym(RTLD_NEXT, "ioctl");
    return real(fd, request, arg);
}
