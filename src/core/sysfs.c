#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE
#include "core/sysfs.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Paths are a root of up to PATH_MAX and a relative name. */
#define PATH_CAP 4200

const char *wb_sysfs_root(void)
{
#ifdef WB_TEST_FAULTS
    const char *root = getenv("WB_SYSFS_ROOT");
    if (root)
        return root;
#endif
    return "";
}

void wb_sysfs_path(char *out, size_t cap, const char *rel) { snprintf(out, cap, "%s%s", wb_sysfs_root(), rel); }

FILE *wb_sysfs_open(const char *rel)
{
    char path[PATH_CAP];
    wb_sysfs_path(path, sizeof path, rel);
    return fopen(path, "r");
}

DIR *wb_sysfs_opendir(const char *rel)
{
    char path[PATH_CAP];
    wb_sysfs_path(path, sizeof path, rel);
    return opendir(path);
}

int wb_sysfs_exists(const char *rel)
{
    char path[PATH_CAP];
    struct stat st;
    wb_sysfs_path(path, sizeof path, rel);
    return lstat(path, &st) == 0;
}

int wb_sysfs_line(const char *rel, char *out, size_t cap)
{
    FILE *f = wb_sysfs_open(rel);
    out[0] = '\0';
    if (!f)
        return -1;
    size_t len = fread(out, 1, cap - 1, f);
    fclose(f);
    out[len] = '\0';
    out[strcspn(out, "\n")] = '\0';
    return out[0] ? 0 : -1;
}

double wb_sysfs_double(const char *rel)
{
    char text[128], *end;
    errno = 0;
    if (wb_sysfs_line(rel, text, sizeof text) != 0) {
        if (!errno)
            errno = EIO;
        return NAN;
    }
    double v = strtod(text, &end);
    if (end == text) {
        errno = EIO;
        return NAN;
    }
    return v;
}

int64_t wb_sysfs_i64(const char *rel)
{
    char text[64], *end;
    if (wb_sysfs_line(rel, text, sizeof text) != 0)
        return -1;
    long long v = strtoll(text, &end, 10);
    return end == text ? -1 : (int64_t)v;
}

int wb_sysfs_field(const char *rel, const char *key, char *out, size_t cap)
{
    FILE *f = wb_sysfs_open(rel);
    if (!f)
        return -1;
    char line[512];
    int found = -1;
    size_t klen = strlen(key);
    while (found != 0 && fgets(line, sizeof line, f)) {
        if (strncmp(line, key, klen) != 0)
            continue;
        char *colon = line + klen + strspn(line + klen, " \t");
        if (*colon != ':')
            continue;
        char *v = colon + 1 + strspn(colon + 1, " \t");
        v[strcspn(v, "\n")] = '\0';
        snprintf(out, cap, "%s", v);
        found = 0;
    }
    fclose(f);
    return found;
}

int64_t wb_sysfs_kib_bytes(const char *rel, const char *key)
{
    char v[128], *end;
    if (wb_sysfs_field(rel, key, v, sizeof v) != 0)
        return -1;
    long long kib = strtoll(v, &end, 10);
    return end == v || kib < 0 ? -1 : (int64_t)kib * 1024;
}

int64_t wb_sysfs_meminfo_bytes(const char *key) { return wb_sysfs_kib_bytes("/proc/meminfo", key); }

int wb_sysfs_resolve(const char *rel, char *out, size_t cap)
{
    char path[PATH_CAP], *real;
    wb_sysfs_path(path, sizeof path, rel);
    if (!(real = realpath(path, NULL)))
        return -1;
    snprintf(out, cap, "%s", real);
    free(real);
    return 0;
}

int wb_sysfs_write(const char *rel, const char *text)
{
    char path[PATH_CAP];
    wb_sysfs_path(path, sizeof path, rel);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    int ok = fputs(text, f) >= 0;
    ok = fclose(f) == 0 && ok;
    return ok ? 0 : -1;
}
