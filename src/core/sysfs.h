/* sysfs: the one reader of /sys and /proc (and /dev/vcio's path): every file of the machine is named
 * from the root, the real one or, in the fault build, a fake tree under env WB_SYSFS_ROOT (a hot,
 * throttled Pi, a slow link, a node short of memory), so a test's tree reaches every reader. */
#ifndef WB_SYSFS_H
#define WB_SYSFS_H

#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The root every path is read under: "" (the real one), or in the fault build $WB_SYSFS_ROOT when
 * set. Local. */
const char *wb_sysfs_root(void);

/* out[cap] = rel (e.g. "/proc/meminfo") under the root. Local. */
void wb_sysfs_path(char *out, size_t cap, const char *rel);

/* rel under the root opened for reading, or NULL with errno set. Local. */
FILE *wb_sysfs_open(const char *rel);

/* The folder rel under the root opened for readdir, or NULL. Local. */
DIR *wb_sysfs_opendir(const char *rel);

/* 1 if rel exists under the root (a link counts as itself), else 0. Local. */
int wb_sysfs_exists(const char *rel);

/* The first line of rel into out[cap], its newline cut (a device-tree string ends at its NUL): 0, or
 * -1 if the file cannot be read or the line is empty (out is then ""). Local. */
int wb_sysfs_line(const char *rel, char *out, size_t cap);

/* The number that starts rel's first line, or NaN with errno set (EIO if it holds no number). Local. */
double wb_sysfs_double(const char *rel);

/* The integer that starts rel's first line (base 10), or -1 if unreadable or none. Local. */
int64_t wb_sysfs_i64(const char *rel);

/* The value on the first line of a /proc-style file (rel) that is key, blanks, a colon and the value,
 * its leading blanks and newline cut, into out[cap]: 0, or -1 if the file or the key is missing. Local. */
int wb_sysfs_field(const char *rel, const char *key, char *out, size_t cap);

/* A "key:  N kB" field of a /proc-style file (rel) in bytes, or -1 if unknown. Local. */
int64_t wb_sysfs_kib_bytes(const char *rel, const char *key);

/* /proc/meminfo's "key:" (MemAvailable, SwapTotal, SwapFree, ...) in bytes, or -1 if unknown. Local. */
int64_t wb_sysfs_meminfo_bytes(const char *key);

/* The target of rel under the root with every link resolved, into out[cap] (e.g. /sys/dev/block/8:1 ->
 * /sys/devices/.../sda/sda1, the root's prefix kept): 0, or -1 if it does not resolve. Local. */
int wb_sysfs_resolve(const char *rel, char *out, size_t cap);

/* Write text to rel under the root (e.g. "1" to /proc/sys/vm/drop_caches): 0, or -1 with errno set. Local. */
int wb_sysfs_write(const char *rel, const char *text);

#endif
