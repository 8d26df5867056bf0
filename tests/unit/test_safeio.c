/* safeio: targets that are links or folders are refused, and temporary files never follow a planted link. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"
#include "core/safeio.h"
#include "wbtest.h"

static char dir[] = "/tmp/wb-safeio-XXXXXX";

static const char *at(const char *name)
{
    static char buf[4][256];
    static int i;
    i = (i + 1) % 4;
    snprintf(buf[i], sizeof buf[i], "%s/%s", dir, name);
    return buf[i];
}

static void put(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    fputs(text, fp);
    fclose(fp);
}

static int holds(const char *path, const char *text)
{
    char got[64] = "";
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    size_t n = fread(got, 1, sizeof got - 1, fp);
    got[n] = '\0';
    fclose(fp);
    return strcmp(got, text) == 0;
}

static void check_targets(void)
{
    WBTEST_CHECK(wb_safeio_check_target("-o", at("absent.h5")) == 0, "an absent target is fine");
    put(at("plain.h5"), "x");
    WBTEST_CHECK(wb_safeio_check_target("-o", at("plain.h5")) == 0, "a regular file is fine");
    symlink(at("nowhere"), at("dangling.h5"));
    int rc = wb_safeio_check_target("-o", at("dangling.h5"));
    WBTEST_CHECK(rc == WB_EIO && strstr(wb_error_message(), "symbolic link"), "a dangling link is refused: %s",
                 wb_error_message());
    symlink(at("plain.h5"), at("link.h5"));
    rc = wb_safeio_check_target("-o", at("link.h5"));
    WBTEST_CHECK(rc == WB_EIO && strstr(wb_error_message(), at("link.h5")), "a link to a file is refused, named");
    mkdir(at("sub"), 0755);
    rc = wb_safeio_check_target("-o", at("sub"));
    WBTEST_CHECK(rc == WB_EIO && strstr(wb_error_message(), "is a folder"), "a folder is refused: %s",
                 wb_error_message());
    rc = wb_safeio_check_target("-o", "out/");
    WBTEST_CHECK(rc == WB_EIO && strstr(wb_error_message(), "names a folder"), "a trailing slash is refused");
}

static void check_tmp(void)
{
    char tmp[512];
    FILE *fp = NULL;
    int rc = wb_safeio_tmp(at("wisdom"), tmp, sizeof tmp, &fp);
    WBTEST_CHECK(rc == 0 && fp && strncmp(tmp, at("wisdom."), strlen(at("wisdom."))) == 0, "tmp beside the target: %s",
                 tmp);
    struct stat st;
    WBTEST_CHECK(lstat(tmp, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0644, "a new 0644 file");
    fputs("new", fp);
    fclose(fp);
    WBTEST_CHECK(wb_safeio_commit(tmp, at("wisdom")) == 0 && holds(at("wisdom"), "new") && access(tmp, F_OK) != 0,
                 "commit renames over the target");
    put(at("victim"), "precious");
    symlink(at("victim"), at("planted"));
    rc = wb_safeio_tmp(at("planted"), tmp, sizeof tmp, &fp);
    fputs("evil", fp);
    fclose(fp);
    rc = wb_safeio_commit(tmp, at("planted"));
    WBTEST_CHECK(rc == WB_EIO && holds(at("victim"), "precious") && access(tmp, F_OK) != 0,
                 "commit refuses a planted link, the victim survives and the tmp file is gone");
    char d[64];
    wb_safeio_dirname("a/b/c.h5", d, sizeof d);
    WBTEST_CHECK(!strcmp(d, "a/b"), "dirname a/b/c.h5 = %s", d);
    wb_safeio_dirname("c.h5", d, sizeof d);
    WBTEST_CHECK(!strcmp(d, "."), "dirname c.h5 = %s", d);
    wb_safeio_dirname("/c.h5", d, sizeof d);
    WBTEST_CHECK(!strcmp(d, "/"), "dirname /c.h5 = %s", d);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    check_targets();
    check_tmp();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        return 1;
    return wbtest_done();
}
