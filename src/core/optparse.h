/* optparse: the parsers for option values (numbers, sizes, choices, lists). A leaf: libc and error only.
 * All return 0 or WB_EUSAGE (WB_ENOMEM for lists) with a one-line message that names the option
 * (opt, e.g. "--sizes"). Local. */
#ifndef WB_OPTPARSE_H
#define WB_OPTPARSE_H

#include <stdint.h>

/* A size with optional suffix k, K, M, G (powers of 1024) or kB, MB (powers of 1000). */
int wb_optparse_size(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out);
/* An integer in [min, max]. */
int wb_optparse_int(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out);
/* A finite number in [min, max]. */
int wb_optparse_double(const char *opt, const char *s, double min, double max, double *out);
/* One of the words in choices (NULL-terminated); *out is its index. */
int wb_optparse_choice(const char *opt, const char *s, const char *const *choices, int *out);
/* A list "a,b,c" of sizes, where an item "a:b" expands to the powers of two from a to b
 * (a, 2a, 4a, ... up to b); each value in [min, max]; at most maxn values. Caller frees *vals. */
int wb_optparse_size_list(const char *opt, const char *s, int64_t min, int64_t max, int maxn,
                          int64_t **vals, int *n);
/* A list "a,b,c" of numbers in [min, max]. Caller frees *vals. */
int wb_optparse_double_list(const char *opt, const char *s, double min, double max, int maxn,
                            double **vals, int *n);

#endif
