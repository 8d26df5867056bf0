/* wbswitch: a store-and-forward Ethernet switch in user space for the emulated cluster
 * (jobs/emulate/cluster up N --switch serial). One AF_PACKET socket per port (the host end of
 * a node's veth); each port is a full-duplex link at --rate: a frame a node sends is forwarded
 * only after its whole wire time on the uplink, and reaches the destination node after the
 * downlink is free plus its wire time, plus --latency-us. Departure times come from a virtual
 * clock (busy_until += wire time), so a late timer adds latency but never loses throughput.
 * Wire time of a frame: max(len, 60) + 24 bytes (preamble 8, FCS 4, inter-frame gap 12).
 * Faults (jobs/emulate/cluster fault): on SIGUSR1 the switch re-reads --faults FILE and writes
 * the generation it applied to --faults-ack FILE; per port a random loss share (both directions,
 * seeded), an outage (down for T s, or down D s of every P s) and a slower rate.
 * Build: cc -O2 -Wall -Wextra -o wbswitch wbswitch.c (Linux, glibc; no other library). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PORTS 64
#define MAX_MACS 256
#define BATCH 32
#define VNET_BYTES ((uint32_t)sizeof(struct virtio_net_hdr))
#define WIRE_EXTRA_BYTES 24
#define MIN_FRAME_BYTES 60
#define RCVBUF_BYTES (8 << 20)
#define STATS_PERIOD_NS 1000000000LL
#define NS_PER_S 1000000000LL
#define LATE_SLACK_NS 20000000LL
#define FAULT_LINE_BYTES 256

enum parse_status { PARSE_OK, PARSE_HELP, PARSE_BAD };

struct options {
    int64_t rate_Bps;            /* 0: no serialization (forward at once) */
    int64_t latency_ns;
    int64_t spin_ns;
    uint32_t mtu, queue_up, queue_down;
    int priority;                /* SCHED_FIFO priority, 0: an ordinary process */
    const char *stats_path;
    const char *faults_path, *faults_ack_path;
    const char *port_rates[MAX_PORTS];    /* NAME=BYTES_PER_S: a port with its own line rate */
    int nport_rates;
    char **ports;
    int nports;
};

/* A FIFO of frames, each stored as [due time][length][virtio_net_hdr + Ethernet frame]. */
struct ring {
    unsigned char *mem;
    size_t slot_bytes;
    uint32_t cap, head, count;
};

struct slot {
    int64_t due_ns;
    uint32_t len;                /* bytes in data: virtio_net_hdr + frame */
    unsigned char data[];
};

struct counters {
    uint64_t rx, rx_bytes, tx, tx_bytes, drop_up, drop_down, drop_kernel, oversize, tx_err, gso;
    uint64_t fault_up, fault_down;    /* frames a fault dropped: from the node, toward it */
    uint32_t max_frame;
};

/* The faults in force on one port; gen is the control file's generation that set each one, so a
 * re-read keeps a fault's start time and random state unless that fault was given anew. */
struct fault {
    double loss;                 /* share of frames dropped, each direction */
    uint64_t rng, loss_gen;
    int64_t out_start_ns, out_down_ns, out_period_ns;    /* period 0: one outage, then up */
    uint64_t out_gen;
    int64_t rate_Bps;            /* 0: the port's own rate */
    uint64_t rate_gen;
};

struct port {
    const char *name;
    int fd, ifindex;
    struct ring up, down;
    int64_t up_busy_ns, down_busy_ns;
    int64_t base_rate_Bps;       /* --rate, or this port's --port-rate */
    int64_t rate_Bps;            /* base_rate_Bps, or a rate fault's */
    int64_t queue_ns;            /* the downlink queue: this long a wait, and a frame is dropped */
    struct fault f;
    struct counters c;
};

struct mac_entry {
    unsigned char mac[ETH_ALEN];
    int port;
};

struct lateness {
    int64_t sum_ns, max_ns;
    uint64_t n;
};

struct sw {
    struct options o;
    struct port ports[MAX_PORTS];
    struct mac_entry macs[MAX_MACS];
    int nmacs;
    struct lateness late;
    unsigned char *scratch;      /* BATCH receive buffers */
    size_t scratch_bytes;
};

static volatile sig_atomic_t stop_signal, reload_faults;

static void on_signal(int sig) { stop_signal = sig; }

static void on_reload(int sig)
{
    (void)sig;
    reload_faults = 1;
}

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * NS_PER_S + t.tv_nsec;
}

static void usage(FILE *out)
{
    fprintf(out,
            "Usage: wbswitch [OPTIONS] PORT...\n"
            "Forward Ethernet frames between the network interfaces PORT... (host ends of veths)\n"
            "like a store-and-forward switch whose every port is a full-duplex link at --rate.\n"
            "  --rate BYTES_PER_S  line rate of every link each way (0: no serialization; default 0)\n"
            "  --latency-us US     one-way delay added to every frame crossing the switch (default 0)\n"
            "  --mtu BYTES         largest IP packet; bigger frames are dropped and counted (default 1500)\n"
            "  --queue-up FRAMES   frames a node may have waiting on its uplink (default 1000, a NIC's txqueuelen)\n"
            "  --queue-down FRAMES full frames of waiting a port buffers toward its node; more are dropped (default 256)\n"
            "  --spin-us US        busy-wait the last US microseconds before a departure (default 0)\n"
            "  --priority P        run as SCHED_FIFO priority P (1..99), so that busy nodes cannot delay\n"
            "                      the switch's wake-ups (default 0: an ordinary process)\n"
            "  --stats FILE        write per-port counters there once a second and at exit\n"
            "  --port-rate PORT=BYTES_PER_S  PORT's own line rate (repeatable; 0: no serialization)\n"
            "  --faults FILE       re-read on SIGUSR1: lines 'gen N', then 'PORT GEN KIND ARGS',\n"
            "                      KIND one of: loss SHARE SEED | down SECONDS | flap DOWN PERIOD | rate BYTES_PER_S\n"
            "  --faults-ack FILE   the generation applied is written there after each re-read\n"
            "Runs until SIGTERM or SIGINT, or until a port disappears.\n");
}

/* parse_num TEXT MAX: a decimal in 0..MAX, or -1. */
static int64_t parse_num(const char *text, int64_t max)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v < 0 || v > max)
        return -1;
    return v;
}

static int parse_value(struct options *o, const char *name, const char *value)
{
    int64_t v;
    if (!strcmp(name, "--stats") || !strcmp(name, "--faults") || !strcmp(name, "--faults-ack")) {
        *(!strcmp(name, "--stats") ? &o->stats_path : !strcmp(name, "--faults") ? &o->faults_path
                                                                                 : &o->faults_ack_path) = value;
        return 0;
    }
    if (!strcmp(name, "--port-rate")) {
        const char *eq = strchr(value, '=');
        if (!eq || eq == value || parse_num(eq + 1, 100 * NS_PER_S) < 0 || o->nport_rates == MAX_PORTS)
            return fprintf(stderr, "wbswitch: --port-rate needs PORT=BYTES_PER_S, not '%s'\n", value), -1;
        o->port_rates[o->nport_rates++] = value;
        return 0;
    }
    /* Rates up to 100 GB/s; the rest in 32 bits. */
    v = parse_num(value, !strcmp(name, "--rate") ? 100 * NS_PER_S : INT32_MAX);
    if (!strcmp(name, "--rate"))
        o->rate_Bps = v;
    else if (!strcmp(name, "--latency-us"))
        o->latency_ns = v * 1000;
    else if (!strcmp(name, "--spin-us"))
        o->spin_ns = v * 1000;
    else if (!strcmp(name, "--mtu"))
        o->mtu = (uint32_t)v;
    else if (!strcmp(name, "--queue-up"))
        o->queue_up = (uint32_t)v;
    else if (!strcmp(name, "--queue-down"))
        o->queue_down = (uint32_t)v;
    else if (!strcmp(name, "--priority"))
        o->priority = (int)v;
    else
        return fprintf(stderr, "wbswitch: unknown option '%s'\n", name), -1;
    if (v < 0)
        return fprintf(stderr, "wbswitch: %s needs a number, not '%s'\n", name, value), -1;
    return 0;
}

static enum parse_status parse_options(struct options *o, int argc, char **argv)
{
    *o = (struct options){.mtu = 1500, .queue_up = 1000, .queue_down = 256};
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i += 2) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
            return PARSE_HELP;
        if (i + 1 >= argc)
            return fprintf(stderr, "wbswitch: %s needs a value\n", argv[i]), PARSE_BAD;
        if (parse_value(o, argv[i], argv[i + 1]))
            return PARSE_BAD;
    }
    o->ports = argv + i;
    o->nports = argc - i;
    if (o->nports < 1 || o->nports > MAX_PORTS)
        return fprintf(stderr, "wbswitch: give 1..%d ports\n", MAX_PORTS), PARSE_BAD;
    if (o->mtu < 68 || o->mtu > 9000 || o->queue_up < 1 || o->queue_down < 1 || o->priority > 99)
        return fprintf(stderr, "wbswitch: --mtu 68..9000, queues at least 1 frame, --priority 0..99\n"), PARSE_BAD;
    return PARSE_OK;
}

/* wire_ns RATE LEN: the time LEN frame bytes take on a link of RATE bytes/s, framing and gap
 * included (0 at rate 0: no serialization). */
static int64_t wire_ns(int64_t rate_Bps, uint32_t frame_bytes)
{
    if (rate_Bps == 0)
        return 0;
    int64_t b = (frame_bytes < MIN_FRAME_BYTES ? MIN_FRAME_BYTES : frame_bytes) + WIRE_EXTRA_BYTES;
    return (b * NS_PER_S + rate_Bps - 1) / rate_Bps;
}

static int ring_init(struct ring *r, uint32_t cap, size_t frame_bytes)
{
    r->slot_bytes = (sizeof(struct slot) + frame_bytes + 15) & ~(size_t)15;
    r->cap = cap;
    r->head = r->count = 0;
    /* calloc: the pages of slots never used are never touched. */
    r->mem = calloc(cap, r->slot_bytes);
    return r->mem ? 0 : -1;
}

static struct slot *ring_at(const struct ring *r, uint32_t i)
{
    return (struct slot *)(r->mem + (size_t)((r->head + i) % r->cap) * r->slot_bytes);
}

static struct slot *ring_head(const struct ring *r) { return r->count ? ring_at(r, 0) : NULL; }

static struct slot *ring_push(struct ring *r)
{
    if (r->count == r->cap)
        return NULL;
    r->count++;
    return ring_at(r, r->count - 1);
}

static void ring_pop(struct ring *r)
{
    r->head = (r->head + 1) % r->cap;
    r->count--;
}

static int set_int_opt(int fd, int level, int name, int value)
{
    return setsockopt(fd, level, name, &value, sizeof value);
}

/* open_port: a raw socket on interface NAME that sees what the node sends, with the virtio
 * header so that checksum offload state passes through untouched. */
static int open_port(struct port *p, const char *name)
{
    p->name = name;
    p->ifindex = (int)if_nametoindex(name);
    if (!p->ifindex)
        return fprintf(stderr, "wbswitch: no interface '%s': %s\n", name, strerror(errno)), -1;
    p->fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, htons(ETH_P_ALL));
    if (p->fd < 0)
        return fprintf(stderr, "wbswitch: AF_PACKET socket: %s (needs root)\n", strerror(errno)), -1;
    if (set_int_opt(p->fd, SOL_PACKET, PACKET_VNET_HDR, 1) || set_int_opt(p->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, 1) ||
        set_int_opt(p->fd, SOL_PACKET, PACKET_QDISC_BYPASS, 1) || set_int_opt(p->fd, SOL_SOCKET, SO_TIMESTAMPNS, 1))
        return fprintf(stderr, "wbswitch: %s: packet socket options: %s\n", name, strerror(errno)), -1;
    if (set_int_opt(p->fd, SOL_SOCKET, SO_RCVBUFFORCE, RCVBUF_BYTES))
        set_int_opt(p->fd, SOL_SOCKET, SO_RCVBUF, RCVBUF_BYTES);
    struct sockaddr_ll a = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL), .sll_ifindex = p->ifindex};
    if (bind(p->fd, (struct sockaddr *)&a, sizeof a))
        return fprintf(stderr, "wbswitch: bind to %s: %s\n", name, strerror(errno)), -1;
    return 0;
}

/* frames_in_flight RATE: frames a downlink at RATE holds beyond its queue: those in the --latency
 * delay line, and those due at once after the switch itself was held up (LATE_SLACK_NS of full
 * frames). A slower rate (a rate fault) holds fewer. */
static uint32_t frames_in_flight(const struct options *o, int64_t rate_Bps)
{
    if (rate_Bps == 0)
        return 1024;
    return (uint32_t)(o->latency_ns / wire_ns(rate_Bps, MIN_FRAME_BYTES) +
                      LATE_SLACK_NS / wire_ns(rate_Bps, o->mtu + ETH_HLEN) + 1);
}

/* set_rate: port P's line rate, and the downlink queue's length in time that follows from it. */
static void set_rate(const struct options *o, struct port *p, int64_t rate_Bps)
{
    p->rate_Bps = rate_Bps;
    p->queue_ns = rate_Bps ? o->queue_down * wire_ns(rate_Bps, o->mtu + ETH_HLEN) : INT64_MAX;
}

/* port_rate: the --port-rate given for port NAME, else --rate. */
static int64_t port_rate(const struct options *o, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < o->nport_rates; i++)
        if (!strncmp(o->port_rates[i], name, n) && o->port_rates[i][n] == '=')
            return parse_num(o->port_rates[i] + n + 1, 100 * NS_PER_S);
    return o->rate_Bps;
}

static int sw_init(struct sw *s)
{
    size_t frame_bytes = VNET_BYTES + s->o.mtu + ETH_HLEN;
    s->scratch_bytes = VNET_BYTES + 65536;
    s->scratch = malloc((size_t)BATCH * s->scratch_bytes);
    if (!s->scratch)
        return fprintf(stderr, "wbswitch: out of memory\n"), -1;
    for (int i = 0; i < s->o.nports; i++) {
        struct port *p = &s->ports[i];
        if (open_port(p, s->o.ports[i]))
            return -1;
        p->base_rate_Bps = port_rate(&s->o, p->name);
        if (ring_init(&p->up, s->o.queue_up, frame_bytes) ||
            ring_init(&p->down, s->o.queue_down + frames_in_flight(&s->o, p->base_rate_Bps), frame_bytes))
            return fprintf(stderr, "wbswitch: out of memory for the queues\n"), -1;
        set_rate(&s->o, p, p->base_rate_Bps);
    }
    for (int i = 0; i < s->o.nport_rates; i++) {
        int found = 0;
        for (int k = 0; k < s->o.nports; k++) {
            size_t n = strlen(s->o.ports[k]);
            found |= !strncmp(s->o.port_rates[i], s->o.ports[k], n) && s->o.port_rates[i][n] == '=';
        }
        if (!found)
            return fprintf(stderr, "wbswitch: --port-rate %s names no port\n", s->o.port_rates[i]), -1;
    }
    return 0;
}

static void sw_free(struct sw *s)
{
    for (int i = 0; i < s->o.nports; i++) {
        struct port *p = &s->ports[i];
        if (p->fd > 0)
            close(p->fd);
        free(p->up.mem);
        free(p->down.mem);
    }
    free(s->scratch);
    s->scratch = NULL;
}

static int mac_find(const struct sw *s, const unsigned char *mac)
{
    for (int i = 0; i < s->nmacs; i++)
        if (!memcmp(s->macs[i].mac, mac, ETH_ALEN))
            return i;
    return -1;
}

static void mac_learn(struct sw *s, const unsigned char *src, int port)
{
    if (src[0] & 1)
        return;
    int i = mac_find(s, src);
    if (i < 0 && s->nmacs < MAX_MACS) {
        i = s->nmacs++;
        memcpy(s->macs[i].mac, src, ETH_ALEN);
    }
    if (i >= 0)
        s->macs[i].port = port;
}

static uint32_t frame_len(const struct slot *f) { return f->len - VNET_BYTES; }

/* rng_next: xorshift64*, uniform in [0, 1); a port's own stream, so a seed repeats its losses
 * for the same frames. */
static double rng_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) / (double)(1ULL << 53);
}

/* fault_drops: whether a loss or outage on port P takes a frame crossing its link at T_NS. */
static int fault_drops(struct port *p, int64_t t_ns)
{
    const struct fault *f = &p->f;
    if (f->out_down_ns > 0 && t_ns >= f->out_start_ns) {
        int64_t dt = t_ns - f->out_start_ns;
        if (f->out_period_ns ? dt % f->out_period_ns < f->out_down_ns : dt < f->out_down_ns)
            return 1;
    }
    return f->loss > 0 && rng_next(&p->f.rng) < f->loss;
}

static struct port *port_named(struct sw *s, const char *name)
{
    for (int i = 0; i < s->o.nports; i++)
        if (!strcmp(s->ports[i].name, name))
            return &s->ports[i];
    return NULL;
}

/* apply_fault: one line 'PORT GEN KIND ARGS' of the control file; SEEN marks the kinds given per
 * port. A kind given with the generation already in force is left running as it is. */
static const char *apply_fault(struct sw *s, const char *line, unsigned char *seen, int64_t t_ns)
{
    char name[IF_NAMESIZE + 1], kind[8];
    unsigned long long gen, seed;
    double a, b;
    int n = sscanf(line, "%16s %llu %7s %lf %lf", name, &gen, kind, &a, &b);
    struct port *p = n >= 4 ? port_named(s, name) : NULL;
    if (!p || gen == 0)
        return "unknown port or no generation";
    struct fault *f = &p->f;
    int k = (int)(p - s->ports);
    if (!strcmp(kind, "loss") && n == 5 && a >= 0 && a <= 1 && b >= 0) {
        seen[k] |= 1;
        if (f->loss_gen != gen) {
            seed = (unsigned long long)b;
            f->loss = a;
            f->rng = seed * 0x9E3779B97F4A7C15ULL + 1;
            f->loss_gen = gen;
        }
    } else if ((!strcmp(kind, "down") && n >= 4 && a > 0) || (!strcmp(kind, "flap") && n == 5 && a > 0 && b > a)) {
        seen[k] |= 2;
        if (f->out_gen != gen) {
            f->out_start_ns = t_ns;
            f->out_down_ns = (int64_t)(a * NS_PER_S);
            f->out_period_ns = kind[0] == 'f' ? (int64_t)(b * NS_PER_S) : 0;
            f->out_gen = gen;
        }
    } else if (!strcmp(kind, "rate") && n >= 4 && a >= 1 && a <= 100.0 * NS_PER_S) {
        seen[k] |= 4;
        if (f->rate_gen != gen) {
            set_rate(&s->o, p, (int64_t)a);
            f->rate_gen = gen;
        }
    } else {
        return "bad fault";
    }
    return NULL;
}

/* write_file_whole: TEXT into PATH through a rename, so a reader never sees half of it. */
static void write_file_whole(const char *path, const char *text)
{
    char tmp[PATH_MAX];
    if (!path || snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp)
        return;
    FILE *f = fopen(tmp, "w");
    if (!f)
        return;
    fputs(text, f);
    if (fclose(f) || rename(tmp, path))
        fprintf(stderr, "wbswitch: cannot write %s: %s\n", path, strerror(errno));
}

/* load_faults: the control file in force; every fault it no longer names ends. Acknowledged with
 * its generation, or with 'error GEN: WHAT' (nothing of a bad file is applied). */
static void load_faults(struct sw *s)
{
    char line[FAULT_LINE_BYTES], ack[FAULT_LINE_BYTES + 64];
    unsigned char seen[MAX_PORTS] = {0};
    unsigned long long gen = 0;
    const char *err = NULL;
    struct fault before[MAX_PORTS];
    int64_t before_rate_Bps[MAX_PORTS];
    if (!s->o.faults_path)
        return;
    FILE *f = fopen(s->o.faults_path, "r");
    if (!f) {
        if (errno != ENOENT)
            fprintf(stderr, "wbswitch: cannot read %s: %s\n", s->o.faults_path, strerror(errno));
        return;
    }
    for (int i = 0; i < s->o.nports; i++)
        before[i] = s->ports[i].f, before_rate_Bps[i] = s->ports[i].rate_Bps;
    int64_t t = now_ns();
    if (!fgets(line, sizeof line, f) || sscanf(line, "gen %llu", &gen) != 1)
        err = "no 'gen N' line";
    while (!err && fgets(line, sizeof line, f))
        if (line[0] != '#' && line[0] != '\n')
            err = apply_fault(s, line, seen, t);
    fclose(f);
    if (err) {
        for (int i = 0; i < s->o.nports; i++)
            s->ports[i].f = before[i], set_rate(&s->o, &s->ports[i], before_rate_Bps[i]);
        fprintf(stderr, "wbswitch: %s: %s in '%s'; faults unchanged\n", s->o.faults_path, err, line);
        snprintf(ack, sizeof ack, "error %llu: %s\n", gen, err);
        write_file_whole(s->o.faults_ack_path, ack);
        return;
    }
    for (int i = 0; i < s->o.nports; i++) {
        struct port *p = &s->ports[i];
        if (!(seen[i] & 1))
            p->f.loss = 0, p->f.loss_gen = 0;
        if (!(seen[i] & 2))
            p->f.out_down_ns = 0, p->f.out_gen = 0;
        if (!(seen[i] & 4) && p->f.rate_gen)
            set_rate(&s->o, p, p->base_rate_Bps), p->f.rate_gen = 0;
    }
    fprintf(stderr, "wbswitch: faults of generation %llu in force\n", gen);
    snprintf(ack, sizeof ack, "%llu\n", gen);
    write_file_whole(s->o.faults_ack_path, ack);
}

static const unsigned char *frame_eth(const struct slot *f) { return f->data + VNET_BYTES; }

/* take_frame: one received frame onto port P's uplink, due when its wire time has passed. */
static void take_frame(struct sw *s, struct port *p, const unsigned char *buf, uint32_t len, int64_t t_ns)
{
    const struct virtio_net_hdr *vh = (const void *)buf;
    uint32_t eth_bytes = len - VNET_BYTES;
    p->c.rx++;
    p->c.rx_bytes += eth_bytes;
    if (vh->gso_type != VIRTIO_NET_HDR_GSO_NONE)
        p->c.gso++;
    if (eth_bytes > p->c.max_frame)
        p->c.max_frame = eth_bytes;
    if (eth_bytes < ETH_HLEN || eth_bytes > s->o.mtu + ETH_HLEN) {
        if (!p->c.oversize++)
            fprintf(stderr, "wbswitch: %s: dropping a %u-byte frame (MTU %u; GSO not off?)\n", p->name, eth_bytes, s->o.mtu);
        return;
    }
    struct slot *f = ring_push(&p->up);
    if (!f) {
        p->c.drop_up++;
        return;
    }
    mac_learn(s, buf + VNET_BYTES + ETH_ALEN, (int)(p - s->ports));
    int64_t start = t_ns > p->up_busy_ns ? t_ns : p->up_busy_ns;
    p->up_busy_ns = start + wire_ns(p->rate_Bps, eth_bytes);
    f->due_ns = p->up_busy_ns;
    f->len = len;
    memcpy(f->data, buf, len);
}

/* realtime_offset_ns: CLOCK_REALTIME minus CLOCK_MONOTONIC, to read kernel timestamps. */
static int64_t realtime_offset_ns(void)
{
    struct timespec r, m;
    clock_gettime(CLOCK_MONOTONIC, &m);
    clock_gettime(CLOCK_REALTIME, &r);
    return ((int64_t)r.tv_sec - m.tv_sec) * NS_PER_S + (r.tv_nsec - m.tv_nsec);
}

/* arrival_ns: when the kernel received the frame (SO_TIMESTAMPNS), on the monotonic clock,
 * so that a frame read late still starts on its uplink when it came; else T_NS. */
static int64_t arrival_ns(struct msghdr *h, int64_t offset_ns, int64_t t_ns)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR(h); c; c = CMSG_NXTHDR(h, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_TIMESTAMPNS)
            continue;
        struct timespec ts;
        memcpy(&ts, CMSG_DATA(c), sizeof ts);
        int64_t a = (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec - offset_ns;
        return a < t_ns ? a : t_ns;
    }
    return t_ns;
}

/* receive_port: everything waiting on P's socket; -1 if the port is gone. */
static int receive_port(struct sw *s, struct port *p, int64_t t_ns)
{
    struct mmsghdr m[BATCH];
    struct iovec iov[BATCH];
    union {
        char buf[CMSG_SPACE(sizeof(struct timespec))];
        struct cmsghdr align;
    } ctl[BATCH];
    int64_t offset_ns = realtime_offset_ns();
    for (;;) {
        for (int i = 0; i < BATCH; i++) {
            iov[i] = (struct iovec){s->scratch + (size_t)i * s->scratch_bytes, s->scratch_bytes};
            m[i] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[i], .msg_iovlen = 1,
                                                .msg_control = ctl[i].buf, .msg_controllen = sizeof ctl[i].buf}};
        }
        int n = recvmmsg(p->fd, m, BATCH, MSG_DONTWAIT, NULL);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return 0;
            return fprintf(stderr, "wbswitch: %s: receive: %s; stopping\n", p->name, strerror(errno)), -1;
        }
        for (int i = 0; i < n; i++)
            if (m[i].msg_len >= VNET_BYTES && !(m[i].msg_hdr.msg_flags & MSG_TRUNC))
                take_frame(s, p, iov[i].iov_base, m[i].msg_len, arrival_ns(&m[i].msg_hdr, offset_ns, t_ns));
        if (n < BATCH)
            return 0;
    }
}

/* to_downlink: frame F, off its uplink at F->due_ns, queued toward port D's node. */
static void to_downlink(struct sw *s, struct port *d, const struct slot *f)
{
    /* Drop tail on the queue the frame would find at the time it left its uplink (virtual
     * time), not on what the ring holds when the switch gets round to it. */
    int64_t start = f->due_ns > d->down_busy_ns ? f->due_ns : d->down_busy_ns;
    int64_t end = start + wire_ns(d->rate_Bps, frame_len(f));
    /* A frame lost to a fault took its wire time: it was sent, and spoiled on the cable. */
    if (start - f->due_ns < d->queue_ns && fault_drops(d, end)) {
        d->down_busy_ns = end;
        d->c.fault_down++;
        return;
    }
    struct slot *g = start - f->due_ns < d->queue_ns ? ring_push(&d->down) : NULL;
    if (!g) {
        d->c.drop_down++;
        return;
    }
    d->down_busy_ns = end;
    g->due_ns = d->down_busy_ns + s->o.latency_ns;
    g->len = f->len;
    memcpy(g->data, f->data, f->len);
}

/* forward: the frame at the head of port P's uplink to the port its destination was seen
 * on, or to every other port for broadcast, multicast and unknown destinations. */
static void forward(struct sw *s, struct port *p, const struct slot *f)
{
    const unsigned char *dst = frame_eth(f);
    int from = (int)(p - s->ports), i = (dst[0] & 1) ? -1 : mac_find(s, dst);
    if (i >= 0) {
        if (s->macs[i].port != from)
            to_downlink(s, &s->ports[s->macs[i].port], f);
        return;
    }
    for (int k = 0; k < s->o.nports; k++)
        if (k != from)
            to_downlink(s, &s->ports[k], f);
}

/* send_due: the frames at the head of P's downlink whose time has come, in batches. */
static void send_due(struct port *p, int64_t t_ns)
{
    struct mmsghdr m[BATCH];
    struct iovec iov[BATCH];
    while (p->down.count) {
        int n = 0;
        for (; n < BATCH && (uint32_t)n < p->down.count; n++) {
            struct slot *f = ring_at(&p->down, (uint32_t)n);
            if (f->due_ns > t_ns)
                break;
            struct virtio_net_hdr *vh = (void *)f->data;
            vh->flags &= VIRTIO_NET_HDR_F_NEEDS_CSUM;
            iov[n] = (struct iovec){f->data, f->len};
            m[n] = (struct mmsghdr){.msg_hdr = {.msg_iov = &iov[n], .msg_iovlen = 1}};
        }
        if (n == 0)
            return;
        int sent = sendmmsg(p->fd, m, (unsigned)n, MSG_DONTWAIT);
        if (sent < 0 && errno == EINTR)
            continue;
        if (sent <= 0) {
            p->c.tx_err++;
            sent = 1;    /* drop it: a peer that is gone or full must not stall the port */
        }
        for (int i = 0; i < sent; i++) {
            p->c.tx++;
            p->c.tx_bytes += frame_len(ring_head(&p->down));
            ring_pop(&p->down);
        }
    }
}

static void run_due(struct sw *s, int64_t t_ns)
{
    for (int i = 0; i < s->o.nports; i++) {
        struct port *p = &s->ports[i];
        struct slot *f;
        while ((f = ring_head(&p->up)) && f->due_ns <= t_ns) {
            if (fault_drops(p, f->due_ns))
                p->c.fault_up++;
            else
                forward(s, p, f);
            ring_pop(&p->up);
        }
    }
    for (int i = 0; i < s->o.nports; i++)
        send_due(&s->ports[i], t_ns);
}

static int64_t next_due(const struct sw *s)
{
    int64_t next = INT64_MAX;
    for (int i = 0; i < s->o.nports; i++) {
        const struct slot *u = ring_head(&s->ports[i].up), *d = ring_head(&s->ports[i].down);
        if (u && u->due_ns < next)
            next = u->due_ns;
        if (d && d->due_ns < next)
            next = d->due_ns;
    }
    return next;
}

static void kernel_drops(struct sw *s)
{
    for (int i = 0; i < s->o.nports; i++) {
        struct tpacket_stats st;
        socklen_t len = sizeof st;
        if (!getsockopt(s->ports[i].fd, SOL_PACKET, PACKET_STATISTICS, &st, &len))
            s->ports[i].c.drop_kernel += st.tp_drops;
    }
}

static void write_counters(FILE *f, const struct sw *s)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(f, "# port rx_frames rx_bytes tx_frames tx_bytes drop_up drop_down drop_kernel oversize gso tx_err max_frame"
               " fault_drop_up fault_drop_down rate_Bps\n");
    for (int i = 0; i < s->o.nports; i++) {
        const struct counters *c = &s->ports[i].c;
        fprintf(f, "%s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %u %llu %llu %lld\n", s->ports[i].name,
                (unsigned long long)c->rx, (unsigned long long)c->rx_bytes, (unsigned long long)c->tx,
                (unsigned long long)c->tx_bytes, (unsigned long long)c->drop_up, (unsigned long long)c->drop_down,
                (unsigned long long)c->drop_kernel, (unsigned long long)c->oversize, (unsigned long long)c->gso,
                (unsigned long long)c->tx_err, c->max_frame, (unsigned long long)c->fault_up,
                (unsigned long long)c->fault_down, (long long)s->ports[i].rate_Bps);
    }
    fprintf(f, "# cpu_user_s %.3f cpu_sys_s %.3f timer_late_mean_us %.1f timer_late_max_us %.1f wakeups %llu\n",
            ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6,
            s->late.n ? s->late.sum_ns / 1e3 / (double)s->late.n : 0.0, s->late.max_ns / 1e3,
            (unsigned long long)s->late.n);
}

/* write_stats: the counters to --stats, replaced whole (a reader never sees half a file). */
static void write_stats(struct sw *s)
{
    char *text = NULL;
    size_t len = 0;
    if (!s->o.stats_path)
        return;
    kernel_drops(s);
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return;
    write_counters(f, s);
    if (!fclose(f))
        write_file_whole(s->o.stats_path, text);
    free(text);
}

/* wait_for: sleep until DUE_NS or until a frame arrives on a port whose uplink is idle; the
 * timer's lateness is recorded. A busy uplink's frames wait in its socket until the next wake-up:
 * their kernel timestamps keep their timing, and a node streaming frames does not wake the
 * switch for each one (a wake-up costs tens of microseconds of CPU in a VM). */
static int wait_for(struct sw *s, struct pollfd *pfd, int64_t due_ns, const sigset_t *mask)
{
    int64_t t = now_ns(), wait = due_ns - t - s->o.spin_ns;
    if (wait <= 0)
        return 1;    /* spin: poll the sockets without sleeping */
    for (int i = 0; i < s->o.nports; i++)
        pfd[i].fd = s->ports[i].up_busy_ns > t && s->ports[i].up.count ? -1 : s->ports[i].fd;
    struct timespec ts = {wait / NS_PER_S, wait % NS_PER_S};
    int n = ppoll(pfd, (nfds_t)s->o.nports, &ts, mask);
    if (n < 0 && errno != EINTR)
        return fprintf(stderr, "wbswitch: ppoll: %s\n", strerror(errno)), -1;
    if (n == 0 && s->o.spin_ns == 0) {
        int64_t late = now_ns() - due_ns;
        s->late.sum_ns += late > 0 ? late : 0;
        s->late.max_ns = late > s->late.max_ns ? late : s->late.max_ns;
        s->late.n++;
    }
    for (int i = 0; i < s->o.nports; i++)
        if (pfd[i].revents & (POLLERR | POLLHUP | POLLNVAL))
            return fprintf(stderr, "wbswitch: port %s is gone; stopping\n", s->ports[i].name), -1;
    return 1;
}

static int sw_loop(struct sw *s, const sigset_t *mask)
{
    struct pollfd pfd[MAX_PORTS];
    for (int i = 0; i < s->o.nports; i++)
        pfd[i] = (struct pollfd){.fd = s->ports[i].fd, .events = POLLIN};
    int64_t next_stats = now_ns() + STATS_PERIOD_NS;
    load_faults(s);
    while (!stop_signal) {
        if (reload_faults) {
            reload_faults = 0;
            load_faults(s);
        }
        int64_t t = now_ns();
        for (int i = 0; i < s->o.nports; i++)
            if (receive_port(s, &s->ports[i], t))
                return -1;
        run_due(s, now_ns());
        if (t >= next_stats) {
            write_stats(s);
            next_stats = t + STATS_PERIOD_NS;
        }
        int64_t due = next_due(s);
        if (wait_for(s, pfd, due < next_stats ? due : next_stats, mask) < 0)
            return -1;
    }
    return 0;
}

/* set_priority: a switch is hardware; ranks sharing this machine's cores must not hold up its
 * wake-ups (measured under load: 885 us instead of 233 us for an 8 B pingpong). The loop
 * sleeps between frames, so it never holds a core. */
static int set_priority(int priority)
{
    struct sched_param sp = {.sched_priority = priority};
    if (priority && sched_setscheduler(0, SCHED_FIFO, &sp))
        return fprintf(stderr, "wbswitch: SCHED_FIFO priority %d: %s\n", priority, strerror(errno)), -1;
    return 0;
}

/* Signals are blocked except inside ppoll, so a SIGTERM cannot slip between check and sleep. */
static int setup_signals(sigset_t *wait_mask)
{
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGUSR1);
    struct sigaction sa = {.sa_handler = on_signal}, sr = {.sa_handler = on_reload};
    if (sigaction(SIGTERM, &sa, NULL) || sigaction(SIGINT, &sa, NULL) || sigaction(SIGHUP, &sa, NULL) ||
        sigaction(SIGUSR1, &sr, NULL) || sigprocmask(SIG_BLOCK, &block, wait_mask))
        return fprintf(stderr, "wbswitch: signals: %s\n", strerror(errno)), -1;
    sigdelset(wait_mask, SIGTERM);
    sigdelset(wait_mask, SIGINT);
    sigdelset(wait_mask, SIGHUP);
    sigdelset(wait_mask, SIGUSR1);
    return 0;
}

int main(int argc, char **argv)
{
    static struct sw s;
    switch (parse_options(&s.o, argc, argv)) {
    case PARSE_HELP:
        usage(stdout);
        return 0;
    case PARSE_BAD:
        fprintf(stderr, "wbswitch: see --help\n");
        return 2;
    case PARSE_OK:
        break;
    }
    sigset_t mask;
    /* Timers fire within a microsecond of when asked, not the default 50 us later. */
    if (setup_signals(&mask) || prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL) ||
        set_priority(s.o.priority) || sw_init(&s)) {
        sw_free(&s);
        return 1;
    }
    fprintf(stderr,
            "wbswitch: forwarding on %d ports, %lld B/s each way, latency %lld us, MTU %u, queues %u up %u down, "
            "priority %d\n",
            s.o.nports, (long long)s.o.rate_Bps, (long long)(s.o.latency_ns / 1000), s.o.mtu, s.o.queue_up,
            s.o.queue_down, s.o.priority);
    int rc = sw_loop(&s, &mask);
    write_stats(&s);
    if (stop_signal)
        fprintf(stderr, "wbswitch: stopped by signal %d\n", (int)stop_signal);
    sw_free(&s);
    return rc ? 1 : 0;
}
