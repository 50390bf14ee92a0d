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
#include "vitcp/warp_stream.h"

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
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
