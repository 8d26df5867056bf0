#define _POSIX_C_SOURCE 200809L
#include "core/safeio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

void wb_safeio_dirname(const char *path, char *out, size_t cap)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(out, cap, ".");
    else if (slash == path)
        snprintf(out, cap, "/");
    else
        snprintf(out, cap, "%.*s", (int)(slash - path), path);
}

int wb_safeio_check_target(const char *what, const char *path)
{
    struct stat st;
    size_t len = strlen(path);
    if (len == 0 || path[len - 1] == '/')
        return wb_error_set(WB_EIO, "%s %s names a folder; give a file name such as %s%srun.h5", what, path, path,
                            len && path[len - 1] == '/' ? "" : "/");
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : wb_error_set(WB_EIO, "%s %s: %s", what, path, strerror(errno));
    if (S_ISLNK(st.st_mode))
        return wb_error_set(WB_EIO, "%s %s is a symbolic link; wulfbench does not write through links, "
                                    "remove it or choose another name", what, path);
    if (S_ISDIR(st.st_mode))
        return wb_error_set(WB_EIO, "%s %s is a folder; give a file name such as %s/run.h5", what, path, path);
    if (!S_ISREG(st.st_mode))
        return wb_error_set(WB_EIO, "%s %s is not a regular file; choose another name", what, path);
    return 0;
}

int wb_safeio_tmp(const char *target, char *tmp, size_t cap, FILE **fp)
{
    *fp = NULL;
    if ((size_t)snprintf(tmp, cap, "%s.XXXXXX", target) >= cap)
        return wb_error_set(WB_EIO, "%s: the name is too long", target);
    /* mkstemp creates with O_EXCL, so a link planted at the name is never followed. */
    int fd = mkstemp(tmp);
    if (fd < 0)
        return wb_error_set(WB_EIO, "cannot create a temporary file beside %s: %s", target, strerror(errno));
    fchmod(fd, 0644);
    *fp = fdopen(fd, "w");
    if (!*fp) {
        int e = errno;
        close(fd);
        unlink(tmp);
        return wb_error_set(WB_EIO, "cannot write %s: %s", tmp, strerror(e));
    }
    return 0;
}

int wb_safeio_commit(const char *tmp, const char *target)
{
    int rc = wb_safeio_check_target("the file", target);
    if (rc == 0 && rename(tmp, target) != 0)
        rc = wb_error_set(WB_EIO, "cannot rename %s to %s: %s", tmp, target, strerror(errno));
    if (rc)
        unlink(tmp);
    return rc;
}

int wb_safeio_token_write(const char *path, const char *id)
{
    FILE *f = fopen(path, "wx");
    int ok = f && fprintf(f, "%s\n", id) > 0;
    ok = f && fclose(f) == 0 && ok;
    return ok ? 0 : wb_error_set(WB_EIO, "cannot write %s: %s", path, strerror(errno));
}

int wb_safeio_token_holds(const char *path, const char *id)
{
    char text[80] = "";
    int fd = open(path, O_RDONLY | O_NOFOLLOW);
    FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    int ok = fgets(text, sizeof text, f) && !strncmp(text, id, strlen(id));
    fclose(f);
    return ok;
}
