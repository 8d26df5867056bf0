/* optdef: how a subcommand describes one of its options to the parser. */
#ifndef WB_OPTDEF_H
#define WB_OPTDEF_H

/* One option of a subcommand: id is the subcommand's own number for it. */
struct wb_optdef {
    const char *name;
    int has_arg;            /* 0 no argument, 1 required */
    int short_name;         /* a character, or 0 */
    int id;
    const char *arg_name;   /* e.g. "LIST", for help */
    const char *help;
    const char *def;        /* the default as text, for help, or NULL */
};

#endif
