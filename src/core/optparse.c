#define _POSIX_C_SOURCE 200809L
#include "core/optparse.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

int wb_optparse_int(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (!*s || *end || errno == ERANGE)
        return wb_error_set(WB_EUSAGE, "%s: '%s' is not a whole number; give one from %lld to %lld", opt, s,
                            (long long)min, (long long)max);
    if (v < min || v > max)
        return wb_error_set(WB_EUSAGE, "%s: %lld is out of range; allowed: %lld to %lld", opt, v, (long long)min,
                            (long long)max);
    *out = v;
    return 0;
}

int wb_optparse_double(const char *opt, const char *s, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno == ERANGE || !isfinite(v))
        return wb_error_set(WB_EUSAGE, "%s: '%s' is not a number; give one from %g to %g", opt, s, min, max);
    if (v < min || v > max)
        return wb_error_set(WB_EUSAGE, "%s: %g is out of range; allowed: %g to %g", opt, v, min, max);
    *out = v;
    return 0;
}

int wb_optparse_size(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno == ERANGE || !isfinite(v) || v < 0)
        return wb_error_set(WB_EUSAGE, "%s: '%s' is not a size; use bytes or a suffix, e.g. 512, 4k, 1M", opt, s);
    double mult = 1;
    if (!strcmp(end, "") || !strcmp(end, "B"))
        mult = 1;
    else if (!strcmp(end, "k") || !strcmp(end, "K") || !strcmp(end, "KiB"))
        mult = 1024.0;
    else if (!strcmp(end, "M") || !strcmp(end, "MiB"))
        mult = 1024.0 * 1024;
    else if (!strcmp(end, "G") || !strcmp(end, "GiB"))
        mult = 1024.0 * 1024 * 1024;
    else if (!strcmp(end, "kB"))
        mult = 1e3;
    else if (!strcmp(end, "MB"))
        mult = 1e6;
    else if (!strcmp(end, "GB"))
        mult = 1e9;
    else
        return wb_error_set(WB_EUSAGE, "%s: unknown suffix '%s' in '%s'; use k, M, G (1024) or kB, MB, GB (1000)",
                            opt, end, s);
    double bytes = v * mult;
    if (bytes != floor(bytes))
        return wb_error_set(WB_EUSAGE, "%s: '%s' is not a whole number of bytes", opt, s);
    if (bytes < (double)min || bytes > (double)max)
        return wb_error_set(WB_EUSAGE, "%s: %s is out of range; allowed: %lld to %lld bytes", opt, s,
                            (long long)min, (long long)max);
    *out = (int64_t)bytes;
    return 0;
}

int wb_optparse_choice(const char *opt, const char *s, const char *const *choices, int *out)
{
    char allowed[256] = "";
    for (int i = 0; choices[i]; i++) {
        if (!strcmp(s, choices[i])) {
            *out = i;
            return 0;
        }
        size_t len = strlen(allowed);
        snprintf(allowed + len, sizeof allowed - len, "%s%s", i ? ", " : "", choices[i]);
    }
    return wb_error_set(WB_EUSAGE, "%s: '%s' is not allowed; choose one of: %s", opt, s, allowed);
}

/* Splits s at commas into a fresh copy; returns the copy (caller frees) or NULL. */
static char *next_item(char **cursor)
{
    char *item = *cursor;
    if (!item)
        return NULL;
    char *comma = strchr(item, ',');
    if (comma) {
        *comma = '\0';
        *cursor = comma + 1;
    } else {
        *cursor = NULL;
    }
    return item;
}

static int push_i64(int64_t **vals, int *n, int maxn, int64_t v, const char *opt)
{
    if (*n >= maxn)
        return wb_error_set(WB_EUSAGE, "%s: more than %d values; give a shorter list", opt, maxn);
    int64_t *grown = realloc(*vals, (size_t)(*n + 1) * sizeof **vals);
    if (!grown)
        return wb_error_set(WB_ENOMEM, "%s: out of memory", opt);
    *vals = grown;
    (*vals)[(*n)++] = v;
    return 0;
}

/* The end of a list: an empty one is a usage error (example shows a good one); frees the copy. */
static int list_end(int rc, int n, char *copy, const char *opt, const char *example)
{
    if (rc == 0 && n == 0)
        rc = wb_error_set(WB_EUSAGE, "%s: the list is empty; use a list like %s", opt, example);
    free(copy);
    return rc;
}

int wb_optparse_size_list(const char *opt, const char *s, int64_t min, int64_t max, int maxn, int64_t **vals,
                         int *n)
{
    char *copy = strdup(s), *cursor = copy, *item;
    int rc = copy ? 0 : WB_ENOMEM;
    *vals = NULL;
    *n = 0;
    while (rc == 0 && (item = next_item(&cursor))) {
        char *colon = strchr(item, ':');
        int64_t lo, hi;
        if (!*item) {
            rc = wb_error_set(WB_EUSAGE, "%s: empty item in '%s'; use a list like 1,2,4 or a range like 1:64", opt, s);
        } else if (colon) {
            *colon = '\0';
            rc = wb_optparse_size(opt, item, min, max, &lo);
            if (rc == 0)
                rc = wb_optparse_size(opt, colon + 1, min, max, &hi);
            if (rc == 0 && (lo < 1 || hi < lo))
                rc = wb_error_set(WB_EUSAGE, "%s: range '%s:%s' must go from a positive value up to a larger one",
                                  opt, item, colon + 1);
            for (int64_t v = lo; rc == 0 && v <= hi; v *= 2)
                rc = push_i64(vals, n, maxn, v, opt);
        } else {
            rc = wb_optparse_size(opt, item, min, max, &lo);
            if (rc == 0)
                rc = push_i64(vals, n, maxn, lo, opt);
        }
    }
    rc = list_end(rc, *n, copy, opt, "1,2,4 or a range like 1:64");
    if (rc) {
        free(*vals);
        *vals = NULL;
        *n = 0;
    }
    return rc;
}

int wb_optparse_double_list(const char *opt, const char *s, double min, double max, int maxn, double **vals,
                           int *n)
{
    char *copy = strdup(s), *cursor = copy, *item;
    int rc = copy ? 0 : WB_ENOMEM;
    *vals = NULL;
    *n = 0;
    while (rc == 0 && (item = next_item(&cursor))) {
        double v = 0;
        rc = wb_optparse_double(opt, item, min, max, &v);
        if (rc == 0 && *n >= maxn)
            rc = wb_error_set(WB_EUSAGE, "%s: more than %d values; give a shorter list", opt, maxn);
        if (rc == 0) {
            double *grown = realloc(*vals, (size_t)(*n + 1) * sizeof **vals);
            if (!grown)
                rc = wb_error_set(WB_ENOMEM, "%s: out of memory", opt);
            else
                (*vals = grown)[(*n)++] = v;
        }
    }
    rc = list_end(rc, *n, copy, opt, "1,2,5");
    if (rc) {
        free(*vals);
        *vals = NULL;
        *n = 0;
    }
    return rc;
}
