/*
 * The per-host listener (issue 17, point 3; vipl-ref/src/host.c) inside one
 * process: two default NICs share the host's VI/TCP port (VIPL_PORT), the
 * first is the front, and a request for the second's discriminator reaches
 * it. Local junk on the routing names (bytes without a socket, a pipe
 * instead of a socket, a bare connect) is dropped and the NICs go on.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>
#include "harness.h"

#define RD VIP_SERVICE_RELIABLE_DELIVERY

static uint16_t host_port;

static uint16_t free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &l), 0);
    close(fd);
    return ntohs(a.sin_port);
}

/* A default NIC (device name without an address) and a protection tag. */
struct host_nic {
    VIP_NIC_HANDLE nic;
    VIP_PROTECTION_HANDLE ptag;
};

static void open_default(struct host_nic *n)
{
    assert_int_equal(VipOpenNic("/dev/via_eth0", &n->nic), VIP_SUCCESS);
    assert_int_equal(VipCreatePtag(n->nic, &n->ptag), VIP_SUCCESS);
}

struct waiter {
    VIP_NIC_HANDLE nic;
    VIP_VI_HANDLE vi;
    const char *disc;
    VIP_RETURN rc;
    pthread_t t;
};

static void *wait_thread(void *arg)
{
    struct waiter *w = arg;
    uint8_t buf[sizeof(VIP_NET_ADDRESS) + 16 + 64];
    VIP_NET_ADDRESS *local = h_addr(0, w->disc);
    VIP_VI_ATTRIBUTES ra;
    VIP_CONN_HANDLE conn;
    w->rc = VipConnectWait(w->nic, local, 5000, (VIP_NET_ADDRESS *)buf, &ra, &conn);
    if (w->rc == VIP_SUCCESS)
        w->rc = VipConnectAccept(conn, w->vi);
    free(local);
    return NULL;
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (uint8_t)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* Connect to the routing name of discriminator disc. */
static int connect_want(const char *disc)
{
    struct sockaddr_un su = {.sun_family = AF_UNIX};
    int n = snprintf(su.sun_path + 1, sizeof su.sun_path - 1, "vipl/0.0.0.0:%u/d/%016llx", host_port,
                     (unsigned long long)fnv1a(disc));
    int fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
    assert_true(fd >= 0);
    assert_int_equal(connect(fd, (struct sockaddr *)&su, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n)), 0);
    return fd;
}

static void send_with_fd(int ufd, const void *bytes, size_t len, int fd)
{
    union {
        struct cmsghdr align;
        char b[CMSG_SPACE(sizeof(int))];
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct iovec iov = {.iov_base = (void *)bytes, .iov_len = len};
    struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd >= 0) {
        mh.msg_control = ctl.b;
        mh.msg_controllen = sizeof ctl.b;
        struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &fd, sizeof fd);
    }
    assert_int_equal(sendmsg(ufd, &mh, MSG_NOSIGNAL), (ssize_t)len);
}

static void test_second_nic_of_the_host_accepts(void **state)
{
    (void)state;
    struct host_nic front, member;
    struct h_nic client;
    open_default(&front);
    open_default(&member);
    VIP_UINT16 p1 = 0, p2 = 0;
    assert_int_equal(ViplNicListenPort(front.nic, &p1), VIP_SUCCESS);
    assert_int_equal(ViplNicListenPort(member.nic, &p2), VIP_SUCCESS);
    assert_int_equal(p1, host_port);
    assert_int_equal(p2, host_port);
    h_nic_open(&client, NULL);

    /* a request for each NIC's discriminator, twice over, in both orders */
    const char *discs[] = {"to-member", "to-front"};
    VIP_NIC_HANDLE owners[] = {member.nic, front.nic};
    for (int round = 0; round < 4; round++) {
        int k = round % 2;
        VIP_VI_ATTRIBUTES at = h_attrs(&client, RD);
        at.Ptag = (k ? &front : &member)->ptag;
        struct waiter w = {.nic = owners[k], .disc = discs[k]};
        assert_int_equal(VipCreateVi(w.nic, &at, NULL, NULL, &w.vi), VIP_SUCCESS);
        VIP_VI_HANDLE cv = h_vi_create(&client, RD);
        if (round < 2) { /* the wait first */
            pthread_create(&w.t, NULL, wait_thread, &w);
            usleep(100000);
            assert_int_equal(h_connect(&client, cv, host_port, discs[k], 5000), VIP_SUCCESS);
        } else { /* the request first: held at the front, routed when the wait comes */
            struct h_connector c = {.n = &client, .vi = cv, .port = host_port, .disc = discs[k], .timeout_ms = 5000};
            h_connect_start(&c);
            usleep(200000);
            pthread_create(&w.t, NULL, wait_thread, &w);
            assert_int_equal(h_connect_join(&c), VIP_SUCCESS);
        }
        pthread_join(w.t, NULL);
        assert_int_equal(w.rc, VIP_SUCCESS);
        assert_int_equal(h_vi_state(w.vi), VIP_STATE_CONNECTED);
        assert_int_equal(VipDisconnect(w.vi), VIP_SUCCESS);
        assert_int_equal(VipDestroyVi(w.vi), VIP_SUCCESS);
        h_vi_destroy(cv);
    }

    /* junk on a routing name while a wait holds it: dropped, the wait still
     * gets the next real request */
    VIP_VI_ATTRIBUTES at = h_attrs(&client, RD);
    at.Ptag = member.ptag;
    struct waiter w = {.nic = member.nic, .disc = "junk"};
    assert_int_equal(VipCreateVi(w.nic, &at, NULL, NULL, &w.vi), VIP_SUCCESS);
    pthread_create(&w.t, NULL, wait_thread, &w);
    usleep(100000);
    int u = connect_want("junk");
    send_with_fd(u, "garbage", 7, -1); /* no socket */
    close(u);
    int pfd[2];
    assert_int_equal(pipe(pfd), 0);
    u = connect_want("junk");
    send_with_fd(u, "garbage", 7, pfd[0]); /* not a socket */
    close(u);
    close(pfd[0]);
    close(pfd[1]);
    u = connect_want("junk"); /* a bare connect, closed */
    close(u);
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    u = connect_want("junk");
    send_with_fd(u, "\x01\x02\x03", 3, sv[0]); /* a stream socket, and junk for a request */
    close(u);
    close(sv[0]);
    usleep(100000);
    VIP_VI_HANDLE cv = h_vi_create(&client, RD);
    assert_int_equal(h_connect(&client, cv, host_port, "junk", 5000), VIP_SUCCESS);
    pthread_join(w.t, NULL);
    assert_int_equal(w.rc, VIP_SUCCESS);
    char b;
    assert_int_equal(read(sv[1], &b, 1), 0); /* the junk's socket was closed */
    close(sv[1]);
    VipDisconnect(w.vi);
    VipDestroyVi(w.vi);
    h_vi_destroy(cv);

    assert_int_equal(VipDestroyPtag(front.nic, front.ptag), VIP_SUCCESS);
    assert_int_equal(VipDestroyPtag(member.nic, member.ptag), VIP_SUCCESS);
    assert_int_equal(VipCloseNic(member.nic), VIP_SUCCESS);
    assert_int_equal(VipCloseNic(front.nic), VIP_SUCCESS);
    h_nic_close(&client);
}

int main(void)
{
    host_port = free_port();
    char v[16];
    snprintf(v, sizeof v, "%u", host_port);
    setenv("VIPL_PORT", v, 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_second_nic_of_the_host_accepts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
