/*
 * Byte-level fuzz of every public decoder of the wire library (seeded:
 * VITCP_ROBUST_SEED replays a run). Each input lives in a heap block of
 * exactly its length, so ASan reports any read past it. Besides "no
 * sanitizer report", the test asserts that
 *   - every pointer a decoder returns (payload, options, data, trailer...)
 *     lies inside the input, with its length;
 *   - option/record walkers never move their position past the area and
 *     always make progress;
 *   - a stream framer reports segments only inside the bytes fed so far,
 *     in order, and reports the same segments and the same error whether
 *     the stream arrives whole, byte by byte or in random chunks.
 * Inputs are valid PDUs built by the wire library's encoders, then
 * damaged (flips, truncation, extension, length fields, pure junk).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "robust_common.h"
#include "vitcp/ift.h"
#include "vitcp/ift_stream.h"
#include "vitcp/pktway.h"
#include "vitcp/vitcp.h"
#include "vitcp/vitcp_stream.h"
#include "vitcp/warp.h"
#include "vitcp/warp_stream.h"

#define BUF_MAX (VW_IFT_FRAME_MAX + 1024)

static uint8_t scratch[BUF_MAX];
static volatile uint32_t sink; /* keeps byte touches alive */

/* p[0..n) inside buf[0..len)? (NULL with n 0 is fine.) */
static bool inside(const void *p, size_t n, const uint8_t *buf, size_t len)
{
    if (p == NULL)
        return n == 0;
    const uint8_t *q = p;
    return q >= buf && (size_t)(q - buf) <= len && n <= len - (size_t)(q - buf);
}

#define CHECK_INSIDE(p, n, buf, len, what)                                                         \
    do {                                                                                           \
        if (!inside((p), (n), (buf), (len)))                                                       \
            fail_msg("%s: %s (%zu bytes) outside the %zu-byte input, iteration seed 0x%016llx",    \
                     __func__, what, (size_t)(n), (size_t)(len), (unsigned long long)g_iter_seed); \
    } while (0)

static uint64_t g_iter_seed;
static uint64_t g_pdus, g_errors; /* framer callbacks seen, with a fatal rule */

/* A copy in a heap block of exactly len bytes. */
static uint8_t *exact(const uint8_t *src, size_t len)
{
    uint8_t *p = malloc(len ? len : 1);
    if (len)
        memcpy(p, src, len);
    return p;
}

/* Damage buf[0..len) in place (cap bytes available); returns the new length. */
static size_t damage(struct rb_rng *r, uint8_t *buf, size_t len, size_t cap, size_t len_field)
{
    switch (rb_below(r, 8)) {
    case 0: /* intact */
        return len;
    case 1: { /* flips */
        unsigned k = 1 + (unsigned)rb_below(r, 4);
        for (unsigned i = 0; i < k && len; i++)
            buf[rb_below(r, len)] ^= (uint8_t)(1u << rb_below(r, 8));
        return len;
    }
    case 2: /* truncate */
        return len ? (size_t)rb_below(r, len) : 0;
    case 3: { /* extend with junk */
        size_t add = (size_t)rb_below(r, 64);
        if (len + add > cap)
            add = cap - len;
        rb_fill(r, buf + len, add);
        return len + add;
    }
    case 4: { /* a length field set to something extreme */
        static const uint16_t v[] = {0, 1, 3, 4, 7, 8, 11, 12, 15, 16, 23, 24, 27, 28, 63, 64, 139, 140, 163, 164, 0x7FFF, 0xFFFF};
        uint16_t val = rb_below(r, 3) ? v[rb_below(r, sizeof v / sizeof v[0])] : (uint16_t)rb_next(r);
        if (len_field + 2 <= len)
            buf[len_field] = (uint8_t)(val >> 8), buf[len_field + 1] = (uint8_t)val;
        return len;
    }
    case 5: { /* random bytes in the first 32 */
        for (unsigned i = 0; i < 3 && len; i++)
            buf[rb_below(r, len < 32 ? len : 32)] = (uint8_t)rb_next(r);
        return len;
    }
    case 6: { /* pure junk */
        size_t n = (size_t)rb_below(r, 300);
        rb_fill(r, buf, n);
        return n;
    }
    default: { /* flips and truncation */
        if (len)
            buf[rb_below(r, len)] ^= 0xFF;
        return len ? len - (size_t)rb_below(r, len < 8 ? len : 8) : 0;
    }
    }
}

/* ------------------------------------------------------------ VI/TCP */

static size_t gen_vitcp(struct rb_rng *r, uint8_t *buf, size_t cap, bool crc)
{
    unsigned type = (unsigned)rb_below(r, VW_VITCP_TYPE_COUNT);
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, type, crc);
    static uint8_t payload[2000], opts[64];
    size_t pl = vw_vitcp_type_has_payload(type) ? (size_t)rb_below(r, 1 + (rb_below(r, 10) ? 200 : 1999)) : 0;
    rb_fill(r, payload, pl);
    e.payload = payload;
    e.payload_len = pl;
    e.hdr.msg_num = (uint32_t)rb_next(r);
    e.hdr.imm_data = (uint32_t)rb_next(r);
    if (rb_below(r, 3) == 0)
        e.hdr.flags = (uint8_t)(rb_next(r) & 0xE0);
    if (e.with_rdma) {
        e.rdma.addr = rb_next(r);
        e.rdma.length = (uint32_t)rb_next(r);
        e.rdma.handle = (uint32_t)rb_next(r);
    }
    if (e.with_ce) {
        e.ce.attrs = (uint16_t)rb_next(r);
        e.ce.mtu = (uint32_t)rb_next(r);
        e.ce.calling_disc_len = (uint16_t)rb_below(r, 70);
        e.ce.called_disc_len = (uint16_t)rb_below(r, 70);
        e.ce.rdma_read_window = (uint16_t)rb_next(r);
        if (rb_below(r, 2)) {
            e.ce.options_len = vw_vitcp_opts_build(opts, sizeof opts, crc, rb_below(r, 2), rb_below(r, 2));
        } else {
            e.ce.options_len = (size_t)rb_below(r, 40);
            rb_fill(r, opts, e.ce.options_len);
        }
        e.ce.options = opts;
    }
    if (rb_below(r, 4) == 0)
        e.trailer = (enum vw_vitcp_trailer)rb_below(r, 6);
    size_t n = vw_vitcp_encode(&e, buf, cap);
    return n;
}

static void check_vitcp_seg(const uint8_t *b, size_t n, enum vw_req rc, const struct vw_vitcp_seg *s)
{
    if (rc != VW_REQ_NONE)
        return;
    CHECK_INSIDE(s->payload, s->payload_len, b, n, "payload");
    if (s->payload)
        CHECK_INSIDE(b + s->payload_offset, s->payload_len, b, n, "payload offset");
    if (s->has_ce && s->ce.options) {
        CHECK_INSIDE(s->ce.options, s->ce.options_len, b, n, "CE options");
        size_t pos = 0;
        uint16_t t, l;
        const uint8_t *d;
        int k, steps = 0;
        while ((k = vw_vitcp_opt_next(s->ce.options, s->ce.options_len, &pos, &t, &l, &d)) == 1) {
            if (pos > s->ce.options_len)
                fail_msg("opt_next moved past the options area");
            if (++steps > 1000)
                fail_msg("opt_next does not progress");
            if (d)
                CHECK_INSIDE(d, l >= 4 ? l - 4u : 0u, b, n, "option data");
        }
    }
    for (size_t i = 0; i < s->payload_len; i++)
        sink += s->payload[i];
}

static void test_vitcp_decode(void **state)
{
    (void)state;
    struct rb_rng r = {rb_seed("vitcp decode", 0x5EED0201u)};
    unsigned ok = 0, fatal = 0;
    for (unsigned it = 0; it < 30000; it++) {
        g_iter_seed = rb_next(&r);
        struct rb_rng ir = {g_iter_seed};
        size_t n = gen_vitcp(&ir, scratch, BUF_MAX - 512, rb_below(&ir, 2));
        n = damage(&ir, scratch, n, BUF_MAX, 2);
        uint8_t *b = exact(scratch, n);
        struct vw_vitcp_seg seg;
        struct vw_findings f;
        vw_findings_clear(&f);
        enum vw_vitcp_crc_mode mode = (enum vw_vitcp_crc_mode)rb_below(&ir, 3);
        enum vw_req rc = vw_vitcp_decode(b, n, mode, &seg, &f);
        if (f.count > VW_FINDINGS_MAX)
            fail_msg("findings count %u", f.count);
        check_vitcp_seg(b, n, rc, &seg);
        if (rc == VW_REQ_NONE) {
            ok++;
            vw_findings_clear(&f);
            vw_vitcp_check_segment(&seg, &f);
        } else {
            fatal++;
        }
        sink += vw_vitcp_plausible_header(b, n);
        sink += vw_vitcp_peek_seg_len(b, n);
        /* the options walker on raw junk */
        size_t pos = 0;
        uint16_t t, l;
        const uint8_t *d;
        int steps = 0;
        while (vw_vitcp_opt_next(b, n, &pos, &t, &l, &d) == 1) {
            if (pos > n || ++steps > 100000)
                fail_msg("opt_next on junk: pos %zu of %zu after %d steps", pos, n, steps);
            CHECK_INSIDE(d, l >= 4 ? l - 4u : 0u, b, n, "option data on junk");
        }
        free(b);
    }
    fprintf(stderr, "# vitcp decode: %u parsed, %u refused\n", ok, fatal);
    assert_true(ok > 1000 && fatal > 1000);
}

/* One framer callback as recorded. */
struct rec {
    uint64_t off;
    size_t len;
    int err;
    uint32_t sum;
};

struct recorder {
    struct rec v[4096];
    size_t n;
    uint64_t fed;          /* bytes fed so far (to the framer this recorder watches) */
    uint64_t fed2[2];      /* sessions: per direction */
    int dir;
    bool session;
    uint64_t last_end[2];
};

static void record(struct recorder *rc, int dir, const uint8_t *raw, size_t len, uint64_t off, int err)
{
    uint64_t fed = rc->session ? rc->fed2[dir] : rc->fed;
    if (off + len > fed)
        fail_msg("framer reported bytes %llu..%llu beyond the %llu fed, iteration seed 0x%016llx",
                 (unsigned long long)off, (unsigned long long)(off + len), (unsigned long long)fed,
                 (unsigned long long)g_iter_seed);
    if (off < rc->last_end[dir])
        fail_msg("framer went back: PDU at %llu after one ending at %llu", (unsigned long long)off,
                 (unsigned long long)rc->last_end[dir]);
    rc->last_end[dir] = off + len;
    uint32_t s = 0;
    for (size_t i = 0; i < len; i++)
        s = s * 31u + raw[i];
    g_pdus++;
    g_errors += err != 0;
    if (rc->n < sizeof rc->v / sizeof rc->v[0])
        rc->v[rc->n++] = (struct rec){off, len, err, s};
}

static void same_records(const struct recorder *a, const struct recorder *b, const char *what)
{
    if (a->n != b->n)
        fail_msg("%s: %zu PDUs whole, %zu when chunked, iteration seed 0x%016llx", what, a->n, b->n,
                 (unsigned long long)g_iter_seed);
    for (size_t i = 0; i < a->n; i++)
        if (memcmp(&a->v[i], &b->v[i], sizeof a->v[i]) != 0)
            fail_msg("%s: PDU %zu differs (off %llu/%llu len %zu/%zu err %d/%d), iteration seed 0x%016llx",
                     what, i, (unsigned long long)a->v[i].off, (unsigned long long)b->v[i].off,
                     a->v[i].len, b->v[i].len, a->v[i].err, b->v[i].err,
                     (unsigned long long)g_iter_seed);
}

static void vitcp_cb(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_vitcp_seg *seg,
                     enum vw_req err, const struct vw_findings *f)
{
    struct recorder *rc = ctx;
    check_vitcp_seg(raw, len, err, seg);
    if (f->count > VW_FINDINGS_MAX)
        fail_msg("findings count");
    record(rc, rc->dir, raw, len, off, (int)err);
}

/* Feed data[0..n) to a feed function in chunks: mode 0 whole, 1 byte by
 * byte, 2 random. Each chunk is its own exact heap block. */
typedef int (*feed_fn)(void *framer, const uint8_t *d, size_t n, struct recorder *rc);

static int feed_chunks(feed_fn fn, void *framer, const uint8_t *data, size_t n, int mode,
                       struct rb_rng *r, struct recorder *rc)
{
    int last = 0;
    size_t i = 0;
    do {
        size_t k = mode == 0 ? n - i : mode == 1 ? (n - i ? 1 : 0) : (size_t)rb_below(r, 300);
        if (k > n - i)
            k = n - i;
        uint8_t *c = exact(data + i, k);
        rc->fed += k;
        last = fn(framer, c, k, rc);
        free(c);
        i += k;
    } while (i < n);
    return last;
}

static int vitcp_feed(void *fr, const uint8_t *d, size_t n, struct recorder *rc)
{
    return (int)vw_vitcp_framer_feed(fr, d, n, vitcp_cb, rc);
}

static size_t gen_stream(struct rb_rng *r, uint8_t *buf, size_t cap,
                         size_t (*gen)(struct rb_rng *, uint8_t *, size_t, bool), size_t len_field, bool crc)
{
    size_t n = 0;
    unsigned k = 1 + (unsigned)rb_below(r, 12);
    for (unsigned i = 0; i < k && n + 70000 < cap; i++) {
        size_t m = gen(r, buf + n, cap - n - 1024, crc);
        if (rb_below(r, 6) == 0)
            m = damage(r, buf + n, m, cap - n, len_field);
        n += m;
    }
    return n;
}

static void test_vitcp_streams(void **state)
{
    (void)state;
    g_pdus = g_errors = 0;
    struct rb_rng r = {rb_seed("vitcp streams", 0x5EED0202u)};
    static uint8_t stream[400000];
    static struct recorder a, b;
    for (unsigned it = 0; it < 400; it++) {
        g_iter_seed = rb_next(&r);
        struct rb_rng ir = {g_iter_seed};
        bool crc = rb_below(&ir, 2);
        size_t n = gen_stream(&ir, stream, sizeof stream, gen_vitcp, 2, crc);
        enum vw_vitcp_crc_mode mode = (enum vw_vitcp_crc_mode)rb_below(&ir, 3);
        memset(&a, 0, sizeof a);
        struct vw_vitcp_framer fa, fb;
        assert_int_equal(vw_vitcp_framer_init(&fa, mode), 0);
        int ea = feed_chunks(vitcp_feed, &fa, stream, n, 0, &ir, &a);
        for (int m = 1; m <= 2; m++) {
            memset(&b, 0, sizeof b);
            assert_int_equal(vw_vitcp_framer_init(&fb, mode), 0);
            int eb = feed_chunks(vitcp_feed, &fb, stream, n, m, &ir, &b);
            same_records(&a, &b, m == 1 ? "vitcp byte by byte" : "vitcp random chunks");
            if (ea != eb)
                fail_msg("vitcp framer error %d whole, %d chunked, iteration seed 0x%016llx", ea, eb,
                         (unsigned long long)g_iter_seed);
            vw_vitcp_framer_free(&fb);
        }
        /* after an error, resync past it and keep going */
        if (ea != 0) {
            vw_vitcp_framer_resync(&fa, a.fed);
            uint8_t *c = exact(stream, n < 500 ? n : 500);
            a.fed += n < 500 ? n : 500;
            a.last_end[0] = a.fed - (n < 500 ? n : 500);
            vw_vitcp_framer_feed(&fa, c, n < 500 ? n : 500, vitcp_cb, &a);
            free(c);
        }
        vw_vitcp_framer_free(&fa);
    }
    fprintf(stderr, "# %llu PDUs framed, %llu with a fatal rule\n", (unsigned long long)g_pdus,
            (unsigned long long)g_errors);
    assert_true(g_pdus > 1000 && g_errors > 10);
}

static void vitcp_sess_cb(void *ctx, const uint8_t *raw, size_t len, uint64_t off,
                          const struct vw_vitcp_seg *seg, enum vw_req err, const struct vw_findings *f)
{
    struct recorder *rc = ctx;
    check_vitcp_seg(raw, len, err, seg);
    (void)f;
    record(rc, rc->dir, raw, len, off, (int)err);
}

static void test_vitcp_session(void **state)
{
    (void)state;
    g_pdus = g_errors = 0;
    struct rb_rng r = {rb_seed("vitcp session", 0x5EED0203u)};
    static uint8_t stream[2][200000];
    static struct recorder rc;
    for (unsigned it = 0; it < 300; it++) {
        g_iter_seed = rb_next(&r);
        struct rb_rng ir = {g_iter_seed};
        bool crc = rb_below(&ir, 2);
        size_t n[2], pos[2] = {0, 0};
        for (int d = 0; d < 2; d++)
            n[d] = gen_stream(&ir, stream[d], sizeof stream[d], gen_vitcp, 2, crc);
        struct vw_vitcp_session s;
        assert_int_equal(vw_vitcp_session_init(&s), 0);
        memset(&rc, 0, sizeof rc);
        rc.session = true;
        while (pos[0] < n[0] || pos[1] < n[1]) {
            int d = (int)rb_below(&ir, 2);
            if (pos[d] >= n[d])
                d = !d;
            size_t k = rb_below(&ir, 4) == 0 ? 1 : (size_t)rb_below(&ir, 2000);
            if (k > n[d] - pos[d])
                k = n[d] - pos[d];
            uint8_t *c = exact(stream[d] + pos[d], k);
            rc.dir = d;
            rc.fed2[d] += k;
            vw_vitcp_session_feed(&s, d, c, k, vitcp_sess_cb, &rc);
            free(c);
            pos[d] += k;
        }
        struct vw_findings f;
        vw_findings_clear(&f);
        vw_vitcp_conn_finish(&s.conn, &f);
        vw_vitcp_session_free(&s);
    }
    fprintf(stderr, "# %llu PDUs framed, %llu with a fatal rule\n", (unsigned long long)g_pdus,
            (unsigned long long)g_errors);
    assert_true(g_pdus > 1000 && g_errors > 10);
}

/* --------------------------------------------------------------- IFT */

static size_t gen_ift_ind(struct rb_rng *r, uint8_t *buf, size_t cap)
{
    struct vw_ift_ind_enc e;
    vw_ift_ind_enc_init(&e, (unsigned)rb_below(r, 2), (uint16_t)rb_next(r), rb_below(r, 2), rb_below(r, 2));
    if (rb_below(r, 4) == 0)
        e.flags = (uint32_t)rb_next(r);
    if (rb_below(r, 4) == 0)
        e.marker_interval = (uint16_t)rb_next(r);
    if (rb_below(r, 5) == 0)
        e.crc = (enum vw_ift_crc_write)rb_below(r, 4);
    return vw_ift_ind_encode(&e, buf, cap);
}

static size_t gen_ift_frame_mode(struct rb_rng *r, uint8_t *buf, size_t cap, bool hc, bool pc, uint16_t vtag)
{
    struct vw_ddp_hdr h = {.tagged = rb_below(r, 2), .last = rb_below(r, 2), .dv = 1, .rdmap_rv = 1,
                           .rdmap_opcode = (uint8_t)rb_below(r, 8), .stag = (uint32_t)rb_next(r),
                           .to = rb_next(r), .qn = (uint32_t)rb_below(r, 4),
                           .msn = (uint32_t)rb_next(r), .mo = (uint32_t)rb_below(r, 10000)};
    static uint8_t ddp[64], payload[3000];
    size_t dl = vw_ddp_encode(&h, ddp, sizeof ddp);
    if (rb_below(r, 6) == 0) {
        dl = (size_t)rb_below(r, 40);
        rb_fill(r, ddp, dl);
    }
    size_t pl = (size_t)rb_below(r, rb_below(r, 10) ? 300 : 3000);
    rb_fill(r, payload, pl);
    struct vw_ift_frame_enc e;
    vw_ift_frame_enc_init(&e, vtag, hc, pc, ddp, dl, payload, pl);
    if (rb_below(r, 6) == 0) {
        e.hdr_crc = (enum vw_ift_crc_write)rb_below(r, 5);
        e.payload_crc = (enum vw_ift_crc_write)rb_below(r, 5);
    }
    return vw_ift_frame_encode(&e, buf, cap);
}

static size_t gen_ift_frame(struct rb_rng *r, uint8_t *buf, size_t cap, bool crc)
{
    return gen_ift_frame_mode(r, buf, cap, crc, crc, 0x1234);
}

static void check_ift_frame(const uint8_t *b, size_t n, enum vw_req rc, const struct vw_ift_frame *fr)
{
    if (rc != VW_REQ_NONE)
        return;
    CHECK_INSIDE(fr->ddp, fr->header_size, b, n, "IFT DDP header");
    CHECK_INSIDE(fr->payload, fr->payload_size, b, n, "IFT payload");
    if (fr->payload)
        CHECK_INSIDE(b + fr->payload_offset, fr->payload_size, b, n, "IFT payload offset");
    for (size_t i = 0; i < fr->payload_size && fr->payload; i++)
        sink += fr->payload[i];
}

static void test_ift_decode(void **state)
{
    (void)state;
    struct rb_rng r = {rb_seed("ift decode", 0x5EED0204u)};
    unsigned ok = 0, fatal = 0;
    for (unsigned it = 0; it < 25000; it++) {
        g_iter_seed = rb_next(&r);
        struct rb_rng ir = {g_iter_seed};
        bool is_ind = rb_below(&ir, 3) == 0;
        struct vw_ift_frame_mode mode = {rb_below(&ir, 2), rb_below(&ir, 2), rb_below(&ir, 2), 0x1234};
        size_t n = is_ind ? gen_ift_ind(&ir, scratch, BUF_MAX)
                          : gen_ift_frame_mode(&ir, scratch, BUF_MAX - 512, mode.hc, mode.pc, 0x1234);
        n = damage(&ir, scratch, n, BUF_MAX, is_ind ? 4 : 2 * rb_below(&ir, 2));
        uint8_t *b = exact(scratch, n);
        struct vw_findings f;
        vw_findings_clear(&f);
        if (is_ind) {
            struct vw_ift_ind ind;
            enum vw_req rc = vw_ift_ind_decode(b, n, &ind, &f);
            if (rc == VW_REQ_NONE) {
                CHECK_INSIDE(ind.reserved, VW_IFT_IND_RESERVED_LEN, b, n, "IFT reserved");
                sink += vw_ift_ind_fatal(&ind);
                vw_ift_ind_notes(&ind, &f);
                ok++;
            } else {
                fatal++;
            }
            sink += vw_ift_plausible_indication(b, n);
        } else {
            struct vw_ift_frame fr;
            enum vw_req rc = vw_ift_frame_decode(b, n, &mode, &fr, &f);
            check_ift_frame(b, n, rc, &fr);
            if (rc == VW_REQ_NONE) {
                sink += vw_ift_frame_fatal(&fr, &mode);
                ok++;
            } else {
                fatal++;
            }
            struct vw_ift_frame_mode carried, guessed;
            vw_findings_clear(&f);
            rc = vw_ift_frame_decode_as_sent(b, n, &mode, &fr, &carried, &f);
            check_ift_frame(b, n, rc, &fr);
            sink += vw_ift_guess_mode(b, n, &guessed);
            sink += vw_ift_frame_layout(b, n, &mode, &carried);
            sink += (unsigned)vw_ift_peek_frame_len(b, n, &mode);
            struct vw_ddp_hdr h;
            sink += vw_ddp_decode(b, n, &h);
        }
        free(b);
    }
    fprintf(stderr, "# ift decode: %u parsed, %u refused\n", ok, fatal);
    assert_true(ok > 1000 && fatal > 1000);
}

static void ift_cb(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_ift_pdu *pdu,
                   enum vw_req err, const struct vw_findings *f)
{
    struct recorder *rc = ctx;
    (void)f;
    if (!pdu->is_indication)
        check_ift_frame(raw, len, err, &pdu->frame);
    record(rc, rc->dir, raw, len, off, (int)err);
}

static int ift_feed(void *fr, const uint8_t *d, size_t n, struct recorder *rc)
{
    return (int)vw_ift_framer_feed(fr, d, n, ift_cb, rc);
}

static void test_ift_streams(void **state)
{
    (void)state;
    g_pdus = g_errors = 0;
    struct rb_rng r = {rb_seed("ift streams", 0x5EED0205u)};
    static uint8_t stream[400000];
    static struct recorder a, b;
    for (unsigned it = 0; it < 300; it++) {
        g_iter_seed = rb_next(&r);
        struct rb_rng ir = {g_iter_seed};
        bool with_ind = rb_below(&ir, 4) != 0, crc = rb_below(&ir, 2);
        size_t n = 0;
        if (with_ind) {
            struct vw_ift_ind_enc e;
            vw_ift_ind_enc_init(&e, 0, 0x1234, crc, crc);
            n = vw_ift_ind_encode(&e, stream, sizeof stream);
            if (rb_below(&ir, 6) == 0)
                n = damage(&ir, stream, n, 200, 4);
        }
        n += gen_stream(&ir, stream + n, sizeof stream - n, gen_ift_frame, 2, crc);
        memset(&a, 0, sizeof a);
        struct vw_ift_framer fa, fb;
        assert_int_equal(vw_ift_framer_init(&fa, with_ind), 0);
        int ea = feed_chunks(ift_feed, &fa, stream, n, 0, &ir, &a);
        for (int m = 1; m <= 2; m++) {
            memset(&b, 0, sizeof b);
            assert_int_equal(vw_ift_framer_init(&fb, with_ind), 0);
            int eb = feed_chunks(ift_feed, &fb, stream, n, m, &ir, &b);
            same_records(&a, &b, m == 1 ? "ift byte by byte" : "ift random chunks");
            if (ea != eb)
                fail_msg("ift framer error %d whole, %d chunked, iteration seed 0x%016llx", ea, eb,
                         (unsigned long long)g_iter_seed);
            vw_ift_framer_free(&fb);
        }
        g_errors += ea != 0 || fa.close_reason != VW_REQ_NONE; /* framing stopped or the peer must reset */
        vw_ift_framer_free(&fa);
        /* both directions through a connection */
        struct vw_ift_conn c;
        assert_int_equal(vw_ift_conn_init(&c), 0);
        memset(&a, 0, sizeof a);
        a.session = true;
        size_t pos = 0;
        while (pos < n) {
            size_t k = (size_t)rb_below(&ir, 1500);
            if (k > n - pos)
                k = n - pos;
            uint8_t *ch = exact(stream + pos, k);
            int d = (int)rb_below(&ir, 2);
            a.dir = d;
            a.fed2[d] += k; /* each direction gets its own pieces of the stream */
            vw_ift_conn_feed(&c, d, ch, k, ift_cb, &a);
            free(ch);
            pos += k;
        }
        vw_ift_conn_free(&c);
    }
    fprintf(stderr, "# %llu PDUs framed, %llu with a fatal rule\n", (unsigned long long)g_pdus,
            (unsigned long long)g_errors);
    assert_true(g_pdus > 1000 && g_errors > 10);
}

/* ---------------------------------------------------------- PacketWay */

static size_t gen_eep(struct rb_rng *r, uint8_t *buf, size_t cap)
{
    static uint8_t data[600], rdata[3][300], ohd[3][300], ot[40];
    size_t dl = (size_t)rb_below(r, 600);
    rb_fill(r, data, dl);
    struct vw_eep_enc e;
    vw_eep_enc_init(&e, (uint32_t)rb_next(r) & 0xFFFFFF, (uint32_t)rb_next(r) & 0xFFFFFF,
                    (uint16_t)rb_below(r, 4), data, dl);
    struct vw_eep_route_enc routes[3];
    struct vw_eep_oh_enc oh[3];
    e.n_routes = (size_t)rb_below(r, 4);
    for (size_t i = 0; i < e.n_routes; i++) {
        routes[i].kind = rb_below(r, 2) ? VW_EEP_ROUTE_L2RH : VW_EEP_ROUTE_SYMBOL;
        routes[i].version = (uint8_t)rb_below(r, 4);
        routes[i].priority = (uint8_t)rb_below(r, 64);
        routes[i].symbol_type = (uint32_t)rb_next(r) & 0xFFFFF;
        routes[i].data_len = (size_t)rb_below(r, routes[i].kind == VW_EEP_ROUTE_L2RH ? 64 : 256);
        rb_fill(r, rdata[i], routes[i].data_len);
        routes[i].data = rdata[i];
    }
    e.routes = routes;
    e.n_oh = (size_t)rb_below(r, 4);
    for (size_t i = 0; i < e.n_oh; i++) {
        oh[i].mandatory = rb_below(r, 2);
        oh[i].type = (uint8_t)rb_below(r, 64);
        oh[i].last = rb_below(r, 2);
        oh[i].data_len = (size_t)rb_below(r, 256);
        rb_fill(r, ohd[i], oh[i].data_len);
        oh[i].data = ohd[i];
    }
    e.oh = oh;
    e.keep_c = rb_below(r, 4) == 0;
    if (rb_below(r, 3) == 0) {
        e.ot_len = (size_t)rb_below(r, 40);
        rb_fill(r, ot, e.ot_len);
        e.ot = ot;
    }
    if (rb_below(r, 5) == 0) {
        e.keep_lengths = true;
        e.hdr.dl = (uint32_t)rb_next(r) & VW_EEP_DL_MAX;
        e.hdr.pl = (uint8_t)rb_below(r, 8);
    }
    e.ei = rb_next(r);
    return vw_eep_encode(&e, buf, cap);
}

static void test_eep_decode(void **state)
{
    (void)state;
    struct rb_rng r = {rb_seed("eep decode", 0x5EED0206u)};
    unsigned ok = 0, fatal = 0;
    for (unsigned it = 0; it < 25000; it++) {
        g_iter_seed = rb_next(&r);
        struct rb_rng ir = {g_iter_seed};
        size_t n = gen_eep(&ir, scratch, BUF_MAX - 512);
        n = damage(&ir, scratch, n, BUF_MAX, 8 + 2 * rb_below(&ir, 2));
        uint8_t *b = exact(scratch, n);
        for (int carrier = 0; carrier < 2; carrier++) {
            struct vw_eep_msg m;
            struct vw_findings f;
            vw_findings_clear(&f);
            enum vw_req rc = vw_eep_decode_on(b, n, (enum vw_eep_carrier)carrier, &m, &f);
            if (rc != VW_REQ_NONE) {
                fatal++;
                continue;
            }
            ok++;
            CHECK_INSIDE(m.routes, m.routes_len, b, n, "EEP routes");
            CHECK_INSIDE(m.oh, m.oh_len, b, n, "EEP OH");
            CHECK_INSIDE(m.data, m.data_len, b, n, "EEP data");
            CHECK_INSIDE(m.ot, m.ot_len, b, n, "EEP trailer");
            CHECK_INSIDE(b + m.tail_offset, VW_EEP_TAIL_LEN, b, n, "EEP TAIL");
            CHECK_INSIDE(b + m.db_offset, m.db_len, b, n, "EEP data block");
            if (m.msg_len > n || m.msg_len + m.link_padding > n)
                fail_msg("EEP message length %zu + padding %zu over %zu", m.msg_len, m.link_padding, n);
            size_t pos = 0;
            struct vw_eep_route rt;
            int steps = 0;
            while (m.routes && vw_eep_route_next(m.routes, m.routes_len, &pos, &rt) == 1) {
                if (pos > m.routes_len || ++steps > 10000)
                    fail_msg("route_next position %zu of %zu", pos, m.routes_len);
                CHECK_INSIDE(rt.data, rt.data_len, b, n, "EEP route data");
            }
            pos = 0, steps = 0;
            struct vw_eep_oh oh;
            while (m.oh && vw_eep_oh_next(m.oh, m.oh_len, &pos, &oh) == 1) {
                if (pos > m.oh_len || ++steps > 10000)
                    fail_msg("oh_next position %zu of %zu", pos, m.oh_len);
                CHECK_INSIDE(oh.data, oh.data_len, b, n, "EEP OH data");
            }
            vw_eep_notes(b, &m, NULL, &f);
            for (size_t i = 0; i < m.data_len; i++)
                sink += m.data[i];
        }
        /* walkers straight on junk */
        size_t pos = 0;
        int steps = 0;
        struct vw_eep_route rt;
        while (vw_eep_route_next(b, n, &pos, &rt) == 1)
            if (pos > n || ++steps > 100000)
                fail_msg("route_next on junk: position %zu of %zu", pos, n);
        struct vw_eep_oh oh;
        pos = 0, steps = 0;
        while (vw_eep_oh_next(b, n, &pos, &oh) == 1)
            if (pos > n || ++steps > 100000)
                fail_msg("oh_next on junk: position %zu of %zu", pos, n);
        enum vw_eep_route_kind k;
        if (n >= 2)
            sink += (unsigned)vw_eep_record_kind(b, n, &k);
        free(b);
    }
    fprintf(stderr, "# eep decode: %u parsed, %u refused\n", ok, fatal);
    assert_true(ok > 1000 && fatal > 1000);
}

/* --------------------------------------------------------------- WARP */

static size_t gen_warp(struct rb_rng *r, uint8_t *buf, size_t cap, bool unused)
{
    (void)unused;
    static uint8_t payload[3000];
    size_t pl = (size_t)rb_below(r, rb_below(r, 10) ? 300 : 3000);
    rb_fill(r, payload, pl);
    struct vw_warp_enc e;
    vw_warp_enc_init(&e, rb_below(r, 8) ? (unsigned)rb_below(r, 2) : (unsigned)rb_below(r, 16), payload, pl);
    e.flags = (uint16_t)rb_below(r, 8);
    e.rid = (uint32_t)rb_next(r);
    e.ssn = (uint32_t)rb_below(r, 4);
    e.offset = rb_below(r, 4) ? rb_below(r, 5000) : rb_next(r);
    if (rb_below(r, 5) == 0)
        e.rsvd = (uint16_t)rb_below(r, 512);
    if (rb_below(r, 5) == 0)
        e.adler = (enum vw_warp_adler_write)rb_below(r, 4);
    return vw_warp_encode(&e, buf, cap);
}

static void check_warp(const uint8_t *b, size_t n, enum vw_req rc, const struct vw_warp_chunk *c)
{
    if (rc != VW_REQ_NONE)
        return;
    CHECK_INSIDE(c->payload, c->payload_len, b, n, "WARP payload");
    if (c->payload)
        CHECK_INSIDE(b + c->payload_offset, c->payload_len, b, n, "WARP payload offset");
    for (size_t i = 0; i < c->payload_len; i++)
        sink += c->payload[i];
}

static void test_warp_decode(void **state)
{
    (void)state;
    struct rb_rng r = {rb_seed("warp decode", 0x5EED0207u)};
    unsigned ok = 0, fatal = 0;
    struct vw_warp_seq seq;
    memset(&seq, 0, sizeof seq);
    for (unsigned it = 0; it < 25000; it++) {
        g_iter_seed = rb_next(&r);
        struct rb_rng ir = {g_iter_seed};
        size_t n = gen_warp(&ir, scratch, BUF_MAX - 512, false);
        n = damage(&ir, scratch, n, BUF_MAX, 2);
        uint8_t *b = exact(scratch, n);
        struct vw_warp_chunk c;
        struct vw_findings f;
        vw_findings_clear(&f);
        enum vw_req rc = vw_warp_decode(b, n, &c, &f);
        check_warp(b, n, rc, &c);
        if (rc == VW_REQ_NONE) {
            struct vw_warp_seq_pos pos;
            vw_warp_seq_check(&seq, &c, &pos, &f);
            ok++;
        } else {
            fatal++;
        }
        sink += vw_warp_plausible_header(b, n) + vw_warp_peek_chunk_len(b, n);
        free(b);
    }
    fprintf(stderr, "# warp decode: %u parsed, %u refused\n", ok, fatal);
    assert_true(ok > 1000 && fatal > 1000);
}

static void warp_cb(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_warp_chunk *c,
                    enum vw_req err, const struct vw_findings *f)
{
    struct recorder *rc = ctx;
    (void)f;
    check_warp(raw, len, err, c);
    record(rc, rc->dir, raw, len, off, (int)err);
}

static int warp_feed(void *fr, const uint8_t *d, size_t n, struct recorder *rc)
{
    return (int)vw_warp_framer_feed(fr, d, n, warp_cb, rc);
}

/* W17: a Chunk length of the payload only is named from the bytes at hand
 * up to the end of the caller's chunk, so a split feed may see less of the
 * evidence than the whole one and name it later or never (never sooner).
 * Then the whole feed stopped there under WARP-A-CHUNK-LEN, and its PDUs
 * are the split feed's first ones (the last, the named chunk, may carry
 * another rule in the split feed). */
static void warp_payload_only_prefix(const struct recorder *whole, const struct recorder *split, int e_whole,
                                     const char *what)
{
    if (e_whole != VW_REQ_WARP_A_CHUNK_LEN)
        fail_msg("%s: payload-only reading without WARP-A-CHUNK-LEN (%d), iteration seed 0x%016llx", what,
                 e_whole, (unsigned long long)g_iter_seed);
    if (split->n < whole->n)
        fail_msg("%s: %zu PDUs whole, only %zu when chunked, iteration seed 0x%016llx", what, whole->n, split->n,
                 (unsigned long long)g_iter_seed);
    for (size_t i = 0; i < whole->n; i++) {
        const struct rec *x = &whole->v[i], *y = &split->v[i];
        if (x->off != y->off || x->len != y->len || x->sum != y->sum || (i + 1 < whole->n && x->err != y->err))
            fail_msg("%s: PDU %zu differs before the payload-only reading, iteration seed 0x%016llx", what, i,
                     (unsigned long long)g_iter_seed);
    }
}

static void test_warp_streams(void **state)
{
    (void)state;
    g_pdus = g_errors = 0;
    struct rb_rng r = {rb_seed("warp streams", 0x5EED0208u)};
    static uint8_t stream[400000];
    static struct recorder a, b;
    for (unsigned it = 0; it < 400; it++) {
        g_iter_seed = rb_next(&r);
        struct rb_rng ir = {g_iter_seed};
        size_t n = gen_stream(&ir, stream, sizeof stream, gen_warp, 2, false);
        memset(&a, 0, sizeof a);
        struct vw_warp_framer fa, fb;
        assert_int_equal(vw_warp_framer_init(&fa), 0);
        int ea = feed_chunks(warp_feed, &fa, stream, n, 0, &ir, &a);
        for (int m = 1; m <= 2; m++) {
            memset(&b, 0, sizeof b);
            assert_int_equal(vw_warp_framer_init(&fb), 0);
            int eb = feed_chunks(warp_feed, &fb, stream, n, m, &ir, &b);
            const char *what = m == 1 ? "warp byte by byte" : "warp random chunks";
            if (fb.payload_only != VW_WARP_PO_NO && fa.payload_only == VW_WARP_PO_NO)
                fail_msg("%s named a Chunk length of the payload only, the whole feed did not, iteration seed "
                         "0x%016llx", what, (unsigned long long)g_iter_seed);
            if (fa.payload_only != VW_WARP_PO_NO && (ea != eb || a.n != b.n))
                warp_payload_only_prefix(&a, &b, ea, what);
            else {
                same_records(&a, &b, what);
                if (ea != eb)
                    fail_msg("warp framer error %d whole, %d chunked, iteration seed 0x%016llx", ea, eb,
                             (unsigned long long)g_iter_seed);
            }
            vw_warp_framer_free(&fb);
        }
        vw_warp_framer_free(&fa);
    }
    fprintf(stderr, "# %llu PDUs framed, %llu with a fatal rule\n", (unsigned long long)g_pdus,
            (unsigned long long)g_errors);
    assert_true(g_pdus > 1000 && g_errors > 10);
}

/* A framer costs memory only for a PDU that arrives split, and only its
 * size: 5000 VI/TCP sessions and 5000 WARP and IFT framers fed whole small
 * PDUs (as a capture of many short connections does) must not hold 64-128
 * KiB each. A split PDU still frames, byte by byte, after growth. */
static void test_framer_memory(void **state)
{
    (void)state;
    enum { N = 5000 };
    struct vw_vitcp_session *vs = calloc(N, sizeof *vs);
    struct vw_warp_framer *wf = calloc(N, sizeof *wf);
    struct vw_ift_framer *ifr = calloc(N, sizeof *ifr);
    uint8_t seg[64], chunk[64];
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, VW_VITCP_NOP, false);
    size_t sl = vw_vitcp_encode(&e, seg, sizeof seg);
    struct vw_warp_enc we;
    vw_warp_enc_init(&we, VW_WARP_SEND, (const uint8_t *)"abcd", 4);
    size_t cl = vw_warp_encode(&we, chunk, sizeof chunk);
    assert_true(sl > 0 && cl > 0);
    static struct recorder rc;
    memset(&rc, 0, sizeof rc);
    rc.session = true;
    size_t before = rb_heap_bytes();
    for (unsigned i = 0; i < N; i++) {
        assert_int_equal(vw_vitcp_session_init(&vs[i]), 0);
        assert_int_equal(vw_warp_framer_init(&wf[i]), 0);
        assert_int_equal(vw_ift_framer_init(&ifr[i], false), 0);
        rc.fed2[0] = sl, rc.last_end[0] = 0;
        vw_vitcp_session_feed(&vs[i], 0, seg, sl, vitcp_sess_cb, &rc);
        rc.fed = cl, rc.last_end[0] = 0, rc.session = false;
        vw_warp_framer_feed(&wf[i], chunk, cl, warp_cb, &rc);
        rc.session = true;
    }
    size_t grown = rb_heap_bytes() - before;
    fprintf(stderr, "# %d sessions + WARP + IFT framers: heap +%zu bytes (%zu each)\n", N, grown, grown / N);
    assert_true(grown / N < 4096);
    /* a split segment still frames: the NOP byte by byte */
    memset(&rc, 0, sizeof rc);
    for (size_t k = 0; k < sl; k++) {
        rc.fed++;
        vw_vitcp_framer_feed(&vs[0].framer[1], seg + k, 1, vitcp_cb, &rc);
    }
    assert_int_equal(rc.n, 1);
    assert_int_equal(rc.v[0].len, sl);
    assert_int_equal(rc.v[0].err, 0);
    for (unsigned i = 0; i < N; i++) {
        vw_vitcp_session_free(&vs[i]);
        vw_warp_framer_free(&wf[i]);
        vw_ift_framer_free(&ifr[i]);
    }
    free(vs);
    free(wf);
    free(ifr);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vitcp_decode),  cmocka_unit_test(test_vitcp_streams),
        cmocka_unit_test(test_vitcp_session), cmocka_unit_test(test_ift_decode),
        cmocka_unit_test(test_ift_streams),   cmocka_unit_test(test_eep_decode),
        cmocka_unit_test(test_warp_decode),   cmocka_unit_test(test_warp_streams),
        cmocka_unit_test(test_framer_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
