/* cmdline: the command line into struct wb_options (cli/cmdline.c) and the text made from the option
 * tables (cli/cmdline_doc.c: help, man page, completion); no MPI, never exits. Value parsers are in
 * optparse. */
#ifndef WB_CMDLINE_H
#define WB_CMDLINE_H

struct wb_options;
struct wb_optdef;
struct wb_subcommand;

/* Parse argv into o (defaults first). Returns 0, WB_EHELP, WB_EVERSION or WB_EUSAGE
 * with a one-line message (what is wrong, what is allowed) in wb_error_message(). Local:
 * checks that read this host (free memory) can differ between ranks, so the caller agrees. */
int wb_cmdline_parse(int argc, char **argv, struct wb_options *o);

/* Print the help text for sub (NULL: the overview) to stdout. */
void wb_cmdline_print_help(const struct wb_subcommand *sub);

/* The options every subcommand takes, NULL-name terminated. Local. */
const struct wb_optdef *wb_cmdline_common_defs(void);

/* what "--man": the man page in roff; "--bash-completion": the completion script; both made from
 * the option tables, on stdout. 0, or -1 for any other word (nothing printed). Local, no MPI. */
int wb_cmdline_print_generated(const char *what);

/* Free what parsing allocated (lists). */
void wb_cmdline_free(struct wb_options *o);

#endif
