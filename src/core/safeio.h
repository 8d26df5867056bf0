/* safeio: files created without following a planted symlink; local (no MPI). */
#ifndef WB_SAFEIO_H
#define WB_SAFEIO_H

#include <stddef.h>
#include <stdio.h>

/* Open a new temporary file beside target (target.XXXXXX, made by mkstemp, mode 0644) for writing.
 * Its name goes to tmp[cap]. Write, fclose, then wb_safeio_commit. 0 or WB_EIO with a message. */
int wb_safeio_tmp(const char *target, char *tmp, size_t cap, FILE **fp);

/* Rename tmp over target (which must not be a symlink or a folder); removes tmp on failure.
 * 0 or WB_EIO with a message. */
int wb_safeio_commit(const char *tmp, const char *target);

/* 0 if path can be created or replaced: it is absent or a regular file. Refuses a symlink
 * (dangling or not) and a folder with WB_EIO and a message naming what (e.g. "-o"). */
int wb_safeio_check_target(const char *what, const char *path);

/* A token, to learn whether a folder is the same on two nodes (io and check): one node makes path new
 * (O_EXCL, so never through a symlink) holding id, the others look for it. 0 or WB_EIO with a message. */
int wb_safeio_token_write(const char *path, const char *id);

/* 1 when path is a regular file whose first line starts with id, else 0. */
int wb_safeio_token_holds(const char *path, const char *id);

/* The folder part of path ("." when it has none) into out[cap]. */
void wb_safeio_dirname(const char *path, char *out, size_t cap);

#endif
