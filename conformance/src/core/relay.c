/* The packet relay (see conform/relay.h). */
#include "conform/relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "vitcp/bytes.h"
#include "vitcp/frame.h"

#define RELAY_ACTIONS_MAX 8
#define RELAY_CONNS_MAX 16
#define RELAY_RECORD_MAX (64u * 1024u * 1024u) /* bytes kept per recording */
#define PACKET_MAX 65536
#define HELD_MAX 8192 /* packets an impairment holds back at once; more go on at once */

/* The /15 of RFC 2544: never routed, so never somebody's real address. */
#define RELAY_NET 0xC6120000u /* 198.18.0.0 */
#define RELAY_NET_SIZE 0x20000u

/* One TCP connection's data high-water marks, to tell a first
 * transmission (counted, subject to actions) from a retransmission. */
struct relay_conn {
    uint16_t tester_port, target_port;
    bool known[2];
    uint32_t high[2]; /* next new sequence number of each side */
};

struct cf_relay {
    int root_ns, tester_ns;
    int tun[2]; /* [CF_RELAY_TESTER]: the device in the tester's namespace */
    int stop_fd;
    pthread_t thread;
    bool thread_on;
    uint32_t tester_ip, target_ip; /* host order */
    char target_text[INET_ADDRSTRLEN], tester_text[INET_ADDRSTRLEN];

    pthread_mutex_t lock; /* guards everything below */
    struct cf_relay_action act[RELAY_ACTIONS_MAX];
    unsigned nact;
    unsigned done[RELAY_ACTIONS_MAX];
    unsigned data_count[2]; /* first transmissions with payload, per side */
    struct relay_conn conn[RELAY_CONNS_MAX];
    unsigned nconn;
    struct cf_relay_packet *pk;
    size_t npk, cap;
    size_t recorded_bytes;
    /* the run's impairment (C61): its profile, this recording's seed and
     * a PRNG per side; packets held back, soonest first */
    struct cf_impair imp;
    uint64_t rec_seed, rng[2];
    struct held_pkt *held;
    size_t nheld;
};

/* A packet an impairment holds back until due (CLOCK_MONOTONIC usec). */
struct held_pkt {
    uint64_t due;
    struct cf_relay_packet pk; /* its data is the held copy; usec set when it goes */
    struct held_pkt *next;
};

/* ------------------------------------------------------------ devices */

static int tun_create(char *name, size_t namelen)
{
    int fd = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct ifreq ifr = {.ifr_flags = IFF_TUN | IFF_NO_PI}; /* no offloads: whole packets, real checksums */
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "vcrelay%%d");
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    snprintf(name, namelen, "%s", ifr.ifr_name);
    int fl = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    return fd;
}

static void put_addr(struct sockaddr *sa, uint32_t ip)
{
    struct sockaddr_in sin = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(ip)};
    memcpy(sa, &sin, sizeof sin);
}

/* A point-to-point link: local address, the peer's, up. In the calling
 * thread's namespace. */
static int link_up(const char *name, uint32_t local, uint32_t peer)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -1;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
    int rc = -1;
    put_addr(&ifr.ifr_addr, local);
    if (ioctl(s, SIOCSIFADDR, &ifr) < 0)
        goto out;
    put_addr(&ifr.ifr_dstaddr, peer);
    if (ioctl(s, SIOCSIFDSTADDR, &ifr) < 0)
        goto out;
    if (ioctl(s, SIOCGIFFLAGS, &ifr) < 0)
        goto out;
    ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
    if (ioctl(s, SIOCSIFFLAGS, &ifr) < 0)
        goto out;
    rc = 0;
out:;
    int e = errno;
    close(s);
    errno = e;
    return rc;
}

/* Is ip already an address of this namespace? */
static bool address_in_use(uint32_t ip)
{
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return false;
    struct sockaddr sa;
    put_addr(&sa, ip);
    bool used = bind(s, &sa, sizeof(struct sockaddr_in)) == 0;
    close(s);
    return used;
}

/* ------------------------------------------------------------ forwarding */

static struct relay_conn *conn_for(struct cf_relay *r, uint16_t tester_port, uint16_t target_port)
{
    for (unsigned i = 0; i < r->nconn; i++)
        if (r->conn[i].tester_port == tester_port && r->conn[i].target_port == target_port)
            return &r->conn[i];
    unsigned i = r->nconn < RELAY_CONNS_MAX ? r->nconn++ : RELAY_CONNS_MAX - 1; /* reuse the last */
    memset(&r->conn[i], 0, sizeof r->conn[i]);
    r->conn[i].tester_port = tester_port;
    r->conn[i].target_port = target_port;
    return &r->conn[i];
}

static bool seq_after(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) > 0;
}

/* The TCP header of a whole, unfragmented IPv4 TCP packet (NULL if it is
 * not one) and its payload's length. */
static const uint8_t *tcp_header(const uint8_t *p, size_t len, size_t *payload_len)
{
    if (len < 20 || (p[0] >> 4) != 4)
        return NULL;
    size_t ihl = (size_t)(p[0] & 0x0F) * 4u;
    size_t total = vw_get_be16(p + 2);
    if (p[9] != IPPROTO_TCP || ihl < 20 || total > len || total < ihl + 20 ||
        (vw_get_be16(p + 6) & 0x3FFF) != 0)
        return NULL;
    const uint8_t *t = p + ihl;
    size_t thl = (size_t)(t[12] >> 4) * 4u;
    if (thl < 20 || ihl + thl > total)
        return NULL;
    *payload_len = total - ihl - thl;
    return t;
}

size_t cf_relay_payload(const struct cf_relay_packet *p, const uint8_t **payload)
{
    size_t n = 0;
    const uint8_t *t = tcp_header(p->data, p->len, &n);
    if (!t)
        return 0;
    if (payload)
        *payload = t + (size_t)(t[12] >> 4) * 4u;
    return n;
}

/* What to do with a packet from side: 0 drop, 1 forward, 2 forward twice.
 * Counts first transmissions with payload and applies the actions. */
static int judge(struct cf_relay *r, enum cf_relay_side side, const uint8_t *p, size_t len, bool *dropped,
                 bool *duplicated)
{
    *dropped = *duplicated = false;
    size_t payload;
    const uint8_t *t = tcp_header(p, len, &payload);
    if (!t)
        return 1; /* not a whole TCP segment: pass it on untouched */
    uint16_t sport = vw_get_be16(t), dport = vw_get_be16(t + 2);
    uint32_t seq = vw_get_be32(t + 4);
    uint8_t flags = t[13];
    struct relay_conn *c = side == CF_RELAY_TESTER ? conn_for(r, sport, dport) : conn_for(r, dport, sport);
    if (flags & 0x02) { /* SYN: the data starts after it */
        c->known[side] = true;
        c->high[side] = seq + 1;
        return 1;
    }
    /* Only connections whose SYN this recording saw are counted: a late
     * segment of an earlier case's connection must not take an action. */
    if (payload == 0 || !c->known[side])
        return 1;
    uint32_t end = seq + (uint32_t)payload;
    if (!seq_after(end, c->high[side]))
        return 1; /* a retransmission: always forwarded */
    c->high[side] = end;
    unsigned n = ++r->data_count[side];
    int verdict = 1;
    for (unsigned i = 0; i < r->nact; i++) {
        const struct cf_relay_action *a = &r->act[i];
        if (a->side != side || n < a->first || n > a->last)
            continue;
        r->done[i]++;
        if (a->verb == CF_RELAY_DROP) {
            *dropped = true;
            verdict = 0;
        } else if (verdict == 1) {
            *duplicated = true;
            verdict = 2;
        }
    }
    return verdict;
}

/* The time in microseconds: CLOCK_REALTIME for a recording's packets,
 * CLOCK_MONOTONIC for what an impairment holds back. */
static uint64_t usec_of(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void record_packet(struct cf_relay *r, const struct cf_relay_packet *pk)
{
    if (r->recorded_bytes + pk->len > RELAY_RECORD_MAX)
        return;
    if (r->npk == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 256;
        struct cf_relay_packet *n = realloc(r->pk, cap * sizeof *n);
        if (!n)
            return;
        r->pk = n;
        r->cap = cap;
    }
    uint8_t *copy = malloc(pk->len);
    if (!copy)
        return;
    memcpy(copy, pk->data, pk->len);
    r->pk[r->npk] = *pk;
    r->pk[r->npk].data = copy;
    r->pk[r->npk].usec = usec_of(CLOCK_REALTIME);
    r->npk++;
    r->recorded_bytes += pk->len;
}

static void record(struct cf_relay *r, enum cf_relay_side from, const uint8_t *p, size_t len, bool dropped,
                   bool duplicated)
{
    struct cf_relay_packet pk = {.from = from, .dropped = dropped, .duplicated = duplicated, .len = len,
                                 .data = (uint8_t *)p};
    record_packet(r, &pk);
}

/* ------------------------------------------------------------ impairment (C61) */

/* Write a packet from one side to the other. */
static void pass_on(struct cf_relay *r, enum cf_relay_side from, const uint8_t *p, size_t len)
{
    if (write(r->tun[from == CF_RELAY_TESTER ? CF_RELAY_TARGET : CF_RELAY_TESTER], p, len) < 0) {
        /* a full device queue loses the packet, as a wire would */
    }
}

/* Write a packet to the side it goes to and record it. */
static void send_now(struct cf_relay *r, const struct cf_relay_packet *pk)
{
    record_packet(r, pk);
    pass_on(r, pk->from, pk->data, pk->len);
}

/* Hold a copy of the packet until due (soonest first); a full queue sends it now. */
static void hold(struct cf_relay *r, const struct cf_relay_packet *pk, uint64_t due)
{
    struct held_pkt *h = r->nheld < HELD_MAX ? malloc(sizeof *h) : NULL;
    uint8_t *copy = h ? malloc(pk->len) : NULL;
    if (!copy) {
        free(h);
        send_now(r, pk);
        return;
    }
    memcpy(copy, pk->data, pk->len);
    h->due = due;
    h->pk = *pk;
    h->pk.data = copy;
    struct held_pkt **at = &r->held;
    while (*at && (*at)->due <= due)
        at = &(*at)->next;
    h->next = *at;
    *at = h;
    r->nheld++;
}

/* Send what is due, recorded; when flush, all at once and unrecorded (an
 * earlier case's). The next due time, or 0 when none is held. */
static uint64_t release_due(struct cf_relay *r, bool flush)
{
    uint64_t now = usec_of(CLOCK_MONOTONIC);
    while (r->held && (flush || r->held->due <= now)) {
        struct held_pkt *h = r->held;
        r->held = h->next;
        r->nheld--;
        if (flush)
            pass_on(r, h->pk.from, h->pk.data, h->pk.len);
        else
            send_now(r, &h->pk);
        free(h->pk.data);
        free(h);
    }
    return r->held ? r->held->due : 0;
}

/* One packet (or piece) after loss: copied, delayed or held back as the
 * profile draws, else sent at once. */
static void impair_emit(struct cf_relay *r, const struct cf_relay_packet *pk)
{
    uint64_t *rng = &r->rng[pk->from];
    unsigned copies = 1u + cf_impair_chance(rng, r->imp.dup_ppm);
    for (unsigned c = 0; c < copies; c++) {
        struct cf_relay_packet one = *pk;
        if (c)
            one.impaired |= CF_IMPAIR_COPY;
        unsigned delay = cf_impair_between(rng, r->imp.delay_min_us, r->imp.delay_max_us);
        if (delay)
            one.impaired |= CF_IMPAIR_DELAYED;
        if (cf_impair_chance(rng, r->imp.reorder_ppm)) {
            delay += r->imp.reorder_hold_us;
            one.impaired |= CF_IMPAIR_REORDERED;
        }
        one.delay_us = delay;
        if (delay)
            hold(r, &one, usec_of(CLOCK_MONOTONIC) + delay);
        else
            send_now(r, &one);
    }
}

/* Piece [off, off + n) of a TCP segment (IPv4 header ihl bytes, TCP
 * header thl) as a segment of its own, with its sequence number, lengths
 * and both checksums right; FIN and PSH only on the last piece. */
static size_t cut_piece(const uint8_t *p, size_t ihl, size_t thl, size_t off, size_t n, bool last, uint16_t k,
                        uint8_t *out)
{
    size_t hl = ihl + thl;
    memcpy(out, p, hl);
    memcpy(out + hl, p + hl + off, n);
    vw_put_be16(out + 2, (uint16_t)(hl + n));
    vw_put_be16(out + 4, (uint16_t)(vw_get_be16(p + 4) + k));
    out[10] = out[11] = 0;
    vw_put_be16(out + 10, vn_inet_fold(vn_inet_sum(0, out, ihl)));
    uint8_t *t = out + ihl;
    vw_put_be32(t + 4, vw_get_be32(p + ihl + 4) + (uint32_t)off);
    if (!last)
        t[13] &= (uint8_t)~0x09u; /* FIN, PSH */
    t[16] = t[17] = 0;
    uint8_t pseudo[12];
    memcpy(pseudo, out + 12, 8);
    pseudo[8] = 0;
    pseudo[9] = IPPROTO_TCP;
    vw_put_be16(pseudo + 10, (uint16_t)(thl + n));
    vw_put_be16(t + 16, vn_inet_fold(vn_inet_sum(vn_inet_sum(0, pseudo, sizeof pseudo), t, thl + n)));
    return hl + n;
}

/* The profile on one packet the case's actions let through (copy: the
 * action's second copy): lost, cut into pieces, then each emitted. SYN,
 * RST and URG segments and what is not TCP pass untouched. */
static void impair(struct cf_relay *r, enum cf_relay_side from, const uint8_t *p, size_t len, bool copy)
{
    struct cf_relay_packet pk = {.from = from, .duplicated = copy, .seed = r->rec_seed, .len = len,
                                 .data = (uint8_t *)p};
    size_t payload;
    const uint8_t *t = tcp_header(p, len, &payload);
    if (!t || (t[13] & 0x26)) { /* SYN, RST, URG: not impaired, */
        uint64_t last = 0; /* but never ahead of what this side sent before (an RST would abort it) */
        for (const struct held_pkt *h = r->held; h; h = h->next)
            if (h->pk.from == from && h->due > last)
                last = h->due;
        if (last)
            hold(r, &pk, last);
        else
            send_now(r, &pk);
        return;
    }
    uint64_t *rng = &r->rng[from];
    if (cf_impair_chance(rng, r->imp.loss_ppm)) {
        pk.impaired = CF_IMPAIR_LOST;
        record_packet(r, &pk);
        return;
    }
    if (!r->imp.reseg_max || payload <= r->imp.reseg_min) {
        impair_emit(r, &pk);
        return;
    }
    size_t ihl = (size_t)(p[0] & 0x0F) * 4u, thl = (size_t)(t[12] >> 4) * 4u;
    enum { MAX_PIECES = 2048 }; /* the last piece takes what is left */
    size_t cuts[MAX_PIECES], npieces = 0;
    for (size_t off = 0; off < payload && npieces < sizeof cuts / sizeof cuts[0];) {
        size_t n = cf_impair_between(rng, r->imp.reseg_min, r->imp.reseg_max);
        if (n > payload - off || npieces + 1 == sizeof cuts / sizeof cuts[0])
            n = payload - off;
        cuts[npieces++] = n;
        off += n;
    }
    uint8_t *piece = malloc(ihl + thl + r->imp.reseg_max + payload);
    if (!piece) {
        impair_emit(r, &pk);
        return;
    }
    for (size_t i = 0, off = 0; i < npieces; off += cuts[i], i++) {
        struct cf_relay_packet one = pk;
        one.data = piece;
        one.len = cut_piece(p, ihl, thl, off, cuts[i], i + 1 == npieces, (uint16_t)i, piece);
        one.impaired = CF_IMPAIR_PIECE;
        one.piece = (uint16_t)(i + 1);
        one.pieces = (uint16_t)npieces;
        impair_emit(r, &one);
    }
    free(piece);
}

void cf_relay_impair(struct cf_relay *r, const struct cf_impair *imp, uint64_t seed)
{
    pthread_mutex_lock(&r->lock);
    if (imp && imp->on)
        r->imp = *imp;
    else
        memset(&r->imp, 0, sizeof r->imp);
    r->rec_seed = r->imp.on ? seed : 0;
    r->rng[CF_RELAY_TESTER] = seed ^ 0x7465737465720000ull; /* "tester" */
    r->rng[CF_RELAY_TARGET] = seed ^ 0x7461726765740000ull; /* "target" */
    pthread_mutex_unlock(&r->lock);
}

static void forward(struct cf_relay *r, enum cf_relay_side from, const uint8_t *p, size_t len)
{
    /* IPv4 only: the link is IPv4, anything else is the kernel's chatter. */
    if (len < 20 || (p[0] >> 4) != 4)
        return;
    bool dropped, duplicated;
    pthread_mutex_lock(&r->lock);
    int copies = judge(r, from, p, len, &dropped, &duplicated);
    if (r->imp.on) {
        if (copies == 0)
            record(r, from, p, len, true, false);
        for (int i = 0; i < copies; i++)
            impair(r, from, p, len, i == 1);
        pthread_mutex_unlock(&r->lock);
        return;
    }
    record(r, from, p, len, dropped, false);
    if (copies == 2)
        record(r, from, p, len, false, duplicated); /* the second copy carries the mark */
    pthread_mutex_unlock(&r->lock);
    for (int i = 0; i < copies; i++)
        pass_on(r, from, p, len);
}

static void *relay_main(void *arg)
{
    struct cf_relay *r = arg;
    uint8_t *buf = malloc(PACKET_MAX);
    if (!buf)
        return NULL;
    for (;;) {
        struct pollfd p[3] = {{r->tun[0], POLLIN, 0}, {r->tun[1], POLLIN, 0}, {r->stop_fd, POLLIN, 0}};
        pthread_mutex_lock(&r->lock);
        uint64_t next = release_due(r, false);
        pthread_mutex_unlock(&r->lock);
        int wait = -1;
        if (next) {
            uint64_t now = usec_of(CLOCK_MONOTONIC);
            wait = next <= now ? 0 : (int)((next - now + 999u) / 1000u);
        }
        if (poll(p, 3, wait) < 0) {
            if (errno == EINTR)
                continue;
            break;
        }
        /* Stop on the request, or if a device broke (its errors would
         * otherwise wake poll forever); cases then time out with a reason. */
        if (p[2].revents || ((p[0].revents | p[1].revents) & (POLLERR | POLLHUP | POLLNVAL)))
            break;
        for (int s = 0; s < 2; s++) {
            if (!(p[s].revents & POLLIN))
                continue;
            for (int k = 0; k < 64; k++) { /* bounded: the other side gets its turn */
                ssize_t n = read(r->tun[s], buf, PACKET_MAX);
                if (n <= 0)
                    break;
                forward(r, (enum cf_relay_side)s, buf, (size_t)n);
            }
        }
    }
    free(buf);
    return NULL;
}

/* ------------------------------------------------------------ set-up */

static int fail(char *why, size_t whylen, const char *fmt, const char *what)
{
    snprintf(why, whylen, fmt, what, strerror(errno));
    return -1;
}

/* Make the tester's namespace and its device; back in the root one. */
static int make_tester_side(struct cf_relay *r, char *why, size_t whylen)
{
    char name[IFNAMSIZ];
    if (unshare(CLONE_NEWNET) < 0)
        return fail(why, whylen, "%s: %s (the packet relay needs root)", "cannot create a network namespace");
    int rc = -1;
    r->tester_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (r->tester_ns < 0)
        fail(why, whylen, "%s: %s", "cannot open the new namespace");
    else if ((r->tun[CF_RELAY_TESTER] = tun_create(name, sizeof name)) < 0)
        fail(why, whylen, "%s: %s", "cannot create a TUN device (/dev/net/tun)");
    else if (link_up(name, r->tester_ip, r->target_ip) < 0)
        fail(why, whylen, "%s: %s", "cannot configure the tester's TUN device");
    else
        rc = 0;
    if (setns(r->root_ns, CLONE_NEWNET) < 0) {
        fail(why, whylen, "%s: %s", "cannot return to the original namespace");
        return -1;
    }
    return rc;
}

struct cf_relay *cf_relay_open(char *why, size_t whylen)
{
    struct cf_relay *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    r->root_ns = r->tester_ns = r->tun[0] = r->tun[1] = r->stop_fd = -1;
    pthread_mutex_init(&r->lock, NULL);
    /* An address pair of our own, from the process id; skip a pair whose
     * target-side address this host already has (another run's relay). */
    uint32_t slot = ((uint32_t)getpid() * 2u) % (RELAY_NET_SIZE - 4u) + 2u;
    for (int tries = 0; tries < 64; tries++, slot = (slot + 2u) % (RELAY_NET_SIZE - 4u) + 2u) {
        r->tester_ip = RELAY_NET + slot;
        r->target_ip = r->tester_ip + 1;
        if (!address_in_use(r->target_ip))
            break;
    }
    struct in_addr a = {htonl(r->target_ip)}, t = {htonl(r->tester_ip)};
    inet_ntop(AF_INET, &a, r->target_text, sizeof r->target_text);
    inet_ntop(AF_INET, &t, r->tester_text, sizeof r->tester_text);
    char name[IFNAMSIZ];
    int e;
    r->root_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    if (r->root_ns < 0) {
        fail(why, whylen, "%s: %s", "cannot open this process's network namespace");
    } else if (make_tester_side(r, why, whylen) == 0) { /* else it said why */
        if ((r->tun[CF_RELAY_TARGET] = tun_create(name, sizeof name)) < 0) {
            fail(why, whylen, "%s: %s", "cannot create a TUN device (/dev/net/tun)");
        } else if (link_up(name, r->target_ip, r->tester_ip) < 0) {
            fail(why, whylen, "%s: %s", "cannot configure the target side's TUN device");
        } else if ((r->stop_fd = eventfd(0, EFD_CLOEXEC)) < 0) {
            fail(why, whylen, "%s: %s", "cannot create an eventfd");
        } else if ((e = pthread_create(&r->thread, NULL, relay_main, r)) != 0) {
            errno = e;
            fail(why, whylen, "%s: %s", "cannot start the relay thread");
        } else {
            r->thread_on = true;
            return r;
        }
    }
    cf_relay_close(r);
    return NULL;
}

void cf_relay_close(struct cf_relay *r)
{
    if (!r)
        return;
    if (r->thread_on) {
        uint64_t one = 1;
        if (write(r->stop_fd, &one, sizeof one) < 0) {
            /* cannot happen for an eventfd below its maximum */
        }
        pthread_join(r->thread, NULL);
    }
    int fds[] = {r->stop_fd, r->tun[0], r->tun[1], r->tester_ns, r->root_ns};
    for (size_t i = 0; i < sizeof fds / sizeof fds[0]; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    cf_relay_packets_free(r->pk, r->npk);
    while (r->held) {
        struct held_pkt *h = r->held;
        r->held = h->next;
        free(h->pk.data);
        free(h);
    }
    pthread_mutex_destroy(&r->lock);
    free(r);
}

const char *cf_relay_target_addr(const struct cf_relay *r)
{
    return r->target_text;
}

const char *cf_relay_tester_addr(const struct cf_relay *r)
{
    return r->tester_text;
}

int cf_relay_socket(struct cf_relay *r, int domain, int type, int protocol)
{
    if (setns(r->tester_ns, CLONE_NEWNET) < 0)
        return -1;
    int fd = socket(domain, type, protocol);
    int e = errno;
    if (setns(r->root_ns, CLONE_NEWNET) < 0) {
        /* Staying in the tester's namespace would misroute everything after. */
        abort();
    }
    errno = e;
    return fd;
}

/* ------------------------------------------------------------ recordings */

int cf_relay_begin(struct cf_relay *r, const struct cf_relay_action *actions, unsigned n)
{
    if (n > RELAY_ACTIONS_MAX)
        return -1;
    pthread_mutex_lock(&r->lock);
    release_due(r, true);
    cf_relay_packets_free(r->pk, r->npk);
    r->pk = NULL;
    r->npk = r->cap = r->recorded_bytes = 0;
    if (n)
        memcpy(r->act, actions, n * sizeof *actions);
    r->nact = n;
    memset(r->done, 0, sizeof r->done);
    memset(r->data_count, 0, sizeof r->data_count);
    r->nconn = 0;
    pthread_mutex_unlock(&r->lock);
    return 0;
}

size_t cf_relay_count(struct cf_relay *r)
{
    pthread_mutex_lock(&r->lock);
    size_t n = r->npk;
    pthread_mutex_unlock(&r->lock);
    return n;
}

struct cf_relay_packet *cf_relay_take(struct cf_relay *r, size_t *count, unsigned *done, unsigned ndone)
{
    pthread_mutex_lock(&r->lock);
    struct cf_relay_packet *p = r->pk;
    *count = r->npk;
    for (unsigned i = 0; i < ndone; i++)
        done[i] = i < r->nact ? r->done[i] : 0;
    r->pk = NULL;
    r->npk = r->cap = r->recorded_bytes = 0;
    r->nact = 0;
    pthread_mutex_unlock(&r->lock);
    return p;
}

void cf_relay_packets_free(struct cf_relay_packet *p, size_t count)
{
    for (size_t i = 0; i < count; i++)
        free(p[i].data);
    free(p);
}

/* ------------------------------------------------------------ actions */

/* The words of enum cf_relay_verb and enum cf_relay_side, in their order. */
static const char *const verb_words[] = {"drop", "duplicate"};
static const char *const side_words[] = {"tester", "target"};

/* Which of the two words w is: 0, 1, or -1. */
static int word_index(const char *const words[2], const char *w)
{
    return strcmp(w, words[0]) == 0 ? 0 : strcmp(w, words[1]) == 0 ? 1 : -1;
}

int cf_relay_action_parse(const char *verb, const char *side, const char *range,
                          struct cf_relay_action *out, char *why, size_t whylen)
{
    memset(out, 0, sizeof *out);
    int v = word_index(verb_words, verb), s = word_index(side_words, side);
    if (v < 0) {
        snprintf(why, whylen, "packet action '%s': drop or duplicate", verb);
        return -1;
    }
    if (s < 0) {
        snprintf(why, whylen, "packet side '%s': tester or target", side);
        return -1;
    }
    out->verb = (enum cf_relay_verb)v;
    out->side = (enum cf_relay_side)s;
    char *end;
    errno = 0;
    unsigned long first = strtoul(range, &end, 10), last = first;
    if (*end == '-') {
        const char *l = end + 1;
        last = strtoul(l, &end, 10);
        if (end == l)
            last = 0;
    }
    if (errno || end == range || *end || first < 1 || last < first || last > 1000000) {
        snprintf(why, whylen, "packet segments '%s': N or N-M, counting data segments from 1", range);
        return -1;
    }
    out->first = (unsigned)first;
    out->last = (unsigned)last;
    return 0;
}

void cf_relay_action_text(const struct cf_relay_action *a, char *out, size_t n)
{
    if (a->first == a->last)
        snprintf(out, n, "%s %s %u", verb_words[a->verb], side_words[a->side], a->first);
    else
        snprintf(out, n, "%s %s %u-%u", verb_words[a->verb], side_words[a->side], a->first, a->last);
}
