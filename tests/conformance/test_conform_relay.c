/* The packet relay (conform/relay.h): action syntax everywhere; as root,
 * real connections through it: a dropped segment is retransmitted with the
 * same bytes, a duplicated one reaches the receiver's TCP twice and its
 * application once, and the recording becomes a capture netio can read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "conform/case.h"
#include "conform/core.h"
#include "conform/engine.h"
#include "conform/proto/vitcp.h"
#include "conform/relay.h"
#include "vitcp/bytes.h"
#include "vitcp/pcap_reader.h"
#include "vitcp/pcap_writer.h"
#include "vitcp/tcp_flow.h"
#include "vitcp/vitcp.h"

static void actions_parse_and_print(void **state)
{
    (void)state;
    struct cf_relay_action a;
    char why[160], text[64];
    assert_int_equal(cf_relay_action_parse("drop", "target", "2", &a, why, sizeof why), 0);
    assert_int_equal(a.verb, CF_RELAY_DROP);
    assert_int_equal(a.side, CF_RELAY_TARGET);
    assert_int_equal(a.first, 2);
    assert_int_equal(a.last, 2);
    cf_relay_action_text(&a, text, sizeof text);
    assert_string_equal(text, "drop target 2");
    assert_int_equal(cf_relay_action_parse("duplicate", "tester", "3-5", &a, why, sizeof why), 0);
    assert_int_equal(a.verb, CF_RELAY_DUPLICATE);
    assert_int_equal(a.side, CF_RELAY_TESTER);
    assert_int_equal(a.first, 3);
    assert_int_equal(a.last, 5);
    cf_relay_action_text(&a, text, sizeof text);
    assert_string_equal(text, "duplicate tester 3-5");
    static const char *const bad[][3] = {
        {"delay", "target", "1"}, {"drop", "both", "1"}, {"drop", "target", "0"}, {"drop", "target", "3-2"},
        {"drop", "target", "x"},  {"drop", "target", "1-"}, {"drop", "target", "-1"}, {"drop", "target", ""},
        {"drop", "target", "99999999999999999999"}, {"drop", "target", "2x"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        why[0] = 0;
        assert_int_equal(cf_relay_action_parse(bad[i][0], bad[i][1], bad[i][2], &a, why, sizeof why), -1);
        assert_true(strlen(why) > 10); /* a reason, not a bare failure */
    }
}

/* The case language: 'packet' lines collect actions and imply 'relay'. */
static void case_lines(void **state)
{
    (void)state;
    static struct cf_case c;
    char err[256];
    const char *good = "case x\nrequire VITCP-2.2.2.2.5-RETX-SAME-DATA\npacket drop target 2-3\n"
                       "packet duplicate tester 1\nconnect\n";
    assert_int_equal(cf_case_parse(good, "x.case", &c, err, sizeof err), 0);
    assert_true(c.relay);
    assert_int_equal(c.npacket, 2);
    assert_int_equal(c.packet[0].verb, CF_RELAY_DROP);
    assert_int_equal(c.packet[0].last, 3);
    assert_int_equal(c.packet[1].side, CF_RELAY_TESTER);
    assert_int_equal(cf_case_parse("case x\nrequire VITCP-3.7-URGENT-RFC1122\nrelay\nconnect\n", "x.case", &c, err,
                                   sizeof err), 0);
    assert_true(c.relay);
    assert_int_equal(c.npacket, 0);
    /* Either role: a passive case's implementation connects through it. */
    assert_int_equal(cf_case_parse("case x\nrequire VITCP-3.7-URGENT-RFC1122\nrole passive\npacket drop target 1\naccept\n",
                                   "x.case", &c, err, sizeof err), 0);
    assert_true(c.relay && c.passive);
    static const struct {
        const char *text, *err;
    } bad[] = {
        {"case x\nrequire VITCP-3.7-URGENT-RFC1122\npacket drop target\nconnect\n", "x.case:3: 'packet' takes"},
        {"case x\nrequire VITCP-3.7-URGENT-RFC1122\npacket lose target 1\nconnect\n", "x.case:3: packet action 'lose'"},
        {"case x\nrequire VITCP-3.7-URGENT-RFC1122\nrelay now\nconnect\n", "x.case:3: 'relay' takes nothing"},
        {"case x\nrequire VITCP-3.7-URGENT-RFC1122\npacket drop tester 1\npacket drop tester 1\npacket drop tester 1\n"
         "packet drop tester 1\npacket drop tester 1\npacket drop tester 1\npacket drop tester 1\npacket drop tester 1\n"
         "packet drop tester 1\nconnect\n", "x.case:11: too many packet actions"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(cf_case_parse(bad[i].text, "x.case", &c, err, sizeof err), -1);
        if (!strstr(err, bad[i].err))
            fail_msg("case %zu: '%s' does not contain '%s'", i, err, bad[i].err);
    }
}

/* A recording, built without a network: netio's flow writes Ethernet
 * frames, the sink keeps their IP packets as the relay would. */
struct recording {
    struct cf_relay_packet pk[32];
    size_t n;
};

static int keep_packet(void *ctx, const uint8_t *frame, size_t len)
{
    struct recording *rec = ctx;
    assert_true(rec->n < 32 && len > 14);
    struct cf_relay_packet *p = &rec->pk[rec->n++];
    p->usec = 1000000000000000ull + rec->n;
    p->from = frame[14 + 15] == 1 ? CF_RELAY_TESTER : CF_RELAY_TARGET; /* source 10.0.0.1: the tester */
    p->len = len - 14;
    p->data = malloc(p->len);
    memcpy(p->data, frame + 14, p->len);
    return 0;
}

static void put_seg(struct vn_tcp_flow *f, enum vn_dir dir, struct vw_vitcp_enc *e, uint8_t *buf, size_t *len)
{
    *len = vw_vitcp_encode(e, buf, 256);
    assert_true(*len > 0);
    assert_int_equal(vn_tcp_send(f, dir, buf, *len), 0);
}

/* ConnectRequest, ConnectAccept, the target's Send, then that Send again at
 * the same stream offset: unchanged, or with one payload byte changed. The
 * VI/TCP module judges the recording as the core has it do after a relay
 * case (judge_recording: the lint's rules on the target's segments), its
 * frames counted after first_frame. Returns whether it decided the case. */
static bool judge_retransmission(bool differ, unsigned first_frame, struct cf_result *res)
{
    struct recording rec = {0};
    struct vn_tcp_flow f;
    struct vn_sink sink = {keep_packet, &rec};
    assert_int_equal(vn_tcp_flow_init(&f, sink, "10.0.0.1", 40000, "10.0.0.2", 5995), 0);
    assert_int_equal(vn_tcp_handshake(&f), 0);
    uint8_t buf[256], payload[40];
    size_t len;
    memset(payload, 0x5A, sizeof payload);
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_REQUEST, false);
    e.ce.attrs = VW_VITCP_ATTR_RELIABLE_DELIVERY;
    e.ce.mtu = 65536;
    put_seg(&f, VN_C2S, &e, buf, &len);
    vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_ACCEPT, false);
    e.ce.attrs = VW_VITCP_ATTR_RELIABLE_DELIVERY;
    e.ce.mtu = 65536;
    put_seg(&f, VN_S2C, &e, buf, &len);
    uint64_t at = f.next_off[VN_S2C];
    vw_vitcp_enc_init(&e, VW_VITCP_SEND, false);
    e.hdr.msg_num = 1;
    e.hdr.flags |= VW_VITCP_FLAG_EOM;
    e.payload = payload;
    e.payload_len = sizeof payload;
    put_seg(&f, VN_S2C, &e, buf, &len);
    if (differ)
        buf[len - 1] ^= 0xFF;
    assert_int_equal(vn_tcp_send_at(&f, VN_S2C, at, buf, len), 0);
    assert_int_equal(vn_tcp_close(&f), 0);
    struct cf_engine *eng = malloc(sizeof *eng);
    assert_non_null(eng);
    cf_engine_init(eng);
    assert_int_equal(cf_engine_set_target(eng, "127.0.0.1:5995"), 0); /* the server's port makes it VI/TCP */
    struct cf_case c;
    char err[200];
    assert_int_equal(cf_case_parse("case x\nrequire VITCP-2.2.2.2.5-RETX-SAME-DATA\nrelay\nconnect\n", "x.case", &c,
                                   err, sizeof err), 0);
    cf_result_init(res, &c);
    bool decided = false;
    assert_non_null(cf_proto_vitcp.judge_recording);
    cf_proto_vitcp.judge_recording(eng, &c, rec.pk, rec.n, first_frame, res, &decided);
    for (size_t i = 0; i < rec.n; i++)
        free(rec.pk[i].data);
    free(eng);
    return decided;
}

static void recording_is_judged_by_the_lint(void **state)
{
    (void)state;
    struct cf_result res;
    assert_false(judge_retransmission(false, 0, &res));
    assert_int_equal(res.verdict, CF_PASS);
    assert_int_equal(res.nframes, 0);
    /* the target's retransmission with other bytes (the target's side: the
     * client sent the first bytes) fails the case under the rule, at its
     * frame of the run's capture */
    assert_true(judge_retransmission(true, 100, &res));
    assert_int_equal(res.verdict, CF_FAIL);
    assert_int_equal(res.failed_req, VW_REQ_VITCP_2_2_RETX_SAME_DATA);
    assert_true(res.rule_broken); /* the target's bytes broke it: a probe stays failed (C60) */
    assert_int_equal(res.nframes, 1);
    assert_true(res.frames[0] > 100);
    assert_non_null(strstr(res.message, "x.case: the relay's recording, frame"));
}

/* ------------------------------------------------------------ as root */

struct link {
    struct cf_relay *relay;
    int listener, tester, target;
};

/* A connection through a new relay, recorded from its SYN with action a. */
static int open_link(struct link *l, const char *verb, const char *side, const char *range)
{
    char why[256];
    memset(l, 0, sizeof *l);
    l->relay = cf_relay_open(why, sizeof why);
    if (!l->relay) {
        assert_true(strlen(why) > 10);
        return -1;
    }
    struct cf_relay_action act;
    assert_int_equal(cf_relay_action_parse(verb, side, range, &act, why, sizeof why), 0);
    assert_int_equal(cf_relay_begin(l->relay, &act, 1), 0);
    l->listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t al = sizeof a;
    assert_int_equal(bind(l->listener, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(l->listener, 4), 0);
    assert_int_equal(getsockname(l->listener, (struct sockaddr *)&a, &al), 0);
    l->tester = cf_relay_socket(l->relay, AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    assert_true(l->tester >= 0);
    int one = 1;
    setsockopt(l->tester, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct sockaddr_in t = a;
    assert_int_equal(inet_pton(AF_INET, cf_relay_target_addr(l->relay), &t.sin_addr), 1);
    assert_int_equal(connect(l->tester, (struct sockaddr *)&t, sizeof t), 0);
    l->target = accept(l->listener, NULL, NULL);
    assert_true(l->target >= 0);
    setsockopt(l->target, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    /* The peer seen by the target is the tester's namespace address. */
    struct sockaddr_in peer;
    socklen_t pl = sizeof peer;
    assert_int_equal(getpeername(l->target, (struct sockaddr *)&peer, &pl), 0);
    assert_int_equal(ntohl(peer.sin_addr.s_addr) >> 17, 0xC6120000u >> 17); /* 198.18.0.0/15 */
    return 0;
}

static void close_link(struct link *l)
{
    close(l->tester);
    close(l->target);
    close(l->listener);
    cf_relay_close(l->relay);
}

/* Read exactly n bytes within 5 s. */
static void read_all(int fd, uint8_t *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        struct pollfd p = {fd, POLLIN, 0};
        assert_true(poll(&p, 1, 5000) == 1);
        ssize_t k = recv(fd, buf + got, n - got, 0);
        assert_true(k > 0);
        got += (size_t)k;
    }
}

static const struct cf_relay_packet *nth_payload(const struct cf_relay_packet *pk, size_t n, enum cf_relay_side from,
                                                 unsigned k, size_t *plen, const uint8_t **payload)
{
    for (size_t i = 0; i < n; i++) {
        size_t len = cf_relay_payload(&pk[i], payload);
        if (pk[i].from != from || len == 0)
            continue;
        if (k-- == 0) {
            *plen = len;
            return &pk[i];
        }
    }
    return NULL;
}

struct retx_seen {
    unsigned identical, differing;
};

static void on_tcp(void *ctx, const struct vn_tcp_event *ev)
{
    struct retx_seen *s = ctx;
    if (ev->kind == VN_TCP_RETX && ev->dir == VN_S2C)
        *(ev->diff_bytes ? &s->differing : &s->identical) += 1;
}

static void dropped_segment_is_retransmitted_unchanged(void **state)
{
    (void)state;
    struct link l;
    if (open_link(&l, "drop", "target", "1") < 0)
        skip(); /* not root, or no /dev/net/tun: the cases say why when they run */
    uint8_t out[300], in[300];
    for (size_t i = 0; i < sizeof out; i++)
        out[i] = (uint8_t)(i * 7 + 1);
    assert_int_equal(send(l.target, out, sizeof out, 0), (ssize_t)sizeof out);
    read_all(l.tester, in, sizeof in); /* arrives: TCP retransmitted it */
    assert_memory_equal(in, out, sizeof out);
    usleep(20000);
    size_t n;
    unsigned done[1];
    struct cf_relay_packet *pk = cf_relay_take(l.relay, &n, done, 1);
    assert_int_equal(done[0], 1);
    size_t len0, len1;
    const uint8_t *p0, *p1;
    const struct cf_relay_packet *first = nth_payload(pk, n, CF_RELAY_TARGET, 0, &len0, &p0);
    const struct cf_relay_packet *again = nth_payload(pk, n, CF_RELAY_TARGET, 1, &len1, &p1);
    assert_non_null(first);
    assert_non_null(again);
    assert_true(first->dropped);
    assert_false(again->dropped);
    assert_int_equal(len0, sizeof out);
    assert_int_equal(len1, sizeof out);
    assert_memory_equal(p0, out, sizeof out);
    assert_memory_equal(p1, out, sizeof out);

    /* The recording as a capture: every packet becomes a frame netio reads. */
    char err[256];
    const char *path = "relay-recording.pcapng";
    struct vn_pcap_writer *w = vn_capture_open(path, VN_CAPTURE_PCAPNG, "test", err, sizeof err);
    assert_non_null(w);
    assert_int_equal(cf_relay_write(w, pk, n), 0);
    assert_int_equal(vn_pcap_close(w), 0);
    struct retx_seen seen = {0};
    struct vn_reader_callbacks cb = {.tcp = on_tcp, .ctx = &seen};
    struct vn_reader_stats st;
    assert_int_equal(vn_pcap_read(path, &cb, NULL, &st, err, sizeof err), 0);
    assert_int_equal(st.frames, n);
    assert_int_equal(seen.identical, 1); /* the retransmission, compared with the dropped original */
    assert_int_equal(seen.differing, 0);
    unlink(path);
    cf_relay_packets_free(pk, n);
    close_link(&l);
}

static void duplicated_segment_reaches_the_application_once(void **state)
{
    (void)state;
    struct link l;
    if (open_link(&l, "duplicate", "tester", "1-2") < 0)
        skip();
    uint8_t a[100], b[50], in[150];
    memset(a, 'a', sizeof a);
    memset(b, 'b', sizeof b);
    assert_int_equal(send(l.tester, a, sizeof a, 0), (ssize_t)sizeof a);
    usleep(10000);
    assert_int_equal(send(l.tester, b, sizeof b, 0), (ssize_t)sizeof b);
    read_all(l.target, in, sizeof in);
    assert_memory_equal(in, a, sizeof a);
    assert_memory_equal(in + sizeof a, b, sizeof b);
    /* nothing more: the copies were discarded by TCP */
    struct pollfd p = {l.target, POLLIN, 0};
    assert_int_equal(poll(&p, 1, 50), 0);
    size_t n;
    unsigned done[1];
    struct cf_relay_packet *pk = cf_relay_take(l.relay, &n, done, 1);
    assert_int_equal(done[0], 2);
    size_t copies = 0;
    for (size_t i = 0; i < n; i++)
        copies += pk[i].duplicated;
    assert_int_equal(copies, 2);
    /* A new recording starts empty. */
    assert_int_equal(cf_relay_begin(l.relay, NULL, 0), 0);
    assert_int_equal(cf_relay_count(l.relay), 0);
    cf_relay_packets_free(pk, n);
    close_link(&l);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(actions_parse_and_print),
        cmocka_unit_test(case_lines),
        cmocka_unit_test(recording_is_judged_by_the_lint),
        cmocka_unit_test(dropped_segment_is_retransmitted_unchanged),
        cmocka_unit_test(duplicated_segment_reaches_the_application_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
