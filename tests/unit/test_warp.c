/* WARP chunks (W1-W4): field round trips, every decode error naming its
 * rule, the framer at every split point, garbage never read out of bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>
#include "vitcp/checksum.h"
#include "vitcp/iscsi_bhs.h"
#include "vitcp/warp_iscsi.h"
#include "vitcp/warp_region.h"
#include "vitcp/warp_stream.h"

static uint32_t vw_get_be32_for_test(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Heap copy of exactly n bytes, so ASan sees any read past the end. */
static uint8_t *exact(const uint8_t *p, size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    assert_non_null(d);
    if (n)
        memcpy(d, p, n);
    return d;
}

static enum vw_req decode_exact(const uint8_t *p, size_t n, struct vw_warp_chunk *c,
                                struct vw_findings *fs)
{
    uint8_t *d = exact(p, n);
    vw_findings_clear(fs);
    enum vw_req r = vw_warp_decode(d, n, c, fs);
    free(d);
    return r;
}

static void test_send_chunk_bytes(void **state)
{
    (void)state;
    const uint8_t payload[3] = {'a', 'b', 'c'};
    struct vw_warp_enc e;
    vw_warp_enc_init(&e, VW_WARP_SEND, payload, sizeof payload);
    e.flags = VW_WARP_FLAG_L | VW_WARP_FLAG_C;
    e.ssn = 0x01020304u;
    e.offset = 0x0A0B0C0Du;
    uint8_t buf[64];
    size_t n = vw_warp_encode(&e, buf, sizeof buf);
    assert_int_equal(n, 19);
    assert_int_equal(vw_warp_encoded_len(&e), 19);
    const uint8_t want_hdr[12] = {0x00, 0x03, 0x00, 19, 1, 2, 3, 4, 0x0A, 0x0B, 0x0C, 0x0D};
    assert_memory_equal(buf, want_hdr, 12);
    assert_memory_equal(buf + 12, "abc", 3);
    /* W3: zlib's Adler-32 of every byte before it, big-endian. */
    uLong a = adler32(adler32(0L, Z_NULL, 0), buf, 15);
    assert_int_equal(buf[15], (a >> 24) & 0xFF);
    assert_int_equal(buf[18], a & 0xFF);
    assert_int_equal(vw_adler32("123456789", 9), 0x091E01DEu);

    struct vw_warp_chunk c;
    struct vw_findings fs;
    assert_int_equal(decode_exact(buf, n, &c, &fs), VW_REQ_NONE);
    assert_int_equal(fs.count, 0);
    assert_int_equal(c.type, VW_WARP_SEND);
    assert_int_equal(c.flags, VW_WARP_FLAG_L | VW_WARP_FLAG_C);
    assert_int_equal(c.chunk_len, 19);
    assert_int_equal(c.ssn, 0x01020304u);
    assert_int_equal(c.offset, 0x0A0B0C0Du);
    assert_int_equal(c.payload_len, 3);
    assert_int_equal(c.payload_offset, 12);
    assert_true(c.adler_ok);
    assert_int_equal(c.adler_wire, (uint32_t)a);
}

static void test_rdma_round_trip_every_field(void **state)
{
    (void)state;
    uint8_t payload[100];
    for (size_t i = 0; i < sizeof payload; i++)
        payload[i] = (uint8_t)(i * 7);
    const uint16_t flag_sets[] = {0, VW_WARP_FLAG_L, VW_WARP_FLAG_L | VW_WARP_FLAG_C,
                                  VW_WARP_FLAG_E | VW_WARP_FLAG_L};
    for (size_t k = 0; k < 4; k++) {
        struct vw_warp_enc e;
        vw_warp_enc_init(&e, VW_WARP_RDMA, payload, sizeof payload);
        e.flags = flag_sets[k];
        e.rid = 0xDEADBEEFu;
        e.offset = 0x1122334455667788ull;
        uint8_t buf[256];
        size_t n = vw_warp_encode(&e, buf, sizeof buf);
        assert_int_equal(n, 16 + 100 + 4);
        assert_int_equal(buf[0] >> 4, VW_WARP_RDMA);
        struct vw_warp_chunk c;
        struct vw_findings fs;
        assert_int_equal(decode_exact(buf, n, &c, &fs), VW_REQ_NONE);
        assert_int_equal(c.type, VW_WARP_RDMA);
        assert_int_equal(c.flags, flag_sets[k]);
        assert_int_equal(c.rid, 0xDEADBEEFu);
        assert_true(c.offset == 0x1122334455667788ull);
        assert_int_equal(c.payload_len, 100);
        assert_memory_equal(c.payload, payload, 100);
        assert_int_equal(c.rsvd, 0);
        assert_int_equal(vw_findings_has(&fs, VW_REQ_WARP_E_TXERR), !!(flag_sets[k] & VW_WARP_FLAG_E));
    }
}

static void test_decode_errors_name_rules(void **state)
{
    (void)state;
    struct vw_warp_enc e;
    struct vw_warp_chunk c;
    struct vw_findings fs;
    uint8_t buf[128];
    vw_warp_enc_init(&e, VW_WARP_SEND, (const uint8_t *)"xyz", 3);
    size_t n = vw_warp_encode(&e, buf, sizeof buf);

    /* truncated: under 4 bytes, and chunk length beyond the bytes given */
    assert_int_equal(decode_exact(buf, 3, &c, &fs), VW_REQ_WARP_A_TRUNCATED);
    assert_int_equal(decode_exact(buf, n - 1, &c, &fs), VW_REQ_WARP_A_TRUNCATED);
    /* more bytes than the chunk length */
    uint8_t big[128];
    memcpy(big, buf, n);
    big[n] = 0;
    assert_int_equal(decode_exact(big, n + 1, &c, &fs), VW_REQ_WARP_A_CHUNK_LEN);
    assert_true(vw_findings_has(&fs, VW_REQ_WARP_A_CHUNK_LEN));

    /* bad length: an RDMA chunk of 16 bytes cannot hold header and Adler */
    struct vw_warp_enc r;
    vw_warp_enc_init(&r, VW_WARP_RDMA, NULL, 0);
    r.keep_chunk_len = true;
    r.chunk_len = 16;
    uint8_t rb[64];
    assert_int_equal(vw_warp_encode(&r, rb, sizeof rb), 20);
    assert_int_equal(decode_exact(rb, 16, &c, &fs), VW_REQ_WARP_A_CHUNK_LEN);

    /* unknown type */
    struct vw_warp_enc u;
    vw_warp_enc_init(&u, 9, (const uint8_t *)"q", 1);
    uint8_t ub[64];
    size_t un = vw_warp_encode(&u, ub, sizeof ub);
    assert_int_equal(decode_exact(ub, un, &c, &fs), VW_REQ_WARP_A_TYPE_KNOWN);
    assert_true(c.adler_ok);
    assert_string_equal(vw_warp_type_name(9), "Unknown");
    assert_string_equal(vw_warp_type_name(VW_WARP_RDMA), "RDMA Write");
    assert_string_equal(vw_warp_type_name(VW_WARP_SEND), "Send");

    /* bad Adler-32, and the little-endian reading named */
    e.adler = VW_WARP_ADLER_BAD;
    n = vw_warp_encode(&e, buf, sizeof buf);
    assert_int_equal(decode_exact(buf, n, &c, &fs), VW_REQ_NONE);
    assert_false(c.adler_ok);
    assert_true(vw_findings_has(&fs, VW_REQ_WARP_A_ADLER_VALID));
    assert_null(strstr(fs.item[0].detail, "least significant"));
    e.adler = VW_WARP_ADLER_LE;
    n = vw_warp_encode(&e, buf, sizeof buf);
    assert_int_equal(decode_exact(buf, n, &c, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_WARP_A_ADLER_VALID));
    assert_non_null(strstr(fs.item[0].detail, "least significant"));
    e.adler = VW_WARP_ADLER_VALUE;
    e.adler_value = 0x12345678u;
    n = vw_warp_encode(&e, buf, sizeof buf);
    assert_int_equal(buf[n - 4], 0x12);
    assert_int_equal(buf[n - 1], 0x78);

    /* reserved bits: a note only; C without L: an error */
    vw_warp_enc_init(&e, VW_WARP_SEND, NULL, 0);
    e.rsvd = 0x1FF;
    e.flags = VW_WARP_FLAG_C;
    n = vw_warp_encode(&e, buf, sizeof buf);
    assert_int_equal(buf[0], 0x0F);
    assert_int_equal(buf[1], 0xFA);
    assert_int_equal(decode_exact(buf, n, &c, &fs), VW_REQ_NONE);
    assert_int_equal(c.rsvd, 0x1FF);
    assert_true(vw_findings_has(&fs, VW_REQ_WARP_A_RSVD_ZERO));
    assert_int_equal(fs.item[0].severity, VW_SEV_NOTE);
    assert_true(vw_findings_has(&fs, VW_REQ_WARP_C_ONLY_WITH_L));
    assert_true(c.adler_ok);

    /* oversized: the encoder refuses a chunk above 65535 bytes */
    static uint8_t huge[70000];
    vw_warp_enc_init(&e, VW_WARP_SEND, huge, 65535 - 12 - 4 + 1);
    static uint8_t out[70000];
    assert_int_equal(vw_warp_encode(&e, out, sizeof out), 0);
    e.payload_len--;
    assert_int_equal(vw_warp_encode(&e, out, sizeof out), 65535);
    assert_int_equal(vw_warp_encode(&e, out, 100), 0);
}

/* ----------------------------------------------------------- framer */

struct got {
    unsigned n;
    size_t len[16];
    uint64_t off[16];
    uint8_t type[16];
    uint32_t ssn[16];
    enum vw_req err[16];
    unsigned findings;
    enum vw_req first_rule;
};

static void on_chunk(void *ctx, const uint8_t *raw, size_t len, uint64_t off,
                     const struct vw_warp_chunk *c, enum vw_req err, const struct vw_findings *fs)
{
    struct got *g = ctx;
    assert_non_null(raw);
    if (g->n < 16) {
        g->len[g->n] = len;
        g->off[g->n] = off;
        g->type[g->n] = c->type;
        g->ssn[g->n] = c->ssn;
        g->err[g->n] = err;
    }
    if (fs->count && g->first_rule == VW_REQ_NONE)
        g->first_rule = fs->item[0].req;
    g->findings += fs->count;
    g->n++;
}

static size_t put_chunk(uint8_t *buf, unsigned type, uint16_t flags, uint32_t id, uint64_t off,
                        const char *payload)
{
    struct vw_warp_enc e;
    vw_warp_enc_init(&e, type, (const uint8_t *)payload, strlen(payload));
    e.flags = flags;
    if (type == VW_WARP_RDMA)
        e.rid = id;
    else
        e.ssn = id;
    e.offset = off;
    return vw_warp_encode(&e, buf, 512);
}

/* Send 7 in two chunks, an RDMA PDU in two chunks, Send 8 in one. */
static size_t good_stream(uint8_t *s, size_t *lens)
{
    size_t n = 0;
    lens[0] = put_chunk(s + n, VW_WARP_SEND, 0, 7, 0, "hello ");
    n += lens[0];
    lens[1] = put_chunk(s + n, VW_WARP_SEND, VW_WARP_FLAG_L | VW_WARP_FLAG_C, 7, 6, "world");
    n += lens[1];
    lens[2] = put_chunk(s + n, VW_WARP_RDMA, 0, 0x55, 1000, "0123456789");
    n += lens[2];
    lens[3] = put_chunk(s + n, VW_WARP_RDMA, VW_WARP_FLAG_L, 0x55, 1010, "abc");
    n += lens[3];
    lens[4] = put_chunk(s + n, VW_WARP_SEND, VW_WARP_FLAG_L, 8, 0, "");
    n += lens[4];
    return n;
}

static void check_good(const struct got *g, const size_t *lens)
{
    assert_int_equal(g->n, 5);
    assert_int_equal(g->findings, 0);
    uint64_t off = 0;
    for (unsigned i = 0; i < 5; i++) {
        assert_int_equal(g->len[i], lens[i]);
        assert_int_equal(g->off[i], off);
        assert_int_equal(g->err[i], VW_REQ_NONE);
        off += lens[i];
    }
    assert_int_equal(g->type[2], VW_WARP_RDMA);
    assert_int_equal(g->ssn[4], 8);
}

static void test_framer_every_split(void **state)
{
    (void)state;
    uint8_t s[1024];
    size_t lens[5];
    size_t n = good_stream(s, lens);
    uint8_t *d = exact(s, n);
    for (size_t cut = 0; cut <= n; cut++) {
        struct vw_warp_framer f;
        struct got g = {0};
        assert_int_equal(vw_warp_framer_init(&f), 0);
        uint8_t *a = exact(d, cut), *b = exact(d + cut, n - cut);
        assert_int_equal(vw_warp_framer_feed(&f, a, cut, on_chunk, &g), VW_REQ_NONE);
        assert_int_equal(vw_warp_framer_feed(&f, b, n - cut, on_chunk, &g), VW_REQ_NONE);
        check_good(&g, lens);
        free(a);
        free(b);
        vw_warp_framer_free(&f);
    }
    struct vw_warp_framer f;
    struct got g = {0};
    assert_int_equal(vw_warp_framer_init(&f), 0);
    for (size_t i = 0; i < n; i++) {
        uint8_t *one = exact(d + i, 1);
        assert_int_equal(vw_warp_framer_feed(&f, one, 1, on_chunk, &g), VW_REQ_NONE);
        free(one);
    }
    check_good(&g, lens);
    assert_int_equal(f.chunks, 5);
    vw_warp_framer_free(&f);
    free(d);
}

static void test_framer_sequence_rules(void **state)
{
    (void)state;
    struct {
        unsigned type;
        uint16_t flags;
        uint32_t id;
        uint64_t off;
        enum vw_req want;
    } cases[][2] = {
        /* SSN jumps by two */
        {{VW_WARP_SEND, VW_WARP_FLAG_L, 1, 0, VW_REQ_NONE}, {VW_WARP_SEND, VW_WARP_FLAG_L, 3, 0, VW_REQ_WARP_W4_SSN_NEXT}},
        /* new SSN while a Send is open */
        {{VW_WARP_SEND, 0, 1, 0, VW_REQ_NONE}, {VW_WARP_SEND, VW_WARP_FLAG_L, 2, 4, VW_REQ_WARP_W4_SSN_NEXT}},
        /* offset gap inside a Send */
        {{VW_WARP_SEND, 0, 1, 0, VW_REQ_NONE}, {VW_WARP_SEND, VW_WARP_FLAG_L, 1, 5, VW_REQ_WARP_W4_SEND_OFFSET}},
        /* new Send not starting at 0 */
        {{VW_WARP_SEND, VW_WARP_FLAG_L, 1, 0, VW_REQ_NONE}, {VW_WARP_SEND, VW_WARP_FLAG_L, 2, 8, VW_REQ_WARP_W4_SEND_OFFSET}},
        /* RDMA gap and RID change inside one PDU */
        {{VW_WARP_RDMA, 0, 9, 100, VW_REQ_NONE}, {VW_WARP_RDMA, VW_WARP_FLAG_L, 9, 200, VW_REQ_WARP_W4_RDMA_CONTIGUOUS}},
        {{VW_WARP_RDMA, 0, 9, 100, VW_REQ_NONE}, {VW_WARP_RDMA, VW_WARP_FLAG_L, 8, 104, VW_REQ_WARP_W4_RDMA_CONTIGUOUS}},
        /* SSN wraps mod 2^32 */
        {{VW_WARP_SEND, VW_WARP_FLAG_L, 0xFFFFFFFFu, 0, VW_REQ_NONE}, {VW_WARP_SEND, VW_WARP_FLAG_L, 0, 0, VW_REQ_NONE}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint8_t s[256];
        size_t n = 0;
        for (int i = 0; i < 2; i++)
            n += put_chunk(s + n, cases[k][i].type, cases[k][i].flags, cases[k][i].id, cases[k][i].off, "abcd");
        struct vw_warp_framer f;
        struct got g = {0};
        assert_int_equal(vw_warp_framer_init(&f), 0);
        assert_int_equal(vw_warp_framer_feed(&f, s, n, on_chunk, &g), VW_REQ_NONE);
        assert_int_equal(g.n, 2);
        if (cases[k][1].want == VW_REQ_NONE) {
            assert_int_equal(g.findings, 0);
        } else {
            assert_int_equal(g.findings, 1);
            assert_int_equal(g.first_rule, cases[k][1].want);
        }
        vw_warp_framer_free(&f);
    }
}

/* The sequence checker on its own (the dissector frames chunks itself):
 * where each chunk stands, and both faults of an RDMA chunk reported. */
static void test_seq_check_positions(void **state)
{
    (void)state;
    struct vw_warp_seq seq;
    memset(&seq, 0, sizeof seq);
    struct vw_warp_seq_pos pos;
    struct vw_findings fs;
    struct vw_warp_chunk c = {.type = VW_WARP_SEND, .ssn = 7, .offset = 0, .payload_len = 10};

    vw_findings_clear(&fs);
    vw_warp_seq_check(&seq, &c, &pos, &fs);
    assert_int_equal(fs.count, 0);
    assert_false(pos.continuation);
    assert_true(pos.offset_known);
    assert_int_equal(pos.expected_offset, 0);

    c.offset = 10;
    c.flags = VW_WARP_FLAG_L;
    vw_warp_seq_check(&seq, &c, &pos, &fs);
    assert_int_equal(fs.count, 0);
    assert_true(pos.continuation);
    assert_int_equal(pos.expected_offset, 10);

    /* next Send must be 8 and start at 0 */
    c.ssn = 9;
    c.offset = 100;
    vw_warp_seq_check(&seq, &c, &pos, &fs);
    assert_int_equal(fs.count, 2);
    assert_int_equal(fs.item[0].req, VW_REQ_WARP_W4_SSN_NEXT);
    assert_string_equal(fs.item[0].detail, "SSN 9, expected 8 (one more than the previous Send)");
    assert_int_equal(fs.item[1].req, VW_REQ_WARP_W4_SEND_OFFSET);
    assert_string_equal(fs.item[1].detail, "Offset 100 in the first chunk of Send 9, expected 0");

    /* RDMA: a new PDU starts anywhere; a continuation with another RID and a gap breaks twice */
    struct vw_warp_chunk r = {.type = VW_WARP_RDMA, .rid = 0x10, .offset = 1ull << 32, .payload_len = 6};
    vw_findings_clear(&fs);
    vw_warp_seq_check(&seq, &r, &pos, &fs);
    assert_int_equal(fs.count, 0);
    assert_false(pos.offset_known);
    r.rid = 0x11;
    r.offset = 64;
    r.flags = VW_WARP_FLAG_L;
    vw_warp_seq_check(&seq, &r, &pos, &fs);
    assert_true(pos.continuation);
    assert_int_equal(pos.expected_offset, (1ull << 32) + 6);
    assert_int_equal(fs.count, 2);
    assert_int_equal(fs.item[0].req, VW_REQ_WARP_W4_RDMA_CONTIGUOUS);
    assert_int_equal(fs.item[1].req, VW_REQ_WARP_W4_RDMA_CONTIGUOUS);
    assert_string_equal(fs.item[1].detail, "Offset 64 does not continue the previous chunk (expected 4294967302)");

    /* unknown types change nothing; a NULL pos is allowed */
    struct vw_warp_seq before = seq;
    struct vw_warp_chunk u = {.type = 5};
    vw_warp_seq_check(&seq, &u, NULL, NULL);
    assert_memory_equal(&before, &seq, sizeof seq);
}

static void test_framer_error_sticky_and_resync(void **state)
{
    (void)state;
    uint8_t s[256];
    size_t n = put_chunk(s, VW_WARP_SEND, VW_WARP_FLAG_L, 1, 0, "ok");
    /* a chunk claiming 4 bytes cannot be framed */
    const uint8_t bad[4] = {0x00, 0x01, 0x00, 0x04};
    memcpy(s + n, bad, 4);
    struct vw_warp_framer f;
    struct got g = {0};
    assert_int_equal(vw_warp_framer_init(&f), 0);
    assert_int_equal(vw_warp_framer_feed(&f, s, n + 4, on_chunk, &g), VW_REQ_WARP_A_CHUNK_LEN);
    assert_int_equal(g.n, 1);
    assert_int_equal(vw_warp_framer_feed(&f, s, n, on_chunk, &g), VW_REQ_WARP_A_CHUNK_LEN);
    assert_int_equal(g.n, 1);
    vw_warp_framer_resync(&f, 1000);
    assert_int_equal(vw_warp_framer_feed(&f, s, n, on_chunk, &g), VW_REQ_NONE);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.off[1], 1000);
    /* split header: the error is found once the length arrives */
    vw_warp_framer_resync(&f, 0);
    const uint8_t rdma_short[4] = {0x10, 0x00, 0x00, 0x10}; /* RDMA, 16 < 20 */
    assert_int_equal(vw_warp_framer_feed(&f, rdma_short, 2, on_chunk, &g), VW_REQ_NONE);
    assert_int_equal(vw_warp_framer_feed(&f, rdma_short + 2, 2, on_chunk, &g), VW_REQ_WARP_A_CHUNK_LEN);
    assert_true(vw_warp_plausible_header(s, n));
    assert_false(vw_warp_plausible_header(rdma_short, 4));
    assert_false(vw_warp_plausible_header(s, 3));
    vw_warp_framer_free(&f);
}

static void test_garbage_never_overreads(void **state)
{
    (void)state;
    srand(12345);
    for (int round = 0; round < 300; round++) {
        size_t n = (size_t)(rand() % 300);
        uint8_t tmp[300];
        for (size_t i = 0; i < n; i++)
            tmp[i] = (uint8_t)rand();
        if (n >= 4 && (round & 1)) { /* make the length plausible half the time */
            tmp[2] = 0;
            tmp[3] = (uint8_t)(8 + rand() % 60);
        }
        struct vw_warp_chunk c;
        struct vw_findings fs;
        (void)decode_exact(tmp, n, &c, &fs);
        struct vw_warp_framer f;
        assert_int_equal(vw_warp_framer_init(&f), 0);
        size_t p = 0;
        while (p < n) {
            size_t k = 1 + (size_t)(rand() % 40);
            if (k > n - p)
                k = n - p;
            uint8_t *piece = exact(tmp + p, k);
            enum vw_req r = vw_warp_framer_feed(&f, piece, k, NULL, NULL);
            free(piece);
            p += k;
            if (r != VW_REQ_NONE)
                break;
        }
        vw_warp_framer_free(&f);
    }
}

/* ------------------------------------------------ hand-made chunks */

/* A chunk written byte by byte: the first word and the type's fields as
 * given (hdr, hlen bytes), the payload, then zlib's Adler-32 big-endian;
 * the Chunk length (bytes 2-3) is filled in. None of our encoders is used. */
static size_t hand(uint8_t *out, const uint8_t *hdr, size_t hlen, const void *payload, size_t plen)
{
    memcpy(out, hdr, hlen);
    if (plen)
        memcpy(out + hlen, payload, plen);
    size_t n = hlen + plen + 4;
    out[2] = (uint8_t)(n >> 8);
    out[3] = (uint8_t)n;
    uLong a = adler32(adler32(0L, Z_NULL, 0), out, (uInt)(n - 4));
    out[n - 4] = (uint8_t)(a >> 24);
    out[n - 3] = (uint8_t)(a >> 16);
    out[n - 2] = (uint8_t)(a >> 8);
    out[n - 1] = (uint8_t)a;
    return n;
}

/* Send: word 0x000F & flags (E=4 C=2 L=1), SSN, 32-bit offset. */
static size_t hand_send(uint8_t *out, uint8_t flags, uint32_t ssn, uint32_t off, const void *p, size_t n)
{
    const uint8_t h[12] = {0x00, flags, 0, 0, (uint8_t)(ssn >> 24), (uint8_t)(ssn >> 16), (uint8_t)(ssn >> 8),
                           (uint8_t)ssn, (uint8_t)(off >> 24), (uint8_t)(off >> 16), (uint8_t)(off >> 8), (uint8_t)off};
    return hand(out, h, sizeof h, p, n);
}

/* RDMA Write: type 1 in the top nibble, RID, 64-bit offset. */
static size_t hand_rdma(uint8_t *out, uint8_t flags, uint32_t rid, uint64_t off, const void *p, size_t n)
{
    uint8_t h[16] = {0x10, flags, 0, 0, (uint8_t)(rid >> 24), (uint8_t)(rid >> 16), (uint8_t)(rid >> 8), (uint8_t)rid};
    for (int i = 0; i < 8; i++)
        h[8 + i] = (uint8_t)(off >> (56 - 8 * i));
    return hand(out, h, sizeof h, p, n);
}

/* Findings of a byte stream through the framer, plus the end of stream. */
struct verdicts {
    unsigned n;
    enum vw_req rule[32];
    enum vw_severity sev[32];
    char detail[32][VW_FINDING_DETAIL_MAX];
    unsigned chunks;
    bool iscsi;
    struct vw_warp_iscsi is;
};

static void keep(struct verdicts *v, const struct vw_findings *fs)
{
    for (unsigned i = 0; i < fs->count && v->n < 32; i++, v->n++) {
        v->rule[v->n] = fs->item[i].req;
        v->sev[v->n] = fs->item[i].severity;
        strcpy(v->detail[v->n], fs->item[i].detail);
    }
}

static void on_verdict(void *ctx, const uint8_t *raw, size_t len, uint64_t off,
                       const struct vw_warp_chunk *c, enum vw_req err, const struct vw_findings *fs)
{
    (void)raw, (void)len, (void)off;
    struct verdicts *v = ctx;
    v->chunks++;
    struct vw_findings all = *fs;
    if (v->iscsi && err == VW_REQ_NONE)
        vw_warp_iscsi_check(&v->is, c, &all);
    keep(v, &all);
}

static void run_stream(struct verdicts *v, const uint8_t *s, size_t n, bool iscsi)
{
    memset(v, 0, sizeof *v);
    v->iscsi = iscsi;
    vw_warp_iscsi_init(&v->is);
    struct vw_warp_framer f;
    assert_int_equal(vw_warp_framer_init(&f), 0);
    uint8_t *d = exact(s, n);
    assert_int_equal(vw_warp_framer_feed(&f, d, n, on_verdict, v), VW_REQ_NONE);
    free(d);
    struct vw_findings end;
    vw_findings_clear(&end);
    vw_warp_framer_finish(&f, &end);
    if (iscsi)
        vw_warp_iscsi_finish(&v->is, &end);
    keep(v, &end);
    vw_warp_framer_free(&f);
}

static void test_hand_made_send_decodes(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = hand_send(b, 0x03, 0x11223344u, 0, "warp", 4);
    /* the exact bytes: word, length 20, SSN, offset 0, "warp", Adler-32 of the 16 before */
    const uint8_t want[16] = {0x00, 0x03, 0x00, 0x14, 0x11, 0x22, 0x33, 0x44, 0, 0, 0, 0, 'w', 'a', 'r', 'p'};
    assert_int_equal(n, 20);
    assert_memory_equal(b, want, 16);
    assert_int_equal(vw_get_be32_for_test(b + 16), vw_adler32(want, 16));
    struct vw_warp_chunk c;
    struct vw_findings fs;
    assert_int_equal(decode_exact(b, n, &c, &fs), VW_REQ_NONE);
    assert_int_equal(fs.count, 0);
    assert_int_equal(c.ssn, 0x11223344u);
    assert_int_equal(c.flags, VW_WARP_FLAG_C | VW_WARP_FLAG_L);
    /* one flipped payload bit: the Adler-32 names it */
    b[13] ^= 0x01;
    assert_int_equal(decode_exact(b, n, &c, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_WARP_A_ADLER_VALID));
}

/* WARP-SUMMARY-L-LAST: the next Send starting cleanly over an open one, and
 * a stream ending inside a Send, an RDMA PDU or a chunk. */
static void test_last_bit_missing(void **state)
{
    (void)state;
    uint8_t s[256];
    size_t n = hand_send(s, 0x00, 5, 0, "abcd", 4); /* no L */
    n += hand_send(s + n, 0x01, 6, 0, "x", 1);
    struct verdicts v;
    run_stream(&v, s, n, false);
    assert_int_equal(v.chunks, 2);
    assert_int_equal(v.n, 1);
    assert_int_equal(v.rule[0], VW_REQ_WARP_SUMMARY_L_LAST);
    assert_string_equal(v.detail[0], "Send 6 starts while Send 5 has no chunk with the Last bit");

    /* a new SSN at a non-zero offset is still a wrong SSN */
    n = hand_send(s, 0x00, 5, 0, "abcd", 4);
    n += hand_send(s + n, 0x01, 7, 4, "x", 1);
    run_stream(&v, s, n, false);
    assert_int_equal(v.n, 1);
    assert_int_equal(v.rule[0], VW_REQ_WARP_W4_SSN_NEXT);

    /* the stream ends inside Send 9, inside an RDMA PDU, and inside a chunk */
    n = hand_send(s, 0x01, 8, 0, "ok", 2);
    n += hand_send(s + n, 0x00, 9, 0, "open", 4);
    n += hand_rdma(s + n, 0x00, 0x77, 4096, "rdma", 4);
    size_t whole = n;
    n += hand_send(s + n, 0x01, 10, 0, "cut", 3);
    run_stream(&v, s, n - 2, false);
    assert_int_equal(v.chunks, 3);
    assert_int_equal(v.n, 3);
    assert_int_equal(v.rule[0], VW_REQ_WARP_A_TRUNCATED);
    assert_int_equal(v.rule[1], VW_REQ_WARP_SUMMARY_L_LAST);
    assert_string_equal(v.detail[1], "stream ended inside Send 9: no chunk with the Last bit");
    assert_int_equal(v.rule[2], VW_REQ_WARP_SUMMARY_L_LAST);
    assert_non_null(strstr(v.detail[2], "RID 0x00000077"));
    run_stream(&v, s, whole - 0, false);
    assert_int_equal(v.n, 2); /* no partial chunk */
}

/* W13 and W15: E is a note; the readings W1-W3 rejected are named. */
static void test_rejected_readings_named(void **state)
{
    (void)state;
    uint8_t s[256];
    struct vw_warp_chunk c;
    struct vw_findings fs;
    /* E: the sender's signal, a note */
    size_t n = hand_send(s, 0x05, 1, 0, "e", 1);
    assert_int_equal(decode_exact(s, n, &c, &fs), VW_REQ_NONE);
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_WARP_E_TXERR);
    assert_int_equal(fs.item[0].severity, VW_SEV_NOTE);
    /* an RDMA Write with the 8-bit Type code: first byte 0x01 */
    n = hand_rdma(s, 0x01, 9, 0, "eight bit", 9);
    s[0] = 0x01;
    uint32_t a = vw_adler32(s, n - 4);
    s[n - 4] = (uint8_t)(a >> 24), s[n - 3] = (uint8_t)(a >> 16), s[n - 2] = (uint8_t)(a >> 8), s[n - 1] = (uint8_t)a;
    assert_int_equal(decode_exact(s, n, &c, &fs), VW_REQ_WARP_A_TYPE_KNOWN);
    assert_int_equal(fs.count, 1);
    assert_non_null(strstr(fs.item[0].detail, "8-bit Type"));
    /* reserved bits elsewhere are still only a note */
    s[0] = 0x08;
    a = vw_adler32(s, n - 4);
    s[n - 4] = (uint8_t)(a >> 24), s[n - 3] = (uint8_t)(a >> 16), s[n - 2] = (uint8_t)(a >> 8), s[n - 1] = (uint8_t)a;
    assert_int_equal(decode_exact(s, n, &c, &fs), VW_REQ_NONE);
    assert_false(vw_findings_has(&fs, VW_REQ_WARP_A_TYPE_KNOWN));

    /* a Chunk length without the Adler-32: the framer names it at the next "header" */
    n = hand_send(s, 0x01, 1, 0, "abcdefgh", 8);      /* 24 bytes */
    s[3] = (uint8_t)(n - 4);                          /* length 20: Adler-32 left out */
    a = vw_adler32(s, n - 4);                         /* ... and computed over those 20 */
    s[n - 4] = (uint8_t)(a >> 24), s[n - 3] = (uint8_t)(a >> 16), s[n - 2] = (uint8_t)(a >> 8), s[n - 1] = (uint8_t)a;
    size_t m = n;
    memcpy(s + m, s, n);                              /* a second one like it */
    m += n;
    struct vw_warp_framer f;
    assert_int_equal(vw_warp_framer_init(&f), 0);
    struct verdicts v;
    memset(&v, 0, sizeof v);
    uint8_t *d = exact(s, m);
    assert_int_equal(vw_warp_framer_feed(&f, d, m, on_verdict, &v), VW_REQ_WARP_A_CHUNK_LEN);
    free(d);
    assert_true(f.no_adler_reading);
    assert_int_equal(v.chunks, 1);
    assert_int_equal(v.n, 1);
    assert_int_equal(v.rule[0], VW_REQ_WARP_A_ADLER_VALID);
    vw_warp_framer_free(&f);
    /* a bad Adler-32 alone is no such reading */
    n = hand_send(s, 0x01, 1, 0, "abcdefgh", 8);
    s[n - 1] ^= 0xFF;
    m = n + hand_send(s + n, 0x01, 2, 0, "next", 4);
    assert_int_equal(vw_warp_framer_init(&f), 0);
    memset(&v, 0, sizeof v);
    d = exact(s, m);
    assert_int_equal(vw_warp_framer_feed(&f, d, m, on_verdict, &v), VW_REQ_NONE);
    free(d);
    assert_false(f.no_adler_reading);
    assert_int_equal(v.chunks, 2);
    vw_warp_framer_free(&f);
}

/* W17: a Chunk length of the payload only, rewritten by hand over a hand-made
 * chunk (the Adler-32 then recomputed over the same bytes, with zlib). */
static size_t payload_only(uint8_t *s, size_t n, size_t hdr, bool adler_ok)
{
    s[2] = (uint8_t)((n - hdr - 4) >> 8);
    s[3] = (uint8_t)(n - hdr - 4);
    uLong a = adler32(adler32(0L, Z_NULL, 0), s, (uInt)(n - 4)) ^ (adler_ok ? 0u : 0xFFu);
    s[n - 4] = (uint8_t)(a >> 24), s[n - 3] = (uint8_t)(a >> 16), s[n - 2] = (uint8_t)(a >> 8), s[n - 1] = (uint8_t)a;
    return n;
}

static void test_warp_payload_only_reading(void **state)
{
    (void)state;
    uint8_t s[256];
    char pl[64];
    memset(pl, 'p', sizeof pl);
    /* a right chunk is no such reading, with or without bytes after it */
    size_t n = hand_send(s, 0x01, 1, 0, pl, 40);
    size_t m = n + hand_send(s + n, 0x01, 2, 0, pl, 8);
    assert_int_equal(vw_warp_payload_only(s, m), VW_WARP_PO_NO);
    assert_int_equal(vw_warp_payload_only(s, n), VW_WARP_PO_NO);
    /* payload-only Send of 40: its Adler-32 checks out read so */
    n = payload_only(s, hand_send(s, 0x01, 1, 0, pl, 40), 12, true);
    assert_int_equal(vw_warp_payload_only(s, n), VW_WARP_PO_ADLER);
    assert_int_equal(vw_warp_payload_only(s, n - 1), VW_WARP_PO_NO); /* not at hand */
    assert_non_null(strstr(vw_warp_payload_only_text(VW_WARP_PO_ADLER), "payload only"));
    assert_null(vw_warp_payload_only_text(VW_WARP_PO_NO));
    /* the same framed for W2 decodes with a bad Adler-32 and the framer stops there */
    uint8_t *d = exact(s, n);
    struct vw_warp_framer f;
    struct verdicts v;
    assert_int_equal(vw_warp_framer_init(&f), 0);
    memset(&v, 0, sizeof v);
    assert_int_equal(vw_warp_framer_feed(&f, d, n, on_verdict, &v), VW_REQ_WARP_A_CHUNK_LEN);
    assert_int_equal(f.payload_only, VW_WARP_PO_ADLER);
    assert_int_equal(v.chunks, 0); /* the chunk W2 would read is not delivered */
    vw_warp_framer_free(&f);
    free(d);
    /* its first word split across two feeds: read on to the end of the second, as TCP does for the plugin */
    for (size_t cut = 1; cut < 4; cut++) {
        assert_int_equal(vw_warp_framer_init(&f), 0);
        uint8_t *a1 = exact(s, cut), *a2 = exact(s + cut, n - cut);
        assert_int_equal(vw_warp_framer_feed(&f, a1, cut, NULL, NULL), VW_REQ_NONE);
        assert_int_equal(vw_warp_framer_feed(&f, a2, n - cut, NULL, NULL), VW_REQ_WARP_A_CHUNK_LEN);
        assert_int_equal(f.payload_only, VW_WARP_PO_ADLER);
        vw_warp_framer_free(&f);
        free(a1);
        free(a2);
    }
    /* the chunk's bytes in two feeds after a whole first word: not at hand, W2's verdicts */
    assert_int_equal(vw_warp_framer_init(&f), 0);
    d = exact(s, 8);
    assert_int_equal(vw_warp_framer_feed(&f, d, 8, NULL, NULL), VW_REQ_NONE);
    free(d);
    d = exact(s + 8, n - 8);
    assert_int_equal(vw_warp_framer_feed(&f, d, n - 8, NULL, NULL), VW_REQ_NONE);
    free(d);
    assert_int_equal(f.payload_only, VW_WARP_PO_NO);
    vw_warp_framer_free(&f);
    /* under the type's header (8 payload bytes): W2 cannot frame, the reading can */
    n = payload_only(s, hand_send(s, 0x01, 1, 0, pl, 8), 12, true);
    assert_int_equal(vw_warp_payload_only(s, n), VW_WARP_PO_ADLER);
    d = exact(s, n);
    assert_int_equal(vw_warp_framer_init(&f), 0);
    assert_int_equal(vw_warp_framer_feed(&f, d, n, NULL, NULL), VW_REQ_WARP_A_CHUNK_LEN);
    assert_int_equal(f.payload_only, VW_WARP_PO_ADLER);
    vw_warp_framer_free(&f);
    free(d);
    /* RDMA Write, Adler-32 wrong either way: named by the next header only */
    n = payload_only(s, hand_rdma(s, 0x01, 9, 0, pl, 30), 16, false);
    assert_int_equal(vw_warp_payload_only(s, n), VW_WARP_PO_NO);
    m = n + hand_send(s + n, 0x01, 2, 0, pl, 4);
    assert_int_equal(vw_warp_payload_only(s, m), VW_WARP_PO_NEXT);
    s[n] |= 0x08; /* a reserved bit: no header */
    assert_int_equal(vw_warp_payload_only(s, m), VW_WARP_PO_NO);
    /* W15's reading (Adler-32 left out) is not this one */
    n = hand_send(s, 0x01, 1, 0, pl, 40);
    s[3] = (uint8_t)(n - 4);
    uLong a = adler32(adler32(0L, Z_NULL, 0), s, (uInt)(n - 4));
    s[n - 4] = (uint8_t)(a >> 24), s[n - 3] = (uint8_t)(a >> 16), s[n - 2] = (uint8_t)(a >> 8), s[n - 1] = (uint8_t)a;
    m = n + hand_send(s + n, 0x01, 2, 0, pl, 4);
    assert_int_equal(vw_warp_payload_only(s, m), VW_WARP_PO_NO);
    /* unknown type, short input */
    s[0] = 0x70;
    assert_int_equal(vw_warp_payload_only(s, m), VW_WARP_PO_NO);
    assert_int_equal(vw_warp_payload_only(s, 3), VW_WARP_PO_NO);
}

/* A Send sent again with its SSN breaks SSN-NEXT (W4) first; the same
 * first chunk again is also named WARP-INTRO-NO-WARP-RETRANSMIT (W21). */
static void test_warp_does_not_retransmit(void **state)
{
    (void)state;
    uint8_t s[128];
    size_t n = hand_send(s, 0x01, 41, 0, "once", 4);
    n += hand_send(s + n, 0x01, 41, 0, "once", 4);
    n += hand_send(s + n, 0x01, 42, 0, "next", 4);
    struct verdicts v;
    run_stream(&v, s, n, false);
    assert_int_equal(v.n, 2);
    assert_int_equal(v.rule[0], VW_REQ_WARP_W4_SSN_NEXT);
    assert_string_equal(v.detail[0], "SSN 41, expected 42 (one more than the previous Send)");
    assert_int_equal(v.rule[1], VW_REQ_WARP_INTRO_NO_RELIABLE_DELIVERY);
    assert_string_equal(v.detail[1], "Send 41 sent again after its Last chunk (the same first chunk): WARP does not "
                                     "retransmit (TCP does)");
    /* another Send with the SSN of the one before: SSN-NEXT only */
    n = hand_send(s, 0x01, 41, 0, "once", 4);
    n += hand_send(s + n, 0x01, 41, 0, "more", 4);
    run_stream(&v, s, n, false);
    assert_int_equal(v.n, 1);
    assert_int_equal(v.rule[0], VW_REQ_WARP_W4_SSN_NEXT);
}

/* W21: a Send that goes on at its next offset after a chunk with L had its
 * L too early (WARP-SUMMARY-L-LAST), not a retransmission or a bad offset. */
static void test_early_last_bit(void **state)
{
    (void)state;
    uint8_t s[128];
    size_t n = hand_send(s, 0x01, 5, 0, "abc", 3);
    n += hand_send(s + n, 0x01, 5, 3, "def", 3);
    n += hand_send(s + n, 0x01, 6, 0, "ghi", 3);
    struct verdicts v;
    run_stream(&v, s, n, false);
    assert_int_equal(v.n, 1);
    assert_int_equal(v.rule[0], VW_REQ_WARP_SUMMARY_L_LAST);
    assert_string_equal(v.detail[0], "Send 5 continues at offset 3 after a chunk with the Last bit: L was set on a "
                                     "chunk that was not its last");
}

/* W21: a Chunk length 4 more than the chunk (its Adler-32 right 4 bytes
 * earlier) is WARP-A-CHUNK-LEN, not a bad Adler-32, and framing is lost. */
static void test_chunk_len_four_too_long(void **state)
{
    (void)state;
    uint8_t s[128];
    size_t n = hand_send(s, 0x01, 1, 0, "hello", 5);
    size_t m = n + hand_send(s + n, 0x01, 2, 0, "world", 5);
    s[3] = (uint8_t)(n + 4); /* the sender's length counts 4 more; its Adler-32 covers that header */
    uLong a = adler32(adler32(0L, Z_NULL, 0), s, (uInt)(n - 4));
    s[n - 4] = (uint8_t)(a >> 24), s[n - 3] = (uint8_t)(a >> 16), s[n - 2] = (uint8_t)(a >> 8), s[n - 1] = (uint8_t)a;
    struct verdicts v;
    memset(&v, 0, sizeof v);
    struct vw_warp_framer f;
    assert_int_equal(vw_warp_framer_init(&f), 0);
    uint8_t *d = exact(s, m);
    assert_int_equal(vw_warp_framer_feed(&f, d, m, on_verdict, &v), VW_REQ_WARP_A_CHUNK_LEN);
    free(d);
    vw_warp_framer_free(&f);
    assert_int_equal(v.chunks, 1);
    assert_int_equal(v.n, 1);
    assert_int_equal(v.rule[0], VW_REQ_WARP_A_CHUNK_LEN);
    assert_non_null(strstr(v.detail[0], "is 4 more than the chunk"));
}

static void test_region_find(void **state)
{
    (void)state;
    const struct vw_warp_region r[2] = {{.rid = 1, .base = 0x10000000u, .len = 4096},
                                        {.rid = 0x99, .base = 0, .len = 100}};
    struct vw_warp_chunk c = {.type = VW_WARP_RDMA, .rid = 1, .offset = 0x10000000u + 4000, .payload_len = 96};
    struct vw_findings fs;
    size_t idx = 9;
    uint64_t at = 9;
    vw_findings_clear(&fs);
    assert_int_equal(vw_warp_region_find(r, 2, &c, &idx, &at, &fs), VW_REQ_NONE);
    assert_int_equal(idx, 0);
    assert_int_equal(at, 4000);
    assert_int_equal(fs.count, 0);
    c.payload_len = 97; /* one byte past the end */
    assert_int_equal(vw_warp_region_find(r, 2, &c, &idx, &at, &fs), VW_REQ_WARP_INTRO_REGION_BOUNDS);
    c.offset = 0x10000000u - 1; /* one byte below the base */
    c.payload_len = 1;
    assert_int_equal(vw_warp_region_find(r, 2, &c, &idx, &at, &fs), VW_REQ_WARP_INTRO_REGION_BOUNDS);
    c.offset = UINT64_MAX; /* no wrap-around past 2^64 */
    assert_int_equal(vw_warp_region_find(r, 2, &c, &idx, &at, &fs), VW_REQ_WARP_INTRO_REGION_BOUNDS);
    c.rid = 0x99; /* zero-based: offset 99 is the last byte */
    c.offset = 99;
    assert_int_equal(vw_warp_region_find(r, 2, &c, &idx, &at, &fs), VW_REQ_NONE);
    assert_int_equal(idx, 1);
    assert_int_equal(at, 99);
    c.rid = 2;
    vw_findings_clear(&fs);
    assert_int_equal(vw_warp_region_find(r, 2, &c, &idx, &at, &fs), VW_REQ_WARP_INTRO_RDMA_RID_ALLOCATED);
    assert_string_equal(fs.item[0].detail, "RDMA Write to RID 0x00000002, which the receiver never announced");
    assert_int_equal(vw_warp_region_find(NULL, 0, &c, &idx, &at, NULL), VW_REQ_WARP_INTRO_RDMA_RID_ALLOCATED);
}

/* ---------------------------------------------------- iSCSI (B) */

/* A SCSI Data-In header (RFC 3720 10.7) as written by hand: F, 4096 data
 * bytes, ITT 0x00000007, TTT 0xffffffff, Buffer Offset 0x200. */
static const uint8_t data_in_hand[48] = {
    0x25, 0x80, 0, 0, 0, 0x00, 0x10, 0x00, 0, 0, 0, 0, 0, 0, 0, 0,
    0, 0, 0, 7, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0, 0, 0, 0, 3,
    0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0x02, 0x00, 0, 0, 0, 0};

/* W16: the dissector's test before it hands a Send ULP PDU to iSCSI. */
static void test_iscsi_looks_like_pdu(void **state)
{
    (void)state;
    uint8_t b[48 + 64];
    memset(b, 0, sizeof b);
    /* a SCSI Response (no data): exactly 48 bytes */
    vw_iscsi_put_scsi_rsp(b, 0xA1, 0, 5, 2, 1);
    assert_true(vw_iscsi_looks_like_pdu(b, 48));
    assert_false(vw_iscsi_looks_like_pdu(b, 52));   /* bytes the header does not count */
    assert_false(vw_iscsi_looks_like_pdu(b, 47));
    assert_false(vw_iscsi_looks_like_pdu(NULL, 48));
    b[0] = 0x21 | 0x40;                               /* a target's opcode with the I bit */
    assert_false(vw_iscsi_looks_like_pdu(b, 48));
    b[0] = 0x21 | 0x80;                               /* byte 0's reserved bit */
    assert_false(vw_iscsi_looks_like_pdu(b, 48));
    for (unsigned op = 0; op < 64; op++) {            /* only the opcodes RFC 3720 defines */
        b[0] = (uint8_t)op;
        bool known = op <= 0x06 || op == 0x10 || (op >= 0x20 && op <= 0x26) || op == 0x31 || op == 0x32 ||
                     op == 0x3F;
        assert_int_equal(vw_iscsi_looks_like_pdu(b, 48), known);
    }
    /* a Data-In header with its 4096 bytes by RDMA Write (B.4): the header alone */
    vw_iscsi_put_data_in(b, 7, 4096, 0, 0, 3);
    assert_true(vw_iscsi_looks_like_pdu(b, 48));
    assert_false(vw_iscsi_looks_like_pdu(b, 48 + 64));
    /* a Data-Out with 61 bytes of data in the PDU: padded to 64 */
    vw_iscsi_put_data_out(b, 9, VW_ISCSI_TTT_NONE, 61, 0, 0, 1);
    assert_true(vw_iscsi_looks_like_pdu(b, 48 + 64));
    assert_false(vw_iscsi_looks_like_pdu(b, 48 + 61));
    /* an AHS counts: TotalAHSLength 4 words */
    vw_iscsi_put_scsi_cmd(b, true, 0xA1, 1536, 1, 0, 0x10);
    b[4] = 4;
    assert_true(vw_iscsi_looks_like_pdu(b, 48 + 16));
    assert_false(vw_iscsi_looks_like_pdu(b, 48));
    /* a SCSI Command's header alone with a data segment is not the RDMA case */
    b[4] = 0;
    b[7] = 8;
    assert_false(vw_iscsi_looks_like_pdu(b, 48));
    assert_true(vw_iscsi_looks_like_pdu(b, 56));
    /* text that happens to start like a NOP-Out does not have its lengths */
    static const uint8_t text[48] = "\0hello, this is not an iSCSI PDU but 48 bytes.";
    memcpy(b, text, sizeof text);
    assert_false(vw_iscsi_looks_like_pdu(b, 48));
}

static void test_iscsi_headers(void **state)
{
    (void)state;
    uint8_t b[48];
    vw_iscsi_put_data_in(b, 7, 4096, 0x200, 0, 3);
    assert_memory_equal(b, data_in_hand, 48);
    struct vw_iscsi_hdr h;
    assert_true(vw_iscsi_hdr_read(b, 48, &h));
    assert_int_equal(h.opcode, VW_ISCSI_DATA_IN);
    assert_int_equal(h.data_len, 4096);
    assert_int_equal(h.itt, 7);
    assert_int_equal(h.buffer_offset, 0x200);
    assert_int_equal(vw_iscsi_pdu_len(&h), 48 + 4096);
    assert_false(vw_iscsi_hdr_read(b, 47, &h));

    /* SCSI Command READ(10) of 3 blocks: F|R|Simple, EDTL, CDB 28 .. 00 03 */
    vw_iscsi_put_scsi_cmd(b, true, 0xA1, 1536, 1, 0, 0x10);
    assert_int_equal(b[0], 0x01);
    assert_int_equal(b[1], 0xC1);
    assert_int_equal(vw_get_be32_for_test(b + 20), 1536);
    const uint8_t cdb[10] = {0x28, 0, 0, 0, 0, 0x10, 0, 0, 3, 0};
    assert_memory_equal(b + 32, cdb, 10);
    /* SCSI Response: Good, StatSN 5 */
    vw_iscsi_put_scsi_rsp(b, 0xA1, 0, 5, 2, 1);
    assert_int_equal(b[0], 0x21);
    assert_int_equal(b[1], 0x80);
    assert_int_equal(b[3], 0);
    assert_int_equal(vw_get_be32_for_test(b + 24), 5);
    assert_true(vw_iscsi_hdr_read(b, 48, &h));
    assert_int_equal(vw_iscsi_pdu_len(&h), 48);
    /* R2T and Data-Out carry the Target Transfer Tag at byte 20 */
    vw_iscsi_put_r2t(b, 0xA2, 0x55, 0, 1024, 6, 3);
    assert_true(vw_iscsi_hdr_read(b, 48, &h));
    assert_int_equal(h.opcode, VW_ISCSI_R2T);
    assert_int_equal(h.word20, 0x55);
    assert_int_equal(h.desired_len, 1024);
    vw_iscsi_put_data_out(b, 0xA2, 0x55, 1024, 0, 0, 7);
    assert_int_equal(b[0], 0x05);
    assert_string_equal(vw_iscsi_opcode_name(VW_ISCSI_DATA_IN), "SCSI Data-In");
    assert_string_equal(vw_iscsi_opcode_name(0x3F), "iSCSI PDU");
}

/* The target's side of a READ: data by RDMA Write at the header's offset to
 * RID = ITT, then the Data-In header's Send, then the SCSI Response. */
static size_t iscsi_read_stream(uint8_t *s, const uint8_t *data_in_hdr, uint8_t rdma_flags_last,
                                uint8_t hdr_flags, bool out_of_order)
{
    static uint8_t data[4096];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 13);
    size_t n = 0;
    if (out_of_order) { /* three RDMA PDUs: first, last, middle quarter pair */
        n += hand_rdma(s + n, 0x01, 7, 0x200, data, 1024);
        n += hand_rdma(s + n, 0x01, 7, 0x200 + 3072, data + 3072, 1024);
        n += hand_rdma(s + n, 0x01, 7, 0x200 + 1024, data + 1024, 2048);
    } else {
        n += hand_rdma(s + n, 0x00, 7, 0x200, data, 3000);
        n += hand_rdma(s + n, rdma_flags_last, 7, 0x200 + 3000, data + 3000, 1096);
    }
    n += hand_send(s + n, hdr_flags, 1, 0, data_in_hdr, 48);
    uint8_t rsp[48];
    vw_iscsi_put_scsi_rsp(rsp, 7, 0, 3, 2, 1);
    n += hand_send(s + n, 0x03, 2, 0, rsp, 48);
    return n;
}

static void test_iscsi_read_good(void **state)
{
    (void)state;
    static uint8_t s[16384];
    size_t n = iscsi_read_stream(s, data_in_hand, 0x01, 0x03, false);
    struct verdicts v;
    run_stream(&v, s, n, true);
    assert_int_equal(v.chunks, 4);
    for (unsigned i = 0; i < v.n; i++)
        print_message("unexpected %s: %s\n", vw_req_id(v.rule[i]), v.detail[i]);
    assert_int_equal(v.n, 0);

    /* one RDMA Write PDU, then the header split over two Send chunks */
    size_t k = 0;
    static uint8_t t[16384];
    k += hand_rdma(t + k, 0x01, 7, 0x200, s, 4096);
    k += hand_send(t + k, 0x00, 1, 0, data_in_hand, 20);
    k += hand_send(t + k, 0x03, 1, 20, data_in_hand + 20, 28);
    run_stream(&v, t, k, true);
    assert_int_equal(v.n, 0);
}

static void expect_only(const uint8_t *s, size_t n, enum vw_req rule, enum vw_severity sev, const char *says)
{
    struct verdicts v;
    run_stream(&v, s, n, true);
    for (unsigned i = 0; i < v.n; i++)
        print_message("%s: %s\n", vw_req_id(v.rule[i]), v.detail[i]);
    assert_true(v.n >= 1);
    for (unsigned i = 0; i < v.n; i++) {
        assert_int_equal(v.rule[i], rule);
        assert_int_equal(v.sev[i], sev);
    }
    assert_non_null(strstr(v.detail[0], says));
}

static void test_iscsi_read_rules(void **state)
{
    (void)state;
    static uint8_t s[16384];
    uint8_t hdr[48];
    size_t n;
    /* C on the last RDMA Write of the data */
    n = iscsi_read_stream(s, data_in_hand, 0x03, 0x03, false);
    expect_only(s, n, VW_REQ_WARP_B4_RDMA_NO_COMPLETION, VW_SEV_ERROR, "Completion bit");
    /* the header's Send without C */
    n = iscsi_read_stream(s, data_in_hand, 0x01, 0x01, false);
    expect_only(s, n, VW_REQ_WARP_B4_NOTIFY_BY_HEADER, VW_SEV_WARN, "no Completion bit");
    /* the last quarter before the middle: each PDU fine by W4, not by B.4 */
    n = iscsi_read_stream(s, data_in_hand, 0x01, 0x03, true);
    expect_only(s, n, VW_REQ_WARP_B4_RDMA_OFFSET_NEXT, VW_SEV_ERROR, "offset 3584, expected 1536");
    /* a header whose Buffer Offset is not the first write's */
    vw_iscsi_put_data_in(hdr, 7, 4096, 0, 0, 3);
    n = iscsi_read_stream(s, hdr, 0x01, 0x03, false);
    expect_only(s, n, VW_REQ_WARP_B4_RDMA_FIRST_OFFSET, VW_SEV_ERROR, "first RDMA Write at offset 512, the SCSI Data-In's Buffer Offset is 0");
    /* RID not the Initiator Task Tag */
    vw_iscsi_put_data_in(hdr, 8, 4096, 0x200, 0, 3);
    n = iscsi_read_stream(s, hdr, 0x01, 0x03, false);
    expect_only(s, n, VW_REQ_WARP_B42_RID_IS_ITT, VW_SEV_ERROR, "Initiator Task Tag is 0x00000008");
    /* DataSegmentLength not what went by RDMA */
    vw_iscsi_put_data_in(hdr, 7, 4095, 0x200, 0, 3);
    n = iscsi_read_stream(s, hdr, 0x01, 0x03, false);
    expect_only(s, n, VW_REQ_WARP_B4_DATA_BY_RDMA, VW_SEV_ERROR, "4096 bytes of RDMA Writes before a SCSI Data-In with DataSegmentLength 4095");

    /* the data inside the Send, no RDMA Write at all */
    static uint8_t whole[48 + 8];
    vw_iscsi_put_data_in(whole, 7, 8, 0, 0, 3);
    n = hand_send(s, 0x03, 1, 0, whole, sizeof whole);
    expect_only(s, n, VW_REQ_WARP_B4_DATA_BY_RDMA, VW_SEV_ERROR, "carries 56 bytes");

    /* the status by RDMA Write: nothing but Data travels that way */
    uint8_t rsp[48];
    vw_iscsi_put_scsi_rsp(rsp, 7, 0, 3, 2, 1);
    n = hand_rdma(s, 0x01, 7, 0, rsp, 48);
    n += hand_send(s + n, 0x03, 1, 0, rsp, 48);
    expect_only(s, n, VW_REQ_WARP_B3_ISCSI_SEND, VW_SEV_ERROR, "48 bytes of RDMA Writes before a SCSI Response (opcode 0x21)");
    n = hand_rdma(s, 0x01, 7, 0, rsp, 48);
    expect_only(s, n, VW_REQ_WARP_B3_ISCSI_SEND, VW_SEV_ERROR, "no SCSI Data PDU header followed");
    /* a Send that is not one whole PDU: a response with 4 bytes more, a short one */
    static uint8_t longer[52];
    memcpy(longer, rsp, 48);
    n = hand_send(s, 0x03, 1, 0, longer, 52);
    expect_only(s, n, VW_REQ_WARP_B3_ISCSI_SEND, VW_SEV_ERROR, "a Send ULP PDU of 52 bytes holds a SCSI Response of 48 bytes");
    n = hand_send(s, 0x03, 1, 0, rsp, 47);
    expect_only(s, n, VW_REQ_WARP_B3_ISCSI_SEND, VW_SEV_ERROR, "cannot hold an iSCSI header");
}

/* The initiator's side of a WRITE: solicited data by RDMA to RID = TTT,
 * immediate data (TTT 0xffffffff) in the Send. */
static void test_iscsi_write_rules(void **state)
{
    (void)state;
    static uint8_t s[8192];
    static uint8_t data[1024];
    uint8_t hdr[48];
    vw_iscsi_put_data_out(hdr, 0xA2, 0x55, 1024, 0, 0, 7);
    size_t n = hand_rdma(s, 0x01, 0x55, 0, data, 1024);
    n += hand_send(s + n, 0x03, 1, 0, hdr, 48);
    struct verdicts v;
    run_stream(&v, s, n, true);
    assert_int_equal(v.n, 0);
    /* RID other than the Target Transfer Tag */
    n = hand_rdma(s, 0x01, 0x56, 0, data, 1024);
    n += hand_send(s + n, 0x03, 1, 0, hdr, 48);
    expect_only(s, n, VW_REQ_WARP_B41_RID_IS_TTT, VW_SEV_ERROR, "Target Transfer Tag is 0x00000055");
    /* immediate data in the Send: fine; after RDMA Writes: not */
    static uint8_t imm[48 + 1024];
    vw_iscsi_put_data_out(imm, 0xA2, VW_ISCSI_TTT_NONE, 1024, 0, 0, 7);
    n = hand_send(s, 0x03, 1, 0, imm, sizeof imm);
    run_stream(&v, s, n, true);
    assert_int_equal(v.n, 0);
    vw_iscsi_put_data_out(hdr, 0xA2, VW_ISCSI_TTT_NONE, 1024, 0, 0, 7);
    n = hand_rdma(s, 0x01, 0x55, 0, data, 1024);
    n += hand_send(s + n, 0x03, 1, 0, hdr, 48);
    struct verdicts w;
    run_stream(&w, s, n, true);
    assert_int_equal(w.n, 2);
    assert_int_equal(w.rule[0], VW_REQ_WARP_B3_IMMEDIATE_SEND);
    assert_int_equal(w.rule[1], VW_REQ_WARP_B3_IMMEDIATE_SEND);
    assert_non_null(strstr(w.detail[1], "a Send ULP PDU of 48 bytes holds a SCSI Data-Out of 1072 bytes"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_send_chunk_bytes),
        cmocka_unit_test(test_rdma_round_trip_every_field),
        cmocka_unit_test(test_decode_errors_name_rules),
        cmocka_unit_test(test_framer_every_split),
        cmocka_unit_test(test_framer_sequence_rules),
        cmocka_unit_test(test_seq_check_positions),
        cmocka_unit_test(test_framer_error_sticky_and_resync),
        cmocka_unit_test(test_garbage_never_overreads),
        cmocka_unit_test(test_hand_made_send_decodes),
        cmocka_unit_test(test_last_bit_missing),
        cmocka_unit_test(test_rejected_readings_named),
        cmocka_unit_test(test_warp_does_not_retransmit),
        cmocka_unit_test(test_early_last_bit),
        cmocka_unit_test(test_chunk_len_four_too_long),
        cmocka_unit_test(test_warp_payload_only_reading),
        cmocka_unit_test(test_region_find),
        cmocka_unit_test(test_iscsi_headers),
        cmocka_unit_test(test_iscsi_looks_like_pdu),
        cmocka_unit_test(test_iscsi_read_good),
        cmocka_unit_test(test_iscsi_read_rules),
        cmocka_unit_test(test_iscsi_write_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
