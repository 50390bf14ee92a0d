/* pktway-node's logic (pktway-ref/src/node.c): what an end node and a
 * router deliver, drop, answer and forward, judged by the wire library's
 * decoder and vw_eep_forward_check; every router fault caught by that
 * check, every origination fault by the decoder; send specs; garbage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "node.h"

static struct pn_result *res;

static int setup(void **state)
{
    (void)state;
    res = calloc(1, sizeof *res);
    return res ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(res);
    return 0;
}

/* End node 0x000002 on one UDP interface, its peer 0x000001. */
static void end_cfg(struct pn_config *c)
{
    pn_config_init(c, 2);
    c->n_ifs = 1;
    c->if_kind[0] = PN_IF_UDP;
    c->if_mtu[0] = PN_UDP_MTU_DEFAULT;
}

/* Router 0x000010: if 0 toward 0x000001 (10.0.0.1:5998), if 1 toward
 * 0x000002 (10.0.1.2:5998) with MTU 128. */
static void router_cfg(struct pn_config *c)
{
    char err[100];
    pn_config_init(c, 0x10);
    c->router = true;
    c->n_ifs = 2;
    c->if_kind[0] = c->if_kind[1] = PN_IF_UDP;
    c->if_mtu[0] = PN_UDP_MTU_DEFAULT;
    c->if_mtu[1] = 128;
    assert_int_equal(pn_peer_parse(c, "1=10.0.0.1:5998@0", err, sizeof err), 0);
    assert_int_equal(pn_peer_parse(c, "2=10.0.1.2:5998@1", err, sizeof err), 0);
}

static const struct pn_hop from0 = {.ifx = 0, .len = 6, .addr = {10, 0, 0, 1, 0x17, 0x6E}};

/* A message from a spec text, encoded by an end node 0x000001 without faults. */
static size_t msg(const char *spec_text, uint8_t *buf, size_t cap)
{
    static struct pn_spec spec;
    struct pn_config src;
    char err[160];
    pn_config_init(&src, 1);
    src.n_ifs = 1;
    src.if_kind[0] = PN_IF_UDP;
    src.if_mtu[0] = PN_MSG_MAX;
    assert_int_equal(pn_spec_parse(spec_text, &spec, err, sizeof err), 0);
    struct pn_hop hop;
    if (!spec.have_to) {
        strcpy(spec.to, "10.0.0.2:5998");
        spec.have_to = true;
    }
    size_t n = pn_spec_build(&src, &spec, buf, cap, &hop, err, sizeof err);
    assert_true(n > 0);
    return n;
}

static void decode_ok(const uint8_t *b, size_t n, struct vw_eep_msg *m)
{
    assert_int_equal(vw_eep_decode_on(b, n, VW_EEP_CARRIER_DATAGRAM, m, NULL), VW_REQ_NONE);
}

static void test_end_delivers_and_drops(void **state)
{
    (void)state;
    struct pn_config c;
    end_cfg(&c);
    uint8_t b[512];
    size_t n = msg("dt=2,pt=0x800,data=0102030405", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);
    assert_int_equal(res->n_out, 0);
    assert_int_equal(res->msg.data_len, 5);
    assert_memory_equal(res->msg.data, "\1\2\3\4\5", 5);

    n = msg("dt=3,len=8", b, sizeof b); /* another node's */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DROPPED);
    assert_string_equal(res->reason, "not-mine");

    n = msg("dt=2,v=1,len=8", b, sizeof b); /* P5 */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DROPPED);
    assert_string_equal(res->reason, "EEP-6A-VERSION");
    c.fault = PN_FAULT_ACCEPT_VERSION;
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);
    c.fault = PN_FAULT_NONE;

    n = msg("dt=0xC00001,len=8", b, sizeof b); /* 110x: P7 */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DROPPED);
    assert_string_equal(res->reason, "EEP-6C-DT-KIND");
    c.fault = PN_FAULT_ACCEPT_RESERVED;
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);
    c.fault = PN_FAULT_NONE;

    n = msg("dt=0xE00005,len=8", b, sizeof b); /* logical, P7 */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_string_equal(res->reason, "EEP-6C-LOGICAL");
    c.logical[c.n_logical++] = 0xE00005;
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);

    n = msg("dt=2,rz=5,len=8", b, sizeof b); /* RZ ignored */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);
    c.fault = PN_FAULT_DROP_RZ;
    pn_handle(&c, 0, &from0, b, n, res);
    assert_string_equal(res->reason, "EEP-6J-RZ-IGNORED");
    c.fault = PN_FAULT_NONE;

    n = msg("dt=2,sym=9:aabb,l2rh=0102,len=8", b, sizeof b); /* P13: an end node consumes every record */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);
    assert_int_equal(res->records, 2);
    assert_int_equal(res->consumed, 2);

    /* a decode error: the rule, no answer */
    n = msg("dt=2,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n - 4, res);
    assert_int_equal(res->verdict, PN_DROPPED);
    assert_false(res->decoded);
    assert_string_equal(res->reason, "EEP-1B-8B-WORDS");
    assert_int_equal(res->n_out, 0);
}

static void test_oh_and_err(void **state)
{
    (void)state;
    struct pn_config c;
    end_cfg(&c);
    uint8_t b[512];
    size_t n = msg("dt=2,pt=0x800,oh=4:01,len=8", b, sizeof b); /* unknown optional: delivered */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);
    c.fault = PN_FAULT_DROP_OPTIONAL;
    pn_handle(&c, 0, &from0, b, n, res);
    assert_string_equal(res->reason, "EEP-7-OPTIONAL-MAY-DROP");
    c.fault = PN_FAULT_NONE;

    n = msg("dt=2,pt=0x800,moh=4:01,len=8", b, sizeof b); /* unknown mandatory: dropped, ERR TE 3 (P15) */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DROPPED);
    assert_string_equal(res->reason, "EEP-7-MANDATORY-UNKNOWN");
    assert_int_equal(res->n_out, 1);
    assert_string_equal(res->out[0].kind, "err");
    assert_memory_equal(res->out[0].hop.addr, from0.addr, 6); /* no peer for 1: back where it came from */
    struct vw_eep_msg e;
    decode_ok(res->out[0].buf, res->out[0].len, &e);
    assert_int_equal(e.hdr.dt, 1);
    assert_int_equal(e.hdr.sa, 2);
    assert_int_equal(e.hdr.pt, 2);
    assert_int_equal(e.hdr.te, 3);
    assert_int_equal(e.ei, 0);
    struct vw_eep_msg orig;
    decode_ok(b, n, &orig);
    assert_int_equal(e.data_len, n - orig.hdr_offset < PN_ERR_QUOTE ? n - orig.hdr_offset : PN_ERR_QUOTE);
    assert_memory_equal(e.data, b + orig.hdr_offset, e.data_len);

    c.fault = PN_FAULT_WRONG_TE;
    pn_handle(&c, 0, &from0, b, n, res);
    decode_ok(res->out[0].buf, res->out[0].len, &e);
    assert_int_equal(e.hdr.te, 0xFF);
    c.fault = PN_FAULT_NO_ERR;
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->n_out, 0);
    c.fault = PN_FAULT_ACCEPT_MANDATORY;
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);
    assert_int_equal(res->n_out, 0);
    c.fault = PN_FAULT_NONE;

    /* no ERR for an SA 0, nor for an ERR */
    n = msg("dt=2,sa=0,moh=4:01,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DROPPED);
    assert_int_equal(res->n_out, 0);
    n = msg("dt=2,pt=2,te=1,moh=4:01,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->n_out, 0);
}

static void test_hey_you_and_echo(void **state)
{
    (void)state;
    struct pn_config c;
    end_cfg(&c);
    char err[100];
    assert_int_equal(pn_peer_parse(&c, "1=10.9.9.9:7000", err, sizeof err), 0);
    uint8_t b[512];
    size_t n = msg("dt=hey-you,pt=0x800,te=7,data=abcdef", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);
    assert_int_equal(res->n_out, 1);
    assert_string_equal(res->out[0].kind, "answer");
    assert_memory_equal(res->out[0].hop.addr, "\x0a\x09\x09\x09\x1b\x58", 6); /* the peer table's hop for the SA */
    struct vw_eep_msg a;
    decode_ok(res->out[0].buf, res->out[0].len, &a);
    assert_int_equal(a.hdr.dt, 1);
    assert_int_equal(a.hdr.sa, 2);
    assert_int_equal(a.hdr.pt, 0x800);
    assert_int_equal(a.hdr.te, 7);
    assert_int_equal(a.data_len, 3);
    assert_memory_equal(a.data, "\xab\xcd\xef", 3);

    n = msg("dt=broadcast,len=8", b, sizeof b); /* delivered, not answered */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);
    assert_int_equal(res->n_out, 0);
    c.echo = true;
    n = msg("dt=2,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->n_out, 1);
    assert_string_equal(res->out[0].kind, "echo");

    /* origination faults are in answers too, and the decoder sees them */
    struct {
        enum pn_fault f;
        enum vw_req req;
    } of[] = {{PN_FAULT_RZ_NONZERO, VW_REQ_EEP_6J_RZ_ZERO},
              {PN_FAULT_SA_LOGICAL, VW_REQ_EEP_6K_SA_PHYSICAL},
              {PN_FAULT_OT_WITHOUT_OH, VW_REQ_EEP_9_OT_NEEDS_OH}};
    for (size_t i = 0; i < sizeof of / sizeof of[0]; i++) {
        c.fault = of[i].f;
        pn_handle(&c, 0, &from0, b, n, res);
        assert_int_equal(res->n_out, 1);
        struct vw_findings fs;
        vw_findings_clear(&fs);
        vw_eep_decode_on(res->out[0].buf, res->out[0].len, VW_EEP_CARRIER_DATAGRAM, &a, &fs);
        assert_true(vw_findings_has(&fs, of[i].req));
    }
    c.fault = PN_FAULT_EI_NONZERO;
    pn_handle(&c, 0, &from0, b, n, res);
    decode_ok(res->out[0].buf, res->out[0].len, &a);
    assert_int_equal(a.ei, 1);
}

/* The router's copy against what it received. */
static bool check_copy(const uint8_t *in_buf, size_t in_len, const struct pn_out *o, enum vw_eep_link_state link,
                       struct vw_findings *fs)
{
    struct vw_eep_msg in, out;
    decode_ok(in_buf, in_len, &in);
    decode_ok(o->buf, o->len, &out);
    vw_findings_clear(fs);
    return vw_eep_forward_check(in_buf, &in, o->buf, &out, link, fs);
}

static void test_router_forwards(void **state)
{
    (void)state;
    struct pn_config c;
    router_cfg(&c);
    uint8_t b[512];
    struct vw_findings fs;
    size_t n = msg("dt=2,pt=0x800,ei=0x5,len=20", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_FORWARDED);
    assert_int_equal(res->n_out, 1);
    assert_int_equal(res->out[0].hop.ifx, 1);
    assert_memory_equal(res->out[0].hop.addr, "\x0a\x00\x01\x02\x17\x6e", 6);
    assert_int_equal(res->ei_out, 0xA);
    assert_true(check_copy(b, n, &res->out[0], VW_EEP_LINK_CLEAN, &fs));

    /* MSbit set: no shift (P6) */
    n = msg("dt=2,ei=0x8000000000000000,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->ei_out, 0x8000000000000000ull);
    assert_true(check_copy(b, n, &res->out[0], VW_EEP_LINK_CLEAN, &fs));

    /* a detected error (P14, here a logical SA): shifted, LSbit set */
    n = msg("dt=2,ei=1,sa=0xE00001,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_true(res->error_seen);
    assert_int_equal(res->verdict, PN_FORWARDED);
    assert_int_equal(res->ei_out, 3);
    assert_true(check_copy(b, n, &res->out[0], VW_EEP_LINK_DAMAGED, &fs));
    c.fault = PN_FAULT_NO_ERROR_BIT;
    pn_handle(&c, 0, &from0, b, n, res);
    assert_false(check_copy(b, n, &res->out[0], VW_EEP_LINK_DAMAGED, &fs));
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_10_EI_ERROR_LSBIT));
    c.fault = PN_FAULT_NONE;

    /* symbols then the L2RH: consumed, the L2RH's byte 0 is the out interface (P13) */
    n = msg("dt=2,sym=5:01,l2rh=01,l2rh=00,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_FORWARDED);
    assert_int_equal(res->consumed, 2);
    assert_int_equal(res->out[0].hop.ifx, 1);
    assert_true(check_copy(b, n, &res->out[0], VW_EEP_LINK_CLEAN, &fs));
    struct vw_eep_msg out;
    decode_ok(res->out[0].buf, res->out[0].len, &out);
    assert_int_equal(out.n_l2rh, 1);
    assert_int_equal(out.n_symbols, 0);

    /* native next hop in the L2RH (bytes 1-6) */
    n = msg("dt=0x77,l2rh=010a0a0a0a1f40,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_FORWARDED);
    assert_memory_equal(res->out[0].hop.addr, "\x0a\x0a\x0a\x0a\x1f\x40", 6);
    /* an L2RH naming no interface: unreachable, ERR TE 1 */
    n = msg("dt=2,l2rh=05,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_string_equal(res->reason, "unreachable");
    assert_int_equal(res->err_te, 1);
}

static void test_router_refuses(void **state)
{
    (void)state;
    struct pn_config c;
    router_cfg(&c);
    uint8_t b[512];
    struct vw_eep_msg e;
    size_t n = msg("dt=2,len=200", b, sizeof b); /* over if 1's MTU 128 */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_REFUSED);
    assert_string_equal(res->reason, "EEP-1B-PATH-MTU");
    assert_int_equal(res->n_out, 1);
    assert_int_equal(res->out[0].hop.ifx, 0);
    decode_ok(res->out[0].buf, res->out[0].len, &e);
    assert_int_equal(e.hdr.te, 2);
    assert_int_equal(e.hdr.dt, 1);
    c.fault = PN_FAULT_IGNORE_MTU;
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_FORWARDED);
    assert_true(res->out[0].len > 128);
    c.fault = PN_FAULT_SEGMENT;
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->n_out, 2);
    struct vw_eep_msg s1, s2;
    decode_ok(res->out[0].buf, res->out[0].len, &s1);
    decode_ok(res->out[1].buf, res->out[1].len, &s2);
    assert_int_equal(s1.data_len + s2.data_len, 200);
    c.fault = PN_FAULT_NONE;

    n = msg("dt=9,len=8", b, sizeof b); /* no next hop */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DROPPED);
    assert_string_equal(res->reason, "unreachable");
    assert_int_equal(res->err_te, 1);
    assert_int_equal(res->out[0].hop.ifx, 0);

    /* Hey-You! at a router: delivered and answered, never forwarded (P7) */
    n = msg("dt=hey-you,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);
    assert_int_equal(res->n_out, 1);
    assert_string_equal(res->out[0].kind, "answer");
    char err[100];
    assert_int_equal(pn_peer_parse(&c, "hey-you=10.0.1.9:5998@1", err, sizeof err), 0);
    c.fault = PN_FAULT_FORWARD_LOCAL;
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->n_out, 2);
    assert_string_equal(res->out[1].kind, "forward");
    c.fault = PN_FAULT_NO_FORWARD;
    n = msg("dt=2,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DROPPED);
    assert_int_equal(res->n_out, 0);
}

/* Every fault that changes a forwarded copy is caught by the wire
 * library's router check under its own rule. */
static void test_router_faults_caught(void **state)
{
    (void)state;
    struct {
        enum pn_fault f;
        const char *spec;
        enum vw_req req;
    } cases[] = {
        {PN_FAULT_NO_SHIFT, "dt=2,ei=3,len=8", VW_REQ_EEP_10_EI_SHIFT},
        {PN_FAULT_MODIFY_DB, "dt=2,len=8", VW_REQ_EEP_8_DB_UNMODIFIED},
        {PN_FAULT_MODIFY_HEADER, "dt=2,len=8", VW_REQ_EEP_4B_ONLY_TAIL_MODIFIED},
        {PN_FAULT_KEEP_L2RH, "dt=2,l2rh=01,len=8", VW_REQ_EEP_5_HR_CONSUMES_L2RH},
        {PN_FAULT_KEEP_SYMBOL, "dt=2,sym=3:01,len=8", VW_REQ_EEP_5_SYMBOL_CONSUMED},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct pn_config c;
        router_cfg(&c);
        uint8_t b[512];
        struct vw_findings fs;
        size_t n = msg(cases[i].spec, b, sizeof b);
        pn_handle(&c, 0, &from0, b, n, res);
        assert_int_equal(res->verdict, PN_FORWARDED);
        assert_true(check_copy(b, n, &res->out[0], VW_EEP_LINK_CLEAN, &fs)); /* fault-free: clean */
        c.fault = cases[i].f;
        pn_handle(&c, 0, &from0, b, n, res);
        assert_int_equal(res->verdict, PN_FORWARDED);
        assert_false(check_copy(b, n, &res->out[0], VW_EEP_LINK_CLEAN, &fs));
        if (!vw_findings_has(&fs, cases[i].req))
            fail_msg("fault %s: no finding under %s", pn_fault_name(cases[i].f), vw_req_id(cases[i].req));
    }
    /* route-by-dt: the L2RH says interface 0, the DT's peer is on 1 */
    struct pn_config c;
    router_cfg(&c);
    uint8_t b[512];
    size_t n = msg("dt=2,l2rh=00,len=8", b, sizeof b);
    char err[100];
    assert_int_equal(pn_peer_parse(&c, "default=10.0.0.7:5998@0", err, sizeof err), 0);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->out[0].hop.ifx, 0);
    c.fault = PN_FAULT_ROUTE_BY_DT;
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->out[0].hop.ifx, 1);
}

static void test_origination_faults(void **state)
{
    (void)state;
    struct pn_config c;
    end_cfg(&c);
    static struct pn_spec spec;
    char err[160];
    uint8_t b[512];
    struct pn_hop hop;
    struct vw_eep_msg m;
    struct vw_findings fs;
    assert_int_equal(pn_spec_parse("dt=1,to=10.0.0.1:5998", &spec, err, sizeof err), 0);
    c.fault = PN_FAULT_PL_NO_DATA;
    size_t n = pn_spec_build(&c, &spec, b, sizeof b, &hop, err, sizeof err);
    assert_true(n > 0);
    vw_findings_clear(&fs);
    assert_int_equal(vw_eep_decode_on(b, n, VW_EEP_CARRIER_DATAGRAM, &m, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_6G_PL_ZERO_NO_DATA));
    c.fault = PN_FAULT_ODD_LENGTH;
    assert_int_equal(pn_send_len(&c, 32), 28);
    c.fault = PN_FAULT_NONE;
    assert_int_equal(pn_send_len(&c, 32), 32);
    /* the MTU is kept for what the node originates */
    c.if_mtu[0] = 64;
    assert_int_equal(pn_spec_parse("dt=1,len=100,to=10.0.0.1:5998", &spec, err, sizeof err), 0);
    assert_int_equal(pn_spec_build(&c, &spec, b, sizeof b, &hop, err, sizeof err), 0);
    assert_non_null(strstr(err, "EEP-1B-PATH-MTU"));
    /* no next hop */
    assert_int_equal(pn_spec_parse("dt=1,len=8", &spec, err, sizeof err), 0);
    assert_int_equal(pn_spec_build(&c, &spec, b, sizeof b, &hop, err, sizeof err), 0);
    assert_non_null(strstr(err, "no next hop"));
}

static void test_spec_and_peer_parsing(void **state)
{
    (void)state;
    static struct pn_spec s;
    char err[160];
    assert_int_equal(pn_spec_parse("dt=0x12,pt=0x0800,te=3,data=00ff,moh=5:aa,oh=6,l2rh=01,sym=0xABCDE:0102,ot=,"
                                   "v=1,p=63,e=8,rz=127,ei=0xffffffffffffffff,if=1,to=1.2.3.4:5,count=3",
                                   &s, err, sizeof err),
                     0);
    assert_int_equal(s.dt, 0x12);
    assert_int_equal(s.pt, 0x800);
    assert_int_equal(s.data_len, 2);
    assert_int_equal(s.n_oh, 2);
    assert_true(s.oh[0].mandatory);
    assert_false(s.oh[1].mandatory);
    assert_int_equal(s.n_routes, 2);
    assert_int_equal(s.routes[1].symbol_type, 0xABCDE);
    assert_int_equal(s.count, 3);
    assert_int_equal(s.ifx, 1);
    const char *bad[] = {"", "pt=1", "dt=", "dt=0x1000000", "dt=1,data=abc", "dt=1,data=zz", "dt=1,pt=0x10000",
                         "dt=1,bogus=1", "dt=1,v=4", "dt=1,oh=64", "dt=1,sym=0x100000", "dt=1,count=0",
                         "dt=1,l2rh=" "000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f"
                         "000102030405060708090a0b0c0d0e0f000102030405060708090a0b0c0d0e0f",
                         "dt=1,,", "dt=1,len=999999", "dt=1,if=8", "=1", "dt"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (pn_spec_parse(bad[i], &s, err, sizeof err) == 0)
            fail_msg("spec '%s' accepted", bad[i]);

    struct pn_config c;
    router_cfg(&c);
    const char *badpeers[] = {"1", "=1.2.3.4:5", "1=1.2.3.4", "1=1.2.3.4:0", "1=1.2.3.256:5", "1=1.2.3.4:5@2",
                              "x=1.2.3.4:5", "1=1.2.3.4:5@", "1=aa:bb:cc:dd:ee:ff"};
    for (size_t i = 0; i < sizeof badpeers / sizeof badpeers[0]; i++)
        if (pn_peer_parse(&c, badpeers[i], err, sizeof err) == 0)
            fail_msg("peer '%s' accepted", badpeers[i]);
    struct pn_hop h = {.ifx = 0};
    char text[32];
    assert_int_equal(pn_hop_parse("02:00:0a:0b:0c:0d", PN_IF_ETH, &h), 0);
    pn_hop_format(&h, PN_IF_ETH, text, sizeof text);
    assert_string_equal(text, "02:00:0a:0b:0c:0d");
    assert_int_equal(pn_hop_parse("192.168.1.20:5998", PN_IF_UDP, &h), 0);
    pn_hop_format(&h, PN_IF_UDP, text, sizeof text);
    assert_string_equal(text, "192.168.1.20:5998");
    assert_int_not_equal(pn_hop_parse("02:00:0a:0b:0c", PN_IF_ETH, &h), 0);
}

static void test_fault_table(void **state)
{
    (void)state;
    for (unsigned f = 1; f < PN_FAULT_COUNT; f++) {
        const char *id = pn_fault_req_id((enum pn_fault)f);
        if (vw_req_by_id(id) == VW_REQ_NONE)
            fail_msg("fault %s names %s, not in the catalog", pn_fault_name((enum pn_fault)f), id);
        assert_int_equal(pn_fault_by_name(pn_fault_name((enum pn_fault)f)), f);
        for (unsigned g = 1; g < f; g++)
            if (!strcmp(id, pn_fault_req_id((enum pn_fault)g)))
                fail_msg("faults %s and %s break the same rule %s", pn_fault_name((enum pn_fault)g),
                         pn_fault_name((enum pn_fault)f), id);
    }
    assert_int_equal(pn_fault_by_name("nonsense"), PN_FAULT_NONE);
    assert_int_equal(pn_fault_by_name("EEP-10-EI-SHIFT"), PN_FAULT_NO_SHIFT);
}

/* Garbage, every truncation and every single-byte change of valid messages:
 * a verdict, never a crash (ASan/UBSan watch). */
/* The allowed choices (--choice, docs/pktway-node.md "Choices"): each
 * changes what the draft leaves open, nothing else. */
static void test_choices(void **state)
{
    (void)state;
    struct pn_config c;
    char err[160];
    uint8_t b[512];
    struct vw_eep_msg a;
    end_cfg(&c);
    const char *bad[] = {"", "nope", "l2rh-if-byte", "l2rh-if-byte=8", "known-oh=64", "known-oh=", "known-oh=1:",
                         "err-quote=65", "no-detect=1", "eth-pad,", ",eth-pad"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_equal(pn_choice_parse(&c, bad[i], err, sizeof err), -1);
    char shown[200];
    end_cfg(&c);
    pn_choice_format(&c, shown, sizeof shown);
    assert_string_equal(shown, "none");

    /* no-hey-you-answer: delivered, not answered */
    assert_int_equal(pn_choice_parse(&c, "no-hey-you-answer", err, sizeof err), 0);
    size_t n = msg("dt=hey-you,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);
    assert_int_equal(res->n_out, 0);

    /* drop-leftover-l2rh: an L2RH left at the destination drops it; symbols are still consumed */
    end_cfg(&c);
    assert_int_equal(pn_choice_parse(&c, "drop-leftover-l2rh", err, sizeof err), 0);
    n = msg("dt=2,l2rh=01,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DROPPED);
    assert_string_equal(res->reason, "leftover-l2rh");
    n = msg("dt=2,sym=5,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);

    /* known-oh: a mandatory field of a known type is processed; another type is not */
    end_cfg(&c);
    assert_int_equal(pn_choice_parse(&c, "known-oh=5:9,err-quote=8", err, sizeof err), 0);
    assert_int_equal(pn_peer_parse(&c, "1=10.9.9.9:7000", err, sizeof err), 0);
    n = msg("dt=2,moh=5:aa,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DELIVERED);
    n = msg("dt=2,moh=6:aa,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DROPPED);
    assert_int_equal(res->n_out, 1);
    decode_ok(res->out[0].buf, res->out[0].len, &a); /* err-quote=8: the ERR quotes 8 bytes */
    assert_int_equal(a.data_len, 8);
    pn_choice_format(&c, shown, sizeof shown);
    assert_string_equal(shown, "known-oh=0x220,err-quote=8");

    /* l2rh-if-byte=2: routing byte 2 names the out interface */
    router_cfg(&c);
    assert_int_equal(pn_choice_parse(&c, "l2rh-if-byte=2", err, sizeof err), 0);
    n = msg("dt=1,l2rh=0000010a0001091b58,len=8", b, sizeof b); /* out of 1 to 10.0.1.9:7000, whatever the DT */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_FORWARDED);
    assert_int_equal(res->out[0].hop.ifx, 1);
    assert_memory_equal(res->out[0].hop.addr, "\x0a\x00\x01\x09\x1b\x58", 6);
    n = msg("dt=2,l2rh=000001,len=8", b, sizeof b); /* byte 2 without a hop: the peer table's on interface 1 */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_FORWARDED);
    assert_int_equal(res->out[0].hop.ifx, 1);
    n = msg("dt=2,l2rh=01,len=8", b, sizeof b); /* too short for byte 2 */
    pn_handle(&c, 0, &from0, b, n, res);
    assert_string_equal(res->reason, "unreachable");

    /* no-err-report: an unknown mandatory OH field still drops the
     * message, an unreachable destination is still not forwarded, but no
     * ERR goes out */
    end_cfg(&c);
    assert_int_equal(pn_choice_parse(&c, "no-err-report", err, sizeof err), 0);
    assert_int_equal(pn_peer_parse(&c, "1=10.9.9.9:7000", err, sizeof err), 0);
    n = msg("dt=2,moh=6:aa,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DROPPED);
    assert_int_equal(res->n_out, 0);
    router_cfg(&c);
    assert_int_equal(pn_choice_parse(&c, "no-err-report", err, sizeof err), 0);
    n = msg("dt=0x99,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_DROPPED);
    assert_string_equal(res->reason, "unreachable");
    assert_int_equal(res->n_out, 0);
    pn_choice_format(&c, shown, sizeof shown);
    assert_string_equal(shown, "no-err-report");

    /* no-detect: a router forwards a malformed message without the LSbit */
    router_cfg(&c);
    assert_int_equal(pn_choice_parse(&c, "no-detect,eth-pad", err, sizeof err), 0);
    assert_true(c.eth_pad);
    n = msg("dt=2,ei=1,sa=0xE00001,len=8", b, sizeof b);
    pn_handle(&c, 0, &from0, b, n, res);
    assert_int_equal(res->verdict, PN_FORWARDED);
    assert_false(res->error_seen);
    assert_int_equal(res->ei_out, 2);
}

static void test_garbage(void **state)
{
    (void)state;
    struct pn_config cfgs[2];
    end_cfg(&cfgs[0]);
    router_cfg(&cfgs[1]);
    uint8_t b[512], g[512];
    size_t n = msg("dt=2,pt=0x800,moh=4:0102,oh=5,sym=7:aabbcc,l2rh=01,len=21,ot=0102030405060708", b, sizeof b);
    srand(19);
    for (int k = 0; k < 2; k++) {
        for (size_t cut = 0; cut <= n; cut++)
            pn_handle(&cfgs[k], 0, &from0, b, cut, res);
        for (size_t i = 0; i < n; i++)
            for (int bit = 0; bit < 8; bit++) {
                memcpy(g, b, n);
                g[i] ^= (uint8_t)(1u << bit);
                pn_handle(&cfgs[k], (unsigned)(i & 1), &from0, g, n, res);
                assert_true(res->n_out <= PN_OUT_MAX);
                for (unsigned o = 0; o < res->n_out; o++)
                    assert_true(res->out[o].len <= PN_MSG_MAX);
            }
        for (int r = 0; r < 3000; r++) {
            size_t len = (size_t)rand() % sizeof g;
            for (size_t i = 0; i < len; i++)
                g[i] = (uint8_t)rand();
            pn_handle(&cfgs[k], 1, NULL, g, len, res);
        }
    }
    pn_handle(&cfgs[0], 5, &from0, b, n, res); /* no such interface */
    assert_int_equal(res->verdict, PN_DROPPED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_end_delivers_and_drops),
        cmocka_unit_test(test_oh_and_err),
        cmocka_unit_test(test_hey_you_and_echo),
        cmocka_unit_test(test_router_forwards),
        cmocka_unit_test(test_router_refuses),
        cmocka_unit_test(test_router_faults_caught),
        cmocka_unit_test(test_origination_faults),
        cmocka_unit_test(test_spec_and_peer_parsing),
        cmocka_unit_test(test_fault_table),
        cmocka_unit_test(test_garbage),
        cmocka_unit_test(test_choices),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
