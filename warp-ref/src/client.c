/*
 * warp-peer --connect: a WARP traffic source that checks what comes back.
 * Plain mode sends the operations (Sends, RDMA Writes into the target's
 * announced region), --count times, and expects every Send echoed as one
 * Send, in order, and every RDMA Write echoed as an RDMA Write of the same
 * bytes to the same RID and offset (W6), which lands in a region of its own
 * with the target's RID, base and length. --iscsi runs READ/WRITE tasks as
 * the initiator. Everything received goes through the same checks as on the
 * target; exit status 0 only if every echo matched and no rule broke.
 */
#include <errno.h>
#include <stdarg.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <fcntl.h>
#include "conn.h"
#include "peer.h"
#include "vitcp/warp.h"

#define QUEUE_AHEAD (1u << 20) /* bytes queued before the next operation waits */

struct expect {
    unsigned long k;
    uint64_t offset; /* RDMA */
    size_t len;
};

struct client {
    const struct peer_opts *o;
    struct conn conn;
    struct peer_region region;
    unsigned long total, queued;
    struct expect *sends, *rdmas;
    size_t nsends, nrdmas, sends_seen, rdmas_seen, rdmas_queued;
    unsigned long mismatches;
};

static const struct peer_op *op_of(const struct client *cl, unsigned long k)
{
    return &cl->o->ops[k % cl->o->nops];
}

static void mismatch(struct client *cl, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void mismatch(struct client *cl, const char *rule, const char *fmt, ...)
{
    char detail[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    peer_event("event=mismatch conn=%u rule=%s detail=%s", cl->conn.id, rule, detail);
    cl->mismatches++;
}

static bool same_data(unsigned long k, const uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (p[i] != peer_pattern(k, i))
            return false;
    return true;
}

static int on_send_echo(struct conn *c, const uint8_t *data, size_t len, uint32_t ssn, uint16_t flags)
{
    (void)ssn, (void)flags;
    struct client *cl = c->owner;
    if (cl->sends_seen >= cl->nsends) {
        mismatch(cl, "WARP-INTRO-SEND-IN-ORDER", "a Send echo after all %zu Sends came back (%zu bytes)", cl->nsends, len);
        return -1;
    }
    const struct expect *e = &cl->sends[cl->sends_seen++];
    if (len == e->len && same_data(e->k, data, len)) {
        peer_event("event=echo conn=%u op=send n=%lu len=%zu ok=1", c->id, e->k, len);
        return 0;
    }
    /* an echo of a later Send says the order broke, anything else the content */
    for (size_t j = cl->sends_seen; j < cl->nsends; j++)
        if (cl->sends[j].len == len && same_data(cl->sends[j].k, data, len)) {
            mismatch(cl, "WARP-INTRO-SEND-IN-ORDER", "Send %lu expected, Send %lu came back (%zu bytes)", e->k,
                     cl->sends[j].k, len);
            return -1;
        }
    mismatch(cl, "WARP-INTRO-FRAGMENT-REASSEMBLE", "the echo of Send %lu (%zu bytes) has %zu bytes or other content",
             e->k, e->len, len);
    return -1;
}

static int on_rdma_echo(struct conn *c, struct peer_region *r, uint64_t at, uint64_t offset, size_t len,
                        uint16_t flags)
{
    (void)flags;
    struct client *cl = c->owner;
    if (cl->rdmas_seen >= cl->nrdmas) {
        mismatch(cl, "WARP-INTRO-FRAGMENT-REASSEMBLE", "an RDMA echo after all %zu came back (%zu bytes)", cl->nrdmas, len);
        return -1;
    }
    const struct expect *e = &cl->rdmas[cl->rdmas_seen++];
    if (offset != e->offset || len != e->len || !same_data(e->k, r->mem + at, len)) {
        mismatch(cl, "WARP-INTRO-FRAGMENT-REASSEMBLE",
                 "the echo of RDMA Write %lu (%zu bytes) came back as %zu bytes at another offset or with other content",
                 e->k, e->len, len);
        return -1;
    }
    peer_event("event=echo conn=%u op=rdma n=%lu offset=0x%llx len=%zu ok=1", c->id, e->k,
               (unsigned long long)offset, len);
    return 0;
}

static const struct conn_handlers echo_check_handlers = {on_send_echo, on_rdma_echo};

/* Every operation's expected echo, and where its RDMA Write goes. */
static int plan(struct client *cl)
{
    const struct peer_opts *o = cl->o;
    cl->total = o->nops * o->count;
    cl->sends = calloc(cl->total + 1, sizeof *cl->sends);
    cl->rdmas = calloc(cl->total + 1, sizeof *cl->rdmas);
    if (!cl->sends || !cl->rdmas)
        return -1;
    uint64_t cursor = 0;
    for (unsigned long k = 0; k < cl->total; k++) {
        const struct peer_op *op = op_of(cl, k);
        if (op->type == VW_WARP_SEND) {
            cl->sends[cl->nsends++] = (struct expect){k, 0, op->len};
            continue;
        }
        if (cursor + op->len > cl->region.r.len)
            cursor = 0;
        cl->rdmas[cl->nrdmas++] = (struct expect){k, cl->region.r.base + cursor, op->len};
        cursor += op->len;
    }
    return 0;
}

/* The tx_pdu of operation k, its data in *buf (freed by the caller). */
static int make_pdu(struct client *cl, unsigned long k, struct tx_pdu *p, uint8_t **buf)
{
    const struct peer_op *op = op_of(cl, k);
    *buf = malloc(op->len ? op->len : 1);
    if (!*buf)
        return -1;
    for (size_t i = 0; i < op->len; i++)
        (*buf)[i] = peer_pattern(k, i);
    unsigned long every = cl->o->completion_every;
    memset(p, 0, sizeof *p);
    p->type = op->type;
    p->data = *buf;
    p->len = op->len;
    p->flags = every && (k + 1) % every == 0 ? VW_WARP_FLAG_C : 0;
    if (op->type == VW_WARP_RDMA) {
        p->rid = cl->region.r.rid;
        p->offset = cl->rdmas[cl->rdmas_queued++].offset; /* queued in k order */
    }
    return 0;
}

/* Queue operations while less than QUEUE_AHEAD bytes wait (two at a time
 * with --mix when a Send and an RDMA Write follow each other). */
static int queue_ops(struct client *cl)
{
    while (cl->queued < cl->total && cl->conn.out.len < QUEUE_AHEAD) {
        unsigned long k = cl->queued;
        struct tx_pdu a, b;
        uint8_t *da = NULL, *db = NULL;
        int rc = make_pdu(cl, k, &a, &da);
        bool pair = !rc && cl->o->mix && k + 1 < cl->total && op_of(cl, k + 1)->type != a.type;
        if (pair)
            rc = make_pdu(cl, k + 1, &b, &db);
        if (!rc)
            rc = pair ? tx_mixed(&cl->conn.tx, &cl->conn.out, &a, &b) : tx_pdu(&cl->conn.tx, &cl->conn.out, &a);
        for (unsigned long j = k; !rc && j <= k + pair; j++)
            peer_event("event=sent conn=%u op=%s n=%lu len=%zu", cl->conn.id,
                       op_of(cl, j)->type == VW_WARP_SEND ? "send" : "rdma", j, op_of(cl, j)->len);
        free(da);
        free(db);
        if (rc)
            return -1;
        cl->queued += 1 + pair;
    }
    return 0;
}

static int dial(const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    size_t hl = colon ? (size_t)(colon - hostport) : 0;
    if (!colon || hl == 0 || hl >= sizeof host)
        return -1;
    memcpy(host, hostport, hl);
    host[hl] = 0;
    if (host[0] == '[' && host[hl - 1] == ']') { /* [v6]:port */
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = 0;
    }
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *res;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
        return -1;
    int fd = -1;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd >= 0) {
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    return fd;
}

static bool all_back(const struct client *cl, const struct iscsi_initiator *in)
{
    if (cl->o->iscsi)
        return in->next >= in->ntasks && !in->busy;
    return cl->queued == cl->total && cl->sends_seen == cl->nsends && cl->rdmas_seen == cl->nrdmas;
}

/* Poll until every echo is back, the target closes, a check fails or
 * nothing arrives for --timeout. */
static void exchange(struct client *cl, struct iscsi_initiator *in)
{
    struct conn *c = &cl->conn;
    static uint8_t buf[65536];
    while (!peer_stop && !c->failed && !all_back(cl, in)) {
        if (!cl->o->iscsi && queue_ops(cl)) {
            peer_event("event=error conn=%u reason=limit detail=no memory to queue an operation", c->id);
            c->failed = true;
            break;
        }
        struct pollfd p = {c->fd, (short)(POLLIN | (c->out.len ? POLLOUT : 0)), 0};
        int n = poll(&p, 1, 100);
        if (n < 0 && errno != EINTR)
            break;
        if (n > 0 && (p.revents & POLLOUT) && peer_conn_flush(c, cl->o->split)) {
            peer_event("event=closed conn=%u reason=send-failed", c->id);
            c->failed = true;
            break;
        }
        if (c->tx.close_now && !c->out.len) { /* fault close-mid-pdu: the cut PDU is out */
            peer_event("event=closed conn=%u reason=fault-close-mid-pdu", c->id);
            c->failed = true;
            break;
        }
        if (n > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR))) {
            ssize_t r = recv(c->fd, buf, sizeof buf, 0);
            if (r > 0) {
                peer_conn_feed(c, buf, (size_t)r);
                continue;
            }
            if (r < 0 && (errno == EAGAIN || errno == EINTR))
                continue;
            peer_conn_finish(c);
            peer_event("event=closed conn=%u reason=%s", c->id, r == 0 ? "eof" : "reset");
            c->failed = true;
            break;
        }
        if (peer_now_ms() - c->last_io_ms > (double)cl->o->timeout_ms) {
            peer_event("event=timeout conn=%u ms=%lu", c->id, cl->o->timeout_ms);
            peer_conn_finish(c); /* what is still open now stays open */
            c->failed = true;
        }
    }
}

int peer_client_run(const struct peer_opts *o)
{
    struct client cl;
    memset(&cl, 0, sizeof cl);
    cl.o = o;
    struct iscsi_initiator in = {.tasks = o->tasks, .ntasks = o->ntasks, .cmdsn = 1};
    /* plain: a copy of the target's region; iSCSI: zero-based, RID = the task's ITT */
    uint64_t len = o->region_len;
    if (o->iscsi)
        for (size_t i = 0; i < o->ntasks; i++)
            len = o->tasks[i].len > len ? o->tasks[i].len : len;
    cl.region.r = (struct vw_warp_region){o->iscsi ? 0 : o->region_handle, o->iscsi ? 0 : o->region_addr, len};
    cl.region.mem = calloc(len ? len : 1, 1);
    int fd = cl.region.mem && !plan(&cl) ? dial(o->connect) : -2;
    if (fd < 0) {
        fprintf(stderr, "warp-peer: %s %s\n", fd == -2 ? "no memory for" : "cannot connect to", o->connect);
        free(cl.region.mem);
        free(cl.sends);
        free(cl.rdmas);
        return 2;
    }
    peer_conn_init(&cl.conn, fd, 0, o->iscsi ? &iscsi_initiator_handlers : &echo_check_handlers,
              o->iscsi ? (void *)&in : (void *)&cl, &cl.region, 1, o->max_pdu, o->iscsi);
    cl.conn.tx.frag = o->frag;
    cl.conn.tx.fault = o->fault;
    peer_tx_choices(&cl.conn, &o->choices, o->iscsi);
    cl.conn.tx.region_len = cl.region.r.len;
    peer_event("event=connected conn=0 target=%s fault=%s mode=%s", o->connect, warp_fault_name(o->fault),
               o->iscsi ? "iscsi" : "echo");
    if (o->iscsi && iscsi_initiator_next(&cl.conn))
        cl.conn.failed = true;
    exchange(&cl, &in);
    bool done = all_back(&cl, &in);
    /* flush what the last answer queued (a write's Data-Out needs no reply) */
    for (int i = 0; i < 50 && cl.conn.out.len && !peer_stop; i++) {
        struct pollfd p = {fd, POLLOUT, 0};
        if (poll(&p, 1, 100) > 0 && peer_conn_flush(&cl.conn, 0))
            break;
    }
    bool ok = done && !cl.conn.errors && !cl.conn.warnings && !cl.mismatches && !in.failed;
    if (o->iscsi)
        peer_event("event=done conn=0 tasks=%lu failed=%lu errors=%lu warnings=%lu completions=%lu ok=%d", in.ok,
                   in.failed, cl.conn.errors, cl.conn.warnings, cl.conn.completions, ok);
    else
        peer_event("event=done conn=0 sends=%zu rdma=%zu mismatches=%lu errors=%lu warnings=%lu completions=%lu ok=%d",
                   cl.sends_seen, cl.rdmas_seen, cl.mismatches, cl.conn.errors, cl.conn.warnings,
                   cl.conn.completions, ok);
    close(fd);
    peer_conn_free(&cl.conn);
    free(cl.region.mem);
    free(cl.sends);
    free(cl.rdmas);
    return ok ? 0 : 1;
}
