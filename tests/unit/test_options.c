/* The option parser: defaults, lists and ranges, sizes, and one clear message per mistake. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "bench/fft/options_fft.h"
#include "bench/load/options_load.h"
#include "bench/transfer/options_transfer.h"
#include "bench/options.h"
#include "cli/cmdline.h"
#include "cli/subcommand.h"
#include "core/optparse.h"
#include "wbtest.h"

/* Parses a command line given as words; returns the code. */
static int parse(struct wb_options *o, const char *line)
{
    static char buf[1024];
    char *argv[64];
    int argc = 0;
    snprintf(buf, sizeof buf, "%s", line);
    for (char *w = strtok(buf, " "); w && argc < 63; w = strtok(NULL, " "))
        argv[argc++] = w;
    argv[argc] = NULL;
    wb_error_clear();
    return wb_cmdline_parse(argc, argv, o);
}

/* fft's own block of o. */
#define FFT(o) ((struct wb_fft_opts *)wb_options_own(&(o), "fft"))

static void expect_usage(const char *line, const char *needle)
{
    struct wb_options o;
    int rc = parse(&o, line);
    const char *msg = wb_error_message();
    WBTEST_CHECK(rc == WB_EUSAGE && strstr(msg, needle) && !strchr(msg, '\n'),
                 "'%s' -> usage error mentioning '%s' (got %d: %s)", line, needle, rc, msg);
    WBTEST_CHECK(wb_error_exit_status(rc) == 2, "'%s' exits 2", line);
    wb_cmdline_free(&o);
}

int main(void)
{
    struct wb_options o;
    int rc = parse(&o, "wulfbench fft");
    WBTEST_CHECK(rc == 0 && !strcmp(o.cmd_name, "fft"), "plain fft parses");
    WBTEST_CHECK(FFT(o)->sweep == WB_SWEEP_BOTH && FFT(o)->nseconds == 6 && FFT(o)->nfiles == 7,
                 "default sweeps: both, 6 durations, files 1:64 (7 counts)");
    WBTEST_CHECK(FFT(o)->files[0] == 1 && FFT(o)->files[6] == 64, "1:64 is powers of two");
    WBTEST_CHECK(FFT(o)->frame == 4096 && FFT(o)->hop == 2048, "frame 4096, hop frame/2");
    WBTEST_CHECK(o.common.reps == 5 && o.common.warmup == 1 && o.common.seed == 1, "common defaults");
    wb_cmdline_free(&o);

    rc = parse(&o, "wulfbench fft --sweep files --files 3,8:32 --frame 1k --hop 256 --precision double "
                   "--plan estimate --schedule dynamic --chunk 8 --root-computes no --result peaks -o x.h5 "
                   "--label lab --reps 7 -x 2 --seed 9 --force --quiet --mode whole");
    WBTEST_CHECK(rc == 0, "a full fft command line parses (%s)", wb_error_message());
    WBTEST_CHECK(FFT(o)->nfiles == 4 && FFT(o)->files[0] == 3 && FFT(o)->files[1] == 8 && FFT(o)->files[3] == 32,
                 "--files 3,8:32 is 3,8,16,32");
    WBTEST_CHECK(FFT(o)->frame == 1024 && FFT(o)->hop == 256 && FFT(o)->precision == 1 && FFT(o)->plan == 0,
                 "sizes with suffixes and choices");
    WBTEST_CHECK(FFT(o)->schedule == WB_SCHED_DYNAMIC && FFT(o)->chunk == 8 && !FFT(o)->root_computes &&
                     FFT(o)->result == 1 && FFT(o)->mode == WB_MODE_WHOLE,
                 "schedule, chunk, root, result, mode");
    WBTEST_CHECK(!strcmp(o.common.out_path, "x.h5") && !strcmp(o.common.label, "lab") && o.common.reps == 7 &&
                     o.common.warmup == 2 && o.common.seed == 9 && o.common.force && o.common.quiet,
                 "common options");
    WBTEST_CHECK(strstr(o.command_line, "--files 3,8:32") != NULL, "the command line is recorded");
    wb_cmdline_free(&o);

    rc = parse(&o, "wulfbench fft --input a.wav --input dir");
    WBTEST_CHECK(rc == 0 && FFT(o)->ninputs == 2 && FFT(o)->sweep == WB_SWEEP_NONE, "--input twice; sweep none");
    wb_cmdline_free(&o);

    /* check guards the memory of fft's default study, which it learns through the table. */
    rc = parse(&o, "wulfbench check");
    WBTEST_CHECK(rc == 0 && o.study_bytes == wb_fft_opts_study_bytes(&o) && o.study_bytes > 30e6,
                 "check: the default study's bytes come from fft's hook (%.0f)", o.study_bytes);
    wb_cmdline_free(&o);
    rc = parse(&o, "wulfbench check --precision double");
    WBTEST_CHECK(rc == WB_EUSAGE, "check takes no fft option");
    wb_cmdline_free(&o);

    WBTEST_CHECK(parse(&o, "wulfbench fft --help") == WB_EHELP, "--help");
    wb_cmdline_free(&o);
    WBTEST_CHECK(parse(&o, "wulfbench --version") == WB_EVERSION, "--version");
    wb_cmdline_free(&o);
    WBTEST_CHECK(parse(&o, "wulfbench info") == 0 && !strcmp(o.cmd_name, "info"), "info");
    wb_cmdline_free(&o);

    /* What main asks the table instead of comparing names. */
    WBTEST_CHECK(parse(&o, "wulfbench suite --reps 2") == 0 && o.compact && o.sub->runs_compact,
                 "suite runs the compact forms, and its parts see o->compact");
    wb_cmdline_free(&o);
    WBTEST_CHECK(parse(&o, "wulfbench transfer --reps 2") == 0 && !o.compact &&
                     wb_transfer_opts_of(&o)->iters == 2,
                 "transfer alone: not compact, and --reps fixes its repetitions");
    wb_cmdline_free(&o);
    WBTEST_CHECK(parse(&o, "wulfbench load --step-timeout 100") == 0 && o.sub->stall_window_s &&
                     o.sub->stall_window_s(&o, 5) == 160 && o.sub->stall_window_s(&o, 0) == 0 &&
                     o.sub->stall_window_s(&o, 500) == 500,
                 "load's stall window covers its longest step and a minute, and only with --stall-timeout");
    wb_cmdline_free(&o);
    WBTEST_CHECK(parse(&o, "wulfbench suite") == 0 && o.sub->stall_window_s &&
                     o.sub->stall_window_s(&o, 5) == wb_load_opts_step_timeout_s(wb_load_opts_of(&o)) + 60,
                 "suite's stall window is its load part's");
    wb_cmdline_free(&o);
    WBTEST_CHECK(parse(&o, "wulfbench fft") == 0 && !o.sub->stall_window_s && !o.sub->no_file &&
                     !o.sub->stdout_taken && o.sub->results_file,
                 "fft writes a file, to stdout, with the stall window given");
    wb_cmdline_free(&o);
    WBTEST_CHECK(parse(&o, "wulfbench transfer --format csv") == 0 && !o.sub->no_file(&o) && o.sub->stdout_taken(&o),
                 "transfer --format csv writes a file and keeps stdout for the document");
    wb_cmdline_free(&o);
    WBTEST_CHECK(parse(&o, "wulfbench transfer --list") == 0 && o.sub->no_file(&o) && !o.sub->stdout_taken(&o),
                 "transfer --list writes no file");
    wb_cmdline_free(&o);
    WBTEST_CHECK(parse(&o, "wulfbench info") == 0 && !o.sub->results_file, "info writes no file");
    wb_cmdline_free(&o);

    int64_t v;
    WBTEST_CHECK(wb_optparse_size("-m", "4M", 1, 1 << 30, &v) == 0 && v == 4 << 20, "4M is 4 MiB");
    WBTEST_CHECK(wb_optparse_size("-m", "1kB", 1, 1 << 30, &v) == 0 && v == 1000, "1kB is 1000");
    WBTEST_CHECK(wb_optparse_size("-m", "1.5k", 1, 1 << 30, &v) == 0 && v == 1536, "1.5k is 1536");
    int64_t *list;
    int n;
    WBTEST_CHECK(wb_optparse_size_list("-m", "1:4M", 1, 1 << 30, 64, &list, &n) == 0 && n == 23 &&
                     list[22] == 4 << 20,
                 "1:4M is 23 powers of two");
    free(list);

    expect_usage("wulfbench", "no subcommand");
    expect_usage("wulfbench frobnicate", "unknown subcommand");
    expect_usage("wulfbench fft --bogus", "unknown option '--bogus'");
    expect_usage("wulfbench fft -Z", "unknown option '-Z'");
    expect_usage("wulfbench fft --reps", "needs a value");
    expect_usage("wulfbench fft --reps 0", "--reps");
    expect_usage("wulfbench fft --reps ten", "not a whole number");
    expect_usage("wulfbench fft --hop 0", "--hop");
    expect_usage("wulfbench fft --frame 8192 --hop 9000", "larger than --frame");
    expect_usage("wulfbench fft --sweep sizes --seconds 0.05", "longer than the shortest");
    expect_usage("wulfbench fft --frame 3Q", "suffix");
    expect_usage("wulfbench fft --sweep sideways", "choose one of");
    expect_usage("wulfbench fft --files 0", "--files");
    expect_usage("wulfbench fft --files 64:2", "range");
    expect_usage("wulfbench fft --files 1,,2", "empty item");
    expect_usage("wulfbench fft --seconds 1e9", "--seconds");
    expect_usage("wulfbench fft --files 4096 --file-seconds 3600", "GB");
    expect_usage("wulfbench fft --sweep none", "no --input");
    expect_usage("wulfbench fft --baseline --schedule dynamic", "--baseline");
    expect_usage("wulfbench fft stray", "unexpected argument");
    expect_usage("wulfbench fft --progress sometimes", "--progress");
    return wbtest_done();
}
