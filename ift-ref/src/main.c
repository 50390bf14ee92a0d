/*
 * ift-peer: a reference IFT endpoint over TCP (draft-williams-iwarp-ift-01
 * as spec-decisions I1-I9 and docs/decisions.md I10-I15 read it), built on
 * the wire library's IFT code. See docs/ift-peer.md.
 *
 *   ift-peer [--listen PORT] [--bind ADDR] [common options] [--idle MS] [--once]
 *   ift-peer --connect HOST:PORT [--send N]... [--write N]... [--read N]...
 *            [--count N] [--region ADDR:STAG:LEN] [--timeout MS] [common options]
 *   ift-peer --list-faults | --list-choices | --help
 *   common: [--flags LIST] [--vtag N] [--require LIST] [--choice LIST] [--frag N] [--max-msg N]
 *           [--region-addr ADDR] [--stag N] [--region-size N] [--fault NAME]
 *
 * As a target (role B) it serves every connection independently in one poll
 * loop: answers phase 0 with phase 1, echoes each Send, places RDMA Writes
 * into the region it announces (event=region) and answers RDMA Read
 * Requests with Read Responses. One "event=..." line per event on stdout.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "listen_guard.h"
#include "peer.h"
#include "tool_common.h"

#define MAX_CONNS 64
#define OUTQ_HIGH (4u << 20) /* stop reading a connection whose answers wait beyond this */

volatile sig_atomic_t peer_stop;
static void on_signal(int sig) { (void)sig; peer_stop = 1; }

/* ------------------------------------------------------------ target */

struct target {
    const struct peer_opts *o;
    struct region region;
    int lfd;
    struct listen_guard guard;
    struct conn *conns[MAX_CONNS];
    unsigned next_id;
};

static int listen_on(const char *bind_addr, long port, long *bound)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    if (inet_pton(AF_INET, bind_addr, &a.sin_addr) != 1) {
        errno = EINVAL;
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    int one = 1;
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    socklen_t l = sizeof a;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) || listen(fd, 64) ||
        getsockname(fd, (struct sockaddr *)&a, &l)) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    *bound = ntohs(a.sin_port);
    return fd;
}

static void drop(struct target *t, unsigned slot, const char *reason)
{
    struct conn *c = t->conns[slot];
    peer_event("event=closed conn=%u reason=%s how=%s sends=%lu writes=%lu reads=%lu", c->id, reason,
               c->rst ? "rst" : "fin", c->sends, c->writes, c->reads);
    ic_close(c);
    ic_free(c);
    free(c);
    t->conns[slot] = NULL;
}

static void accept_one(struct target *t)
{
    struct sockaddr_in a;
    socklen_t l = sizeof a;
    int fd = accept4(t->lfd, (struct sockaddr *)&a, &l, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE) {
            ift_guard_out_of_fds(&t->guard, t->lfd, peer_now_ms());
            peer_event("event=refused reason=no-descriptors");
        }
        return;
    }
    unsigned slot = 0;
    while (slot < MAX_CONNS && t->conns[slot])
        slot++;
    struct conn *c = slot < MAX_CONNS ? malloc(sizeof *c) : NULL;
    if (!c) {
        peer_event("event=refused reason=%s", slot < MAX_CONNS ? "no-memory" : "too-many-connections");
        close(fd);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ic_init(c, fd, ++t->next_id, false, t->o, &t->region, NULL, NULL);
    t->conns[slot] = c;
    char ip[INET_ADDRSTRLEN] = "?";
    inet_ntop(AF_INET, &a.sin_addr, ip, sizeof ip);
    peer_event("event=accepted conn=%u peer=%s:%u", c->id, ip, ntohs(a.sin_port));
}

/* One connection's turn after poll; true when it was closed. */
static bool serve(struct target *t, unsigned slot, short revents)
{
    static uint8_t buf[65536];
    struct conn *c = t->conns[slot];
    if ((revents & POLLOUT) && ic_flush(c))
        return drop(t, slot, "send-failed"), true;
    if (revents & POLLERR)
        return drop(t, slot, "reset"), true;
    if ((revents & (POLLIN | POLLHUP)) && !c->eof && c->out.len < OUTQ_HIGH) {
        ssize_t r = recv(c->fd, buf, sizeof buf, 0);
        if (r > 0)
            ic_feed(c, buf, (size_t)r);
        else if (r == 0)
            ic_finish(c);
        else if (errno != EAGAIN && errno != EINTR)
            return drop(t, slot, "reset"), true;
        if (c->out.len && ic_flush(c))
            return drop(t, slot, "send-failed"), true;
    } else if ((revents & POLLHUP) && c->eof) {
        return drop(t, slot, "reset"), true;
    }
    if (c->failed) /* answers queued before the error still go out, then RST (I8) */
        return ic_flush(c), drop(t, slot, "error"), true;
    if (c->eof && !c->out.len)
        return drop(t, slot, "eof"), true;
    if (t->o->idle_ms && peer_now_ms() - c->last_io_ms > (double)t->o->idle_ms)
        return drop(t, slot, "idle"), true;
    return false;
}

static int run_target(const struct peer_opts *o)
{
    struct target *t = calloc(1, sizeof *t);
    if (!t) {
        fprintf(stderr, "ift-peer: no memory\n");
        return 1;
    }
    t->o = o;
    long port = 0;
    t->lfd = listen_on(o->bind, o->port, &port);
    if (t->lfd < 0) {
        fprintf(stderr, "ift-peer: cannot listen on %s:%ld: %s\n", o->bind, o->port, strerror(errno));
        free(t);
        return 1;
    }
    t->region = (struct region){o->region_addr, o->stag, o->region_size, calloc(o->region_size, 1)};
    if (!t->region.mem) {
        fprintf(stderr, "ift-peer: no memory for a %lu-byte region\n", o->region_size);
        close(t->lfd);
        free(t);
        return 1;
    }
    ift_guard_init(&t->guard);
    char fl[96];
    peer_event("event=region addr=0x%llx handle=%u len=%lu", (unsigned long long)o->region_addr, o->stag,
               o->region_size);
    peer_event("event=listening port=%ld fault=%s flags=%s", port, ift_fault_name(o->fault),
               vw_ift_flags_str(o->flags, fl, sizeof fl));
    bool done = false;
    while (!peer_stop && !done) {
        struct pollfd p[MAX_CONNS + 1];
        unsigned slot_of[MAX_CONNS + 1], n = 0;
        bool paused = ift_guard_paused(&t->guard, peer_now_ms());
        p[n++] = (struct pollfd){paused ? -1 : t->lfd, POLLIN, 0};
        for (unsigned s = 0; s < MAX_CONNS; s++) {
            struct conn *c = t->conns[s];
            if (!c)
                continue;
            short ev = (short)((c->out.len ? POLLOUT : 0) | (!c->eof && c->out.len < OUTQ_HIGH ? POLLIN : 0));
            slot_of[n] = s;
            p[n++] = (struct pollfd){c->fd, ev, 0};
        }
        if (poll(p, n, paused ? LISTEN_GUARD_BACKOFF_MS : 100) < 0 && errno != EINTR)
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
    ift_guard_free(&t->guard);
    close(t->lfd);
    free(t->region.mem);
    free(t);
    return 0;
}

/* ------------------------------------------------------------ options */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: ift-peer [--listen PORT] [--bind ADDR] [--idle MS] [--once] [common options]\n"
            "       ift-peer --connect HOST:PORT [--send N]... [--write N]... [--read N]... [--count N]\n"
            "                [--region ADDR:STAG:LEN] [--timeout MS] [common options]\n"
            "       ift-peer --list-faults | --list-choices\n"
            "common options: [--flags LIST] [--vtag N] [--require LIST] [--choice NAME[=VALUE][,...]]...\n"
            "                [--frag N] [--max-msg N] [--region-addr ADDR] [--stag N] [--region-size N]\n"
            "                [--fault NAME]\n"
            "A reference IFT endpoint over TCP (default port %u). As a target (role B, --listen) it answers\n"
            "the adaption indication, echoes every Send, places RDMA Writes into the region it announces and\n"
            "answers RDMA Read Requests; with --connect (role A) it sends the given operations and checks every\n"
            "answer. One event=... line per event on stdout.\n"
            "  --listen PORT        listen port (default %u), 0 for any (the event=listening line says which)\n"
            "  --bind ADDR          IPv4 address to listen on (default 0.0.0.0)\n"
            "  --flags LIST         flags of this end's indication, comma-separated from R,HC,PC,IH,IP,SP,SM,RM,\n"
            "                       or none (default R,HC,PC); markers are never sent (I9)\n"
            "  --vtag N             this end's VTag (default: random at every connection)\n"
            "  --require LIST       abort when the peer's indication does not offer: hc, pc (its CRCs), no-hc,\n"
            "                       no-pc (no CRCs), checked-hc, checked-pc (IH / IP clear)\n"
            "  --choice LIST        choices the draft allows (see --list-choices), applied over --flags/--require\n"
            "  --frag N             payload bytes per DDP segment, 1..%u (default %u)\n"
            "  --max-msg N          largest Send message reassembled (default %lu)\n"
            "  --region-addr ADDR   tagged offset of the region's first byte, hex (default 0x%llx)\n"
            "  --stag N             the region's STag (default 1)\n"
            "  --region-size N      bytes of the region (default %lu)\n"
            "  --fault NAME         break one rule on the wire (name or requirement ID, see --list-faults)\n"
            "  --idle MS            close a connection silent this long, 0 for never (default 30000)\n"
            "  --once               exit after the first connection ends\n"
            "  --send N, --write N, --read N\n"
            "                       a Send / RDMA Write / RDMA Read Request of N bytes (repeatable, in order);\n"
            "                       Writes and Reads address the target's region from its first byte\n"
            "  --count N            run the operation list N times (default 1)\n"
            "  --region A:S:L       the target's region from its event=region line: address and STag in hex,\n"
            "                       length in decimal (default %llx:1:%lu)\n"
            "  --timeout MS         give up after MS without traffic (default 10000)\n"
            "Exit status: 0 success, 1 a failed operation or connection, 2 usage error.\n",
            VW_IFT_DEFAULT_PORT, VW_IFT_DEFAULT_PORT, PEER_FRAG_MAX, PEER_DEFAULT_FRAG, PEER_DEFAULT_MAX_MSG,
            PEER_DEFAULT_REGION_ADDR, PEER_DEFAULT_REGION_SIZE, PEER_DEFAULT_REGION_ADDR, PEER_DEFAULT_REGION_SIZE);
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

static int parse_hex64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    if (!isxdigit((unsigned char)*s))
        return -1;
    unsigned long long v = strtoull(s, &end, 16);
    if (*end || errno)
        return -1;
    *out = v;
    return 0;
}

/* ADDR:STAG:LEN, hex, hex, decimal (vitcp-conform --region's format). */
static int parse_region(const char *s, struct peer_opts *o)
{
    char buf[128], *colon1, *colon2;
    uint64_t stag;
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    if (!(colon1 = strchr(buf, ':')) || !(colon2 = strchr(colon1 + 1, ':')))
        return -1;
    *colon1 = *colon2 = '\0';
    const char *addr = strncmp(buf, "0x", 2) == 0 ? buf + 2 : buf;
    if (parse_hex64(addr, &o->peer_addr) || parse_hex64(colon1 + 1, &stag) || stag > 0xFFFFFFFFu ||
        parse_num(colon2 + 1, 1, 1ul << 30, &o->peer_len))
        return -1;
    o->peer_stag = (uint32_t)stag;
    return 0;
}

static int parse_list(const char *arg, const char *const *names, const uint32_t *bits, size_t n, uint32_t *out)
{
    char buf[256];
    if (strlen(arg) >= sizeof buf)
        return -1;
    strcpy(buf, arg);
    *out = 0;
    if (strcmp(buf, "none") == 0)
        return 0;
    for (char *save, *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < n && strcasecmp(item, names[i]))
            i++;
        if (i == n)
            return -1;
        *out |= bits[i];
    }
    return 0;
}

/* Choices the IFT draft leaves to each end, as vipl-peer's --choice: not
 * faults. They apply on top of --flags and --require. Each row names the
 * draft's lines that allow it (docs/ift-peer.md, "Allowed choices"). */
static const struct choice {
    const char *name, *arg, *what;
    uint32_t set, clear;
    unsigned require, behaviour;
} CHOICES[] = {
    {"no-r", NULL, "R clear: DDP mode wanted (lines 134-138; both ends must agree)", 0, VW_IFT_FLAG_R, 0, 0},
    {"no-hc", NULL, "send no header CRC (lines 140-143)", 0, VW_IFT_FLAG_HC, 0, 0},
    {"no-pc", NULL, "send no payload CRC (lines 145-148)", 0, VW_IFT_FLAG_PC, 0, 0},
    {"ih", NULL, "announce IH: received header CRCs are not checked (lines 150-154, I9)", VW_IFT_FLAG_IH, 0, 0, 0},
    {"ip", NULL, "announce IP: received payload CRCs are not checked (lines 156-160, I9)", VW_IFT_FLAG_IP, 0, 0, 0},
    {"sp", NULL, "announce SP: the peer may place speculatively (lines 162-167)", VW_IFT_FLAG_SP, 0, 0, 0},
    {"sm", NULL, "set SM (willing to send markers; none are ever sent, lines 169-172, I9)", VW_IFT_FLAG_SM, 0, 0, 0},
    {"rm", NULL, "set RM (wishes to receive markers, lines 183-186, I9)", VW_IFT_FLAG_RM, 0, 0, 0},
    {"require-hc", NULL, "abort when the peer sends no header CRC (lines 140-143, SHOULD abort)", 0, 0, REQ_HC, 0},
    {"require-pc", NULL, "abort when the peer sends no payload CRC (lines 145-148)", 0, 0, REQ_PC, 0},
    {"refuse-hc", NULL, "abort when the peer sends header CRCs (lines 140-143)", 0, 0, REQ_NO_HC, 0},
    {"refuse-pc", NULL, "abort when the peer sends payload CRCs (lines 145-148)", 0, 0, REQ_NO_PC, 0},
    {"require-checked-hc", NULL, "close when the peer announces IH (lines 150-154)", 0, 0, REQ_CHECKED_HC, 0},
    {"require-checked-pc", NULL, "close in error when the peer announces IP (lines 156-160)", 0, 0, REQ_CHECKED_PC, 0},
    {"abort-late", NULL, "as B, answer phase 1 before aborting an unacceptable CRC choice (lines 141-148 set no time)",
     0, 0, 0, CH_ABORT_LATE},
    {"greet", NULL, "as B, send a 16-byte Send of its own right after phase 1 (lines 129-132, I7)", 0, 0, 0, CH_GREET},
    {"pipeline", NULL, "as A, a 16-byte Send of its own and the first operation in one TCP write (lines 332-333)", 0, 0,
     0, CH_PIPELINE},
    {"frag", "N", "payload bytes per DDP segment, as --frag (lines 271-272, 360-362)", 0, 0, 0, 0},
    {"trickle", "N", "write at most N bytes per TCP segment (lines 332-333, 360-362: TCP segments as TCP likes)", 0, 0,
     0, 0},
    {"vtag-per-process", NULL, "one random VTag for every connection of the process (lines 189-191)", 0, 0, 0,
     CH_VTAG_PER_PROCESS},
    {"refuse-newer-version", NULL, "close on a Version above 1, even with BC Version 1 (lines 115-116: need not accept)",
     0, 0, 0, CH_REFUSE_NEWER},
    {"newer-version", NULL, "announce Version 2 with BC Version 1: a later version compatible with 1 (lines 109-112)",
     0, 0, 0, CH_NEWER_VERSION},
    {"upgrade", NULL, "as B, a ULP may upgrade the connection first: 16 bytes \"" PEER_ULP_REQUEST "\" before the "
     "indication are answered with \"" PEER_ULP_AGREED "\" (lines 69-72, I32)", 0, 0, 0, CH_UPGRADE},
    {"connect-as-b", NULL, "with --connect, be node B: wait for the peer's phase 0 and answer it (lines 129-132 name "
     "phases, not TCP roles)", 0, 0, 0, CH_CONNECT_AS_B},
    {"close-fin", NULL, "close in error with FIN instead of RST (lines 137-138, 141-143 name no TCP segment)", 0, 0, 0,
     CH_CLOSE_FIN},
};

static void list_choices(void)
{
    for (size_t i = 0; i < sizeof CHOICES / sizeof CHOICES[0]; i++)
        printf("%s%s%s  %s\n", CHOICES[i].name, CHOICES[i].arg ? "=" : "", CHOICES[i].arg ? CHOICES[i].arg : "",
               CHOICES[i].what);
}

/* One --choice argument: NAME[=VALUE][,NAME...] into set/clear/require and o. */
static int parse_choices(const char *arg, uint32_t *set, uint32_t *clear, unsigned *require, struct peer_opts *o)
{
    char list[256];
    if (strlen(arg) >= sizeof list) {
        fprintf(stderr, "ift-peer: --choice list too long\n");
        return -1;
    }
    strcpy(list, arg);
    for (char *save, *item = strtok_r(list, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *val = strchr(item, '=');
        if (val)
            *val++ = '\0';
        const struct choice *ch = NULL;
        for (size_t i = 0; i < sizeof CHOICES / sizeof CHOICES[0]; i++)
            if (!strcmp(CHOICES[i].name, item))
                ch = &CHOICES[i];
        if (!ch) {
            fprintf(stderr, "ift-peer: unknown choice '%s' (see --list-choices)\n", item);
            return -1;
        }
        if (!ch->arg != !val) {
            fprintf(stderr, "ift-peer: choice '%s' %s\n", item, ch->arg ? "needs =VALUE" : "takes no value");
            return -1;
        }
        if (val) { /* frag=N, trickle=N */
            unsigned long v;
            if (parse_num(val, 1, PEER_FRAG_MAX, &v)) {
                fprintf(stderr, "ift-peer: bad value '%s' for choice '%s' (%s=%s)\n", val, item, item, ch->arg);
                return -1;
            }
            if (!strcmp(item, "frag"))
                o->frag = v;
            else
                o->trickle = v;
        }
        *set |= ch->set;
        *clear |= ch->clear;
        *require |= ch->require;
        o->choices |= ch->behaviour;
    }
    return 0;
}

static int bad(const char *what, const char *arg)
{
    fprintf(stderr, "ift-peer: bad %s '%s' (see --help)\n", what, arg);
    return 2;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"listen", required_argument, 0, 'p'}, {"bind", required_argument, 0, 'b'},
        {"connect", required_argument, 0, 'c'}, {"fault", required_argument, 0, 'f'},
        {"list-faults", no_argument, 0, 'l'}, {"flags", required_argument, 0, 'F'},
        {"vtag", required_argument, 0, 'V'}, {"require", required_argument, 0, 'Q'},
        {"frag", required_argument, 0, 'g'}, {"max-msg", required_argument, 0, 'M'},
        {"region-addr", required_argument, 0, 'A'}, {"stag", required_argument, 0, 'S'},
        {"region-size", required_argument, 0, 'R'}, {"idle", required_argument, 0, 'I'},
        {"once", no_argument, 0, '1'}, {"send", required_argument, 0, 's'},
        {"write", required_argument, 0, 'w'}, {"read", required_argument, 0, 'r'},
        {"count", required_argument, 0, 'n'}, {"region", required_argument, 0, 'G'},
        {"timeout", required_argument, 0, 'T'}, {"choice", required_argument, 0, 'K'},
        {"list-choices", no_argument, 0, 'k'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    static const char *const flag_names[] = {"R", "HC", "PC", "IH", "IP", "SP", "SM", "RM"};
    static const uint32_t flag_bits[] = {VW_IFT_FLAG_R,  VW_IFT_FLAG_HC, VW_IFT_FLAG_PC, VW_IFT_FLAG_IH,
                                         VW_IFT_FLAG_IP, VW_IFT_FLAG_SP, VW_IFT_FLAG_SM, VW_IFT_FLAG_RM};
    static const char *const req_names[] = {"hc", "pc", "no-hc", "no-pc", "checked-hc", "checked-pc"};
    static const uint32_t req_bits[] = {REQ_HC, REQ_PC, REQ_NO_HC, REQ_NO_PC, REQ_CHECKED_HC, REQ_CHECKED_PC};
    struct peer_opts o = {.flags = PEER_DEFAULT_FLAGS, .frag = PEER_DEFAULT_FRAG, .max_msg = PEER_DEFAULT_MAX_MSG,
                          .region_addr = PEER_DEFAULT_REGION_ADDR, .stag = 1,
                          .region_size = PEER_DEFAULT_REGION_SIZE, .idle_ms = 30000, .port = VW_IFT_DEFAULT_PORT,
                          .bind = "0.0.0.0", .count = 1, .peer_addr = PEER_DEFAULT_REGION_ADDR, .peer_stag = 1,
                          .peer_len = PEER_DEFAULT_REGION_SIZE, .timeout_ms = 10000};
    unsigned long v;
    uint32_t bits;
    bool listen_given = false;
    uint32_t choice_set = 0, choice_clear = 0;
    unsigned choice_require = 0;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (strcmp(optarg, "0") && tool_parse_port(optarg) < 0)
                return bad("--listen", optarg);
            o.port = strcmp(optarg, "0") ? tool_parse_port(optarg) : 0;
            listen_given = true;
            break;
        case 'b': o.bind = optarg; break;
        case 'c': o.connect = optarg; break;
        case 'f':
            if ((o.fault = ift_fault_by_name(optarg)) == FAULT_NONE) {
                fprintf(stderr, "ift-peer: unknown fault '%s' (see --list-faults)\n", optarg);
                return 2;
            }
            break;
        case 'l':
            ift_fault_list(stdout);
            return tool_stdout_check("ift-peer");
        case 'F':
            if (parse_list(optarg, flag_names, flag_bits, 8, &bits))
                return bad("--flags", optarg);
            o.flags = bits;
            break;
        case 'V':
            if (parse_num(optarg, 0, 0xFFFF, &v))
                return bad("--vtag", optarg);
            o.vtag = (uint16_t)v;
            o.vtag_set = true;
            break;
        case 'Q':
            if (parse_list(optarg, req_names, req_bits, 6, &bits))
                return bad("--require", optarg);
            o.require = bits;
            break;
        case 'g':
            if (parse_num(optarg, 1, PEER_FRAG_MAX, &v))
                return bad("--frag", optarg);
            o.frag = v;
            break;
        case 'M':
            if (parse_num(optarg, 1, 1ul << 30, &v))
                return bad("--max-msg", optarg);
            o.max_msg = v;
            break;
        case 'A':
            if (parse_hex64(strncmp(optarg, "0x", 2) == 0 ? optarg + 2 : optarg, &o.region_addr))
                return bad("--region-addr", optarg);
            break;
        case 'S':
            if (parse_num(optarg, 0, 0xFFFFFFFFul, &v))
                return bad("--stag", optarg);
            o.stag = (uint32_t)v;
            break;
        case 'R':
            if (parse_num(optarg, 1, 1ul << 30, &o.region_size))
                return bad("--region-size", optarg);
            break;
        case 'I':
            if (parse_num(optarg, 0, 3600000, &o.idle_ms))
                return bad("--idle", optarg);
            break;
        case '1': o.once = true; break;
        case 's':
        case 'w':
        case 'r':
            if (o.nops == PEER_OPS_MAX || parse_num(optarg, 0, 1ul << 30, &v))
                return bad(c == 's' ? "--send" : c == 'w' ? "--write" : "--read", optarg);
            o.ops[o.nops++] = (struct peer_op){c == 's' ? OP_SEND : c == 'w' ? OP_WRITE : OP_READ, v};
            break;
        case 'n':
            if (parse_num(optarg, 1, 1000000, &o.count))
                return bad("--count", optarg);
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
            if (parse_choices(optarg, &choice_set, &choice_clear, &choice_require, &o))
                return 2;
            break;
        case 'k': list_choices(); return tool_stdout_check("ift-peer");
        case 'h': usage(stdout); return tool_stdout_check("ift-peer");
        default: /* getopt's own message would name the program by its path */
            fprintf(stderr, "ift-peer: unknown option or missing value: %s\n", argv[optind > 1 ? optind - 1 : 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ift-peer: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    o.flags = (o.flags & ~choice_clear) | choice_set;
    o.require |= choice_require;
    if ((o.choices & CH_VTAG_PER_PROCESS) && !o.vtag_set) { /* one draw, every connection */
        o.vtag = peer_random_vtag();
        o.vtag_set = true;
    }
    if (o.connect && listen_given) {
        fprintf(stderr, "ift-peer: --listen (role B) and --connect (role A) exclude each other\n");
        return 2;
    }
    if (o.connect && (!strrchr(o.connect, ':') || o.connect[0] == ':' || !strrchr(o.connect, ':')[1])) {
        fprintf(stderr, "ift-peer: --connect needs HOST:PORT, not '%s'\n", o.connect);
        return 2;
    }
    if (!o.connect && o.nops) {
        fprintf(stderr, "ift-peer: --send, --write and --read need --connect\n");
        return 2;
    }
    if (o.connect && !o.nops) {
        fprintf(stderr, "ift-peer: --connect needs operations (--send, --write, --read)\n");
        return 2;
    }
    for (size_t i = 0; i < o.nops; i++) {
        if (o.ops[i].kind == OP_SEND && o.ops[i].len > o.max_msg) {
            fprintf(stderr, "ift-peer: a Send of %zu bytes is longer than --max-msg %zu\n", o.ops[i].len, o.max_msg);
            return 2;
        }
        if (o.ops[i].kind != OP_SEND && o.ops[i].len > o.peer_len) {
            fprintf(stderr, "ift-peer: an RDMA %s of %zu bytes does not fit the target's %lu-byte region\n",
                    o.ops[i].kind == OP_WRITE ? "Write" : "Read", o.ops[i].len, o.peer_len);
            return 2;
        }
        if (o.ops[i].kind == OP_READ && o.ops[i].len > o.region_size) {
            fprintf(stderr, "ift-peer: an RDMA Read of %zu bytes does not fit this end's %lu-byte region\n",
                    o.ops[i].len, o.region_size);
            return 2;
        }
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGPIPE, SIG_IGN);
    int rc = o.connect ? peer_client_run(&o) : run_target(&o);
    if (tool_stdout_check("ift-peer") && !rc)
        rc = 1;
    return rc;
}
