#define _DEFAULT_SOURCE /* wait4 */
#include "bench/pmic.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/report.h"
#include "core/sysfs.h"
#include "core/sysinfo.h"

extern char **environ;

const char *const wb_pmic_way_names[] = {"", "mailbox", "vcgencmd", NULL};

/* The firmware's property interface through the vcio driver (char device major 100): one ioctl takes
 * a buffer of 32-bit words that the firmware answers in place. The words, in order: the buffer's size
 * in bytes; 0 for a request (0x80000000 in a successful answer); one tag, here GET_GENCMD_RESULT, with
 * the size of its value in bytes, then the request's length (the answer sets it to 0x80000000 | its own);
 * the value: the command's own status word, then the command line, which the answer replaces with the
 * text vcgencmd would print; and 0, the end tag. */
#define MBOX_IOCTL _IOWR(100, 0, char *)
#define MBOX_TAG_GENCMD 0x00030080u
#define MBOX_ANSWERED 0x80000000u
/* The text's room, as vcgencmd gives it; pmic_read_adc prints about 1 kB. */
#define MBOX_TEXT_BYTES 1024
#define MBOX_WORDS (6 + MBOX_TEXT_BYTES / 4 + 1)
#define TEXT_CAP 8192

static struct {
    enum wb_pmic_way way;
    int fd;
} pm = {WB_PMIC_NONE, -1};

/* CPU time of every vcgencmd this module started and waited for, in microseconds. */
static _Atomic long long child_us;

/* The mailbox's answer to pmic_read_adc into out[cap]; 0, or -1 when it gives none or it filled its
 * room (a cut text would drop rails). */
static int mailbox_text(int fd, char *out, size_t cap)
{
    uint32_t b[MBOX_WORDS] __attribute__((aligned(16)));
    memset(b, 0, sizeof b);
    b[0] = (uint32_t)sizeof b;
    b[1] = 0;
    b[2] = MBOX_TAG_GENCMD;
    b[3] = (uint32_t)(sizeof b - 6 * sizeof b[0]); /* the value: status word and text, to the end tag */
    b[4] = 0;
    b[5] = 0;
    memcpy(&b[6], "pmic_read_adc", sizeof "pmic_read_adc");
    int rc;
    while ((rc = ioctl(fd, MBOX_IOCTL, b)) < 0 && errno == EINTR)
        ;
    if (rc < 0 || b[1] != MBOX_ANSWERED || b[5] != 0)
        return -1;
    const char *text = (const char *)&b[6];
    size_t len = strnlen(text, MBOX_TEXT_BYTES);
    if (len >= MBOX_TEXT_BYTES - 1 || len + 1 > cap)
        return -1;
    memcpy(out, text, len + 1);
    return 0;
}

/* `vcgencmd pmic_read_adc` into out[cap]; 0 or -1. posix_spawn, not popen: it does not copy the page
 * tables of a process that holds large buffers. Whatever does not fit is read and dropped, so the
 * tool never blocks on a full pipe. */
static int vcgencmd_text(char *out, size_t cap)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    char *argv[] = {"vcgencmd", "pmic_read_adc", NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "vcgencmd", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    size_t len = 0;
    char spill[512];
    for (ssize_t got = 1; rc == 0 && got != 0;) {
        int full = len + 1 >= cap;
        got = full ? read(fd[0], spill, sizeof spill) : read(fd[0], out + len, cap - 1 - len);
        if (got < 0 && errno != EINTR)
            break;
        if (got > 0 && !full)
            len += (size_t)got;
    }
    out[len] = '\0';
    close(fd[0]);
    int st = 0;
    struct rusage ru;
    if (rc == 0) {
        while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR)
            ;
        child_us += (long long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000LL + ru.ru_utime.tv_usec +
                    ru.ru_stime.tv_usec;
    }
    return rc == 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

double wb_pmic_text_w(char *text, int *pairs_out)
{
    enum { MAX_RAILS = 64 };
    char rail[MAX_RAILS][32];
    double amps[MAX_RAILS], volts[MAX_RAILS];
    int n = 0;
    char *save = NULL;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[32], what[16];
        int idx;
        double v;
        if (sscanf(line, " %31s %15[a-z](%d)=%lf", name, what, &idx, &v) != 4)
            continue;
        size_t len = strlen(name);
        int is_a = !strcmp(what, "current"), is_v = !strcmp(what, "volt");
        if (len < 3 || name[len - 2] != '_' || !(is_a || is_v))
            continue;
        name[len - 2] = '\0';
        int k = 0;
        while (k < n && strcmp(rail[k], name) != 0)
            k++;
        if (k == n) {
            if (n == MAX_RAILS)
                continue;
            snprintf(rail[n], sizeof rail[n], "%s", name);
            amps[n] = volts[n] = NAN;
            n++;
        }
        if (is_a)
            amps[k] = v;
        else
            volts[k] = v;
    }
    double w = 0;
    int pairs = 0;
    for (int k = 0; k < n; k++)
        if (!isnan(amps[k]) && !isnan(volts[k])) {
            w += amps[k] * volts[k];
            pairs++;
        }
    if (pairs_out)
        *pairs_out = pairs;
    return pairs ? w : NAN;
}

/* One reading through the mailbox (fd >= 0) or vcgencmd; NAN on failure. */
static double read_w(int fd, int *pairs)
{
    char text[TEXT_CAP];
    *pairs = 0;
    if ((fd >= 0 ? mailbox_text(fd, text, sizeof text) : vcgencmd_text(text, sizeof text)) != 0)
        return NAN;
    return wb_pmic_text_w(text, pairs);
}

enum wb_pmic_way wb_pmic_open(void)
{
    wb_pmic_close();
    int vc_pairs = 0, mb_pairs = 0;
    double vc_w = wb_sysinfo_on_path("vcgencmd") ? read_w(-1, &vc_pairs) : NAN, mb_w = NAN;
    char dev[512];
    wb_sysfs_path(dev, sizeof dev, "/dev/vcio");
    int fd = open(dev, O_RDWR | O_CLOEXEC);
    if (fd >= 0)
        mb_w = read_w(fd, &mb_pairs);
    /* Two readings a few milliseconds apart: the same rails, and the board's power within 20%. */
    int agree = !isnan(mb_w) && (isnan(vc_w) || (mb_pairs == vc_pairs && fabs(mb_w - vc_w) <= 0.2 * vc_w + 0.05));
    if (agree) {
        pm.way = WB_PMIC_MAILBOX;
        pm.fd = fd;
        return pm.way;
    }
    if (!isnan(mb_w))
        wb_report_warn("power: the firmware mailbox (%s) gave %.2f W over %d rails, vcgencmd %.2f W over %d; "
                       "reading the PMIC with vcgencmd (a process start a sample)", dev, mb_w, mb_pairs, vc_w,
                       vc_pairs);
    if (fd >= 0)
        close(fd);
    pm.way = isnan(vc_w) ? WB_PMIC_NONE : WB_PMIC_VCGENCMD;
    return pm.way;
}

enum wb_pmic_way wb_pmic_way(void) { return pm.way; }

double wb_pmic_read_w(void)
{
    int pairs;
    return pm.way == WB_PMIC_NONE ? NAN : read_w(pm.way == WB_PMIC_MAILBOX ? pm.fd : -1, &pairs);
}

void wb_pmic_close(void)
{
    if (pm.fd >= 0)
        close(pm.fd);
    pm.fd = -1;
    pm.way = WB_PMIC_NONE;
}

double wb_pmic_child_cpu_s(void) { return 1e-6 * (double)child_us; }
