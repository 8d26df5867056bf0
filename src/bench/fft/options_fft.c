#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/audio.h"
#include "bench/fft/options_fft.h"
#include "bench/options.h"
#include "core/error.h"
#include "fftw/fft.h"
#include "core/optparse.h"
#include "core/sysinfo.h"

enum {
    F_INPUT = 1, F_BAD, F_SWEEP, F_SECONDS, F_FILES, F_FILE_SECONDS, F_RATE, F_MODE, F_FRAME, F_HOP, F_WINDOW,
    F_SCHEDULE, F_CHUNK, F_ROOT, F_LOCAL, F_WIRE, F_RESULT, F_BASELINE, F_PRECISION, F_PLAN, F_WISDOM, F_MAXMEM,
    F_PAIRED, F_TARGET_CI, F_MIN_REPS, F_MAX_REPS, F_POINT_BUDGET, F_LINK_RATE, F_INPUT_CACHE
};

/* Longest synthetic file and largest request the sweeps accept; beyond this a Pi runs out of memory. */
#define MAX_SECONDS 3600.0
#define MAX_FILES 4096

const struct wb_optdef wb_fft_optdefs[] = {
    {"input", 1, 0, F_INPUT, "PATH", "a WAV file or a folder of them; repeatable", "synthetic audio"},
    {"on-bad-input", 1, 0, F_BAD, "fail|skip", "what a bad WAV file does to the run", "fail"},
    {"input-cache", 1, 0, F_INPUT_CACHE, "keep|drop",
     "drop: before each repetition's timed read, rank 0 drops its input files from the page cache (and the "
     "node's cache as root, where pages stay), so t_read reads the disk; keep: a file read before may come "
     "from memory", "keep"},
    {"sweep", 1, 0, F_SWEEP, "both|sizes|files|none", "study scenarios (none: the --input files as given)",
     "both; none with --input"},
    {"seconds", 1, 0, F_SECONDS, "LIST", "durations of the one-file sizes sweep, each 0.01 to 3600 s", "1,2,5,10,30,60"},
    {"files", 1, 0, F_FILES, "LIST", "file counts of the files sweep, each 1 to 4096", "1:64"},
    {"file-seconds", 1, 0, F_FILE_SECONDS, "S", "length of each file in the files sweep, 0.01 to 3600 s", "5"},
    {"sample-rate", 1, 0, F_RATE, "HZ", "sample rate of synthetic audio, 16000 to 384000", "44100"},
    {"mode", 1, 0, F_MODE, "stft|whole", "frames of --frame samples, or one transform per file", "stft"},
    {"frame", 1, 0, F_FRAME, "N", "samples per STFT frame, 16 to 16M", "4096"},
    {"hop", 1, 0, F_HOP, "N", "samples between frame starts, 1 to the frame size", "frame/2"},
    {"window", 1, 0, F_WINDOW, "hann|none", "window applied before each transform", "hann"},
    {"schedule", 1, 0, F_SCHEDULE, "pipelined|phased|dynamic",
     "blocks in chunks with the phases overlapped (static: the same); Scatterv, compute, Gatherv in turn; or "
     "chunks on demand", "pipelined"},
    {"chunk", 1, 0, F_CHUNK, "N|auto",
     "frames (whole mode: files) per chunk of pipelined and dynamic, 1 to 1048576 (pipelined: after a ramp of "
     "1, 2, 4, ... frames); auto: about 2 ms of the link each, no message over 64 KiB, at least 4 chunks per rank", "auto"},
    {"link-rate", 1, 0, F_LINK_RATE, "BYTES/S",
     "line rate of the head node's link, e.g. 12.5MB for 100 Mbit/s: sizes chunks, gives link_use", "unknown"},
    {"root-computes", 1, 0, F_ROOT, "yes|no", "whether rank 0 also computes", "yes"},
    {"local", 1, 0, F_LOCAL, "shm|mpi", "ranks on the head node read its buffers in shared memory, or get messages", "shm"},
    {"wire", 1, 0, F_WIRE, "auto|native", "auto: 16-bit PCM input travels as 16-bit samples; native: as float/double", "auto"},
    {"result", 1, 0, F_RESULT, "spectra|peaks", "what returns to the root: magnitude spectra or per-frame peaks", "spectra"},
    {"baseline", 0, 0, F_BASELINE, NULL, "one process, no messaging: the single-desktop reference", NULL},
    {"precision", 1, 0, F_PRECISION, "single|double", "FFTW precision", "single"},
    {"plan", 1, 0, F_PLAN, "estimate|measure|patient", "FFTW planning effort", "measure"},
    {"wisdom", 1, 0, F_WISDOM, "FILE", "FFTW wisdom: rank 0 imports it, shares it, saves it at the end", "none"},
    {"max-memory", 1, 0, F_MAXMEM, "SIZE", "refuse points that need more memory on rank 0; 1M or more",
     "MemAvailable"},
    {"paired-baseline", 0, 0, F_PAIRED, NULL,
     "rank 0 also runs each request alone, alternating with the cluster: a drift-proof speedup", NULL},
    {"target-ci", 1, 0, F_TARGET_CI, "FRACTION",
     "--reps auto: stop when the 95% CI half-width of the median t_total is this share of it, 0.0001 to 0.5",
     "0.03"},
    {"min-reps", 1, 0, F_MIN_REPS, "N", "--reps auto: at least this many repetitions, 1 to 100000", "6"},
    {"max-reps", 1, 0, F_MAX_REPS, "N", "--reps auto: at most this many repetitions, 1 to 100000", "50"},
    {"point-budget", 1, 0, F_POINT_BUDGET, "SECONDS", "--reps auto: stop a point after this long, 0.001 to 1e7",
     "60"},
    {NULL, 0, 0, 0, NULL, NULL, NULL},
};

const char wb_fft_summary[] = "the FFT distribution benchmark: read, distribute, transform, gather (study rows 1-9)";

const char *const wb_sweep_names[] = {"both", "sizes", "files", "none", NULL};
const char *const wb_fft_mode_names[] = {"stft", "whole", NULL};
const char *const wb_schedule_names[] = {"pipelined", "phased", "dynamic", NULL};
const char *const wb_bad_input_names[] = {"fail", "skip", NULL};
const char *const wb_input_cache_names[] = {"keep", "drop", NULL};

void wb_fft_opts_defaults(struct wb_options *o)
{
    struct wb_fft_opts *t = wb_fft_opts_of(o);
    memset(t, 0, sizeof *t);
    t->sweep = WB_SWEEP_BOTH;
    t->file_seconds = 5;
    t->sample_rate_hz = 44100;
    t->frame = 4096;
    t->window = WB_FFT_HANN;
    t->link_rate_Bps = NAN;
    t->root_computes = 1;
    t->local_shm = 1;
    t->precision = WB_FFT_SINGLE;
    t->plan = WB_FFT_MEASURE;
    t->target_ci = 0.03;
    /* Six is the smallest sample whose order statistics give a 95% interval for the median. */
    t->min_reps = 6;
    t->max_reps = 50;
    t->point_budget_s = 60;
}

/* A flat switch with one independent case per option: longer than 80 lines, but nothing in it depends on
 * anything else in it. */
int wb_fft_opts_set(struct wb_options *o, int id, const char *arg)
{
    struct wb_fft_opts *t = wb_fft_opts_of(o);
    static const char *const yesno[] = {"no", "yes", NULL};
    int64_t v;
    double d;
    int rc = 0;
    switch (id) {
    case F_INPUT: {
        const char **grown = realloc(t->inputs, (size_t)(t->ninputs + 1) * sizeof *grown);
        if (!grown)
            return wb_error_set(WB_ENOMEM, "--input: out of memory");
        t->inputs = grown;
        t->inputs[t->ninputs++] = arg;
        break;
    }
    case F_BAD: return wb_optparse_choice("--on-bad-input", arg, wb_bad_input_names, &t->on_bad_input);
    case F_INPUT_CACHE: return wb_optparse_choice("--input-cache", arg, wb_input_cache_names, &t->input_cache);
    case F_SWEEP:
        t->sweep_given = 1;
        return wb_optparse_choice("--sweep", arg, wb_sweep_names, &t->sweep);
    case F_SECONDS:
        free(t->seconds);
        return wb_optparse_double_list("--seconds", arg, 0.01, MAX_SECONDS, 64, &t->seconds, &t->nseconds);
    case F_FILES:
        free(t->files);
        return wb_optparse_size_list("--files", arg, 1, MAX_FILES, 64, &t->files, &t->nfiles);
    case F_FILE_SECONDS:
        if ((rc = wb_optparse_double("--file-seconds", arg, 0.01, MAX_SECONDS, &d)) == 0)
            t->file_seconds = d;
        return rc;
    case F_RATE:
        if ((rc = wb_optparse_int("--sample-rate", arg, WB_AUDIO_SYNTH_MIN_RATE_HZ, 384000, &v)) == 0)
            t->sample_rate_hz = (int32_t)v;
        return rc;
    case F_MODE: return wb_optparse_choice("--mode", arg, wb_fft_mode_names, &t->mode);
    case F_FRAME:
        if ((rc = wb_optparse_size("--frame", arg, 16, 1 << 24, &v)) == 0)
            t->frame = v;
        return rc;
    case F_HOP:
        if ((rc = wb_optparse_size("--hop", arg, 1, 1 << 24, &v)) == 0)
            t->hop = v;
        else if (!strcmp(arg, "0"))
            rc = wb_error_set(WB_EUSAGE, "--hop: 0 would never advance; give 1 to the frame size (e.g. --hop 2048)");
        return rc;
    case F_WINDOW: return wb_optparse_choice("--window", arg, wb_fft_window_names, &t->window);
    case F_SCHEDULE:
        /* static was the name of the block schedule before it was pipelined; it stays an alias. */
        if (!strcmp(arg, "static")) {
            t->schedule = WB_SCHED_PIPELINED;
            return 0;
        }
        return wb_optparse_choice("--schedule", arg, wb_schedule_names, &t->schedule);
    case F_CHUNK:
        if (!strcmp(arg, "auto")) {
            t->chunk = 0;
            return 0;
        }
        if (strtod(arg, NULL) <= 0 && strspn(arg, "+-0123456789.") == strlen(arg))
            return wb_error_set(WB_EUSAGE, "--chunk %s: a chunk holds at least one frame (whole mode: one file); "
                                           "give 1 or more, or auto", arg);
        if ((rc = wb_optparse_int("--chunk", arg, 1, 1 << 20, &v)) == 0)
            t->chunk = v;
        return rc;
    case F_LINK_RATE:
        if ((rc = wb_optparse_size("--link-rate", arg, 1000, INT64_MAX / 2, &v)) == 0)
            t->link_rate_Bps = (double)v;
        return rc;
    case F_ROOT: return wb_optparse_choice("--root-computes", arg, yesno, &t->root_computes);
    case F_LOCAL: {
        static const char *const local[] = {"mpi", "shm", NULL};
        return wb_optparse_choice("--local", arg, local, &t->local_shm);
    }
    case F_WIRE: {
        static const char *const wire[] = {"auto", "native", NULL};
        return wb_optparse_choice("--wire", arg, wire, &t->wire_native);
    }
    case F_RESULT: return wb_optparse_choice("--result", arg, wb_fft_result_names, &t->result);
    case F_BASELINE: t->baseline = 1; return 0;
    case F_PRECISION: return wb_optparse_choice("--precision", arg, wb_fft_precision_names, &t->precision);
    case F_PLAN: return wb_optparse_choice("--plan", arg, wb_fft_effort_names, &t->plan);
    case F_WISDOM:
        if (!*arg)
            return wb_error_set(WB_EUSAGE, "--wisdom: the file name is empty");
        t->wisdom = arg;
        return 0;
    case F_MAXMEM:
        if ((rc = wb_optparse_size("--max-memory", arg, 1 << 20, INT64_MAX / 2, &v)) == 0)
            t->max_bytes = v;
        return rc;
    case F_PAIRED: t->paired_baseline = 1; return 0;
    case F_TARGET_CI:
        if ((rc = wb_optparse_double("--target-ci", arg, 0.0001, 0.5, &d)) == 0)
            t->target_ci = d;
        return rc;
    case F_MIN_REPS:
    case F_MAX_REPS:
        if ((rc = wb_optparse_int(id == F_MIN_REPS ? "--min-reps" : "--max-reps", arg, 1, 100000, &v)) == 0)
            *(id == F_MIN_REPS ? &t->min_reps : &t->max_reps) = (int)v;
        return rc;
    case F_POINT_BUDGET:
        if ((rc = wb_optparse_double("--point-budget", arg, 0.001, 1e7, &d)) == 0)
            t->point_budget_s = d;
        return rc;
    }
    return rc;
}

static int set_default_lists(struct wb_fft_opts *t)
{
    static const double seconds[] = {1, 2, 5, 10, 30, 60};
    if (!t->seconds) {
        t->seconds = malloc(sizeof seconds);
        if (!t->seconds)
            return wb_error_set(WB_ENOMEM, "out of memory");
        memcpy(t->seconds, seconds, sizeof seconds);
        t->nseconds = (int)(sizeof seconds / sizeof seconds[0]);
    }
    if (!t->files)
        return wb_optparse_size_list("--files", "1:64", 1, MAX_FILES, 64, &t->files, &t->nfiles);
    return 0;
}

int64_t wb_fft_opts_point_bytes(const struct wb_fft_opts *t, int nfiles, double seconds)
{
    double samples = floor(seconds * t->sample_rate_hz + 0.5), sb = (double)wb_fft_sample_bytes(t->precision);
    double hop = (double)(t->hop ? t->hop : t->frame / 2), frames = 1, result_bytes, kernel_bytes;
    if (t->mode == WB_MODE_STFT) {
        frames = samples < (double)t->frame ? 0 : 1 + floor((samples - (double)t->frame) / hop);
        result_bytes = t->result == WB_FFT_PEAKS ? sizeof(struct wb_fft_peak) : (double)(t->frame / 2 + 1) * sb;
        kernel_bytes = 0;
    } else {
        result_bytes = t->result == WB_FFT_PEAKS ? sizeof(struct wb_fft_peak) : (floor(samples / 2) + 1) * sb;
        /* Frame, spectrum, window and check buffers of one file's length and FFTW's own scratch, and
         * for spectra the verification's copy and statistics of one spectrum (fitted to peak RSS of
         * 60 s files in both precisions: 4.5 sample bytes a point, and 12 + sb / 2 bytes). */
        kernel_bytes = samples * (4.5 * sb + (t->result == WB_FFT_PEAKS ? 0.0 : 12.0 + 0.5 * sb));
    }
    /* Root: the request in the wire format, every result, one file being decoded (float samples and,
     * for WAV, its 16-bit data), and the program itself with MPI, HDF5 and FFTW (measured: 30 MB). */
    double wire = t->wire_native ? sb : 2.0;
    /* --paired-baseline: rank 0's own copy of every result beside the cluster's (suite: wherever it pairs). */
    double result_copies = t->paired_baseline ? 2.0 : 1.0;
    double bytes = (double)nfiles * samples * wire + result_copies * (double)nfiles * frames * result_bytes +
                   samples * 6.0 + kernel_bytes + 30e6;
    return bytes > 9e18 ? INT64_MAX : (int64_t)bytes;
}

int64_t wb_fft_opts_peak_bytes(const struct wb_fft_opts *t)
{
    int64_t most = 0, b;
    if (t->sweep == WB_SWEEP_SIZES || t->sweep == WB_SWEEP_BOTH)
        for (int i = 0; i < t->nseconds; i++)
            if ((b = wb_fft_opts_point_bytes(t, 1, t->seconds[i])) > most)
                most = b;
    if (t->sweep == WB_SWEEP_FILES || t->sweep == WB_SWEEP_BOTH)
        for (int i = 0; i < t->nfiles; i++)
            if ((b = wb_fft_opts_point_bytes(t, (int)t->files[i], t->file_seconds)) > most)
                most = b;
    return most;
}

int wb_fft_opts_validate(struct wb_options *o)
{
    struct wb_fft_opts *t = wb_fft_opts_of(o);
    int rc = set_default_lists(t);
    if (rc)
        return rc;
    if (!t->sweep_given && t->ninputs > 0)
        t->sweep = WB_SWEEP_NONE;
    if (t->sweep == WB_SWEEP_NONE && t->ninputs == 0 && t->sweep_given)
        return wb_error_set(WB_EUSAGE, "--sweep none uses the inputs as given, but there is no --input; "
                                       "add --input FILE.wav or choose --sweep sizes|files|both");
    if (t->input_cache == WB_INPUT_CACHE_DROP && t->ninputs == 0)
        return wb_error_set(WB_EUSAGE, "--input-cache drop: synthetic audio is made in memory and reads no file; "
                                       "give the WAV files with --input");
    if (t->hop == 0)
        t->hop = t->frame / 2;
    if (t->hop > t->frame)
        return wb_error_set(WB_EUSAGE, "--hop %lld is larger than --frame %lld; samples between frames would be "
                                       "skipped: use a hop from 1 to the frame size",
                            (long long)t->hop, (long long)t->frame);
    if (t->mode == WB_MODE_STFT) {
        double shortest = INFINITY;
        if (t->sweep == WB_SWEEP_SIZES || t->sweep == WB_SWEEP_BOTH)
            for (int i = 0; i < t->nseconds; i++)
                shortest = fmin(shortest, t->seconds[i]);
        if (t->sweep == WB_SWEEP_FILES || t->sweep == WB_SWEEP_BOTH)
            shortest = fmin(shortest, t->file_seconds);
        if (isfinite(shortest) && shortest * t->sample_rate_hz < (double)t->frame)
            return wb_error_set(WB_EUSAGE, "--frame %lld is longer than the shortest input (%g s = %.0f samples "
                                           "at %d Hz); use a smaller --frame or longer --seconds",
                                (long long)t->frame, shortest, shortest * t->sample_rate_hz, (int)t->sample_rate_hz);
    }
    if (t->min_reps > t->max_reps)
        return wb_error_set(WB_EUSAGE, "--min-reps %d is more than --max-reps %d; give a minimum no larger than the "
                                       "maximum", t->min_reps, t->max_reps);
    if (t->baseline && t->paired_baseline > 0)
        return wb_error_set(WB_EUSAGE, "--baseline and --paired-baseline exclude each other: --baseline is the "
                                       "one-process run itself, --paired-baseline adds one to a cluster run");
    if (t->baseline && t->schedule == WB_SCHED_DYNAMIC)
        return wb_error_set(WB_EUSAGE, "--baseline runs in one process, so --schedule dynamic has no meaning; "
                                       "drop one of them");
    const char *why = NULL;
    int64_t need = wb_fft_opts_peak_bytes(t), avail = wb_sysinfo_memory_limit(t->max_bytes, 1, &why);
    if (avail > 0 && need > avail)
        return wb_error_set(WB_EUSAGE, "the largest point needs about %.1f GB on rank 0 but only %.1f GB %s; "
                                       "use fewer --files or shorter --seconds",
                            (double)need / 1e9, (double)avail / 1e9, why);
    return 0;
}

void wb_fft_opts_compact(struct wb_options *o)
{
    struct wb_fft_opts *t = wb_fft_opts_of(o);
    static const double seconds[] = {1, 5, 30};
    free(t->seconds);
    free(t->files);
    t->seconds = malloc(sizeof seconds);
    if (t->seconds) {
        memcpy(t->seconds, seconds, sizeof seconds);
        t->nseconds = 3;
    }
    wb_optparse_size_list("--files", "1:16", 1, MAX_FILES, 64, &t->files, &t->nfiles);
    t->sweep = WB_SWEEP_BOTH;
    /* The default job compares the cluster with one of its nodes in the same run, so drift cannot fake a speedup. */
    if (!t->baseline)
        t->paired_baseline = -1;
}

void wb_fft_opts_free(struct wb_options *o)
{
    struct wb_fft_opts *t = wb_fft_opts_of(o);
    free(t->inputs);
    free(t->seconds);
    free(t->files);
    t->inputs = NULL;
    t->seconds = NULL;
    t->files = NULL;
}

struct wb_fft_opts *wb_fft_opts_of(const struct wb_options *o) { return wb_options_own(o, "fft"); }

double wb_fft_opts_study_bytes(const struct wb_options *o)
{
    const struct wb_fft_opts *t = wb_fft_opts_of(o);
    return fmax((double)wb_fft_opts_point_bytes(t, 1, 60), (double)wb_fft_opts_point_bytes(t, 64, t->file_seconds));
}

int wb_fft_opts_baseline(const struct wb_options *o) { return wb_fft_opts_of(o)->baseline; }
