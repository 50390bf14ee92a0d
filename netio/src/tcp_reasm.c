/* TCP stream reassembly for the capture reader: connection table, in-order
 * delivery, out-of-order buffering, retransmission comparison, gaps. */
#include "tcp_reasm.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A held out-of-order segment. */
struct vn_held {
    struct vn_held *next;
    uint64_t off;
    uint64_t frame;
    uint64_t ts_usec;
    size_t len;
    uint8_t data[];
};

struct vn_half {
    bool have_base;
    uint32_t base;       /* sequence number of stream offset 0 */
    uint64_t next_off;   /* everything below has been delivered or declared a gap */
    struct vn_held *held;      /* sorted by offset */
    struct vn_held *held_tail; /* last of held: in-order arrivals after a hole append in O(1) */
    size_t held_bytes;         /* data plus per-segment overhead */
    size_t held_count;
    uint8_t *hist;       /* ring: delivered byte at offset o lives at hist[o % hist_cap] */
    size_t hist_cap;     /* grows with the bytes delivered, up to the retx_history limit */
    uint64_t delivered;  /* bytes delivered in order */
    uint64_t hist_from;  /* bytes below this offset cannot be compared */
    bool fin;
    uint64_t fin_off;
    bool fin_told;       /* VN_TCP_DIR_END sent for this direction */
};

struct vn_conn {
    struct vn_conn *bucket_next;
    struct vn_conn *all_next;
    struct vn_endpoint ep[2]; /* ep[dir] sends direction dir */
    unsigned index;
    bool syn_seen;
    bool closed;
    struct vn_half h[2];
};

static bool same_ep(const struct vn_endpoint *a, const struct vn_endpoint *b)
{
    return a->port == b->port && a->ip.family == b->ip.family &&
           memcmp(a->ip.addr, b->ip.addr, 16) == 0;
}

static size_t ep_hash(const struct vn_endpoint *e)
{
    size_t h = 2166136261u;
    for (size_t i = 0; i < 16; i++)
        h = (h ^ e->ip.addr[i]) * 16777619u;
    return (h ^ e->port) * 16777619u;
}

/* Symmetric: both directions land in the same bucket. */
static size_t conn_bucket(const struct vn_reasm *r, const struct vn_endpoint *a,
                          const struct vn_endpoint *b)
{
    return (ep_hash(a) + ep_hash(b)) % r->nbuckets;
}

int vn_reasm_init(struct vn_reasm *r, const struct vn_reader_callbacks *cb,
                  const struct vn_reader_limits *lim, struct vn_reader_stats *stats)
{
    memset(r, 0, sizeof *r);
    r->cb = cb;
    r->stats = stats;
    r->lim.max_connections = lim && lim->max_connections ? lim->max_connections : 65536;
    r->lim.max_ooo_bytes = lim && lim->max_ooo_bytes ? lim->max_ooo_bytes : 4u << 20;
    r->lim.retx_history = lim && lim->retx_history ? lim->retx_history : 64u << 10;
    r->nbuckets = 4096;
    r->buckets = calloc(r->nbuckets, sizeof *r->buckets);
    return r->buckets ? 0 : -1;
}

static void notice(struct vn_reasm *r, uint64_t frame, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void notice(struct vn_reasm *r, uint64_t frame, const char *fmt, ...)
{
    if (r->cb->notice == NULL)
        return;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->cb->notice(r->cb->ctx, frame, msg);
}

static void event(struct vn_reasm *r, struct vn_conn *c, enum vn_dir dir, struct vn_tcp_event *ev)
{
    ev->conn = c->index;
    ev->dir = dir;
    ev->src = &c->ep[dir];
    ev->dst = &c->ep[!dir];
    if (r->cb->tcp)
        r->cb->tcp(r->cb->ctx, ev);
}

/* The history ring holds what was delivered, up to the retx_history limit:
 * it starts small and doubles, so a connection that carries a few bytes
 * costs a few bytes, not the whole limit (65536 such connections would
 * otherwise take 8 GiB). Growing keeps the bytes already held. */
#define VN_HIST_MIN 256u
static void grow_hist(struct vn_reasm *r, struct vn_half *h, size_t len)
{
    size_t limit = r->lim.retx_history;
    uint64_t want = h->delivered + len;
    if (h->hist != NULL && (h->hist_cap >= limit || h->hist_cap >= want))
        return;
    size_t nc = h->hist_cap ? h->hist_cap : VN_HIST_MIN;
    while (nc < want && nc < limit)
        nc *= 2;
    if (nc > limit)
        nc = limit;
    uint8_t *nh = malloc(nc);
    if (nh == NULL)
        return; /* keep the smaller ring (or none: bytes then go unchecked) */
    if (h->hist != NULL) {
        size_t oc = h->hist_cap;
        uint64_t k = h->next_off < oc ? h->next_off : oc;
        for (uint64_t o = h->next_off - k; o < h->next_off; o++)
            nh[o % nc] = h->hist[o % oc];
        free(h->hist);
    }
    h->hist = nh;
    h->hist_cap = nc;
}

static void deliver(struct vn_reasm *r, struct vn_conn *c, enum vn_dir dir, uint64_t frame,
                    uint64_t ts, const uint8_t *data, size_t len)
{
    struct vn_half *h = &c->h[dir];
    struct vn_tcp_event ev = {.kind = VN_TCP_DATA, .frame = frame, .ts_usec = ts,
                              .offset = h->next_off, .data = data, .len = len};
    event(r, c, dir, &ev);
    grow_hist(r, h, len);
    if (h->hist != NULL) {
        size_t cap = h->hist_cap;
        /* Only the last cap bytes matter. */
        size_t skip = len > cap ? len - cap : 0;
        for (size_t i = skip; i < len;) {
            size_t pos = (size_t)((h->next_off + i) % cap);
            size_t n = cap - pos < len - i ? cap - pos : len - i;
            memcpy(h->hist + pos, data + i, n);
            i += n;
        }
    }
    h->delivered += len;
    h->next_off += len;
    r->stats->tcp_bytes += len;
}

/* Bytes [off, off+len) are below next_off: compare them with the first copy. */
static void retransmission(struct vn_reasm *r, struct vn_conn *c, enum vn_dir dir, uint64_t frame,
                           uint64_t ts, uint64_t off, const uint8_t *data, size_t len)
{
    struct vn_half *h = &c->h[dir];
    size_t cap = h->hist_cap;
    uint64_t oldest = h->next_off > cap ? h->next_off - cap : 0;
    if (h->hist_from > oldest)
        oldest = h->hist_from;
    struct vn_tcp_event ev = {.kind = VN_TCP_RETX, .frame = frame, .ts_usec = ts, .offset = off,
                              .data = data, .len = len};
    for (size_t i = 0; i < len; i++) {
        uint64_t o = off + i;
        if (o < oldest || h->hist == NULL) {
            ev.unchecked_bytes++;
            continue;
        }
        if (h->hist[o % cap] != data[i]) {
            if (ev.diff_bytes == 0)
                ev.diff_offset = o;
            ev.diff_bytes++;
        }
    }
    r->stats->retransmissions++;
    if (ev.diff_bytes)
        r->stats->retx_differing++;
    event(r, c, dir, &ev);
}

static void gap(struct vn_reasm *r, struct vn_conn *c, enum vn_dir dir, uint64_t frame, uint64_t ts,
                uint64_t n)
{
    struct vn_half *h = &c->h[dir];
    struct vn_tcp_event ev = {.kind = VN_TCP_GAP, .frame = frame, .ts_usec = ts,
                              .offset = h->next_off, .len = (size_t)n};
    event(r, c, dir, &ev);
    h->next_off += n;
    h->hist_from = h->next_off; /* never compare across a hole */
    r->stats->gaps++;
    r->stats->gap_bytes += n;
}

/* Deliver held segments that now touch next_off. */
static void drain(struct vn_reasm *r, struct vn_conn *c, enum vn_dir dir)
{
    struct vn_half *h = &c->h[dir];
    while (h->held && h->held->off <= h->next_off) {
        struct vn_held *s = h->held;
        h->held = s->next;
        if (h->held == NULL)
            h->held_tail = NULL;
        h->held_bytes -= s->len + sizeof *s;
        h->held_count--;
        uint64_t end = s->off + s->len;
        if (end <= h->next_off) {
            retransmission(r, c, dir, s->frame, s->ts_usec, s->off, s->data, s->len);
        } else {
            size_t overlap = (size_t)(h->next_off - s->off);
            if (overlap)
                retransmission(r, c, dir, s->frame, s->ts_usec, s->off, s->data, overlap);
            deliver(r, c, dir, s->frame, s->ts_usec, s->data + overlap, s->len - overlap);
        }
        free(s);
    }
}

/* Declare everything missing below target a gap, delivering held data on the way. */
static void advance_to(struct vn_reasm *r, struct vn_conn *c, enum vn_dir dir, uint64_t target,
                       uint64_t frame, uint64_t ts)
{
    struct vn_half *h = &c->h[dir];
    drain(r, c, dir);
    while (h->next_off < target) {
        uint64_t stop = h->held && h->held->off < target ? h->held->off : target;
        gap(r, c, dir, frame, ts, stop - h->next_off);
        drain(r, c, dir);
    }
}

/* Segments held per direction: out-of-order arrivals are inserted in a
 * sorted list, so the count bounds the walk (a flood of tiny segments
 * would otherwise make reading quadratic). */
#define VN_MAX_HELD_SEGMENTS 4096u

static void hold(struct vn_reasm *r, struct vn_conn *c, enum vn_dir dir, uint64_t frame,
                 uint64_t ts, uint64_t off, const uint8_t *data, size_t len)
{
    struct vn_half *h = &c->h[dir];
    struct vn_held *s = malloc(sizeof *s + len);
    if (s == NULL) {
        notice(r, frame, "out of memory holding an out-of-order segment; treated as lost");
        return;
    }
    s->off = off;
    s->frame = frame;
    s->ts_usec = ts;
    s->len = len;
    memcpy(s->data, data, len);
    struct vn_held **pp = &h->held;
    if (h->held_tail && h->held_tail->off <= off)
        pp = &h->held_tail->next;
    else
        while (*pp && (*pp)->off <= off)
            pp = &(*pp)->next;
    s->next = *pp;
    *pp = s;
    if (s->next == NULL)
        h->held_tail = s;
    h->held_bytes += len + sizeof *s;
    h->held_count++;
    if (h->held_bytes > r->lim.max_ooo_bytes || h->held_count > VN_MAX_HELD_SEGMENTS) {
        notice(r, frame, "more than %zu bytes or %u segments held out of order; the hole becomes a gap",
               r->lim.max_ooo_bytes, VN_MAX_HELD_SEGMENTS);
        advance_to(r, c, dir, h->held->off, frame, ts);
    }
}

static void data_in(struct vn_reasm *r, struct vn_conn *c, enum vn_dir dir, uint64_t frame,
                    uint64_t ts, int64_t off, const uint8_t *data, size_t len)
{
    struct vn_half *h = &c->h[dir];
    if (off < 0) { /* bytes before the stream start (e.g. data on a SYN we re-based) */
        if ((uint64_t)-off >= len)
            return;
        data += -off;
        len -= (size_t)-off;
        off = 0;
    }
    uint64_t uoff = (uint64_t)off;
    if (uoff < h->next_off) {
        size_t old = uoff + len <= h->next_off ? len : (size_t)(h->next_off - uoff);
        retransmission(r, c, dir, frame, ts, uoff, data, old);
        data += old;
        len -= old;
        uoff += old;
        if (len == 0)
            return;
    }
    if (uoff == h->next_off) {
        deliver(r, c, dir, frame, ts, data, len);
        drain(r, c, dir);
    } else {
        hold(r, c, dir, frame, ts, uoff, data, len);
    }
}

static void free_half(struct vn_half *h)
{
    while (h->held) {
        struct vn_held *n = h->held->next;
        free(h->held);
        h->held = n;
    }
    h->held_tail = NULL;
    h->held_bytes = 0;
    h->held_count = 0;
    free(h->hist);
    h->hist = NULL;
    h->hist_cap = 0;
}

static void close_conn(struct vn_reasm *r, struct vn_conn *c, enum vn_close_reason why,
                       uint64_t frame, uint64_t ts)
{
    if (c->closed)
        return;
    for (int d = 0; d < 2; d++) {
        struct vn_half *h = &c->h[d];
        /* Holes before held data or before the FIN were never captured. */
        uint64_t target = h->next_off;
        for (struct vn_held *s = h->held; s; s = s->next)
            if (s->off + s->len > target)
                target = s->off + s->len;
        if (h->fin && h->fin_off > target)
            target = h->fin_off;
        if (why != VN_CLOSE_RST || h->held)
            advance_to(r, c, (enum vn_dir)d, target, frame, ts);
        free_half(h);
    }
    c->closed = true;
    struct vn_tcp_event ev = {.kind = VN_TCP_CLOSE, .frame = frame, .ts_usec = ts, .reason = why};
    event(r, c, VN_C2S, &ev);
}

/* Stream offset of seq in one direction, taken near next_off (handles wrap). */
static int64_t seq_to_off(const struct vn_half *h, uint32_t seq)
{
    int32_t delta = (int32_t)(seq - (uint32_t)(h->base + (uint32_t)h->next_off));
    return (int64_t)h->next_off + delta;
}

static struct vn_conn *new_conn(struct vn_reasm *r, const struct vn_tcp_seg_in *s, size_t bucket)
{
    if (r->nconns >= r->lim.max_connections) {
        if (!r->limit_noticed)
            notice(r, s->frame, "more than %zu TCP connections; later ones are ignored",
                   r->lim.max_connections);
        r->limit_noticed = true;
        return NULL;
    }
    struct vn_conn *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    c->ep[VN_C2S] = s->src;
    c->ep[VN_S2C] = s->dst;
    c->index = (unsigned)r->nconns++;
    c->bucket_next = r->buckets[bucket];
    r->buckets[bucket] = c;
    c->all_next = r->all;
    r->all = c;
    r->stats->connections++;
    return c;
}

void vn_reasm_segment(struct vn_reasm *r, const struct vn_tcp_seg_in *s)
{
    r->stats->tcp_segments++;
    size_t b = conn_bucket(r, &s->src, &s->dst);
    struct vn_conn *c = NULL;
    enum vn_dir dir = VN_C2S;
    for (struct vn_conn *it = r->buckets[b]; it; it = it->bucket_next) {
        if (same_ep(&it->ep[0], &s->src) && same_ep(&it->ep[1], &s->dst)) {
            c = it;
            dir = VN_C2S;
            break;
        }
        if (same_ep(&it->ep[1], &s->src) && same_ep(&it->ep[0], &s->dst)) {
            c = it;
            dir = VN_S2C;
            break;
        }
    }
    bool syn = s->flags & VN_TCP_SYN, ackf = s->flags & VN_TCP_ACK;
    if (c != NULL) {
        struct vn_half *h = &c->h[dir];
        bool new_isn = syn && !ackf && (!h->have_base || (uint32_t)(s->seq + 1u) != h->base);
        if (c->closed || new_isn) {
            if (!(syn && !ackf)) {
                if (s->len) /* data after the close; final ACKs are normal */
                    r->stats->ignored++;
                return;
            }
            if (!c->closed)
                close_conn(r, c, VN_CLOSE_REUSED, s->frame, s->ts_usec);
            c = NULL; /* a new connection on the same addresses */
        }
    }
    if (c == NULL) {
        c = new_conn(r, s, b);
        if (c == NULL) {
            r->stats->ignored++;
            return;
        }
        dir = VN_C2S;
        if (syn && ackf) { /* SYN-ACK first: its sender is the server */
            c->ep[VN_C2S] = s->dst;
            c->ep[VN_S2C] = s->src;
            dir = VN_S2C;
        }
        c->syn_seen = syn;
        struct vn_tcp_event ev = {.kind = VN_TCP_OPEN, .frame = s->frame, .ts_usec = s->ts_usec,
                                  .syn_seen = syn};
        event(r, c, VN_C2S, &ev);
    }
    struct vn_half *h = &c->h[dir];
    uint32_t data_seq = s->seq;
    if (syn) {
        if (!h->have_base) {
            h->have_base = true;
            h->base = s->seq + 1u;
        }
        data_seq = s->seq + 1u;
    } else if (!h->have_base) {
        h->have_base = true; /* capture started mid-stream */
        h->base = s->seq;
    }
    if (s->flags & VN_TCP_RST) {
        if (s->len)
            data_in(r, c, dir, s->frame, s->ts_usec, seq_to_off(h, data_seq), s->data, s->len);
        close_conn(r, c, VN_CLOSE_RST, s->frame, s->ts_usec);
        return;
    }
    if ((s->flags & VN_TCP_URG) && seq_to_off(h, data_seq) >= 0) {
        struct vn_tcp_event ev = {.kind = VN_TCP_URGENT, .frame = s->frame, .ts_usec = s->ts_usec,
                                  .offset = (uint64_t)seq_to_off(h, data_seq), .urgent = s->urgent};
        event(r, c, dir, &ev);
    }
    /* An ACK past bytes we never saw: the capture lost them. The ACK comes
     * before this segment's own data: it says what its sender had received
     * when it sent them (V29: a reaction is judged from there). */
    struct vn_half *peer = &c->h[!dir];
    if (ackf && peer->have_base) {
        int64_t ao = seq_to_off(peer, s->ack);
        if (peer->fin && ao > (int64_t)peer->fin_off)
            ao = (int64_t)peer->fin_off;
        if (ao > (int64_t)peer->next_off && ao - (int64_t)peer->next_off < (1ll << 30))
            advance_to(r, c, (enum vn_dir)!dir, (uint64_t)ao, s->frame, s->ts_usec);
        if (r->cb->ack && ao >= 0 && ao - (int64_t)peer->next_off < (1ll << 30))
            r->cb->ack(r->cb->ctx, c->index, dir, (uint64_t)ao, s->frame);
    }
    if (s->len)
        data_in(r, c, dir, s->frame, s->ts_usec, seq_to_off(h, data_seq), s->data, s->len);
    if (s->flags & VN_TCP_FIN) {
        int64_t fo = seq_to_off(h, data_seq) + (int64_t)s->len;
        if (!h->fin && fo >= 0) {
            h->fin = true;
            h->fin_off = (uint64_t)fo;
        }
    }
    /* A direction whose bytes up to its FIN are all in has ended: what it
     * left unfinished can never finish (an ACK above may have settled the
     * peer's). */
    for (int d = 0; d < 2; d++) {
        struct vn_half *e = &c->h[d];
        if (e->fin && !e->fin_told && e->next_off >= e->fin_off) {
            e->fin_told = true;
            struct vn_tcp_event ev = {.kind = VN_TCP_DIR_END, .frame = s->frame, .ts_usec = s->ts_usec,
                                      .offset = e->fin_off};
            event(r, c, (enum vn_dir)d, &ev);
        }
    }
    if (c->h[0].fin && c->h[1].fin && c->h[0].next_off >= c->h[0].fin_off &&
        c->h[1].next_off >= c->h[1].fin_off)
        close_conn(r, c, VN_CLOSE_FIN, s->frame, s->ts_usec);
}

void vn_reasm_finish(struct vn_reasm *r, uint64_t last_frame, uint64_t last_ts)
{
    /* Oldest first, so callers see connections close in order. */
    size_t n = 0;
    for (struct vn_conn *c = r->all; c; c = c->all_next)
        n++;
    struct vn_conn **v = malloc((n ? n : 1) * sizeof *v);
    if (v == NULL) {
        for (struct vn_conn *c = r->all; c; c = c->all_next)
            close_conn(r, c, VN_CLOSE_END_OF_CAPTURE, last_frame, last_ts);
        return;
    }
    size_t i = n;
    for (struct vn_conn *c = r->all; c; c = c->all_next)
        v[--i] = c;
    for (i = 0; i < n; i++)
        close_conn(r, v[i], VN_CLOSE_END_OF_CAPTURE, last_frame, last_ts);
    free(v);
}

void vn_reasm_free(struct vn_reasm *r)
{
    struct vn_conn *c = r->all;
    while (c) {
        struct vn_conn *n = c->all_next;
        free_half(&c->h[0]);
        free_half(&c->h[1]);
        free(c);
        c = n;
    }
    free(r->buckets);
    memset(r, 0, sizeof *r);
}
