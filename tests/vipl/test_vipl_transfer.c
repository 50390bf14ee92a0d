/* Two providers in one process over 127.0.0.1: every transfer type, the
 * reliability levels, CRC, descriptor flow control, RDMA protection and
 * disconnects, asserted through descriptor status bits and statistics. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "harness.h"
#include "vipl_fault.h"

#define RD VIP_SERVICE_RELIABLE_DELIVERY
#define RR VIP_SERVICE_RELIABLE_RECEPTION
#define UN VIP_SERVICE_UNRELIABLE

static void fill(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 7 + seed);
}

static void send_recv_at(VIP_RELIABILITY_LEVEL level, const char *opts)
{
    struct h_pair p;
    h_pair_open(&p, opts, opts, level, 4);
    VIP_VI_ATTRIBUTES q;
    assert_int_equal(VipQueryVi(p.va, NULL, &q, NULL, NULL), VIP_SUCCESS);
    assert_int_equal(q.MaxTransferSize, H_DATA_LEN); /* A2: the lesser of both */
    /* a small send with immediate data */
    fill(p.a.data, 100, 1);
    h_post_send(&p.a, p.va, 10, VIP_CONTROL_OP_SENDRECV, 0, 100, 1, 0xCAFEBABE, 0, 0);
    VIP_DESCRIPTOR *d = h_wait_send(p.va);
    assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_SEND);
    d = h_wait_recv(p.vb);
    assert_ptr_equal(d, h_desc(&p.b, 0));
    assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE | VIP_STATUS_IMMEDIATE);
    assert_int_equal(d->CS.Length, 100);
    assert_int_equal(d->CS.ImmediateData, 0xCAFEBABE);
    assert_memory_equal(p.b.data, p.a.data, 100);
    /* a 60000-byte send without immediate data */
    fill(p.a.data + 1000, 60000, 2);
    h_post_send(&p.a, p.va, 11, VIP_CONTROL_OP_SENDRECV, 1000, 60000, 0, 0, 0, 0);
    h_wait_send(p.va);
    d = h_wait_recv(p.vb);
    assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE);
    assert_int_equal(d->CS.Length, 60000);
    assert_memory_equal(p.b.data + 65536, p.a.data + 1000, 60000);
    h_pair_close(&p);
}

static void test_send_recv_reliable_delivery(void **s) { (void)s; send_recv_at(RD, NULL); }
static void test_send_recv_reliable_reception(void **s) { (void)s; send_recv_at(RR, NULL); }
static void test_send_recv_unreliable(void **s) { (void)s; send_recv_at(UN, "crc=off"); }

/* A gather of three data segments into a scatter of two, several VI segments. */
static void test_multi_segment_descriptors(void **state)
{
    (void)state;
    struct h_pair p;
    h_pair_open(&p, NULL, NULL, RD, 0);
    uint32_t lens[3] = {70000, 5, 130000}, total = 200005;
    fill(p.a.data, total, 3);
    /* receive descriptor: two segments 100000 + 150000 at offsets 300000/600000 */
    VIP_DESCRIPTOR *r = h_desc(&p.b, 0);
    memset(r, 0, 64 * 2);
    r->CS.SegCount = 2;
    VIP_DATA_SEGMENT *rs = &r->DS[0].Local;
    rs[0] = (VIP_DATA_SEGMENT){.Data.Address = p.b.data + 300000, .Handle = p.b.bmh, .Length = 100000};
    rs[1] = (VIP_DATA_SEGMENT){.Data.Address = p.b.data + 600000, .Handle = p.b.bmh, .Length = 150000};
    assert_int_equal(VipPostRecv(p.vb, r, p.b.dmh), VIP_SUCCESS);
    /* send descriptor with 3 data segments spans 2 descriptor slots */
    VIP_DESCRIPTOR *d = h_desc(&p.a, 2);
    memset(d, 0, 128);
    d->CS.SegCount = 3;
    VIP_DATA_SEGMENT *ds = (VIP_DATA_SEGMENT *)((char *)d + sizeof(VIP_CONTROL_SEGMENT));
    uint32_t off = 0;
    for (int i = 0; i < 3; i++) {
        ds[i] = (VIP_DATA_SEGMENT){.Data.Address = p.a.data + off, .Handle = p.a.bmh, .Length = lens[i]};
        off += lens[i];
    }
    assert_int_equal(VipPostSend(p.va, d, p.a.dmh), VIP_SUCCESS);
    assert_int_equal(h_wait_send(p.va)->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_SEND);
    VIP_DESCRIPTOR *got = h_wait_recv(p.vb);
    assert_int_equal(got->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE);
    assert_int_equal(got->CS.Length, total);
    assert_memory_equal(p.b.data + 300000, p.a.data, 100000);
    assert_memory_equal(p.b.data + 600000, p.a.data + 100000, total - 100000);
    VIPL_STATISTICS st;
    assert_int_equal(VipQuerySystemManagementInfo(p.b.nic, VIPL_SMI_STATISTICS, &st), VIP_SUCCESS);
    assert_int_equal(st.SegmentsReceived, 1 + 4); /* ConnectRequest + 4 data segments of <= 65280 bytes */
    h_pair_close(&p);
}

static void test_message_too_large_for_receive(void **state)
{
    (void)state;
    struct h_pair p;
    h_pair_open(&p, NULL, NULL, UN, 0);
    h_post_recv(&p.b, p.vb, 0, 0, 10);
    h_post_recv(&p.b, p.vb, 1, 100, 10);
    h_post_send(&p.a, p.va, 10, VIP_CONTROL_OP_SENDRECV, 0, 11, 0, 0, 0, 0);
    h_post_send(&p.a, p.va, 11, VIP_CONTROL_OP_SENDRECV, 0, 9, 0, 0, 0, 0);
    VIP_DESCRIPTOR *d = h_wait_recv(p.vb);
    assert_int_equal(d->CS.Status & VIP_STATUS_ERROR_MASK, VIP_STATUS_LENGTH_ERROR);
    /* Unreliable carries on (VIA 2.5.1) */
    d = h_wait_recv(p.vb);
    assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE);
    assert_int_equal(d->CS.Length, 9);
    assert_int_equal(h_vi_state(p.vb), VIP_STATE_CONNECTED);
    h_pair_close(&p);
}

static void rdma_write_and_read(VIP_RELIABILITY_LEVEL level)
{
    struct h_pair p;
    h_pair_open(&p, NULL, NULL, level, 2);
    fill(p.a.data, 100000, 9);
    uint64_t target = (uint64_t)(uintptr_t)(p.b.data + 200000);
    h_post_send(&p.a, p.va, 10, VIP_CONTROL_OP_RDMAWRITE, 0, 100000, 0, 0, target, p.b.bmh);
    assert_int_equal(h_wait_send(p.va)->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RDMA_WRITE);
    /* with immediate data: consumes a receive on the target */
    h_post_send(&p.a, p.va, 11, VIP_CONTROL_OP_RDMAWRITE, 100000, 16, 1, 77, target + 100000, p.b.bmh);
    h_wait_send(p.va);
    VIP_DESCRIPTOR *d = h_wait_recv(p.vb);
    assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_REMOTE_RDMA_WRITE | VIP_STATUS_IMMEDIATE);
    assert_int_equal(d->CS.ImmediateData, 77);
    assert_memory_equal(p.b.data + 200000, p.a.data, 100000); /* written before the IDV write completed */
    assert_memory_equal(p.b.data + 300000, p.a.data + 100000, 16);
    if (level != UN) {
        /* RDMA Read back into a's buffer at 500000 */
        h_post_send(&p.a, p.va, 12, VIP_CONTROL_OP_RDMAREAD, 500000, 100000, 0, 0, target, p.b.bmh);
        d = h_wait_send(p.va);
        assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RDMA_READ);
        assert_memory_equal(p.a.data + 500000, p.a.data, 100000);
    } else {
        h_post_send(&p.a, p.va, 12, VIP_CONTROL_OP_RDMAREAD, 500000, 10, 0, 0, target, p.b.bmh);
        d = h_wait_send(p.va); /* VIA 2.5.1: no RDMA Read at Unreliable */
        assert_int_equal(d->CS.Status & VIP_STATUS_ERROR_MASK, VIP_STATUS_FORMAT_ERROR);
    }
    h_pair_close(&p);
}

static void test_rdma_rd(void **s) { (void)s; rdma_write_and_read(RD); }
static void test_rdma_rr(void **s) { (void)s; rdma_write_and_read(RR); }
static void test_rdma_unreliable(void **s) { (void)s; rdma_write_and_read(UN); }

/* Large writes with nothing coming back: the sender must keep building
 * segments whenever the socket drains, without waiting for an inbound
 * segment to wake it (the stall behind "vipl-pingpong --op write"). */
static void test_large_writes_without_answers(void **state)
{
    (void)state;
    struct h_pair p;
    h_pair_open(&p, NULL, NULL, RD, 1);
    uint64_t target = (uint64_t)(uintptr_t)p.b.data;
    for (unsigned k = 0; k < 16; k++) {
        fill(p.a.data, H_DATA_LEN, k);
        h_post_send(&p.a, p.va, 10 + (k % 2), VIP_CONTROL_OP_RDMAWRITE, 0, H_DATA_LEN, 0, 0, target, p.b.bmh);
        assert_int_equal(h_wait_send(p.va)->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RDMA_WRITE);
    }
    /* the last write is placed once a Send behind it arrives */
    h_post_send(&p.a, p.va, 12, VIP_CONTROL_OP_SENDRECV, 0, 4, 0, 0, 0, 0);
    h_wait_send(p.va);
    h_wait_recv(p.vb);
    assert_memory_equal(p.b.data + 4, p.a.data + 4, H_DATA_LEN - 4);
    h_pair_close(&p);
}

/* A13: with a read window of 1 at the target, four queued reads still
 * complete, in order; a requester exceeding the window would be a protocol
 * error at the target and break the connection. The fence bit waits. */
static void test_read_window_and_fence(void **state)
{
    (void)state;
    struct h_pair p;
    h_pair_open(&p, NULL, "window=1", RD, 1);
    fill(p.b.data, 4 * 1000, 5);
    for (unsigned i = 0; i < 4; i++)
        h_post_send(&p.a, p.va, 10 + i, VIP_CONTROL_OP_RDMAREAD, 700000 + i * 1000, 1000, 0, 0,
                    (uint64_t)(uintptr_t)(p.b.data + i * 1000), p.b.bmh);
    /* a fenced zero-length send behind the reads */
    VIP_DESCRIPTOR *f = h_desc(&p.a, 14);
    memset(f, 0, 64);
    f->CS.Control = VIP_CONTROL_QFENCE;
    f->CS.SegCount = 1;
    f->DS[0].Local.Handle = p.a.bmh;
    assert_int_equal(VipPostSend(p.va, f, p.a.dmh), VIP_SUCCESS);
    for (unsigned i = 0; i < 4; i++) {
        VIP_DESCRIPTOR *d = h_wait_send(p.va);
        assert_ptr_equal(d, h_desc(&p.a, 10 + i));
        assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RDMA_READ);
    }
    assert_int_equal(h_wait_send(p.va)->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_SEND);
    assert_int_equal(h_wait_recv(p.vb)->CS.Length, 0);
    assert_memory_equal(p.a.data + 700000, p.b.data, 4000);
    assert_int_equal(h_vi_state(p.vb), VIP_STATE_CONNECTED);
    h_pair_close(&p);
}

/* The security boundary: a write into memory not enabled for RDMA Write, or
 * outside the region, never lands; RR reports RDMA_PROT_ERROR (A7). */
static void test_rdma_protection_rr(void **state)
{
    (void)state;
    struct h_pair p;
    h_pair_open(&p, NULL, NULL, RR, 0);
    static uint8_t guarded[4096];
    VIP_MEM_ATTRIBUTES ma = {.Ptag = p.b.ptag}; /* no RDMA enables */
    VIP_MEM_HANDLE gmh;
    assert_int_equal(VipRegisterMem(p.b.nic, guarded, sizeof guarded, &ma, &gmh), VIP_SUCCESS);
    memset(p.a.data, 0xEE, 64);
    h_post_send(&p.a, p.va, 10, VIP_CONTROL_OP_RDMAWRITE, 0, 64, 0, 0, (uint64_t)(uintptr_t)guarded, gmh);
    VIP_DESCRIPTOR *d = h_wait_send(p.va);
    assert_int_equal(d->CS.Status & VIP_STATUS_ERROR_MASK, VIP_STATUS_RDMA_PROT_ERROR);
    for (size_t i = 0; i < sizeof guarded; i++)
        assert_int_equal(guarded[i], 0);
    for (int i = 0; i < 100 && h_vi_state(p.va) != VIP_STATE_ERROR; i++)
        usleep(10000);
    assert_int_equal(h_vi_state(p.va), VIP_STATE_ERROR); /* A7: the VI then enters Error */
    assert_int_equal(VipDeregisterMem(p.b.nic, guarded, gmh), VIP_SUCCESS);
    h_pair_close(&p);
}

static void test_rdma_protection_rd(void **state)
{
    (void)state;
    struct h_pair p;
    h_pair_open(&p, NULL, NULL, RD, 0);
    /* past the end of b's registered 1 MiB: refused, nothing written */
    uint64_t beyond = (uint64_t)(uintptr_t)(p.b.data + H_DATA_LEN - 8);
    h_post_send(&p.a, p.va, 10, VIP_CONTROL_OP_RDMAWRITE, 0, 64, 0, 0, beyond, p.b.bmh);
    h_wait_send(p.va); /* RD: done once written to the socket (A6) */
    for (int i = 0; i < 200 && h_vi_state(p.vb) != VIP_STATE_ERROR; i++)
        usleep(10000);
    assert_int_equal(h_vi_state(p.vb), VIP_STATE_ERROR); /* A8: the target enters Error and closes */
    for (int i = 0; i < 200 && h_vi_state(p.va) != VIP_STATE_ERROR; i++)
        usleep(10000);
    assert_int_equal(h_vi_state(p.va), VIP_STATE_ERROR);
    /* the handlers run after the state change, outside the NIC lock */
    for (int i = 0; i < 200 && (!__atomic_load_n(&p.b.async_errors[VIP_ERROR_RDMAW_PROT], __ATOMIC_SEQ_CST) ||
                                !__atomic_load_n(&p.a.async_errors[VIP_ERROR_CONN_LOST], __ATOMIC_SEQ_CST));
         i++)
        usleep(10000);
    assert_true(p.b.async_errors[VIP_ERROR_RDMAW_PROT] >= 1);
    assert_true(p.a.async_errors[VIP_ERROR_CONN_LOST] >= 1);
    for (unsigned i = H_DATA_LEN - 8; i < H_DATA_LEN; i++)
        assert_int_equal(p.b.data[i], 0);
    h_pair_close(&p);
}

/* A8: a read from memory not enabled for RDMA Read -> RDMA_PROT_ERROR. */
static void test_rdma_read_refused(void **state)
{
    (void)state;
    struct h_pair p;
    h_pair_open(&p, NULL, NULL, RD, 0);
    static uint8_t secret[256];
    memset(secret, 0x5C, sizeof secret);
    VIP_MEM_ATTRIBUTES ma = {.Ptag = p.b.ptag, .EnableRdmaWrite = VIP_TRUE};
    VIP_MEM_HANDLE smh;
    assert_int_equal(VipRegisterMem(p.b.nic, secret, sizeof secret, &ma, &smh), VIP_SUCCESS);
    memset(p.a.data, 0x11, 256);
    h_post_send(&p.a, p.va, 10, VIP_CONTROL_OP_RDMAREAD, 0, 256, 0, 0, (uint64_t)(uintptr_t)secret, smh);
    VIP_DESCRIPTOR *d = h_wait_send(p.va);
    assert_int_equal(d->CS.Status & VIP_STATUS_ERROR_MASK, VIP_STATUS_RDMA_PROT_ERROR);
    for (int i = 0; i < 256; i++)
        assert_int_not_equal(p.a.data[i], 0x5C); /* nothing of the secret arrived */
    assert_int_equal(VipDeregisterMem(p.b.nic, secret, smh), VIP_SUCCESS);
    h_pair_close(&p);
}

/* Issue 6: every way an incoming RDMA Write or Read can break the memory
 * protection rules (VIA 9.5.3): wrong Ptag, unknown handle, the target VI's
 * enable attribute off, a range that leaves the region. At RR the requester's
 * descriptor completes with RDMA_PROT_ERROR (the ACK's MPE, A7/A8), the
 * target raises the asynchronous error, and no byte outside what was allowed
 * moves: the target region sits at the end of a heap block, so ASan would
 * report a write or read past it. */
enum prot_case { P_WRONG_PTAG, P_WRONG_HANDLE, P_VI_DISABLED, P_OUTSIDE };

static void protection_case(bool read, enum prot_case c)
{
    struct h_pair p;
    h_pair_open_enables(&p, NULL, NULL, RR, 0, !(c == P_VI_DISABLED && !read), !(c == P_VI_DISABLED && read));
    enum { LEN = 4096 };
    uint8_t *target = malloc(LEN);
    assert_non_null(target);
    memset(target, 0x3C, LEN);
    VIP_PROTECTION_HANDLE other;
    assert_int_equal(VipCreatePtag(p.b.nic, &other), VIP_SUCCESS);
    VIP_MEM_ATTRIBUTES ma = {.Ptag = c == P_WRONG_PTAG ? other : p.b.ptag, .EnableRdmaWrite = VIP_TRUE,
                             .EnableRdmaRead = VIP_TRUE};
    VIP_MEM_HANDLE tmh;
    assert_int_equal(VipRegisterMem(p.b.nic, target, LEN, &ma, &tmh), VIP_SUCCESS);
    uint64_t raddr = (uint64_t)(uintptr_t)target + (c == P_OUTSIDE ? LEN - 100 : 0);
    VIP_MEM_HANDLE rh = c == P_WRONG_HANDLE ? tmh + 77 : tmh;
    memset(p.a.data, 0xEE, 4096);
    h_post_send(&p.a, p.va, 10, read ? VIP_CONTROL_OP_RDMAREAD : VIP_CONTROL_OP_RDMAWRITE, 0, 200, 0, 0, raddr, rh);
    VIP_DESCRIPTOR *d = h_wait_send(p.va);
    assert_int_equal(d->CS.Status & VIP_STATUS_ERROR_MASK, VIP_STATUS_RDMA_PROT_ERROR);
    assert_int_equal(d->CS.Status & VIP_STATUS_OP_MASK, read ? VIP_STATUS_OP_RDMA_READ : VIP_STATUS_OP_RDMA_WRITE);
    for (unsigned i = 0; i < LEN; i++)
        assert_int_equal(target[i], 0x3C); /* the target's memory is untouched */
    for (unsigned i = 0; i < 4096; i++)
        assert_int_equal(p.a.data[i], 0xEE); /* and nothing of it reached the requester */
    if (c == P_VI_DISABLED && read) {
        /* decision 3: the target announced read window 0, so the read is
         * refused locally and nothing is sent; like any local error at RR it
         * breaks the connection (VIA 2.5.2) */
        for (int i = 0; i < 300 && h_vi_state(p.va) != VIP_STATE_ERROR; i++)
            usleep(10000);
        assert_int_equal(h_vi_state(p.va), VIP_STATE_ERROR);
        assert_int_equal(p.b.async_errors[VIP_ERROR_RDMAR_PROT], 0);
    } else {
        unsigned code = read ? VIP_ERROR_RDMAR_PROT : VIP_ERROR_RDMAW_PROT;
        for (int i = 0; i < 300 && !__atomic_load_n(&p.b.async_errors[code], __ATOMIC_SEQ_CST); i++)
            usleep(10000);
        assert_true(p.b.async_errors[code] >= 1);
        for (int i = 0; i < 300 && h_vi_state(p.va) != VIP_STATE_ERROR; i++)
            usleep(10000);
        assert_int_equal(h_vi_state(p.va), VIP_STATE_ERROR); /* A7/A8: RR closes after the error ACK */
    }
    h_pair_close(&p);
    free(target);
}

static void test_protection_write_wrong_ptag(void **s) { (void)s; protection_case(false, P_WRONG_PTAG); }
static void test_protection_write_wrong_handle(void **s) { (void)s; protection_case(false, P_WRONG_HANDLE); }
static void test_protection_write_vi_disabled(void **s) { (void)s; protection_case(false, P_VI_DISABLED); }
static void test_protection_write_outside(void **s) { (void)s; protection_case(false, P_OUTSIDE); }
static void test_protection_read_wrong_ptag(void **s) { (void)s; protection_case(true, P_WRONG_PTAG); }
static void test_protection_read_wrong_handle(void **s) { (void)s; protection_case(true, P_WRONG_HANDLE); }
static void test_protection_read_vi_disabled(void **s) { (void)s; protection_case(true, P_VI_DISABLED); }
static void test_protection_read_outside(void **s) { (void)s; protection_case(true, P_OUTSIDE); }

/* A11: CRC only when both NICs offer it; 4 more bytes per segment. */
static void test_crc_negotiation(void **state)
{
    (void)state;
    uint64_t bytes[2];
    for (int crc = 0; crc < 2; crc++) {
        struct h_pair p;
        h_pair_open(&p, crc ? "crc=on" : "crc=off", "crc=on", RD, 1);
        VIPL_STATISTICS before, after;
        VipQuerySystemManagementInfo(p.b.nic, VIPL_SMI_STATISTICS, &before);
        h_post_send(&p.a, p.va, 10, VIP_CONTROL_OP_SENDRECV, 0, 100, 0, 0, 0, 0);
        h_wait_send(p.va);
        h_wait_recv(p.vb);
        VipQuerySystemManagementInfo(p.b.nic, VIPL_SMI_STATISTICS, &after);
        bytes[crc] = after.BytesReceived - before.BytesReceived;
        h_pair_close(&p);
    }
    assert_int_equal(bytes[0], 24 + 100);
    assert_int_equal(bytes[1], 24 + 100 + 4);
}

/* A10: a bad CRC at Reliable Delivery delivers TRANSPORT_ERROR and closes. */
static void test_crc_mismatch(void **state)
{
    (void)state;
    struct h_pair p;
    h_pair_open(&p, "fault=bad-crc", NULL, RD, 2);
    h_post_send(&p.a, p.va, 10, VIP_CONTROL_OP_SENDRECV, 0, 50, 0, 0, 0, 0);
    VIP_DESCRIPTOR *d = h_wait_recv(p.vb);
    assert_true(d->CS.Status & VIP_STATUS_TRANSPORT_ERROR);
    for (int i = 0; i < 200 && h_vi_state(p.vb) != VIP_STATE_ERROR; i++)
        usleep(10000);
    assert_int_equal(h_vi_state(p.vb), VIP_STATE_ERROR);
    VIPL_STATISTICS st;
    VipQuerySystemManagementInfo(p.b.nic, VIPL_SMI_STATISTICS, &st);
    assert_int_equal(st.CrcErrors, 1);
    h_pair_close(&p);
}

/* V17/A12: a flow-controlled sender waits for receive credits. */
static void test_descriptor_flow_control(void **state)
{
    (void)state;
    struct h_pair p;
    h_pair_open(&p, NULL, NULL, RD | VIP_SERVICE_DFC, 2);
    for (unsigned i = 0; i < 5; i++)
        h_post_send(&p.a, p.va, 10 + i, VIP_CONTROL_OP_SENDRECV, i * 10, 10, 0, 0, 0, 0);
    h_wait_send(p.va);
    h_wait_send(p.va);
    VIP_DESCRIPTOR *d;
    assert_int_equal(VipSendWait(p.va, 150, &d), VIP_TIMEOUT); /* no third credit */
    for (unsigned i = 0; i < 2; i++)
        assert_int_equal(h_wait_recv(p.vb)->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE);
    for (unsigned i = 2; i < 5; i++)
        h_post_recv(&p.b, p.vb, i, i * 65536u, 100);
    for (unsigned i = 2; i < 5; i++) {
        assert_int_equal(h_wait_send(p.va)->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_SEND);
        assert_int_equal(h_wait_recv(p.vb)->CS.Status, VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE);
    }
    assert_int_equal(p.b.async_errors[VIP_ERROR_RECVQ_EMPTY], 0);
    h_pair_close(&p);
}

/* Receive queue empty: Unreliable drops and continues; RD breaks. */
static void test_receive_queue_empty(void **state)
{
    (void)state;
    struct h_pair p;
    h_pair_open(&p, NULL, NULL, UN, 0);
    h_post_send(&p.a, p.va, 10, VIP_CONTROL_OP_SENDRECV, 0, 10, 0, 0, 0, 0);
    h_wait_send(p.va);
    for (int i = 0; i < 200 && p.b.async_errors[VIP_ERROR_RECVQ_EMPTY] == 0; i++)
        usleep(5000);
    assert_int_equal(p.b.async_errors[VIP_ERROR_RECVQ_EMPTY], 1);
    h_post_recv(&p.b, p.vb, 0, 0, 100);
    h_post_send(&p.a, p.va, 11, VIP_CONTROL_OP_SENDRECV, 0, 10, 0, 0, 0, 0);
    assert_int_equal(h_wait_recv(p.vb)->CS.Length, 10);
    assert_int_equal(h_vi_state(p.vb), VIP_STATE_CONNECTED);
    h_pair_close(&p);
}

/* A5: the peer's disconnect puts the VI in Error, flushes, CONN_LOST. */
static void test_peer_disconnect(void **state)
{
    (void)state;
    struct h_pair p;
    h_pair_open(&p, NULL, NULL, RD, 0);
    h_post_recv(&p.a, p.va, 0, 0, 100);
    assert_int_equal(VipDisconnect(p.vb), VIP_SUCCESS);
    assert_int_equal(h_vi_state(p.vb), VIP_STATE_IDLE);
    VIP_DESCRIPTOR *d = h_wait_recv(p.va);
    assert_int_equal(d->CS.Status, VIP_STATUS_DONE | VIP_STATUS_DESC_FLUSHED_ERROR | VIP_STATUS_OP_RECEIVE);
    assert_int_equal(h_vi_state(p.va), VIP_STATE_ERROR);
    for (int i = 0; i < 100 && p.a.async_errors[VIP_ERROR_CONN_LOST] == 0; i++)
        usleep(5000);
    assert_int_equal(p.a.async_errors[VIP_ERROR_CONN_LOST], 1);
    /* VIA 5.4: a send posted in Error completes in error */
    h_post_send(&p.a, p.va, 10, VIP_CONTROL_OP_SENDRECV, 0, 10, 0, 0, 0, 0);
    assert_true(h_wait_send(p.va)->CS.Status & VIP_STATUS_DESC_FLUSHED_ERROR);
    h_pair_close(&p);
}

struct waiter {
    VIP_NIC_HANDLE nic;
    const char *disc;
    int reject;
    VIP_VI_HANDLE vi;
    VIP_RETURN rc, rc2;
};

static void *wait_thread(void *arg)
{
    struct waiter *w = arg;
    VIP_NET_ADDRESS *local = h_addr(0, w->disc);
    uint8_t rb[sizeof(VIP_NET_ADDRESS) + 80];
    VIP_VI_ATTRIBUTES ra;
    VIP_CONN_HANDLE conn;
    w->rc = VipConnectWait(w->nic, local, 5000, (VIP_NET_ADDRESS *)rb, &ra, &conn);
    if (w->rc == VIP_SUCCESS) {
        if (w->reject) {
            w->rc2 = VipConnectReject(conn);
        } else {
            /* A14: a level mismatch fails the accept; nothing is sent */
            w->rc2 = VipConnectAccept(conn, w->vi);
            VIP_VI_ATTRIBUTES fix;
            VipQueryVi(w->vi, NULL, &fix, NULL, NULL);
            fix.ReliabilityLevel = ra.ReliabilityLevel;
            VipSetViAttributes(w->vi, &fix);
            w->rc = VipConnectAccept(conn, w->vi);
        }
    }
    free(local);
    return NULL;
}

static void test_reject_and_level_mismatch(void **state)
{
    (void)state;
    struct h_nic a, b;
    h_nic_open(&a, NULL);
    h_nic_open(&b, NULL);
    VIP_VI_HANDLE va = h_vi_create(&a, RD), vb = h_vi_create(&b, RR);
    struct waiter w = {.nic = b.nic, .disc = "svc", .reject = 1};
    pthread_t t;
    pthread_create(&t, NULL, wait_thread, &w);
    assert_int_equal(h_connect(&a, va, b.port, "svc", 5000), VIP_REJECT);
    pthread_join(t, NULL);
    assert_int_equal(w.rc2, VIP_SUCCESS);
    w = (struct waiter){.nic = b.nic, .disc = "svc", .vi = vb};
    pthread_create(&t, NULL, wait_thread, &w);
    assert_int_equal(h_connect(&a, va, b.port, "svc", 5000), VIP_SUCCESS);
    pthread_join(t, NULL);
    assert_int_equal(w.rc2, VIP_INVALID_RELIABILITY_LEVEL);
    assert_int_equal(w.rc, VIP_SUCCESS);
    /* A3: a connected VI cannot connect again */
    assert_int_equal(h_connect(&a, va, b.port, "svc", 100), VIP_INVALID_STATE);
    h_vi_destroy(va);
    h_vi_destroy(vb);
    h_nic_close(&a);
    h_nic_close(&b);
}

struct peer_arg {
    VIP_VI_HANDLE vi;
    VIP_NET_ADDRESS *local, *remote;
    VIP_RETURN rc;
};

static void test_peer_to_peer(void **state)
{
    (void)state;
    struct h_nic a, b;
    h_nic_open(&a, NULL);
    h_nic_open(&b, NULL);
    VIP_VI_HANDLE va = h_vi_create(&a, RD), vb = h_vi_create(&b, RD);
    /* same host: the greater discriminator ("b-side") is active (V20) */
    ViplNicSetRemotePort(a.nic, b.port);
    ViplNicSetRemotePort(b.nic, a.port);
    VIP_NET_ADDRESS *la = h_addr(0, "a-side"), *lb = h_addr(0, "b-side");
    assert_int_equal(VipConnectPeerRequest(va, la, lb, 5000), VIP_SUCCESS);
    VIP_VI_ATTRIBUTES ra;
    assert_int_equal(VipConnectPeerDone(va, &ra), VIP_NOT_DONE);
    assert_int_equal(VipConnectPeerRequest(vb, lb, la, 5000), VIP_SUCCESS);
    assert_int_equal(VipConnectPeerWait(vb, &ra), VIP_SUCCESS);
    assert_int_equal(VipConnectPeerWait(va, &ra), VIP_SUCCESS);
    assert_int_equal(ra.ReliabilityLevel, RD);
    assert_int_equal(VipConnectPeerRequest(va, la, lb, 5000), VIP_INVALID_STATE);
    free(la);
    free(lb);
    /* data flows both ways */
    h_post_recv(&a, va, 0, 0, 100);
    h_post_send(&b, vb, 10, VIP_CONTROL_OP_SENDRECV, 0, 33, 0, 0, 0, 0);
    assert_int_equal(h_wait_recv(va)->CS.Length, 33);
    h_vi_destroy(va);
    h_vi_destroy(vb);
    h_nic_close(&a);
    h_nic_close(&b);
}

static unsigned notified;
static void on_recv(VIP_PVOID ctx, VIP_NIC_HANDLE nic, VIP_VI_HANDLE vi, VIP_DESCRIPTOR *d)
{
    (void)nic, (void)vi;
    if (d->CS.Status == (VIP_STATUS_DONE | VIP_STATUS_OP_RECEIVE) && ctx == &notified)
        __atomic_add_fetch(&notified, 1, __ATOMIC_SEQ_CST);
}

static void test_notify_and_cq(void **state)
{
    (void)state;
    struct h_pair p;
    h_pair_open(&p, NULL, NULL, RD, 2);
    notified = 0;
    assert_int_equal(VipRecvNotify(p.vb, &notified, on_recv), VIP_SUCCESS);
    h_post_send(&p.a, p.va, 10, VIP_CONTROL_OP_SENDRECV, 0, 5, 0, 0, 0, 0);
    for (int i = 0; i < 200 && !notified; i++)
        usleep(5000);
    assert_int_equal(notified, 1);
    VIP_BOOLEAN se, re;
    VipQueryVi(p.vb, NULL, NULL, &se, &re);
    assert_false(re); /* one receive still posted; the notified one was dequeued */
    h_pair_close(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_send_recv_reliable_delivery),
        cmocka_unit_test(test_send_recv_reliable_reception),
        cmocka_unit_test(test_send_recv_unreliable),
        cmocka_unit_test(test_multi_segment_descriptors),
        cmocka_unit_test(test_message_too_large_for_receive),
        cmocka_unit_test(test_rdma_rd),
        cmocka_unit_test(test_rdma_rr),
        cmocka_unit_test(test_rdma_unreliable),
        cmocka_unit_test(test_large_writes_without_answers),
        cmocka_unit_test(test_read_window_and_fence),
        cmocka_unit_test(test_rdma_protection_rr),
        cmocka_unit_test(test_rdma_protection_rd),
        cmocka_unit_test(test_rdma_read_refused),
        cmocka_unit_test(test_protection_write_wrong_ptag),
        cmocka_unit_test(test_protection_write_wrong_handle),
        cmocka_unit_test(test_protection_write_vi_disabled),
        cmocka_unit_test(test_protection_write_outside),
        cmocka_unit_test(test_protection_read_wrong_ptag),
        cmocka_unit_test(test_protection_read_wrong_handle),
        cmocka_unit_test(test_protection_read_vi_disabled),
        cmocka_unit_test(test_protection_read_outside),
        cmocka_unit_test(test_crc_negotiation),
        cmocka_unit_test(test_crc_mismatch),
        cmocka_unit_test(test_descriptor_flow_control),
        cmocka_unit_test(test_receive_queue_empty),
        cmocka_unit_test(test_peer_disconnect),
        cmocka_unit_test(test_reject_and_level_mismatch),
        cmocka_unit_test(test_peer_to_peer),
        cmocka_unit_test(test_notify_and_cq),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
