/*
 * ift-peer --connect: role A. Sends phase 0, waits for phase 1 (I7), then
 * runs the operation list --count times: a Send whose echo must come back
 * byte for byte, an RDMA Write into the target's region (--region), an
 * RDMA Read Request whose Read Response lands in this end's region and must
 * show what this client wrote there (bytes it never wrote are not compared).
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "peer.h"

#define QUEUE_HIGH (1u << 20) /* queue the next operation only below this */

struct pending {
    unsigned long k;
    size_t len;
    uint8_t *expect; /* reads: the bytes expected (NULL: none known) */
    uint8_t *known;  /* reads: which of them this client wrote */
};

struct client {
    const struct peer_opts *o;
    struct region own;
    uint8_t *shadow, *written; /* what this client wrote into the target's region */
    struct pending *q;         /* FIFO of sends and reads waiting for their answer */
    enum op_kind *qkind;
    size_t qhead, qlen, qcap;
    unsigned long next_op, total_ops;
    unsigned long sends, writes, reads, mismatches;
    bool ready;
};

static int push(struct client *cl, enum op_kind kind, unsigned long k, size_t len, uint8_t *expect, uint8_t *known)
{
    if (cl->qhead + cl->qlen == cl->qcap) {
        if (cl->qhead) {
            memmove(cl->q, cl->q + cl->qhead, cl->qlen * sizeof *cl->q);
            memmove(cl->qkind, cl->qkind + cl->qhead, cl->qlen * sizeof *cl->qkind);
            cl->qhead = 0;
        } else {
            size_t cap = cl->qcap ? cl->qcap * 2 : 64;
            struct pending *q = realloc(cl->q, cap * sizeof *q);
            if (q)
                cl->q = q;
            enum op_kind *kk = q ? realloc(cl->qkind, cap * sizeof *kk) : NULL;
            if (!q || !kk)
                return -1;
            cl->qkind = kk;
            cl->qcap = cap;
        }
    }
    size_t at = cl->qhead + cl->qlen++;
    cl->q[at] = (struct pending){k, len, expect, known};
    cl->qkind[at] = kind;
    return 0;
}

/* The oldest pending answer of this kind (answers of one kind come in order). */
static struct pending *oldest(struct client *cl, enum op_kind kind)
{
    for (size_t i = cl->qhead; i < cl->qhead + cl->qlen; i++)
        if (cl->qkind[i] == kind && cl->q[i].len != (size_t)-1)
            return &cl->q[i];
    return NULL;
}

static void retire(struct client *cl, struct pending *p)
{
    free(p->expect);
    free(p->known);
    p->expect = p->known = NULL;
    p->len = (size_t)-1;
    while (cl->qlen && cl->q[cl->qhead].len == (size_t)-1) {
        cl->qhead++;
        cl->qlen--;
    }
}

static int on_send(struct conn *c, const uint8_t *data, size_t len)
{
    struct client *cl = c->owner;
    struct pending *p = oldest(cl, OP_SEND);
    if (!p) {
        peer_event("event=unexpected conn=%u what=send len=%zu", c->id, len);
        cl->mismatches++;
        return -1;
    }
    size_t bad = len == p->len ? 0 : 1;
    for (size_t i = 0; !bad && i < len; i++)
        bad = data[i] != peer_pattern(p->k, i);
    peer_event("event=echo conn=%u op=send n=%lu len=%zu ok=%d", c->id, p->k, len, !bad);
    cl->mismatches += bad;
    retire(cl, p);
    return bad ? -1 : 0;
}

static int on_read_done(struct conn *c, uint64_t end_to, size_t seg_len)
{
    (void)seg_len;
    struct client *cl = c->owner;
    struct pending *p = oldest(cl, OP_READ);
    if (!p) {
        peer_event("event=unexpected conn=%u what=read-response", c->id);
        cl->mismatches++;
        return -1;
    }
    bool bad = end_to != cl->own.addr + p->len;
    size_t verified = 0;
    for (size_t i = 0; !bad && i < p->len; i++)
        if (p->known[i]) {
            bad = cl->own.mem[i] != p->expect[i];
            verified++;
        }
    peer_event("event=readback conn=%u n=%lu len=%zu verified=%zu ok=%d", c->id, p->k, p->len, verified, !bad);
    cl->mismatches += bad;
    retire(cl, p);
    return bad ? -1 : 0;
}

static void on_ready(struct conn *c) { ((struct client *)c->owner)->ready = true; }

static const struct conn_hooks hooks = {on_send, on_read_done, on_ready};

/* Queue client operation number k. */
static int queue_op(struct client *cl, struct conn *c, unsigned long k)
{
    const struct peer_opts *o = cl->o;
    const struct peer_op *op = &o->ops[k % o->nops];
    uint8_t *data = malloc(op->len ? op->len : 1);
    if (!data)
        return -1;
    for (size_t i = 0; i < op->len; i++)
        data[i] = peer_pattern(k, i);
    int rc = 0;
    switch (op->kind) {
    case OP_SEND:
        rc = push(cl, OP_SEND, k, op->len, NULL, NULL) || ic_send_message(c, data, op->len);
        cl->sends++;
        break;
    case OP_WRITE:
        rc = ic_write(c, o->peer_stag, o->peer_addr, data, op->len);
        memcpy(cl->shadow, data, op->len);
        memset(cl->written, 1, op->len);
        cl->writes++;
        peer_event("event=wrote conn=%u n=%lu to=0x%llx len=%zu", c->id, k, (unsigned long long)o->peer_addr, op->len);
        break;
    case OP_READ: {
        uint8_t *expect = malloc(op->len ? op->len : 1), *known = malloc(op->len ? op->len : 1);
        if (!expect || !known) {
            free(expect);
            free(known);
            rc = -1;
            break;
        }
        memcpy(expect, cl->shadow, op->len);
        memcpy(known, cl->written, op->len);
        memset(cl->own.mem, 0, op->len); /* what the response does not write stays visibly 0 */
        rc = push(cl, OP_READ, k, op->len, expect, known) ||
             ic_read_request(c, cl->own.stag, cl->own.addr, (uint32_t)op->len, o->peer_stag, o->peer_addr);
        cl->reads++;
        break;
    }
    }
    free(data);
    return rc ? -1 : 0;
}

static int dial(const char *hostport)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    if (!colon || (size_t)(colon - hostport) >= sizeof host || colon == hostport) {
        fprintf(stderr, "ift-peer: --connect needs HOST:PORT, not '%s'\n", hostport);
        return -1;
    }
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = '\0';
    size_t hl = strlen(host);
    if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') { /* [IPv6]:PORT */
        memmove(host, host + 1, hl - 2);
        host[hl - 2] = '\0';
    }
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res;
    int e = getaddrinfo(host, colon + 1, &hints, &res);
    if (e) {
        fprintf(stderr, "ift-peer: cannot resolve %s: %s\n", hostport, gai_strerror(e));
        return -1;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *a = res; a && fd < 0; a = a->ai_next) {
        fd = socket(a->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen)) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    if (fd < 0)
        fprintf(stderr, "ift-peer: cannot connect to %s: %s\n", hostport, strerror(err));
    return fd;
}

int peer_client_run(const struct peer_opts *o)
{
    int fd = dial(o->connect);
    if (fd < 0)
        return 1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    struct client cl = {.o = o, .total_ops = o->count * o->nops};
    cl.own = (struct region){o->region_addr, o->stag, o->region_size, calloc(o->region_size, 1)};
    cl.shadow = calloc(o->peer_len, 1);
    cl.written = calloc(o->peer_len, 1);
    struct conn c;
    bool as_b = (o->choices & CH_CONNECT_AS_B) != 0; /* node B although it connected */
    ic_init(&c, fd, 0, !as_b, o, &cl.own, &hooks, &cl);
    int rc = 1;
    if (!cl.own.mem || !cl.shadow || !cl.written) {
        fprintf(stderr, "ift-peer: no memory for the regions\n");
        goto out;
    }
    peer_event("event=region addr=0x%llx handle=%u len=%lu", (unsigned long long)cl.own.addr, cl.own.stag,
               o->region_size);
    peer_event("event=connected conn=0 peer=%s fault=%s", o->connect, ift_fault_name(o->fault));
    if (!as_b)
        ic_start(&c);
    if (o->fault == FAULT_EARLY_FRAMES)
        cl.ready = true; /* the fault: frames before phase 1 */
    bool shut = false;
    static uint8_t buf[65536];
    bool piped = false;
    while (!peer_stop) {
        if (cl.ready && !piped && (o->choices & CH_PIPELINE)) {
            /* a Send of its own, queued with the first operation: one TCP write (lines 332-333) */
            uint8_t extra[PEER_GREETING_LEN];
            for (size_t i = 0; i < sizeof extra; i++)
                extra[i] = peer_pattern(PEER_GREETING_K, i);
            if (push(&cl, OP_SEND, PEER_GREETING_K, sizeof extra, NULL, NULL) ||
                ic_send_message(&c, extra, sizeof extra)) {
                fprintf(stderr, "ift-peer: no memory for an operation\n");
                goto out;
            }
        }
        piped = piped || cl.ready;
        while (cl.ready && !c.failed && cl.next_op < cl.total_ops && c.out.len < QUEUE_HIGH)
            if (queue_op(&cl, &c, cl.next_op++)) {
                fprintf(stderr, "ift-peer: no memory for an operation\n");
                goto out;
            }
        if (ic_flush(&c)) {
            peer_event("event=closed conn=0 reason=send-failed");
            break;
        }
        if (c.failed)
            break;
        if (!shut && cl.ready && cl.next_op == cl.total_ops && cl.qlen == 0 && c.out.len == 0) {
            shutdown(fd, SHUT_WR); /* every answer is in: the target closes after its echoes */
            shut = true;
        }
        struct pollfd p = {fd, (short)(POLLIN | (c.out.len ? POLLOUT : 0)), 0};
        if (poll(&p, 1, 100) < 0 && errno != EINTR)
            break;
        if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = recv(fd, buf, sizeof buf, 0);
            if (r > 0) {
                ic_feed(&c, buf, (size_t)r);
            } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
                peer_event("event=closed conn=0 reason=%s", r == 0 ? "eof" : "reset");
                ic_finish(&c);
                break;
            }
        }
        if (peer_now_ms() - c.last_io_ms > (double)o->timeout_ms) {
            peer_event("event=timeout conn=0 after_ms=%lu", o->timeout_ms);
            break;
        }
    }
    bool ok = !c.failed && cl.ready && cl.next_op == cl.total_ops && cl.qlen == 0 && cl.mismatches == 0 && shut;
    peer_event("event=done conn=0 sends=%lu writes=%lu reads=%lu mismatches=%lu errors=%lu warnings=%lu ok=%d",
               cl.sends, cl.writes, cl.reads, cl.mismatches, c.errors, c.warnings, ok);
    rc = ok ? 0 : 1;
out:
    if (c.failed)
        ic_flush(&c);
    ic_close(&c);
    ic_free(&c);
    while (cl.qlen)
        retire(&cl, &cl.q[cl.qhead]);
    free(cl.q);
    free(cl.qkind);
    free(cl.own.mem);
    free(cl.shadow);
    free(cl.written);
    return rc;
}
