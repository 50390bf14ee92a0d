/*
 * vipl-peer: a VI/TCP conformance target built on the reference provider.
 *   vipl-peer --port P [--fault NAME] [--reject] [--disc D] [--level u|rd|rr]
 *             [--crc on|off] [--region-size N] [--grace MS] [--announce] [--once]
 *   vipl-peer --connect HOST:PORT [--fault NAME] [--disc D] [--level ...] [--announce]
 *             [--crc on|off] [--count N] [--size N] [--linger MS]
 *             [--reads N] [--read-region ADDR:HANDLE:LEN]
 *   vipl-peer --list-faults | --list-choices
 * Allowed choices (--choice NAME[=VALUE][,NAME...], repeatable; not faults:
 * each is a behaviour the VI/TCP draft allows, docs/vipl.md): no-crc,
 * seg-size=N, mtu=N, crc-on-reject, offer-urgent, read-window=N, no-rdma,
 * credits=N, level=u|rd|rr (the only level the provider offers), dfc.
 * Passive: waits on discriminator D (default "vitcp-conform", the tester's
 * default; --disc '' waits on every discriminator), accepts (or rejects)
 * connections and only echoes: every Send (with its immediate data) comes
 * back as one Send. It exposes a well-known RDMA region, read and write
 * enabled: address VIPL_PEER_REGION_ADDR (0x10000000), memory handle 1,
 * --region-size bytes (default 65536), byte i holding i & 0xFF again at
 * every accepted connection. With --announce it also sends the region's
 * description as its first Send after connecting: 16 bytes, big-endian
 * address (8), memory handle (4), length (4). The active side (--connect)
 * sends --count messages, then echoes. One line per event on stdout.
 * Read mode of the active side: --reads N posts N RDMA Reads of LEN bytes
 * of the peer's region ADDR:HANDLE (--read-region, hex:hex:decimal as
 * vitcp-conform's --region) at once, right after connecting, and waits for
 * them before its Sends. A received Send whose immediate data is a read
 * order, 0x5244nnnn ("RD", nnnn = 1..16 reads), is not echoed: it posts
 * nnnn reads of the Send's length (1..65536) at --read-region's address and
 * handle (0 and 0 by default), so that a listen-mode case can ask for reads
 * through the one --connect-cmd every case shares. libvipl holds back the
 * reads beyond the peer's RDMA Read window (A13) unless the fault
 * exceed-read-window is set.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tool_common.h"
#include "vipl_fault.h"

#define NRECV 16
/* --count's bound: two echoing peers keep every message bouncing until the
 * active side has its --count + 1, so up to --count messages can be on
 * their way to one side at once; each side has NRECV receives posted, so
 * more than NRECV - 1 could arrive with none posted, and be lost. */
#define COUNT_MAX (NRECV - 1u)
#define MSG_MAX (1u << 20)
#define DEFAULT_DISC "vitcp-conform"
/* A request nobody waits for gets ConnectNoMatch after this long (A4's grace,
 * shorter than its 2 s default so the answer falls well inside the tester's
 * 2 s slack, V21). */
#define DEFAULT_GRACE_MS 500
/* Passive: connections served at once, and how long one may stay silent
 * before it is closed (--idle), so a silent client cannot hold the peer. */
#define MAX_CONNS 4
#define DEFAULT_IDLE_MS 30000ul
/* Where the RDMA region is mapped when the address is free (else anywhere;
 * the event=region line says where). */
#define VIPL_PEER_REGION_ADDR 0x10000000ul
/* Read mode: at most READS_MAX reads at once, READ_MAX bytes each. */
#define READS_MAX 16u
#define READ_MAX 65536u
#define READ_ORDER_MAGIC 0x5244u /* "RD": immediate data 0x5244nnnn orders nnnn reads */

static volatile sig_atomic_t stop;
static void on_signal(int sig) { (void)sig; stop = 1; }

struct opts {
    long port;
    const char *connect;
    enum vipl_fault fault;
    int reject, once, announce;
    const char *disc;
    VIP_RELIABILITY_LEVEL level;
    const char *crc;
    unsigned long region_size, count, size, grace_ms, linger_ms;
    unsigned long idle_ms;            /* --idle: passive, close a connection silent this long (0: never) */
    /* --choice: behaviours the draft allows (see CHOICES) */
    unsigned long mtu;                /* mtu=N: the VI's MaxTransferSize */
    unsigned long credits;            /* credits=N: receives posted before connecting (0: all) */
    int no_rdma;                      /* no-rdma: RDMA Write and Read not enabled */
    char nic_opts[96];                /* choices made by the provider (NIC options) */
    unsigned long reads;              /* --reads N */
    unsigned long long read_addr;     /* --read-region ADDR:HANDLE:LEN */
    unsigned long read_handle, read_len;
};

static void usage(FILE *f)
{
    fprintf(f, "usage: vipl-peer --port P [--fault NAME] [--reject] [--disc D] [--level u|rd|rr]\n"
               "                 [--crc on|off] [--region-size N] [--grace MS] [--idle MS] [--announce] [--once]\n"
               "       vipl-peer --connect HOST:PORT [--fault NAME] [--disc D] [--level u|rd|rr] [--announce]\n"
               "                 [--crc on|off] [--count N] [--size N] [--linger MS]\n"
               "                 [--reads N] [--read-region ADDR:HANDLE:LEN]\n"
               "       (both) [--choice NAME[=VALUE][,...]]...   allowed choices, see --list-choices\n"
               "       vipl-peer --list-faults | --list-choices\n");
}

/* Choices the VI/TCP draft leaves to an implementation (docs/vipl.md). */
static const struct choice {
    const char *name, *arg, *what;
} CHOICES[] = {
    {"no-crc", NULL, "never offer or accept the CRC option (3.6: MAY)"},
    {"seg-size", "N", "divide messages into VI segments of at most N payload bytes (3.2, 2.2.2.2.3)"},
    {"mtu", "N", "MTU capability N bytes: the VI's MaxTransferSize (3.3, V11)"},
    {"crc-on-reject", NULL, "CRC trailer on every ConnectReject/NoMatch (3.5, V6: Segment Length 28)"},
    {"offer-urgent", NULL, "offer the Urgent Marker option in CE segments (3.7: either end may)"},
    {"read-window", "N", "RDMA Read Window N (0..64) when RDMA Read is enabled (3.3, V18)"},
    {"no-rdma", NULL, "RDMA Write and RDMA Read not enabled on the VI (3.3: independent enables)"},
    {"credits", "N", "N receive descriptors posted at connection (Rx Descriptors Posted), the rest after"},
    {"level", "u|rd|rr", "the only reliability level offered; requests for others are refused (VIA 2.5)"},
    {"dfc", NULL, "set Descriptor Flow Control: send only while the peer advertises receive credit (3.3, V17, A12)"},
};

static void list_choices(void)
{
    for (size_t i = 0; i < sizeof CHOICES / sizeof CHOICES[0]; i++)
        printf("%s%s%s  %s\n", CHOICES[i].name, CHOICES[i].arg ? "=" : "", CHOICES[i].arg ? CHOICES[i].arg : "",
               CHOICES[i].what);
}

/* Messages that arrived with no receive descriptor posted (lost): the
 * active side fails when there are any (a tool that loses data must say so). */
static atomic_uint lost_messages;

static void on_async_error(VIP_PVOID ctx, VIP_ERROR_DESCRIPTOR *ed)
{
    (void)ctx;
    if (ed->ErrorCode == VIP_ERROR_RECVQ_EMPTY)
        atomic_fetch_add(&lost_messages, 1u);
    printf("event=async-error code=%d vi=%p\n", (int)ed->ErrorCode, ed->ViHandle);
    fflush(stdout);
}

struct conn_res {
    VIP_VI_HANDLE vi;
    struct tool_mem descs, bufs;
    const struct tool_mem *region; /* the peer's one RDMA region */
    struct tool_mem rdescs, rbufs;  /* read mode (active side only) */
};

/* The RDMA region: registered first (memory handle 1), at a fixed address
 * when the address space allows it, so scripted cases can name both. */
static int region_open(struct tool_env *env, size_t len, struct tool_mem *m)
{
    len = (len + 4095) & ~(size_t)4095;
    void *p = mmap((void *)VIPL_PEER_REGION_ADDR, len, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != MAP_FAILED && p != (void *)VIPL_PEER_REGION_ADDR) { /* kernels without NOREPLACE */
        munmap(p, len);
        p = MAP_FAILED;
    }
    if (p == MAP_FAILED)
        p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return 1;
    VIP_MEM_ATTRIBUTES ma = {.Ptag = env->ptag, .EnableRdmaWrite = VIP_TRUE, .EnableRdmaRead = VIP_TRUE};
    if (VipRegisterMem(env->nic, p, len, &ma, &m->mh) != VIP_SUCCESS) {
        munmap(p, len);
        return 1;
    }
    m->base = p;
    m->len = len;
    return 0;
}

static void region_fill(const struct tool_mem *m)
{
    for (size_t i = 0; i < m->len; i++)
        ((uint8_t *)m->base)[i] = (uint8_t)i;
}

static void region_close(struct tool_env *env, struct tool_mem *m)
{
    if (!m->base)
        return;
    VipDeregisterMem(env->nic, m->base, m->mh);
    munmap(m->base, m->len);
    m->base = NULL;
}

static void drain_and_destroy(struct conn_res *r)
{
    VIP_DESCRIPTOR *d;
    VipDisconnect(r->vi);
    while (VipRecvDone(r->vi, &d) == VIP_SUCCESS || VipSendDone(r->vi, &d) == VIP_SUCCESS)
        ;
    VipDestroyVi(r->vi);
}

static VIP_DESCRIPTOR *rd(struct conn_res *r, unsigned i) { return tool_desc(&r->descs, i); }
static VIP_DESCRIPTOR *sd(struct conn_res *r, unsigned i) { return tool_desc(&r->descs, NRECV + i); }

static void post_recv(struct conn_res *r, unsigned i)
{
    tool_fill_recv(rd(r, i), (char *)r->bufs.base + (size_t)i * MSG_MAX, r->bufs.mh, MSG_MAX);
    VipPostRecv(r->vi, rd(r, i), r->descs.mh);
}

static void post_recvs(struct conn_res *r, unsigned from, unsigned to)
{
    for (unsigned i = from; i < to; i++)
        post_recv(r, i);
}

/* Receives posted before the connection (credits=N): its Rx Descriptors
 * Posted in the CE segment; the rest follow once connected. */
static unsigned first_recvs(const struct opts *o)
{
    return o->credits ? (unsigned)o->credits : NRECV;
}

/* The VI's attributes: the level, and the choices mtu=N and no-rdma. */
static void vi_attrs(const struct opts *o, const struct tool_env *env, VIP_RELIABILITY_LEVEL level,
                     VIP_VI_ATTRIBUTES *a)
{
    memset(a, 0, sizeof *a);
    a->ReliabilityLevel = level;
    a->MaxTransferSize = o->mtu ? o->mtu : MSG_MAX;
    a->Ptag = env->ptag;
    a->EnableRdmaWrite = !o->no_rdma;
    a->EnableRdmaRead = !o->no_rdma && level != VIP_SERVICE_UNRELIABLE;
}

static int send_bytes(struct conn_res *r, void *data, uint32_t len, int imm, uint32_t immv, VIP_MEM_HANDLE mh)
{
    VIP_DESCRIPTOR *d = sd(r, 0), *done;
    tool_fill_send(d, VIP_CONTROL_OP_SENDRECV, data, mh, len, imm, immv, 0, 0);
    VIP_RETURN rc = VipPostSend(r->vi, d, r->descs.mh);
    if (rc == VIP_SUCCESS)
        rc = VipSendWait(r->vi, 10000, &done);
    if (rc != VIP_SUCCESS || (done->CS.Status & VIP_STATUS_ERROR_MASK)) {
        printf("event=send-failed rc=%s status=0x%x\n", ViplReturnName(rc), rc == VIP_SUCCESS ? done->CS.Status : 0);
        return 1;
    }
    return 0;
}

/* Registered memory, allocated once: the region first (memory handle 1),
 * then descriptors and buffers, reused by every connection (one at a time),
 * so that a new connection costs no allocation. */
struct peer_mem {
    struct tool_mem region, descs, bufs;
    struct tool_mem rdescs, rbufs; /* read mode: READS_MAX descriptors and READ_MAX-byte buffers */
};

static int peer_mem_open(struct tool_env *env, size_t region_len, int active, struct peer_mem *m)
{
    return region_open(env, region_len, &m->region) ||
           tool_mem_alloc(env, 64 * (NRECV + 2), 0, 0, &m->descs) != VIP_SUCCESS ||
           tool_mem_alloc(env, (size_t)(NRECV + 1) * MSG_MAX + 1, 0, 0, &m->bufs) != VIP_SUCCESS ||
           (active && (tool_mem_alloc(env, 64 * READS_MAX, 0, 0, &m->rdescs) != VIP_SUCCESS ||
                       tool_mem_alloc(env, (size_t)READS_MAX * READ_MAX, 0, 0, &m->rbufs) != VIP_SUCCESS));
}

static void peer_mem_close(struct tool_env *env, struct peer_mem *m)
{
    tool_mem_free(env, &m->rbufs);
    tool_mem_free(env, &m->rdescs);
    tool_mem_free(env, &m->bufs);
    tool_mem_free(env, &m->descs);
    region_close(env, &m->region);
}

static void conn_init(struct conn_res *r, const struct peer_mem *m)
{
    memset(r, 0, sizeof *r);
    r->descs = m->descs;
    r->bufs = m->bufs;
    r->rdescs = m->rdescs;
    r->rbufs = m->rbufs;
    r->region = &m->region;
    region_fill(&m->region);
}

/* After connecting: with --announce, the region announcement; on the active
 * side with ignore-mtu, one message a byte larger than the agreed MTU
 * (VITCP-3.3-MTU-RESPECTED). */
static int after_connect(struct conn_res *r, const struct opts *o, const VIP_VI_ATTRIBUTES *local)
{
    uint8_t *ann = (uint8_t *)r->bufs.base + (size_t)NRECV * MSG_MAX;
    uint64_t a = (uint64_t)(uintptr_t)r->region->base;
    uint32_t hi = htonl((uint32_t)(a >> 32)), lo = htonl((uint32_t)a), h = htonl(r->region->mh),
             l = htonl((uint32_t)r->region->len);
    memcpy(ann, &hi, 4), memcpy(ann + 4, &lo, 4), memcpy(ann + 8, &h, 4), memcpy(ann + 12, &l, 4);
    if (o->announce && send_bytes(r, ann, 16, 0, 0, r->bufs.mh))
        return 1;
    if (o->connect && o->fault == VIPL_FAULT_IGNORE_MTU) {
        uint32_t big = (uint32_t)local->MaxTransferSize + 1;
        if (big <= MSG_MAX + 1)
            send_bytes(r, ann, big, 0, 0, r->bufs.mh);
    }
    return 0;
}

/* Read mode: post n RDMA Reads of len bytes at (addr, handle) at once, then
 * wait for each (in order; the send queue completes in order). A read the
 * peer never answers is waited on until SIGTERM or the VI breaks. Returns 1
 * if a read failed. */
static int do_reads(struct conn_res *r, unsigned long n, uint32_t len, uint64_t addr, uint32_t handle)
{
    unsigned long posted = 0;
    for (; posted < n; posted++) {
        VIP_DESCRIPTOR *d = tool_desc(&r->rdescs, (unsigned)posted);
        uint8_t *buf = (uint8_t *)r->rbufs.base + posted * READ_MAX;
        memset(buf, 0xEE, len);
        tool_fill_send(d, VIP_CONTROL_OP_RDMAREAD, buf, r->rbufs.mh, len, 0, 0, addr, handle);
        VIP_RETURN rc = VipPostSend(r->vi, d, r->rdescs.mh);
        if (rc != VIP_SUCCESS) {
            printf("event=read-failed n=%lu rc=%s\n", posted, ViplReturnName(rc));
            break;
        }
    }
    printf("event=reads-posted n=%lu len=%u addr=0x%llx handle=%u\n", posted, len, (unsigned long long)addr,
           handle);
    fflush(stdout);
    int err = posted < n;
    for (unsigned long k = 0; k < posted;) {
        VIP_DESCRIPTOR *done;
        VIP_RETURN rc = VipSendWait(r->vi, 200, &done);
        if (rc == VIP_TIMEOUT) {
            if (stop)
                return 1;
            continue;
        }
        if (rc != VIP_SUCCESS) {
            printf("event=read-failed n=%lu rc=%s\n", k, ViplReturnName(rc));
            return 1;
        }
        const uint8_t *b = (const uint8_t *)done->DS[1].Local.Data.Address;
        unsigned long i = (unsigned long)(((char *)done - (char *)r->rdescs.base) / 64);
        printf("event=read n=%lu status=0x%x len=%u head=", i, done->CS.Status, done->CS.Length);
        for (uint32_t j = 0; j < 4 && j < len; j++)
            printf("%02x", b[j]);
        printf("\n");
        fflush(stdout);
        if (done->CS.Status & VIP_STATUS_ERROR_MASK)
            err = 1;
        k++;
    }
    return err;
}

/* A read order (see the top): 0x5244nnnn in the immediate data. */
static int read_order(uint32_t st, uint32_t imm, uint32_t len, unsigned long *n)
{
    if (!(st & VIP_STATUS_IMMEDIATE) || (imm >> 16) != READ_ORDER_MAGIC)
        return 0;
    *n = imm & 0xFFFFu;
    return *n >= 1 && *n <= READS_MAX && len >= 1 && len <= READ_MAX;
}

/* Echo every Send. With ignore-mtu, a message of exactly the agreed MTU
 * comes back one byte longer (VITCP-3.3-MTU-RESPECTED): smaller ones are
 * echoed as they are, so the fault shows only where a case probes the MTU. */
static void echo_loop(struct conn_res *r, const struct opts *o, unsigned long max_msgs, unsigned long idle_ms)
{
    VIP_VI_ATTRIBUTES attrs;
    VIP_VI_STATE vst;
    unsigned long mtu = VipQueryVi(r->vi, &vst, &attrs, NULL, NULL) == VIP_SUCCESS ? attrs.MaxTransferSize : 0;
    unsigned long n = 0, quiet_ms = 0;
    while (!stop && (max_msgs == 0 || n < max_msgs)) {
        VIP_DESCRIPTOR *d;
        VIP_RETURN rc = VipRecvWait(r->vi, 200, &d);
        if (rc == VIP_TIMEOUT) {
            if (idle_ms && (quiet_ms += 200) >= idle_ms) {
                printf("event=idle-close after_ms=%lu\n", quiet_ms);
                fflush(stdout);
                break;
            }
            continue;
        }
        quiet_ms = 0;
        if (rc != VIP_SUCCESS)
            break;
        unsigned i = (unsigned)(((char *)d - (char *)r->descs.base) / 64);
        uint32_t st = d->CS.Status, len = d->CS.Length, imm = d->CS.ImmediateData;
        printf("event=recv len=%u status=0x%x imm=%s0x%x\n", len, st, (st & VIP_STATUS_IMMEDIATE) ? "" : "none:", imm);
        fflush(stdout);
        if (st & VIP_STATUS_DESC_FLUSHED_ERROR)
            break;
        n++;
        if ((st & VIP_STATUS_ERROR_MASK) || (st & VIP_STATUS_OP_MASK) != VIP_STATUS_OP_RECEIVE) {
            post_recv(r, i);
            continue;
        }
        unsigned long nreads;
        if (o->connect && r->rdescs.base && read_order(st, imm, len, &nreads)) {
            post_recv(r, i);
            if (do_reads(r, nreads, len, o->read_addr, (uint32_t)o->read_handle))
                break;
            continue;
        }
        /* echo from the receive buffer, then repost it */
        uint32_t echo_len = len + (o->fault == VIPL_FAULT_IGNORE_MTU && len == mtu && len < MSG_MAX ? 1u : 0u);
        if (send_bytes(r, (char *)r->bufs.base + (size_t)i * MSG_MAX, echo_len, (st & VIP_STATUS_IMMEDIATE) != 0,
                       imm, r->bufs.mh))
            break;
        post_recv(r, i);
    }
}

/* Passive mode serves connections independently (issue 18): each accepted
 * connection gets a slot (its own descriptors and buffers, slot 0 the
 * preallocated ones) and a thread, and one that sends nothing for --idle
 * MS is closed; a silent client holds one slot for a while, never the
 * whole peer. With every slot busy a request is refused (ConnectReject). */
struct slot {
    pthread_t thread;
    bool started;        /* a thread was created (join it) */
    atomic_bool busy;    /* from the accept until the thread ends */
    struct tool_mem descs, bufs;
    bool own_mem;        /* descs/bufs allocated for this slot (not slot 0's) */
    struct conn_res r;
    VIP_CONN_HANDLE conn;
    VIP_VI_ATTRIBUTES ra;
    struct tool_env *env;
    const struct opts *o;
};

static void *serve_connection(void *arg)
{
    struct slot *sl = arg;
    const struct opts *o = sl->o;
    struct conn_res *r = &sl->r;
    VIP_VI_ATTRIBUTES a;
    vi_attrs(o, sl->env, o->level ? o->level : sl->ra.ReliabilityLevel, &a);
    VIP_RETURN rc = VipCreateVi(sl->env->nic, &a, NULL, NULL, &r->vi);
    if (rc == VIP_SUCCESS) {
        post_recvs(r, 0, first_recvs(o));
        rc = VipConnectAccept(sl->conn, r->vi);
        post_recvs(r, first_recvs(o), NRECV);
    }
    if (rc != VIP_SUCCESS) {
        printf("event=accept-failed rc=%s\n", ViplReturnName(rc));
        fflush(stdout);
        VipConnectReject(sl->conn);
    } else {
        VIP_VI_STATE st;
        VipQueryVi(r->vi, &st, &a, NULL, NULL);
        printf("event=accepted mtu=%lu\n", (unsigned long)a.MaxTransferSize);
        fflush(stdout);
        if (!after_connect(r, o, &a))
            echo_loop(r, o, 0, o->idle_ms);
        printf("event=closed\n");
        fflush(stdout);
    }
    if (r->vi)
        drain_and_destroy(r);
    r->vi = NULL;
    atomic_store(&sl->busy, false);
    return NULL;
}

static void slot_join(struct slot *sl)
{
    if (sl->started)
        pthread_join(sl->thread, NULL);
    sl->started = false;
}

/* A free slot with its memory (slot 0: the preallocated), or NULL. */
static struct slot *slot_take(struct slot *slots, struct tool_env *env, const struct peer_mem *mem)
{
    for (unsigned i = 0; i < MAX_CONNS; i++) {
        struct slot *sl = &slots[i];
        if (atomic_load(&sl->busy))
            continue;
        slot_join(sl); /* its thread has ended */
        if (i == 0) {
            sl->descs = mem->descs;
            sl->bufs = mem->bufs;
        } else if (!sl->own_mem) {
            if (tool_mem_alloc(env, 64 * (NRECV + 2), 0, 0, &sl->descs) != VIP_SUCCESS)
                continue;
            if (tool_mem_alloc(env, (size_t)(NRECV + 1) * MSG_MAX + 1, 0, 0, &sl->bufs) != VIP_SUCCESS) {
                tool_mem_free(env, &sl->descs);
                continue;
            }
            sl->own_mem = true;
        }
        return sl;
    }
    return NULL;
}

static int run_passive(struct tool_env *env, const struct opts *o, const struct peer_mem *mem)
{
    uint8_t addr_buf[sizeof(VIP_NET_ADDRESS) + 16 + 64];
    VIP_NET_ADDRESS *remote = (VIP_NET_ADDRESS *)addr_buf;
    VIP_NET_ADDRESS *local = calloc(1, sizeof *local + 64);
    local->DiscriminatorLen = (VIP_UINT16)strlen(o->disc);
    memcpy(local->HostAddress, o->disc, local->DiscriminatorLen);
    static struct slot slots[MAX_CONNS];
    printf("event=listening port=%ld disc=%s fault=%s\n", o->port, o->disc[0] ? o->disc : "(any)",
           ViplFaultName(o->fault));
    fflush(stdout);
    while (!stop) {
        VIP_VI_ATTRIBUTES ra;
        VIP_CONN_HANDLE conn;
        VIP_RETURN rc = VipConnectWait(env->nic, local, 200, remote, &ra, &conn);
        if (rc == VIP_TIMEOUT)
            continue;
        if (rc != VIP_SUCCESS) {
            printf("event=wait-failed rc=%s\n", ViplReturnName(rc));
            break;
        }
        printf("event=request level=%u mtu=%lu rdma_write=%d rdma_read=%d\n", (unsigned)ra.ReliabilityLevel,
               (unsigned long)ra.MaxTransferSize, ra.EnableRdmaWrite, ra.EnableRdmaRead);
        if (o->reject) {
            VipConnectReject(conn);
            printf("event=rejected\n");
            fflush(stdout);
            if (o->once)
                break;
            continue;
        }
        struct slot *sl = slot_take(slots, env, mem);
        if (!sl) {
            VipConnectReject(conn);
            printf("event=busy connections=%u\n", MAX_CONNS);
            fflush(stdout);
            continue;
        }
        memset(&sl->r, 0, sizeof sl->r);
        sl->r.descs = sl->descs;
        sl->r.bufs = sl->bufs;
        sl->r.region = &mem->region;
        region_fill(&mem->region);
        sl->conn = conn;
        sl->ra = ra;
        sl->env = env;
        sl->o = o;
        atomic_store(&sl->busy, true);
        if (pthread_create(&sl->thread, NULL, serve_connection, sl) != 0) {
            atomic_store(&sl->busy, false);
            VipConnectReject(conn);
            printf("event=accept-failed rc=no-thread\n");
            fflush(stdout);
            continue;
        }
        sl->started = true;
        if (o->once) {
            slot_join(sl);
            break;
        }
    }
    /* stop (or --once): the connections' loops see it and end */
    for (unsigned i = 0; i < MAX_CONNS; i++) {
        slot_join(&slots[i]);
        if (slots[i].own_mem) {
            tool_mem_free(env, &slots[i].bufs);
            tool_mem_free(env, &slots[i].descs);
        }
    }
    free(local);
    return 0;
}

static int run_active(struct tool_env *env, const struct opts *o, const struct peer_mem *mem)
{
    VIP_NET_ADDRESS *remote = tool_addr(env, o->connect, o->disc);
    VIP_NET_ADDRESS *local = tool_addr(env, "127.0.0.1", "vipl-peer");
    if (!remote || !local) {
        fprintf(stderr, "vipl-peer: cannot resolve '%s'\n", o->connect);
        free(remote);
        free(local);
        return 2;
    }
    struct conn_res r;
    conn_init(&r, mem);
    int err = 1;
    VIP_VI_ATTRIBUTES a, ra;
    vi_attrs(o, env, o->level ? o->level : VIP_SERVICE_RELIABLE_DELIVERY, &a);
    VIP_RETURN rc = VipCreateVi(env->nic, &a, NULL, NULL, &r.vi);
    if (rc == VIP_SUCCESS) {
        post_recvs(&r, 0, first_recvs(o));
        /* A request keeps trying until its Timeout (VIA 9.4.4): a SIGTERM
         * meanwhile ends the process at once, as a tester stopping it expects. */
        signal(SIGTERM, stop ? on_signal : SIG_DFL);
        rc = VipConnectRequest(r.vi, local, remote, 5000, &ra);
        signal(SIGTERM, on_signal);
        post_recvs(&r, first_recvs(o), NRECV);
    }
    printf("event=connect rc=%s\n", ViplReturnName(rc));
    fflush(stdout);
    if (rc != VIP_SUCCESS)
        fprintf(stderr, "vipl-peer: cannot connect to %s: %s\n", o->connect, ViplReturnName(rc));
    if (rc == VIP_SUCCESS) {
        VIP_VI_STATE st;
        VipQueryVi(r.vi, &st, &a, NULL, NULL);
        err = after_connect(&r, o, &a);
        if (!err && o->reads)
            err = do_reads(&r, o->reads, (uint32_t)o->read_len, o->read_addr, (uint32_t)o->read_handle);
        uint8_t *buf = (uint8_t *)r.bufs.base + (size_t)NRECV * MSG_MAX;
        for (unsigned long k = 0; k < o->count && !err; k++) {
            memset(buf, (int)(k & 0xFF), o->size);
            err = send_bytes(&r, buf, (uint32_t)o->size, 1, (uint32_t)k, r.bufs.mh);
            printf("event=sent n=%lu len=%lu\n", k, o->size);
        }
        echo_loop(&r, o, o->count + 1, 0);
    }
    if (r.vi)
        drain_and_destroy(&r);
    printf("event=disconnected\n");
    fflush(stdout);
    /* --linger: keep the NIC, and whatever connection it still holds, open a
     * while, so that a tester can see whether the disconnect closed TCP
     * (the no-close-on-disconnect fault) before the process exits. */
    for (unsigned long ms = 0; ms < o->linger_ms && !stop; ms += 50)
        usleep(50000);
    free(remote);
    free(local);
    return err;
}

static int parse_level(const char *s, VIP_RELIABILITY_LEVEL *l)
{
    if (!strcmp(s, "u")) *l = VIP_SERVICE_UNRELIABLE;
    else if (!strcmp(s, "rd")) *l = VIP_SERVICE_RELIABLE_DELIVERY;
    else if (!strcmp(s, "rr")) *l = VIP_SERVICE_RELIABLE_RECEPTION;
    else return -1;
    return 0;
}

static int parse_count(const char *s, unsigned long max, unsigned long *out)
{
    char *end;
    if (*s == '-')
        return -1;
    unsigned long v = strtoul(s, &end, 10);
    if (!*s || *end || v > max)
        return -1;
    *out = v;
    return 0;
}

/* --read-region ADDR:HANDLE:LEN: hex address, hex handle, decimal length
 * 1..READ_MAX (the format of vitcp-conform --region). */
static int parse_read_region(const char *s, struct opts *o)
{
    char *end;
    if (!isxdigit((unsigned char)*s))
        return -1;
    o->read_addr = strtoull(s, &end, 16);
    if (*end != ':' || !isxdigit((unsigned char)end[1]))
        return -1;
    s = end + 1;
    o->read_handle = strtoul(s, &end, 16);
    if (*end != ':' || o->read_handle > 0xFFFFFFFFul)
        return -1;
    return parse_count(end + 1, READ_MAX, &o->read_len) || o->read_len == 0 ? -1 : 0;
}

/* Append a NIC option (name=value) to the device string's options. */
static int nic_opt(struct opts *o, const char *name, const char *value)
{
    size_t have = strlen(o->nic_opts);
    int n = snprintf(o->nic_opts + have, sizeof o->nic_opts - have, ",%s=%s", name, value);
    return n > 0 && have + (size_t)n < sizeof o->nic_opts ? 0 : -1;
}

/* One --choice argument: NAME[=VALUE][,NAME[=VALUE]...]. 0, or -1 with the
 * reason on stderr. */
static int parse_choices(char *list, struct opts *o)
{
    for (char *item = strtok(list, ","); item; item = strtok(NULL, ",")) {
        char *val = strchr(item, '=');
        if (val)
            *val++ = 0;
        const struct choice *ch = NULL;
        for (size_t i = 0; i < sizeof CHOICES / sizeof CHOICES[0]; i++)
            if (!strcmp(CHOICES[i].name, item))
                ch = &CHOICES[i];
        if (!ch) {
            fprintf(stderr, "vipl-peer: unknown choice '%s' (see --list-choices)\n", item);
            return -1;
        }
        if (!ch->arg != !val) {
            fprintf(stderr, "vipl-peer: choice '%s' %s\n", item, ch->arg ? "needs =VALUE" : "takes no value");
            return -1;
        }
        unsigned long n = 0;
        int bad = 0;
        if (!strcmp(item, "no-crc")) {
            o->crc = "off";
        } else if (!strcmp(item, "seg-size")) {
            bad = parse_count(val, 65280, &n) || n == 0 || nic_opt(o, "seg", val);
        } else if (!strcmp(item, "mtu")) {
            bad = parse_count(val, MSG_MAX, &o->mtu) || o->mtu == 0;
        } else if (!strcmp(item, "crc-on-reject")) {
            bad = nic_opt(o, "refusecrc", "on");
        } else if (!strcmp(item, "offer-urgent")) {
            bad = nic_opt(o, "urgent", "on");
        } else if (!strcmp(item, "read-window")) {
            bad = parse_count(val, 64, &n) || nic_opt(o, "window", val);
        } else if (!strcmp(item, "no-rdma")) {
            o->no_rdma = 1;
        } else if (!strcmp(item, "dfc")) {
            bad = nic_opt(o, "dfc", "on");
        } else if (!strcmp(item, "credits")) {
            bad = parse_count(val, NRECV, &o->credits) || o->credits == 0;
        } else { /* level */
            bad = parse_level(val, &o->level);
        }
        if (bad) {
            fprintf(stderr, "vipl-peer: bad value '%s' for choice '%s' (%s=%s)\n", val, item, item, ch->arg);
            return -1;
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option lo[] = {
        {"port", required_argument, 0, 'p'}, {"connect", required_argument, 0, 'c'},
        {"fault", required_argument, 0, 'f'}, {"list-faults", no_argument, 0, 'l'},
        {"reject", no_argument, 0, 'r'}, {"disc", required_argument, 0, 'd'},
        {"level", required_argument, 0, 'L'}, {"crc", required_argument, 0, 'C'},
        {"region-size", required_argument, 0, 'R'}, {"count", required_argument, 0, 'n'},
        {"size", required_argument, 0, 's'}, {"once", no_argument, 0, '1'},
        {"announce", no_argument, 0, 'a'}, {"grace", required_argument, 0, 'g'},
        {"linger", required_argument, 0, 'G'}, {"idle", required_argument, 0, 'I'},
        {"choice", required_argument, 0, 'K'}, {"list-choices", no_argument, 0, 'k'},
        {"reads", required_argument, 0, 'N'}, {"read-region", required_argument, 0, 'Q'},
        {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    struct opts o = {.port = -1, .disc = DEFAULT_DISC, .crc = "on", .region_size = 65536, .count = 1, .size = 64,
                     .grace_ms = DEFAULT_GRACE_MS, .idle_ms = DEFAULT_IDLE_MS, .read_len = 4096};
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
        switch (c) {
        case 'p':
            if ((o.port = tool_parse_port(optarg)) < 0) {
                fprintf(stderr, "vipl-peer: bad port '%s'\n", optarg);
                return 2;
            }
            break;
        case 'c': o.connect = optarg; break;
        case 'f':
            if ((o.fault = ViplFaultByName(optarg)) == VIPL_FAULT_NONE) {
                fprintf(stderr, "vipl-peer: unknown fault '%s' (see --list-faults)\n", optarg);
                return 2;
            }
            break;
        case 'l':
            for (unsigned f = 1; f < VIPL_FAULT_COUNT; f++)
                printf("%s %s\n", ViplFaultName((enum vipl_fault)f), ViplFaultReqId((enum vipl_fault)f));
            return tool_stdout_check("vipl-peer");
        case 'K':
            if (parse_choices(optarg, &o))
                return 2;
            break;
        case 'k':
            list_choices();
            return tool_stdout_check("vipl-peer");
        case 'r': o.reject = 1; break;
        case 'd':
            if (strlen(optarg) > 64) {
                fprintf(stderr, "vipl-peer: a discriminator has at most 64 bytes\n");
                return 2;
            }
            o.disc = optarg;
            break;
        case 'L':
            if (parse_level(optarg, &o.level)) {
                fprintf(stderr, "vipl-peer: --level must be u, rd or rr\n");
                return 2;
            }
            break;
        case 'C':
            if (strcmp(optarg, "on") && strcmp(optarg, "off")) {
                fprintf(stderr, "vipl-peer: --crc must be on or off\n");
                return 2;
            }
            o.crc = optarg;
            break;
        case 'R':
            if (parse_count(optarg, 1u << 26, &o.region_size) || o.region_size == 0) {
                fprintf(stderr, "vipl-peer: bad --region-size\n");
                return 2;
            }
            break;
        case 'n':
            if (parse_count(optarg, COUNT_MAX, &o.count)) {
                fprintf(stderr, "vipl-peer: bad --count '%s' (0..%u: at most one less than the %u receives "
                        "each side posts)\n", optarg, COUNT_MAX, NRECV);
                return 2;
            }
            break;
        case 's':
            if (parse_count(optarg, MSG_MAX, &o.size)) {
                fprintf(stderr, "vipl-peer: bad --size (at most %u)\n", MSG_MAX);
                return 2;
            }
            break;
        case '1': o.once = 1; break;
        case 'a': o.announce = 1; break;
        case 'I':
            if (parse_count(optarg, 3600000, &o.idle_ms)) {
                fprintf(stderr, "vipl-peer: bad --idle '%s' (milliseconds, 0 for never, at most 3600000)\n", optarg);
                return 2;
            }
            break;
        case 'G':
            if (parse_count(optarg, 600000, &o.linger_ms)) {
                fprintf(stderr, "vipl-peer: bad --linger (milliseconds, at most 600000)\n");
                return 2;
            }
            break;
        case 'g':
            if (parse_count(optarg, 600000, &o.grace_ms)) {
                fprintf(stderr, "vipl-peer: bad --grace (milliseconds, at most 600000)\n");
                return 2;
            }
            break;
        case 'N':
            if (parse_count(optarg, READS_MAX, &o.reads)) {
                fprintf(stderr, "vipl-peer: bad --reads '%s' (0..%u)\n", optarg, READS_MAX);
                return 2;
            }
            break;
        case 'Q':
            if (parse_read_region(optarg, &o)) {
                fprintf(stderr, "vipl-peer: bad --read-region '%s' (ADDR:HANDLE:LEN, hex, hex, 1..%u)\n", optarg,
                        READ_MAX);
                return 2;
            }
            break;
        case 'h': usage(stdout); return 0;
        default: /* getopt's own message would name the program by its path */
            fprintf(stderr, "vipl-peer: unknown option or missing value: %s\n", argv[optind > 1 ? optind - 1 : 1]);
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc || (o.port < 0) == (o.connect == NULL)) {
        fprintf(stderr, "vipl-peer: give exactly one of --port P or --connect HOST:PORT\n");
        usage(stderr);
        return 2;
    }
    if (o.reads && !o.connect) {
        fprintf(stderr, "vipl-peer: --reads needs --connect\n");
        return 2;
    }
    if (o.connect && !strchr(o.connect, ':')) {
        fprintf(stderr, "vipl-peer: --connect needs HOST:PORT\n");
        return 2;
    }
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    char dev[160];
    if (o.connect)
        snprintf(dev, sizeof dev, "127.0.0.1:0,crc=%s%s", o.crc, o.nic_opts);
    else
        snprintf(dev, sizeof dev, "0.0.0.0:%ld,crc=%s,grace=%lu%s", o.port, o.crc, o.grace_ms, o.nic_opts);
    struct tool_env env;
    VIP_RETURN rc = tool_open(&env, dev);
    if (rc != VIP_SUCCESS) {
        fprintf(stderr, "vipl-peer: cannot open NIC %s: %s\n", dev, ViplReturnName(rc));
        return 1;
    }
    struct peer_mem mem = {0};
    if (peer_mem_open(&env, o.region_size, o.connect != NULL, &mem)) {
        fprintf(stderr, "vipl-peer: cannot map and register the RDMA region and buffers\n");
        peer_mem_close(&env, &mem);
        tool_close(&env);
        return 1;
    }
    printf("event=region addr=0x%llx handle=%u len=%zu\n", (unsigned long long)(uintptr_t)mem.region.base,
           (unsigned)mem.region.mh, mem.region.len);
    fflush(stdout);
    ViplNicSetFault(env.nic, o.fault);
    VipErrorCallback(env.nic, NULL, on_async_error);
    int err = o.connect ? run_active(&env, &o, &mem) : run_passive(&env, &o, &mem);
    peer_mem_close(&env, &mem);
    tool_close(&env);
    /* after the close: asynchronous errors are delivered until then */
    unsigned lost = atomic_load(&lost_messages);
    if (o.connect && lost) {
        fprintf(stderr, "vipl-peer: %u message(s) arrived with no receive descriptor posted and were lost "
                "(VIP_ERROR_RECVQ_EMPTY)\n", lost);
        err = 1;
    }
    if (tool_stdout_check("vipl-peer") && !err)
        err = 1;
    return err;
}
