/* The IFT module of vitcp-conform (conformance/src/proto/ift.c) without a
 * network: its session frames a target's stream built by the wire
 * library's encoders (any chunking), reassembles messages, names the rules
 * a target breaks, survives random bytes; its encoder writes what the case
 * says (CRC choices, false frames, Read Requests that keep data=echo). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "conform/case.h"
#include "conform/core.h"
#include "conform/proto/ift.h"
#include "vitcp/bytes.h"
#include "vitcp/checksum.h"
#include "vitcp/ift.h"
#include "vitcp/ift_stream.h"

static const struct conform_protocol *P = &cf_proto_ift;

#define TESTER_VTAG 0x7A31u
#define TARGET_VTAG 0x1234u

struct got {
    unsigned n;
    unsigned type[16];
    int64_t payload[16], fill[16], l[16], vtag[16];
};

static void sink(void *ctx, const struct cf_msg *m)
{
    struct got *g = ctx;
    if (g->n < 16) {
        g->type[g->n] = m->type;
        int64_t v = -2;
        P->field_value(m, (unsigned)cf_proto_field_by_name(P, "payload"), &g->payload[g->n]);
        P->field_value(m, (unsigned)cf_proto_field_by_name(P, "fill"), &g->fill[g->n]);
        g->l[g->n] = P->field_value(m, (unsigned)cf_proto_field_by_name(P, "l"), &v) ? v : -2;
        P->field_value(m, (unsigned)cf_proto_field_by_name(P, "vtag"), &g->vtag[g->n]);
        char line[200];
        P->describe(m, line, sizeof line);
        assert_true(line[0] != 0);
    }
    g->n++;
    struct cf_msg copy = *m;
    P->msg_free(&copy);
}

static struct cf_case dummy_case;

/* A session whose tester side announced R|HC|PC with TESTER_VTAG. */
static void *tester_session(void)
{
    void *s = P->session_new(&dummy_case, NULL);
    assert_non_null(s);
    struct cf_step st;
    memset(&st, 0, sizeof st);
    st.type = (unsigned)cf_proto_type_by_name(P, "Ind");
    int64_t vals[CF_MAX_FIELDS] = {0};
    struct cf_encoded enc = {0};
    char why[200];
    assert_int_equal(P->encode(s, &st, vals, &enc, why, sizeof why), 0);
    assert_int_equal(enc.len, VW_IFT_IND_LEN);
    P->session_sent(s, &enc);
    free(enc.bytes);
    return s;
}

/* The target's phase 1 indication (flags as given) and frames. */
static size_t target_ind(uint8_t *out, uint32_t flags, uint16_t version, uint16_t bc)
{
    struct vw_ift_ind_enc e;
    vw_ift_ind_enc_init(&e, 1, TARGET_VTAG, true, true);
    e.flags = flags | VW_IFT_FLAG_PH;
    e.version = version;
    e.bc_version = bc;
    return vw_ift_ind_encode(&e, out, VW_IFT_IND_LEN);
}

static size_t send_seg_vtag(uint8_t *out, size_t cap, uint32_t msn, uint32_t mo, bool last, size_t len,
                            unsigned fill, size_t from, uint16_t vtag)
{
    struct vw_ddp_hdr h = {0};
    h.tagged = false;
    h.last = last;
    h.dv = VW_DDP_VERSION;
    h.rdmap_rv = VW_RDMAP_VERSION;
    h.rdmap_opcode = VW_RDMAP_SEND;
    h.qn = 0;
    h.msn = msn;
    h.mo = mo;
    uint8_t pl[256];
    for (size_t i = 0; i < len; i++)
        pl[i] = cf_pattern_byte(from + i, fill);
    return vw_ift_frame_build(&h, pl, len, vtag, true, true, out, cap);
}

static size_t send_seg(uint8_t *out, size_t cap, uint32_t msn, uint32_t mo, bool last, size_t len, unsigned fill,
                       size_t from)
{
    return send_seg_vtag(out, cap, msn, mo, last, len, fill, from, TESTER_VTAG);
}

static void feed_chunked(void *s, const uint8_t *b, size_t n, size_t chunk, struct got *g, struct cf_rx_verdict *v)
{
    for (size_t at = 0; at < n; at += chunk)
        P->session_feed(s, b + at, n - at < chunk ? n - at : chunk, sink, g, v);
}

static void test_send_reassembled_any_chunking(void **state)
{
    (void)state;
    uint8_t stream[1024];
    size_t n = target_ind(stream, VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC, 1, 1);
    n += send_seg(stream + n, sizeof stream - n, 1, 0, false, 60, 5, 0);
    n += send_seg(stream + n, sizeof stream - n, 1, 60, true, 40, 5, 60);
    for (size_t chunk = 1; chunk <= n; chunk = chunk * 3 + 1) {
        void *s = tester_session();
        struct got g = {0};
        struct cf_rx_verdict v = {.req = VW_REQ_NONE};
        feed_chunked(s, stream, n, chunk, &g, &v);
        P->session_finish(s, &v);
        assert_int_equal(v.req, VW_REQ_NONE);
        assert_int_equal(g.n, 2);
        assert_int_equal(g.type[0], (unsigned)cf_proto_type_by_name(P, "Ind"));
        assert_int_equal(g.vtag[0], TARGET_VTAG);
        assert_int_equal(g.type[1], (unsigned)cf_proto_type_by_name(P, "Send"));
        assert_int_equal(g.payload[1], 100); /* two segments, one message */
        assert_int_equal(g.fill[1], 5);
        assert_int_equal(g.l[1], 1);
        P->session_free(s);
    }
}

static void test_rules_the_target_breaks(void **state)
{
    (void)state;
    uint8_t stream[512];
    struct {
        uint32_t flags;
        uint16_t version, bc;
        int mutate; /* 0 none, 1 frame VTag, 2 payload CRC, 3 ind CRC */
        enum vw_req want;
    } t[] = {
        {VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC, 0, 1, 0, VW_REQ_IFT_4_2_VERSION},
        {VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC, 1, 0, 0, VW_REQ_IFT_4_2_BC_VERSION_SET},
        {VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC, 1, 1, 1, VW_REQ_IFT_4_2_VTAG_MATCH},
        {VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC, 1, 1, 2, VW_REQ_IFT_5_1_PAYLOAD_CRC},
        {VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC, 1, 1, 3, VW_REQ_IFT_4_2_IND_CRC},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        size_t n = target_ind(stream, t[k].flags, t[k].version, t[k].bc);
        n += send_seg_vtag(stream + n, sizeof stream - n, 1, 0, true, 20, 1, 0,
                           t[k].mutate == 1 ? TESTER_VTAG ^ 1u : TESTER_VTAG);
        if (t[k].mutate == 2)
            stream[n - 1] ^= 0xFF;
        if (t[k].mutate == 3)
            stream[VW_IFT_IND_CRC_OFF] ^= 0xFF;
        void *s = tester_session();
        struct got g = {0};
        struct cf_rx_verdict v = {.req = VW_REQ_NONE};
        feed_chunked(s, stream, n, 7, &g, &v);
        P->session_finish(s, &v);
        assert_int_equal(v.req, t[k].want);
        assert_true(strlen(v.detail) > 0);
        P->session_free(s);
    }
    /* a bad magic: the indication's own rule (I35) */
    size_t n = target_ind(stream, VW_IFT_FLAG_R, 1, 1);
    stream[3] ^= 1;
    void *s = tester_session();
    struct got g = {0};
    struct cf_rx_verdict v = {.req = VW_REQ_NONE};
    P->session_feed(s, stream, n, sink, &g, &v);
    assert_int_equal(v.req, VW_REQ_IFT_4_1_MAGIC);
    P->session_free(s);
}

/* After a whole frame, bytes that cannot start one (header_size above 255,
 * a foreign VTag): the frame before them was too short, I13. The module
 * fails the case under IFT-5.1-FRAME-LEN and stops reading. */
static void test_framing_lost_named(void **state)
{
    (void)state;
    uint8_t stream[512];
    size_t n = target_ind(stream, VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC, 1, 1);
    n += send_seg(stream + n, sizeof stream - n, 1, 0, true, 20, 1, 0);
    memset(stream + n, 0xFF, 64);
    n += 64;
    void *s = tester_session();
    struct got g = {0};
    struct cf_rx_verdict v = {.req = VW_REQ_NONE};
    feed_chunked(s, stream, n, 5, &g, &v);
    P->session_finish(s, &v);
    assert_int_equal(v.req, VW_REQ_IFT_5_1_FRAME_LEN);
    assert_non_null(strstr(v.detail, "cannot start one"));
    assert_int_equal(g.n, 2); /* the indication and the whole Send */
    P->session_free(s);
}

/* A frame without the header CRC its sender announced, then silence: the
 * stall settles the layout (C45, I18). */
static void test_stall_names_a_missing_crc(void **state)
{
    (void)state;
    uint8_t stream[512];
    size_t n = target_ind(stream, VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC, 1, 1);
    struct vw_ddp_hdr h = {0};
    h.last = true;
    h.dv = VW_DDP_VERSION;
    h.rdmap_rv = VW_RDMAP_VERSION;
    h.rdmap_opcode = VW_RDMAP_SEND;
    h.msn = 1;
    uint8_t ddp[VW_DDP_UNTAGGED_HDR_LEN], pl[30];
    memset(pl, 0x5A, sizeof pl);
    size_t dl = vw_ddp_encode(&h, ddp, sizeof ddp);
    struct vw_ift_frame_enc fe;
    vw_ift_frame_enc_init(&fe, TESTER_VTAG, true, true, ddp, dl, pl, sizeof pl);
    fe.hdr_crc = VW_IFT_CRC_OMIT;
    n += vw_ift_frame_encode(&fe, stream + n, sizeof stream - n);
    void *s = tester_session();
    struct got g = {0};
    struct cf_rx_verdict v = {.req = VW_REQ_NONE};
    P->session_feed(s, stream, n, sink, &g, &v);
    assert_int_equal(v.req, VW_REQ_NONE);
    assert_int_equal(g.n, 1); /* the indication; the frame waits for its layout */
    P->session_stalled(s, &v);
    assert_int_equal(v.req, VW_REQ_IFT_5_1_CRC_AS_NEGOTIATED);
    P->session_free(s);
}

static void test_random_bytes_never_crash(void **state)
{
    (void)state;
    srand(15);
    uint8_t buf[4096];
    for (int round = 0; round < 300; round++) {
        size_t n = (size_t)(rand() % (int)sizeof buf);
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)rand();
        /* half the rounds start with a valid indication, so frames get decoded */
        if (round % 2)
            target_ind(buf, (uint32_t)rand() & ~VW_IFT_FLAG_RESERVED, 1, 1);
        if (n < VW_IFT_IND_LEN && round % 2)
            n = VW_IFT_IND_LEN;
        void *s = tester_session();
        struct got g = {0};
        struct cf_rx_verdict v = {.req = VW_REQ_NONE};
        feed_chunked(s, buf, n, (size_t)(rand() % 97 + 1), &g, &v);
        if (round % 3 == 0)
            P->session_stalled(s, &v);
        P->session_finish(s, &v);
        P->session_free(s);
    }
}

static void test_encoder(void **state)
{
    (void)state;
    void *s = tester_session();
    uint8_t ind[VW_IFT_IND_LEN];
    target_ind(ind, VW_IFT_FLAG_R | VW_IFT_FLAG_HC | VW_IFT_FLAG_PC, 1, 1);
    struct got g = {0};
    struct cf_rx_verdict v = {.req = VW_REQ_NONE};
    P->session_feed(s, ind, sizeof ind, sink, &g, &v);
    char why[200];
    int64_t vals[CF_MAX_FIELDS] = {0};
    struct cf_step st;

    /* a Write with a false frame: parse, encode, the false frame decodes in place */
    memset(&st, 0, sizeof st);
    st.type = (unsigned)cf_proto_type_by_name(P, "Write");
    assert_int_equal(P->parse_send_arg(&st, "false", "100,0x800,9,hcrc", why, sizeof why), 1);
    assert_int_equal(P->parse_send_arg(&st, "false", "100,0x800,9,nonsense", why, sizeof why), -1);
    unsigned fpay = (unsigned)cf_proto_field_by_name(P, "payload");
    st.set[fpay] = true;
    vals[fpay] = 200;
    struct cf_encoded enc = {0};
    assert_int_equal(P->encode(s, &st, vals, &enc, why, sizeof why), 0);
    assert_int_equal(enc.len, 6 + 14 + 4 + 200 + 4);
    assert_int_equal(enc.msg_offset, 0);
    const uint8_t *fals = enc.bytes + 24 + 100;
    assert_int_equal(vw_get_be16(fals), 14);      /* header_size */
    assert_int_equal(vw_get_be16(fals + 2), 32);  /* payload_size */
    assert_int_equal(vw_get_be16(fals + 4), TARGET_VTAG);
    struct vw_ift_frame_mode mode = {true, true, true, TARGET_VTAG};
    struct vw_ift_frame fr;
    assert_int_equal(vw_ift_frame_decode(fals, vw_ift_frame_len(14, 32, true, true), &mode, &fr, NULL), VW_REQ_NONE);
    assert_false(fr.hdr_crc_ok); /* broken as asked */
    assert_true(fr.payload_crc_ok);
    assert_int_equal(fr.ddp_hdr.to, 0x10000000u + 0x800u);
    free(enc.bytes);
    memset(&enc, 0, sizeof enc);

    /* a false frame that does not fit is the case's error */
    vals[fpay] = 50;
    assert_int_equal(P->encode(s, &st, vals, &enc, why, sizeof why), -1);
    free(enc.bytes);
    memset(&enc, 0, sizeof enc);

    /* a Read Request keeps data=echo on the last write; hcrc=omit leaves it out */
    memset(&st, 0, sizeof st);
    st.type = (unsigned)cf_proto_type_by_name(P, "ReadReq");
    assert_int_equal(P->parse_send_arg(&st, "hcrc", "omit", why, sizeof why), 1);
    assert_int_equal(P->parse_send_arg(&st, "hcrc", "sideways", why, sizeof why), -1);
    memset(vals, 0, sizeof vals);
    assert_int_equal(P->encode(s, &st, vals, &enc, why, sizeof why), 0);
    assert_true(enc.msg_offset == CF_MSG_NO_ECHO);
    assert_int_equal(enc.len, 6 + 18 + VW_RDMAP_READ_REQ_HDR_LEN + 4);
    free(enc.bytes);
    memset(&enc, 0, sizeof enc);

    /* an indication with crc=crc32 carries CRC-32, not CRC-32C */
    memset(&st, 0, sizeof st);
    st.type = (unsigned)cf_proto_type_by_name(P, "Ind");
    assert_int_equal(P->parse_send_arg(&st, "crc", "crc32", why, sizeof why), 1);
    assert_int_equal(P->encode(s, &st, vals, &enc, why, sizeof why), 0);
    struct vw_ift_ind in;
    assert_int_equal(vw_ift_ind_decode(enc.bytes, enc.len, &in, NULL), VW_REQ_NONE);
    assert_false(in.crc_ok);
    free(enc.bytes);
    P->session_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_send_reassembled_any_chunking),
        cmocka_unit_test(test_rules_the_target_breaks),
        cmocka_unit_test(test_stall_names_a_missing_crc),
        cmocka_unit_test(test_framing_lost_named),
        cmocka_unit_test(test_random_bytes_never_crash),
        cmocka_unit_test(test_encoder),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
