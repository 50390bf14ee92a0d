/*
 * A VIA program in the spelling of Intel's VI Developer's Guide (issue 17):
 * descriptors as {CS; DS[]}, the error descriptor's CQHandle, return codes
 * tested with #ifdef, QoS = NULL, VIP_SMI_AUTODISCOVERY, a completion queue.
 *
 *   compat_devguide server DISC
 *   compat_devguide client HOST DISC [EXPECTED_RETURN]
 *
 * The server accepts one connection on DISC, sends the client where its
 * buffer is, and checks what the client writes there with an RDMA Write
 * with immediate data, then answers a Send with the sum of those bytes. The
 * client calls again on VIP_NO_MATCH/VIP_TIMEOUT (the server may start
 * later). With EXPECTED_RETURN the client makes one call with a 3 s Timeout
 * and exits 0 when VipConnectRequest returns that (by name).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vipl.h>

#ifndef VIP_ERROR_NOT_SUPPORTED
#error "return codes must be macros as well as values"
#endif

#define WRITE_LEN 256
#define IMM 0xD6C0FFEEu

static VIP_NIC_HANDLE nic;
static VIP_PROTECTION_HANDLE ptag;
static VIP_MEM_HANDLE mh;
static unsigned char *mem; /* [0..3 descriptors][data 4096] */
static const char *role;

static void die(const char *what, VIP_RETURN rc)
{
    fprintf(stderr, "compat_devguide %s: %s: %s\n", role, what, ViplReturnName(rc));
    exit(1);
}

static void on_error(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *e)
{
    (void)ctx;
    /* the Developer's Guide's spelling of the CQ field */
    fprintf(stderr, "async error %d on VI %p CQ %p\n", (int)e->ErrorCode, e->ViHandle, e->CQHandle);
}

static VIP_DESCRIPTOR *desc(int i)
{
    return (VIP_DESCRIPTOR *)(mem + i * 128);
}

static unsigned char *data(void)
{
    return mem + 512;
}

static void setup(void)
{
    VIP_RETURN rc = VipOpenNic("/dev/via_lo", &nic);
    if (rc != VIP_SUCCESS)
        die("VipOpenNic", rc);
    VipErrorCallback(nic, NULL, on_error);
    if ((rc = VipCreatePtag(nic, &ptag)) != VIP_SUCCESS)
        die("VipCreatePtag", rc);
    void *p;
    if (posix_memalign(&p, VIP_DESCRIPTOR_ALIGNMENT, 512 + 4096))
        exit(1);
    mem = p;
    memset(mem, 0, 512 + 4096);
    VIP_MEM_ATTRIBUTES ma;
    ma.Ptag = ptag;
    ma.EnableRdmaWrite = VIP_TRUE;
    ma.EnableRdmaRead = VIP_FALSE;
    if ((rc = VipRegisterMem(nic, mem, 512 + 4096, &ma, &mh)) != VIP_SUCCESS)
        die("VipRegisterMem", rc);
    VIP_AUTODISCOVERY_LIST ad;
    memset(&ad, 0, sizeof ad);
    rc = VipQuerySystemManagementInfo(nic, VIP_SMI_AUTODISCOVERY, &ad);
    if (rc != VIP_ERROR_NOT_SUPPORTED)
        die("VipQuerySystemManagementInfo(VIP_SMI_AUTODISCOVERY)", rc);
}

static void teardown(void)
{
    VipDeregisterMem(nic, mem, mh);
    free(mem);
    VipDestroyPtag(nic, ptag);
    VipCloseNic(nic);
}

static VIP_VI_HANDLE make_vi(VIP_CQ_HANDLE recv_cq)
{
    VIP_VI_ATTRIBUTES at;
    at.ReliabilityLevel = VIP_SERVICE_RELIABLE_RECEPTION;
    at.MaxTransferSize = 4096;
    at.QoS = NULL; /* a pointer, as in the Guide */
    at.Ptag = ptag;
    at.EnableRdmaWrite = VIP_TRUE;
    at.EnableRdmaRead = VIP_FALSE;
    VIP_VI_HANDLE vi;
    VIP_RETURN rc = VipCreateVi(nic, &at, NULL, recv_cq, &vi);
    if (rc != VIP_SUCCESS)
        die("VipCreateVi", rc);
    return vi;
}

static void post_recv(VIP_VI_HANDLE vi, int i, void *buf, VIP_UINT32 len)
{
    VIP_DESCRIPTOR *d = desc(i);
    memset(d, 0, sizeof *d);
    d->CS.SegCount = 1;
    d->CS.Length = len;
    d->DS[0].Local.Data.Address = buf;
    d->DS[0].Local.Handle = mh;
    d->DS[0].Local.Length = len;
    VIP_RETURN rc = VipPostRecv(vi, d, mh);
    if (rc != VIP_SUCCESS)
        die("VipPostRecv", rc);
}

static void send_and_wait(VIP_VI_HANDLE vi, int i, void *buf, VIP_UINT32 len)
{
    VIP_DESCRIPTOR *d = desc(i), *done;
    memset(d, 0, sizeof *d);
    d->CS.Control = VIP_CONTROL_OP_SENDRECV;
    d->CS.SegCount = 1;
    d->CS.Length = len;
    d->DS[0].Local.Data.Address = buf;
    d->DS[0].Local.Handle = mh;
    d->DS[0].Local.Length = len;
    VIP_RETURN rc = VipPostSend(vi, d, mh);
    if (rc == VIP_SUCCESS)
        rc = VipSendWait(vi, 10000, &done);
    if (rc != VIP_SUCCESS)
        die("send", rc);
    if (done->CS.Status & VIP_STATUS_ERROR_MASK)
        die("send status", VIP_DESCRIPTOR_ERROR);
}

static VIP_NET_ADDRESS *address(const char *host, const char *disc)
{
    VIP_NET_ADDRESS *a = calloc(1, sizeof *a + 16 + 64);
    if (host) {
        VIP_RETURN rc = VipNSGetHostByName(nic, (VIP_CHAR *)host, a, 0);
        if (rc != VIP_SUCCESS)
            die("VipNSGetHostByName", rc);
    }
    a->DiscriminatorLen = (VIP_UINT16)strlen(disc);
    memcpy(a->HostAddress + a->HostAddressLen, disc, a->DiscriminatorLen);
    return a;
}

static int server(const char *disc)
{
    VIP_CQ_HANDLE cq;
    VIP_RETURN rc = VipCreateCQ(nic, 16, &cq);
    if (rc != VIP_SUCCESS)
        die("VipCreateCQ", rc);
    VIP_VI_HANDLE vi = make_vi(cq);
    unsigned char *target = data(), *msg = data() + 1024;
    post_recv(vi, 0, msg, 64); /* consumed by the write's immediate data */
    post_recv(vi, 1, msg + 64, 64);
    VIP_NET_ADDRESS *local = address(NULL, disc);
    unsigned char rbuf[sizeof(VIP_NET_ADDRESS) + 16 + 64];
    VIP_VI_ATTRIBUTES ra;
    VIP_CONN_HANDLE conn;
    int tries = 0;
    do
        rc = VipConnectWait(nic, local, 2000, (VIP_NET_ADDRESS *)rbuf, &ra, &conn);
    while (rc == VIP_TIMEOUT && ++tries < 15);
    free(local);
    if (rc != VIP_SUCCESS)
        die("VipConnectWait", rc);
    if ((rc = VipConnectAccept(conn, vi)) != VIP_SUCCESS)
        die("VipConnectAccept", rc);
    /* where to write: address (8 bytes, little-endian as in descriptors), handle */
    unsigned char *region = data() + 2048;
    VIP_UINT64 addr = (VIP_UINT64)(uintptr_t)target;
    memcpy(region, &addr, 8);
    memcpy(region + 8, &mh, 4);
    send_and_wait(vi, 2, region, 12);
    VIP_VI_HANDLE who;
    VIP_BOOLEAN is_recv;
    if ((rc = VipCQWait(cq, 10000, &who, &is_recv)) != VIP_SUCCESS || who != vi || !is_recv)
        die("VipCQWait", rc);
    VIP_DESCRIPTOR *d;
    if ((rc = VipRecvDone(vi, &d)) != VIP_SUCCESS)
        die("VipRecvDone", rc);
    if (!(d->CS.Status & VIP_STATUS_IMMEDIATE) || d->CS.ImmediateData != IMM ||
        (d->CS.Status & VIP_STATUS_OP_MASK) != VIP_STATUS_OP_REMOTE_RDMA_WRITE)
        die("write completion", VIP_DESCRIPTOR_ERROR);
    unsigned sum = 0;
    for (int i = 0; i < WRITE_LEN; i++) {
        if (target[i] != (unsigned char)(i * 7 + 1))
            die("written bytes", VIP_DESCRIPTOR_ERROR);
        sum += target[i];
    }
    char *answer = (char *)data() + 3072;
    snprintf(answer, 64, "sum %u", sum);
    send_and_wait(vi, 3, answer, 64); /* Reliable Reception: done when the client has it */
    printf("server: %d bytes written with immediate data, answered '%s'\n", WRITE_LEN, answer);
    VipDisconnect(vi);
    VipDestroyVi(vi);
    VipDestroyCQ(cq);
    teardown();
    return 0;
}

static int client(const char *host, const char *disc, const char *expect)
{
    VIP_VI_HANDLE vi = make_vi(NULL);
    unsigned char *region = data(), *answer = data() + 64, *src = data() + 1024;
    post_recv(vi, 0, region, 64);
    post_recv(vi, 1, answer, 64);
    VIP_NET_ADDRESS *local = address(NULL, "devguide-client");
    VIP_NET_ADDRESS *remote = address(host, disc);
    VIP_VI_ATTRIBUTES ra;
    VIP_RETURN rc;
    if (expect) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        rc = VipConnectRequest(vi, local, remote, 3000, &ra);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
        printf("client: VipConnectRequest gave %s after %.0f ms\n", ViplReturnName(rc), ms);
        free(local);
        free(remote);
        return strcmp(ViplReturnName(rc), expect) == 0 ? 0 : 1;
    }
    int tries = 0;
    do
        rc = VipConnectRequest(vi, local, remote, 2000, &ra);
    while ((rc == VIP_NO_MATCH || rc == VIP_TIMEOUT) && ++tries < 15);
    free(local);
    free(remote);
    if (rc != VIP_SUCCESS)
        die("VipConnectRequest", rc);
    if (ra.ReliabilityLevel != VIP_SERVICE_RELIABLE_RECEPTION || !ra.EnableRdmaWrite)
        die("remote attributes", VIP_INVALID_RELIABILITY_LEVEL);
    VIP_DESCRIPTOR *d;
    if ((rc = VipRecvWait(vi, 10000, &d)) != VIP_SUCCESS || d->CS.Length != 12)
        die("region message", rc);
    VIP_UINT64 raddr;
    VIP_MEM_HANDLE rh;
    memcpy(&raddr, region, 8);
    memcpy(&rh, region + 8, 4);
    for (int i = 0; i < WRITE_LEN; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    /* RDMA Write: control, address segment, data segment */
    VIP_DESCRIPTOR *w = desc(2);
    memset(w, 0, sizeof *w);
    w->CS.Control = VIP_CONTROL_OP_RDMAWRITE | VIP_CONTROL_IMMEDIATE;
    w->CS.ImmediateData = IMM;
    w->CS.SegCount = 2;
    w->CS.Length = WRITE_LEN;
    w->DS[0].Remote.Data.AddressBits = raddr;
    w->DS[0].Remote.Handle = rh;
    w->DS[1].Local.Data.Address = src;
    w->DS[1].Local.Handle = mh;
    w->DS[1].Local.Length = WRITE_LEN;
    if ((rc = VipPostSend(vi, w, mh)) != VIP_SUCCESS || (rc = VipSendWait(vi, 10000, &d)) != VIP_SUCCESS)
        die("RDMA Write", rc);
    if (d->CS.Status & VIP_STATUS_ERROR_MASK)
        die("RDMA Write status", VIP_DESCRIPTOR_ERROR);
    if ((rc = VipRecvWait(vi, 10000, &d)) != VIP_SUCCESS)
        die("answer", rc);
    unsigned sum = 0;
    for (int i = 0; i < WRITE_LEN; i++)
        sum += src[i];
    char want[64];
    snprintf(want, sizeof want, "sum %u", sum);
    if (strcmp((char *)answer, want) != 0) {
        fprintf(stderr, "compat_devguide client: answer '%.64s', expected '%s'\n", (char *)answer, want);
        return 1;
    }
    printf("client: wrote %d bytes, server answered '%s'\n", WRITE_LEN, want);
    VipDisconnect(vi);
    VipDestroyVi(vi);
    teardown();
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "server")) {
        role = "server";
        setup();
        return server(argv[2]);
    }
    if (argc >= 4 && !strcmp(argv[1], "client")) {
        role = "client";
        setup();
        return client(argv[2], argv[3], argc >= 5 ? argv[4] : NULL);
    }
    fprintf(stderr, "usage: compat_devguide server DISC | client HOST DISC [EXPECTED_RETURN]\n");
    return 2;
}
