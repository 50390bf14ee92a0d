/* IFT (I1-I9): indication and frame round trips, every decode error naming
 * its rule, the framer at every split point, the connection rules, and
 * garbage never read out of bounds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "vitcp/bytes.h"
#include "vitcp/checksum.h"
#include "vitcp/ift_stream.h"

static uint8_t *exact(const uint8_t *p, size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    assert_non_null(d);
    if (n)
        memcpy(d, p, n);
    return d;
}

static size_t make_ind(uint8_t *buf, unsigned phase, uint16_t vtag, bool hc, bool pc)
{
    struct vw_ift_ind_enc e;
    vw_ift_ind_enc_init(&e, phase, vtag, hc, pc);
    return vw_ift_ind_encode(&e, buf, 64);
}

static enum vw_req ind_exact(const uint8_t *p, size_t n, struct vw_ift_ind *ind, struct vw_findings *fs)
{
    uint8_t *d = exact(p, n);
    vw_findings_clear(fs);
    enum vw_req r = vw_ift_ind_decode(d, n, ind, fs);
    free(d);
    return r;
}

static void test_crc32c_iscsi_byte_order(void **state)
{
    (void)state;
    /* I3: the four bytes for 32 zero bytes are AA 36 91 8A */
    uint8_t zeros[32] = {0}, out[4];
    vw_put_le32(out, vw_crc32c(zeros, sizeof zeros));
    const uint8_t want[4] = {0xAA, 0x36, 0x91, 0x8A};
    assert_memory_equal(out, want, 4);
}

static void test_indication_bytes_and_round_trip(void **state)
{
    (void)state;
    struct vw_ift_ind_enc e;
    vw_ift_ind_enc_init(&e, 1, 0xBEEF, true, false);
    e.flags |= VW_IFT_FLAG_IH | VW_IFT_FLAG_IP | VW_IFT_FLAG_SP;
    uint8_t b[64];
    assert_int_equal(vw_ift_ind_encode(&e, b, sizeof b), 64);
    assert_int_equal(vw_ift_ind_encode(&e, b, 63), 0);
    assert_int_equal(b[0], 0x52);
    assert_int_equal(b[3], 0x50);
    assert_int_equal(b[5], 1);
    assert_int_equal(b[7], 1);
    /* I2: PH bit 31, R 30, HC 29, PC 28, IH 27, IP 26, SP 25 */
    assert_int_equal(b[8], 0x80 | 0x40 | 0x20 | 0x08 | 0x04 | 0x02);
    assert_int_equal(b[9], 0);
    assert_int_equal(b[12], 0xBE);
    assert_int_equal(b[13], 0xEF);
    for (int i = 16; i < 60; i++)
        assert_int_equal(b[i], 0);
    uint32_t crc = vw_crc32c(b, 60);
    assert_int_equal(b[60], crc & 0xFF);
    assert_int_equal(b[63], crc >> 24);

    struct vw_ift_ind ind;
    struct vw_findings fs;
    assert_int_equal(ind_exact(b, 64, &ind, &fs), VW_REQ_NONE);
    assert_int_equal(fs.count, 0);
    assert_int_equal(ind.magic, VW_IFT_MAGIC);
    assert_int_equal(ind.version, 1);
    assert_int_equal(ind.bc_version, 1);
    assert_int_equal(vw_ift_ind_phase(&ind), 1);
    assert_int_equal(ind.flags, VW_IFT_FLAG_PH | VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_IH |
                                    VW_IFT_FLAG_IP | VW_IFT_FLAG_SP);
    assert_int_equal(ind.vtag, 0xBEEF);
    assert_int_equal(ind.marker_interval, 0);
    assert_true(ind.crc_ok);
    assert_true(ind.reserved_zero);
    assert_int_equal(vw_ift_ind_fatal(&ind), VW_REQ_NONE);
    assert_true(vw_ift_plausible_indication(b, 64));

    char s[80];
    assert_string_equal(vw_ift_flags_str(ind.flags, s, sizeof s), "PH|R|HC|IH|IP|SP");
    assert_string_equal(vw_ift_flags_str(VW_IFT_FLAG_SM | VW_IFT_FLAG_RM | 1u, s, sizeof s),
                        "SM|RM|Reserved(0x000001)");
    assert_string_equal(vw_ift_flag_name(VW_IFT_FLAG_PC), "PC");
    assert_string_equal(vw_ift_flag_name(1u), "Reserved");
}

static void test_indication_errors(void **state)
{
    (void)state;
    struct vw_ift_ind_enc e;
    struct vw_ift_ind ind;
    struct vw_findings fs;
    uint8_t b[64];

    make_ind(b, 0, 1, false, false);
    assert_int_equal(ind_exact(b, 63, &ind, &fs), VW_REQ_IFT_4_1_LENGTH);
    assert_int_equal(ind_exact(b, 2, &ind, &fs), VW_REQ_IFT_4_1_LENGTH);

    vw_ift_ind_enc_init(&e, 0, 1, false, false);
    e.magic = 0x52444451u;
    vw_ift_ind_encode(&e, b, 64);
    assert_int_equal(ind_exact(b, 64, &ind, &fs), VW_REQ_IFT_4_1_MAGIC);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_4_1_MAGIC));
    assert_false(vw_ift_plausible_indication(b, 64));

    vw_ift_ind_enc_init(&e, 0, 1, false, false);
    e.crc = VW_IFT_CRC_BAD;
    vw_ift_ind_encode(&e, b, 64);
    assert_int_equal(ind_exact(b, 64, &ind, &fs), VW_REQ_NONE);
    assert_false(ind.crc_ok);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_4_2_IND_CRC));
    assert_int_equal(vw_ift_ind_fatal(&ind), VW_REQ_IFT_4_2_IND_CRC);
    assert_false(vw_ift_plausible_indication(b, 64));

    e.crc = VW_IFT_CRC_BE;
    vw_ift_ind_encode(&e, b, 64);
    assert_int_equal(ind_exact(b, 64, &ind, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_4_2_IND_CRC));
    assert_non_null(strstr(fs.item[0].detail, "most significant byte first"));

    vw_ift_ind_enc_init(&e, 0, 1, false, false);
    e.version = 0;
    vw_ift_ind_encode(&e, b, 64);
    assert_int_equal(ind_exact(b, 64, &ind, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_4_2_VERSION));
    assert_int_equal(fs.item[0].severity, VW_SEV_ERROR);

    e.version = 3; /* newer but backward compatible: accepted with a note (I8) */
    vw_ift_ind_encode(&e, b, 64);
    assert_int_equal(ind_exact(b, 64, &ind, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_4_2_VERSION));
    assert_int_equal(fs.item[0].severity, VW_SEV_NOTE);
    assert_int_equal(vw_ift_ind_fatal(&ind), VW_REQ_NONE);

    e.version = 2;
    e.bc_version = 2;
    vw_ift_ind_encode(&e, b, 64);
    assert_int_equal(ind_exact(b, 64, &ind, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_4_2_BC_VERSION_REJECT));
    assert_int_equal(vw_ift_ind_fatal(&ind), VW_REQ_IFT_4_2_BC_VERSION_REJECT);

    e.version = 1;
    e.bc_version = 0;
    vw_ift_ind_encode(&e, b, 64);
    assert_int_equal(ind_exact(b, 64, &ind, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_4_2_BC_VERSION_SET));

    uint8_t junk[44];
    memset(junk, 0, sizeof junk);
    junk[43] = 1;
    vw_ift_ind_enc_init(&e, 0, 1, false, false);
    e.reserved = junk;
    vw_ift_ind_encode(&e, b, 64);
    assert_int_equal(ind_exact(b, 64, &ind, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_4_2_RESERVED_ZERO));
    assert_false(ind.reserved_zero);
    assert_true(ind.crc_ok);

    vw_ift_ind_enc_init(&e, 0, 1, false, false);
    e.flags |= 0x10u;
    vw_ift_ind_encode(&e, b, 64);
    assert_int_equal(ind_exact(b, 64, &ind, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_4_2_RESERVED_ZERO));

    vw_ift_ind_enc_init(&e, 0, 1, false, false);
    e.flags |= VW_IFT_FLAG_SM;
    e.marker_interval = 512;
    vw_ift_ind_encode(&e, b, 64);
    assert_int_equal(ind_exact(b, 64, &ind, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_4_2_MARKERS));
    assert_int_equal(ind.marker_interval, 512);
}

static size_t make_frame(uint8_t *buf, size_t cap, uint16_t vtag, bool hc, bool pc, bool tagged,
                         const char *payload)
{
    struct vw_ddp_hdr h = {.tagged = tagged, .last = true, .dv = 1, .rdmap_rv = 1,
                           .rdmap_opcode = tagged ? VW_RDMAP_WRITE : VW_RDMAP_SEND,
                           .stag = 0x11223344u, .to = 0x0102030405060708ull,
                           .qn = 0, .msn = 5, .mo = 0};
    uint8_t ddp[18];
    size_t dl = vw_ddp_encode(&h, ddp, sizeof ddp);
    struct vw_ift_frame_enc e;
    vw_ift_frame_enc_init(&e, vtag, hc, pc, ddp, dl, (const uint8_t *)payload, strlen(payload));
    return vw_ift_frame_encode(&e, buf, cap);
}

static enum vw_req frame_exact(const uint8_t *p, size_t n, const struct vw_ift_frame_mode *m,
                               struct vw_ift_frame *fr, struct vw_findings *fs)
{
    uint8_t *d = exact(p, n);
    vw_findings_clear(fs);
    enum vw_req r = vw_ift_frame_decode(d, n, m, fr, fs);
    free(d);
    return r;
}

static void test_frame_round_trip_every_mode(void **state)
{
    (void)state;
    for (int combo = 0; combo < 8; combo++) {
        bool hc = combo & 1, pc = combo & 2, tagged = combo & 4;
        uint8_t b[256];
        size_t n = make_frame(b, sizeof b, 0x7777, hc, pc, tagged, "payload!");
        size_t hs = tagged ? 14 : 18;
        assert_int_equal(n, 6 + hs + 8 + (hc ? 4 : 0) + (pc ? 4 : 0));
        assert_int_equal(b[0], 0);
        assert_int_equal(b[1], hs);
        assert_int_equal(b[3], 8);
        assert_int_equal(b[4], 0x77);
        struct vw_ift_frame_mode m = {.hc = hc, .pc = pc, .check_vtag = true, .vtag = 0x7777};
        assert_int_equal(vw_ift_peek_frame_len(b, n, &m), n);
        struct vw_ift_frame fr;
        struct vw_findings fs;
        assert_int_equal(frame_exact(b, n, &m, &fr, &fs), VW_REQ_NONE);
        assert_int_equal(fs.count, 0);
        assert_int_equal(fr.header_size, hs);
        assert_int_equal(fr.payload_size, 8);
        assert_int_equal(fr.vtag, 0x7777);
        assert_int_equal(fr.has_hdr_crc, hc);
        assert_int_equal(fr.has_payload_crc, pc);
        assert_int_equal(fr.payload_offset, 6 + hs + (hc ? 4 : 0));
        if (hc) {
            /* I4: the header CRC covers sizes, VTag and DDP header */
            assert_true(fr.hdr_crc_ok);
            assert_int_equal(fr.hdr_crc_wire, vw_crc32c(b, 6 + hs));
        }
        if (pc) {
            assert_true(fr.payload_crc_ok);
            assert_int_equal(fr.payload_crc_wire, vw_crc32c("payload!", 8));
        }
        assert_true(fr.ddp_decoded);
        assert_int_equal(fr.ddp_hdr.tagged, tagged);
        assert_true(fr.ddp_hdr.last);
        assert_int_equal(fr.ddp_hdr.dv, 1);
        assert_int_equal(fr.ddp_hdr.rdmap_rv, 1);
        if (tagged) {
            assert_int_equal(fr.ddp_hdr.stag, 0x11223344u);
            assert_true(fr.ddp_hdr.to == 0x0102030405060708ull);
            assert_int_equal(fr.ddp_hdr.rdmap_opcode, VW_RDMAP_WRITE);
        } else {
            assert_int_equal(fr.ddp_hdr.msn, 5);
            assert_int_equal(fr.ddp_hdr.rdmap_opcode, VW_RDMAP_SEND);
        }
        assert_int_equal(vw_ift_frame_fatal(&fr, &m), VW_REQ_NONE);
    }
    assert_string_equal(vw_rdmap_opcode_name(VW_RDMAP_READ_RESPONSE), "RDMA Read Response");
    assert_string_equal(vw_rdmap_opcode_name(12), "Unknown");
}

static void test_empty_payload_crc_is_zero(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n = make_frame(b, sizeof b, 1, false, true, true, "");
    assert_int_equal(n, 6 + 14 + 4);
    assert_int_equal(b[n - 4] | b[n - 3] | b[n - 2] | b[n - 1], 0); /* I6 */
    struct vw_ift_frame_mode m = {.pc = true};
    struct vw_ift_frame fr;
    struct vw_findings fs;
    assert_int_equal(frame_exact(b, n, &m, &fr, &fs), VW_REQ_NONE);
    assert_true(fr.payload_crc_ok);
}

static void test_frame_errors(void **state)
{
    (void)state;
    uint8_t b[256];
    struct vw_ift_frame fr;
    struct vw_findings fs;
    struct vw_ift_frame_mode m = {.hc = true, .pc = true, .check_vtag = true, .vtag = 0x1234};
    size_t n = make_frame(b, sizeof b, 0x1234, true, true, true, "data");

    assert_int_equal(frame_exact(b, 5, &m, &fr, &fs), VW_REQ_IFT_5_1_FRAME_TRUNCATED);
    assert_int_equal(frame_exact(b, n - 1, &m, &fr, &fs), VW_REQ_IFT_5_1_FRAME_LEN);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_5_1_FRAME_LEN));
    struct vw_ift_frame_mode nocrc = {.check_vtag = true, .vtag = 0x1234};
    assert_int_equal(frame_exact(b, n, &nocrc, &fr, &fs), VW_REQ_IFT_5_1_FRAME_LEN);

    /* wrong VTag */
    m.vtag = 0x4321;
    assert_int_equal(frame_exact(b, n, &m, &fr, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_4_2_VTAG_MATCH));
    assert_int_equal(vw_ift_frame_fatal(&fr, &m), VW_REQ_IFT_4_2_VTAG_MATCH);
    m.vtag = 0x1234;

    /* bad header CRC, bad payload CRC, the other byte order named */
    const uint8_t ddp[14] = {0xC1, 0x40};
    struct vw_ift_frame_enc e;
    vw_ift_frame_enc_init(&e, 0x1234, true, true, ddp, sizeof ddp, (const uint8_t *)"data", 4);
    e.hdr_crc = VW_IFT_CRC_BAD;
    n = vw_ift_frame_encode(&e, b, sizeof b);
    assert_int_equal(frame_exact(b, n, &m, &fr, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_5_1_HDR_CRC));
    assert_false(vw_findings_has(&fs, VW_REQ_IFT_5_1_PAYLOAD_CRC));
    assert_int_equal(vw_ift_frame_fatal(&fr, &m), VW_REQ_IFT_5_1_HDR_CRC);
    e.hdr_crc = VW_IFT_CRC_GOOD;
    e.payload_crc = VW_IFT_CRC_BE;
    n = vw_ift_frame_encode(&e, b, sizeof b);
    assert_int_equal(frame_exact(b, n, &m, &fr, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_5_1_PAYLOAD_CRC));
    assert_non_null(strstr(fs.item[0].detail, "most significant byte first"));
    assert_int_equal(vw_ift_frame_fatal(&fr, &m), VW_REQ_IFT_5_1_PAYLOAD_CRC);
    e.payload_crc = VW_IFT_CRC_VALUE;
    e.payload_crc_value = 0xA1B2C3D4u;
    n = vw_ift_frame_encode(&e, b, sizeof b);
    assert_int_equal(b[n - 4], 0xD4);
    assert_int_equal(b[n - 1], 0xA1);

    /* omitted CRC although negotiated: the sizes no longer fit */
    e.payload_crc = VW_IFT_CRC_OMIT;
    n = vw_ift_frame_encode(&e, b, sizeof b);
    assert_int_equal(n, 6 + 14 + 4 + 4);
    assert_int_equal(frame_exact(b, n, &m, &fr, &fs), VW_REQ_IFT_5_1_FRAME_LEN);

    /* wrong sizes on request */
    e.payload_crc = VW_IFT_CRC_GOOD;
    e.keep_sizes = true;
    e.header_size = 14;
    e.payload_size = 9;
    n = vw_ift_frame_encode(&e, b, sizeof b);
    assert_int_equal(b[3], 9);
    assert_int_equal(frame_exact(b, n, &m, &fr, &fs), VW_REQ_IFT_5_1_FRAME_LEN);

    /* no DDP header, and a size that is not RFC 5041's */
    vw_ift_frame_enc_init(&e, 0x1234, false, false, NULL, 0, (const uint8_t *)"x", 1);
    struct vw_ift_frame_mode plain = {.check_vtag = true, .vtag = 0x1234};
    n = vw_ift_frame_encode(&e, b, sizeof b);
    assert_int_equal(frame_exact(b, n, &plain, &fr, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_5_1_DDP_HDR_PRESENT));
    vw_ift_frame_enc_init(&e, 0x1234, false, false, ddp, 10, (const uint8_t *)"x", 1);
    n = vw_ift_frame_encode(&e, b, sizeof b);
    assert_int_equal(frame_exact(b, n, &plain, &fr, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_5_1_DDP_HDR_PRESENT));
    assert_false(fr.ddp_decoded);

    /* oversized parts and small buffers are refused */
    static uint8_t big[70000];
    vw_ift_frame_enc_init(&e, 1, false, false, ddp, 14, big, 65536);
    assert_int_equal(vw_ift_frame_encode(&e, big, sizeof big), 0);
    vw_ift_frame_enc_init(&e, 1, false, false, ddp, 14, (const uint8_t *)"x", 1);
    assert_int_equal(vw_ift_frame_encode(&e, b, 20), 0);
}

static void test_guess_mode(void **state)
{
    (void)state;
    for (int combo = 0; combo < 4; combo++) {
        uint8_t b[256];
        size_t n = make_frame(b, sizeof b, 9, combo & 1, combo & 2, true, "guess me");
        struct vw_ift_frame_mode m = {.hc = !(combo & 1), .pc = true};
        assert_true(vw_ift_guess_mode(b, n, &m));
        assert_int_equal(m.hc, !!(combo & 1));
        assert_int_equal(m.pc, !!(combo & 2));
        assert_false(m.check_vtag);
    }
    struct vw_ift_frame_mode m;
    assert_false(vw_ift_guess_mode((const uint8_t *)"\xff\xff\xff\xff\0\0", 6, &m));
}

/* ------------------------------------------------------------ streams */

struct got {
    unsigned n, inds, frames;
    size_t len[16];
    uint64_t off[16];
    enum vw_req err[16];
    uint16_t payload_size[16];
    unsigned findings;
    struct vw_findings last;
};

static void on_pdu(void *ctx, const uint8_t *raw, size_t len, uint64_t off,
                   const struct vw_ift_pdu *pdu, enum vw_req err, const struct vw_findings *fs)
{
    struct got *g = ctx;
    assert_non_null(raw);
    if (g->n < 16) {
        g->len[g->n] = len;
        g->off[g->n] = off;
        g->err[g->n] = err;
        g->payload_size[g->n] = pdu->is_indication ? 0 : pdu->frame.payload_size;
    }
    if (pdu->is_indication)
        g->inds++;
    else
        g->frames++;
    g->findings += fs->count;
    if (fs->count)
        g->last = *fs;
    g->n++;
}

/* A's stream: phase 0 with HC, then three frames carrying B's VTag 0xB0B0. */
static size_t a_stream(uint8_t *s, size_t *lens)
{
    size_t n = 0;
    lens[0] = make_ind(s, 0, 0xA0A0, true, false);
    n += lens[0];
    lens[1] = make_frame(s + n, 256, 0xB0B0, true, false, true, "first");
    n += lens[1];
    lens[2] = make_frame(s + n, 256, 0xB0B0, true, false, false, "");
    n += lens[2];
    lens[3] = make_frame(s + n, 256, 0xB0B0, true, false, true, "third frame");
    n += lens[3];
    return n;
}

static void check_a(const struct got *g, const size_t *lens)
{
    assert_int_equal(g->n, 4);
    assert_int_equal(g->inds, 1);
    assert_int_equal(g->frames, 3);
    assert_int_equal(g->findings, 0);
    uint64_t off = 0;
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(g->len[i], lens[i]);
        assert_int_equal(g->off[i], off);
        assert_int_equal(g->err[i], VW_REQ_NONE);
        off += lens[i];
    }
    assert_int_equal(g->payload_size[1], 5);
    assert_int_equal(g->payload_size[3], 11);
}

static void test_framer_every_split(void **state)
{
    (void)state;
    uint8_t s[1024];
    size_t lens[4];
    size_t n = a_stream(s, lens);
    for (size_t cut = 0; cut <= n; cut++) {
        struct vw_ift_framer f;
        struct got g = {0};
        assert_int_equal(vw_ift_framer_init(&f, true), 0);
        vw_ift_framer_set_vtag(&f, 0xB0B0);
        uint8_t *a = exact(s, cut), *b = exact(s + cut, n - cut);
        assert_int_equal(vw_ift_framer_feed(&f, a, cut, on_pdu, &g), VW_REQ_NONE);
        assert_int_equal(vw_ift_framer_feed(&f, b, n - cut, on_pdu, &g), VW_REQ_NONE);
        check_a(&g, lens);
        assert_true(f.mode.hc);
        assert_false(f.mode.pc);
        assert_int_equal(f.close_reason, VW_REQ_NONE);
        free(a);
        free(b);
        vw_ift_framer_free(&f);
    }
    struct vw_ift_framer f;
    struct got g = {0};
    assert_int_equal(vw_ift_framer_init(&f, true), 0);
    vw_ift_framer_set_vtag(&f, 0xB0B0);
    for (size_t i = 0; i < n; i++) {
        uint8_t *one = exact(s + i, 1);
        assert_int_equal(vw_ift_framer_feed(&f, one, 1, on_pdu, &g), VW_REQ_NONE);
        free(one);
    }
    check_a(&g, lens);
    assert_int_equal(f.frames, 3);
    vw_ift_framer_free(&f);
}

static void test_framer_errors(void **state)
{
    (void)state;
    struct vw_ift_framer f;
    struct got g = {0};
    /* an indication with a bad magic where one is due (I7, I35) */
    assert_int_equal(vw_ift_framer_init(&f, true), 0);
    const uint8_t junk[8] = {0x52, 0x44, 0x44, 0x51, 0, 0, 0, 0};
    assert_int_equal(vw_ift_framer_feed(&f, junk, 3, on_pdu, &g), VW_REQ_NONE);
    assert_int_equal(vw_ift_framer_feed(&f, junk + 3, 5, on_pdu, &g), VW_REQ_IFT_4_1_MAGIC);
    assert_int_equal(vw_ift_framer_feed(&f, junk, 8, on_pdu, &g), VW_REQ_IFT_4_1_MAGIC);
    assert_int_equal(g.n, 0);
    vw_ift_framer_free(&f);
    /* a frame (header_size 14) where the indication is due: I35 */
    assert_int_equal(vw_ift_framer_init(&f, true), 0);
    const uint8_t early[8] = {0, 14, 0, 4, 0xA0, 0xA0, 0, 0};
    assert_int_equal(vw_ift_framer_feed(&f, early, 8, on_pdu, &g), VW_REQ_IFT_4_INDICATION_FIRST);
    assert_int_equal(g.n, 0);
    vw_ift_framer_free(&f);

    /* BC version above 1: delivered, then nothing more can be framed */
    struct vw_ift_ind_enc e;
    uint8_t s[128];
    vw_ift_ind_enc_init(&e, 0, 1, false, false);
    e.bc_version = 2;
    vw_ift_ind_encode(&e, s, 64);
    make_frame(s + 64, 64, 0, false, false, true, "");
    assert_int_equal(vw_ift_framer_init(&f, true), 0);
    assert_int_equal(vw_ift_framer_feed(&f, s, 64 + 20, on_pdu, &g), VW_REQ_IFT_4_2_BC_VERSION_REJECT);
    assert_int_equal(g.inds, 1);
    assert_int_equal(g.frames, 0);
    assert_int_equal(f.close_reason, VW_REQ_IFT_4_2_BC_VERSION_REJECT);
    vw_ift_framer_free(&f);

    /* midstream capture: mode given, a bad CRC recorded as the close reason */
    memset(&g, 0, sizeof g);
    assert_int_equal(vw_ift_framer_init(&f, false), 0);
    struct vw_ift_frame_mode m = {.pc = true};
    vw_ift_framer_set_mode(&f, &m);
    size_t n = make_frame(s, sizeof s, 5, false, true, true, "abc");
    s[n - 1] ^= 0xFF;
    assert_int_equal(vw_ift_framer_feed(&f, s, n, on_pdu, &g), VW_REQ_NONE);
    assert_int_equal(g.frames, 1);
    assert_int_equal(f.close_reason, VW_REQ_IFT_5_1_PAYLOAD_CRC);
    assert_true(vw_findings_has(&g.last, VW_REQ_IFT_5_1_PAYLOAD_CRC));
    vw_ift_framer_resync(&f, 500);
    assert_int_equal(f.stream_off, 500);
    vw_ift_framer_free(&f);
}

static void test_connection_rules(void **state)
{
    (void)state;
    uint8_t ia[64], ib[64], fa[128], fb[128];
    make_ind(ia, 0, 0xA0A0, true, false);
    make_ind(ib, 1, 0xB0B0, false, true);
    size_t na = make_frame(fa, sizeof fa, 0xB0B0, true, false, true, "from A");
    size_t nb = make_frame(fb, sizeof fb, 0xA0A0, false, true, true, "from B");

    /* the good exchange: no findings; each side's mode from its own indication */
    struct vw_ift_conn c;
    struct got g = {0};
    assert_int_equal(vw_ift_conn_init(&c), 0);
    assert_int_equal(vw_ift_conn_feed(&c, 0, ia, 64, on_pdu, &g), VW_REQ_NONE);
    assert_int_equal(vw_ift_conn_feed(&c, 1, ib, 64, on_pdu, &g), VW_REQ_NONE);
    assert_int_equal(vw_ift_conn_feed(&c, 1, fb, nb, on_pdu, &g), VW_REQ_NONE);
    assert_int_equal(vw_ift_conn_feed(&c, 0, fa, na, on_pdu, &g), VW_REQ_NONE);
    assert_int_equal(g.n, 4);
    assert_int_equal(g.findings, 0);
    assert_int_equal(c.nego.phase0_dir, 0);
    assert_true(c.dir[0].mode.hc && !c.dir[0].mode.pc);
    assert_true(!c.dir[1].mode.hc && c.dir[1].mode.pc);
    assert_int_equal(c.dir[0].mode.vtag, 0xB0B0);
    assert_int_equal(c.dir[1].mode.vtag, 0xA0A0);
    /* a frame from A with A's own VTag is wrong */
    na = make_frame(fa, sizeof fa, 0xA0A0, true, false, true, "bad");
    assert_int_equal(vw_ift_conn_feed(&c, 0, fa, na, on_pdu, &g), VW_REQ_NONE);
    assert_true(vw_findings_has(&g.last, VW_REQ_IFT_4_2_VTAG_MATCH));
    assert_int_equal(c.dir[0].close_reason, VW_REQ_IFT_4_2_VTAG_MATCH);
    assert_int_equal(vw_ift_conn_feed(&c, 2, fa, na, on_pdu, &g), VW_REQ_IFT_4_INDICATION_FIRST);
    vw_ift_conn_free(&c);

    /* frames from A before phase 1 arrived (I7) */
    memset(&g, 0, sizeof g);
    assert_int_equal(vw_ift_conn_init(&c), 0);
    vw_ift_conn_feed(&c, 0, ia, 64, on_pdu, &g);
    na = make_frame(fa, sizeof fa, 0xB0B0, true, false, true, "early");
    vw_ift_conn_feed(&c, 0, fa, na, on_pdu, &g);
    assert_true(vw_findings_has(&g.last, VW_REQ_IFT_4_2_FRAMES_AFTER_PHASE1));
    vw_ift_conn_free(&c);

    /* phase wrong in both indications, and R disagreement */
    memset(&g, 0, sizeof g);
    struct vw_ift_ind_enc e;
    assert_int_equal(vw_ift_conn_init(&c), 0);
    vw_ift_conn_feed(&c, 1, ib, 64, on_pdu, &g); /* PH=1 first */
    assert_true(vw_findings_has(&g.last, VW_REQ_IFT_4_2_PHASE));
    vw_ift_ind_enc_init(&e, 0, 0xA0A0, false, false);
    e.flags &= ~VW_IFT_FLAG_R;
    uint8_t ir[64];
    vw_ift_ind_encode(&e, ir, 64);
    vw_ift_conn_feed(&c, 0, ir, 64, on_pdu, &g); /* PH=0 as the answer, R differs */
    assert_true(vw_findings_has(&g.last, VW_REQ_IFT_4_2_PHASE));
    assert_true(vw_findings_has(&g.last, VW_REQ_IFT_4_2_R_AGREE));
    assert_true(c.nego.r_disagree);
    assert_int_equal(c.dir[0].close_reason, VW_REQ_IFT_4_2_R_AGREE);
    vw_ift_conn_free(&c);
}

/* An indication with its flags and BC version set by hand, its CRC made
 * again over the bytes (not through the encoder). */
static void ind_by_hand(uint8_t *buf, unsigned phase, bool r, uint16_t bc_version)
{
    make_ind(buf, phase, phase ? 0x2222 : 0x1111, true, true);
    uint32_t flags = vw_get_be32(buf + 8);
    flags = r ? flags | VW_IFT_FLAG_R : flags & ~VW_IFT_FLAG_R;
    vw_put_be32(buf + 8, flags);
    vw_put_be16(buf + 6, bc_version);
    vw_put_le32(buf + VW_IFT_IND_CRC_OFF, vw_crc32c(buf, VW_IFT_IND_CRC_OFF));
}

static enum vw_severity worst_for(const struct vw_findings *fs, enum vw_req req)
{
    enum vw_severity worst = VW_SEV_NOTE;
    int seen = 0;
    for (size_t i = 0; i < fs->count; i++)
        if (fs->item[i].req == req) {
            seen = 1;
            if (fs->item[i].severity > worst)
                worst = fs->item[i].severity;
        }
    assert_true(seen);
    return worst;
}

/* Reactions are judged by the reaction (issue 22): an R-bit disagreement or
 * an incompatible BC version is a note where it happens; a peer that then
 * closes is clean, one that carries on breaks the rule at what it sends. */
static void test_reactions_judged_by_the_reaction(void **state)
{
    (void)state;
    uint8_t buf[64];
    struct vw_ift_ind a, b;
    struct vw_findings fs;
    struct vw_ift_nego n;

    vw_ift_nego_init(&n);
    ind_by_hand(buf, 0, true, 1);
    assert_int_equal(ind_exact(buf, 64, &a, &fs), VW_REQ_NONE);
    vw_ift_nego_indication(&n, 0, &a, &fs);
    ind_by_hand(buf, 1, false, 1); /* B chooses R=0: allowed, but the ends now disagree */
    assert_int_equal(ind_exact(buf, 64, &b, &fs), VW_REQ_NONE);
    vw_ift_nego_indication(&n, 1, &b, &fs);
    assert_int_equal(worst_for(&fs, VW_REQ_IFT_4_2_R_AGREE), VW_SEV_NOTE);
    /* B (or A) carrying on with data instead of closing is the error */
    for (int dir = 0; dir < 2; dir++) {
        vw_findings_clear(&fs);
        vw_ift_nego_frame(&n, dir, &fs);
        assert_int_equal(worst_for(&fs, VW_REQ_IFT_4_2_R_AGREE), VW_SEV_ERROR);
    }

    vw_ift_nego_init(&n);
    ind_by_hand(buf, 0, true, 2); /* A speaks a version B cannot be compatible with */
    assert_int_equal(ind_exact(buf, 64, &a, &fs), VW_REQ_NONE);
    assert_int_equal(worst_for(&fs, VW_REQ_IFT_4_2_BC_VERSION_REJECT), VW_SEV_NOTE);
    vw_findings_clear(&fs);
    vw_ift_nego_indication(&n, 0, &a, &fs);
    assert_int_equal(fs.count, 0);
    /* B answering it, or sending a frame, did not reject it */
    ind_by_hand(buf, 1, true, 1);
    assert_int_equal(ind_exact(buf, 64, &b, &fs), VW_REQ_NONE);
    vw_ift_nego_indication(&n, 1, &b, &fs);
    assert_int_equal(worst_for(&fs, VW_REQ_IFT_4_2_BC_VERSION_REJECT), VW_SEV_ERROR);
    vw_findings_clear(&fs);
    vw_ift_nego_frame(&n, 1, &fs);
    assert_int_equal(worst_for(&fs, VW_REQ_IFT_4_2_BC_VERSION_REJECT), VW_SEV_ERROR);
}

/* I12: a frame the receiver must close on, then data from that receiver
 * (once per side); IH makes a bad header CRC no such frame. I13: bytes that
 * cannot start a frame. */
static void test_no_data_after_error(void **state)
{
    (void)state;
    uint8_t buf[64];
    struct vw_ift_ind a, b;
    struct vw_findings fs;
    struct vw_ift_nego n;
    vw_ift_nego_init(&n);
    ind_by_hand(buf, 0, true, 1);
    assert_int_equal(ind_exact(buf, 64, &a, &fs), VW_REQ_NONE);
    vw_ift_nego_indication(&n, 0, &a, &fs);
    ind_by_hand(buf, 1, true, 1);
    assert_int_equal(ind_exact(buf, 64, &b, &fs), VW_REQ_NONE);
    vw_ift_nego_indication(&n, 1, &b, &fs);
    /* a clean frame from A, then B's: nothing */
    vw_findings_clear(&fs);
    vw_ift_nego_frame_done(&n, 0, &fs);
    vw_ift_nego_after_error(&n, 1, &fs);
    assert_int_equal(fs.count, 0);
    /* A's frame with a bad header CRC (a note would not count) */
    vw_findings_add(&fs, VW_REQ_IFT_5_1_HDR_CRC, VW_SEV_NOTE, 0, 0, "a note");
    vw_ift_nego_frame_done(&n, 0, &fs);
    vw_findings_clear(&fs);
    vw_ift_nego_after_error(&n, 1, &fs);
    assert_int_equal(fs.count, 0);
    vw_findings_add(&fs, VW_REQ_IFT_5_1_HDR_CRC, VW_SEV_ERROR, 0, 0, "bad");
    vw_ift_nego_frame_done(&n, 0, &fs);
    vw_findings_clear(&fs);
    vw_ift_nego_after_error(&n, 0, &fs); /* A's own next frame: not a reaction */
    assert_int_equal(fs.count, 0);
    vw_ift_nego_after_error(&n, 1, &fs);
    assert_int_equal(worst_for(&fs, VW_REQ_IFT_5_1_NO_DATA_AFTER_ERROR), VW_SEV_ERROR);
    vw_findings_clear(&fs);
    vw_ift_nego_after_error(&n, 1, &fs); /* once per side */
    assert_int_equal(fs.count, 0);
    /* B announced IH: a bad header CRC from A is placed (I15), no error frame */
    vw_ift_nego_init(&n);
    vw_ift_nego_indication(&n, 0, &a, &fs);
    b.flags |= VW_IFT_FLAG_IH;
    vw_ift_nego_indication(&n, 1, &b, &fs);
    vw_findings_clear(&fs);
    vw_findings_add(&fs, VW_REQ_IFT_5_1_HDR_CRC, VW_SEV_ERROR, 0, 0, "bad");
    vw_ift_nego_frame_done(&n, 0, &fs);
    vw_findings_clear(&fs);
    vw_ift_nego_after_error(&n, 1, &fs);
    assert_int_equal(fs.count, 0);

    /* I13 */
    struct vw_ift_frame_mode m = {.hc = true, .pc = true, .check_vtag = true, .vtag = 0xB0B0};
    const uint8_t frame_ok[6] = {0, 14, 0, 32, 0xB0, 0xB0}, wrong_vtag[6] = {0, 14, 0, 32, 0x12, 0x34},
                  big_hs_right_vtag[6] = {0x70, 0x61, 0, 0, 0xB0, 0xB0}, foreign[6] = {0x70, 0x61, 0x79, 0x6C, 1, 2},
                  magic[6] = {0x52, 0x44, 0x44, 0x50, 0, 1};
    assert_true(vw_ift_frame_start_plausible(frame_ok, 6, &m));
    assert_true(vw_ift_frame_start_plausible(wrong_vtag, 6, &m)); /* a wrong VTag is IFT-4.2-VTAG-MATCH */
    assert_true(vw_ift_frame_start_plausible(big_hs_right_vtag, 6, &m));
    assert_false(vw_ift_frame_start_plausible(foreign, 6, &m));
    assert_true(vw_ift_frame_start_plausible(magic, 6, &m));
    assert_true(vw_ift_frame_start_plausible(foreign, 5, &m));
    m.check_vtag = false;
    assert_true(vw_ift_frame_start_plausible(foreign, 6, &m));
}

/* The negotiation on its own, as a dissector that frames PDUs itself uses
 * it: the mode per side, order rules, a second indication ignored. */
static void test_nego_without_framers(void **state)
{
    (void)state;
    struct vw_ift_nego n;
    struct vw_findings fs;
    struct vw_ift_ind a, b, again;
    struct vw_ift_frame_mode m = {.hc = true, .pc = true};
    uint8_t buf[64];
    vw_ift_nego_init(&n);
    assert_int_equal(n.phase0_dir, -1);

    /* a frame from a side that sent nothing yet */
    vw_findings_clear(&fs);
    vw_ift_nego_frame(&n, 1, &fs);
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_IFT_4_INDICATION_FIRST);
    assert_false(vw_ift_nego_mode(&n, 1, &m));
    assert_true(m.hc && m.pc); /* untouched */
    assert_false(m.check_vtag);

    make_ind(buf, 0, 0x1111, true, false);
    assert_int_equal(ind_exact(buf, 64, &a, &fs), VW_REQ_NONE);
    assert_true(vw_ift_nego_indication(&n, 0, &a, &fs));
    assert_int_equal(fs.count, 0);
    assert_null(n.ind[0].reserved);
    /* A's frame before B's answer */
    vw_ift_nego_frame(&n, 0, &fs);
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_IFT_4_2_FRAMES_AFTER_PHASE1);
    assert_true(vw_ift_nego_mode(&n, 0, &m));
    assert_true(m.hc);
    assert_false(m.pc);
    assert_false(m.check_vtag);

    make_ind(buf, 1, 0x2222, false, true);
    assert_int_equal(ind_exact(buf, 64, &b, &fs), VW_REQ_NONE);
    assert_true(vw_ift_nego_indication(&n, 1, &b, &fs));
    assert_int_equal(fs.count, 0);
    vw_findings_clear(&fs);
    vw_ift_nego_frame(&n, 0, &fs);
    vw_ift_nego_frame(&n, 1, &fs);
    assert_int_equal(fs.count, 0);
    assert_true(vw_ift_nego_mode(&n, 0, &m));
    assert_true(m.check_vtag);
    assert_int_equal(m.vtag, 0x2222); /* A's frames carry B's VTag */
    assert_true(vw_ift_nego_mode(&n, 1, &m));
    assert_false(m.hc);
    assert_true(m.pc);
    assert_int_equal(m.vtag, 0x1111);

    /* a second indication from A: flagged, not applied */
    make_ind(buf, 0, 0x7777, false, false);
    assert_int_equal(ind_exact(buf, 64, &again, &fs), VW_REQ_NONE);
    assert_false(vw_ift_nego_indication(&n, 0, &again, &fs));
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_IFT_4_2_PHASE);
    assert_non_null(strstr(fs.item[0].detail, "Second adaption indication"));
    assert_true(vw_ift_nego_mode(&n, 1, &m));
    assert_int_equal(m.vtag, 0x1111);
    assert_false(vw_ift_nego_indication(&n, 2, &again, &fs));
}

/* I34: an answer with BC version 2 to a version 1 indication breaks
 * IFT-4.2-BC-VERSION-SET (an error, once), not only the decoder's note;
 * the same indication as phase 0 stays the note (I12). */
static void test_nego_bc_version_answer(void **state)
{
    (void)state;
    struct vw_ift_nego n;
    struct vw_findings fs;
    struct vw_ift_ind a, b;
    uint8_t buf[64];
    for (unsigned version = 1; version <= 2; version++) {
        vw_ift_nego_init(&n);
        vw_findings_clear(&fs);
        make_ind(buf, 0, 0x1111, true, true);
        assert_int_equal(ind_exact(buf, 64, &a, &fs), VW_REQ_NONE);
        assert_true(vw_ift_nego_indication(&n, 0, &a, &fs));
        make_ind(buf, 1, 0x2222, true, true);
        vw_put_be16(buf + 4, (uint16_t)version);
        vw_put_be16(buf + 6, 2);
        vw_put_le32(buf + 60, vw_crc32c(buf, 60));
        vw_findings_clear(&fs);
        ind_exact(buf, 64, &b, &fs);
        assert_true(vw_findings_has(&fs, VW_REQ_IFT_4_2_BC_VERSION_REJECT)); /* the decoder's note */
        assert_true(vw_ift_nego_indication(&n, 1, &b, &fs));
        assert_false(vw_findings_has(&fs, VW_REQ_IFT_4_2_BC_VERSION_REJECT));
        unsigned errors = 0;
        for (unsigned i = 0; i < fs.count; i++)
            if (fs.item[i].req == VW_REQ_IFT_4_2_BC_VERSION_SET) {
                assert_int_equal(fs.item[i].severity, VW_SEV_ERROR);
                errors++;
            }
        assert_int_equal(errors, 1);
    }
    /* as phase 0 it is the provocation only */
    vw_ift_nego_init(&n);
    make_ind(buf, 0, 0x1111, true, true);
    vw_put_be16(buf + 4, 2);
    vw_put_be16(buf + 6, 2);
    vw_put_le32(buf + 60, vw_crc32c(buf, 60));
    vw_findings_clear(&fs);
    ind_exact(buf, 64, &a, &fs);
    vw_ift_nego_indication(&n, 0, &a, &fs);
    assert_false(vw_findings_has(&fs, VW_REQ_IFT_4_2_BC_VERSION_SET));
    assert_true(vw_findings_has(&fs, VW_REQ_IFT_4_2_BC_VERSION_REJECT));
}

/* A sender that breaks its own HC/PC: the layout its length shows, and
 * which CRC is missing or extra. */
static void test_frame_decode_as_sent(void **state)
{
    (void)state;
    uint8_t buf[256];
    struct vw_ift_frame fr;
    struct vw_ift_frame_mode carried;
    struct vw_findings fs;
    const struct vw_ift_frame_mode both = {.hc = true, .pc = true, .check_vtag = true, .vtag = 0x2222};
    const struct vw_ift_frame_mode none = {.hc = false, .pc = false};

    /* as announced: no finding */
    size_t n = make_frame(buf, sizeof buf, 0x2222, true, true, false, "as announced");
    vw_findings_clear(&fs);
    assert_int_equal(vw_ift_frame_decode_as_sent(buf, n, &both, &fr, &carried, &fs), VW_REQ_NONE);
    assert_int_equal(fs.count, 0);
    assert_true(carried.hc && carried.pc && carried.check_vtag);

    /* header CRC only, both announced: the payload CRC is missing */
    n = make_frame(buf, sizeof buf, 0x2222, true, false, false, "header crc only");
    vw_findings_clear(&fs);
    assert_int_equal(vw_ift_frame_decode_as_sent(buf, n, &both, &fr, &carried, &fs), VW_REQ_NONE);
    assert_true(carried.hc);
    assert_false(carried.pc);
    assert_true(fr.hdr_crc_ok);
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_IFT_5_1_CRC_AS_NEGOTIATED);
    assert_string_equal(fs.item[0].detail, "Payload CRC missing, but the sender announced PC=1");

    /* payload CRC only, both announced: the one that verifies in place wins */
    n = make_frame(buf, sizeof buf, 0x2222, false, true, false, "payload crc only");
    vw_findings_clear(&fs);
    assert_int_equal(vw_ift_frame_decode_as_sent(buf, n, &both, &fr, &carried, &fs), VW_REQ_NONE);
    assert_false(carried.hc);
    assert_true(carried.pc);
    assert_true(fr.payload_crc_ok);
    assert_int_equal(fs.count, 1);
    assert_string_equal(fs.item[0].detail, "Header CRC missing, but the sender announced HC=1");

    /* both CRCs where none were announced: two findings */
    n = make_frame(buf, sizeof buf, 0x2222, true, true, false, "two extra crcs");
    vw_findings_clear(&fs);
    assert_int_equal(vw_ift_frame_decode_as_sent(buf, n, &none, &fr, &carried, &fs), VW_REQ_NONE);
    assert_int_equal(fs.count, 2);
    assert_string_equal(fs.item[0].detail, "Header CRC present, but the sender announced HC=0");
    assert_string_equal(fs.item[1].detail, "Payload CRC present, but the sender announced PC=0");

    /* sizes that fit no layout: decoded as announced, FRAME-LEN */
    n = make_frame(buf, sizeof buf, 0x2222, false, false, false, "three bytes short");
    vw_findings_clear(&fs);
    assert_int_equal(vw_ift_frame_decode_as_sent(buf, n - 3, &both, &fr, &carried, &fs),
                     VW_REQ_IFT_5_1_FRAME_LEN);
    assert_false(vw_ift_frame_layout(buf, 5, &both, &carried));
}

/* Framing a stream whose sender broke its announcement: the layout that
 * ends at the bytes at hand or at the next frame's VTag. */
static void test_frame_len_in_step(void **state)
{
    (void)state;
    uint8_t buf[512];
    const struct vw_ift_frame_mode both = {.hc = true, .pc = true, .check_vtag = true, .vtag = 0x2222};
    size_t a = make_frame(buf, sizeof buf, 0x2222, true, false, false, "header crc only");
    size_t b = make_frame(buf + a, sizeof buf - a, 0x2222, true, true, false, "next frame");
    /* the announced layout would be 4 bytes longer than the first frame */
    assert_int_equal(vw_ift_frame_len_in_step(buf, a, &both), a);
    assert_int_equal(vw_ift_frame_len_in_step(buf, a + b, &both), a);
    /* as announced: the announced length */
    assert_int_equal(vw_ift_frame_len_in_step(buf + a, b, &both), b);
    /* nothing lines up (wrong VTag after it, more bytes than any layout): as announced */
    const struct vw_ift_frame_mode other = {.hc = true, .pc = true, .check_vtag = true, .vtag = 0x3333};
    assert_int_equal(vw_ift_frame_len_in_step(buf, a + b, &other), a + 4);
    /* without the receiver's VTag the announcement alone decides */
    const struct vw_ift_frame_mode unknown = {.hc = true, .pc = true};
    assert_int_equal(vw_ift_frame_len_in_step(buf, a, &unknown), a + 4);
    assert_int_equal(vw_ift_frame_len_in_step(buf, 5, &both), 0);
}

static void test_indication_notes(void **state)
{
    (void)state;
    struct vw_ift_ind ind;
    struct vw_findings fs;
    memset(&ind, 0, sizeof ind);
    vw_findings_clear(&fs);
    ind.flags = VW_IFT_FLAG_R | VW_IFT_FLAG_HC;
    vw_ift_ind_notes(&ind, &fs);
    assert_int_equal(fs.count, 0);
    ind.flags |= VW_IFT_FLAG_SP | VW_IFT_FLAG_IH | VW_IFT_FLAG_IP;
    vw_ift_ind_notes(&ind, &fs);
    assert_int_equal(fs.count, 2);
    assert_int_equal(fs.item[0].req, VW_REQ_IFT_4_2_SP_PERMISSION);
    assert_int_equal(fs.item[0].severity, VW_SEV_NOTE);
    assert_int_equal(fs.item[1].req, VW_REQ_IFT_4_2_IGNORE_CRC);
    assert_non_null(strstr(fs.item[1].detail, "header and payload CRC"));
}

/* IFT-4.2-R-MODE: in RDMA mode (both R set) every DDP header carries RDMAP
 * version 1; in DDP mode (both clear) the byte is the ULP's. */
static size_t frame_with_rdmap_version(uint8_t *buf, size_t cap, uint16_t vtag, unsigned rv)
{
    struct vw_ddp_hdr h = {.tagged = true, .last = true, .dv = 1, .rdmap_rv = (uint8_t)rv,
                           .rdmap_opcode = VW_RDMAP_WRITE, .stag = 0x11223344u, .to = 8};
    uint8_t ddp[18];
    size_t dl = vw_ddp_encode(&h, ddp, sizeof ddp);
    struct vw_ift_frame_enc e;
    vw_ift_frame_enc_init(&e, vtag, false, false, ddp, dl, (const uint8_t *)"data", 4);
    return vw_ift_frame_encode(&e, buf, cap);
}

static void test_rdma_mode_rdmap_version(void **state)
{
    (void)state;
    uint8_t ia[64], ib[64], f1[64], f0[64];
    make_ind(ia, 0, 0xA0A0, false, false);
    make_ind(ib, 1, 0xB0B0, false, false);
    size_t n1 = frame_with_rdmap_version(f1, sizeof f1, 0xB0B0, 1);
    size_t n0 = frame_with_rdmap_version(f0, sizeof f0, 0xB0B0, 0);
    assert_int_equal(f0[VW_IFT_FRAME_HDR_LEN + 1] >> 6, 0);

    /* RDMA mode (make_ind sets R): version 1 keeps the rule, version 0 breaks it */
    struct vw_ift_conn c;
    struct got g = {0};
    assert_int_equal(vw_ift_conn_init(&c), 0);
    vw_ift_conn_feed(&c, 0, ia, 64, on_pdu, &g);
    vw_ift_conn_feed(&c, 1, ib, 64, on_pdu, &g);
    assert_true(vw_ift_nego_rdma(&c.nego));
    vw_ift_conn_feed(&c, 0, f1, n1, on_pdu, &g);
    assert_int_equal(g.findings, 0);
    vw_ift_conn_feed(&c, 0, f0, n0, on_pdu, &g);
    assert_int_equal(g.findings, 1);
    assert_int_equal(g.last.item[0].req, VW_REQ_IFT_4_2_R_MODE);
    assert_int_equal(g.last.item[0].severity, VW_SEV_ERROR);
    assert_int_equal(g.last.item[0].offset, 7);
    assert_string_equal(g.last.item[0].detail,
                        "RDMAP version 0 in RDMA mode (both ends set R), must be 1 (RFC 5040, I5)");
    vw_ift_conn_free(&c);

    /* DDP mode (both R clear): the same frame is the ULP's business */
    struct vw_ift_ind_enc e;
    vw_ift_ind_enc_init(&e, 0, 0xA0A0, false, false);
    e.flags &= ~VW_IFT_FLAG_R;
    vw_ift_ind_encode(&e, ia, 64);
    vw_ift_ind_enc_init(&e, 1, 0xB0B0, false, false);
    e.flags &= ~VW_IFT_FLAG_R;
    vw_ift_ind_encode(&e, ib, 64);
    memset(&g, 0, sizeof g);
    assert_int_equal(vw_ift_conn_init(&c), 0);
    vw_ift_conn_feed(&c, 0, ia, 64, on_pdu, &g);
    vw_ift_conn_feed(&c, 1, ib, 64, on_pdu, &g);
    assert_false(vw_ift_nego_rdma(&c.nego));
    vw_ift_conn_feed(&c, 0, f0, n0, on_pdu, &g);
    assert_int_equal(g.findings, 0);
    vw_ift_conn_free(&c);

    /* the negotiation alone: no mode before both indications, none on a
     * disagreement; the rule function used by lint and dissector */
    struct vw_ift_nego n;
    struct vw_ift_ind a, b;
    struct vw_findings fs;
    struct vw_ift_frame fr;
    struct vw_ift_frame_mode m = {.check_vtag = true, .vtag = 0xB0B0};
    assert_int_equal(frame_exact(f0, n0, &m, &fr, &fs), VW_REQ_NONE);
    assert_int_equal(fs.count, 0); /* the decoder alone does not know the mode */
    vw_ift_nego_init(&n);
    make_ind(ia, 0, 0xA0A0, false, false);
    assert_int_equal(ind_exact(ia, 64, &a, &fs), VW_REQ_NONE);
    vw_ift_nego_indication(&n, 0, &a, &fs);
    vw_findings_clear(&fs);
    vw_ift_nego_frame_rules(&n, 0, &fr, &fs);
    assert_int_equal(fs.count, 0);
    make_ind(ib, 1, 0xB0B0, false, false);
    assert_int_equal(ind_exact(ib, 64, &b, &fs), VW_REQ_NONE);
    vw_ift_nego_indication(&n, 1, &b, &fs);
    vw_findings_clear(&fs);
    vw_ift_nego_frame_rules(&n, 0, &fr, &fs);
    vw_ift_nego_frame_rules(&n, 2, &fr, &fs); /* no such side: nothing */
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_IFT_4_2_R_MODE);
    n.ind[1].flags &= ~VW_IFT_FLAG_R;
    vw_findings_clear(&fs);
    vw_ift_nego_frame_rules(&n, 0, &fr, &fs);
    assert_int_equal(fs.count, 0);
}

/* IFT-5.1-RDMA-HDR-IN-PAYLOAD: header_size counts the DDP header only (I6);
 * an RDMA Read Request that counts its 28-byte RDMAP header in it is named,
 * the same request with the header in the payload is clean. */
static void test_rdma_header_belongs_to_payload(void **state)
{
    (void)state;
    struct vw_ddp_hdr h = {.tagged = false, .last = true, .dv = 1, .rdmap_rv = 1,
                           .rdmap_opcode = VW_RDMAP_READ_REQUEST, .qn = 1, .msn = 1};
    uint8_t hdr[18 + 28], frame[128];
    assert_int_equal(vw_ddp_encode(&h, hdr, sizeof hdr), 18);
    for (unsigned i = 0; i < 28; i++)
        hdr[18 + i] = (uint8_t)(0x40 + i); /* sink STag/TO, size, source STag/TO */
    const struct vw_ift_frame_mode m = {.hc = true, .pc = true, .check_vtag = true, .vtag = 0x1234};
    struct vw_ift_frame_enc e;
    struct vw_ift_frame fr;
    struct vw_findings fs;

    vw_ift_frame_enc_init(&e, 0x1234, true, true, hdr, 18, hdr + 18, 28); /* as I6 says */
    size_t n = vw_ift_frame_encode(&e, frame, sizeof frame);
    assert_int_equal(frame_exact(frame, n, &m, &fr, &fs), VW_REQ_NONE);
    assert_int_equal(fs.count, 0);
    assert_true(fr.ddp_decoded);

    vw_ift_frame_enc_init(&e, 0x1234, true, true, hdr, sizeof hdr, NULL, 0); /* RDMAP header counted */
    n = vw_ift_frame_encode(&e, frame, sizeof frame);
    assert_int_equal(frame_exact(frame, n, &m, &fr, &fs), VW_REQ_NONE);
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_IFT_5_1_RDMA_HDR_IN_PAYLOAD);
    assert_int_equal(fs.item[0].severity, VW_SEV_ERROR);
    assert_string_equal(fs.item[0].detail, "header_size 46 counts the 28-byte RDMA Read Request header, "
                                           "which belongs to the payload (DDP header: 18 bytes)");
    /* 46 bytes that are not a Read Request stay a plain size note */
    hdr[1] = (uint8_t)(1u << 6 | VW_RDMAP_SEND);
    vw_ift_frame_enc_init(&e, 0x1234, true, true, hdr, sizeof hdr, NULL, 0);
    n = vw_ift_frame_encode(&e, frame, sizeof frame);
    assert_int_equal(frame_exact(frame, n, &m, &fr, &fs), VW_REQ_NONE);
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_IFT_5_1_DDP_HDR_PRESENT);
}

static void test_garbage_never_overreads(void **state)
{
    (void)state;
    srand(777);
    for (int round = 0; round < 300; round++) {
        size_t n = (size_t)(rand() % 400);
        uint8_t tmp[400];
        for (size_t i = 0; i < n; i++)
            tmp[i] = (uint8_t)rand();
        if (round & 1 && n >= 64) { /* a valid indication, then garbage frames */
            make_ind(tmp, 0, 1, rand() & 1, rand() & 1);
            for (size_t i = 64; i + 4 <= n; i += 37) {
                tmp[i] = 0;
                tmp[i + 2] = 0;
            }
        }
        struct vw_ift_ind ind;
        struct vw_ift_frame fr;
        struct vw_findings fs;
        struct vw_ift_frame_mode m = {.hc = rand() & 1, .pc = rand() & 1};
        (void)ind_exact(tmp, n, &ind, &fs);
        (void)frame_exact(tmp, n, &m, &fr, &fs);
        uint8_t *d = exact(tmp, n);
        (void)vw_ift_guess_mode(d, n, &m);
        (void)vw_ift_plausible_indication(d, n);
        free(d);
        struct vw_ift_conn c;
        assert_int_equal(vw_ift_conn_init(&c), 0);
        size_t p = 0;
        while (p < n) {
            size_t k = 1 + (size_t)(rand() % 50);
            if (k > n - p)
                k = n - p;
            uint8_t *piece = exact(tmp + p, k);
            enum vw_req r = vw_ift_conn_feed(&c, (int)(p & 1), piece, k, NULL, NULL);
            free(piece);
            p += k;
            (void)r;
        }
        vw_ift_conn_free(&c);
    }
}

/* The RDMAP Read Request header (RFC 5040 4.4) round trip, and a frame
 * built from a DDP header that the frame decoder reads back with good CRCs. */
static void test_read_request_and_frame_build(void **state)
{
    (void)state;
    struct vw_rdmap_read_req rq = {0x11223344u, 0x0102030405060708ull, 4096, 0x55667788u, 0x1000},
                             back;
    uint8_t b[VW_RDMAP_READ_REQ_HDR_LEN];
    assert_int_equal(vw_rdmap_read_req_encode(&rq, b, sizeof b - 1), 0);
    assert_int_equal(vw_rdmap_read_req_encode(&rq, b, sizeof b), VW_RDMAP_READ_REQ_HDR_LEN);
    assert_int_equal(b[0], 0x11);
    assert_int_equal(b[11], 0x08);
    assert_int_equal(b[15], 0x00); /* size 4096 = 00 00 10 00 */
    assert_int_equal(b[14], 0x10);
    assert_false(vw_rdmap_read_req_decode(b, sizeof b - 1, &back));
    assert_true(vw_rdmap_read_req_decode(b, sizeof b, &back));
    assert_int_equal(back.sink_stag, rq.sink_stag);
    assert_int_equal(back.sink_to, rq.sink_to);
    assert_int_equal(back.size, rq.size);
    assert_int_equal(back.src_stag, rq.src_stag);
    assert_int_equal(back.src_to, rq.src_to);

    struct vw_ddp_hdr h = {.tagged = false, .last = true, .dv = VW_DDP_VERSION, .rdmap_rv = VW_RDMAP_VERSION,
                           .rdmap_opcode = VW_RDMAP_READ_REQUEST, .qn = 1, .msn = 7, .mo = 0};
    uint8_t fr[128];
    size_t n = vw_ift_frame_build(&h, b, sizeof b, 0xBEEF, true, true, fr, sizeof fr);
    assert_int_equal(n, vw_ift_frame_len(VW_DDP_UNTAGGED_HDR_LEN, sizeof b, true, true));
    assert_int_equal(vw_ift_frame_build(&h, b, sizeof b, 0xBEEF, true, true, fr, n - 1), 0);
    struct vw_ift_frame_mode m = {.hc = true, .pc = true, .check_vtag = true, .vtag = 0xBEEF};
    struct vw_ift_frame f;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    assert_int_equal(vw_ift_frame_decode(fr, n, &m, &f, &fs), VW_REQ_NONE);
    assert_int_equal(fs.count, 0);
    assert_int_equal(vw_ift_frame_fatal(&f, &m), VW_REQ_NONE);
    assert_true(f.ddp_decoded);
    assert_int_equal(f.ddp_hdr.rdmap_opcode, VW_RDMAP_READ_REQUEST);
    assert_int_equal(f.ddp_hdr.msn, 7);
    assert_int_equal(f.payload_size, VW_RDMAP_READ_REQ_HDR_LEN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crc32c_iscsi_byte_order),
        cmocka_unit_test(test_indication_bytes_and_round_trip),
        cmocka_unit_test(test_indication_errors),
        cmocka_unit_test(test_frame_round_trip_every_mode),
        cmocka_unit_test(test_empty_payload_crc_is_zero),
        cmocka_unit_test(test_frame_errors),
        cmocka_unit_test(test_guess_mode),
        cmocka_unit_test(test_framer_every_split),
        cmocka_unit_test(test_framer_errors),
        cmocka_unit_test(test_connection_rules),
        cmocka_unit_test(test_nego_without_framers),
        cmocka_unit_test(test_nego_bc_version_answer),
        cmocka_unit_test(test_frame_decode_as_sent),
        cmocka_unit_test(test_frame_len_in_step),
        cmocka_unit_test(test_indication_notes),
        cmocka_unit_test(test_rdma_mode_rdmap_version),
        cmocka_unit_test(test_rdma_header_belongs_to_payload),
        cmocka_unit_test(test_garbage_never_overreads),
        cmocka_unit_test(test_reactions_judged_by_the_reaction),
        cmocka_unit_test(test_no_data_after_error),
        cmocka_unit_test(test_read_request_and_frame_build),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
