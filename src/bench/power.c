#define _POSIX_C_SOURCE 200809L
#include "bench/power.h"
#include "bench/pmic.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "par/comm.h"
#include "core/error.h"
#include "core/report.h"
#include "io/results.h"
#include "core/sysfs.h"

#define MAX_FILES 32
#define PATH_LEN 4200
#define NAME_LEN 16
/* The thread folds counters this often, so a wrap is seen (RAPL's range lasts minutes at full power);
 * a gap up to SURE_GAP_S between two readings is its own pace, over which a rate can be trusted. */
#define COUNTER_POLL_S 0.1
#define SURE_GAP_S 0.15
/* Samplers: the PMIC at 10 Hz (a vcgencmd call costs milliseconds), hwmon power files at 20 Hz. */
#define PI5_PERIOD_S 0.1
#define HWMON_PERIOD_S 0.05
/* A repetition shorter than this many sample periods is too short for power. */
#define SHORT_PERIODS 10
/* With --power-idle 0 a counter's update interval is still probed, for at most this long. */
#define PROBE_S 0.3
#define PI5_CAVEAT "pi5: PMIC rails only: the board, not the power supply or USB devices"
#define RAPL_CAVEAT "rapl: CPU package and DRAM zones only, not the rest of the machine"

const char *const wb_power_mode_names[] = {"auto", "rapl", "hwmon", "pi5", "none", NULL};

enum kind { K_NONE, K_RAPL, K_HWMON_E, K_HWMON_P, K_PI5 };
static const char *const kind_names[] = {"unmeasured", "rapl", "hwmon", "hwmon", "pi5"};

/* One repetition: monotonic times, the node's energy so far (J) and the glitch count at both ends;
 * utc1 is utc0 plus t1 - t0, so a step of the wall clock cannot bend the window. */
struct rec {
    double t0, t1, e0, e1, utc0, utc1;
    long g0, g1;
};

struct series {
    struct rec *r;
    int n, cap, cur;   /* kept, allocated, 1 while an unkept repetition sits at r[n] */
    int started;       /* 1 from the series' first repetition on ... */
    double cpu0, wall0; /* ... the sampler's CPU time (s) and the monotonic time then */
};

struct power {
    int open, mode, leader, kind, nfiles, has_thread, stop;
    double idle_s, idle_w, idle_win_s, period_s, period_err_s;
    char files[MAX_FILES][PATH_LEN];
    double max_uj[MAX_FILES], last_uj[MAX_FILES];
    double t_fold[MAX_FILES], rate_max[MAX_FILES]; /* last reading (s); top rate (uJ/s) over a sure gap */
    /* The running sum, under lock: counters fold into acc_j; samplers hold p_last_w since t_last. */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t thread;
    double acc_j, t_last, p_last_w, sum_dt, sum_dt2;
    long nsamples, glitches;
    struct series s[2];
};

static struct power pw;

static double mono_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double utc_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void sleep_s(double s)
{
    if (s <= 0)
        return;
    struct timespec t = {(time_t)s, (long)((s - floor(s)) * 1e9)};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

/* A file to read, by its name under the root (sysfs). */
static void add_file(const char *rel, double max_uj)
{
    if (pw.nfiles >= MAX_FILES)
        return;
    snprintf(pw.files[pw.nfiles], PATH_LEN, "%s", rel);
    pw.max_uj[pw.nfiles] = max_uj;
    pw.last_uj[pw.nfiles] = pw.t_fold[pw.nfiles] = NAN;
    pw.rate_max[pw.nfiles] = 0;
    pw.nfiles++;
}

/* RAPL zones under powercap: each top-level intel-rapl:N but psys (which holds the packages) and each
 * subzone named dram (outside the package). AMD's driver uses the same names. */
static int rapl_find(void)
{
    const char *dir = "/sys/class/powercap";
    char p[2048];
    DIR *d = wb_sysfs_opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "intel-rapl:", 11) != 0)
            continue;
        int sub = strchr(e->d_name + 11, ':') != NULL;
        char name[64] = "";
        snprintf(p, sizeof p, "%s/%s/name", dir, e->d_name);
        wb_sysfs_line(p, name, sizeof name);
        if (sub ? strcmp(name, "dram") != 0 : strcmp(name, "psys") == 0)
            continue;
        snprintf(p, sizeof p, "%s/%s/max_energy_range_uj", dir, e->d_name);
        double max = wb_sysfs_double(p);
        snprintf(p, sizeof p, "%s/%s/energy_uj", dir, e->d_name);
        add_file(p, max);
    }
    closedir(d);
    return pw.nfiles;
}

/* hwmon files named PREFIX<N>_input in every hwmon<N> device. */
static int hwmon_find(const char *prefix)
{
    const char *dir = "/sys/class/hwmon";
    char p[1600];
    DIR *d = wb_sysfs_opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    size_t plen = strlen(prefix);
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "hwmon", 5) != 0)
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        DIR *h = wb_sysfs_opendir(p);
        struct dirent *x;
        while (h && (x = readdir(h))) {
            const char *tail = x->d_name + plen;
            size_t digits = strspn(tail, "0123456789");
            if (strncmp(x->d_name, prefix, plen) == 0 && digits > 0 && !strcmp(tail + digits, "_input")) {
                char f[2000];
                snprintf(f, sizeof f, "%s/%s", p, x->d_name);
                add_file(f, NAN);
            }
        }
        if (h)
            closedir(h);
    }
    closedir(d);
    return pw.nfiles;
}

/* The sum of the hwmon power*_input files in W, NAN if one is unreadable. */
static double hwmon_read_w(void)
{
    double w = 0;
    for (int i = 0; i < pw.nfiles; i++)
        w += wb_sysfs_double(pw.files[i]) * 1e-6;
    return w;
}

static int is_counter(void) { return pw.kind == K_RAPL || pw.kind == K_HWMON_E; }

/* Whether counter i may have wrapped twice in gap_s: a gap past SURE_GAP_S (the reader waited for a core,
 * or was stopped) that holds 3/4 of its range at its top rate, or any such gap before a rate is known. */
static int wrap_ambiguous(int i, double gap_s)
{
    return pw.max_uj[i] > 0 && gap_s > SURE_GAP_S &&
           (pw.rate_max[i] <= 0 || pw.rate_max[i] * gap_s >= 0.75 * pw.max_uj[i]);
}

/* Counters: add every zone's increase since its last reading, across a wrap at max_energy_range_uj. A
 * counter unreadable, gone back without a known range, or maybe wrapped twice is a glitch: the
 * repetitions around it get no energy. Under the lock. */
static void fold_counters(void)
{
    double now = mono_s();
    for (int i = 0; i < pw.nfiles; i++) {
        double v = wb_sysfs_double(pw.files[i]);
        if (isnan(v)) {
            pw.glitches++;
            continue;
        }
        double last = pw.last_uj[i], d = v - last, gap = now - pw.t_fold[i];
        if (!isnan(last) && d < 0 && pw.max_uj[i] > 0 && last <= pw.max_uj[i])
            d += pw.max_uj[i];
        if (!isnan(last) && (d < 0 || wrap_ambiguous(i, gap)))
            pw.glitches++, d = 0;
        pw.acc_j += isnan(last) ? 0 : d * 1e-6;
        if (!isnan(last) && gap > 0 && gap <= SURE_GAP_S && d / gap > pw.rate_max[i])
            pw.rate_max[i] = d / gap;
        pw.t_fold[i] = now;
        pw.last_uj[i] = v;
    }
}

/* Samplers: one reading w (W) at t. Zero-order hold: the last reading holds until the next. Under the lock. */
static void add_sample(double t, double w)
{
    if (isnan(w)) {
        pw.glitches++;
        return;
    }
    if (pw.nsamples > 0) {
        double dt = t - pw.t_last;
        pw.acc_j += pw.p_last_w * dt;
        pw.sum_dt += dt;
        pw.sum_dt2 += dt * dt;
    }
    pw.t_last = t;
    pw.p_last_w = w;
    pw.nsamples++;
}

static double sample_w(void) { return pw.kind == K_PI5 ? wb_pmic_read_w() : hwmon_read_w(); }

/* One sampler step: read (outside the lock, a vcgencmd call takes a while), then fold. */
static void take_sample(void)
{
    if (is_counter()) {
        pthread_mutex_lock(&pw.lock);
        fold_counters();
        pthread_mutex_unlock(&pw.lock);
        return;
    }
    double w = sample_w(), t = mono_s();
    pthread_mutex_lock(&pw.lock);
    add_sample(t, w);
    pthread_mutex_unlock(&pw.lock);
}

/* The node's energy so far (J), the glitch count and the time, read now. */
static void energy_now(double *e, long *g, double *t)
{
    pthread_mutex_lock(&pw.lock);
    *t = mono_s();
    if (is_counter())
        fold_counters();
    *e = is_counter() ? pw.acc_j : pw.nsamples ? pw.acc_j + pw.p_last_w * (*t - pw.t_last) : NAN;
    *g = pw.glitches;
    pthread_mutex_unlock(&pw.lock);
}

static void *sampler(void *arg)
{
    (void)arg;
    double period = is_counter() ? COUNTER_POLL_S : pw.kind == K_PI5 ? PI5_PERIOD_S : HWMON_PERIOD_S;
    double next = mono_s() + period;
    pthread_mutex_lock(&pw.lock);
    while (!pw.stop) {
        struct timespec until = {(time_t)next, (long)((next - floor(next)) * 1e9)};
        while (!pw.stop && pthread_cond_timedwait(&pw.wake, &pw.lock, &until) == 0)
            ;
        if (pw.stop)
            break;
        pthread_mutex_unlock(&pw.lock);
        take_sample();
        double now = mono_s();
        next = next + period > now ? next + period : now + period;
        pthread_mutex_lock(&pw.lock);
    }
    pthread_mutex_unlock(&pw.lock);
    return NULL;
}

/* One warning naming the file (rel, under the root) and the fix; the node is then unmeasured by this
 * source. */
static void warn_unreadable(const char *rel, int err, const char *what)
{
    char host[64] = "this node", file[PATH_LEN];
    wb_sysfs_path(file, sizeof file, rel);
    gethostname(host, sizeof host - 1);
    wb_report_warn("power: cannot read %s (%s): %s; make it readable with `sudo chmod a+r %s` (or a udev rule "
                   "that does it at boot); %s energy on %s is unmeasured",
                   file, strerror(err), what, file, kind_names[pw.kind], host);
}

/* Every file of the source found readable: 1, else one warning and 0 (the source is dropped). */
static int files_readable(int kind)
{
    pw.kind = kind;
    for (int i = 0; i < pw.nfiles; i++) {
        errno = 0;
        if (isnan(wb_sysfs_double(pw.files[i]))) {
            warn_unreadable(pw.files[i], errno ? errno : EIO,
                            kind == K_RAPL ? "RAPL counters are readable by root only since Linux 5.10"
                                           : "the hwmon sensor refused the read");
            pw.kind = K_NONE;
            pw.nfiles = 0;
            return 0;
        }
    }
    return 1;
}

/* On a node leader: the source for mode. 0, or WB_EUSAGE when the forced source does not exist. */
static int detect(int mode)
{
    int any = mode == WB_POWER_AUTO;
    pw.kind = K_NONE;
    pw.nfiles = 0;
    int found_rapl = 0, found_hwmon = 0;
    if (any || mode == WB_POWER_RAPL) {
        found_rapl = rapl_find() > 0;
        if (found_rapl && files_readable(K_RAPL))
            return 0;
    }
    if (any || mode == WB_POWER_HWMON) {
        found_hwmon = hwmon_find("energy") > 0;
        if (found_hwmon && files_readable(K_HWMON_E))
            return 0;
        pw.nfiles = 0;
        if (hwmon_find("power") > 0) {
            found_hwmon = 1;
            if (files_readable(K_HWMON_P))
                return 0;
        }
    }
    if ((any || mode == WB_POWER_PI5) && wb_pmic_open() != WB_PMIC_NONE) {
        pw.kind = K_PI5;
        return 0;
    }
    pw.kind = K_NONE;
    char host[64] = "this node", where[PATH_LEN];
    gethostname(host, sizeof host - 1);
    if (mode == WB_POWER_RAPL && !found_rapl) {
        wb_sysfs_path(where, sizeof where, "/sys/class/powercap/intel-rapl:*");
        return wb_error_set(WB_EUSAGE, "--power rapl: %s has no RAPL counters (no %s); use --power auto to "
                                       "measure what each node has", host, where);
    }
    if (mode == WB_POWER_HWMON && !found_hwmon) {
        wb_sysfs_path(where, sizeof where, "/sys/class/hwmon/hwmon*/{energy,power}*_input");
        return wb_error_set(WB_EUSAGE, "--power hwmon: %s has no hwmon energy or power sensor (no %s); use "
                                       "--power auto to measure what each node has", host, where);
    }
    if (mode == WB_POWER_PI5)
        return wb_error_set(WB_EUSAGE, "--power pi5: neither the firmware mailbox (/dev/vcio) nor `vcgencmd "
                                       "pmic_read_adc` gives PMIC rails on %s (a Raspberry Pi 5 has them; the user "
                                       "needs the video group); use --power auto", host);
    return 0;
}

int wb_power_open(int mode, double idle_s)
{
    wb_power_close();
    int rank = wb_comm_rank();
    int map_nodes = 0;
    const int *node = wb_comm_node_map(&map_nodes); /* cached at init */
    int rc = 0;
    int nn = map_nodes;
    rc = nn < 0 ? nn : rc;
    pw.mode = mode;
    pw.idle_s = idle_s;
    pw.leader = 1;
    for (int r = 0; rc == 0 && r < rank; r++)
        if (node[r] == node[rank])
            pw.leader = 0;
    if (rc == 0 && pw.leader && mode != WB_POWER_NONE)
        rc = detect(mode);
    rc = wb_comm_agree(rc);
    if (rc) {
        memset(&pw, 0, sizeof pw);
        return rc;
    }
    pw.idle_w = pw.period_s = pw.period_err_s = NAN;
    pw.open = 1;
    return 0;
}

/* Counters: poll the first file for window_s (or until enough changes when stop_early) and take the
 * mean interval between its changes as the update period. */
static void probe_counter(double window_s, int stop_early)
{
    double t0 = mono_s(), first = NAN, last = NAN, prev = wb_sysfs_double(pw.files[0]);
    int changes = 0;
    while (mono_s() - t0 < window_s) {
        if (changes >= (stop_early ? 4 : 20)) {
            if (stop_early)
                break;
            sleep_s(window_s - (mono_s() - t0));
            break;
        }
        sleep_s(0.0005);
        double v = wb_sysfs_double(pw.files[0]);
        if (!isnan(v) && v != prev) {
            double t = mono_s();
            if (changes++ == 0)
                first = t;
            last = t;
            prev = v;
        }
    }
    pw.period_s = changes >= 3 ? (last - first) / (changes - 1) : mono_s() - t0;
    pw.period_err_s = pw.period_s / 2;
    char file[PATH_LEN];
    wb_sysfs_path(file, sizeof file, pw.files[0]);
    if (changes < 3)
        wb_report_warn("power: %s changed %d times in %.2f s; its update period is taken as %.2f s", file, changes,
                       window_s, pw.period_s);
}

/* The idle window on every rank; a node leader with a source measures it. */
static void measure_idle(int any_source)
{
    int has = pw.kind != K_NONE;
    double win = any_source ? pw.idle_s : 0, e0 = NAN, e1 = NAN, t0 = mono_s(), t1;
    long g0 = 0, g1 = 0;
    if (has)
        energy_now(&e0, &g0, &t0);
    if (has && is_counter())
        probe_counter(win > 0 ? win : PROBE_S, win <= 0);
    else
        sleep_s(win);
    if (has)
        energy_now(&e1, &g1, &t1);
    else
        t1 = mono_s();
    pw.idle_win_s = win > 0 ? t1 - t0 : 0;
    /* A counter that never moved through the window is stuck, as in a repetition: unknown, not 0 W. */
    int stuck = has && is_counter() && e1 == e0;
    if (has && win > 0 && g1 == g0 && !stuck)
        pw.idle_w = (e1 - e0) / (t1 - t0);
    if (has && !is_counter()) {
        double nominal = pw.kind == K_PI5 ? PI5_PERIOD_S : HWMON_PERIOD_S;
        pthread_mutex_lock(&pw.lock);
        long n = pw.nsamples - 1;
        double mean = n > 0 ? pw.sum_dt / (double)n : nominal;
        pw.period_s = mean;
        pw.period_err_s = n > 1 ? sqrt(fmax(0, pw.sum_dt2 / (double)n - mean * mean)) : NAN;
        pthread_mutex_unlock(&pw.lock);
    }
}

/* The caveats of the sources in names[n][NAME_LEN], "; " between them. */
static void caveats(const char *names, int n, char *out, size_t cap)
{
    int rapl = 0, pi5 = 0;
    for (int r = 0; r < n; r++) {
        rapl |= !strcmp(names + (size_t)r * NAME_LEN, "rapl");
        pi5 |= !strcmp(names + (size_t)r * NAME_LEN, "pi5");
    }
    snprintf(out, cap, "%s%s%s", pi5 ? PI5_CAVEAT : "", pi5 && rapl ? "; " : "", rapl ? RAPL_CAVEAT : "");
}

/* /power: every rank's source, idle power and period. Collective. */
static int write_power(struct wb_results *res)
{
    int nranks = wb_comm_size(), rank = wb_comm_rank();
    char me[NAME_LEN] = {0}, how[NAME_LEN] = {0};
    snprintf(me, sizeof me, "%s", !pw.leader ? "shared" : pw.mode == WB_POWER_NONE ? "none" : kind_names[pw.kind]);
    /* How the leader reads its source: "sysfs" (rapl, hwmon), "mailbox" or "vcgencmd" (pi5). */
    snprintf(how, sizeof how, "%s", pw.kind == K_PI5 ? wb_pmic_way_names[wb_pmic_way()] : pw.kind != K_NONE ? "sysfs" : "");
    double mine[4] = {pw.idle_w, pw.idle_win_s, pw.period_s, pw.period_err_s};
    char *names = rank == 0 ? calloc((size_t)nranks, NAME_LEN) : NULL;
    char *hows = rank == 0 ? calloc((size_t)nranks, NAME_LEN) : NULL;
    double *all = rank == 0 ? calloc((size_t)nranks * 4, sizeof *all) : NULL;
    double *col = rank == 0 ? calloc((size_t)nranks, sizeof *col) : NULL;
    int rc = wb_comm_agree(rank == 0 && (!names || !hows || !all || !col) ? wb_error_set(WB_ENOMEM, "out of memory")
                                                                            : 0);
    if (rc == 0)
        rc = wb_comm_check(MPI_Gather(me, NAME_LEN, MPI_CHAR, names, NAME_LEN, MPI_CHAR, 0, wb_comm_world()),
                           "MPI_Gather of power sources");
    if (rc == 0)
        rc = wb_comm_check(MPI_Gather(how, NAME_LEN, MPI_CHAR, hows, NAME_LEN, MPI_CHAR, 0, wb_comm_world()),
                           "MPI_Gather of power readers");
    if (rc == 0)
        rc = wb_comm_gather_f64_n(mine, 4, all);
    rc = wb_comm_agree(rc);
    if (rc == 0) {
        static const char *const dsets[] = {"/power/idle_w", "/power/idle_s", "/power/period_s", "/power/period_err_s"};
        static const char *const units[] = {"W", "s", "s", "s"};
        char cav[256] = "";
        if (rank == 0)
            caveats(names, nranks, cav, sizeof cav);
        uint64_t dims[1] = {(uint64_t)nranks};
        rc = wb_results_group(res, "/power");
        rc = rc ? rc : wb_results_write_strings(res, "/power/source", (size_t)nranks, NAME_LEN, names, "1");
        rc = rc ? rc : wb_results_write_strings(res, "/power/reader", (size_t)nranks, NAME_LEN, hows, "1");
        for (int k = 0; k < 4 && rc == 0; k++) {
            for (int r = 0; rank == 0 && r < nranks; r++)
                col[r] = all[r * 4 + k];
            rc = wb_results_write_f64(res, dsets[k], 1, dims, col, units[k]);
        }
        rc = rc ? rc : wb_results_attr_str(res, "/power", "requested", wb_power_mode_names[pw.mode]);
        rc = rc ? rc : wb_results_attr_str(res, "/power", "caveat", cav);
    }
    free(names);
    free(hows);
    free(all);
    free(col);
    return rc;
}

int wb_power_start(struct wb_results *res)
{
    if (!pw.open)
        return 0;
    int has = pw.kind != K_NONE;
    if (has) {
        pthread_mutex_init(&pw.lock, NULL);
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&pw.wake, &ca);
        pthread_condattr_destroy(&ca);
        /* The first reading now, so a repetition that starts at once has a value to start from. */
        take_sample();
        pw.has_thread = pthread_create(&pw.thread, NULL, sampler, NULL) == 0;
        pw.has_thread = pw.has_thread ? 1 : -1;
    }
    int64_t any = 0;
    int rc = wb_comm_max_i64(has, &any);
    if (rc == 0) {
        measure_idle(any > 0);
        rc = wb_comm_barrier();
    }
    rc = wb_comm_agree(rc);
    if (rc == 0)
        rc = write_power(res);
    return wb_comm_agree(rc);
}

void wb_power_close(void)
{
    if (pw.kind != K_NONE && pw.has_thread) {
        pthread_mutex_lock(&pw.lock);
        pw.stop = 1;
        pthread_cond_signal(&pw.wake);
        pthread_mutex_unlock(&pw.lock);
        if (pw.has_thread > 0)
            pthread_join(pw.thread, NULL);
        pthread_mutex_destroy(&pw.lock);
        pthread_cond_destroy(&pw.wake);
    }
    if (pw.kind == K_PI5)
        wb_pmic_close();
    free(pw.s[0].r);
    free(pw.s[1].r);
    memset(&pw, 0, sizeof pw);
}

static struct rec *current(int which)
{
    struct series *s = &pw.s[which == WB_POWER_BASELINE];
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        struct rec *r = realloc(s->r, (size_t)cap * sizeof *r);
        if (!r)
            return NULL;
        s->r = r;
        s->cap = cap;
    }
    return &s->r[s->n];
}

/* CPU seconds the sampler has taken so far: its thread's, and the vcgencmd calls it started (counted
 * one by one, so health's `vcgencmd get_throttled` is not the sampler's). NAN without a thread. */
static double sampler_cpu_s(void)
{
    clockid_t cid;
    struct timespec ts;
    if (pw.kind == K_NONE || pw.has_thread <= 0 || pthread_getcpuclockid(pw.thread, &cid) != 0 ||
        clock_gettime(cid, &ts) != 0)
        return NAN;
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec + wb_pmic_child_cpu_s();
}

void wb_power_rep_begin(int which)
{
    struct rec *r = pw.open ? current(which) : NULL;
    if (!r)
        return;
    memset(r, 0, sizeof *r);
    r->utc0 = utc_s();
    r->e0 = r->e1 = NAN;
    struct series *s = &pw.s[which == WB_POWER_BASELINE];
    if (!s->started) {
        s->started = 1;
        s->cpu0 = sampler_cpu_s();
        s->wall0 = mono_s();
    }
    if (pw.kind != K_NONE)
        energy_now(&r->e0, &r->g0, &r->t0);
    else
        r->t0 = mono_s();
    s->cur = 1;
}

void wb_power_rep_end(int which)
{
    struct series *s = &pw.s[which == WB_POWER_BASELINE];
    if (!pw.open || !s->cur)
        return;
    struct rec *r = &s->r[s->n];
    if (pw.kind != K_NONE)
        energy_now(&r->e1, &r->g1, &r->t1);
    else
        r->t1 = mono_s();
    r->utc1 = r->utc0 + (r->t1 - r->t0);
}

void wb_power_rep_keep(int which)
{
    struct series *s = &pw.s[which == WB_POWER_BASELINE];
    if (pw.open && s->cur) {
        s->n++;
        s->cur = 0;
    }
}

/* One series' figures, gathered into out on rank 0 (out->present on every rank). Collective. */
static int take_series(struct series *s, struct wb_result_energy *out)
{
    int nranks = wb_comm_size(), rank = wb_comm_rank();
    int64_t n64 = 0;
    int rc = wb_comm_max_i64(s->n, &n64);
    size_t n = (size_t)n64, cells = n * (size_t)nranks;
    double *mine = malloc((2 * n + 1) * sizeof *mine), *all = NULL;
    out->present = 1;
    out->reps = n;
    out->nranks = (size_t)nranks;
    if (rank == 0) {
        all = malloc((2 * cells + (size_t)nranks) * sizeof *all);
        out->energy_j = malloc((cells + 1) * sizeof *out->energy_j);
        out->sampler_cpu_share = malloc((size_t)nranks * sizeof *out->sampler_cpu_share);
        out->t_start_utc = malloc((n + 1) * sizeof *out->t_start_utc);
        out->t_end_utc = malloc((n + 1) * sizeof *out->t_end_utc);
        out->power_short = malloc(cells + 1);
    }
    int oom = !mine || (rank == 0 && (!all || !out->energy_j || !out->t_start_utc || !out->t_end_utc ||
                                      !out->power_short || !out->sampler_cpu_share));
    rc = wb_comm_agree(rc ? rc : oom ? wb_error_set(WB_ENOMEM, "out of memory for a point's energy_j") : 0);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        const struct rec *r = i < (size_t)s->n ? &s->r[i] : NULL;
        int is_short = r && pw.kind != K_NONE && pw.period_s > 0 && r->t1 - r->t0 < SHORT_PERIODS * pw.period_s;
        /* A counter that did not move in a repetition of many update periods is stuck (or its writer
         * stalled): that is no reading, not 0 J. */
        int stuck = r && is_counter() && !is_short && r->e1 == r->e0;
        int measured = r && pw.kind != K_NONE && r->g1 == r->g0 && !stuck;
        mine[i] = measured ? r->e1 - r->e0 : NAN;
        mine[n + i] = is_short;
        if (rank == 0) {
            out->t_start_utc[i] = r ? r->utc0 : NAN;
            out->t_end_utc[i] = r ? r->utc1 : NAN;
        }
    }
    /* The share of one core the sampler took from the series' first repetition to now. */
    double cpu = s->started ? sampler_cpu_s() : NAN, wall = s->started ? mono_s() - s->wall0 : NAN;
    if (mine)
        mine[2 * n] = wall > 0 ? (cpu - s->cpu0) / wall : NAN;
    size_t w = 2 * n + 1;
    if (rc == 0)
        rc = wb_comm_agree(wb_comm_gather_f64_n(mine, w, all));
    for (size_t q = 0; rc == 0 && rank == 0 && q < (size_t)nranks; q++) {
        for (size_t i = 0; i < n; i++) {
            out->energy_j[i * (size_t)nranks + q] = all[q * w + i];
            out->power_short[i * (size_t)nranks + q] = all[q * w + n + i] != 0;
        }
        out->sampler_cpu_share[q] = all[q * w + 2 * n];
    }
    free(mine);
    free(all);
    if (rc)
        wb_result_energy_free(out);
    s->n = s->cur = s->started = 0;
    return rc;
}

int wb_power_point_take(struct wb_result_energy *main_series, struct wb_result_energy *baseline)
{
    memset(main_series, 0, sizeof *main_series);
    if (baseline)
        memset(baseline, 0, sizeof *baseline);
    if (!pw.open)
        return 0;
    int rc = take_series(&pw.s[0], main_series);
    if (baseline) {
        int brc = take_series(&pw.s[1], baseline);
        rc = rc ? rc : brc;
    }
    return rc;
}
