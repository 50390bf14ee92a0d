/*
 * A VIA program in the spelling of Giganet's cLAN header (issue 17): the
 * default descriptor {Control; Data[]} (so d->Control.Control is the control
 * word), VIP_VI_CALLBACK and VIP_CQ_CALLBACK, VIP_EVENT_HANDLE, VIP_WCHAR,
 * VIP_SHORT, the error descriptor's CQHandle, #ifndef on return codes.
 *
 *   compat_giganet server DISC
 *   compat_giganet client HOST DISC
 *
 * The client sends COUNT messages of growing size (immediate data = index);
 * the server, told of each by a receive notify callback, echoes it; then the
 * client RDMA-Reads the server's last buffer. Either may start first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vipl.h>

#ifndef VIP_NOT_REACHABLE
#error "VIP_NOT_REACHABLE must be testable with #ifdef"
#endif

#define COUNT 8
#define SLOT 2048

static VIP_NIC_HANDLE Nic;
static VIP_PROTECTION_HANDLE Ptag;
static VIP_MEM_HANDLE Mh;
static unsigned char *Mem; /* descriptors: 2 * COUNT + 2 slots of 64; then buffers */
static const char *Role;
static VIP_EVENT_HANDLE Event = NULL;            /* declared as cLAN code did */
static const VIP_WCHAR DeviceNameW[] = L"clanvi0"; /* the wide name of the time */
static VIP_CQ_CALLBACK UnusedCqCallback = NULL;

static void Fail(const char *what, VIP_RETURN rc)
{
    fprintf(stderr, "compat_giganet %s: %s: %s\n", Role, what, ViplReturnName(rc));
    exit(1);
}

static VIP_DESCRIPTOR *Desc(int i)
{
    return (VIP_DESCRIPTOR *)(Mem + i * 64);
}

static unsigned char *Buf(int i)
{
    return Mem + 64 * (2 * COUNT + 2) + (size_t)i * SLOT;
}

static void ErrorHandler(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *e)
{
    (void)ctx;
    fprintf(stderr, "error %d, CQ %p\n", (int)e->ErrorCode, e->CQHandle);
}

static void Setup(void)
{
    VIP_RETURN rc = VipOpenNic("/dev/clanvi0", &Nic);
    if (rc != VIP_SUCCESS)
        Fail("VipOpenNic", rc);
    VipErrorCallback(Nic, NULL, ErrorHandler);
    if ((rc = VipCreatePtag(Nic, &Ptag)) != VIP_SUCCESS)
        Fail("VipCreatePtag", rc);
    size_t len = 64 * (2 * COUNT + 2) + (size_t)(2 * COUNT + 1) * SLOT;
    void *p;
    if (posix_memalign(&p, VIP_DESCRIPTOR_ALIGNMENT, len))
        exit(1);
    Mem = p;
    memset(Mem, 0, len);
    VIP_MEM_ATTRIBUTES ma = {Ptag, VIP_FALSE, VIP_TRUE};
    if ((rc = VipRegisterMem(Nic, Mem, (VIP_ULONG)len, &ma, &Mh)) != VIP_SUCCESS)
        Fail("VipRegisterMem", rc);
    (void)Event;
    (void)UnusedCqCallback;
    VIP_SHORT wide_len = (VIP_SHORT)(sizeof DeviceNameW / sizeof DeviceNameW[0]);
    if (wide_len != 8 || DeviceNameW[0] != L'c')
        Fail("VIP_WCHAR", VIP_ERROR_RESOURCE);
}

static VIP_VI_HANDLE CreateVi(void)
{
    VIP_VI_ATTRIBUTES at = {VIP_SERVICE_RELIABLE_DELIVERY, SLOT, 0, Ptag, VIP_FALSE, VIP_TRUE};
    VIP_VI_HANDLE vi;
    VIP_RETURN rc = VipCreateVi(Nic, &at, NULL, NULL, &vi);
    if (rc != VIP_SUCCESS)
        Fail("VipCreateVi", rc);
    return vi;
}

/* cLAN style: the control segment is d->Control, data segments d->Data[i]. */
static void Fill(VIP_DESCRIPTOR *d, VIP_UINT16 op, unsigned char *buf, VIP_UINT32 len)
{
    memset(d, 0, sizeof *d);
    d->Control.Control = op;
    d->Control.SegCount = 1;
    d->Control.Length = len;
    d->Data[0].Data.Address = buf;
    d->Data[0].Handle = Mh;
    d->Data[0].Length = len;
}

static VIP_NET_ADDRESS *Address(const char *host, const char *disc)
{
    VIP_NET_ADDRESS *a = calloc(1, sizeof *a + 16 + 64);
    if (host) {
        VIP_RETURN rc = VipNSGetHostByName(Nic, (VIP_CHAR *)host, a, 0);
        if (rc != VIP_SUCCESS)
            Fail("VipNSGetHostByName", rc);
    }
    a->DiscriminatorLen = (VIP_UINT16)strlen(disc);
    memcpy(a->HostAddress + a->HostAddressLen, disc, a->DiscriminatorLen);
    return a;
}

static volatile int Notified;

static void OnRecv(VIP_PVOID ctx, VIP_NIC_HANDLE nic, VIP_VI_HANDLE vi, VIP_DESCRIPTOR *d)
{
    (void)ctx, (void)nic;
    /* echo the message back: same length, same immediate data */
    int i = (int)d->Control.ImmediateData;
    if (i < 0 || i >= COUNT || d->Control.Length != (VIP_UINT32)(i + 1) * 100)
        Fail("message", VIP_DESCRIPTOR_ERROR);
    VIP_DESCRIPTOR *e = Desc(COUNT + i);
    Fill(e, VIP_CONTROL_OP_SENDRECV | VIP_CONTROL_IMMEDIATE, Buf(i), d->Control.Length);
    e->Control.ImmediateData = (VIP_UINT32)i;
    if (VipPostSend(vi, e, Mh) != VIP_SUCCESS)
        Fail("VipPostSend", VIP_ERROR_RESOURCE);
    if (++Notified < COUNT)
        VipRecvNotify(vi, NULL, OnRecv); /* one notification per call */
}

static int Server(const char *disc)
{
    VIP_VI_HANDLE vi = CreateVi();
    for (int i = 0; i < COUNT; i++) {
        Fill(Desc(i), VIP_CONTROL_OP_SENDRECV, Buf(i), SLOT);
        VipPostRecv(vi, Desc(i), Mh);
    }
    for (int i = 0; i < SLOT; i++)
        Buf(2 * COUNT)[i] = (unsigned char)(i ^ 0x5A);
    VIP_VI_CALLBACK cb = OnRecv;
    VipRecvNotify(vi, NULL, cb);
    VIP_NET_ADDRESS *local = Address(NULL, disc);
    unsigned char rb[sizeof(VIP_NET_ADDRESS) + 16 + 64];
    VIP_VI_ATTRIBUTES ra;
    VIP_CONN_HANDLE conn;
    VIP_RETURN rc;
    int t = 0;
    do
        rc = VipConnectWait(Nic, local, 2000, (VIP_NET_ADDRESS *)rb, &ra, &conn);
    while (rc == VIP_TIMEOUT && ++t < 15);
    free(local);
    if (rc != VIP_SUCCESS || (rc = VipConnectAccept(conn, vi)) != VIP_SUCCESS)
        Fail("accept", rc);
    /* where to read from: a Send of its own, before any echo */
    VIP_UINT64 where = (VIP_UINT64)(uintptr_t)Buf(2 * COUNT);
    memcpy(Buf(2 * COUNT - 1), &where, 8);
    memcpy(Buf(2 * COUNT - 1) + 8, &Mh, 4);
    Fill(Desc(2 * COUNT), VIP_CONTROL_OP_SENDRECV, Buf(2 * COUNT - 1), 12);
    VipPostSend(vi, Desc(2 * COUNT), Mh);
    /* the client disconnects after its read: our VI then leaves Connected */
    VIP_VI_STATE st = VIP_STATE_CONNECTED;
    for (int waited = 0; waited < 1000 && st == VIP_STATE_CONNECTED; waited++) {
        VIP_DESCRIPTOR *d;
        VipSendWait(vi, 20, &d);
        VipQueryVi(vi, &st, NULL, NULL, NULL);
    }
    if (Notified != COUNT) {
        fprintf(stderr, "compat_giganet server: %d of %d messages notified\n", Notified, COUNT);
        return 1;
    }
    printf("server: echoed %d messages\n", COUNT);
    VipDisconnect(vi);
    VipDestroyVi(vi);
    VipDeregisterMem(Nic, Mem, Mh);
    free(Mem);
    VipCloseNic(Nic);
    return 0;
}

static int Client(const char *host, const char *disc)
{
    VIP_VI_HANDLE vi = CreateVi();
    Fill(Desc(2 * COUNT), VIP_CONTROL_OP_SENDRECV, Buf(2 * COUNT - 1), 64);
    VipPostRecv(vi, Desc(2 * COUNT), Mh); /* the server's region */
    for (int i = 0; i < COUNT; i++) {
        Fill(Desc(COUNT + i), VIP_CONTROL_OP_SENDRECV, Buf(COUNT + i), SLOT);
        VipPostRecv(vi, Desc(COUNT + i), Mh);
    }
    VIP_NET_ADDRESS *local = Address(NULL, "clan-client"), *remote = Address(host, disc);
    VIP_VI_ATTRIBUTES ra;
    VIP_RETURN rc;
    int t = 0;
    do
        rc = VipConnectRequest(vi, local, remote, 2000, &ra);
    while ((rc == VIP_NO_MATCH || rc == VIP_TIMEOUT) && ++t < 15);
    free(local);
    free(remote);
    if (rc != VIP_SUCCESS)
        Fail("VipConnectRequest", rc);
    VIP_DESCRIPTOR *d;
    if ((rc = VipRecvWait(vi, 10000, &d)) != VIP_SUCCESS || d->Control.Length != 12)
        Fail("region", rc);
    VIP_UINT64 where;
    VIP_MEM_HANDLE rh;
    memcpy(&where, Buf(2 * COUNT - 1), 8);
    memcpy(&rh, Buf(2 * COUNT - 1) + 8, 4);
    for (int i = 0; i < COUNT; i++) {
        VIP_UINT32 len = (VIP_UINT32)(i + 1) * 100;
        for (VIP_UINT32 k = 0; k < len; k++)
            Buf(i)[k] = (unsigned char)(i + k);
        Fill(Desc(i), VIP_CONTROL_OP_SENDRECV | VIP_CONTROL_IMMEDIATE, Buf(i), len);
        Desc(i)->Control.ImmediateData = (VIP_UINT32)i;
        if ((rc = VipPostSend(vi, Desc(i), Mh)) != VIP_SUCCESS)
            Fail("VipPostSend", rc);
    }
    for (int i = 0; i < COUNT; i++) {
        if ((rc = VipSendWait(vi, 10000, &d)) != VIP_SUCCESS || (d->Control.Status & VIP_STATUS_ERROR_MASK))
            Fail("VipSendWait", rc);
        if ((rc = VipRecvWait(vi, 10000, &d)) != VIP_SUCCESS)
            Fail("VipRecvWait", rc);
        VIP_UINT32 len = (VIP_UINT32)(i + 1) * 100;
        if (d->Control.ImmediateData != (VIP_UINT32)i || d->Control.Length != len ||
            memcmp(d->Data[0].Data.Address, Buf(i), len) != 0)
            Fail("echo", VIP_DESCRIPTOR_ERROR);
    }
    /* RDMA Read, cLAN style: Data[0] is the remote address segment */
    VIP_DESCRIPTOR *r = Desc(2 * COUNT + 1);
    memset(r, 0, sizeof *r);
    r->Control.Control = VIP_CONTROL_OP_RDMAREAD;
    r->Control.SegCount = 2;
    r->Control.Length = SLOT;
    r->Data[0].Data.AddressBits = where;
    r->Data[0].Handle = rh;
    r->Data[1].Data.Address = Buf(2 * COUNT);
    r->Data[1].Handle = Mh;
    r->Data[1].Length = SLOT;
    if ((rc = VipPostSend(vi, r, Mh)) != VIP_SUCCESS || (rc = VipSendWait(vi, 10000, &d)) != VIP_SUCCESS)
        Fail("RDMA Read", rc);
    if (d->Control.Status & VIP_STATUS_ERROR_MASK)
        Fail("RDMA Read status", VIP_DESCRIPTOR_ERROR);
    for (int i = 0; i < SLOT; i++)
        if (Buf(2 * COUNT)[i] != (unsigned char)(i ^ 0x5A))
            Fail("read bytes", VIP_DESCRIPTOR_ERROR);
    printf("client: %d echoes and a %d-byte RDMA Read checked\n", COUNT, SLOT);
    VipDisconnect(vi);
    VipDestroyVi(vi);
    VipDeregisterMem(Nic, Mem, Mh);
    free(Mem);
    VipCloseNic(Nic);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 3 && !strcmp(argv[1], "server")) {
        Role = "server";
        Setup();
        return Server(argv[2]);
    }
    if (argc >= 4 && !strcmp(argv[1], "client")) {
        Role = "client";
        Setup();
        return Client(argv[2], argv[3]);
    }
    fprintf(stderr, "usage: compat_giganet server DISC | client HOST DISC\n");
    return 2;
}
