/* Two processes over 127.0.0.1 (issue 6): a forked child runs a second
 * provider (its own progress thread, its own address space), the parent
 * drives transfers at each reliability level, then abrupt TCP closes (the
 * child killed with SIGKILL) in each connection state. The child exits 0
 * only if every check of its own passed; under ASan its exit status also
 * carries LeakSanitizer's verdict, so both processes are checked for leaks. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "harness.h"

#define RD VIP_SERVICE_RELIABLE_DELIVERY
#define RR VIP_SERVICE_RELIABLE_RECEPTION
#define UN VIP_SERVICE_UNRELIABLE
#define REGION (64u * 1024u)
#define NRECV 16u

/* ----------------------------------------------------------- the child */
/* No cmocka in the child (a failed assert would longjmp into the copy of
 * the parent's test runner): a failed check exits with status 3. */
#define CHK(c)                                                                   \
    do {                                                                         \
        if (!(c)) {                                                              \
            fprintf(stderr, "vipl fork child: %s:%d: %s\n", __FILE__, __LINE__, #c); \
            exit(3);                                                             \
        }                                                                        \
    } while (0)

struct hello {
    uint16_t port;
    uint64_t region;
    VIP_MEM_HANDLE handle;
};

enum child_mode {
    CHILD_ECHO,      /* accept, echo Sends, answer immediate RDMA Writes with the region */
    CHILD_NO_ACCEPT, /* listen, never wait for a connection (killed by the parent) */
    CHILD_CONNECT,   /* connect to the parent's port (in hello.port) and sleep */
};

static VIP_DESCRIPTOR *cdesc(uint8_t *descs, unsigned i) { return (VIP_DESCRIPTOR *)(descs + 64 * i); }

static void child_post_recv(VIP_VI_HANDLE vi, uint8_t *descs, VIP_MEM_HANDLE dmh, uint8_t *data,
                            VIP_MEM_HANDLE bmh, unsigned i)
{
    VIP_DESCRIPTOR *d = cdesc(descs, i);
    memset(d, 0, 64);
    d->CS.SegCount = 1;
    d->DS[0].Local.Data.Address = data + (size_t)i * REGION;
    d->DS[0].Local.Handle = bmh;
    d->DS[0].Local.Length = REGION;
    CHK(VipPostRecv(vi, d, dmh) == VIP_SUCCESS);
}

static void child_send(VIP_VI_HANDLE vi, uint8_t *descs, VIP_MEM_HANDLE dmh, const uint8_t *buf,
                       VIP_MEM_HANDLE mh, uint32_t len, bool imm, uint32_t immv)
{
    VIP_DESCRIPTOR *d = cdesc(descs, NRECV);
    memset(d, 0, 64);
    d->CS.Control = VIP_CONTROL_OP_SENDRECV | (imm ? VIP_CONTROL_IMMEDIATE : 0);
    d->CS.ImmediateData = immv;
    d->CS.SegCount = 1;
    d->DS[0].Local.Data.Address = (void *)(uintptr_t)buf;
    d->DS[0].Local.Handle = mh;
    d->DS[0].Local.Length = len;
    CHK(VipPostSend(vi, d, dmh) == VIP_SUCCESS);
    VIP_DESCRIPTOR *done;
    CHK(VipSendWait(vi, 5000, &done) == VIP_SUCCESS);
    CHK(done == d && !(d->CS.Status & VIP_STATUS_ERROR_MASK));
}

static int child_main(int wfd, enum child_mode mode, const char *opts, uint16_t parent_port)
{
    char dev[200];
    snprintf(dev, sizeof dev, "127.0.0.1:0%s%s", opts ? "," : "", opts ? opts : "");
    VIP_NIC_HANDLE nic;
    CHK(VipOpenNic(dev, &nic) == VIP_SUCCESS);
    VIP_PROTECTION_HANDLE pt;
    CHK(VipCreatePtag(nic, &pt) == VIP_SUCCESS);
    uint8_t *descs = aligned_alloc(64, 64 * (NRECV + 1));
    uint8_t *data = malloc((size_t)NRECV * REGION);
    uint8_t *region = malloc(REGION);
    CHK(descs && data && region);
    memset(descs, 0, 64 * (NRECV + 1));
    for (unsigned i = 0; i < REGION; i++)
        region[i] = (uint8_t)i;
    VIP_MEM_ATTRIBUTES ma = {.Ptag = pt};
    VIP_MEM_HANDLE dmh, bmh, rmh;
    CHK(VipRegisterMem(nic, descs, 64 * (NRECV + 1), &ma, &dmh) == VIP_SUCCESS);
    CHK(VipRegisterMem(nic, data, (size_t)NRECV * REGION, &ma, &bmh) == VIP_SUCCESS);
    ma.EnableRdmaWrite = ma.EnableRdmaRead = VIP_TRUE;
    CHK(VipRegisterMem(nic, region, REGION, &ma, &rmh) == VIP_SUCCESS);
    struct hello h = {.region = (uint64_t)(uintptr_t)region, .handle = rmh};
    CHK(ViplNicListenPort(nic, &h.port) == VIP_SUCCESS);
    CHK(write(wfd, &h, sizeof h) == (ssize_t)sizeof h);
    close(wfd);
    if (mode == CHILD_NO_ACCEPT)
        for (;;)
            pause(); /* the request stays held, unanswered, until SIGKILL */
    if (mode == CHILD_CONNECT) {
        VIP_VI_ATTRIBUTES a = {.ReliabilityLevel = RD, .MaxTransferSize = REGION, .Ptag = pt,
                               .EnableRdmaWrite = VIP_TRUE, .EnableRdmaRead = VIP_TRUE};
        VIP_VI_HANDLE vi;
        CHK(VipCreateVi(nic, &a, NULL, NULL, &vi) == VIP_SUCCESS);
        CHK(ViplNicSetRemotePort(nic, parent_port) == VIP_SUCCESS);
        VIP_NET_ADDRESS *local = h_addr(0, "child"), *remote = h_addr(parent_port, "parent");
        VIP_VI_ATTRIBUTES ra;
        VipConnectRequest(vi, local, remote, 30000, &ra); /* killed while this waits */
        for (;;)
            pause();
    }
    VIP_NET_ADDRESS *local = h_addr(0, ""); /* A4: every discriminator */
    uint8_t rb[sizeof(VIP_NET_ADDRESS) + 80];
    VIP_VI_ATTRIBUTES ra;
    VIP_CONN_HANDLE conn;
    CHK(VipConnectWait(nic, local, 10000, (VIP_NET_ADDRESS *)rb, &ra, &conn) == VIP_SUCCESS);
    free(local);
    VIP_RELIABILITY_LEVEL level = ra.ReliabilityLevel & ~VIP_SERVICE_DFC;
    VIP_VI_ATTRIBUTES a = {.ReliabilityLevel = level, .MaxTransferSize = REGION, .Ptag = pt,
                           .EnableRdmaWrite = VIP_TRUE, .EnableRdmaRead = level != UN};
    VIP_VI_HANDLE vi;
    CHK(VipCreateVi(nic, &a, NULL, NULL, &vi) == VIP_SUCCESS);
    for (unsigned i = 0; i < NRECV; i++)
        child_post_recv(vi, descs, dmh, data, bmh, i);
    CHK(VipConnectAccept(conn, vi) == VIP_SUCCESS);
    for (;;) {
        VIP_DESCRIPTOR *d;
        VIP_RETURN rc = VipRecvWait(vi, 10000, &d);
        CHK(rc == VIP_SUCCESS);
        if (d->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR)
            break; /* the parent disconnected */
        CHK(!(d->CS.Status & VIP_STATUS_ERROR_MASK));
        unsigned i = (unsigned)(((uint8_t *)d - descs) / 64);
        CHK(i < NRECV);
        bool imm = (d->CS.Status & VIP_STATUS_IMMEDIATE) != 0;
        if ((d->CS.Status & VIP_STATUS_OP_MASK) == VIP_STATUS_OP_REMOTE_RDMA_WRITE) {
            /* an RDMA Write with immediate data N: send the region's first N bytes back */
            CHK(imm && d->CS.ImmediateData <= REGION);
            child_send(vi, descs, dmh, region, rmh, d->CS.ImmediateData, true, d->CS.ImmediateData);
        } else if (d->CS.Length == 1 && data[(size_t)i * REGION] == 'q') {
            break;
        } else {
            child_send(vi, descs, dmh, data + (size_t)i * REGION, bmh, d->CS.Length, imm, d->CS.ImmediateData);
        }
        child_post_recv(vi, descs, dmh, data, bmh, i);
    }
    CHK(VipDisconnect(vi) == VIP_SUCCESS);
    VIP_DESCRIPTOR *d;
    while (VipRecvDone(vi, &d) == VIP_SUCCESS || VipSendDone(vi, &d) == VIP_SUCCESS)
        ;
    CHK(VipDestroyVi(vi) == VIP_SUCCESS);
    CHK(VipDeregisterMem(nic, region, rmh) == VIP_SUCCESS);
    CHK(VipCloseNic(nic) == VIP_SUCCESS);
    free(descs);
    free(data);
    free(region);
    return 0;
}

/* ---------------------------------------------------------- the parent */
static pid_t spawn(enum child_mode mode, const char *opts, uint16_t parent_port, struct hello *h)
{
    int p[2];
    assert_int_equal(pipe(p), 0);
    fflush(NULL);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        exit(child_main(p[1], mode, opts, parent_port));
    }
    close(p[1]);
    ssize_t n;
    do
        n = read(p[0], h, sizeof *h);
    while (n < 0 && errno == EINTR);
    close(p[0]);
    assert_int_equal(n, (ssize_t)sizeof *h);
    return pid;
}

static int reap(pid_t pid)
{
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return st;
}

static void kill_child(pid_t pid)
{
    assert_int_equal(kill(pid, SIGKILL), 0);
    int st = reap(pid);
    assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

static VIP_VI_HANDLE connect_to(struct h_nic *n, VIP_RELIABILITY_LEVEL level, const struct hello *h,
                                unsigned recvs)
{
    VIP_VI_HANDLE vi;
    VIP_VI_ATTRIBUTES a = h_attrs(n, level);
    a.MaxTransferSize = REGION;
    assert_int_equal(VipCreateVi(n->nic, &a, NULL, NULL, &vi), VIP_SUCCESS);
    for (unsigned i = 0; i < recvs; i++)
        h_post_recv(n, vi, i, i * REGION, REGION);
    assert_int_equal(h_connect(n, vi, h->port, "fork", 5000), VIP_SUCCESS);
    return vi;
}

/* Send, RDMA Write without and with immediate data, RDMA Read (not at
 * Unreliable, VIA 2.5.1), each checked in the other process's memory. */
static void transfers_at(VIP_RELIABILITY_LEVEL level)
{
    struct hello h;
    pid_t pid = spawn(CHILD_ECHO, NULL, 0, &h);
    struct h_nic n;
    h_nic_open(&n, NULL);
    VIP_VI_HANDLE vi = connect_to(&n, level, &h, 4);
    uint8_t *src = n.data + 8 * REGION;
    /* Send with immediate data: echoed by the child */
    for (unsigned i = 0; i < 3000; i++)
        src[i] = (uint8_t)(i * 13 + 1);
    h_post_send(&n, vi, 20, VIP_CONTROL_OP_SENDRECV, 8 * REGION, 3000, 1, 0xC0FFEE, 0, 0);
    assert_int_equal(h_wait_send(vi)->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_SEND);
    VIP_DESCRIPTOR *d = h_wait_recv(vi);
    assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE | VIP_STATUS_IMMEDIATE);
    assert_int_equal(d->CS.Length, 3000);
    assert_int_equal(d->CS.ImmediateData, 0xC0FFEE);
    assert_memory_equal(n.data, src, 3000);
    /* RDMA Write without immediate data: region[1000..4000) */
    for (unsigned i = 0; i < 3000; i++)
        src[i] = (uint8_t)(0xA0 ^ i);
    h_post_send(&n, vi, 21, VIP_CONTROL_OP_RDMAWRITE, 8 * REGION, 3000, 0, 0, h.region + 1000, h.handle);
    assert_int_equal(h_wait_send(vi)->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RDMA_WRITE);
    /* RDMA Write with immediate data 4000: region[0..500), then the child
     * sends region[0..4000) back */
    uint8_t *src2 = src + 4096;
    memset(src2, 0x77, 500);
    h_post_send(&n, vi, 22, VIP_CONTROL_OP_RDMAWRITE, 8 * REGION + 4096, 500, 1, 4000, h.region, h.handle);
    assert_int_equal(h_wait_send(vi)->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RDMA_WRITE);
    d = h_wait_recv(vi);
    assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE | VIP_STATUS_IMMEDIATE);
    assert_int_equal(d->CS.Length, 4000);
    const uint8_t *got = n.data + REGION;
    for (unsigned i = 0; i < 4000; i++) {
        uint8_t want = i < 500 ? 0x77 : i < 1000 ? (uint8_t)i : (uint8_t)(0xA0 ^ (i - 1000));
        assert_int_equal(got[i], want);
    }
    /* RDMA Read of region[5000..7000) */
    if (level != UN) {
        memset(n.data + 9 * REGION, 0, 2000);
        h_post_send(&n, vi, 23, VIP_CONTROL_OP_RDMAREAD, 9 * REGION, 2000, 0, 0, h.region + 5000, h.handle);
        assert_int_equal(h_wait_send(vi)->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RDMA_READ);
        for (unsigned i = 0; i < 2000; i++)
            assert_int_equal(n.data[9 * REGION + i], (uint8_t)(5000 + i));
    }
    /* "q": the child disconnects and exits 0 if all its checks passed */
    n.data[8 * REGION] = 'q';
    h_post_send(&n, vi, 24, VIP_CONTROL_OP_SENDRECV, 8 * REGION, 1, 0, 0, 0, 0);
    h_wait_send(vi);
    int st = reap(pid);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    h_vi_destroy(vi);
    h_nic_close(&n);
}

static void test_fork_unreliable(void **s) { (void)s; transfers_at(UN); }
static void test_fork_reliable_delivery(void **s) { (void)s; transfers_at(RD); }
static void test_fork_reliable_reception(void **s) { (void)s; transfers_at(RR); }

/* The other side's VI after an abrupt close: Error, posted work completed
 * with DESC_FLUSHED_ERROR, VIP_ERROR_CONN_LOST raised (A5,
 * VITCP-2.2.2.2.2-CLOSE-VI-ON-TCP-CLOSE). */
static void expect_lost(struct h_nic *n, VIP_VI_HANDLE vi)
{
    for (int i = 0; i < 300 && h_vi_state(vi) != VIP_STATE_ERROR; i++)
        usleep(10000);
    assert_int_equal(h_vi_state(vi), VIP_STATE_ERROR);
    for (int i = 0; i < 300 && !__atomic_load_n(&n->async_errors[VIP_ERROR_CONN_LOST], __ATOMIC_SEQ_CST); i++)
        usleep(10000);
    assert_true(n->async_errors[VIP_ERROR_CONN_LOST] >= 1);
    /* later sends complete at once, flushed */
    h_post_send(n, vi, 30, VIP_CONTROL_OP_SENDRECV, 0, 10, 0, 0, 0, 0);
    VIP_DESCRIPTOR *d = h_wait_send(vi);
    assert_true(d->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR);
}

static void test_kill_connected_idle(void **state)
{
    (void)state;
    for (int lv = 0; lv < 3; lv++) {
        VIP_RELIABILITY_LEVEL level = lv == 0 ? UN : lv == 1 ? RD : RR;
        struct hello h;
        pid_t pid = spawn(CHILD_ECHO, NULL, 0, &h);
        struct h_nic n;
        h_nic_open(&n, NULL);
        VIP_VI_HANDLE vi = connect_to(&n, level, &h, 2);
        h_post_send(&n, vi, 20, VIP_CONTROL_OP_SENDRECV, 8 * REGION, 10, 0, 0, 0, 0);
        h_wait_send(vi);
        assert_int_equal(h_wait_recv(vi)->CS.Length, 10); /* connected and echoing */
        kill_child(pid);
        /* the second posted receive is flushed */
        VIP_DESCRIPTOR *d = h_wait_recv(vi);
        assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_DESC_FLUSHED_ERROR | VIP_STATUS_OP_RECEIVE);
        expect_lost(&n, vi);
        h_vi_destroy(vi);
        h_nic_close(&n);
    }
}

/* The child's provider never answers reads (fault no-read-response): the
 * read is outstanding when the child dies. */
static void test_kill_with_read_outstanding(void **state)
{
    (void)state;
    struct hello h;
    pid_t pid = spawn(CHILD_ECHO, "fault=no-read-response", 0, &h);
    struct h_nic n;
    h_nic_open(&n, NULL);
    VIP_VI_HANDLE vi = connect_to(&n, RR, &h, 1);
    memset(n.data + 9 * REGION, 0xAB, 1000);
    h_post_send(&n, vi, 20, VIP_CONTROL_OP_RDMAREAD, 9 * REGION, 1000, 0, 0, h.region, h.handle);
    VIP_DESCRIPTOR *d;
    assert_int_equal(VipSendWait(vi, 100, &d), VIP_TIMEOUT); /* outstanding */
    kill_child(pid);
    d = h_wait_send(vi);
    assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_DESC_FLUSHED_ERROR | VIP_STATUS_OP_RDMA_READ);
    for (unsigned i = 0; i < 1000; i++)
        assert_int_equal(n.data[9 * REGION + i], 0xAB); /* nothing placed */
    d = h_wait_recv(vi);
    assert_true(d->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR);
    expect_lost(&n, vi);
    h_vi_destroy(vi);
    h_nic_close(&n);
}

/* During the CE exchange, active side: the peer holds our ConnectRequest
 * unanswered and dies -> the request tries again (VI/TCP 4.2: TCP closes
 * in Pending Accept - re-establish) against a port nobody listens on any
 * more, until its Timeout: VIP_TIMEOUT (decision 5; was VIP_NOT_REACHABLE
 * at once before issue 17), VI back to Idle. */
static void test_kill_during_ce_active(void **state)
{
    (void)state;
    struct hello h;
    pid_t pid = spawn(CHILD_NO_ACCEPT, NULL, 0, &h);
    struct h_nic n;
    h_nic_open(&n, NULL);
    VIP_VI_HANDLE vi = h_vi_create(&n, RD);
    struct h_connector c = {.n = &n, .vi = vi, .port = h.port, .disc = "fork", .timeout_ms = 1500};
    h_connect_start(&c);
    for (int i = 0; i < 100 && h_vi_state(vi) != VIP_STATE_CONNECT_PENDING; i++)
        usleep(5000);
    usleep(100000); /* the request reaches the child's held connection */
    kill_child(pid);
    assert_int_equal(h_connect_join(&c), VIP_TIMEOUT);
    assert_int_equal(h_vi_state(vi), VIP_STATE_IDLE);
    assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
    h_nic_close(&n);
}

/* During the CE exchange, passive side: the requester dies after its
 * request was taken by VipConnectWait, before VipConnectAccept: the VI ends
 * in Error with VIP_ERROR_CONN_LOST, whatever the order the close and the
 * accept happen in. */
static void test_kill_during_ce_passive(void **state)
{
    (void)state;
    struct h_nic n;
    h_nic_open(&n, "grace=5000");
    struct hello h;
    pid_t pid = spawn(CHILD_CONNECT, NULL, n.port, &h);
    VIP_NET_ADDRESS *local = h_addr(0, "parent");
    uint8_t rb[sizeof(VIP_NET_ADDRESS) + 80];
    VIP_VI_ATTRIBUTES ra;
    VIP_CONN_HANDLE conn;
    assert_int_equal(VipConnectWait(n.nic, local, 5000, (VIP_NET_ADDRESS *)rb, &ra, &conn), VIP_SUCCESS);
    free(local);
    kill_child(pid);
    usleep(50000);
    VIP_VI_HANDLE vi = h_vi_create(&n, RD);
    h_post_recv(&n, vi, 0, 0, 1000);
    assert_int_equal(VipConnectAccept(conn, vi), VIP_SUCCESS);
    VIP_DESCRIPTOR *d = h_wait_recv(vi);
    assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_DESC_FLUSHED_ERROR | VIP_STATUS_OP_RECEIVE);
    expect_lost(&n, vi);
    h_vi_destroy(vi);
    h_nic_close(&n);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fork_unreliable),
        cmocka_unit_test(test_fork_reliable_delivery),
        cmocka_unit_test(test_fork_reliable_reception),
        cmocka_unit_test(test_kill_connected_idle),
        cmocka_unit_test(test_kill_with_read_outstanding),
        cmocka_unit_test(test_kill_during_ce_active),
        cmocka_unit_test(test_kill_during_ce_passive),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
