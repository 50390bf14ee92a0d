/*
 * Connection semantics of VIA 1.0 9.4.4 (issue 17, point 1): a request to a
 * host whose provider is not listening yet keeps trying until its Timeout
 * (VIA-9.4.4-RETRY-UNTIL-TIMEOUT), so ranks may start in any order; the
 * same for the peer-to-peer calls. A listener's ConnectNoMatch stays an
 * answer (VIP_NO_MATCH, A3), given after the grace period (A4).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "harness.h"

#define RD VIP_SERVICE_RELIABLE_DELIVERY

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A loopback port nobody listens on (bound, read, released). */
static uint16_t free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    close(fd);
    return ntohs(a.sin_port);
}

static VIPL_STATISTICS stats(struct h_nic *n)
{
    VIPL_STATISTICS st;
    assert_int_equal(VipQuerySystemManagementInfo(n->nic, VIPL_SMI_STATISTICS, &st), VIP_SUCCESS);
    return st;
}

static VIP_RETURN accept_one(struct h_nic *n, VIP_VI_HANDLE vi, const char *disc, unsigned timeout)
{
    uint8_t buf[sizeof(VIP_NET_ADDRESS) + 16 + 64];
    VIP_NET_ADDRESS *local = h_addr(0, disc);
    VIP_VI_ATTRIBUTES ra;
    VIP_CONN_HANDLE conn;
    VIP_RETURN rc = VipConnectWait(n->nic, local, timeout, (VIP_NET_ADDRESS *)buf, &ra, &conn);
    free(local);
    if (rc == VIP_SUCCESS)
        rc = VipConnectAccept(conn, vi);
    return rc;
}

/* Refused until the Timeout: VIP_TIMEOUT, not before the Timeout, and the
 * attempts back off (bounded: no busy loop). */
static void test_refused_until_timeout(void **state)
{
    (void)state;
    struct h_nic a;
    h_nic_open(&a, NULL);
    VIP_VI_HANDLE vi = h_vi_create(&a, RD);
    uint16_t port = free_port();
    uint64_t before = stats(&a).ConnectionsRequested;
    double t0 = now_ms();
    assert_int_equal(h_connect(&a, vi, port, "x", 400), VIP_TIMEOUT);
    double took = now_ms() - t0;
    assert_true(took >= 395 && took < 2000);
    uint64_t tries = stats(&a).ConnectionsRequested - before;
    assert_true(tries >= 3);  /* 10, 20, 40, 80, 160 ms apart */
    assert_true(tries <= 12); /* not a busy loop */
    assert_int_equal(h_vi_state(vi), VIP_STATE_IDLE);
    assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
    h_nic_close(&a);
}

/* A raw listener on 127.0.0.1:port (the provider the request calls). */
static int raw_listener(uint16_t port)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(fd >= 0);
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(fd, 4), 0);
    return fd;
}

/* Accept within 2 s and read the first segment's header: its type. */
static unsigned accept_first_type(int lfd)
{
    struct pollfd p = {.fd = lfd, .events = POLLIN};
    assert_int_equal(poll(&p, 1, 2000), 1);
    int fd = accept(lfd, NULL, NULL);
    assert_true(fd >= 0);
    uint8_t hdr[24];
    size_t got = 0;
    while (got < sizeof hdr) {
        struct pollfd q = {.fd = fd, .events = POLLIN};
        assert_int_equal(poll(&q, 1, 2000), 1);
        ssize_t n = read(fd, hdr + got, sizeof hdr - got);
        assert_true(n > 0);
        got += (size_t)n;
    }
    close(fd); /* TCP closes in Pending Accept, before any answer */
    return hdr[1] & 0x1fu;
}

/* 4.2: "Pending Accept ... TCP Closes - Reestablish"
 * (VITCP-4.2-PENDING-TCP-CLOSE-REESTABLISH): TCP closed before the answer
 * is connected again and the ConnectRequest sent again, until the Timeout. */
static void test_pending_accept_tcp_closes(void **state)
{
    (void)state;
    struct h_nic a;
    h_nic_open(&a, NULL);
    VIP_VI_HANDLE va = h_vi_create(&a, RD);
    uint16_t port = free_port();
    int lfd = raw_listener(port);
    struct h_connector c = {.n = &a, .vi = va, .port = port, .disc = "gone", .timeout_ms = 1000};
    h_connect_start(&c);
    assert_int_equal(accept_first_type(lfd), 5); /* ConnectRequest */
    assert_int_equal(accept_first_type(lfd), 5); /* reestablished, requested again */
    close(lfd);
    assert_int_equal(h_connect_join(&c), VIP_TIMEOUT);
    assert_int_equal(h_vi_state(va), VIP_STATE_IDLE);
    h_vi_destroy(va);
    h_nic_close(&a);
}

/* The request starts first; the provider it calls opens 300 ms later. */
static void test_request_before_listener(void **state)
{
    (void)state;
    struct h_nic a;
    h_nic_open(&a, NULL);
    VIP_VI_HANDLE va = h_vi_create(&a, RD);
    uint16_t port = free_port();
    struct h_connector c = {.n = &a, .vi = va, .port = port, .disc = "late", .timeout_ms = 5000};
    h_connect_start(&c);
    usleep(300000);
    VIP_NIC_HANDLE nb;
    char name[32];
    snprintf(name, sizeof name, "127.0.0.1:%u", port);
    assert_int_equal(VipOpenNic(name, &nb), VIP_SUCCESS);
    VIP_VI_ATTRIBUTES attrs = h_attrs(&a, RD);
    VIP_PROTECTION_HANDLE pt;
    assert_int_equal(VipCreatePtag(nb, &pt), VIP_SUCCESS);
    attrs.Ptag = pt;
    VIP_VI_HANDLE vb;
    assert_int_equal(VipCreateVi(nb, &attrs, NULL, NULL, &vb), VIP_SUCCESS);
    struct h_nic b = {.nic = nb, .port = port};
    assert_int_equal(accept_one(&b, vb, "late", 5000), VIP_SUCCESS);
    assert_int_equal(h_connect_join(&c), VIP_SUCCESS);
    assert_int_equal(h_vi_state(va), VIP_STATE_CONNECTED);
    assert_int_equal(h_vi_state(vb), VIP_STATE_CONNECTED);
    assert_int_equal(VipDisconnect(vb), VIP_SUCCESS);
    assert_int_equal(VipDestroyVi(vb), VIP_SUCCESS);
    assert_int_equal(VipDestroyPtag(nb, pt), VIP_SUCCESS);
    assert_int_equal(VipCloseNic(nb), VIP_SUCCESS);
    h_vi_destroy(va);
    h_nic_close(&a);
}

/* A listener whose VipConnectWait comes 300 ms after the request (inside
 * the grace period, A4): the request waits for it and succeeds. */
static void test_wait_posted_after_request(void **state)
{
    (void)state;
    struct h_nic a, b;
    h_nic_open(&a, NULL);
    h_nic_open(&b, "grace=2000");
    VIP_VI_HANDLE va = h_vi_create(&a, RD), vb = h_vi_create(&b, RD);
    struct h_connector c = {.n = &a, .vi = va, .port = b.port, .disc = "later", .timeout_ms = 5000};
    h_connect_start(&c);
    usleep(300000);
    assert_int_equal(h_vi_state(va), VIP_STATE_CONNECT_PENDING);
    assert_int_equal(accept_one(&b, vb, "later", 5000), VIP_SUCCESS);
    assert_int_equal(h_connect_join(&c), VIP_SUCCESS);
    h_vi_destroy(va);
    h_vi_destroy(vb);
    h_nic_close(&a);
    h_nic_close(&b);
}

/* ConnectNoMatch is an answer: VIP_NO_MATCH after the grace, not a retry
 * until the Timeout (A3, A4; the draft's active machine goes to
 * Disconnected on ConnectNoMatch). */
static void test_nomatch_answers(void **state)
{
    (void)state;
    struct h_nic a, b;
    h_nic_open(&a, NULL);
    h_nic_open(&b, "grace=200");
    VIP_VI_HANDLE va = h_vi_create(&a, RD);
    double t0 = now_ms();
    assert_int_equal(h_connect(&a, va, b.port, "nobody", 5000), VIP_NO_MATCH);
    double took = now_ms() - t0;
    assert_true(took >= 190 && took < 2000);
    assert_int_equal(h_vi_state(va), VIP_STATE_IDLE);
    assert_int_equal(VipDestroyVi(va), VIP_SUCCESS);
    h_nic_close(&a);
    h_nic_close(&b);
}

/* Peer-to-peer: the active (greater) side calls first, the other side's
 * provider opens 300 ms later; both complete. */
static void test_peer_request_before_peer(void **state)
{
    (void)state;
    struct h_nic b;
    h_nic_open(&b, NULL);
    VIP_VI_HANDLE vb = h_vi_create(&b, RD);
    uint16_t port = free_port();
    ViplNicSetRemotePort(b.nic, port);
    VIP_NET_ADDRESS *la = h_addr(0, "a-side"), *lb = h_addr(0, "b-side");
    assert_int_equal(VipConnectPeerRequest(vb, lb, la, 5000), VIP_SUCCESS);
    usleep(300000);
    VIP_VI_ATTRIBUTES ra;
    assert_int_equal(VipConnectPeerDone(vb, &ra), VIP_NOT_DONE);
    VIP_NIC_HANDLE na;
    char name[32];
    snprintf(name, sizeof name, "127.0.0.1:%u", port);
    assert_int_equal(VipOpenNic(name, &na), VIP_SUCCESS);
    ViplNicSetRemotePort(na, b.port);
    VIP_PROTECTION_HANDLE pt;
    assert_int_equal(VipCreatePtag(na, &pt), VIP_SUCCESS);
    VIP_VI_ATTRIBUTES attrs = h_attrs(&b, RD);
    attrs.Ptag = pt;
    VIP_VI_HANDLE va;
    assert_int_equal(VipCreateVi(na, &attrs, NULL, NULL, &va), VIP_SUCCESS);
    assert_int_equal(VipConnectPeerRequest(va, la, lb, 5000), VIP_SUCCESS);
    assert_int_equal(VipConnectPeerWait(va, &ra), VIP_SUCCESS);
    assert_int_equal(VipConnectPeerWait(vb, &ra), VIP_SUCCESS);
    assert_int_equal(ra.ReliabilityLevel, RD);
    free(la);
    free(lb);
    assert_int_equal(VipDisconnect(va), VIP_SUCCESS);
    assert_int_equal(VipDestroyVi(va), VIP_SUCCESS);
    assert_int_equal(VipDestroyPtag(na, pt), VIP_SUCCESS);
    assert_int_equal(VipCloseNic(na), VIP_SUCCESS);
    h_vi_destroy(vb);
    h_nic_close(&b);
}

/* Peer-to-peer towards a provider that never comes: VIP_TIMEOUT from
 * VipConnectPeerWait after the Timeout. */
static void test_peer_request_timeout(void **state)
{
    (void)state;
    struct h_nic b;
    h_nic_open(&b, NULL);
    VIP_VI_HANDLE vb = h_vi_create(&b, RD);
    ViplNicSetRemotePort(b.nic, free_port());
    VIP_NET_ADDRESS *la = h_addr(0, "a-side"), *lb = h_addr(0, "b-side");
    double t0 = now_ms();
    assert_int_equal(VipConnectPeerRequest(vb, lb, la, 300), VIP_SUCCESS);
    VIP_VI_ATTRIBUTES ra;
    assert_int_equal(VipConnectPeerWait(vb, &ra), VIP_TIMEOUT);
    double took = now_ms() - t0;
    assert_true(took >= 295 && took < 2000);
    assert_int_equal(h_vi_state(vb), VIP_STATE_IDLE);
    free(la);
    free(lb);
    assert_int_equal(VipDestroyVi(vb), VIP_SUCCESS);
    h_nic_close(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_until_timeout),
        cmocka_unit_test(test_pending_accept_tcp_closes),
        cmocka_unit_test(test_request_before_listener),
        cmocka_unit_test(test_wait_posted_after_request),
        cmocka_unit_test(test_nomatch_answers),
        cmocka_unit_test(test_peer_request_before_peer),
        cmocka_unit_test(test_peer_request_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
