/* VI/TCP segment codec: round trips of every field, every decode error
 * named by its rule, stateless checks, deliberate faults of the encoder. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "vitcp/bytes.h"
#include "vitcp/checksum.h"
#include "vitcp/vitcp.h"

static uint8_t buf[70000];

static size_t enc(const struct vw_vitcp_enc *e)
{
    size_t n = vw_vitcp_encode(e, buf, sizeof buf);
    assert_int_equal(n, vw_vitcp_encoded_len(e));
    return n;
}

/* A one-segment Send of p[0..len), with or without the CRC trailer, in buf; its length. */
static size_t enc_send(const uint8_t *p, size_t len, bool crc)
{
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, VW_VITCP_SEND, crc);
    e.payload = p;
    e.payload_len = len;
    return enc(&e);
}

static void test_type_table(void **state)
{
    (void)state;
    assert_int_equal(vw_vitcp_type_hdr_len(VW_VITCP_SEND), 24);
    assert_int_equal(vw_vitcp_type_hdr_len(VW_VITCP_RDMA_WRITE), 40);
    assert_int_equal(vw_vitcp_type_hdr_len(VW_VITCP_RDMA_READ_REQ), 40);
    assert_int_equal(vw_vitcp_type_hdr_len(VW_VITCP_CONNECT_REQUEST), 164);
    assert_int_equal(vw_vitcp_type_hdr_len(VW_VITCP_CONNECT_NOMATCH), 24);
    assert_string_equal(vw_vitcp_type_name(3), "RdmaReadResponse");
    assert_string_equal(vw_vitcp_type_name(9), "Unknown");
    assert_string_equal(vw_vitcp_opt_name(VW_VITCP_OPT_URGENT), "Urgent Marker");
    assert_true(vw_vitcp_type_single_segment(VW_VITCP_NOP));
    assert_false(vw_vitcp_type_single_segment(VW_VITCP_SEND));
    assert_true(vw_vitcp_type_supports_imm(VW_VITCP_RDMA_WRITE));
    assert_false(vw_vitcp_type_supports_imm(VW_VITCP_RDMA_READ_RESP));
}

static void test_send_round_trip_every_field(void **state)
{
    (void)state;
    static const uint8_t payload[] = "hello, VI";
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, VW_VITCP_SEND, true);
    e.hdr.flags = VW_VITCP_FLAG_IDV; /* not the last segment */
    e.hdr.data_offset = 0;
    e.hdr.imm_data = 0xA1B2C3D4;
    e.hdr.msg_num = 0xFFFFFFF0;
    e.hdr.msg_ack = 77;
    e.hdr.rx_desc_posted = 0xBEEF;
    e.hdr.remote_err = 0x5A00 | VW_VITCP_ERR_VDE;
    e.payload = payload;
    e.payload_len = sizeof payload;
    size_t n = enc(&e);
    assert_int_equal(n, 24 + sizeof payload + 4);
    /* Numeric fields are big-endian (section 3); the trailer LSB first (V4). */
    assert_int_equal(buf[0], 1);
    assert_int_equal(buf[1], 0x40);
    assert_int_equal(vw_get_be16(buf + 2), n);
    assert_int_equal(vw_get_be32(buf + 8), 0xA1B2C3D4);
    assert_int_equal(vw_get_le32(buf + n - 4), vw_crc_vitcp(buf, n - 4));

    struct vw_vitcp_seg s;
    struct vw_findings f;
    vw_findings_clear(&f);
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_ON, &s, &f), VW_REQ_NONE);
    assert_int_equal(f.count, 0);
    assert_int_equal(s.hdr.version, 1);
    assert_int_equal(s.hdr.type, VW_VITCP_SEND);
    assert_int_equal(s.hdr.flags, VW_VITCP_FLAG_IDV);
    assert_int_equal(s.hdr.seg_len, n);
    assert_int_equal(s.hdr.imm_data, 0xA1B2C3D4);
    assert_int_equal(s.hdr.msg_num, 0xFFFFFFF0);
    assert_int_equal(s.hdr.msg_ack, 77);
    assert_int_equal(s.hdr.rx_desc_posted, 0xBEEF);
    assert_int_equal(s.hdr.remote_err, 0x5A02);
    assert_false(s.has_rdma);
    assert_false(s.has_ce);
    assert_int_equal(s.payload_len, sizeof payload);
    assert_int_equal(s.payload_offset, 24);
    assert_memory_equal(s.payload, payload, sizeof payload);
    assert_true(s.has_crc);
    assert_true(s.crc_ok);
}

static void test_rdma_round_trip(void **state)
{
    (void)state;
    uint8_t data[100];
    memset(data, 0x33, sizeof data);
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, VW_VITCP_RDMA_WRITE, false);
    e.rdma.addr = 0x0123456789ABCDEFull;
    e.rdma.handle = 0xCAFEF00D;
    e.rdma.length = 100;
    e.payload = data;
    e.payload_len = sizeof data;
    size_t n = enc(&e);
    assert_int_equal(n, 140);
    struct vw_vitcp_seg s;
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &s, NULL), VW_REQ_NONE);
    assert_true(s.has_rdma);
    assert_true(s.rdma.addr == 0x0123456789ABCDEFull);
    assert_int_equal(s.rdma.handle, 0xCAFEF00D);
    assert_int_equal(s.rdma.length, 100);
    assert_int_equal(s.payload_offset, 40);
    assert_int_equal(s.payload_len, 100);
    assert_false(s.has_crc);
}

static void test_ce_round_trip_and_options(void **state)
{
    (void)state;
    uint8_t opts[16];
    size_t ol = vw_vitcp_opts_build(opts, sizeof opts, true, true, true);
    assert_int_equal(ol, 10);
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_REQUEST, true);
    e.ce.attrs = VW_VITCP_ATTR_RELIABLE_RECEPTION | VW_VITCP_ATTR_RDMA_READ | VW_VITCP_ATTR_DFC;
    e.ce.calling_disc_len = 5;
    memcpy(e.ce.calling_disc, "alpha", 5);
    e.ce.called_disc_len = 4;
    memcpy(e.ce.called_disc, "beta", 4);
    e.ce.mtu = 131072;
    e.ce.rdma_read_window = 8;
    e.ce.options = opts;
    e.ce.options_len = ol;
    e.hdr.msg_num = 1000;
    size_t n = enc(&e);
    assert_int_equal(n, 164 + 10 + 4);
    struct vw_vitcp_seg s;
    struct vw_findings f;
    vw_findings_clear(&f);
    /* CE segments decide their trailer from their own options, whatever the mode. */
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &s, &f), VW_REQ_NONE);
    assert_int_equal(f.count, 0);
    assert_true(s.has_ce);
    assert_int_equal(s.ce.attrs, e.ce.attrs);
    assert_int_equal(s.ce.calling_disc_len, 5);
    assert_memory_equal(s.ce.calling_disc, "alpha", 5);
    assert_int_equal(s.ce.called_disc_len, 4);
    assert_memory_equal(s.ce.called_disc, "beta", 4);
    assert_int_equal(s.ce.mtu, 131072);
    assert_int_equal(s.ce.rdma_read_window, 8);
    assert_true(s.ce.opt_crc);
    assert_true(s.ce.opt_urgent);
    assert_true(s.ce.opt_eol);
    assert_int_equal(s.ce.opt_unknown, 0);
    assert_int_equal(s.ce.options_len, 10);
    assert_true(s.has_crc && s.crc_ok);

    /* Walk the options one by one. */
    size_t pos = 0;
    uint16_t t, l;
    const uint8_t *d;
    assert_int_equal(vw_vitcp_opt_next(opts, ol, &pos, &t, &l, &d), 1);
    assert_int_equal(t, VW_VITCP_OPT_CRC);
    assert_int_equal(l, 4);
    assert_int_equal(vw_vitcp_opt_next(opts, ol, &pos, &t, &l, &d), 1);
    assert_int_equal(t, VW_VITCP_OPT_URGENT);
    assert_int_equal(vw_vitcp_opt_next(opts, ol, &pos, &t, &l, &d), 0);
    assert_int_equal(pos, 10);
}

static void test_ce_without_crc_has_no_trailer(void **state)
{
    (void)state;
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_ACCEPT, false);
    size_t n = enc(&e);
    assert_int_equal(n, 164);
    struct vw_vitcp_seg s;
    struct vw_findings f;
    vw_findings_clear(&f);
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_ON, &s, &f), VW_REQ_NONE);
    assert_false(s.has_crc);
    assert_int_equal(f.count, 0);
}

/* VITCP-3.5-CE-TRAILER-IFF-OPT both ways: a CE segment with a trailer but
 * no CRC option, and one with the option but no trailer. */
static void test_ce_trailer_iff_option(void **state)
{
    (void)state;
    uint8_t opts[16];
    struct vw_vitcp_enc e;
    struct vw_vitcp_seg s;
    struct vw_findings f;
    for (int with_eol = 0; with_eol < 2; with_eol++) {
        size_t ol = vw_vitcp_opts_build(opts, sizeof opts, false, true, with_eol);
        vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_REQUEST, false);
        e.ce.options = opts;
        e.ce.options_len = ol;
        e.trailer = VW_VITCP_TRAILER_CRC; /* trailer, no CRC option */
        size_t n = enc(&e);
        vw_findings_clear(&f);
        assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &s, &f), VW_REQ_NONE);
        assert_true(s.has_crc && s.crc_ok);
        assert_false(s.ce.opt_crc);
        assert_true(s.ce.opt_urgent);
        assert_int_equal(s.ce.opt_unknown, 0);
        assert_int_equal(f.count, 1);
        assert_int_equal(f.item[0].req, VW_REQ_VITCP_3_5_CE_TRAILER_IFF_OPT);
    }
    size_t ol = vw_vitcp_opts_build(opts, sizeof opts, true, false, true);
    vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_ACCEPT, true);
    e.ce.options = opts;
    e.ce.options_len = ol;
    e.trailer = VW_VITCP_TRAILER_NONE; /* CRC option, no trailer */
    size_t n = enc(&e);
    vw_findings_clear(&f);
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &s, &f), VW_REQ_NONE);
    assert_false(s.has_crc);
    assert_true(s.ce.opt_crc && s.ce.opt_eol);
    assert_int_equal(f.count, 1);
    assert_int_equal(f.item[0].req, VW_REQ_VITCP_3_5_CE_TRAILER_IFF_OPT);
    /* The same option list with its trailer is clean. */
    e.trailer = VW_VITCP_TRAILER_CRC;
    n = enc(&e);
    vw_findings_clear(&f);
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &s, &f), VW_REQ_NONE);
    assert_true(s.has_crc && s.crc_ok);
    assert_int_equal(f.count, 0);
}

static void test_refuse_lengths(void **state)
{
    (void)state;
    struct vw_vitcp_enc e;
    struct vw_vitcp_seg s;
    struct vw_findings f;
    for (int crc = 0; crc < 2; crc++) {
        vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_REJECT, crc);
        size_t n = enc(&e);
        assert_int_equal(n, crc ? 28 : 24);
        vw_findings_clear(&f);
        assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_AUTO, &s, &f), VW_REQ_NONE);
        assert_int_equal(s.has_crc, crc);
        assert_int_equal(f.count, 0);
    }
    uint8_t extra[8] = {0};
    vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_NOMATCH, false);
    e.payload = extra;
    e.payload_len = sizeof extra;
    size_t n = enc(&e);
    vw_findings_clear(&f);
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &s, &f), VW_REQ_NONE);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_2_SEG_LEN_EXACT));
}

/* ---- every decode error names its rule */

static void test_fatal_errors(void **state)
{
    (void)state;
    struct vw_vitcp_enc e;
    struct vw_vitcp_seg s;
    vw_vitcp_enc_init(&e, VW_VITCP_SEND, false);
    size_t n = enc(&e);
    /* truncated below a header */
    assert_int_equal(vw_vitcp_decode(buf, 10, VW_VITCP_CRC_OFF, &s, NULL), VW_REQ_VITCP_3_2_SEG_LEN_MIN);
    /* Segment Length under 24 */
    vw_put_be16(buf + 2, 20);
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &s, NULL), VW_REQ_VITCP_3_2_SEG_LEN_MIN);
    /* more announced than given */
    vw_put_be16(buf + 2, 100);
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &s, NULL), VW_REQ_VITCP_3_2_SEG_LEN_EXACT);
    /* unknown type */
    vw_put_be16(buf + 2, 24);
    buf[1] = 0x80 | 9;
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &s, NULL), VW_REQ_VITCP_3_2_TYPE_KNOWN);
    /* RDMA header missing */
    buf[1] = 0x80 | VW_VITCP_RDMA_WRITE;
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &s, NULL), VW_REQ_VITCP_3_RDMA_HDR_PRESENT);
    /* CE header missing */
    buf[1] = 0x80 | VW_VITCP_CONNECT_REQUEST;
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &s, NULL), VW_REQ_VITCP_3_CE_HDR_PRESENT);
    /* no room for the negotiated trailer */
    buf[1] = 0x80 | VW_VITCP_SEND;
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_ON, &s, NULL), VW_REQ_VITCP_3_2_SEG_LEN_HEADERS);
}

static struct vw_findings decode_findings(size_t n, enum vw_vitcp_crc_mode mode)
{
    struct vw_vitcp_seg s;
    struct vw_findings f;
    vw_findings_clear(&f);
    assert_int_equal(vw_vitcp_decode(buf, n, mode, &s, &f), VW_REQ_NONE);
    return f;
}

static void test_stateless_rules(void **state)
{
    (void)state;
    struct vw_vitcp_enc e;
    struct vw_findings f;

    vw_vitcp_enc_init(&e, VW_VITCP_NOP, false);
    e.hdr.version = 2;
    f = decode_findings(enc(&e), VW_VITCP_CRC_OFF);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_2_VERSION));

    vw_vitcp_enc_init(&e, VW_VITCP_NOP, false);
    e.hdr.flags |= VW_VITCP_FLAG_IDV;
    e.hdr.imm_data = 5;
    f = decode_findings(enc(&e), VW_VITCP_CRC_OFF);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_2_IDV_ZERO_NA));
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_2_IMM_ZERO_NA));

    vw_vitcp_enc_init(&e, VW_VITCP_SEND, false);
    e.hdr.imm_data = 5;
    f = decode_findings(enc(&e), VW_VITCP_CRC_OFF);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_2_IMM_ZERO_NO_IDV));
    assert_int_equal(f.item[0].severity, VW_SEV_NOTE);

    vw_vitcp_enc_init(&e, VW_VITCP_RDMA_READ_REQ, false);
    e.hdr.flags = 0;
    e.hdr.data_offset = 4;
    f = decode_findings(enc(&e), VW_VITCP_CRC_OFF);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_2_SINGLE_SEGMENT));
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_2_FLAGS_RESERVED));

    vw_vitcp_enc_init(&e, VW_VITCP_SEND, false);
    e.hdr.remote_err = 0x0010;
    f = decode_findings(enc(&e), VW_VITCP_CRC_OFF);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_2_ERR_RESERVED));

    uint8_t junk[4] = {1, 2, 3, 4};
    vw_vitcp_enc_init(&e, VW_VITCP_NOP, false);
    e.payload = junk;
    e.payload_len = 4;
    f = decode_findings(enc(&e), VW_VITCP_CRC_OFF);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_2_SEG_LEN_EXACT));

    vw_vitcp_enc_init(&e, VW_VITCP_SEND, false);
    e.hdr.data_offset = 0xFFFFFFFE;
    e.payload = junk;
    e.payload_len = 4;
    f = decode_findings(enc(&e), VW_VITCP_CRC_OFF);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_2_MSG_SIZE_4G));
}

static void test_ce_rules(void **state)
{
    (void)state;
    struct vw_vitcp_enc e;
    struct vw_findings f;
    vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_REQUEST, false);
    e.ce.attrs = VW_VITCP_ATTR_UNRELIABLE | VW_VITCP_ATTR_RELIABLE_DELIVERY | 0x0100;
    e.ce.calling_disc_len = 65;
    e.ce.called_disc_len = 2;
    e.ce.called_disc[10] = 1;
    e.ce.mtu = 0;
    e.ce.rdma_read_window = 4;
    f = decode_findings(enc(&e), VW_VITCP_CRC_OFF);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_3_ONE_LEVEL));
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_3_ATTR_RESERVED));
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_3_DISC_LEN_MAX));
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_3_DISC_PAD_ZERO));
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_3_MTU_NONZERO));
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_2_2_READ_WINDOW));

    /* CRC option without EOL: the trailer would be read as an option. */
    static const uint8_t crc_no_eol[] = {0, 1, 0, 4};
    vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_REQUEST, true);
    e.ce.options = crc_no_eol;
    e.ce.options_len = sizeof crc_no_eol;
    f = decode_findings(enc(&e), VW_VITCP_CRC_OFF);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_3_OPT_EOL_WITH_CRC));

    /* malformed option length, unknown option, wrong fixed length */
    static const uint8_t bad_len[] = {0, 7, 0, 2, 0, 0};
    vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_REQUEST, false);
    e.ce.options = bad_len;
    e.ce.options_len = sizeof bad_len;
    f = decode_findings(enc(&e), VW_VITCP_CRC_OFF);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_3_OPT_FORMAT));
    static const uint8_t odd[] = {0, 9, 0, 6, 0xAA, 0xBB, 0, 2, 0, 8, 1, 2, 3, 4, 0, 0};
    e.ce.options = odd;
    e.ce.options_len = sizeof odd;
    f = decode_findings(enc(&e), VW_VITCP_CRC_OFF);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_3_OPT_IGNORE_UNKNOWN));
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_3_OPT_LEN_FIXED));
    assert_false(vw_findings_has(&f, VW_REQ_VITCP_3_3_OPT_FORMAT));

    /* trailer without the CRC option: read as options, no trailer, so the
     * CE-trailer rule cannot be broken by construction; a trailer-less CE with
     * the option is caught as EOL-with-CRC above. */
}

static void test_crc_readings(void **state)
{
    (void)state;
    struct vw_vitcp_enc e;
    struct vw_findings f;
    static const uint8_t p[] = "123456789";
    const struct { enum vw_vitcp_trailer t; enum vw_req want; } cases[] = {
        {VW_VITCP_TRAILER_BAD_CRC, VW_REQ_VITCP_3_6_CRC_VALID},
        {VW_VITCP_TRAILER_CRC_BE, VW_REQ_VITCP_3_6_CRC_READING},
        {VW_VITCP_TRAILER_CRC_MSB_FIRST, VW_REQ_VITCP_3_6_CRC_READING},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        vw_vitcp_enc_init(&e, VW_VITCP_SEND, true);
        e.payload = p;
        e.payload_len = 9;
        e.trailer = cases[i].t;
        size_t n = enc(&e);
        f = decode_findings(n, VW_VITCP_CRC_ON);
        assert_int_equal(f.count, 1);
        assert_int_equal(f.item[0].req, cases[i].want);
        assert_int_equal(f.item[0].offset, n - 4);
    }
    vw_vitcp_enc_init(&e, VW_VITCP_SEND, true);
    e.trailer = VW_VITCP_TRAILER_VALUE;
    e.trailer_value = 0x1E667EE0;
    size_t n = enc(&e);
    assert_int_equal(buf[n - 4], 0xE0);
    assert_int_equal(buf[n - 1], 0x1E);
}

static void test_auto_trailer(void **state)
{
    (void)state;
    struct vw_vitcp_seg s;
    struct vw_findings f;
    static const uint8_t p[32] = {1, 2, 3};
    size_t n = enc_send(p, sizeof p, true);
    vw_findings_clear(&f);
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_AUTO, &s, &f), VW_REQ_NONE);
    assert_true(s.has_crc);
    assert_int_equal(s.payload_len, sizeof p);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_6_CRC_ONLY_IF_NEGOTIATED));
    n = enc_send(p, sizeof p, false);
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_AUTO, &s, NULL), VW_REQ_NONE);
    assert_false(s.has_crc);
    assert_int_equal(s.payload_len, sizeof p);
}

/* A trailer the CE exchange did not negotiate is recognised by its value. */
static void test_unnegotiated_trailer(void **state)
{
    (void)state;
    struct vw_vitcp_seg s;
    struct vw_findings f;
    static const uint8_t p[40] = {9, 8, 7};
    size_t n = enc_send(p, sizeof p, true);
    vw_findings_clear(&f);
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &s, &f), VW_REQ_NONE);
    assert_true(s.has_crc);
    assert_int_equal(s.payload_len, sizeof p);
    assert_int_equal(f.count, 1);
    assert_int_equal(f.item[0].req, VW_REQ_VITCP_3_6_CRC_ONLY_IF_NEGOTIATED);
    assert_int_equal(f.item[0].severity, VW_SEV_ERROR);
    /* without a trailer nothing is reported */
    n = enc_send(p, sizeof p, false);
    vw_findings_clear(&f);
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &s, &f), VW_REQ_NONE);
    assert_false(s.has_crc);
    assert_int_equal(f.count, 0);
}

static void test_encoder_limits(void **state)
{
    (void)state;
    struct vw_vitcp_enc e;
    static uint8_t big[65536];
    vw_vitcp_enc_init(&e, VW_VITCP_SEND, false);
    e.payload = big;
    e.payload_len = 65535 - 24;
    assert_int_equal(vw_vitcp_encode(&e, buf, sizeof buf), 65535);
    e.payload_len++;
    assert_int_equal(vw_vitcp_encode(&e, buf, sizeof buf), 0); /* over 65535 */
    e.payload_len = 10;
    assert_int_equal(vw_vitcp_encode(&e, buf, 20), 0); /* cap too small */
    e.keep_seg_len = true;
    e.hdr.seg_len = 7; /* a wrong length, asked for explicitly */
    assert_int_equal(vw_vitcp_encode(&e, buf, sizeof buf), 34);
    assert_int_equal(vw_get_be16(buf + 2), 7);
    uint8_t tiny[4];
    assert_int_equal(vw_vitcp_opts_build(tiny, sizeof tiny, true, true, true), 0);
}

/* Random bytes never make the decoder read out of bounds (ASan watches). */
static void test_garbage(void **state)
{
    (void)state;
    srand(7);
    struct vw_vitcp_seg s;
    struct vw_findings f;
    for (int i = 0; i < 20000; i++) {
        size_t n = (size_t)(rand() % 300);
        uint8_t *p = malloc(n ? n : 1);
        for (size_t k = 0; k < n; k++)
            p[k] = (uint8_t)rand();
        if (n >= 4 && (i & 1))
            vw_put_be16(p + 2, (uint16_t)n);
        if (n >= 2 && (i & 2))
            p[0] = 1, p[1] = (uint8_t)(p[1] % 9);
        vw_findings_clear(&f);
        (void)vw_vitcp_decode(p, n, (enum vw_vitcp_crc_mode)(i % 3), &s, &f);
        assert_true(f.count <= VW_FINDINGS_MAX);
        free(p);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_type_table),
        cmocka_unit_test(test_send_round_trip_every_field),
        cmocka_unit_test(test_rdma_round_trip),
        cmocka_unit_test(test_ce_round_trip_and_options),
        cmocka_unit_test(test_ce_without_crc_has_no_trailer),
        cmocka_unit_test(test_ce_trailer_iff_option),
        cmocka_unit_test(test_refuse_lengths),
        cmocka_unit_test(test_fatal_errors),
        cmocka_unit_test(test_stateless_rules),
        cmocka_unit_test(test_ce_rules),
        cmocka_unit_test(test_crc_readings),
        cmocka_unit_test(test_auto_trailer),
        cmocka_unit_test(test_unnegotiated_trailer),
        cmocka_unit_test(test_encoder_limits),
        cmocka_unit_test(test_garbage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
