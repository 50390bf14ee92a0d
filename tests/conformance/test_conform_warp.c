/* The WARP module of vitcp-conform (conformance/src/proto/warp.c) without a
 * network (issue 28, C62, C63): its session reassembles a target's ULP PDUs
 * however they are cut and fed, checks the reserved bits of every chunk,
 * names a ULP PDU left without L when the target goes silent, fails a case
 * when the target delivers the bytes of a chunk the tester marked invalid
 * or answers GOOD to an iSCSI PDU it must not take, reads the draft's
 * Data-In opcode 0x45, and its encoder writes to the RID the target's R2T
 * announced. */
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
#include "conform/proto/warp.h"
#include "vitcp/iscsi_bhs.h"
#include "vitcp/warp.h"

static const struct conform_protocol *P = &cf_proto_warp;

struct got {
    unsigned n;
    unsigned type[16];
    int64_t payload[16], chunks[16], ssn[16], l[16], iop[16];
    uint8_t first[16];
};

static int64_t field(const struct cf_msg *m, const char *name)
{
    int64_t v = -1;
    return P->field_value(m, (unsigned)cf_proto_field_by_name(P, name), &v) ? v : -1;
}

static void sink(void *ctx, const struct cf_msg *m)
{
    struct got *g = ctx;
    if (g->n < 16) {
        g->type[g->n] = m->type;
        g->payload[g->n] = field(m, "payload");
        g->chunks[g->n] = field(m, "chunks");
        g->ssn[g->n] = field(m, "ssn");
        g->l[g->n] = field(m, "l");
        g->iop[g->n] = field(m, "iop");
        g->first[g->n] = m->payload_len ? m->payload[0] : 0;
        char line[200];
        P->describe(m, line, sizeof line);
        assert_true(line[0] != 0);
    }
    g->n++;
    struct cf_msg copy = *m;
    P->msg_free(&copy);
}

/* One chunk of the target's, appended at out. */
static size_t chunk(uint8_t *out, unsigned type, uint16_t flags, uint16_t rsvd, uint32_t ssn_or_rid, uint64_t off,
                    const uint8_t *p, size_t n)
{
    struct vw_warp_enc e;
    vw_warp_enc_init(&e, type, p, n);
    e.flags = flags;
    e.rsvd = rsvd;
    if (type == VW_WARP_SEND)
        e.ssn = ssn_or_rid;
    else
        e.rid = ssn_or_rid;
    e.offset = off;
    size_t len = vw_warp_encoded_len(&e);
    assert_int_equal(vw_warp_encode(&e, out, len), len);
    return len;
}

static void feed_bytewise(void *s, const uint8_t *b, size_t n, struct got *g, struct cf_rx_verdict *v)
{
    for (size_t i = 0; i < n; i++)
        P->session_feed(s, b + i, 1, sink, g, v);
}

static struct cf_case case_with(const char *rule)
{
    struct cf_case c;
    memset(&c, 0, sizeof c);
    c.proto = P;
    c.reqs[0] = vw_req_by_id(rule);
    assert_int_not_equal(c.reqs[0], VW_REQ_NONE);
    c.nreqs = 1;
    return c;
}

/* A Send in four chunks from SSN 0xffffffff (a wrap next), interleaved with
 * an RDMA Write in two, fed a byte at a time: two whole ULP PDUs, the Send's
 * SSN as sent, the next Send SSN 0 without a verdict. */
static void test_reassembles_any_cut(void **state)
{
    (void)state;
    struct cf_case c = case_with("WARP-SUMMARY-SEND-FIELDS");
    void *s = P->session_new(&c, NULL);
    assert_non_null(s);
    uint8_t data[300], b[1024];
    for (unsigned i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 7 + 3);
    size_t n = chunk(b, VW_WARP_SEND, 0, 0, 0xffffffffu, 0, data, 1);
    n += chunk(b + n, VW_WARP_RDMA, 0, 0, 9, 4096, data, 100);
    n += chunk(b + n, VW_WARP_SEND, 0, 0, 0xffffffffu, 1, data + 1, 48);
    n += chunk(b + n, VW_WARP_SEND, 0, 0, 0xffffffffu, 49, data + 49, 150);
    n += chunk(b + n, VW_WARP_RDMA, VW_WARP_FLAG_L, 0, 9, 4196, data + 100, 100);
    n += chunk(b + n, VW_WARP_SEND, VW_WARP_FLAG_L | VW_WARP_FLAG_C, 0, 0xffffffffu, 199, data + 199, 1);
    n += chunk(b + n, VW_WARP_SEND, VW_WARP_FLAG_L, 0, 0, 0, data, 20);
    struct got g = {0};
    struct cf_rx_verdict v = {.req = VW_REQ_NONE};
    feed_bytewise(s, b, n, &g, &v);
    assert_int_equal(v.req, VW_REQ_NONE);
    assert_int_equal(g.n, 3);
    assert_int_equal(g.type[0], VW_WARP_RDMA);
    assert_int_equal(g.payload[0], 200);
    assert_int_equal(g.chunks[0], 2);
    assert_int_equal(g.type[1], VW_WARP_SEND);
    assert_int_equal(g.payload[1], 200);
    assert_int_equal(g.chunks[1], 4);
    assert_int_equal(g.ssn[1], 0xffffffffu);
    assert_int_equal(g.l[1], 1);
    assert_int_equal(g.first[1], data[0]);
    assert_int_equal(g.ssn[2], 0);
    P->session_free(s);
}

/* Reserved bits set on a later chunk of a ULP PDU: WARP-A-RSVD-ZERO. */
static void test_reserved_bits_on_every_chunk(void **state)
{
    (void)state;
    struct cf_case c = case_with("WARP-SUMMARY-SEND-FIELDS");
    void *s = P->session_new(&c, NULL);
    uint8_t b[256], d[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    size_t n = chunk(b, VW_WARP_SEND, 0, 0, 1, 0, d, 4);
    n += chunk(b + n, VW_WARP_SEND, VW_WARP_FLAG_L, 0x100, 1, 4, d + 4, 4);
    struct got g = {0};
    struct cf_rx_verdict v = {.req = VW_REQ_NONE};
    P->session_feed(s, b, n, sink, &g, &v);
    assert_int_equal(v.req, vw_req_by_id("WARP-A-RSVD-ZERO"));
    assert_non_null(strstr(v.detail, "reserved bits 0x100"));
    P->session_free(s);
}

/* An expect waits in vain with a ULP PDU open: WARP-SUMMARY-L-LAST. */
static void test_silence_inside_a_pdu_is_l_last(void **state)
{
    (void)state;
    struct cf_case c = case_with("WARP-SUMMARY-SEND-FIELDS");
    void *s = P->session_new(&c, NULL);
    uint8_t b[128], d[16] = {0};
    size_t n = chunk(b, VW_WARP_SEND, 0, 0, 5, 0, d, 16);
    struct got g = {0};
    struct cf_rx_verdict v = {.req = VW_REQ_NONE};
    P->session_feed(s, b, n, sink, &g, &v);
    assert_int_equal(g.n, 0);
    assert_int_equal(v.req, VW_REQ_NONE);
    P->session_stalled(s, &v);
    assert_int_equal(v.req, vw_req_by_id("WARP-SUMMARY-L-LAST"));
    P->session_free(s);
}

/* The tester's send step, encoded (and remembered by the session). */
static void encode(void *s, const char *type, const char *const *args, struct cf_encoded *enc)
{
    struct cf_step st;
    memset(&st, 0, sizeof st);
    st.type = (unsigned)cf_proto_type_by_name(P, type);
    int64_t vals[CF_MAX_FIELDS] = {0};
    char why[200] = "";
    for (const char *const *a = args; *a; a++) {
        char name[32];
        const char *eq = strchr(*a, '=');
        size_t k = eq ? (size_t)(eq - *a) : strlen(*a);
        memcpy(name, *a, k);
        name[k] = 0;
        if (P->parse_send_arg(&st, name, eq ? eq + 1 : NULL, why, sizeof why) == 1)
            continue;
        if (strcmp(name, "fill") == 0) { /* the core's argument */
            st.fill = (unsigned)strtoul(eq + 1, NULL, 0);
            continue;
        }
        int f = cf_proto_field_by_name(P, name);
        assert_true(f >= 0);
        st.set[f] = true;
        vals[f] = strtoll(eq + 1, NULL, 0);
    }
    assert_int_equal(P->encode(s, &st, vals, enc, why, sizeof why), 0);
}

/* The target delivers the bytes of a chunk marked invalid: the case's first
 * requirement fails; another Send of its own does not. */
static void test_invalid_chunk_delivered(void **state)
{
    (void)state;
    struct cf_case c = case_with("WARP-SUMMARY-C-ONLY-WITH-L");
    void *s = P->session_new(&c, NULL);
    struct cf_encoded enc = {0};
    const char *args[] = {"payload=10", "fill=2", "c=1", "l=0", "invalid", NULL};
    encode(s, "Send", args, &enc);
    uint8_t bad[10];
    memcpy(bad, enc.bytes + enc.payload_off, sizeof bad);
    free(enc.bytes);
    uint8_t b[256], other[20] = "a message of its own";
    size_t n = chunk(b, VW_WARP_SEND, VW_WARP_FLAG_L, 0, 1, 0, other, sizeof other);
    struct got g = {0};
    struct cf_rx_verdict v = {.req = VW_REQ_NONE};
    P->session_feed(s, b, n, sink, &g, &v);
    assert_int_equal(v.req, VW_REQ_NONE);
    uint8_t echo[14] = {0xAA, 0xBB, 0xCC, 0xDD};
    memcpy(echo + 4, bad, sizeof bad);
    n = chunk(b, VW_WARP_SEND, VW_WARP_FLAG_L, 0, 2, 0, echo, sizeof echo);
    P->session_feed(s, b, n, sink, &g, &v);
    assert_int_equal(v.req, c.reqs[0]);
    assert_non_null(strstr(v.detail, "at its byte 4, the 10 bytes of an invalid chunk"));
    P->session_free(s);
}

/* An iSCSI target's R2T names the RID: r2t=1 writes it, r2t=2 one more; the
 * draft's Data-In 0x45 reads as Data-In; a SCSI Response GOOD to a PDU the
 * target must not take fails the case. */
static void test_iscsi_r2t_data_in_and_refusal(void **state)
{
    (void)state;
    struct cf_case c = case_with("WARP-B.4.1-RID-IS-TTT");
    void *s = P->session_new(&c, NULL);
    uint8_t hdr[VW_ISCSI_BHS_LEN], b[256];
    struct got g = {0};
    struct cf_rx_verdict v = {.req = VW_REQ_NONE};
    vw_iscsi_put_r2t(hdr, 0x78, 0x2a, 0, 512, 1, 2);
    size_t n = chunk(b, VW_WARP_SEND, VW_WARP_FLAG_L, 0, 7, 0, hdr, sizeof hdr);
    vw_iscsi_put_data_in(hdr, 0x78, 0, 0, 0, 2);
    hdr[0] = VW_ISCSI_DRAFT_DATA_IN;
    n += chunk(b + n, VW_WARP_SEND, VW_WARP_FLAG_L, 0, 8, 0, hdr, sizeof hdr);
    P->session_feed(s, b, n, sink, &g, &v);
    assert_int_equal(v.req, VW_REQ_NONE);
    assert_int_equal(g.n, 2);
    assert_int_equal(g.iop[0], VW_ISCSI_R2T);
    assert_int_equal(g.iop[1], VW_ISCSI_DATA_IN);
    struct cf_encoded enc = {0};
    const char *rdma[] = {"r2t=1", "offset=0", "payload=16", NULL};
    encode(s, "RDMA", rdma, &enc);
    struct vw_warp_chunk ch;
    assert_int_equal(vw_warp_decode(enc.bytes, enc.len, &ch, NULL), VW_REQ_NONE);
    assert_int_equal(ch.rid, 0x2a);
    free(enc.bytes);
    const char *out[] = {"iscsi=data-out", "iitt=0x78", "r2t=2", "answer=not-good", NULL};
    encode(s, "Send", out, &enc);
    struct vw_iscsi_hdr h;
    assert_int_equal(vw_warp_decode(enc.bytes, enc.len, &ch, NULL), VW_REQ_NONE);
    assert_true(vw_iscsi_hdr_read(ch.payload, ch.payload_len, &h));
    assert_int_equal(h.word20, 0x2b);
    free(enc.bytes);
    vw_iscsi_put_scsi_rsp(hdr, 0x78, 1, 2, 3, 0); /* CHECK CONDITION: its choice */
    n = chunk(b, VW_WARP_SEND, VW_WARP_FLAG_L, 0, 9, 0, hdr, sizeof hdr);
    P->session_feed(s, b, n, sink, &g, &v);
    assert_int_equal(v.req, VW_REQ_NONE);
    vw_iscsi_put_scsi_rsp(hdr, 0x78, 0, 3, 3, 0); /* GOOD: it took the PDU */
    n = chunk(b, VW_WARP_SEND, VW_WARP_FLAG_L, 0, 10, 0, hdr, sizeof hdr);
    P->session_feed(s, b, n, sink, &g, &v);
    assert_int_equal(v.req, c.reqs[0]);
    assert_non_null(strstr(v.detail, "SCSI Response GOOD for task 0x78"));
    P->session_free(s);
}

/* r2t= before any R2T came is the case's mistake: the encoder says so. */
static void test_r2t_without_an_r2t(void **state)
{
    (void)state;
    struct cf_case c = case_with("WARP-B.4.1-RID-IS-TTT");
    void *s = P->session_new(&c, NULL);
    struct cf_step st;
    memset(&st, 0, sizeof st);
    st.type = (unsigned)cf_proto_type_by_name(P, "RDMA");
    int f = cf_proto_field_by_name(P, "r2t");
    st.set[f] = true;
    int64_t vals[CF_MAX_FIELDS] = {0};
    vals[f] = 1;
    struct cf_encoded enc = {0};
    char why[200] = "";
    assert_int_equal(P->encode(s, &st, vals, &enc, why, sizeof why), -1);
    assert_non_null(strstr(why, "before the target sent an R2T"));
    free(enc.bytes);
    P->session_free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reassembles_any_cut),
        cmocka_unit_test(test_reserved_bits_on_every_chunk),
        cmocka_unit_test(test_silence_inside_a_pdu_is_l_last),
        cmocka_unit_test(test_invalid_chunk_delivered),
        cmocka_unit_test(test_iscsi_r2t_data_in_and_refusal),
        cmocka_unit_test(test_r2t_without_an_r2t),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
