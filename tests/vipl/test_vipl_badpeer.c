/* A misbehaving peer (a raw socket speaking bytes built with the wire
 * library, or garbage) gets a clear error and never crashes the provider:
 * VITCP-4-MALFORMED-CLOSE, VITCP-4.3-REJECT, VITCP-4.3-NOMATCH,
 * VITCP-3.3-MTU-LESSER, VITCP-3.2-MSG-NUM-SEQ, VITCP-3.2-SEG-LEN-MIN. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>
#include "harness.h"
#include "raw_client.h"

/* A request's answer, which must be a lone header (V6: no CE header, no
 * trailer without CRC); its type. */
static unsigned lone_header_answer(int fd)
{
    uint8_t buf[512];
    size_t n = raw_read_seg(fd, buf, sizeof buf, 3000);
    assert_int_equal(n, 24);
    struct vw_vitcp_seg seg;
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &seg, NULL), VW_REQ_NONE);
    return seg.hdr.type;
}

/* After the bad peer, the NIC still connects a well-behaved VI. */
static void nic_still_works(struct h_nic *srv)
{
    struct h_nic cli;
    h_nic_open(&cli, NULL);
    VIP_VI_HANDLE vi = h_vi_create(&cli, VIP_SERVICE_RELIABLE_DELIVERY);
    /* nobody waits: the NIC must still answer NoMatch */
    assert_int_equal(h_connect(&cli, vi, srv->port, "nobody", 3000), VIP_NO_MATCH);
    assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
    h_nic_close(&cli);
}

/* The listener closes a connection that opens with bytes[0..n), without
 * answering (VITCP-4-MALFORMED-CLOSE). */
static void closed_unanswered(struct h_nic *srv, const uint8_t *bytes, size_t n)
{
    int fd = raw_connect(srv->port);
    assert_true(raw_send_all(fd, bytes, n));
    assert_true(raw_closed_silently(fd, 3000));
    close(fd);
}

static void test_garbage_to_listener(void **state)
{
    (void)state;
    struct h_nic srv;
    h_nic_open(&srv, "grace=100");
    uint8_t junk[100];
    for (int i = 0; i < 100; i++)
        junk[i] = (uint8_t)(i * 37 + 11);
    junk[2] = 0, junk[3] = 5; /* Segment Length 5: below 24 (VITCP-3.2-SEG-LEN-MIN) */
    closed_unanswered(&srv, junk, sizeof junk);
    nic_still_works(&srv);
    h_nic_close(&srv);
}

static void test_bad_version_request(void **state)
{
    (void)state;
    struct h_nic srv;
    h_nic_open(&srv, "grace=100");
    struct vw_vitcp_enc enc;
    uint8_t seg[512];
    raw_request(&enc, "x", 65536, false);
    enc.hdr.version = 2; /* V24: close without answering */
    closed_unanswered(&srv, seg, raw_encode(&enc, seg, sizeof seg));
    /* a data segment instead of a ConnectRequest: V19 protocol error */
    vw_vitcp_enc_init(&enc, VW_VITCP_SEND, false);
    closed_unanswered(&srv, seg, raw_encode(&enc, seg, sizeof seg));
    nic_still_works(&srv);
    h_nic_close(&srv);
}

struct wait_arg {
    VIP_NIC_HANDLE nic;
    VIP_RETURN rc;
};

static void *wait_svc(void *arg)
{
    struct wait_arg *w = arg;
    VIP_NET_ADDRESS *local = h_addr(0, "svc");
    uint8_t rb[sizeof(VIP_NET_ADDRESS) + 80];
    VIP_VI_ATTRIBUTES ra;
    VIP_CONN_HANDLE c;
    w->rc = VipConnectWait(w->nic, local, 600, (VIP_NET_ADDRESS *)rb, &ra, &c);
    free(local);
    return NULL;
}

/* The request enc, sent while a consumer waits for "svc" at srv, is refused
 * with ConnectReject, the connection then closed (VITCP-4-CLOSE-AFTER-REFUSE),
 * and the consumer never sees it. */
static void refused_at_wait(struct h_nic *srv, const struct vw_vitcp_enc *enc)
{
    struct wait_arg w = {.nic = srv->nic};
    pthread_t t;
    pthread_create(&t, NULL, wait_svc, &w);
    int fd = raw_connect(srv->port);
    assert_true(raw_send_enc(fd, enc));
    assert_int_equal(lone_header_answer(fd), VW_VITCP_CONNECT_REJECT);
    assert_true(raw_closed_silently(fd, 3000));
    close(fd);
    pthread_join(t, NULL);
    assert_int_equal(w.rc, VIP_TIMEOUT);
}

static void test_unacceptable_attributes_and_unknown_disc(void **state)
{
    (void)state;
    struct h_nic srv;
    h_nic_open(&srv, "grace=100");
    struct vw_vitcp_enc enc;
    raw_request(&enc, "svc", 0, false); /* MTU 0 at a matching discriminator -> ConnectReject (V19) */
    refused_at_wait(&srv, &enc);
    /* unknown discriminator -> ConnectNoMatch after the grace period */
    int fd = raw_connect(srv.port);
    raw_request(&enc, "unknown", 65536, false);
    assert_true(raw_send_enc(fd, &enc));
    assert_int_equal(lone_header_answer(fd), VW_VITCP_CONNECT_NOMATCH);
    close(fd);
    h_nic_close(&srv);
}

/* V19 (conformance decision C4): a peer-to-peer request reaching a
 * client/server wait for its discriminator is refused with ConnectReject
 * (VITCP-3.3-P2P-MATCH) at once, not answered NoMatch when the (here 10 s)
 * grace period ends; the consumer never sees it. */
static void test_p2p_request_at_client_server_wait(void **state)
{
    (void)state;
    struct h_nic srv;
    h_nic_open(&srv, "grace=10000");
    struct vw_vitcp_enc enc;
    raw_request(&enc, "svc", 65536, false);
    enc.ce.attrs |= VW_VITCP_ATTR_P2P;
    refused_at_wait(&srv, &enc);
    h_nic_close(&srv);
}

/* ------------------------------------------- a raw passive peer */
struct raw_server {
    int lfd;
    uint16_t port;
};

static void raw_listen(struct raw_server *r)
{
    r->lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    assert_int_equal(bind(r->lfd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(r->lfd, 4), 0);
    socklen_t l = sizeof a;
    getsockname(r->lfd, (struct sockaddr *)&a, &l);
    r->port = ntohs(a.sin_port);
}

/* Accept the VI's TCP connection, read its ConnectRequest, answer with an
 * accept whose MTU is mtu_delta above the request's. Returns the fd. */
static int raw_accept(struct raw_server *r, int32_t mtu_delta, struct vw_vitcp_seg *req_out)
{
    int fd = accept(r->lfd, NULL, NULL);
    assert_true(fd >= 0);
    static uint8_t buf[1024];
    size_t n = raw_read_seg(fd, buf, sizeof buf, 3000);
    assert_true(n > 0);
    struct vw_vitcp_seg req;
    assert_int_equal(vw_vitcp_decode(buf, n, VW_VITCP_CRC_OFF, &req, NULL), VW_REQ_NONE);
    assert_int_equal(req.hdr.type, VW_VITCP_CONNECT_REQUEST);
    struct vw_vitcp_enc enc;
    vw_vitcp_enc_init(&enc, VW_VITCP_CONNECT_ACCEPT, false); /* no CRC option: none negotiated */
    enc.hdr.msg_num = 5000;
    enc.hdr.msg_ack = req.hdr.msg_num;
    enc.hdr.rx_desc_posted = 8;
    enc.ce = req.ce;
    enc.ce.options = NULL;
    enc.ce.options_len = 0;
    enc.ce.mtu = (uint32_t)((int64_t)req.ce.mtu + mtu_delta);
    assert_true(raw_send_enc(fd, &enc));
    *req_out = req;
    return fd;
}

static void test_accept_with_larger_mtu(void **state)
{
    (void)state;
    struct raw_server rs;
    raw_listen(&rs);
    struct h_nic cli;
    h_nic_open(&cli, NULL);
    VIP_VI_HANDLE vi;
    VIP_VI_ATTRIBUTES a = h_attrs(&cli, VIP_SERVICE_RELIABLE_DELIVERY);
    a.MaxTransferSize = 40000;
    assert_int_equal(VipCreateVi(cli.nic, &a, NULL, NULL, &vi), VIP_SUCCESS);
    struct h_connector c = {.n = &cli, .vi = vi, .port = rs.port, .disc = "raw", .timeout_ms = 3000};
    h_connect_start(&c);
    struct vw_vitcp_seg req;
    int fd = raw_accept(&rs, +1, &req); /* VITCP-3.3-MTU-LESSER broken */
    assert_int_equal(h_connect_join(&c), VIP_REJECT);
    assert_int_equal(req.ce.mtu, 40000);
    close(fd);
    assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
    h_nic_close(&cli);
    close(rs.lfd);
}

static void bad_data_after_accept(int kind)
{
    struct raw_server rs;
    raw_listen(&rs);
    struct h_nic cli;
    h_nic_open(&cli, NULL);
    VIP_VI_HANDLE vi = h_vi_create(&cli, VIP_SERVICE_RELIABLE_DELIVERY);
    h_post_recv(&cli, vi, 0, 0, 1000);
    struct h_connector c = {.n = &cli, .vi = vi, .port = rs.port, .disc = "raw", .timeout_ms = 3000};
    h_connect_start(&c);
    struct vw_vitcp_seg req;
    int fd = raw_accept(&rs, -1, &req);
    assert_int_equal(h_connect_join(&c), VIP_SUCCESS);
    VIP_VI_ATTRIBUTES q;
    VipQueryVi(vi, NULL, &q, NULL, NULL);
    assert_int_equal(q.MaxTransferSize, req.ce.mtu - 1); /* A2: the agreed MTU */
    struct vw_vitcp_enc enc;
    static const uint8_t payload[32] = {1, 2, 3};
    if (kind == 0) { /* wrong message number: VITCP-3.2-MSG-NUM-SEQ */
        vw_vitcp_enc_init(&enc, VW_VITCP_SEND, false);
        enc.hdr.msg_num = 5000 + 7;
        enc.payload = payload;
        enc.payload_len = sizeof payload;
        assert_true(raw_send_enc(fd, &enc));
    } else if (kind == 1) { /* Segment Length 3 */
        static const uint8_t junk[24] = {1, 0, 0, 3};
        raw_send_all(fd, junk, sizeof junk);
    } else if (kind == 3) { /* mid-message: the first segment of a two-segment Send, then RST */
        vw_vitcp_enc_init(&enc, VW_VITCP_SEND, false);
        enc.hdr.msg_num = 5001; /* the accept was 5000 */
        enc.hdr.flags &= (uint8_t)~VW_VITCP_FLAG_EOM;
        enc.payload = payload;
        enc.payload_len = sizeof payload;
        assert_true(raw_send_enc(fd, &enc));
        usleep(50000);
        raw_reset(fd);
        fd = -1;
    } else if (kind == 4) { /* mid-segment: half of a Send segment, then FIN */
        vw_vitcp_enc_init(&enc, VW_VITCP_SEND, false);
        enc.hdr.msg_num = 5001; /* the accept was 5000 */
        enc.payload = payload;
        enc.payload_len = sizeof payload;
        uint8_t buf[128];
        assert_true(raw_encode(&enc, buf, sizeof buf) > 30);
        assert_true(raw_send_all(fd, buf, 30));
        usleep(50000);
        close(fd);
        fd = -1;
    } else { /* RDMA Write to an address the consumer never registered */
        vw_vitcp_enc_init(&enc, VW_VITCP_RDMA_WRITE, false);
        enc.hdr.msg_num = 5001;
        enc.rdma.addr = (uint64_t)(uintptr_t)payload;
        enc.rdma.handle = cli.bmh;
        enc.rdma.length = sizeof payload;
        enc.payload = payload;
        enc.payload_len = sizeof payload;
        assert_true(raw_send_enc(fd, &enc));
    }
    VIP_DESCRIPTOR *d;
    assert_int_equal(VipRecvWait(vi, 3000, &d), VIP_SUCCESS);
    assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_DESC_FLUSHED_ERROR | VIP_STATUS_OP_RECEIVE);
    VIP_VI_STATE st;
    VipQueryVi(vi, &st, NULL, NULL, NULL);
    assert_int_equal(st, VIP_STATE_ERROR);
    for (int i = 0; i < 100 && cli.async_errors[VIP_ERROR_CONN_LOST] + cli.async_errors[VIP_ERROR_RDMAW_PROT] == 0; i++)
        usleep(5000);
    assert_true(cli.async_errors[kind == 2 ? VIP_ERROR_RDMAW_PROT : VIP_ERROR_CONN_LOST] >= 1);
    if (fd >= 0) {
        assert_true(raw_closed_silently(fd, 3000)); /* VITCP-2.2.2.2.2-CLOSE-TCP-ON-VI-CLOSE */
        close(fd);
    }
    h_vi_destroy(vi);
    h_nic_close(&cli);
    close(rs.lfd);
}

static void test_wrong_message_number(void **s) { (void)s; bad_data_after_accept(0); }
static void test_broken_framing(void **s) { (void)s; bad_data_after_accept(1); }
static void test_rdma_write_unregistered(void **s) { (void)s; bad_data_after_accept(2); }
/* Abrupt closes mid-message and mid-segment (issue 6): the claimed receive
 * is flushed, the VI is in Error, VIP_ERROR_CONN_LOST is raised (A5,
 * VITCP-2.2.2.2.2-CLOSE-VI-ON-TCP-CLOSE). */
static void test_close_mid_message(void **s) { (void)s; bad_data_after_accept(3); }
static void test_close_mid_segment(void **s) { (void)s; bad_data_after_accept(4); }

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_garbage_to_listener),
        cmocka_unit_test(test_bad_version_request),
        cmocka_unit_test(test_unacceptable_attributes_and_unknown_disc),
        cmocka_unit_test(test_p2p_request_at_client_server_wait),
        cmocka_unit_test(test_accept_with_larger_mtu),
        cmocka_unit_test(test_wrong_message_number),
        cmocka_unit_test(test_broken_framing),
        cmocka_unit_test(test_rdma_write_unregistered),
        cmocka_unit_test(test_close_mid_message),
        cmocka_unit_test(test_close_mid_segment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
