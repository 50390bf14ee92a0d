/*
 * warp-peer: a reference WARP endpoint over TCP (the Appendix A sketch of
 * draft-jpink-warp-summary-00 as spec-decisions W1-W12 read it), built on
 * the wire library's WARP code. See docs/warp-peer.md.
 *
 *   warp-peer [--port P] [--bind ADDR] [--fault NAME] [--frag N] [--iscsi]
 *             [--region-size N] [--handle N] [--zero-based] [--max-pdu N]
 *             [--idle MS] [--once]
 *   warp-peer --connect HOST:PORT [--send N]... [--rdma N]... [--count N]
 *             [--frag N] [--mix] [--split N] [--completion N]
 *             [--region ADDR:HANDLE:LEN] [--timeout MS] [--fault NAME]
 *   warp-peer --connect HOST:PORT --iscsi [--read N]... [--write N]...
 *   warp-peer ... --choice NAME[=VALUE][,...]   (both modes: what the draft allows)
 *   warp-peer --list-faults | --list-choices | --help
 *
 * As a target it serves every connection independently in one poll loop,
 * echoes each Send ULP PDU as a Send and each RDMA Write ULP PDU as an RDMA
 * Write of the placed bytes (W6), or with --iscsi acts as an iSCSI target
 * (Appendix B, W8). One "event=..." line per event on stdout.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "conn.h"
#include "peer.h"
#include "tool_common.h"
#include "vitcp/warp.h"

#define MAX_CONNS 64
#define OUTQ_HIGH (4u << 20) /* stop reading a connection whose echoes wait beyond this */

volatile sig_atomic_t peer_stop;
static void on_signal(int sig) { (void)sig; peer_stop = 1; }

/* ------------------------------------------------------------ target */

struct target {
    const struct peer_opts *o;
    struct peer_region region;          /* the announced region, shared by echo connections */
    int lfd;
    struct conn *conns[MAX_CONNS];
    struct iscsi_target iscsi[MAX_CONNS];
    struct peer_region iscsi_region[MAX_CONNS]; /* --iscsi: a task buffer per connection */
    unsigned next_id;
};

static int echo_send(struct conn *c, const uint8_t *data, size_t len, uint32_t ssn, uint16_t flags)
{
    (void)ssn;
    struct tx_pdu p = {.type = VW_WARP_SEND, .data = data, .len = len, .flags = flags & VW_WARP_FLAG_C};
    return tx_pdu(&c->tx, &c->out, &p);
}

/* The bytes read back from the region: the echo shows what was placed
 * (choices: as a Send, readback, or not at all, no-rdma-echo). */
static int echo_rdma(struct conn *c, struct peer_region *r, uint64_t at, uint64_t offset, size_t len, uint16_t flags)
{
    const struct peer_choices *ch = c->owner;
    if (ch && ch->no_rdma_echo)
        return 0;
    struct tx_pdu p = {.type = VW_WARP_RDMA, .rid = r->r.rid, .offset = offset, .data = r->mem + at, .len = len,
                       .flags = flags & VW_WARP_FLAG_C};
    if (ch && ch->readback)
        p.type = VW_WARP_SEND;
    if (ch && ch->mix && !ch->readback) { /* a Send telling of the placement, its chunks between the echo's */
        char text[96];
        int n = snprintf(text, sizeof text, "placed rid=0x%x offset=0x%llx len=%zu", r->r.rid,
                         (unsigned long long)offset, len);
        struct tx_pdu note = {.type = VW_WARP_SEND, .data = (const uint8_t *)text, .len = (size_t)n};
        return tx_mixed(&c->tx, &c->out, &note, &p);
    }
    return tx_pdu(&c->tx, &c->out, &p);
}

/* Choice announce: the region's variables in a Send before anything else
 * (lines 196-201: the ULP exchanges them; the draft has no format). */
static int announce_region(struct conn *c, const struct peer_region *r)
{
    char text[128];
    int n = snprintf(text, sizeof text, "region rid=0x%x base=0x%llx len=%llu", r->r.rid,
                     (unsigned long long)r->r.base, (unsigned long long)r->r.len);
    struct tx_pdu p = {.type = VW_WARP_SEND, .data = (const uint8_t *)text, .len = (size_t)n};
    return tx_pdu(&c->tx, &c->out, &p);
}

static const struct conn_handlers echo_handlers = {echo_send, echo_rdma};

static int listen_on(const char *bind_addr, long port, long *bound)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, bind_addr, &a.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    socklen_t l = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 16) ||
        getsockname(fd, (struct sockaddr *)&a, &l)) {
        close(fd);
        return -1;
    }
    *bound = ntohs(a.sin_port);
    return fd;
}

static void drop(struct target *t, unsigned slot, const char *reason)
{
    struct conn *c = t->conns[slot];
    peer_event("event=closed conn=%u reason=%s completions=%lu", c->id, reason, c->completions);
    close(c->fd);
    peer_conn_free(c);
    free(c);
    t->conns[slot] = NULL;
    free(t->iscsi_region[slot].mem);
    t->iscsi_region[slot].mem = NULL;
}

static void accept_one(struct target *t)
{
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    int fd = accept4(t->lfd, (struct sockaddr *)&a, &l, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    unsigned slot = 0;
    while (slot < MAX_CONNS && t->conns[slot])
        slot++;
    struct conn *c = slot < MAX_CONNS ? malloc(sizeof *c) : NULL;
    const struct peer_opts *o = t->o;
    struct peer_region *regions = &t->region;
    if (c && o->iscsi) { /* zero-based task buffer, RID = --handle (the R2T's Target Transfer Tag) */
        struct peer_region *r = &t->iscsi_region[slot];
        r->r = (struct vw_warp_region){o->handle, 0, o->region_size};
        r->mem = calloc(o->region_size, 1);
        regions = r;
        t->iscsi[slot] = (struct iscsi_target){.statsn = 1, .max_read = o->max_pdu,
                                               .draft_data_in = o->choices.draft_data_in};
        if (!r->mem) {
            free(c);
            c = NULL;
        }
    }
    if (!c) {
        peer_event("event=refused reason=%s", slot < MAX_CONNS ? "no-memory" : "too-many-connections");
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    peer_conn_init(c, fd, ++t->next_id, o->iscsi ? &iscsi_target_handlers : &echo_handlers,
              o->iscsi ? (void *)&t->iscsi[slot] : (void *)&o->choices, regions, 1, o->max_pdu, o->iscsi);
    c->tx.frag = o->frag;
    c->tx.fault = o->fault;
    c->tx.region_len = regions->r.len;
    peer_tx_choices(c, &o->choices, o->iscsi);
    t->conns[slot] = c;
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
    peer_event("event=accepted conn=%u peer=%s:%u", c->id, ip, ntohs(a.sin_port));
    if (o->choices.announce && !o->iscsi && announce_region(c, regions) == 0)
        peer_conn_flush(c, 0);
}

/* One connection's turn after poll: read (unless its echoes back up),
 * write, and close it when it failed, ended or idled. Returns true when it
 * was closed. */
static bool serve(struct target *t, unsigned slot, short revents)
{
    static uint8_t buf[65536];
    struct conn *c = t->conns[slot];
    if ((revents & POLLOUT) && peer_conn_flush(c, 0))
        return drop(t, slot, "send-failed"), true;
    if ((revents & POLLERR) || ((revents & POLLHUP) && c->eof)) /* nothing more can pass: no busy loop */
        return drop(t, slot, "reset"), true;
    if ((revents & (POLLIN | POLLHUP | POLLERR)) && !c->eof && c->out.len < OUTQ_HIGH) {
        ssize_t r = recv(c->fd, buf, sizeof buf, 0);
        if (r > 0)
            peer_conn_feed(c, buf, (size_t)r);
        else if (r == 0 || (errno != EAGAIN && errno != EINTR))
            peer_conn_finish(c);
        if (!c->failed && c->out.len)
            peer_conn_flush(c, 0);
    }
    if (c->failed) { /* echoes of what came before the error still go out, if the socket takes them */
        peer_conn_flush(c, 0);
        return drop(t, slot, "error"), true;
    }
    if (c->eof && !c->out.len) /* the peer is done and has every echo */
        return drop(t, slot, "eof"), true;
    if (c->tx.close_now && !c->out.len) /* fault close-mid-pdu: the cut PDU is out */
        return drop(t, slot, "fault-close-mid-pdu"), true;
    if (peer_now_ms() - c->last_io_ms > (double)t->o->idle_ms)
        return drop(t, slot, "idle"), true;
    return false;
}

static int run_target(const struct peer_opts *o)
{
    struct target *t = calloc(1, sizeof *t);
    if (!t)
        return 1;
    t->o = o;
    long port = 0;
    t->lfd = listen_on(o->bind, o->port, &port);
    if (t->lfd < 0) {
        fprintf(stderr, "warp-peer: cannot listen on %s:%ld: %s\n", o->bind, o->port, strerror(errno));
        free(t);
        return 1;
    }
    if (!o->iscsi) {
        t->region.mem = calloc(o->region_size, 1);
        if (!t->region.mem) {
            fprintf(stderr, "warp-peer: no memory for a %lu-byte region\n", o->region_size);
            close(t->lfd);
            free(t);
            return 1;
        }
        /* W5: non-zero based by default, offsets are the region's addresses (choice base=: any 64-bit base) */
        uint64_t base = o->choices.base_set ? o->choices.base
                        : o->zero_based     ? 0
                                            : (uint64_t)(uintptr_t)t->region.mem;
        if (base > UINT64_MAX - o->region_size) {
            fprintf(stderr, "warp-peer: a region based at 0x%llx cannot hold %lu bytes\n", (unsigned long long)base,
                    o->region_size);
            close(t->lfd);
            free(t->region.mem);
            free(t);
            return 1;
        }
        t->region.r = (struct vw_warp_region){o->handle, base, o->region_size};
        peer_event("event=region addr=0x%llx handle=%u len=%lu based=%s", (unsigned long long)base, o->handle,
                   o->region_size, base == 0 ? "zero" : o->choices.base_set ? "fixed" : "address");
    } else {
        peer_event("event=region addr=0x0 handle=%u len=%lu based=zero per=connection", o->handle, o->region_size);
    }
    peer_event("event=listening port=%ld fault=%s mode=%s", port, warp_fault_name(o->fault),
               o->iscsi ? "iscsi" : "echo");
    bool done = false; /* --once: the first connection ended */
    while (!peer_stop && !done) {
        struct pollfd p[MAX_CONNS + 1];
        unsigned slot_of[MAX_CONNS + 1], n = 0;
        p[n++] = (struct pollfd){t->lfd, POLLIN, 0};
        for (unsigned s = 0; s < MAX_CONNS; s++) {
            struct conn *c = t->conns[s];
            if (!c)
                continue;
            short ev = (short)((c->out.len ? POLLOUT : 0) | (!c->eof && c->out.len < OUTQ_HIGH ? POLLIN : 0));
            slot_of[n] = s;
            p[n++] = (struct pollfd){c->fd, ev, 0};
        }
        if (poll(p, n, 100) < 0 && errno != EINTR)
            break;
        if (p[0].revents & POLLIN)
            accept_one(t);
        bool closed_one = false;
        for (unsigned i = 1; i < n; i++)
            closed_one |= serve(t, slot_of[i], p[i].revents);
        done = o->once && closed_one;
    }
    for (unsigned s = 0; s < MAX_CONNS; s++)
        if (t->conns[s])
            drop(t, s, "shutdown");
    close(t->lfd);
    free(t->region.mem);
    free(t);
    return 0;
}

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: warp-peer [--port P] [--bind ADDR] [--fault NAME] [--frag N] [--iscsi]\n"
            "                 [--region-size N] [--handle N] [--zero-based] [--max-pdu N] [--idle MS] [--once]\n"
            "       warp-peer --connect HOST:PORT [--send N]... [--rdma N]... [--count N] [--frag N]\n"
            "                 [--mix] [--split N] [--completion N] [--region ADDR:HANDLE:LEN]\n"
            "                 [--timeout MS] [--fault NAME]\n"
            "       warp-peer --connect HOST:PORT --iscsi [--read N]... [--write N]... [--frag N] [--fault NAME]\n"
            "       warp-peer ... [--choice NAME[=VALUE][,...]]...   (both modes)\n"
            "       warp-peer --list-faults | --list-choices\n"
            "A reference WARP endpoint over TCP (default port %u). As a target it echoes every Send and\n"
            "RDMA Write ULP PDU (or, with --iscsi, serves READ/WRITE as an iSCSI target); with --connect\n"
            "it sends the given operations and checks every echo. One event=... line per event on stdout.\n"
            "  --port P             listen port, 0 for any (the event=listening line says which)\n"
            "  --bind ADDR          IPv4 address to listen on (default 0.0.0.0)\n"
            "  --fault NAME         break one rule, sending or receiving (name or requirement ID)\n"
            "  --choice LIST        choices the draft allows (see --list-choices; not faults)\n"
            "  --frag N             payload bytes per chunk, 1..%u (default %u)\n"
            "  --region-size N      bytes of the announced RDMA region (default %u)\n"
            "  --handle N           its RID (default 1); --zero-based: offsets start at 0\n"
            "  --max-pdu N          largest Send ULP PDU reassembled / iSCSI READ served (default %u)\n"
            "  --idle MS            close a connection silent this long (default 30000)\n"
            "  --once               exit after the first connection ends\n"
            "  --send N, --rdma N   one Send / RDMA Write of N bytes (repeatable, in order)\n"
            "  --read N, --write N  with --iscsi --connect: one READ(10) / WRITE(10) task of N bytes\n"
            "  --count N            run the operation list N times (default 1)\n"
            "  --mix                interleave the chunks of a Send and the RDMA Write next to it\n"
            "  --split N            write at most N bytes per send() call\n"
            "  --completion N       set C on every Nth operation (default 1, 0 for none)\n"
            "  --region A:H:L       the target's region from its event=region line (hex:hex:decimal)\n"
            "  --timeout MS         give up after MS without traffic (default 10000)\n",
            VW_WARP_DEFAULT_PORT, TX_FRAG_MAX, PEER_DEFAULT_FRAG, PEER_DEFAULT_REGION, PEER_DEFAULT_MAX_PDU);
}

static int parse_num(const char *s, unsigned long min, unsigned long max, unsigned long *out)
{
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*s))
        return -1;
    unsigned long v = strtoul(s, &end, 0);
    if (*end || errno || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* ADDR:HANDLE:LEN, hex, hex, decimal (vitcp-conform --region's format). */
static int parse_region(const char *s, struct peer_opts *o)
{
    char *end;
    if (!isxdigit((unsigned char)*s))
        return -1;
    o->region_addr = strtoull(s, &end, 16);
    if (*end != ':' || !isxdigit((unsigned char)end[1]))
        return -1;
    unsigned long h = strtoul(end + 1, &end, 16);
    if (*end != ':' || h > 0xFFFFFFFFul)
        return -1;
    o->region_handle = (uint32_t)h;
    o->have_region = true;
    return parse_num(end + 1, 1, 1ul << 30, &o->region_len);
}

static int bad(const char *what, const char *arg)
{
    fprintf(stderr, "warp-peer: bad %s '%s' (see --help)\n", what, arg);
    return 2;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"port", required_argument, 0, 'p'}, {"bind", required_argument, 0, 'b'},
        {"connect", required_argument, 0, 'c'}, {"fault", required_argument, 0, 'f'},
        {"list-faults", no_argument, 0, 'l'}, {"frag", required_argument, 0, 'F'},
        {"iscsi", no_argument, 0, 'i'}, {"region-size", required_argument, 0, 'R'},
        {"handle", required_argument, 0, 'H'}, {"zero-based", no_argument, 0, 'z'},
        {"max-pdu", required_argument, 0, 'M'}, {"idle", required_argument, 0, 'I'},
        {"once", no_argument, 0, '1'}, {"send", required_argument, 0, 's'},
        {"rdma", required_argument, 0, 'r'}, {"read", required_argument, 0, 'D'},
        {"write", required_argument, 0, 'W'}, {"count", required_argument, 0, 'n'},
        {"mix", no_argument, 0, 'x'}, {"split", required_argument, 0, 'S'},
        {"completion", required_argument, 0, 'C'}, {"region", required_argument, 0, 'G'},
        {"timeout", required_argument, 0, 'T'}, {"choice", required_argument, 0, 'K'},
        {"list-choices", no_argument, 0, 'k'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    struct peer_opts o = {.port = VW_WARP_DEFAULT_PORT, .bind = "0.0.0.0", .frag = PEER_DEFAULT_FRAG,
                          .region_size = PEER_DEFAULT_REGION, .handle = 1, .max_pdu = PEER_DEFAULT_MAX_PDU,
                          .idle_ms = 30000, .count = 1, .completion_every = 1, .timeout_ms = 10000,
                          .region_handle = 1, .region_len = PEER_DEFAULT_REGION};
    unsigned long v;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (strcmp(optarg, "0") && tool_parse_port(optarg) < 0)
                return bad("--port", optarg);
            o.port = strcmp(optarg, "0") ? tool_parse_port(optarg) : 0;
            break;
        case 'b': o.bind = optarg; break;
        case 'c': o.connect = optarg; break;
        case 'f':
            if ((o.fault = warp_fault_by_name(optarg)) == FAULT_NONE) {
                fprintf(stderr, "warp-peer: unknown fault '%s' (see --list-faults)\n", optarg);
                return 2;
            }
            break;
        case 'l':
            warp_fault_list(stdout);
            return tool_stdout_check("warp-peer");
        case 'F':
            if (parse_num(optarg, 1, TX_FRAG_MAX, &v))
                return bad("--frag", optarg);
            o.frag = v;
            break;
        case 'i': o.iscsi = true; break;
        case 'R':
            if (parse_num(optarg, 1, 1ul << 30, &o.region_size))
                return bad("--region-size", optarg);
            break;
        case 'H':
            if (parse_num(optarg, 0, 0xFFFFFFFFul, &v))
                return bad("--handle", optarg);
            o.handle = (uint32_t)v;
            break;
        case 'z': o.zero_based = true; break;
        case 'M':
            if (parse_num(optarg, 1, (1ul << 24) - 1, &v)) /* an iSCSI DataSegmentLength has 24 bits */
                return bad("--max-pdu", optarg);
            o.max_pdu = v;
            break;
        case 'I':
            if (parse_num(optarg, 1, 3600000, &o.idle_ms))
                return bad("--idle", optarg);
            break;
        case '1': o.once = true; break;
        case 's':
        case 'r':
            if (o.nops == PEER_OPS_MAX || parse_num(optarg, 0, 1ul << 24, &v))
                return bad(c == 's' ? "--send" : "--rdma", optarg);
            o.ops[o.nops++] = (struct peer_op){c == 's' ? VW_WARP_SEND : VW_WARP_RDMA, v};
            break;
        case 'D':
        case 'W':
            if (o.ntasks == PEER_OPS_MAX || parse_num(optarg, 0, (1ul << 24) - 1, &v))
                return bad(c == 'D' ? "--read" : "--write", optarg);
            o.tasks[o.ntasks++] = (struct iscsi_task){c == 'W', (uint32_t)v};
            break;
        case 'n':
            if (parse_num(optarg, 1, 1000000, &o.count))
                return bad("--count", optarg);
            break;
        case 'x': o.mix = true; break;
        case 'S':
            if (parse_num(optarg, 1, 1ul << 20, &v))
                return bad("--split", optarg);
            o.split = v;
            break;
        case 'C':
            if (parse_num(optarg, 0, 1000000, &o.completion_every))
                return bad("--completion", optarg);
            break;
        case 'G':
            if (parse_region(optarg, &o))
                return bad("--region", optarg);
            break;
        case 'T':
            if (parse_num(optarg, 1, 3600000, &o.timeout_ms))
                return bad("--timeout", optarg);
            break;
        case 'K':
            if (peer_choices_parse(optarg, &o.choices, &o.frag, &o.handle))
                return 2;
            break;
        case 'k':
            peer_choices_list(stdout);
            return tool_stdout_check("warp-peer");
        case 'h': usage(stdout); return tool_stdout_check("warp-peer");
        default: /* getopt's own message would name the program by its path */
            fprintf(stderr, "warp-peer: unknown option or missing value: %s\n", argv[optind > 1 ? optind - 1 : 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "warp-peer: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (!o.connect && (o.nops || o.ntasks || o.have_region)) {
        fprintf(stderr, "warp-peer: --send, --rdma, --read, --write and --region need --connect\n");
        return 2;
    }
    if (o.connect && (o.iscsi ? o.nops != 0 || o.ntasks == 0 : o.ntasks != 0 || o.nops == 0)) {
        fprintf(stderr, "warp-peer: --connect needs --send/--rdma operations (or --iscsi with --read/--write)\n");
        return 2;
    }
    for (size_t i = 0; o.connect && i < o.nops; i++)
        if (o.ops[i].type == VW_WARP_RDMA && o.ops[i].len > o.region_len) {
            fprintf(stderr, "warp-peer: an RDMA Write of %zu bytes does not fit the %lu-byte region\n", o.ops[i].len,
                    o.region_len);
            return 2;
        }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    int rc = o.connect ? peer_client_run(&o) : run_target(&o);
    if (tool_stdout_check("warp-peer") && !rc)
        rc = 1;
    return rc;
}
