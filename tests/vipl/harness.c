#include "harness.h"
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

static void count_errors(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *ed)
{
    struct h_nic *n = ctx;
    if ((unsigned)ed->ErrorCode < 16)
        __atomic_add_fetch(&n->async_errors[ed->ErrorCode], 1, __ATOMIC_SEQ_CST);
}

void h_nic_open(struct h_nic *n, const char *opts)
{
    memset(n, 0, sizeof *n);
    char dev[200];
    snprintf(dev, sizeof dev, "127.0.0.1:0%s%s", opts && *opts ? "," : "", opts ? opts : "");
    assert_int_equal(VipOpenNic(dev, &n->nic), VIP_SUCCESS);
    assert_int_equal(ViplNicListenPort(n->nic, &n->port), VIP_SUCCESS);
    assert_true(n->port > 0);
    assert_int_equal(VipErrorCallback(n->nic, n, count_errors), VIP_SUCCESS);
    assert_int_equal(VipCreatePtag(n->nic, &n->ptag), VIP_SUCCESS);
    n->descs = aligned_alloc(64, 64 * 64);
    n->data = aligned_alloc(64, H_DATA_LEN);
    memset(n->descs, 0, 64 * 64);
    memset(n->data, 0, H_DATA_LEN);
    VIP_MEM_ATTRIBUTES ma = {.Ptag = n->ptag};
    assert_int_equal(VipRegisterMem(n->nic, n->descs, 64 * 64, &ma, &n->dmh), VIP_SUCCESS);
    ma.EnableRdmaWrite = ma.EnableRdmaRead = VIP_TRUE;
    assert_int_equal(VipRegisterMem(n->nic, n->data, H_DATA_LEN, &ma, &n->bmh), VIP_SUCCESS);
}

void h_nic_close(struct h_nic *n)
{
    if (!n->nic)
        return;
    assert_int_equal(VipCloseNic(n->nic), VIP_SUCCESS);
    free(n->descs);
    free(n->data);
    n->nic = NULL;
}

VIP_DESCRIPTOR *h_desc(struct h_nic *n, unsigned i) { return (VIP_DESCRIPTOR *)(n->descs + 64 * i); }

VIP_VI_ATTRIBUTES h_attrs(struct h_nic *n, VIP_RELIABILITY_LEVEL level)
{
    VIP_VI_ATTRIBUTES a = {.ReliabilityLevel = level, .MaxTransferSize = H_DATA_LEN, .Ptag = n->ptag,
                           .EnableRdmaWrite = VIP_TRUE,
                           .EnableRdmaRead = (level & ~VIP_SERVICE_DFC) != VIP_SERVICE_UNRELIABLE};
    return a;
}

VIP_VI_HANDLE h_vi_create(struct h_nic *n, VIP_RELIABILITY_LEVEL level)
{
    VIP_VI_HANDLE vi;
    VIP_VI_ATTRIBUTES a = h_attrs(n, level);
    assert_int_equal(VipCreateVi(n->nic, &a, NULL, NULL, &vi), VIP_SUCCESS);
    return vi;
}

VIP_NET_ADDRESS *h_addr(uint16_t port, const char *disc)
{
    (void)port;
    size_t dl = strlen(disc);
    VIP_NET_ADDRESS *a = calloc(1, sizeof *a + 4 + dl);
    a->HostAddressLen = 4;
    a->DiscriminatorLen = (VIP_UINT16)dl;
    static const uint8_t lo[4] = {127, 0, 0, 1};
    memcpy(a->HostAddress, lo, 4);
    memcpy(a->HostAddress + 4, disc, dl);
    return a;
}

VIP_RETURN h_connect(struct h_nic *a, VIP_VI_HANDLE vi, uint16_t port, const char *disc, unsigned timeout_ms)
{
    assert_int_equal(ViplNicSetRemotePort(a->nic, port), VIP_SUCCESS);
    VIP_NET_ADDRESS *local = h_addr(0, "client");
    VIP_NET_ADDRESS *remote = h_addr(port, disc);
    VIP_VI_ATTRIBUTES ra;
    VIP_RETURN rc = VipConnectRequest(vi, local, remote, timeout_ms, &ra);
    free(local);
    free(remote);
    return rc;
}

struct acceptor {
    struct h_pair *p;
    VIP_RETURN rc;
};

static void *accept_thread(void *arg)
{
    struct acceptor *ac = arg;
    uint8_t buf[sizeof(VIP_NET_ADDRESS) + 16 + 64];
    VIP_NET_ADDRESS *local = h_addr(0, "srv"), *remote = (VIP_NET_ADDRESS *)buf;
    VIP_VI_ATTRIBUTES ra;
    VIP_CONN_HANDLE conn;
    ac->rc = VipConnectWait(ac->p->b.nic, local, 5000, remote, &ra, &conn);
    if (ac->rc == VIP_SUCCESS)
        ac->rc = VipConnectAccept(conn, ac->p->vb);
    free(local);
    return NULL;
}

void h_pair_open(struct h_pair *p, const char *opts_a, const char *opts_b, VIP_RELIABILITY_LEVEL level,
                 unsigned b_recvs)
{
    h_pair_open_enables(p, opts_a, opts_b, level, b_recvs, true, true);
}

void h_pair_open_enables(struct h_pair *p, const char *opts_a, const char *opts_b, VIP_RELIABILITY_LEVEL level,
                         unsigned b_recvs, bool b_rdma_write, bool b_rdma_read)
{
    memset(p, 0, sizeof *p);
    h_nic_open(&p->a, opts_a);
    h_nic_open(&p->b, opts_b);
    VIP_VI_ATTRIBUTES aa = h_attrs(&p->a, level), ab = h_attrs(&p->b, level & ~VIP_SERVICE_DFC);
    ab.EnableRdmaWrite = ab.EnableRdmaWrite && b_rdma_write;
    ab.EnableRdmaRead = ab.EnableRdmaRead && b_rdma_read;
    assert_int_equal(VipCreateVi(p->a.nic, &aa, NULL, NULL, &p->va), VIP_SUCCESS);
    assert_int_equal(VipCreateVi(p->b.nic, &ab, NULL, NULL, &p->vb), VIP_SUCCESS);
    for (unsigned i = 0; i < b_recvs; i++)
        h_post_recv(&p->b, p->vb, i, i * 65536u, 65536);
    struct acceptor ac = {.p = p};
    pthread_t t;
    pthread_create(&t, NULL, accept_thread, &ac);
    VIP_RETURN rc = h_connect(&p->a, p->va, p->b.port, "srv", 5000);
    pthread_join(t, NULL);
    assert_int_equal(rc, VIP_SUCCESS);
    assert_int_equal(ac.rc, VIP_SUCCESS);
}

void h_vi_destroy(VIP_VI_HANDLE vi)
{
    VIP_DESCRIPTOR *d;
    assert_int_equal(VipDisconnect(vi), VIP_SUCCESS);
    while (VipSendDone(vi, &d) == VIP_SUCCESS || VipRecvDone(vi, &d) == VIP_SUCCESS)
        ;
    assert_int_equal(VipDestroyVi(vi), VIP_SUCCESS);
}

void h_pair_close(struct h_pair *p)
{
    h_vi_destroy(p->va);
    h_vi_destroy(p->vb);
    h_nic_close(&p->a);
    h_nic_close(&p->b);
}

void h_post_recv(struct h_nic *n, VIP_VI_HANDLE vi, unsigned slot, uint32_t off, uint32_t len)
{
    VIP_DESCRIPTOR *d = h_desc(n, slot);
    memset(d, 0, 64);
    d->CS.SegCount = 1;
    d->DS[0].Local.Data.Address = n->data + off;
    d->DS[0].Local.Handle = n->bmh;
    d->DS[0].Local.Length = len;
    assert_int_equal(VipPostRecv(vi, d, n->dmh), VIP_SUCCESS);
}

void h_post_send(struct h_nic *n, VIP_VI_HANDLE vi, unsigned slot, unsigned op, uint32_t off, uint32_t len,
                 int imm, uint32_t immv, uint64_t raddr, VIP_MEM_HANDLE rh)
{
    VIP_DESCRIPTOR *d = h_desc(n, slot);
    memset(d, 0, 64);
    d->CS.Control = (VIP_UINT16)(op | (imm ? VIP_CONTROL_IMMEDIATE : 0));
    d->CS.ImmediateData = immv;
    d->CS.Length = len;
    VIP_DATA_SEGMENT *l = &d->DS[0].Local;
    d->CS.SegCount = 1;
    if (op != VIP_CONTROL_OP_SENDRECV) {
        d->CS.SegCount = 2;
        d->DS[0].Remote.Data.AddressBits = raddr;
        d->DS[0].Remote.Handle = rh;
        l = &d->DS[1].Local;
    }
    l->Data.Address = n->data + off;
    l->Handle = n->bmh;
    l->Length = len;
    assert_int_equal(VipPostSend(vi, d, n->dmh), VIP_SUCCESS);
}

static void *connect_thread(void *arg)
{
    struct h_connector *c = arg;
    c->rc = h_connect(c->n, c->vi, c->port, c->disc, c->timeout_ms);
    return NULL;
}

void h_connect_start(struct h_connector *c)
{
    assert_int_equal(pthread_create(&c->thread, NULL, connect_thread, c), 0);
}

VIP_RETURN h_connect_join(struct h_connector *c)
{
    assert_int_equal(pthread_join(c->thread, NULL), 0);
    return c->rc;
}

VIP_DESCRIPTOR *h_wait_send(VIP_VI_HANDLE vi)
{
    VIP_DESCRIPTOR *d = NULL;
    assert_int_equal(VipSendWait(vi, 5000, &d), VIP_SUCCESS);
    return d;
}

VIP_DESCRIPTOR *h_wait_recv(VIP_VI_HANDLE vi)
{
    VIP_DESCRIPTOR *d = NULL;
    assert_int_equal(VipRecvWait(vi, 5000, &d), VIP_SUCCESS);
    return d;
}

VIP_VI_STATE h_vi_state(VIP_VI_HANDLE vi)
{
    VIP_VI_STATE st;
    assert_int_equal(VipQueryVi(vi, &st, NULL, NULL, NULL), VIP_SUCCESS);
    return st;
}
