/*
 * A program whose own globals are named like common helpers (issue 17):
 * conn_free, handle_add, now_ms, nic_wait, random_u32, vi_pump, crc32,
 * log_error, ... as the message layers of the time had them. Linked with
 * the shared libvipl, whose own helpers of those names must neither be
 * replaced by these nor replace them. Two NICs of this process connect
 * peer-to-peer (the spec's CqHandle spelling in the error handler) and
 * move a Send; the program checks the data and that none of its helpers
 * was called by the library.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vipl.h>

/* The program's helpers: each counts its calls. */
int helper_calls;
int handle_add(void *p, int t) { (void)p, (void)t; return ++helper_calls; }
void conn_free(void *c) { (void)c; helper_calls++; }
long long now_ms(void) { helper_calls++; return -1; }
int nic_wait(void *n, long long d) { (void)n, (void)d; return ++helper_calls; }
unsigned random_u32(void) { helper_calls++; return 4; }
void vi_pump(void *vi) { (void)vi; helper_calls++; }
unsigned crc32(unsigned c, const void *p, unsigned long n) { (void)p, (void)n; helper_calls++; return c; }
void log_error(const char *m) { (void)m; helper_calls++; }
int handle_valid = 7;       /* a variable where the library has a function */
char conn_refuse[16] = "mine"; /* likewise */

static void on_error(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *e)
{
    (void)ctx;
    fprintf(stderr, "error %d on CQ %p\n", (int)e->ErrorCode, e->CqHandle); /* the spec's spelling */
}

struct side {
    VIP_NIC_HANDLE nic;
    VIP_PROTECTION_HANDLE ptag;
    VIP_MEM_HANDLE mh;
    unsigned char *mem;
    VIP_VI_HANDLE vi;
    VIP_UINT16 port;
};

static int fail(const char *what, VIP_RETURN rc)
{
    fprintf(stderr, "compat_helpers: %s: %s\n", what, ViplReturnName(rc));
    exit(1);
}

static void open_side(struct side *s)
{
    VIP_RETURN rc = VipOpenNic("127.0.0.1:0", &s->nic);
    if (rc != VIP_SUCCESS)
        fail("VipOpenNic", rc);
    VipErrorCallback(s->nic, NULL, on_error);
    ViplNicListenPort(s->nic, &s->port);
    VipCreatePtag(s->nic, &s->ptag);
    void *p;
    if (posix_memalign(&p, VIP_DESCRIPTOR_ALIGNMENT, 8192))
        exit(1);
    s->mem = p;
    memset(s->mem, 0, 8192);
    VIP_MEM_ATTRIBUTES ma = {s->ptag, VIP_FALSE, VIP_FALSE};
    if ((rc = VipRegisterMem(s->nic, s->mem, 8192, &ma, &s->mh)) != VIP_SUCCESS)
        fail("VipRegisterMem", rc);
    VIP_VI_ATTRIBUTES at = {VIP_SERVICE_RELIABLE_DELIVERY, 4096, NULL, s->ptag, VIP_FALSE, VIP_FALSE};
    if ((rc = VipCreateVi(s->nic, &at, NULL, NULL, &s->vi)) != VIP_SUCCESS)
        fail("VipCreateVi", rc);
}

static VIP_NET_ADDRESS *addr(const char *disc)
{
    VIP_NET_ADDRESS *a = calloc(1, sizeof *a + 4 + 32);
    a->HostAddressLen = 4;
    memcpy(a->HostAddress, "\x7f\x00\x00\x01", 4);
    a->DiscriminatorLen = (VIP_UINT16)strlen(disc);
    memcpy(a->HostAddress + 4, disc, a->DiscriminatorLen);
    return a;
}

int main(void)
{
    struct side a, b;
    open_side(&a);
    open_side(&b);
    ViplNicSetRemotePort(a.nic, b.port);
    ViplNicSetRemotePort(b.nic, a.port);
    VIP_DESCRIPTOR *rd = (VIP_DESCRIPTOR *)b.mem;
    rd->CS.SegCount = 1;
    rd->CS.Length = 4096;
    rd->DS[0].Local.Data.Address = b.mem + 4096;
    rd->DS[0].Local.Handle = b.mh;
    rd->DS[0].Local.Length = 4096;
    VipPostRecv(b.vi, rd, b.mh);
    VIP_NET_ADDRESS *la = addr("helpers-a"), *lb = addr("helpers-b");
    VIP_RETURN rc;
    if ((rc = VipConnectPeerRequest(a.vi, la, lb, 5000)) != VIP_SUCCESS ||
        (rc = VipConnectPeerRequest(b.vi, lb, la, 5000)) != VIP_SUCCESS)
        fail("VipConnectPeerRequest", rc);
    VIP_VI_ATTRIBUTES ra;
    if ((rc = VipConnectPeerWait(a.vi, &ra)) != VIP_SUCCESS || (rc = VipConnectPeerWait(b.vi, &ra)) != VIP_SUCCESS)
        fail("VipConnectPeerWait", rc);
    const char text[] = "helpers of the same name stay apart";
    VIP_DESCRIPTOR *sd = (VIP_DESCRIPTOR *)a.mem;
    memcpy(a.mem + 4096, text, sizeof text);
    sd->CS.Control = VIP_CONTROL_OP_SENDRECV;
    sd->CS.SegCount = 1;
    sd->CS.Length = sizeof text;
    sd->DS[0].Local.Data.Address = a.mem + 4096;
    sd->DS[0].Local.Handle = a.mh;
    sd->DS[0].Local.Length = sizeof text;
    VIP_DESCRIPTOR *d;
    if ((rc = VipPostSend(a.vi, sd, a.mh)) != VIP_SUCCESS || (rc = VipSendWait(a.vi, 5000, &d)) != VIP_SUCCESS)
        fail("send", rc);
    if ((rc = VipRecvWait(b.vi, 5000, &d)) != VIP_SUCCESS)
        fail("VipRecvWait", rc);
    if (d->CS.Length != sizeof text || memcmp(b.mem + 4096, text, sizeof text) != 0)
        fail("received bytes", VIP_DESCRIPTOR_ERROR);
    VipDisconnect(a.vi);
    VipDisconnect(b.vi);
    VipDestroyVi(a.vi);
    VipDestroyVi(b.vi);
    VipDeregisterMem(a.nic, a.mem, a.mh);
    VipDeregisterMem(b.nic, b.mem, b.mh);
    VipCloseNic(a.nic);
    VipCloseNic(b.nic);
    free(a.mem);
    free(b.mem);
    free(la);
    free(lb);
    if (helper_calls != 0 || handle_valid != 7 || strcmp(conn_refuse, "mine") != 0) {
        fprintf(stderr, "compat_helpers: the library used the program's helpers (%d calls)\n", helper_calls);
        return 1;
    }
    printf("compat_helpers: '%s' received; the program's helpers untouched\n", text);
    return 0;
}
