/*
 * M-VIA-style ranks (issue 17): every rank opens "the" NIC of its host by
 * device name, resolves the others' hosts through the name service, and
 * connects to every other rank: to lower ranks with VipConnectRequest,
 * calling again on VIP_NO_MATCH or VIP_TIMEOUT as the message layers of the
 * time did, from higher ranks with VipConnectWait on its own discriminator
 * "rank<N>". Ranks start in any order, several on one host. Then each rank
 * sends every other one a message naming both, and checks what it gets.
 *
 *   compat_ranks RANK HOST0 HOST1 ... (one host per rank)
 *
 * Exit 0 when every message arrived intact; a line on stderr and exit 1
 * otherwise. Written in the Developer's Guide's spelling (CS, DS[]).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vipl.h>

#define MAX_RANKS 16
#define MSG_LEN 64
#define TRY_MS 2000  /* one VipConnectRequest/VipConnectWait */
#define TRIES 15     /* ... called this often before the rank gives up */

static VIP_NIC_HANDLE nic;
static VIP_PROTECTION_HANDLE ptag;
static VIP_VI_HANDLE vis[MAX_RANKS];
static int me, nranks;

/* A peer that has all its messages leaves: its connection is lost to us,
 * after its message arrived (a lost message shows as a flushed receive). */
static void on_error(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *e)
{
    (void)ctx;
    if (e->ErrorCode == VIP_ERROR_CONN_LOST)
        return;
    fprintf(stderr, "rank %d: asynchronous error %d\n", me, (int)e->ErrorCode);
    exit(1);
}

static int fail(const char *what, VIP_RETURN rc)
{
    fprintf(stderr, "rank %d: %s: %s\n", me, what, ViplReturnName(rc));
    exit(1);
}

static VIP_NET_ADDRESS *address_of(const char *host, int rank)
{
    VIP_NET_ADDRESS *a = calloc(1, sizeof *a + 16 + 16);
    char disc[16];
    snprintf(disc, sizeof disc, "rank%d", rank);
    VIP_RETURN rc = VipNSGetHostByName(nic, (VIP_CHAR *)host, a, 0);
    if (rc != VIP_SUCCESS)
        fail("VipNSGetHostByName", rc);
    a->DiscriminatorLen = (VIP_UINT16)strlen(disc);
    memcpy(a->HostAddress + a->HostAddressLen, disc, a->DiscriminatorLen);
    return a;
}

static VIP_VI_HANDLE new_vi(void)
{
    VIP_VI_ATTRIBUTES at;
    memset(&at, 0, sizeof at);
    at.ReliabilityLevel = VIP_SERVICE_RELIABLE_DELIVERY;
    at.MaxTransferSize = 4096;
    at.QoS = NULL;
    at.Ptag = ptag;
    VIP_VI_HANDLE vi;
    VIP_RETURN rc = VipCreateVi(nic, &at, NULL, NULL, &vi);
    if (rc != VIP_SUCCESS)
        fail("VipCreateVi", rc);
    return vi;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc - 2 > MAX_RANKS) {
        fprintf(stderr, "usage: compat_ranks RANK HOST0 HOST1 ...\n");
        return 2;
    }
    me = atoi(argv[1]);
    nranks = argc - 2;
    if (me < 0 || me >= nranks)
        return 2;
    VIP_RETURN rc = VipOpenNic("/dev/via_eth0", &nic);
    if (rc != VIP_SUCCESS)
        fail("VipOpenNic", rc);
    VipNSInit(nic, NULL);
    VipErrorCallback(nic, NULL, on_error);
    if ((rc = VipCreatePtag(nic, &ptag)) != VIP_SUCCESS)
        fail("VipCreatePtag", rc);

    /* one descriptor and one buffer per peer and direction */
    size_t per = sizeof(VIP_DESCRIPTOR) + MSG_LEN;
    size_t len = 2 * MAX_RANKS * per + VIP_DESCRIPTOR_ALIGNMENT;
    unsigned char *mem = calloc(1, len);
    unsigned char *base = mem + (VIP_DESCRIPTOR_ALIGNMENT - (size_t)mem % VIP_DESCRIPTOR_ALIGNMENT) % VIP_DESCRIPTOR_ALIGNMENT;
    VIP_MEM_ATTRIBUTES ma = {.Ptag = ptag, .EnableRdmaWrite = VIP_FALSE, .EnableRdmaRead = VIP_FALSE};
    VIP_MEM_HANDLE mh;
    if ((rc = VipRegisterMem(nic, base, 2 * MAX_RANKS * per, &ma, &mh)) != VIP_SUCCESS)
        fail("VipRegisterMem", rc);

    VIP_NET_ADDRESS *local = address_of(argv[2 + me], me);
    for (int peer = 0; peer < nranks; peer++) {
        if (peer == me)
            continue;
        vis[peer] = new_vi();
        /* a receive for the peer's message, posted before connecting */
        VIP_DESCRIPTOR *rd = (VIP_DESCRIPTOR *)(base + (size_t)(2 * peer) * per);
        memset(rd, 0, sizeof *rd);
        rd->CS.SegCount = 1;
        rd->CS.Length = MSG_LEN;
        rd->DS[0].Local.Data.Address = (unsigned char *)rd + sizeof *rd;
        rd->DS[0].Local.Handle = mh;
        rd->DS[0].Local.Length = MSG_LEN;
        if ((rc = VipPostRecv(vis[peer], rd, mh)) != VIP_SUCCESS)
            fail("VipPostRecv", rc);
    }
    /* lower ranks: request, calling again while they are not there yet */
    for (int peer = 0; peer < me; peer++) {
        VIP_NET_ADDRESS *remote = address_of(argv[2 + peer], peer);
        VIP_VI_ATTRIBUTES ra;
        int t = 0;
        do
            rc = VipConnectRequest(vis[peer], local, remote, TRY_MS, &ra);
        while ((rc == VIP_NO_MATCH || rc == VIP_TIMEOUT) && ++t < TRIES);
        if (rc != VIP_SUCCESS)
            fail("VipConnectRequest", rc);
        free(remote);
    }
    /* higher ranks: wait on our discriminator; the caller names itself */
    for (int got = 0; got < nranks - 1 - me;) {
        unsigned char rbuf[sizeof(VIP_NET_ADDRESS) + 16 + 64];
        VIP_NET_ADDRESS *from = (VIP_NET_ADDRESS *)rbuf;
        VIP_VI_ATTRIBUTES ra;
        VIP_CONN_HANDLE conn;
        int t = 0;
        do
            rc = VipConnectWait(nic, local, TRY_MS, from, &ra, &conn);
        while (rc == VIP_TIMEOUT && ++t < TRIES);
        if (rc != VIP_SUCCESS)
            fail("VipConnectWait", rc);
        char disc[17] = {0};
        memcpy(disc, from->HostAddress + from->HostAddressLen, from->DiscriminatorLen < 16 ? from->DiscriminatorLen : 16);
        int peer = -1;
        if (sscanf(disc, "rank%d", &peer) != 1 || peer <= me || peer >= nranks) {
            VipConnectReject(conn);
            fprintf(stderr, "rank %d: unexpected caller '%s'\n", me, disc);
            return 1;
        }
        if ((rc = VipConnectAccept(conn, vis[peer])) != VIP_SUCCESS)
            fail("VipConnectAccept", rc);
        got++;
    }
    /* a message to every peer, and one from each */
    for (int peer = 0; peer < nranks; peer++) {
        if (peer == me)
            continue;
        VIP_DESCRIPTOR *sd = (VIP_DESCRIPTOR *)(base + (size_t)(2 * peer + 1) * per);
        memset(sd, 0, sizeof *sd);
        char *text = (char *)sd + sizeof *sd;
        snprintf(text, MSG_LEN, "from rank %d to rank %d", me, peer);
        sd->CS.Control = VIP_CONTROL_OP_SENDRECV | VIP_CONTROL_IMMEDIATE;
        sd->CS.ImmediateData = (VIP_UINT32)me;
        sd->CS.SegCount = 1;
        sd->CS.Length = MSG_LEN;
        sd->DS[0].Local.Data.Address = text;
        sd->DS[0].Local.Handle = mh;
        sd->DS[0].Local.Length = MSG_LEN;
        if ((rc = VipPostSend(vis[peer], sd, mh)) != VIP_SUCCESS)
            fail("VipPostSend", rc);
        VIP_DESCRIPTOR *done;
        if ((rc = VipSendWait(vis[peer], 10000, &done)) != VIP_SUCCESS)
            fail("VipSendWait", rc);
        if (done != sd || (done->CS.Status & VIP_STATUS_ERROR_MASK))
            fail("send status", VIP_DESCRIPTOR_ERROR);
    }
    for (int peer = 0; peer < nranks; peer++) {
        if (peer == me)
            continue;
        VIP_DESCRIPTOR *done;
        if ((rc = VipRecvWait(vis[peer], 10000, &done)) != VIP_SUCCESS)
            fail("VipRecvWait", rc);
        char want[MSG_LEN];
        snprintf(want, sizeof want, "from rank %d to rank %d", peer, me);
        const char *got = (const char *)done->DS[0].Local.Data.Address;
        if ((done->CS.Status & VIP_STATUS_ERROR_MASK) || done->CS.Length != MSG_LEN ||
            !(done->CS.Status & VIP_STATUS_IMMEDIATE) || done->CS.ImmediateData != (VIP_UINT32)peer ||
            strcmp(got, want) != 0) {
            fprintf(stderr, "rank %d: from rank %d got '%.*s' (status 0x%x)\n", me, peer, MSG_LEN, got,
                    (unsigned)done->CS.Status);
            return 1;
        }
    }
    for (int peer = 0; peer < nranks; peer++)
        if (peer != me) {
            VipDisconnect(vis[peer]);
            VipDestroyVi(vis[peer]);
        }
    free(local);
    VipDeregisterMem(nic, base, mh);
    free(mem);
    VipDestroyPtag(nic, ptag);
    VipCloseNic(nic);
    printf("rank %d of %d: %d messages exchanged\n", me, nranks, 2 * (nranks - 1));
    return 0;
}
