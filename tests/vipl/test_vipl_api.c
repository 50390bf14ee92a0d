/* VIPL API: every call's documented return codes on bad parameters and
 * states (VIA Appendix A, spec-decisions A1-A3, A14), without traffic. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "harness.h"
#include "vipl_fault.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void test_nic_open_query(void **state)
{
    (void)state;
    VIP_NIC_HANDLE nic;
    assert_int_equal(VipOpenNic(NULL, &nic), VIP_INVALID_PARAMETER);
    assert_int_equal(VipOpenNic("127.0.0.1:0", NULL), VIP_INVALID_PARAMETER);
    assert_int_equal(VipOpenNic("127.0.0.1:0,crc=maybe", &nic), VIP_INVALID_PARAMETER);
    assert_int_equal(VipOpenNic("127.0.0.1:99999", &nic), VIP_INVALID_PARAMETER);
    assert_int_equal(VipOpenNic("127.0.0.1:0,bogus=1", &nic), VIP_INVALID_PARAMETER);
    assert_int_equal(VipCloseNic(NULL), VIP_INVALID_PARAMETER);
    assert_int_equal(VipCloseNic((VIP_NIC_HANDLE)&nic), VIP_INVALID_PARAMETER);

    struct h_nic n;
    h_nic_open(&n, "crc=off");
    /* a second NIC cannot take a port in use: VIP_ERROR_RESOURCE */
    char dev[64];
    snprintf(dev, sizeof dev, "127.0.0.1:%u", n.port);
    assert_int_equal(VipOpenNic(dev, &nic), VIP_ERROR_RESOURCE);
    VIP_NIC_ATTRIBUTES a;
    assert_int_equal(VipQueryNic(n.nic, NULL), VIP_INVALID_PARAMETER);
    assert_int_equal(VipQueryNic(NULL, &a), VIP_INVALID_PARAMETER);
    assert_int_equal(VipQueryNic(n.nic, &a), VIP_SUCCESS);
    assert_int_equal(a.NicAddressLen, 4);
    assert_memory_equal(a.LocalNicAddress, "\x7f\x00\x00\x01", 4);
    assert_int_equal(a.MaxDiscriminatorLen, 64);
    assert_int_equal(a.MaxTransferSize, 1u << 20);
    assert_true(a.ThreadSafe);
    assert_int_equal(a.ReliabilityLevelSupport, 7);
    VIPL_STATISTICS st;
    assert_int_equal(VipQuerySystemManagementInfo(n.nic, 99, &st), VIP_INVALID_PARAMETER);
    assert_int_equal(VipQuerySystemManagementInfo(n.nic, VIPL_SMI_STATISTICS, &st), VIP_SUCCESS);
    assert_int_equal(st.SegmentsSent, 0);
    assert_int_equal(VipErrorCallback(NULL, NULL, NULL), VIP_INVALID_PARAMETER);
    assert_int_equal(VipErrorCallback(n.nic, NULL, NULL), VIP_SUCCESS);
    h_nic_close(&n);
    /* a closed NIC's handle is no longer valid */
    assert_int_equal(VipQueryNic(n.nic, &a), VIP_INVALID_PARAMETER);
}

static void test_ptag_and_memory(void **state)
{
    (void)state;
    struct h_nic n;
    h_nic_open(&n, NULL);
    VIP_PROTECTION_HANDLE p2;
    assert_int_equal(VipCreatePtag(n.nic, NULL), VIP_INVALID_PARAMETER);
    assert_int_equal(VipCreatePtag(n.nic, &p2), VIP_SUCCESS);
    static uint8_t buf[4096];
    VIP_MEM_ATTRIBUTES ma = {.Ptag = p2, .EnableRdmaWrite = VIP_TRUE};
    VIP_MEM_HANDLE mh;
    assert_int_equal(VipRegisterMem(n.nic, buf, 0, &ma, &mh), VIP_INVALID_PARAMETER); /* 9.5.3 */
    assert_int_equal(VipRegisterMem(n.nic, NULL, 10, &ma, &mh), VIP_INVALID_PARAMETER);
    VIP_MEM_ATTRIBUTES bad = {.Ptag = (VIP_PROTECTION_HANDLE)buf};
    assert_int_equal(VipRegisterMem(n.nic, buf, 10, &bad, &mh), VIP_INVALID_PTAG);
    assert_int_equal(VipRegisterMem(n.nic, buf, sizeof buf, &ma, &mh), VIP_SUCCESS);
    assert_int_equal(VipDestroyPtag(n.nic, p2), VIP_ERROR_RESOURCE); /* still used */
    VIP_MEM_ATTRIBUTES q;
    assert_int_equal(VipQueryMem(n.nic, buf, mh, &q), VIP_SUCCESS);
    assert_ptr_equal(q.Ptag, p2);
    assert_true(q.EnableRdmaWrite);
    assert_false(q.EnableRdmaRead);
    assert_int_equal(VipQueryMem(n.nic, buf + 1, mh, &q), VIP_INVALID_PARAMETER);
    assert_int_equal(VipQueryMem(n.nic, buf, mh + 100, &q), VIP_INVALID_PARAMETER);
    VIP_MEM_ATTRIBUTES set = {.Ptag = n.ptag, .EnableRdmaRead = VIP_TRUE};
    assert_int_equal(VipSetMemAttributes(n.nic, buf, mh, &bad), VIP_INVALID_PTAG);
    assert_int_equal(VipSetMemAttributes(n.nic, buf, mh, &set), VIP_SUCCESS);
    assert_int_equal(VipQueryMem(n.nic, buf, mh, &q), VIP_SUCCESS);
    assert_ptr_equal(q.Ptag, n.ptag);
    assert_true(q.EnableRdmaRead);
    assert_false(q.EnableRdmaWrite);
    assert_int_equal(VipDestroyPtag(n.nic, p2), VIP_SUCCESS); /* no longer used */
    assert_int_equal(VipDestroyPtag(n.nic, p2), VIP_INVALID_PARAMETER);
    assert_int_equal(VipDeregisterMem(n.nic, buf, mh + 1), VIP_INVALID_PARAMETER);
    assert_int_equal(VipDeregisterMem(n.nic, buf, mh), VIP_SUCCESS);
    assert_int_equal(VipDeregisterMem(n.nic, buf, mh), VIP_INVALID_PARAMETER);
    h_nic_close(&n);
}

static void test_vi_create_attributes(void **state)
{
    (void)state;
    struct h_nic n;
    h_nic_open(&n, NULL);
    VIP_VI_HANDLE vi;
    VIP_VI_ATTRIBUTES a = h_attrs(&n, VIP_SERVICE_RELIABLE_DELIVERY);
    assert_int_equal(VipCreateVi(NULL, &a, NULL, NULL, &vi), VIP_INVALID_PARAMETER);
    assert_int_equal(VipCreateVi(n.nic, NULL, NULL, NULL, &vi), VIP_INVALID_PARAMETER);
    VIP_VI_ATTRIBUTES b = a;
    b.ReliabilityLevel = 3; /* two levels at once */
    assert_int_equal(VipCreateVi(n.nic, &b, NULL, NULL, &vi), VIP_INVALID_RELIABILITY_LEVEL);
    b = a, b.MaxTransferSize = 0;
    assert_int_equal(VipCreateVi(n.nic, &b, NULL, NULL, &vi), VIP_INVALID_MTU); /* A2 */
    b = a, b.MaxTransferSize = (1u << 20) + 1;
    assert_int_equal(VipCreateVi(n.nic, &b, NULL, NULL, &vi), VIP_INVALID_MTU);
    b = a, b.QoS = (VIP_QOS)1;
    assert_int_equal(VipCreateVi(n.nic, &b, NULL, NULL, &vi), VIP_INVALID_QOS);
    b = a, b.Ptag = NULL;
    assert_int_equal(VipCreateVi(n.nic, &b, NULL, NULL, &vi), VIP_INVALID_PTAG);
    b = a, b.ReliabilityLevel = VIP_SERVICE_UNRELIABLE, b.EnableRdmaRead = VIP_TRUE;
    assert_int_equal(VipCreateVi(n.nic, &b, NULL, NULL, &vi), VIP_INVALID_RDMAREAD);
    assert_int_equal(VipCreateVi(n.nic, &a, (VIP_CQ_HANDLE)&b, NULL, &vi), VIP_INVALID_PARAMETER);
    assert_int_equal(VipCreateVi(n.nic, &a, NULL, NULL, &vi), VIP_SUCCESS);

    VIP_VI_STATE st;
    VIP_VI_ATTRIBUTES q;
    VIP_BOOLEAN se, re;
    assert_int_equal(VipQueryVi(NULL, &st, &q, &se, &re), VIP_INVALID_PARAMETER);
    assert_int_equal(VipQueryVi(vi, &st, &q, &se, &re), VIP_SUCCESS);
    assert_int_equal(st, VIP_STATE_IDLE);
    assert_int_equal(q.ReliabilityLevel, VIP_SERVICE_RELIABLE_DELIVERY);
    assert_true(se);
    assert_true(re);
    b = a, b.ReliabilityLevel = VIP_SERVICE_RELIABLE_RECEPTION;
    assert_int_equal(VipSetViAttributes(vi, &b), VIP_SUCCESS);
    assert_int_equal(VipQueryVi(vi, &st, &q, NULL, NULL), VIP_SUCCESS);
    assert_int_equal(q.ReliabilityLevel, VIP_SERVICE_RELIABLE_RECEPTION);
    b.MaxTransferSize = 0;
    assert_int_equal(VipSetViAttributes(vi, &b), VIP_INVALID_MTU);

    /* A posted receive keeps the VI from being destroyed (9.3.2). */
    h_post_recv(&n, vi, 0, 0, 100);
    assert_int_equal(VipQueryVi(vi, &st, &q, &se, &re), VIP_SUCCESS);
    assert_false(re);
    assert_int_equal(VipDestroyVi(vi), VIP_ERROR_RESOURCE);
    /* Disconnect on an Idle VI flushes its receive queue (A5). */
    assert_int_equal(VipDisconnect(vi), VIP_SUCCESS);
    VIP_DESCRIPTOR *d;
    assert_int_equal(VipRecvDone(vi, &d), VIP_SUCCESS);
    assert_ptr_equal(d, h_desc(&n, 0));
    assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_DESC_FLUSHED_ERROR | VIP_STATUS_OP_RECEIVE);
    assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
    assert_int_equal(VipDestroyVi(vi), VIP_INVALID_PARAMETER);
    h_nic_close(&n);
}

static void test_post_on_idle_vi_and_waits(void **state)
{
    (void)state;
    struct h_nic n;
    h_nic_open(&n, NULL);
    VIP_VI_HANDLE vi = h_vi_create(&n, VIP_SERVICE_RELIABLE_DELIVERY);
    VIP_DESCRIPTOR *d;
    assert_int_equal(VipSendDone(vi, &d), VIP_NOT_DONE);
    assert_int_equal(VipSendDone(vi, NULL), VIP_INVALID_PARAMETER);
    double t0 = now_ms();
    assert_int_equal(VipRecvWait(vi, 80, &d), VIP_TIMEOUT);
    double waited = now_ms() - t0;
    assert_true(waited >= 75 && waited < 1000);
    /* A descriptor outside registered memory is refused (VIA 6.1). */
    static VIP_DESCRIPTOR loose;
    assert_int_equal(VipPostSend(vi, &loose, n.dmh), VIP_INVALID_PARAMETER);
    assert_int_equal(VipPostSend(vi, NULL, n.dmh), VIP_INVALID_PARAMETER);
    assert_int_equal(VipPostSend(NULL, h_desc(&n, 0), n.dmh), VIP_INVALID_PARAMETER);
    /* VIA 5.1: a send on an Idle VI completes in error at once. */
    h_post_send(&n, vi, 0, VIP_CONTROL_OP_SENDRECV, 0, 10, 0, 0, 0, 0);
    assert_int_equal(VipSendWait(vi, 0, &d), VIP_SUCCESS);
    assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_DESC_FLUSHED_ERROR | VIP_STATUS_OP_SEND);
    assert_int_equal(VipSendNotify(vi, NULL, NULL), VIP_INVALID_PARAMETER);
    assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
    h_nic_close(&n);
}

static void test_completion_queues(void **state)
{
    (void)state;
    struct h_nic n;
    h_nic_open(&n, NULL);
    VIP_CQ_HANDLE cq;
    assert_int_equal(VipCreateCQ(n.nic, 0, &cq), VIP_INVALID_PARAMETER);
    assert_int_equal(VipCreateCQ(NULL, 4, &cq), VIP_INVALID_PARAMETER);
    assert_int_equal(VipCreateCQ(n.nic, 4, &cq), VIP_SUCCESS);
    VIP_VI_HANDLE vi, got;
    VIP_BOOLEAN recv;
    assert_int_equal(VipCQDone(cq, &got, &recv), VIP_NOT_DONE);
    assert_int_equal(VipCQWait(cq, 30, &got, &recv), VIP_TIMEOUT);
    VIP_VI_ATTRIBUTES a = h_attrs(&n, VIP_SERVICE_RELIABLE_DELIVERY);
    assert_int_equal(VipCreateVi(n.nic, &a, cq, NULL, &vi), VIP_SUCCESS);
    assert_int_equal(VipDestroyCQ(cq), VIP_ERROR_RESOURCE); /* 9.7.2: still associated */
    VIP_DESCRIPTOR *d;
    assert_int_equal(VipSendWait(vi, 10, &d), VIP_ERROR_RESOURCE); /* 9.6.3 */
    assert_int_equal(VipRecvWait(vi, 10, &d), VIP_TIMEOUT);       /* receive queue has no CQ */
    h_post_send(&n, vi, 0, VIP_CONTROL_OP_SENDRECV, 0, 10, 0, 0, 0, 0);
    assert_int_equal(VipCQWait(cq, 1000, &got, &recv), VIP_SUCCESS);
    assert_ptr_equal(got, vi);
    assert_false(recv);
    assert_int_equal(VipSendDone(vi, &d), VIP_SUCCESS);
    assert_int_equal(VipResizeCQ(cq, 0), VIP_INVALID_PARAMETER);
    assert_int_equal(VipResizeCQ(cq, 16), VIP_SUCCESS);
    assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
    assert_int_equal(VipDestroyCQ(cq), VIP_SUCCESS);
    assert_int_equal(VipDestroyCQ(cq), VIP_INVALID_PARAMETER);
    h_nic_close(&n);
}

static void test_name_service(void **state)
{
    (void)state;
    struct h_nic n;
    h_nic_open(&n, NULL);
    assert_int_equal(VipNSInit(n.nic, NULL), VIP_SUCCESS);
    uint8_t buf[sizeof(VIP_NET_ADDRESS) + 16];
    VIP_NET_ADDRESS *a = (VIP_NET_ADDRESS *)buf;
    assert_int_equal(VipNSGetHostByName(n.nic, "127.0.0.1:7000", a, 0), VIP_SUCCESS);
    assert_int_equal(a->HostAddressLen, 4);
    assert_memory_equal(a->HostAddress, "\x7f\x00\x00\x01", 4);
    assert_int_equal(VipNSGetHostByName(n.nic, "localhost", a, 0), VIP_SUCCESS);
    assert_int_equal(VipNSGetHostByName(n.nic, "no-such-host.invalid", a, 0), VIP_ERROR_NAMESERVICE);
    assert_int_equal(VipNSGetHostByName(n.nic, "127.0.0.1:notaport", a, 0), VIP_ERROR_NAMESERVICE);
    assert_int_equal(VipNSGetHostByName(n.nic, "127.0.0.1", a, 5), VIP_ERROR_NAMESERVICE);
    char name[256];
    VIP_ULONG len = sizeof name;
    assert_int_equal(VipNSGetHostByAddr(n.nic, a, name, &len), VIP_SUCCESS);
    assert_true(len > 1 && strlen(name) + 1 == len);
    len = 1;
    assert_int_equal(VipNSGetHostByAddr(n.nic, a, name, &len), VIP_ERROR_RESOURCE);
    assert_int_equal(VipNSShutdown(n.nic), VIP_SUCCESS);
    assert_int_equal(VipNSShutdown(NULL), VIP_INVALID_PARAMETER);
    h_nic_close(&n);
}

static void test_connection_errors(void **state)
{
    (void)state;
    struct h_nic a, b;
    h_nic_open(&a, NULL);
    h_nic_open(&b, "grace=100");
    VIP_VI_HANDLE vi = h_vi_create(&a, VIP_SERVICE_RELIABLE_DELIVERY);
    /* A3: nobody waits for "nobody" -> ConnectNoMatch after the grace (A4) */
    assert_int_equal(h_connect(&a, vi, b.port, "nobody", 3000), VIP_NO_MATCH);
    /* 9.4.4: a closed port (b's after b closes) is a provider not listening
     * yet: tried until the Timeout, then VIP_TIMEOUT (was VIP_NOT_REACHABLE
     * at once, issue 17; test_vipl_connect checks the retries) */
    uint16_t dead = b.port;
    h_nic_close(&b);
    assert_int_equal(h_connect(&a, vi, dead, "x", 200), VIP_TIMEOUT);
    /* 9.4.4: timeout zero times out at once */
    assert_int_equal(h_connect(&a, vi, dead, "x", 0), VIP_TIMEOUT);
    VIP_VI_STATE st;
    assert_int_equal(VipQueryVi(vi, &st, NULL, NULL, NULL), VIP_SUCCESS);
    assert_int_equal(st, VIP_STATE_IDLE);
    /* ConnectWait with nothing coming: VIP_TIMEOUT after its timeout */
    VIP_NET_ADDRESS *local = h_addr(0, "");
    uint8_t rb[sizeof(VIP_NET_ADDRESS) + 80];
    VIP_VI_ATTRIBUTES ra;
    VIP_CONN_HANDLE conn;
    double t0 = now_ms();
    assert_int_equal(VipConnectWait(a.nic, local, 50, (VIP_NET_ADDRESS *)rb, &ra, &conn), VIP_TIMEOUT);
    assert_true(now_ms() - t0 >= 45);
    assert_int_equal(VipConnectWait(a.nic, NULL, 50, (VIP_NET_ADDRESS *)rb, &ra, &conn), VIP_INVALID_PARAMETER);
    assert_int_equal(VipConnectAccept(NULL, vi), VIP_INVALID_PARAMETER);
    assert_int_equal(VipConnectReject(NULL), VIP_INVALID_PARAMETER);
    assert_int_equal(VipConnectPeerDone(vi, &ra), VIP_INVALID_STATE);
    free(local);
    assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
    h_nic_close(&a);
}

static int run(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* vipl-peer --connect against vipl-peer --port carries every message of
 * --count (at most 15: they bounce between the two echoing peers, and each
 * side posts 16 receives), and refuses a --count it cannot carry; against
 * a peer that floods it, the messages that found no receive posted are
 * lost, and the tool says so and exits 1 (issue 18, item 3: it received 7
 * of 31 and exited 0). */
static void test_peer_count_carried_or_refused(void **state)
{
    (void)state;
    struct h_nic srv;
    h_nic_open(&srv, "");
    char cmd[1024], out[64] = "/tmp/vipl-peer-count-XXXXXX";
    int fd = mkstemp(out);
    assert_true(fd >= 0);
    close(fd);
    h_nic_close(&srv); /* its port, now free, for the passive vipl-peer */
    snprintf(cmd, sizeof cmd, VIPL_PEER_BIN " --port %u >/dev/null 2>&1 & echo $! >%s.pid", srv.port, out);
    assert_int_equal(run(cmd), 0);
    usleep(500 * 1000);
    snprintf(cmd, sizeof cmd, VIPL_PEER_BIN " --connect 127.0.0.1:%u --count 15 >%s 2>&1", srv.port, out);
    assert_int_equal(run(cmd), 0);
    snprintf(cmd, sizeof cmd, "test $(grep -c '^event=recv' %s) -eq 16", out);
    assert_int_equal(run(cmd), 0);
    snprintf(cmd, sizeof cmd, VIPL_PEER_BIN " --connect 127.0.0.1:%u --count 16 2>/dev/null", srv.port);
    assert_int_equal(run(cmd), 2);
    snprintf(cmd, sizeof cmd, "kill $(cat %s.pid); rm -f %s.pid", out, out);
    assert_int_equal(run(cmd), 0);

    /* a flood: 32 Sends at once against 16 receives posted. This side posts
     * a receive for every echo, so it is never the one that runs out and
     * resets the connection (at RD) before vipl-peer has read the flood: the
     * reset discarded the unread Sends, no loss was seen, and the check
     * failed about one run in two. */
    /* A flood: 32 Sends at once against 16 receives posted. Whether one of
     * them finds no receive posted depends on how fast vipl-peer reposts
     * (libvipl leaves unread data in TCP while no receive is posted), so
     * the test asserts the rule, not the race: a run in which any message
     * arrived with no receive posted (async error code 2) ends with the
     * loss named on stderr and exit 1, and one without ends with exit 0. */
    h_nic_open(&srv, "");
    VIP_VI_HANDLE vi = h_vi_create(&srv, VIP_SERVICE_RELIABLE_DELIVERY);
    for (unsigned i = 0; i < 32; i++)
        h_post_recv(&srv, vi, 32 + i, (32 + i) * 64, 64);
    snprintf(cmd, sizeof cmd, "(" VIPL_PEER_BIN " --connect 127.0.0.1:%u --disc srv --count 15 >%s 2>&1; "
             "echo $? >%s.rc) &", srv.port, out, out);
    assert_int_equal(run(cmd), 0);
    uint8_t buf[sizeof(VIP_NET_ADDRESS) + 16 + 64];
    VIP_NET_ADDRESS *local = h_addr(0, "srv"), *remote = (VIP_NET_ADDRESS *)buf;
    VIP_VI_ATTRIBUTES ra;
    VIP_CONN_HANDLE conn;
    assert_int_equal(VipConnectWait(srv.nic, local, 5000, remote, &ra, &conn), VIP_SUCCESS);
    assert_int_equal(VipConnectAccept(conn, vi), VIP_SUCCESS);
    free(local);
    for (unsigned i = 0; i < 32; i++)
        h_post_send(&srv, vi, i, VIP_CONTROL_OP_SENDRECV, i * 64, 16, 0, 0, 0, 0);
    snprintf(cmd, sizeof cmd, "for i in $(seq 100); do test -s %s.rc && break; sleep 0.1; done; rc=$(cat %s.rc); "
             "if grep -q 'event=async-error code=2' %s; then "
             "  test \"$rc\" = 1 && grep -q 'were lost (VIP_ERROR_RECVQ_EMPTY)' %s; "
             "else test \"$rc\" = 0 && ! grep -q 'were lost' %s; fi", out, out, out, out, out);
    int verdict = run(cmd);
    if (verdict != 0) {
        snprintf(cmd, sizeof cmd, "cat %s %s.rc >&2", out, out);
        run(cmd);
        fail_msg("vipl-peer --connect under a flood: loss and exit status disagree");
    }
    snprintf(cmd, sizeof cmd, "rm -f %s.rc", out);
    run(cmd);
    h_vi_destroy(vi);
    h_nic_close(&srv);
    unlink(out);
}

static void test_tool_command_lines(void **state)
{
    (void)state;
    assert_int_equal(run(VIPL_PEER_BIN " --bogus 2>/dev/null"), 2);
    assert_int_equal(run(VIPL_PEER_BIN " --port 0 2>/dev/null"), 2);
    assert_int_equal(run(VIPL_PEER_BIN " 2>/dev/null"), 2);
    assert_int_equal(run(VIPL_PEER_BIN " --port 5 --connect a:1 2>/dev/null"), 2);
    assert_int_equal(run(VIPL_PEER_BIN " --port 5 --fault no-such-fault 2>/dev/null"), 2);
    assert_int_equal(run(VIPL_PEER_BIN " --connect hostwithoutport 2>/dev/null"), 2);
    assert_int_equal(run(VIPL_PINGPONG_BIN " --client 127.0.0.1 --port 1 --op read 2>/dev/null"), 2);
    assert_int_equal(run(VIPL_PINGPONG_BIN " --client 127.0.0.1 --port 1 --sizes 4,x 2>/dev/null"), 2);
    assert_int_equal(run(VIPL_PINGPONG_BIN " --client 127.0.0.1 --port 1 --sizes 0 2>/dev/null"), 2);
    assert_int_equal(run(VIPL_PINGPONG_BIN " --server 2>/dev/null"), 2);
    assert_int_equal(run(VIPL_PINGPONG_BIN " --help >/dev/null"), 0);
    /* --list-faults: one line per fault, each with the requirement ID it breaks */
    FILE *p = popen(VIPL_PEER_BIN " --list-faults", "r");
    assert_non_null(p);
    char line[256];
    unsigned lines = 0;
    while (fgets(line, sizeof line, p)) {
        char name[64], id[128];
        assert_int_equal(sscanf(line, "%63s %127s", name, id), 2);
        assert_int_equal(ViplFaultByName(name), ViplFaultByName(id));
        assert_true(strncmp(id, "VITCP-", 6) == 0);
        lines++;
    }
    assert_int_equal(pclose(p), 0);
    assert_int_equal(lines, VIPL_FAULT_COUNT - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_nic_open_query),
        cmocka_unit_test(test_ptag_and_memory),
        cmocka_unit_test(test_vi_create_attributes),
        cmocka_unit_test(test_post_on_idle_vi_and_waits),
        cmocka_unit_test(test_completion_queues),
        cmocka_unit_test(test_name_service),
        cmocka_unit_test(test_connection_errors),
        cmocka_unit_test(test_tool_command_lines),
        cmocka_unit_test(test_peer_count_carried_or_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
