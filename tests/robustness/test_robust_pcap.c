/*
 * Robustness of the capture reader and TCP reassembly (netio/pcap_reader.h):
 * valid captures from captures/ and a hand-built pcapng, damaged
 * deterministically (seeded PRNG: VITCP_ROBUST_SEED replays a run), go
 * through vn_pcap_read or vn_reader_feed. Every call must return data or a
 * clean error, the events must stay consistent (offsets contiguous per
 * direction, retransmissions below the delivered edge, one OPEN and one
 * CLOSE per connection), memory stays bounded and nothing takes long.
 * ASan/UBSan catch out-of-bounds accesses and leaks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "pcap_mutate.h"
#include "robust_common.h"
#include "vitcp/frame.h"
#include "vitcp/pcap_reader.h"
#include "vitcp/tcp_flow.h"

#define MAX_CONNS 4096

/* What a reader run must look like, checked as events arrive. */
struct checker {
    unsigned conns;               /* connections opened */
    unsigned urgent;              /* URGENT events */
    uint8_t state[MAX_CONNS];     /* 0 unseen, 1 open, 2 closed */
    uint64_t next[MAX_CONNS][2];  /* expected next stream offset */
    unsigned violations;
    char first[256];
    uint64_t data_bytes, gaps, retx, retx_bytes, notices, datagrams;
    uint32_t sum;                 /* touches every delivered byte */
    size_t heap_base, heap_peak;
    /* optional: the reassembled stream of connection 0, C2S */
    uint8_t *stream;
    size_t stream_cap, stream_len;
};

static void violation(struct checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void violation(struct checker *c, const char *fmt, ...)
{
    if (c->violations++ == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->first, sizeof c->first, fmt, ap);
        va_end(ap);
    }
}

static void sample_heap(struct checker *c)
{
    size_t h = rb_heap_bytes();
    if (h > c->heap_peak)
        c->heap_peak = h;
}

static void on_tcp(void *ctx, const struct vn_tcp_event *ev)
{
    struct checker *c = ctx;
    sample_heap(c);
    if (ev->conn >= MAX_CONNS) {
        violation(c, "connection number %u too large", ev->conn);
        return;
    }
    unsigned d = ev->dir == VN_S2C;
    if (ev->src == NULL || ev->dst == NULL)
        violation(c, "event without endpoints");
    switch (ev->kind) {
    case VN_TCP_OPEN:
        if (c->state[ev->conn] != 0)
            violation(c, "conn %u opened twice", ev->conn);
        if (ev->conn != c->conns)
            violation(c, "conn %u opened, expected %u", ev->conn, c->conns);
        c->state[ev->conn] = 1;
        c->conns++;
        return;
    case VN_TCP_CLOSE:
        if (c->state[ev->conn] != 1)
            violation(c, "conn %u closed in state %u", ev->conn, c->state[ev->conn]);
        c->state[ev->conn] = 2;
        return;
    default:
        break;
    }
    if (c->state[ev->conn] != 1)
        violation(c, "event %d on conn %u in state %u", (int)ev->kind, ev->conn, c->state[ev->conn]);
    uint64_t *next = &c->next[ev->conn][d];
    switch (ev->kind) {
    case VN_TCP_DATA:
        if (ev->offset != *next)
            violation(c, "conn %u dir %u data at %llu, expected %llu", ev->conn, d,
                      (unsigned long long)ev->offset, (unsigned long long)*next);
        if (ev->len == 0 || ev->data == NULL)
            violation(c, "empty data event");
        for (size_t i = 0; i < ev->len; i++) /* ASan checks every byte is readable */
            c->sum = c->sum * 31u + ev->data[i];
        if (c->stream && ev->conn == 0 && d == 0 && ev->offset == c->stream_len &&
            c->stream_len + ev->len <= c->stream_cap) {
            memcpy(c->stream + c->stream_len, ev->data, ev->len);
            c->stream_len += ev->len;
        }
        *next = ev->offset + ev->len;
        c->data_bytes += ev->len;
        break;
    case VN_TCP_GAP:
        if (ev->offset != *next || ev->len == 0)
            violation(c, "conn %u dir %u gap at %llu+%zu, expected at %llu", ev->conn, d,
                      (unsigned long long)ev->offset, ev->len, (unsigned long long)*next);
        *next = ev->offset + ev->len;
        c->gaps++;
        break;
    case VN_TCP_RETX:
        if (ev->offset + ev->len > *next || ev->len == 0 || ev->data == NULL)
            violation(c, "conn %u dir %u retransmission %llu+%zu beyond %llu", ev->conn, d,
                      (unsigned long long)ev->offset, ev->len, (unsigned long long)*next);
        if (ev->diff_bytes + ev->unchecked_bytes > ev->len)
            violation(c, "retransmission counts %zu+%zu over %zu bytes", ev->diff_bytes,
                      ev->unchecked_bytes, ev->len);
        for (size_t i = 0; i < ev->len; i++)
            c->sum = c->sum * 31u + ev->data[i];
        c->retx++;
        c->retx_bytes += ev->len;
        break;
    case VN_TCP_URGENT:
        c->urgent++;
        break;
    case VN_TCP_DIR_END:
        if (ev->offset > *next)
            violation(c, "conn %u dir %u FIN at %llu before its bytes up to %llu", ev->conn, d,
                      (unsigned long long)ev->offset, (unsigned long long)*next);
        break;
    default:
        violation(c, "unknown event kind %d", (int)ev->kind);
    }
}

static void on_dgram(void *ctx, const struct vn_datagram *dg)
{
    struct checker *c = ctx;
    sample_heap(c);
    for (size_t i = 0; i < dg->len; i++)
        c->sum = c->sum * 31u + dg->data[i];
    if (dg->src_mac)
        c->sum += dg->src_mac[5] + dg->dst_mac[5];
    c->datagrams++;
}

static void on_notice(void *ctx, uint64_t frame, const char *msg)
{
    struct checker *c = ctx;
    (void)frame;
    if (msg == NULL || msg[0] == '\0')
        violation(c, "empty notice");
    c->notices++;
}

static void checker_start(struct checker *c)
{
    uint8_t *s = c->stream;
    size_t sc = c->stream_cap;
    memset(c, 0, sizeof *c);
    c->stream = s, c->stream_cap = sc;
    c->heap_base = c->heap_peak = rb_heap_bytes();
}

/* Every opened connection was closed (the reader closes all at the end). */
static void checker_end(struct checker *c)
{
    for (unsigned i = 0; i < c->conns && i < MAX_CONNS; i++)
        if (c->state[i] != 2)
            violation(c, "conn %u never closed", i);
}

static const struct vn_reader_limits small_limits = {.max_connections = 1000,
                                                      .max_ooo_bytes = 256u << 10,
                                                      .retx_history = 16u << 10};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One file through vn_pcap_read: 0 or a clean -1 with a message naming
 * the file, consistent events, bounded memory. */
static void read_one(struct checker *c, const char *path, const char *what)
{
    char err[512] = "";
    struct vn_reader_callbacks cb = {on_tcp, on_dgram, on_notice, c, NULL};
    struct vn_reader_stats st;
    memset(&st, 0xAB, sizeof st);
    checker_start(c);
    double t0 = now_s();
    int rc = vn_pcap_read(path, &cb, &small_limits, &st, err, sizeof err);
    double dt = now_s() - t0;
    checker_end(c);
    sample_heap(c);
    if (rc != 0 && rc != -1)
        fail_msg("%s: vn_pcap_read returned %d", what, rc);
    if (rc == -1 && (err[0] == '\0' || strstr(err, path) == NULL))
        fail_msg("%s: error without a message naming the file: '%s'", what, err);
    if (c->violations)
        fail_msg("%s: %u event violations, first: %s", what, c->violations, c->first);
    if (dt > 2.0)
        fail_msg("%s: took %.2f s", what, dt);
    /* libpcap's buffer plus what the limits allow for one connection. */
    if (c->heap_peak - c->heap_base > (24u << 20))
        fail_msg("%s: heap grew by %zu bytes", what, c->heap_peak - c->heap_base);
    if (rc == 0 && st.frames == 0xABABABABABABABABull)
        fail_msg("%s: stats not filled", what);
}

static const char *const bases[] = {"vitcp-full.pcap", "vitcp-full-ipv6.pcap", "vitcp-retx-differs.pcap",
                                    "ift-session.pcap", "warp-session.pcap", "eep-frames-udp.pcap",
                                    "vitcp-rdma-read.pcap", "vitcp-full-coalesced.pcap"};
#define NBASES (sizeof bases / sizeof bases[0])

struct fixture {
    char dir[512];
    char path[640];
    uint8_t *base[NBASES + 1];
    size_t base_len[NBASES + 1];
    uint8_t *mut;
    struct checker c;
};

static int setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    rb_tmpdir(fx->dir, sizeof fx->dir, "pcap");
    snprintf(fx->path, sizeof fx->path, "%s/m.pcap", fx->dir);
    size_t maxlen = 0;
    for (size_t i = 0; i < NBASES; i++) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", CAPTURES_DIR, bases[i]);
        fx->base[i] = rb_read_file(p, &fx->base_len[i]);
        if (fx->base[i] == NULL || fx->base_len[i] < 100) {
            fprintf(stderr, "cannot read %s\n", p);
            return -1;
        }
        if (fx->base_len[i] > maxlen)
            maxlen = fx->base_len[i];
    }
    fx->base[NBASES] = rb_build_pcapng(&fx->base_len[NBASES]);
    fx->mut = malloc(maxlen + RB_MUTATE_SLACK);
    fx->c.stream_cap = 1u << 20;
    fx->c.stream = malloc(fx->c.stream_cap);
    *state = fx;
    return 0;
}

static int teardown(void **state)
{
    struct fixture *fx = *state;
    for (size_t i = 0; i <= NBASES; i++)
        free(fx->base[i]);
    free(fx->mut);
    free(fx->c.stream);
    rb_rmdir(fx->dir);
    free(fx);
    return 0;
}

/* The unmutated bases read cleanly and deliver data: the checks above
 * would notice a reader that silently gave nothing. */
static void test_bases_read_clean(void **state)
{
    struct fixture *fx = *state;
    for (size_t i = 0; i <= NBASES; i++) {
        assert_int_equal(rb_write_file(fx->path, fx->base[i], fx->base_len[i]), 0);
        read_one(&fx->c, fx->path, i < NBASES ? bases[i] : "pcapng");
        assert_true(fx->c.data_bytes + fx->c.datagrams > 0);
        assert_int_equal(fx->c.gaps, 0);
    }
}

/* Truncation at every offset of the first 2 KB of a pcap and the pcapng. */
static void test_truncate_every_offset(void **state)
{
    struct fixture *fx = *state;
    static const size_t which[] = {0, NBASES};
    unsigned errors = 0, clean = 0;
    for (size_t w = 0; w < sizeof which / sizeof which[0]; w++) {
        size_t b = which[w];
        size_t lim = fx->base_len[b] < 2048 ? fx->base_len[b] : 2048;
        for (size_t cut = 0; cut <= lim; cut++) {
            assert_int_equal(rb_write_file(fx->path, fx->base[b], cut), 0);
            char what[128];
            snprintf(what, sizeof what, "%s cut at %zu", b < NBASES ? bases[b] : "pcapng", cut);
            read_one(&fx->c, fx->path, what);
            if (fx->c.data_bytes == 0 && fx->c.datagrams == 0)
                errors++;
            else
                clean++;
        }
    }
    /* Short prefixes cannot be read, long ones deliver their frames. */
    assert_true(errors > 0);
    assert_true(clean > 0);
}

/* Seeded random mutations of every kind over every base. */
static void test_random_mutations(void **state)
{
    struct fixture *fx = *state;
    struct rb_rng r = {rb_seed("pcap mutations", 0x5EED0001u)};
    unsigned per_kind[RB_MUT_COUNT] = {0};
    for (unsigned it = 0; it < 1500; it++) {
        size_t b = (size_t)rb_below(&r, NBASES + 1);
        unsigned kind = it % RB_MUT_COUNT;
        uint64_t iter_seed = rb_next(&r);
        struct rb_rng ir = {iter_seed};
        char desc[200];
        size_t n = rb_pcap_mutate(&ir, kind, fx->base[b], fx->base_len[b], fx->mut,
                                  fx->base_len[b] + RB_MUTATE_SLACK, desc, sizeof desc);
        assert_int_equal(rb_write_file(fx->path, fx->mut, n), 0);
        char what[400];
        snprintf(what, sizeof what, "iteration %u (iteration seed 0x%016llx) %s: %s", it,
                 (unsigned long long)iter_seed, b < NBASES ? bases[b] : "pcapng", desc);
        read_one(&fx->c, fx->path, what);
        per_kind[kind]++;
    }
    for (unsigned k = 0; k < RB_MUT_COUNT; k++)
        assert_true(per_kind[k] > 0);
}

/* Frames fed one by one (vn_reader_feed) with every link type, each frame
 * cut at a random length and header fields damaged. */
static void test_feed_frames_every_linktype(void **state)
{
    struct fixture *fx = *state;
    struct rb_rng r = {rb_seed("feed frames", 0x5EED0002u)};
    static const int lts[] = {1, 0, 12, 101, 108, 113, 276};
    static uint8_t frame[70000];
    for (size_t li = 0; li < sizeof lts / sizeof lts[0]; li++) {
        for (size_t b = 0; b < NBASES; b++) {
            struct vn_reader_callbacks cb = {on_tcp, on_dgram, on_notice, &fx->c, NULL};
            checker_start(&fx->c);
            assert_true(vn_reader_linktype_supported(lts[li]));
            struct vn_reader *rd = vn_reader_new(lts[li], &cb, &small_limits);
            assert_non_null(rd);
            const uint8_t *in = fx->base[b];
            size_t len = fx->base_len[b];
            for (size_t p = 24; p + 16 <= len;) {
                uint32_t cl = (uint32_t)in[p + 8] | (uint32_t)in[p + 9] << 8 | (uint32_t)in[p + 10] << 16;
                if (cl > len - p - 16 || cl > 65535)
                    break;
                memcpy(frame, in + p + 16, cl);
                size_t caplen = cl, wire = cl;
                switch (rb_below(&r, 6)) {
                case 0: caplen = (size_t)rb_below(&r, cl + 1); break;
                case 1: wire = (size_t)rb_below(&r, cl + 1); break;   /* wire shorter than caplen */
                case 2: wire = cl + (size_t)rb_below(&r, 100000); break; /* snaplen cut */
                case 3: {
                    unsigned k = 1 + (unsigned)rb_below(&r, 4);
                    for (unsigned i = 0; i < k && cl; i++)
                        frame[rb_below(&r, cl < 80 ? cl : 80)] = (uint8_t)rb_next(&r);
                    break;
                }
                default: break;
                }
                vn_reader_feed(rd, 1000, frame, caplen, wire);
                p += 16 + cl;
            }
            vn_reader_finish(rd);
            assert_true(vn_reader_stats(rd)->frames > 0);
            vn_reader_free(rd);
            checker_end(&fx->c);
            if (fx->c.violations)
                fail_msg("link type %d, %s: %s", lts[li], bases[b], fx->c.first);
        }
    }
    /* Zero-length and one-byte frames on every link type. */
    for (size_t li = 0; li < sizeof lts / sizeof lts[0]; li++) {
        struct vn_reader_callbacks cb = {on_tcp, on_dgram, on_notice, &fx->c, NULL};
        checker_start(&fx->c);
        struct vn_reader *rd = vn_reader_new(lts[li], &cb, NULL);
        frame[0] = 0x45;
        vn_reader_feed(rd, 0, frame, 0, 0);
        vn_reader_feed(rd, 0, frame, 1, 1500);
        vn_reader_finish(rd);
        assert_int_equal(vn_reader_stats(rd)->frames, 2);
        assert_true(fx->c.notices >= 1);
        vn_reader_free(rd);
    }
}

/* Build frames of one connection by hand. */
struct rig {
    struct checker *c;
    struct vn_reader *rd;
    struct vn_tcp_flow f;
};

static int rig_emit(void *ctx, const uint8_t *frame, size_t len)
{
    struct rig *g = ctx;
    vn_reader_feed(g->rd, 0, frame, len, len);
    return 0;
}

static void rig_start(struct rig *g, struct checker *c, const struct vn_reader_limits *lim,
                      uint32_t isn_c, uint32_t isn_s)
{
    struct vn_reader_callbacks cb = {on_tcp, on_dgram, on_notice, c, NULL};
    checker_start(c);
    g->c = c;
    g->rd = vn_reader_new(1, &cb, lim);
    assert_non_null(g->rd);
    assert_int_equal(vn_tcp_flow_init(&g->f, (struct vn_sink){rig_emit, g}, "10.1.0.1", 40000,
                                      "10.1.0.2", 5995), 0);
    g->f.isn[0] = isn_c;
    g->f.isn[1] = isn_s;
}

/* Sequence numbers crossing 2^32, in order and shuffled: the bytes come out
 * as sent. */
static void test_sequence_wraparound(void **state)
{
    struct fixture *fx = *state;
    struct rb_rng r = {rb_seed("seq wrap", 0x5EED0003u)};
    uint8_t *data = malloc(200000);
    rb_fill(&r, data, 200000);
    for (unsigned round = 0; round < 20; round++) {
        struct rig g;
        uint32_t isn = 0xFFFFFFFFu - (uint32_t)rb_below(&r, 70000);
        rig_start(&g, &fx->c, NULL, isn, (uint32_t)rb_next(&r));
        vn_tcp_handshake(&g.f);
        size_t total = 50000 + (size_t)rb_below(&r, 150000);
        /* segments of random size, every 5th one delayed by one slot */
        size_t off = 0, pend_off = 0, pend_len = 0;
        while (off < total) {
            size_t n = 1 + (size_t)rb_below(&r, 3000);
            if (n > total - off)
                n = total - off;
            if (pend_len == 0 && rb_below(&r, 5) == 0) {
                pend_off = off, pend_len = n;
            } else {
                assert_int_equal(vn_tcp_send_at(&g.f, VN_C2S, off, data + off, n), 0);
                if (pend_len) {
                    assert_int_equal(vn_tcp_send_at(&g.f, VN_C2S, pend_off, data + pend_off, pend_len), 0);
                    pend_len = 0;
                }
            }
            off += n;
        }
        if (pend_len)
            assert_int_equal(vn_tcp_send_at(&g.f, VN_C2S, pend_off, data + pend_off, pend_len), 0);
        vn_tcp_close(&g.f);
        vn_reader_finish(g.rd);
        vn_reader_free(g.rd);
        checker_end(&fx->c);
        if (fx->c.violations)
            fail_msg("round %u isn 0x%08x: %s", round, isn, fx->c.first);
        assert_int_equal(fx->c.gaps, 0);
        assert_int_equal(fx->c.stream_len, total);
        assert_memory_equal(fx->c.stream, data, total);
    }
    free(data);
}

/* Random segments: random offsets (far ahead, far behind, across the
 * wrap), random flags, random ACKs. The reassembler must stay consistent
 * and within its limits. */
static void test_random_segments(void **state)
{
    struct fixture *fx = *state;
    struct rb_rng r = {rb_seed("random segments", 0x5EED0004u)};
    uint8_t *data = malloc(70000);
    rb_fill(&r, data, 70000);
    for (unsigned round = 0; round < 30; round++) {
        struct rig g;
        rig_start(&g, &fx->c, &small_limits, (uint32_t)rb_next(&r), (uint32_t)rb_next(&r));
        if (rb_below(&r, 2))
            vn_tcp_handshake(&g.f);
        for (unsigned i = 0; i < 400; i++) {
            enum vn_dir d = rb_below(&r, 4) ? VN_C2S : VN_S2C;
            size_t n = (size_t)rb_below(&r, 5) == 0 ? (size_t)rb_below(&r, 65000) : (size_t)rb_below(&r, 1500);
            uint64_t off;
            switch (rb_below(&r, 5)) {
            case 0: off = g.f.next_off[d] + rb_below(&r, 1u << 20); break; /* ahead: a hole */
            case 1: off = g.f.next_off[d] > 100000 ? g.f.next_off[d] - rb_below(&r, 100000) : 0; break;
            case 2: off = rb_next(&r) & 0xFFFFFFFFull; break;       /* anywhere in sequence space */
            default: off = g.f.next_off[d]; break;
            }
            uint8_t flags = (uint8_t)(rb_below(&r, 8) ? VN_TCP_ACK : rb_next(&r));
            if (rb_below(&r, 50) == 0)
                g.f.acked_off[d] = rb_next(&r) & 0xFFFFFFFFull; /* a wild ACK */
            vn_tcp_raw(&g.f, d, flags, off, 0, NULL, 0, data, n);
            g.f.next_off[d] = off + n;
        }
        vn_reader_finish(g.rd);
        vn_reader_free(g.rd);
        checker_end(&fx->c);
        if (fx->c.violations)
            fail_msg("round %u: %s", round, fx->c.first);
        if (fx->c.heap_peak - fx->c.heap_base > (24u << 20))
            fail_msg("round %u: heap grew by %zu bytes", round, fx->c.heap_peak - fx->c.heap_base);
    }
    free(data);
}

/* A hole at the start of a stream followed by many small segments: the
 * out-of-order buffer must turn the hole into a gap at its limit, stay
 * fast (no quadratic walk) and bounded in memory. */
static void test_ooo_flood_bounded(void **state)
{
    struct fixture *fx = *state;
    struct rig g;
    rig_start(&g, &fx->c, NULL, 1000, 2000); /* default limits: 4 MiB held */
    vn_tcp_handshake(&g.f);
    uint8_t byte[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    double t0 = now_s();
    const unsigned n = 60000;
    for (unsigned i = 0; i < n; i++) /* stream offsets 1, 9, 17, ...: never contiguous with 0 */
        vn_tcp_raw(&g.f, VN_C2S, VN_TCP_ACK, 1 + (uint64_t)i * 8, 0, NULL, 0, byte, 8);
    vn_reader_finish(g.rd);
    double dt = now_s() - t0;
    vn_reader_free(g.rd);
    checker_end(&fx->c);
    fprintf(stderr, "# ooo flood: %u segments in %.2f s, heap +%zu bytes\n", n, dt,
            fx->c.heap_peak - fx->c.heap_base);
    assert_int_equal(fx->c.violations, 0);
    assert_true(fx->c.gaps >= 1);
    assert_int_equal(fx->c.data_bytes, (uint64_t)n * 8);
    assert_true(dt < 10.0);
    assert_true(fx->c.heap_peak - fx->c.heap_base < (64u << 20));

    /* Disjoint segments in random order: the sorted insert walks a list
     * bounded by the held-segment limit. */
    struct rb_rng r = {rb_seed("ooo shuffle", 0x5EED0005u)};
    const unsigned m = 40000;
    uint32_t *order = malloc(m * sizeof *order);
    for (unsigned i = 0; i < m; i++)
        order[i] = i;
    for (unsigned i = m - 1; i > 0; i--) {
        unsigned j = (unsigned)rb_below(&r, i + 1);
        uint32_t t = order[i];
        order[i] = order[j], order[j] = t;
    }
    rig_start(&g, &fx->c, NULL, 0xFFFF0000u, 2000);
    vn_tcp_handshake(&g.f);
    t0 = now_s();
    for (unsigned i = 0; i < m; i++)
        vn_tcp_raw(&g.f, VN_C2S, VN_TCP_ACK, 1 + (uint64_t)order[i] * 16, 0, NULL, 0, byte, 8);
    vn_reader_finish(g.rd);
    dt = now_s() - t0;
    vn_reader_free(g.rd);
    checker_end(&fx->c);
    free(order);
    fprintf(stderr, "# ooo shuffle: %u segments in %.2f s, heap +%zu bytes\n", m, dt,
            fx->c.heap_peak - fx->c.heap_base);
    assert_int_equal(fx->c.violations, 0);
    /* Once the limit turned holes into gaps, late arrivals below the
     * delivered edge come as retransmissions: every byte is reported once. */
    assert_int_equal(fx->c.data_bytes + fx->c.retx_bytes, (uint64_t)m * 8);
    assert_true(fx->c.data_bytes > 0);
    assert_true(fx->c.gaps > 0);
    assert_true(dt < 10.0);
}

/* Many connections, each with one byte of data: memory must not grow by
 * the retransmission history of every one of them. */
static void test_many_connections_bounded(void **state)
{
    struct fixture *fx = *state;
    struct vn_reader_callbacks cb = {on_tcp, on_dgram, on_notice, &fx->c, NULL};
    checker_start(&fx->c);
    struct vn_reader *rd = vn_reader_new(1, &cb, NULL); /* default limits */
    struct vn_endpoint a, b;
    vn_endpoint_set(&b, "10.2.0.2", 5995);
    static uint8_t frame[VN_FRAME_MAX];
    const unsigned n = 4000;
    for (unsigned i = 0; i < n; i++) {
        char ip[32];
        snprintf(ip, sizeof ip, "10.3.%u.%u", i / 250, 1 + i % 250);
        vn_endpoint_set(&a, ip, (uint16_t)(10000 + i));
        struct vn_tcp_hdr_spec spec = {.src = &a, .dst = &b, .seq = 1, .flags = VN_TCP_ACK};
        size_t fl = vn_build_tcp(frame, sizeof frame, &spec, (const uint8_t *)"x", 1);
        vn_reader_feed(rd, 0, frame, fl, fl);
    }
    sample_heap(&fx->c);
    size_t grown = fx->c.heap_peak - fx->c.heap_base;
    vn_reader_finish(rd);
    vn_reader_free(rd);
    checker_end(&fx->c);
    fprintf(stderr, "# %u connections of 1 byte: heap +%zu bytes (%zu per connection)\n", n, grown,
            grown / n);
    assert_int_equal(fx->c.violations, 0);
    assert_int_equal(fx->c.conns, n);
    assert_int_equal(fx->c.data_bytes, n);
    /* A connection costs its table entry and what it delivered, not 64 KiB. */
    assert_true(grown / n < 8192);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bases_read_clean),
        cmocka_unit_test(test_truncate_every_offset),
        cmocka_unit_test(test_random_mutations),
        cmocka_unit_test(test_feed_frames_every_linktype),
        cmocka_unit_test(test_sequence_wraparound),
        cmocka_unit_test(test_random_segments),
        cmocka_unit_test(test_ooo_flood_bounded),
        cmocka_unit_test(test_many_connections_bounded),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
