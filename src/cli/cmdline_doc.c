/* cmdline_doc: the help text, the man page and the bash completion, all printed from the option tables
 * (common_defs and each subcommand's defs), so the three cannot drift from what the parser accepts. */
#define _POSIX_C_SOURCE 200809L
#include "bench/options.h"
#include "cli/cmdline.h"

#include <stdio.h>
#include <string.h>

#include "cli/subcommand.h"

#ifndef WB_VERSION
#define WB_VERSION "unknown"
#endif

/* Widest option column before a description moves to its own line. */
#define LEFT_MAX 34
#define LINE_WIDTH 100

static const char exit_text[] = "Exit status: 0 ok, 1 error, 2 usage, 3 a verification failed, 4 timed out.";
static const char sizes_text[] = "Sizes take suffixes k, M, G (1024) or kB, MB, GB (1000); lists are 1,2,4 and a:b "
                                 "is the powers of two from a to b.";

/* Whether the entry's help already states its default (tables not yet given a def field). */
static int help_has_default(const struct wb_optdef *d)
{
    return d->help && strstr(d->help, "default") != NULL;
}

static void option_left(const struct wb_optdef *d, char *out, size_t cap)
{
    const char *arg = d->arg_name ? d->arg_name : "";
    if (d->short_name)
        snprintf(out, cap, "-%c, --%s%s%s", d->short_name, d->name, *arg ? " " : "", arg);
    else
        snprintf(out, cap, "    --%s%s%s", d->name, *arg ? " " : "", arg);
}

/* The description with its default: "HELP (default DEF)". */
static void option_text(const struct wb_optdef *d, char *out, size_t cap)
{
    if (d->def && !help_has_default(d))
        snprintf(out, cap, "%s [default: %s]", d->help, d->def);
    else
        snprintf(out, cap, "%s", d->help);
}

static int left_width(const struct wb_optdef *const *tables, int ntables)
{
    int w = 0;
    for (int t = 0; t < ntables; t++)
        for (const struct wb_optdef *d = tables[t]; d && d->name; d++) {
            char left[128];
            option_left(d, left, sizeof left);
            int len = (int)strlen(left);
            if (len <= LEFT_MAX && len > w)
                w = len;
        }
    return w;
}

/* Prints text from column indent to LINE_WIDTH, breaking at spaces; the first line starts at col. */
static void print_wrapped(const char *text, int col, int indent)
{
    const char *p = text;
    while (*p) {
        int room = LINE_WIDTH - col, len = (int)strlen(p);
        if (room < 20)
            room = 20;
        int cut = len;
        if (len > room) {
            cut = room;
            while (cut > 0 && p[cut] != ' ')
                cut--;
            if (cut == 0)
                for (cut = room; p[cut] && p[cut] != ' '; cut++)
                    ;
        }
        printf("%.*s\n", cut, p);
        p += cut;
        while (*p == ' ')
            p++;
        if (*p)
            printf("%*s", indent, "");
        col = indent;
    }
}

static void print_defs(const struct wb_optdef *d, int width)
{
    for (; d && d->name; d++) {
        char left[128], text[1024];
        option_left(d, left, sizeof left);
        option_text(d, text, sizeof text);
        int indent = 2 + width + 2;
        if ((int)strlen(left) > width)
            printf("  %s\n%*s", left, indent, "");
        else
            printf("  %-*s  ", width, left);
        print_wrapped(text, indent, indent);
    }
}

/* The entries `suite` runs, as "fft, transfer and load". */
static void suite_parts(char *out, size_t cap)
{
    int n = 0, k = 0;
    out[0] = '\0';
    for (int i = 0; i < wb_nsubcommands; i++)
        n += wb_subcommands[i].compact != NULL;
    for (int i = 0; i < wb_nsubcommands; i++) {
        if (!wb_subcommands[i].compact)
            continue;
        size_t len = strlen(out);
        snprintf(out + len, cap - len, "%s%s", k == 0 ? "" : k == n - 1 ? " and " : ", ", wb_subcommands[i].name);
        k++;
    }
}

static void print_suite_help(void)
{
    char parts[256], text[1024];
    suite_parts(parts, sizeof parts);
    snprintf(text, sizeof text,
             "It runs %s one after another, each in a short form of its default study, into one result file. "
             "The common options below pass through to every part (--reps and --warmup per point, --seed, "
             "--timeout for the whole suite); for a part's own options run that subcommand alone.", parts);
    print_wrapped(text, 0, 0);
    for (int i = 0; i < wb_nsubcommands; i++)
        if (wb_subcommands[i].compact && wb_subcommands[i].suite_needs)
            printf("  %-9s skipped unless there are %s\n", wb_subcommands[i].name, wb_subcommands[i].suite_needs);
    printf("\n");
}

void wb_cmdline_print_help(const struct wb_subcommand *sub)
{
    if (!sub) {
        printf("usage: wulfbench SUBCOMMAND [options]   (under mpirun or srun)\n\n"
               "What spreading FFT work and data over a cluster costs, and what it buys, per rank.\n\n");
        for (int i = 0; i < wb_nsubcommands; i++)
            printf("  %-9s %s\n", wb_subcommands[i].name, wb_subcommands[i].summary);
        printf("\nwulfbench SUBCOMMAND --help lists its options. %s\n", exit_text);
        return;
    }
    const struct wb_optdef *tables[2] = {sub->defs, sub->results_file ? wb_cmdline_common_defs() : NULL};
    int width = left_width(tables, 2);
    printf("usage: wulfbench %s [options]\n\n%s\n\n", sub->name, sub->summary);
    if (sub->runs_compact)
        print_suite_help();
    if (sub->defs && sub->defs[0].name) {
        printf("%s options:\n", sub->name);
        print_defs(sub->defs, width);
        printf("\n");
    }
    if (sub->results_file) {
        printf("common options:\n");
        print_defs(wb_cmdline_common_defs(), width);
        printf("\nSwitches without a value are off unless given.\n");
        print_wrapped(sizes_text, 0, 0);
    }
}

/* roff needs a backslash doubled and a leading dot or quote escaped. */
static void roff_text(const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", stdout);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", stdout);
        else if (*s == '-')
            fputs("\\-", stdout);
        else
            putchar(*s);
    }
}

static void man_defs(const struct wb_optdef *d)
{
    for (; d && d->name; d++) {
        char text[1024];
        option_text(d, text, sizeof text);
        printf(".TP\n");
        if (d->short_name)
            printf("\\fB\\-%c\\fR, ", d->short_name);
        printf("\\fB\\-\\-");
        roff_text(d->name);
        printf("\\fR");
        if (d->arg_name) {
            printf(" \\fI");
            roff_text(d->arg_name);
            printf("\\fR");
        }
        printf("\n");
        roff_text(text);
        printf("\n");
    }
}

static void print_man(void)
{
    char parts[256];
    suite_parts(parts, sizeof parts);
    printf(".TH WULFBENCH 1 \"\" \"wulfbench %s\" \"User Commands\"\n", WB_VERSION);
    printf(".SH NAME\nwulfbench \\- what spreading FFT work and data over a cluster costs, and what it buys\n");
    printf(".SH SYNOPSIS\n.B mpirun\n\\-np \\fIN\\fR\n.B wulfbench\n\\fISUBCOMMAND\\fR [\\fIoptions\\fR]\n");
    printf(".SH DESCRIPTION\nwulfbench runs under mpirun or srun. Rank 0 writes one HDF5 result file; "
           "the analysis (\\fBwulfbench\\-report\\fR) turns result files into tables, figures and an HTML "
           "report.\n.SH SUBCOMMANDS\n");
    for (int i = 0; i < wb_nsubcommands; i++) {
        printf(".TP\n.B %s\n", wb_subcommands[i].name);
        roff_text(wb_subcommands[i].summary);
        printf("\n");
    }
    for (int i = 0; i < wb_nsubcommands; i++) {
        const struct wb_subcommand *s = &wb_subcommands[i];
        if (!s->defs || !s->defs[0].name)
            continue;
        printf(".SH OPTIONS OF %s\n", s->name);
        man_defs(s->defs);
    }
    printf(".SH COMMON OPTIONS\nEvery subcommand that writes a result file takes these; \\fBsuite\\fR runs ");
    roff_text(parts);
    printf(" and passes them through to every part.\n");
    man_defs(wb_cmdline_common_defs());
    printf(".PP\nSwitches without a value are off unless given. ");
    roff_text(sizes_text);
    printf("\n.SH EXIT STATUS\n");
    roff_text(exit_text);
    printf("\n.SH FILES\n.TP\n.I results/wulfbench\\-HOST\\-UTC.h5\nthe default result file; "
           "\\fIFILE\\fR.h5.partial while the run is going, kept as it is if the run fails\n"
           ".TP\n.I share/doc/wulfbench/schema.md\nthe result file layout\n"
           ".SH SEE ALSO\n\\fBwulfbench\\-report\\fR(1) (its \\-\\-help), \\fBmpirun\\fR(1)\n");
}

static void completion_words(const struct wb_optdef *d)
{
    for (; d && d->name; d++) {
        printf(" --%s", d->name);
        if (d->short_name)
            printf(" -%c", d->short_name);
    }
}

/* The lower-case words of an argument name such as "fail|skip" or "N|auto" ("" if none). */
static void choice_words(const char *arg_name, char *out, size_t cap)
{
    char copy[256], *save = NULL;
    out[0] = '\0';
    if (!strchr(arg_name, '|'))
        return;
    snprintf(copy, sizeof copy, "%s", arg_name);
    for (char *w = strtok_r(copy, "|", &save); w; w = strtok_r(NULL, "|", &save))
        if (strspn(w, "abcdefghijklmnopqrstuvwxyz-") == strlen(w)) {
            size_t len = strlen(out);
            snprintf(out + len, cap - len, "%s%s", len ? " " : "", w);
        }
}

/* Choice words complete as themselves; FILE and PATH arguments complete file names. */
static void completion_values(const struct wb_optdef *d)
{
    for (; d && d->name; d++) {
        char words[256];
        if (!d->arg_name)
            continue;
        choice_words(d->arg_name, words, sizeof words);
        if (words[0])
            printf("        --%s) COMPREPLY=($(compgen -W '%s' -- \"$cur\")); return;;\n", d->name, words);
        else if (strstr(d->arg_name, "FILE") || strstr(d->arg_name, "PATH"))
            printf("        --%s) COMPREPLY=($(compgen -f -- \"$cur\")); return;;\n", d->name);
    }
}

static void print_completion(void)
{
    printf("# bash completion for wulfbench (generated by wulfbench --bash-completion from its option tables)\n"
           "_wulfbench()\n{\n    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} sub= i\n"
           "    for ((i = 1; i < COMP_CWORD; i++)); do\n        case ${COMP_WORDS[i]} in\n");
    for (int i = 0; i < wb_nsubcommands; i++)
        printf("        %s) sub=%s; break;;\n", wb_subcommands[i].name, wb_subcommands[i].name);
    printf("        esac\n    done\n    if [[ -z $sub ]]; then\n        COMPREPLY=($(compgen -W '");
    for (int i = 0; i < wb_nsubcommands; i++)
        printf("%s ", wb_subcommands[i].name);
    printf("--help --version' -- \"$cur\"))\n        return\n    fi\n    case $sub in\n");
    for (int i = 0; i < wb_nsubcommands; i++) {
        const struct wb_subcommand *s = &wb_subcommands[i];
        printf("    %s)\n        case $prev in\n", s->name);
        completion_values(s->defs);
        if (s->results_file)
            completion_values(wb_cmdline_common_defs());
        printf("        esac\n        COMPREPLY=($(compgen -W '");
        completion_words(s->defs);
        if (s->results_file)
            completion_words(wb_cmdline_common_defs());
        else
            printf(" --help");
        printf("' -- \"$cur\"));;\n");
    }
    printf("    esac\n}\ncomplete -F _wulfbench wulfbench\n");
}

int wb_cmdline_print_generated(const char *what)
{
    if (!strcmp(what, "--man"))
        print_man();
    else if (!strcmp(what, "--bash-completion"))
        print_completion();
    else
        return -1;
    return 0;
}
