/* The observer's IFT reader (vw_ift_reader): the same PDUs whatever the
 * chunking, a sender that broke its CRC announcement kept in step, a PDU
 * over the limit an error with bounded memory, and errors that stick. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "vitcp/ift_stream.h"

#define MAX_PDUS 128
#define A_VTAG 0xA0A0
#define B_VTAG 0xB0B0

/* What the reader delivered, decoded as the lint decodes it. */
struct seen {
    struct vw_ift_nego *nego;
    unsigned n;
    size_t len[MAX_PDUS];
    uint64_t off[MAX_PDUS];
    bool ind[MAX_PDUS];
    unsigned crc_as_negotiated[MAX_PDUS];
    enum vw_req err[MAX_PDUS]; /* the decoder's verdict */
    unsigned stop_after;     /* stop reading after this many PDUs (0: never) */
};

static bool on_pdu(void *ctx, const uint8_t *raw, size_t len, uint64_t off, bool is_indication)
{
    struct seen *s = ctx;
    assert_non_null(raw);
    assert_true(s->n < MAX_PDUS);
    struct vw_findings fs;
    vw_findings_clear(&fs);
    enum vw_req err;
    if (is_indication) {
        struct vw_ift_ind ind;
        err = vw_ift_ind_decode(raw, len, &ind, &fs);
        if (err == VW_REQ_NONE)
            vw_ift_nego_indication(s->nego, 0, &ind, &fs);
    } else {
        struct vw_ift_frame_mode announced = {0}, carried;
        struct vw_ift_frame fr;
        vw_ift_nego_mode(s->nego, 0, &announced);
        err = vw_ift_frame_decode_as_sent(raw, len, &announced, &fr, &carried, &fs);
    }
    unsigned crc = 0;
    for (unsigned i = 0; i < fs.count; i++)
        crc += fs.item[i].req == VW_REQ_IFT_5_1_CRC_AS_NEGOTIATED;
    s->len[s->n] = len;
    s->off[s->n] = off;
    s->ind[s->n] = is_indication;
    s->crc_as_negotiated[s->n] = crc;
    s->err[s->n] = err;
    s->n++;
    return s->stop_after == 0 || s->n < s->stop_after;
}

static size_t put_ind(uint8_t *buf, unsigned phase, uint16_t vtag, bool hc, bool pc)
{
    struct vw_ift_ind_enc e;
    vw_ift_ind_enc_init(&e, phase, vtag, hc, pc);
    return vw_ift_ind_encode(&e, buf, VW_IFT_IND_LEN);
}

/* A frame with these CRCs (whatever its sender announced). */
static size_t put_frame(uint8_t *buf, size_t cap, bool hc, bool pc, const char *payload)
{
    const uint8_t ddp[VW_DDP_TAGGED_HDR_LEN] = {VW_DDP_FLAG_T | VW_DDP_FLAG_L | 1, 0x40 | VW_RDMAP_WRITE};
    struct vw_ift_frame_enc e;
    vw_ift_frame_enc_init(&e, B_VTAG, hc, pc, ddp, sizeof ddp, (const uint8_t *)payload, strlen(payload));
    size_t n = vw_ift_frame_encode(&e, buf, cap);
    assert_true(n > 0);
    return n;
}

/* A connection where B (side 1) has sent its phase 0 indication: A's
 * frames must carry B's VTag, which the reader's in-step rule looks for. */
static void nego_after_b(struct vw_ift_nego *n)
{
    uint8_t b[VW_IFT_IND_LEN];
    put_ind(b, 0, B_VTAG, false, false);
    struct vw_ift_ind ind;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    assert_int_equal(vw_ift_ind_decode(b, sizeof b, &ind, &fs), VW_REQ_NONE);
    vw_ift_nego_init(n);
    assert_true(vw_ift_nego_indication(n, 1, &ind, &fs));
}

/* A reader of A's side (0) with what it delivered. */
struct reading {
    struct vw_ift_nego nego;
    struct seen got;
    struct vw_ift_reader r;
};

static void start(struct reading *t, size_t limit, unsigned stop_after)
{
    nego_after_b(&t->nego);
    t->got = (struct seen){.nego = &t->nego, .stop_after = stop_after};
    vw_ift_reader_init(&t->r, &t->nego, 0, limit);
}

/* Read s[0..n) as chunks cut at cut1 and cut2 (cut1 <= cut2), then
 * finish; returns the bytes of an unfinished PDU left at the end. */
static size_t read_cut(const uint8_t *s, size_t n, size_t cut1, size_t cut2, struct seen *out)
{
    struct reading t;
    start(&t, VW_IFT_READ_LIMIT_MAX, 0);
    const size_t cuts[4] = {0, cut1, cut2, n};
    for (int i = 0; i < 3; i++) {
        size_t len = cuts[i + 1] - cuts[i];
        /* a chunk of its own, so any read outside it is caught */
        uint8_t *chunk = malloc(len ? len : 1);
        assert_non_null(chunk);
        memcpy(chunk, s + cuts[i], len);
        enum vw_ift_read_status st = vw_ift_reader_feed(&t.r, chunk, len, on_pdu, &t.got);
        free(chunk);
        if (st == VW_IFT_READ_FRAMING_LOST) { /* I13: a misframed frame's next bytes are no frame */
            vw_ift_reader_free(&t.r);
            *out = t.got;
            out->nego = NULL;
            return SIZE_MAX;
        }
        assert_int_equal(st, VW_IFT_READ_OK);
    }
    assert_int_equal(vw_ift_reader_finish(&t.r, on_pdu, &t.got), VW_IFT_READ_OK);
    assert_int_equal(t.r.stream_off + t.r.have, n);
    size_t left = t.r.have;
    vw_ift_reader_free(&t.r);
    *out = t.got;
    out->nego = NULL;
    return left;
}

static void assert_same(const struct seen *a, const struct seen *b)
{
    assert_int_equal(a->n, b->n);
    for (unsigned i = 0; i < a->n; i++) {
        assert_int_equal(a->len[i], b->len[i]);
        assert_int_equal(a->off[i], b->off[i]);
        assert_int_equal(a->ind[i], b->ind[i]);
        assert_int_equal(a->crc_as_negotiated[i], b->crc_as_negotiated[i]);
        assert_int_equal(a->err[i], b->err[i]);
    }
}

/* The indication and three frames of lens, back to back, each decoded
 * with no error and with crc[i] IFT-5.1-CRC-AS-NEGOTIATED findings. */
static void assert_stream(const struct seen *got, const size_t *lens, const unsigned *crc)
{
    assert_int_equal(got->n, 4);
    uint64_t off = 0;
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(got->len[i], lens[i]);
        assert_int_equal(got->off[i], off);
        assert_int_equal(got->ind[i], i == 0);
        assert_int_equal(got->err[i], VW_REQ_NONE);
        assert_int_equal(got->crc_as_negotiated[i], crc[i]);
        off += lens[i];
    }
}

/* A's indication announcing hc/pc, then three frames keeping it. */
static size_t kept_stream(uint8_t *s, size_t cap, bool hc, bool pc, size_t *lens)
{
    size_t n = lens[0] = put_ind(s, 1, A_VTAG, hc, pc);
    const char *payloads[3] = {"first", "", "third frame"};
    for (int i = 0; i < 3; i++) {
        lens[i + 1] = put_frame(s + n, cap - n, hc, pc, payloads[i]);
        n += lens[i + 1];
    }
    return n;
}

/* Chunk boundaries anywhere (also four bytes before a frame's end, where
 * a shorter CRC layout would end) give the frames one feed gives. */
static void test_every_split_as_one_feed(void **state)
{
    (void)state;
    const bool modes[4][2] = {{true, true}, {false, false}, {true, false}, {false, true}};
    for (int m = 0; m < 4; m++) {
        uint8_t s[512];
        size_t lens[4];
        size_t n = kept_stream(s, sizeof s, modes[m][0], modes[m][1], lens);
        struct seen whole;
        const unsigned none[4] = {0};
        assert_int_equal(read_cut(s, n, n, n, &whole), 0);
        assert_stream(&whole, lens, none);
        for (size_t c1 = 0; c1 <= n; c1++)
            for (size_t c2 = c1; c2 <= n; c2 += 7) {
                struct seen cut;
                assert_int_equal(read_cut(s, n, c1, c2, &cut), 0);
                assert_same(&whole, &cut);
            }
    }
}

/* A stream that keeps its announcement is delivered as it arrives: no
 * frame waits for the next one or for the end of the stream. */
static void test_kept_announcement_not_held_back(void **state)
{
    (void)state;
    uint8_t s[512];
    size_t lens[4];
    size_t n = kept_stream(s, sizeof s, true, true, lens);
    struct reading t;
    start(&t, VW_IFT_READ_LIMIT_MAX, 0);
    size_t pos = 0;
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(vw_ift_reader_feed(&t.r, s + pos, lens[i], on_pdu, &t.got), VW_IFT_READ_OK);
        pos += lens[i];
        assert_int_equal(t.got.n, i + 1);
    }
    assert_int_equal(pos, n);
    assert_int_equal(t.r.have, 0);
    assert_null(t.r.buf); /* nothing was ever split: no buffer */
    vw_ift_reader_free(&t.r);
}

/* A announces both CRCs, then sends a frame with the header CRC only, one
 * that keeps the announcement, and a last one with no CRC at all. */
static void test_broken_crc_announcement(void **state)
{
    (void)state;
    uint8_t s[512];
    size_t lens[4];
    size_t n = lens[0] = put_ind(s, 1, A_VTAG, true, true);
    n += lens[1] = put_frame(s + n, sizeof s - n, true, false, "header crc only");
    n += lens[2] = put_frame(s + n, sizeof s - n, true, true, "as announced");
    n += lens[3] = put_frame(s + n, sizeof s - n, false, false, "no crc, last");
    const unsigned findings[4] = {0, 1, 0, 2};

    struct seen whole;
    assert_int_equal(read_cut(s, n, n, n, &whole), 0);
    assert_stream(&whole, lens, findings);

    /* The last frame is settled only by the end of the stream. */
    struct reading t;
    start(&t, VW_IFT_READ_LIMIT_MAX, 0);
    assert_int_equal(vw_ift_reader_feed(&t.r, s, n, on_pdu, &t.got), VW_IFT_READ_OK);
    assert_int_equal(t.got.n, 3);
    assert_int_equal(t.r.have, lens[3]);
    assert_int_equal(vw_ift_reader_finish(&t.r, on_pdu, &t.got), VW_IFT_READ_OK);
    assert_int_equal(t.got.n, 4);
    assert_int_equal(t.got.len[3], lens[3]);
    vw_ift_reader_free(&t.r);

    /* Every split gives the same frames but one: a chunk that ends exactly
     * where the announced layout would end the short frame (the reader
     * takes such a frame as announced rather than hold it back; the bytes
     * after it then cannot start a frame and framing is lost there, I13). */
    size_t announced_end = lens[0] + lens[1] + VW_IFT_CRC_LEN;
    for (size_t cut = 0; cut <= n; cut++) {
        struct seen one_cut;
        size_t left = read_cut(s, n, cut, cut, &one_cut);
        if (cut == announced_end) {
            assert_int_equal(left, SIZE_MAX);
            assert_int_equal(one_cut.len[1], lens[1] + VW_IFT_CRC_LEN);
            continue;
        }
        assert_int_equal(left, 0);
        assert_same(&whole, &one_cut);
    }
}

/* A PDU longer than the limit is an error before its bytes are gathered:
 * the buffer stays within the limit plus the look-ahead. */
static void test_pdu_over_limit(void **state)
{
    (void)state;
    const size_t limit = 100;
    uint8_t s[512];
    size_t n = put_ind(s, 1, A_VTAG, false, true);
    size_t small = put_frame(s + n, sizeof s - n, false, true, "fits");
    n += small;
    char big[300];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    n += put_frame(s + n, sizeof s - n, false, true, big);

    for (int bytewise = 0; bytewise < 2; bytewise++) {
        struct reading t;
        start(&t, limit, 0);
        enum vw_ift_read_status st = VW_IFT_READ_OK;
        if (bytewise)
            for (size_t i = 0; i < n && st == VW_IFT_READ_OK; i++)
                st = vw_ift_reader_feed(&t.r, s + i, 1, on_pdu, &t.got);
        else
            st = vw_ift_reader_feed(&t.r, s, n, on_pdu, &t.got);
        assert_int_equal(st, VW_IFT_READ_TOO_LARGE);
        assert_int_equal(t.got.n, 2);
        assert_int_equal(t.got.len[1], small);
        assert_true(t.r.cap <= limit + VW_IFT_FRAME_HDR_LEN + 2 * VW_IFT_CRC_LEN);
        /* sticky: nothing more is read */
        assert_int_equal(vw_ift_reader_feed(&t.r, s, n, on_pdu, &t.got), VW_IFT_READ_TOO_LARGE);
        assert_int_equal(vw_ift_reader_finish(&t.r, on_pdu, &t.got), VW_IFT_READ_TOO_LARGE);
        assert_int_equal(t.got.n, 2);
        vw_ift_reader_free(&t.r);
    }
}

/* Even at the full limit a stream of the largest sizes never makes the
 * reader hold more than one frame and its look-ahead. */
static void test_largest_frames_bounded(void **state)
{
    (void)state;
    struct reading t;
    start(&t, VW_IFT_READ_LIMIT_MAX, 0);
    uint8_t ind[VW_IFT_IND_LEN];
    put_ind(ind, 1, A_VTAG, true, true);
    assert_int_equal(vw_ift_reader_feed(&t.r, ind, sizeof ind, on_pdu, &t.got), VW_IFT_READ_OK);
    /* sizes 0xFFFF/0xFFFF and the VTag, then bytes that never show the VTag
     * (and, after that first frame, cannot start one: framing lost, I13) */
    uint8_t *junk = malloc(4096);
    assert_non_null(junk);
    memset(junk, 0xFF, 4096);
    junk[4] = (uint8_t)(B_VTAG >> 8);
    junk[5] = (uint8_t)B_VTAG;
    enum vw_ift_read_status st = VW_IFT_READ_OK;
    for (int i = 0; i < 200 && st == VW_IFT_READ_OK; i++) {
        st = vw_ift_reader_feed(&t.r, junk, 4096, on_pdu, &t.got);
        junk[4] = junk[5] = 0xFF;
        assert_true(t.r.cap <= VW_IFT_FRAME_MAX + VW_IFT_FRAME_HDR_LEN + 2 * VW_IFT_CRC_LEN);
    }
    free(junk);
    assert_int_equal(st, VW_IFT_READ_FRAMING_LOST);
    assert_int_equal(t.got.n, 2);
    assert_true(t.r.cap <= VW_IFT_FRAME_MAX + VW_IFT_FRAME_HDR_LEN + 2 * VW_IFT_CRC_LEN);
    vw_ift_reader_free(&t.r);
}

static void test_errors_stick(void **state)
{
    (void)state;
    struct reading t;

    /* a direction that does not start with an indication (I7) */
    uint8_t s[512];
    size_t f = put_frame(s, sizeof s, false, false, "early");
    start(&t, VW_IFT_READ_LIMIT_MAX, 0);
    assert_int_equal(vw_ift_reader_feed(&t.r, s, 3, on_pdu, &t.got), VW_IFT_READ_OK);
    assert_int_equal(vw_ift_reader_feed(&t.r, s + 3, f - 3, on_pdu, &t.got), VW_IFT_READ_NOT_INDICATION);
    assert_int_equal(vw_ift_reader_feed(&t.r, s, f, on_pdu, &t.got), VW_IFT_READ_NOT_INDICATION);
    assert_int_equal(t.got.n, 0);
    vw_ift_reader_free(&t.r);

    /* the callback stops the reader; the buffer it held is freed (ASan) */
    size_t lens[4];
    size_t n = kept_stream(s, sizeof s, true, false, lens);
    start(&t, VW_IFT_READ_LIMIT_MAX, 2);
    assert_int_equal(vw_ift_reader_feed(&t.r, s, lens[0] + 3, on_pdu, &t.got), VW_IFT_READ_OK);
    assert_non_null(t.r.buf);
    assert_int_equal(vw_ift_reader_feed(&t.r, s + lens[0] + 3, n - lens[0] - 3, on_pdu, &t.got),
                     VW_IFT_READ_STOPPED);
    assert_int_equal(t.got.n, 2);
    assert_int_equal(t.r.stream_off, lens[0] + lens[1]);
    vw_ift_reader_free(&t.r);
    vw_ift_reader_free(&t.r); /* freeing twice is harmless */

    /* an unfinished PDU at the end stays in the reader */
    start(&t, VW_IFT_READ_LIMIT_MAX, 0);
    assert_int_equal(vw_ift_reader_feed(&t.r, s, n - 1, on_pdu, &t.got), VW_IFT_READ_OK);
    assert_int_equal(vw_ift_reader_finish(&t.r, on_pdu, &t.got), VW_IFT_READ_OK);
    assert_int_equal(t.got.n, 3);
    assert_int_equal(t.r.have, lens[3] - 1);
    vw_ift_reader_free(&t.r);
}

static uint32_t next_random(uint32_t *seed)
{
    *seed = *seed * 1103515245u + 12345u;
    return *seed >> 16;
}

/* Small frames with random CRCs (kept or broken announcements), a byte in
 * 150 flipped, fed in random chunks: never a read out of bounds (ASan),
 * every byte delivered or held, the buffer bounded. */
static void test_damaged_streams_in_random_chunks(void **state)
{
    (void)state;
    uint32_t seed = 12345;
    uint8_t s[4096];
    for (int round = 0; round < 300; round++) {
        size_t n = put_ind(s, 1, A_VTAG, round & 1, round & 2);
        while (n + 200 < sizeof s) {
            uint32_t r = next_random(&seed);
            size_t hs = r % 40, ps = (r >> 6) % 60;
            uint8_t zeros[100] = {0};
            struct vw_ift_frame_enc e;
            vw_ift_frame_enc_init(&e, B_VTAG, r & 0x1000, r & 0x2000, zeros, hs, zeros, ps);
            n += vw_ift_frame_encode(&e, s + n, sizeof s - n);
        }
        for (size_t i = VW_IFT_IND_LEN; i < n; i++)
            if (next_random(&seed) % 150 == 0)
                s[i] ^= (uint8_t)(1u << (next_random(&seed) % 8));
        struct reading t;
        start(&t, round % 3 ? VW_IFT_READ_LIMIT_MAX : 300, 0);
        t.got.stop_after = MAX_PDUS;
        size_t pos = 0;
        enum vw_ift_read_status st = VW_IFT_READ_OK;
        while (pos < n && st == VW_IFT_READ_OK) {
            size_t len = next_random(&seed) % 97;
            if (len > n - pos)
                len = n - pos;
            uint8_t *chunk = malloc(len ? len : 1);
            assert_non_null(chunk);
            memcpy(chunk, s + pos, len);
            st = vw_ift_reader_feed(&t.r, chunk, len, on_pdu, &t.got);
            free(chunk);
            pos += len;
            if (st == VW_IFT_READ_OK)
                assert_int_equal(t.r.stream_off + t.r.have, pos);
            assert_true(t.r.cap <= t.r.limit + VW_IFT_FRAME_HDR_LEN + 2 * VW_IFT_CRC_LEN);
        }
        if (st == VW_IFT_READ_OK)
            st = vw_ift_reader_finish(&t.r, on_pdu, &t.got);
        assert_true(st == VW_IFT_READ_OK || st == VW_IFT_READ_TOO_LARGE || st == VW_IFT_READ_STOPPED ||
                    st == VW_IFT_READ_FRAMING_LOST);
        assert_true(t.got.n >= 1);
        vw_ift_reader_free(&t.r);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_split_as_one_feed),
        cmocka_unit_test(test_kept_announcement_not_held_back),
        cmocka_unit_test(test_broken_crc_announcement),
        cmocka_unit_test(test_pdu_over_limit),
        cmocka_unit_test(test_largest_frames_bounded),
        cmocka_unit_test(test_errors_stick),
        cmocka_unit_test(test_damaged_streams_in_random_chunks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
