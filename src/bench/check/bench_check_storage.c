/* check's storage verdicts for each --io-dir: a writable folder on every rank, shared between the nodes
 * or local to each as io will find it (rank 0's token, as io's own test), and room for the io run. */
#define _DEFAULT_SOURCE
#include "bench/check/bench_check_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "bench/check/options_check.h"
#include "bench/options.h"
#include "core/rng.h"
#include "core/safeio.h"
#include "core/timer.h"

/* statfs f_type of the filesystems whose folders live on another machine: nfs, smb, cifs, smb2, fuse
 * (sshfs and its kind), ceph. */
static const long network_magic[] = {0x6969, 0x517B, (long)0xFF534D42, (long)0xFE534D42, 0x65735546, 0x00C36400};

static void token_path(const char *dir, const char *token, char *out, size_t cap)
{
    snprintf(out, cap, "%s/.wulfbench-check-%s", dir, token);
}

void wb_check_storage_token(char *token, size_t cap)
{
    uint64_t s = wb_rng_mix((uint64_t)time(NULL) ^ (uint64_t)getpid() << 32 ^ (uint64_t)(wb_timer_now_s() * 1e9));
    snprintf(token, cap, "%016llx", (unsigned long long)s);
}

void wb_check_storage_tokens(const struct wb_check_opts *k, const char *token, int make)
{
    char path[4200];
    for (int i = 0; i < k->nio_dirs; i++) {
        token_path(k->io_dirs[i], token, path, sizeof path);
        /* A token that cannot be made is seen nowhere, rank 0 included: the folder's verdict says why. */
        if (make)
            wb_safeio_token_write(path, token);
        else
            unlink(path);
    }
}

void wb_check_storage_read(const struct wb_check_opts *k, const char *token, struct wb_check_fact *f)
{
    for (int i = 0; i < k->nio_dirs; i++) {
        struct wb_check_dir_fact *d = &f->io[i];
        const char *dir = k->io_dirs[i];
        struct stat st;
        struct statvfs vfs;
        struct statfs fs;
        char path[4200];
        d->free_bytes = -1;
        if (stat(dir, &st) != 0)
            snprintf(d->problem, sizeof d->problem, "%s", errno == ENOENT ? "no such folder" : strerror(errno));
        else if (!S_ISDIR(st.st_mode))
            snprintf(d->problem, sizeof d->problem, "not a folder");
        else if (statvfs(dir, &vfs) != 0 || statfs(dir, &fs) != 0)
            snprintf(d->problem, sizeof d->problem, "its filesystem is unreadable: %s", strerror(errno));
        else if ((vfs.f_flag & ST_RDONLY) || access(dir, W_OK | X_OK) != 0)
            snprintf(d->problem, sizeof d->problem, "%s",
                     (vfs.f_flag & ST_RDONLY) ? "a read-only mount" : "no write permission");
        if (d->problem[0])
            continue;
        d->free_bytes = (int64_t)vfs.f_bavail * (int64_t)vfs.f_frsize;
        for (size_t m = 0; m < sizeof network_magic / sizeof network_magic[0]; m++)
            d->network |= (long)fs.f_type == network_magic[m];
        token_path(dir, token, path, sizeof path);
        d->seen = wb_safeio_token_holds(path, token);
    }
}

/* "rank 2 (node 1, pi2)" of every answering rank that pick(q) selects, joined into out. */
#define RANK_LIST(v, out, pick)                                                                                 \
    do {                                                                                                         \
        size_t len_ = 0;                                                                                         \
        char one_[160];                                                                                          \
        (out)[0] = '\0';                                                                                         \
        for (int q = 0; q < (v)->nranks; q++)                                                                    \
            if ((v)->answered[q] && (pick) && len_ < sizeof(out))                                                \
                len_ += (size_t)snprintf((out) + len_, sizeof(out) - len_, "%s%s", len_ ? "; " : "",             \
                                         wb_check_node_name((v), q, one_, sizeof one_));                         \
    } while (0)

/* Whether rank 0's token reached every rank; 1 when the folder is one folder on several nodes. */
static int judge_shared(struct wb_check_view *v, int i)
{
    const char *dir = v->k->io_dirs[i];
    int unseen = 0, near_unseen = 0, far_seen = 0;
    for (int q = 1; q < v->nranks; q++) {
        if (!v->answered[q])
            continue;
        int seen = v->fact[q].io[i].seen, near = v->node[q] == v->node[0];
        unseen += !seen;
        near_unseen |= near && !seen;
        far_seen |= !near && seen;
    }
    if (!unseen) {
        if (v->nnodes > 1)
            wb_check_verdict(v, "ok", "shared", NULL, "%s is one folder on all %d nodes: every rank sees rank 0's "
                             "token", dir, v->nnodes);
        else
            wb_check_verdict(v, "ok", "shared", NULL, "%s: one node, every rank sees rank 0's token", dir);
        return v->nnodes > 1;
    }
    char list[1500];
    RANK_LIST(v, list, q > 0 && !v->fact[q].io[i].seen);
    if (near_unseen || far_seen || v->fact[0].io[i].network)
        wb_check_verdict(v, "fail", "shared", "mount the shared folder at the same path on every node (e.g. sudo mount "
                         "-t nfs head:/export PATH), then check again",
                         "%s is not the same folder everywhere (%s on rank 0): rank 0's token is missing on %s", dir,
                         v->fact[0].io[i].network ? "a network filesystem" : "a local disk", list);
    else
        wb_check_verdict(v, "ok", "shared", NULL, "%s is a local folder on each node (rank 0's token on no other): io "
                         "measures each node's own disk and skips shared-write and shared-read", dir);
    return 0;
}

/* Room for the io run: each node's need in its own folder, or all nodes' in the one shared folder. */
static void judge_space(struct wb_check_view *v, int i, int shared, const int *rep, const int *on, int ppn_max)
{
    const char *dir = v->k->io_dirs[i];
    char size[80] = "io's default run";
    if (v->k->io_size_bytes)
        snprintf(size, sizeof size, "io --size of %.1f MB per rank", (double)v->k->io_size_bytes / 1e6);
    char low[1500] = "";
    size_t len = 0;
    double total = 0, least = -1, most = 0;
    for (int d = 0; d < v->nnodes; d++) {
        int q = rep[d];
        if (q < 0)
            continue;
        double need = v->o->storage_bytes(v->o, v->k->io_size_bytes, on[d], ppn_max);
        double free_b = (double)v->fact[q].io[i].free_bytes;
        total += need;
        most = need > most ? need : most;
        least = least < 0 || free_b < least ? free_b : least;
        if (!shared && free_b < need && len < sizeof low)
            len += (size_t)snprintf(low + len, sizeof low - len, "%snode %d (%s) has %.0f MB free, needs about %.0f MB",
                                    len ? "; " : "", d, v->fact[q].h.hostname, free_b / 1e6, need / 1e6);
    }
    if (shared && (double)v->fact[0].io[i].free_bytes < total)
        snprintf(low, sizeof low, "the shared folder has %.0f MB free, all %d nodes need about %.0f MB together",
                 (double)v->fact[0].io[i].free_bytes / 1e6, v->nnodes, total / 1e6);
    if (*low)
        wb_check_verdict(v, "fail", "space", "free some space, give io a smaller --size (and check --io-size), or "
                         "measure another folder", "%s: %s (MB = 1e6 bytes, %s)", dir, low, size);
    else if (shared)
        wb_check_verdict(v, "ok", "space", NULL, "%s has %.0f MB free for the %.0f MB all nodes need (%s)", dir,
                         (double)v->fact[0].io[i].free_bytes / 1e6, total / 1e6, size);
    else
        wb_check_verdict(v, "ok", "space", NULL, "%s has room on every node: at least %.0f MB free, at most %.0f MB "
                         "needed (%s)", dir, least / 1e6, most / 1e6, size);
}

static void judge_dir(struct wb_check_view *v, int i, const int *rep, const int *on, int ppn_max)
{
    const char *dir = v->k->io_dirs[i];
    char bad[1500];
    RANK_LIST(v, bad, v->fact[q].io[i].problem[0]);
    if (*bad) {
        char why[1700] = "";
        size_t len = 0;
        for (int q = 0; q < v->nranks && len < sizeof why; q++)
            if (v->answered[q] && v->fact[q].io[i].problem[0]) {
                char one[160];
                len += (size_t)snprintf(why + len, sizeof why - len, "%s%s on %s", len ? "; " : "",
                                        v->fact[q].io[i].problem, wb_check_node_name(v, q, one, sizeof one));
            }
        wb_check_verdict(v, "fail", "iodir", "create the folder on every node (mkdir -p), mount the share there, or "
                         "give io another --dir", "%s: %s", dir, why);
        return;
    }
    wb_check_verdict(v, "ok", "iodir", NULL, "%s is a writable folder on every rank", dir);
    int shared = judge_shared(v, i);
    if (v->o->storage_bytes)
        judge_space(v, i, shared, rep, on, ppn_max);
}

void wb_check_storage_judge(struct wb_check_view *v)
{
    if (!v->k->nio_dirs)
        return;
    int *rep = calloc((size_t)v->nnodes + 1, sizeof *rep), *on = calloc((size_t)v->nnodes + 1, sizeof *on);
    if (!rep || !on) {
        wb_check_verdict(v, "warn", "iodir", NULL, "out of memory to judge the io folders");
        free(rep);
        free(on);
        return;
    }
    int ppn_max = 0;
    for (int d = 0; d < v->nnodes; d++)
        rep[d] = -1;
    for (int q = 0; q < v->nranks; q++)
        if (v->answered[q]) {
            rep[v->node[q]] = rep[v->node[q]] < 0 ? q : rep[v->node[q]];
            on[v->node[q]]++;
            ppn_max = on[v->node[q]] > ppn_max ? on[v->node[q]] : ppn_max;
        }
    for (int i = 0; i < v->k->nio_dirs; i++)
        judge_dir(v, i, rep, on, ppn_max);
    free(rep);
    free(on);
}
