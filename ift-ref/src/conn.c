/*
 * One IFT connection of ift-peer, either role (peer.h). Received bytes go
 * through the wire library's framer (the sender's indication, then frames
 * sized by its HC/PC and checked against our VTag); the indications through
 * vw_ift_nego. A PDU that breaks a rule the I8 reactions name is reported as
 * "event=error conn=N rule=ID detail=..." and closes the connection with RST
 * before any byte of it is placed; other findings are reported as
 * "event=finding ...". Frames are written with vw_ift_frame_enc (faults
 * change one field), DDP headers with vw_ddp_encode.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include "peer.h"
#include "vitcp/checksum.h"

#define SIDE_A 0
#define SIDE_B 1

void peer_event(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

double peer_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

uint16_t peer_random_vtag(void)
{
    uint16_t v = 0;
    if (getrandom(&v, sizeof v, 0) != (ssize_t)sizeof v)
        v = (uint16_t)(peer_now_ms() * 1000.0); /* no entropy: still differs per connection */
    return v;
}

/* ------------------------------------------------------------ output */

static int outq_put(struct outq *q, const uint8_t *p, size_t n)
{
    if (q->head + q->len + n > q->cap) {
        if (q->head) { /* compact before growing */
            memmove(q->buf, q->buf + q->head, q->len);
            q->head = 0;
        }
        if (q->len + n > q->cap) {
            size_t cap = q->cap ? q->cap : 65536;
            while (cap < q->len + n)
                cap *= 2;
            uint8_t *b = realloc(q->buf, cap);
            if (!b) {
                q->oom = true;
                return -1;
            }
            q->buf = b;
            q->cap = cap;
        }
    }
    memcpy(q->buf + q->head + q->len, p, n);
    q->len += n;
    return 0;
}

int ic_flush(struct conn *c)
{
    while (c->out.len) {
        /* choice trickle=N: writes of at most N bytes, each its own TCP segment (TCP_NODELAY) */
        size_t n = c->o->trickle && c->out.len > c->o->trickle ? c->o->trickle : c->out.len;
        ssize_t w = send(c->fd, c->out.buf + c->out.head, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                return 0;
            if (errno == EINTR)
                continue;
            return -1;
        }
        c->out.head += (size_t)w;
        c->out.len -= (size_t)w;
        c->last_io_ms = peer_now_ms();
    }
    c->out.head = 0;
    return 0;
}

static int fail(struct conn *c, enum vw_req rule, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(struct conn *c, enum vw_req rule, const char *fmt, ...)
{
    if (c->failed)
        return -1;
    char detail[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    /* RDMAP errors (RFC 5040) have no IFT requirement: rule=RDMAP */
    peer_event("event=error conn=%u rule=%s detail=%s", c->id, rule == VW_REQ_NONE ? "RDMAP" : vw_req_id(rule),
               detail);
    c->errors++;
    c->failed = true;
    c->rst = true;
    return -1;
}

static void report(struct conn *c, const struct vw_finding *f)
{
    peer_event("event=finding conn=%u rule=%s severity=%s detail=%s", c->id, vw_req_id(f->req),
               vw_severity_name(f->severity), f->detail);
    if (f->severity >= VW_SEV_WARN)
        c->warnings++;
}

/* ------------------------------------------------------------ setup */

void ic_init(struct conn *c, int fd, unsigned id, bool is_a, const struct peer_opts *o, struct region *r,
               const struct conn_hooks *hooks, void *owner)
{
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->id = id;
    c->is_a = is_a;
    c->o = o;
    c->region = r;
    c->hooks = hooks;
    c->owner = owner;
    c->flags = o->flags & ~VW_IFT_FLAG_PH;
    c->vtag = o->fault == FAULT_FIXED_VTAG ? PEER_FIXED_VTAG : o->vtag_set ? o->vtag : peer_random_vtag();
    c->tx_hc = c->flags & VW_IFT_FLAG_HC;
    c->tx_pc = c->flags & VW_IFT_FLAG_PC;
    for (int q = 0; q < 3; q++)
        c->tx_msn[q] = c->rx_msn[q] = 1; /* RFC 5041: the first MSN of each queue is 1 */
    vw_ift_nego_init(&c->nego);
    vw_ift_framer_init(&c->rx, true);
    vw_ift_framer_set_vtag(&c->rx, c->vtag);
    c->last_io_ms = peer_now_ms();
}

void ic_free(struct conn *c)
{
    vw_ift_framer_free(&c->rx);
    free(c->msg);
    free(c->out.buf);
    c->msg = NULL;
    c->out.buf = NULL;
}

void ic_close(struct conn *c)
{
    if (c->fd < 0)
        return;
    if (c->rst && !(c->o->choices & CH_CLOSE_FIN)) { /* I8: close in error, RST (choice close-fin: FIN) */
        struct linger lg = {1, 0};
        setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
    close(c->fd);
    c->fd = -1;
}

/* ------------------------------------------------------------ sending */

static void send_indication(struct conn *c)
{
    const struct peer_opts *o = c->o;
    unsigned phase = c->is_a ? 0u : 1u;
    if (o->fault == FAULT_WRONG_PHASE)
        phase ^= 1u;
    struct vw_ift_ind_enc e;
    vw_ift_ind_enc_init(&e, phase, c->vtag, c->tx_hc, c->tx_pc);
    e.flags = c->flags | (phase ? VW_IFT_FLAG_PH : 0u);
    if (o->choices & CH_NEWER_VERSION)
        e.version = 2; /* a later version, backward compatible with 1 (BC Version 1) */
    uint8_t reserved[VW_IFT_IND_RESERVED_LEN] = {0};
    switch (o->fault) {
    case FAULT_BAD_MAGIC: e.magic = VW_IFT_MAGIC + 1u; break;
    case FAULT_VERSION_0: e.version = 0; break;
    case FAULT_BC_VERSION: e.bc_version = 0; break;
    case FAULT_BAD_IND_CRC: e.crc = VW_IFT_CRC_BAD; break;
    case FAULT_RESERVED_BITS:
        e.flags |= 0x000001u;
        reserved[0] = 0x5A;
        e.reserved = reserved;
        break;
    default: break;
    }
    uint8_t b[VW_IFT_IND_LEN];
    vw_ift_ind_encode(&e, b, sizeof b);
    outq_put(&c->out, b, sizeof b);
    struct vw_ift_ind ind;
    if (vw_ift_ind_decode(b, sizeof b, &ind, NULL) == VW_REQ_NONE)
        vw_ift_nego_indication(&c->nego, c->is_a ? SIDE_A : SIDE_B, &ind, NULL);
    char fl[96];
    peer_event("event=indication conn=%u dir=tx phase=%u version=%u bc=%u flags=%s vtag=0x%04x", c->id, phase,
               e.version, e.bc_version, vw_ift_flags_str(e.flags, fl, sizeof fl), c->vtag);
    c->ind_sent = true;
}

void ic_start(struct conn *c)
{
    send_indication(c);
}

/* One frame carrying one DDP segment, faults applied. */
static int tx_frame(struct conn *c, struct vw_ddp_hdr *h, const uint8_t *payload, size_t len)
{
    const struct peer_opts *o = c->o;
    h->dv = VW_DDP_VERSION;
    h->rdmap_rv = (o->fault == FAULT_RDMAP_VERSION) ? 0 : h->rdmap_rv;
    uint8_t ddp[VW_DDP_UNTAGGED_HDR_LEN + VW_RDMAP_READ_REQ_HDR_LEN];
    size_t dn = vw_ddp_encode(h, ddp, sizeof ddp);
    /* fault rdma-hdr-in-header: the Read Request's RDMAP header moves into header_size */
    if (o->fault == FAULT_RDMA_HDR_IN_HDR && !h->tagged && h->rdmap_opcode == VW_RDMAP_READ_REQUEST &&
        len == VW_RDMAP_READ_REQ_HDR_LEN) {
        memcpy(ddp + dn, payload, len);
        dn += len;
        len = 0;
    }
    uint16_t vtag = c->peer_ind ? c->peer.vtag : 0;
    if (o->fault == FAULT_WRONG_VTAG)
        vtag = (uint16_t)(vtag + 1u);
    struct vw_ift_frame_enc e;
    vw_ift_frame_enc_init(&e, vtag, c->tx_hc, c->tx_pc, ddp, dn, payload, len);
    switch (o->fault) {
    case FAULT_BAD_HDR_CRC: e.hdr_crc = VW_IFT_CRC_BAD; break;
    case FAULT_BAD_PAYLOAD_CRC: e.payload_crc = VW_IFT_CRC_BAD; break;
    case FAULT_OMIT_CRC:
        if (c->tx_hc)
            e.hdr_crc = VW_IFT_CRC_OMIT;
        else
            e.payload_crc = VW_IFT_CRC_OMIT;
        break;
    default: break;
    }
    uint8_t fr[VW_IFT_FRAME_HDR_LEN + sizeof ddp + 2 * VW_IFT_CRC_LEN + PEER_FRAG_MAX];
    size_t n = vw_ift_frame_encode(&e, fr, sizeof fr);
    if (n == 0 || outq_put(&c->out, fr, n)) {
        fail(c, VW_REQ_NONE, "no memory for a frame");
        return -1;
    }
    return 0;
}

/* Untagged message on queue qn (Send, Read Request, Terminate), cut at --frag. */
static int tx_untagged(struct conn *c, uint32_t qn, uint8_t opcode, uint8_t byte1, bool ddp_mode, const uint8_t *data,
                       size_t len)
{
    size_t off = 0;
    uint32_t msn = c->tx_msn[qn]++;
    do {
        size_t n = len - off < c->o->frag ? len - off : c->o->frag;
        struct vw_ddp_hdr h = {.tagged = false, .last = off + n == len, .rdmap_rv = VW_RDMAP_VERSION,
                               .rdmap_opcode = opcode, .qn = qn, .msn = msn, .mo = (uint32_t)off};
        if (ddp_mode) { /* DDP mode: byte 1 is the ULP's, echoed as it came */
            h.rdmap_rv = (uint8_t)(byte1 >> 6);
            h.rdmap_opcode = byte1 & 0x0Fu;
        }
        if (tx_frame(c, &h, data + off, n))
            return -1;
        off += n;
    } while (off < len);
    return 0;
}

static int tx_tagged(struct conn *c, uint8_t opcode, uint32_t stag, uint64_t to, const uint8_t *data, size_t len)
{
    size_t off = 0;
    do {
        size_t n = len - off < c->o->frag ? len - off : c->o->frag;
        struct vw_ddp_hdr h = {.tagged = true, .last = off + n == len, .rdmap_rv = VW_RDMAP_VERSION,
                               .rdmap_opcode = opcode, .stag = stag, .to = to + off};
        if (tx_frame(c, &h, data + off, n))
            return -1;
        off += n;
    } while (off < len);
    return 0;
}

int ic_send_message(struct conn *c, const uint8_t *data, size_t len)
{
    return tx_untagged(c, 0, VW_RDMAP_SEND, 0, false, data, len);
}

int ic_write(struct conn *c, uint32_t stag, uint64_t to, const uint8_t *data, size_t len)
{
    return tx_tagged(c, VW_RDMAP_WRITE, stag, to, data, len);
}

int ic_read_request(struct conn *c, uint32_t sink_stag, uint64_t sink_to, uint32_t size, uint32_t src_stag,
                      uint64_t src_to)
{
    struct vw_rdmap_read_req rq = {sink_stag, sink_to, size, src_stag, src_to};
    uint8_t b[VW_RDMAP_READ_REQ_HDR_LEN];
    vw_rdmap_read_req_encode(&rq, b, sizeof b);
    return tx_untagged(c, 1, VW_RDMAP_READ_REQUEST, 0, false, b, sizeof b);
}

/* ------------------------------------------------------------ receiving */

static bool in_region(const struct region *r, uint32_t stag, uint64_t to, size_t len)
{
    return stag == r->stag && to >= r->addr && to - r->addr <= r->len && len <= r->len - (to - r->addr);
}

/* The peer's indication: the I8 reactions, then (B) the answer. */
static void on_indication(struct conn *c, const struct vw_ift_pdu *pdu, enum vw_req err,
                          const struct vw_findings *framer_fs)
{
    const struct peer_opts *o = c->o;
    const struct vw_ift_ind *ind = &pdu->ind;
    if (err != VW_REQ_NONE) {
        fail(c, err, "the peer's adaption indication cannot be parsed");
        return;
    }
    struct vw_findings fs = *framer_fs;
    vw_ift_nego_indication(&c->nego, c->is_a ? SIDE_B : SIDE_A, ind, &fs);
    char fl[96];
    peer_event("event=indication conn=%u dir=rx phase=%u version=%u bc=%u flags=%s vtag=0x%04x crc=%s", c->id,
               vw_ift_ind_phase(ind), ind->version, ind->bc_version, vw_ift_flags_str(ind->flags, fl, sizeof fl),
               ind->vtag, ind->crc_ok ? "ok" : "bad");
    c->peer = *ind;
    c->peer.reserved = NULL;
    bool incompatible = ind->bc_version > VW_IFT_BC_VERSION;
    enum vw_req fatal = vw_ift_ind_fatal(ind);
    if (incompatible && o->fault == FAULT_ANSWER_INCOMPATIBLE && !c->is_a) {
        /* the fault: answer it, then end the connection quietly (frames cannot be framed) */
        send_indication(c);
        c->eof = true;
        return;
    }
    /* the reaction faults (I20): B answers what it must refuse */
    if (!c->is_a && fatal == VW_REQ_IFT_4_2_IND_CRC && o->fault == FAULT_ANSWER_BAD_IND_CRC)
        fatal = VW_REQ_NONE;
    if (fatal != VW_REQ_NONE) {
        fail(c, fatal, "%s", fatal == VW_REQ_IFT_4_2_IND_CRC      ? "bad indication CRC: closed (I8)"
                             : fatal == VW_REQ_IFT_4_1_MAGIC       ? "bad magic: closed (I8)"
                                                                   : "BC version above 1: incompatible, rejected (I8)");
        return;
    }
    /* errors in the indication itself (Version 0, BC version of a version 1, phase) */
    for (unsigned i = 0; i < fs.count; i++)
        if (fs.item[i].severity == VW_SEV_ERROR && fs.item[i].req != VW_REQ_IFT_4_2_BC_VERSION_REJECT &&
            !(!c->is_a && fs.item[i].req == VW_REQ_IFT_4_2_VERSION && o->fault == FAULT_ANSWER_VERSION_0) &&
            !(!c->is_a && fs.item[i].req == VW_REQ_IFT_4_2_PHASE && o->fault == FAULT_ANSWER_PHASE_1) &&
            !(!c->is_a && fs.item[i].req == VW_REQ_IFT_4_2_IND_CRC && o->fault == FAULT_ANSWER_BAD_IND_CRC)) {
            fail(c, fs.item[i].req, "%s", fs.item[i].detail);
            return;
        }
    for (unsigned i = 0; i < fs.count; i++)
        if (fs.item[i].req != VW_REQ_IFT_4_2_R_AGREE)
            report(c, &fs.item[i]);
    if ((o->choices & CH_REFUSE_NEWER) && ind->version > VW_IFT_VERSION) {
        fail(c, VW_REQ_IFT_4_2_NEWER_VERSION_ACCEPTED, "Version %u refused: this end's choice (choice "
             "refuse-newer-version; \"need not be rejected\")", ind->version);
        return;
    }
    /* what this end accepts of the peer's CRC choices (--require) */
    uint32_t f = ind->flags;
    static const struct {
        unsigned req;
        uint32_t flag;
        bool want;
        enum vw_req rule;
        const char *what;
    } policy[] = {
        {REQ_HC, VW_IFT_FLAG_HC, true, VW_REQ_IFT_4_2_HC_ACCEPTABLE, "no header CRC offered; this end requires one"},
        {REQ_NO_HC, VW_IFT_FLAG_HC, false, VW_REQ_IFT_4_2_HC_ACCEPTABLE, "header CRC offered; this end refuses them"},
        {REQ_PC, VW_IFT_FLAG_PC, true, VW_REQ_IFT_4_2_PC_ACCEPTABLE, "no payload CRC offered; this end requires one"},
        {REQ_NO_PC, VW_IFT_FLAG_PC, false, VW_REQ_IFT_4_2_PC_ACCEPTABLE, "payload CRC offered; this end refuses them"},
        {REQ_CHECKED_HC, VW_IFT_FLAG_IH, false, VW_REQ_IFT_4_2_IH_ACCEPTABLE, "IH: the peer ignores our header CRCs"},
        {REQ_CHECKED_PC, VW_IFT_FLAG_IP, false, VW_REQ_IFT_4_2_IP_ACCEPTABLE, "IP: the peer ignores our payload CRCs"},
    };
    for (size_t i = 0; i < sizeof policy / sizeof policy[0]; i++)
        if ((o->require & policy[i].req) && !!(f & policy[i].flag) != policy[i].want) {
            if ((o->choices & CH_ABORT_LATE) && !c->is_a) /* the draft sets no time for the abort */
                send_indication(c);
            fail(c, policy[i].rule, "%s: aborted", policy[i].what);
            return;
        }
    c->peer_ind = true;
    bool disagree = (f ^ c->flags) & VW_IFT_FLAG_R;
    if (!c->is_a)
        send_indication(c); /* I8: B answers phase 1 even when the R bits disagree, then closes */
    if (disagree && o->fault != FAULT_IGNORE_R_DISAGREE) {
        fail(c, VW_REQ_IFT_4_2_R_AGREE, "R=%u here, R=%u from the peer: closed in error", !!(c->flags & VW_IFT_FLAG_R),
             !!(f & VW_IFT_FLAG_R));
        return;
    }
    c->r_disagree = disagree;
    c->ready = true;
    peer_event("event=negotiated conn=%u mode=%s tx_crc=%s%s rx_crc=%s%s vtag=0x%04x peer_vtag=0x%04x", c->id,
               disagree ? "none" : (f & VW_IFT_FLAG_R) ? "rdma" : "ddp", c->tx_hc ? "H" : "-", c->tx_pc ? "P" : "-",
               (f & VW_IFT_FLAG_HC) ? "H" : "-", (f & VW_IFT_FLAG_PC) ? "P" : "-", c->vtag, ind->vtag);
    if (c->hooks && c->hooks->on_ready)
        c->hooks->on_ready(c);
    if ((o->choices & CH_GREET) && !c->is_a && !disagree) {
        /* B may send right after its phase 1 (lines 129-132, I7): a message of its own */
        uint8_t hello[PEER_GREETING_LEN];
        for (size_t i = 0; i < sizeof hello; i++)
            hello[i] = peer_pattern(PEER_GREETING_K, i);
        tx_untagged(c, 0, VW_RDMAP_SEND, 0, !vw_ift_nego_rdma(&c->nego), hello, sizeof hello);
    }
}

/* A Send message (or, in DDP mode, an untagged message) is whole. */
static int message_done(struct conn *c)
{
    c->sends++;
    peer_event("event=send conn=%u qn=%u msn=%u len=%zu", c->id, c->msg_qn, c->rx_msn[c->msg_qn] - 1u, c->msg_len);
    if (c->hooks && c->hooks->on_send)
        return c->hooks->on_send(c, c->msg, c->msg_len);
    /* a target echoes it, so that a tester sees what arrived */
    bool ddp_mode = !vw_ift_nego_rdma(&c->nego);
    return tx_untagged(c, c->msg_qn, VW_RDMAP_SEND, c->msg_byte1, ddp_mode, c->msg, c->msg_len);
}

static int on_untagged(struct conn *c, const struct vw_ift_frame *fr, bool rdma)
{
    const struct vw_ddp_hdr *h = &fr->ddp_hdr;
    uint8_t op = rdma ? h->rdmap_opcode : VW_RDMAP_SEND;
    uint32_t qn = h->qn;
    if (rdma && (op == VW_RDMAP_SEND || op == VW_RDMAP_SEND_SE) && qn != 0)
        return fail(c, VW_REQ_NONE, "%s on queue %u, expected 0", vw_rdmap_opcode_name(op), qn);
    if (rdma && op == VW_RDMAP_READ_REQUEST && qn != 1)
        return fail(c, VW_REQ_NONE, "RDMA Read Request on queue %u, expected 1", qn);
    if (qn > 2)
        return fail(c, VW_REQ_NONE, "untagged segment on queue %u (0..2 exist)", qn);
    if (h->msn != c->rx_msn[qn])
        return fail(c, VW_REQ_NONE, "MSN %u on queue %u, expected %u", h->msn, qn, c->rx_msn[qn]);
    if (rdma && op == VW_RDMAP_TERMINATE) {
        peer_event("event=terminate conn=%u len=%u", c->id, fr->payload_size);
        c->rx_msn[qn]++;
        return fail(c, VW_REQ_NONE, "the peer sent Terminate");
    }
    if (rdma && op == VW_RDMAP_READ_REQUEST) {
        struct vw_rdmap_read_req rq;
        if (h->mo != 0 || !h->last || !vw_rdmap_read_req_decode(fr->payload, fr->payload_size, &rq) ||
            fr->payload_size != VW_RDMAP_READ_REQ_HDR_LEN)
            return fail(c, VW_REQ_NONE, "RDMA Read Request of %u payload bytes (MO %u, L %u): one 28-byte segment expected",
                        fr->payload_size, h->mo, h->last);
        c->rx_msn[qn]++;
        c->reads++;
        peer_event("event=read-request conn=%u sink_stag=0x%x sink_to=0x%llx len=%u src_stag=0x%x src_to=0x%llx", c->id,
                   rq.sink_stag, (unsigned long long)rq.sink_to, rq.size, rq.src_stag, (unsigned long long)rq.src_to);
        if (!in_region(c->region, rq.src_stag, rq.src_to, rq.size))
            return fail(c, VW_REQ_NONE, "RDMA Read of %u bytes at 0x%llx, STag 0x%x: outside the region", rq.size,
                        (unsigned long long)rq.src_to, rq.src_stag);
        const uint8_t *src = c->region->mem + (rq.src_to - c->region->addr);
        return tx_tagged(c, VW_RDMAP_READ_RESPONSE, rq.sink_stag, rq.sink_to, src, rq.size);
    }
    if (rdma && op != VW_RDMAP_SEND && op != VW_RDMAP_SEND_SE)
        return fail(c, VW_REQ_NONE, "%s (opcode %u) is not served", vw_rdmap_opcode_name(op), op);
    /* Send (or a DDP-mode message): reassembled by MO, delivered at L */
    if (h->mo == 0) {
        c->msg_len = 0;
        c->msg_qn = qn;
        c->msg_byte1 = fr->ddp[1];
    }
    if (h->mo != c->msg_len || (h->mo && c->msg_qn != qn))
        return fail(c, VW_REQ_NONE, "MO %u on queue %u, expected %zu", h->mo, qn, c->msg_len);
    if (c->msg_len + fr->payload_size > c->o->max_msg)
        return fail(c, VW_REQ_NONE, "Send message longer than %zu bytes (--max-msg)", c->o->max_msg);
    if (c->msg_len + fr->payload_size > c->msg_cap) {
        size_t cap = c->msg_cap ? c->msg_cap : 4096;
        while (cap < c->msg_len + fr->payload_size)
            cap *= 2;
        uint8_t *m = realloc(c->msg, cap);
        if (!m)
            return fail(c, VW_REQ_NONE, "no memory for a %zu-byte message", cap);
        c->msg = m;
        c->msg_cap = cap;
    }
    if (fr->payload_size)
        memcpy(c->msg + c->msg_len, fr->payload, fr->payload_size);
    c->msg_len += fr->payload_size;
    if (h->last) {
        c->rx_msn[qn]++;
        if (message_done(c))
            fail(c, VW_REQ_NONE, "the message could not be handled");
        c->msg_len = 0;
    }
    return 0;
}

static int on_tagged(struct conn *c, const struct vw_ift_frame *fr, bool rdma)
{
    const struct vw_ddp_hdr *h = &fr->ddp_hdr;
    uint8_t op = rdma ? h->rdmap_opcode : VW_RDMAP_WRITE;
    if (op != VW_RDMAP_WRITE && op != VW_RDMAP_READ_RESPONSE)
        return fail(c, VW_REQ_NONE, "%s (opcode %u) in a tagged segment", vw_rdmap_opcode_name(op), op);
    if (op == VW_RDMAP_READ_RESPONSE && !(c->hooks && c->hooks->on_read_done))
        return fail(c, VW_REQ_NONE, "RDMA Read Response, but no Read Request was sent");
    if (!in_region(c->region, h->stag, h->to, fr->payload_size))
        return fail(c, VW_REQ_NONE, "%s of %u bytes at 0x%llx, STag 0x%x: outside the region (nothing placed)",
                    vw_rdmap_opcode_name(op), fr->payload_size, (unsigned long long)h->to, h->stag);
    if (fr->payload_size)
        memcpy(c->region->mem + (h->to - c->region->addr), fr->payload, fr->payload_size);
    if (op == VW_RDMAP_WRITE) {
        c->writes++;
        peer_event("event=write conn=%u stag=0x%x to=0x%llx len=%u last=%u", c->id, h->stag,
                   (unsigned long long)h->to, fr->payload_size, h->last);
        return 0;
    }
    c->responses++;
    if (h->last && c->hooks->on_read_done(c, h->to + fr->payload_size, fr->payload_size))
        return fail(c, VW_REQ_NONE, "the Read Response does not match");
    return 0;
}

static int on_frame(struct conn *c, const struct vw_ift_pdu *pdu, enum vw_req err, const struct vw_findings *framer_fs)
{
    if (err != VW_REQ_NONE)
        return fail(c, err, "frame cannot be decoded: sizes do not fit (I8)");
    const struct vw_ift_frame *fr = &pdu->frame;
    struct vw_findings fs = *framer_fs;
    int peer_side = c->is_a ? SIDE_B : SIDE_A;
    vw_ift_nego_frame(&c->nego, peer_side, &fs);
    vw_ift_nego_frame_rules(&c->nego, peer_side, fr, &fs);
    /* What closes the connection before anything is placed (I8). IH/IP:
     * this end announced it ignores those CRCs. */
    enum vw_req fatal = VW_REQ_NONE;
    const struct vw_ift_frame_mode *m = &c->rx.mode;
    if (fr->vtag != m->vtag)
        fatal = VW_REQ_IFT_4_2_VTAG_MATCH;
    else if (fr->has_hdr_crc && !fr->hdr_crc_ok && !(c->flags & VW_IFT_FLAG_IH))
        fatal = VW_REQ_IFT_5_1_HDR_CRC;
    else if (fr->has_payload_crc && !fr->payload_crc_ok && !(c->flags & VW_IFT_FLAG_IP))
        fatal = VW_REQ_IFT_5_1_PAYLOAD_CRC;
    bool lenient = c->o->fault == FAULT_PLACE_BAD_FRAMES;
    if (fatal != VW_REQ_NONE && !lenient) {
        for (unsigned i = 0; i < fs.count; i++)
            if (fs.item[i].req == fatal)
                return fail(c, fatal, "%s: closed, nothing placed (I8)", fs.item[i].detail);
        return fail(c, fatal, "closed, nothing placed (I8)");
    }
    for (unsigned i = 0; i < fs.count; i++) {
        const struct vw_finding *f = &fs.item[i];
        bool crc_rule = f->req == VW_REQ_IFT_5_1_HDR_CRC || f->req == VW_REQ_IFT_5_1_PAYLOAD_CRC ||
                        f->req == VW_REQ_IFT_4_2_VTAG_MATCH;
        bool agreed_on = f->req == VW_REQ_IFT_4_2_R_AGREE && c->o->fault == FAULT_IGNORE_R_DISAGREE;
        if (f->severity == VW_SEV_ERROR && !crc_rule && !agreed_on)
            return fail(c, f->req, "%s: closed, nothing placed (I8)", f->detail);
    }
    for (unsigned i = 0; i < fs.count; i++)
        report(c, &fs.item[i]);
    if (!fr->ddp_decoded)
        return fail(c, VW_REQ_IFT_5_1_DDP_HDR_PRESENT, "header_size %u is no RFC 5041 DDP header: closed, nothing placed",
                    fr->header_size);
    bool rdma = vw_ift_nego_rdma(&c->nego) || c->r_disagree;
    if (fr->ddp_hdr.dv != VW_DDP_VERSION)
        return fail(c, VW_REQ_NONE, "DDP version %u, expected %u (RFC 5041)", fr->ddp_hdr.dv, VW_DDP_VERSION);
    return fr->ddp_hdr.tagged ? on_tagged(c, fr, rdma) : on_untagged(c, fr, rdma);
}

static void on_pdu(void *ctx, const uint8_t *raw, size_t len, uint64_t stream_off, const struct vw_ift_pdu *pdu,
                   enum vw_req err, const struct vw_findings *fs)
{
    (void)raw;
    (void)len;
    (void)stream_off;
    struct conn *c = ctx;
    if (c->failed || c->eof)
        return;
    if (pdu->is_indication)
        on_indication(c, pdu, err, fs);
    else
        on_frame(c, pdu, err, fs);
}

int ic_feed(struct conn *c, const uint8_t *data, size_t len)
{
    if (c->failed)
        return -1;
    c->last_io_ms = peer_now_ms();
    if (c->eof) /* after the answer of fault answer-incompatible: nothing more is read */
        return 0;
    if ((c->o->choices & CH_UPGRADE) && !c->is_a && !c->ulp_done) {
        /* a ULP's upgrade request before the indication (lines 69-72, I32):
         * matched byte by byte; anything else is IFT from its first byte */
        size_t i = 0;
        while (i < len && c->ulp_have < PEER_ULP_LEN && data[i] == (uint8_t)PEER_ULP_REQUEST[c->ulp_have]) {
            i++;
            c->ulp_have++;
        }
        if (c->ulp_have == PEER_ULP_LEN) {
            peer_event("event=ulp-upgrade conn=%u", c->id);
            outq_put(&c->out, (const uint8_t *)PEER_ULP_AGREED, PEER_ULP_LEN);
            c->ulp_done = true;
            data += i;
            len -= i;
        } else if (i < len) { /* not the request: what matched so far is IFT's */
            c->ulp_done = true;
            size_t had = c->ulp_have - i;
            if (had && vw_ift_framer_feed(&c->rx, (const uint8_t *)PEER_ULP_REQUEST, had, on_pdu, c) != VW_REQ_NONE) {
                fail(c, VW_REQ_IFT_4_INDICATION_FIRST, "the first bytes are neither a ULP upgrade nor an indication");
                return -1;
            }
        } else {
            return 0; /* all of it matched: wait for the rest of the request */
        }
        if (!len)
            return c->failed ? -1 : 0;
    }
    enum vw_req e = vw_ift_framer_feed(&c->rx, data, len, on_pdu, c);
    if (c->rx.oom)
        fail(c, VW_REQ_NONE, "no memory to reassemble a frame");
    else if ((e == VW_REQ_IFT_4_INDICATION_FIRST || e == VW_REQ_IFT_4_1_MAGIC) && !c->eof)
        fail(c, e, "the first bytes are not an adaption indication (no magic 0x%08x): closed (I8, I35)", VW_IFT_MAGIC);
    else if (e != VW_REQ_NONE && !c->eof)
        fail(c, e, "framing stopped: closed (I8)");
    if (c->out.oom)
        fail(c, VW_REQ_NONE, "no memory for the output queue");
    return c->failed ? -1 : 0;
}

void ic_finish(struct conn *c)
{
    if (!c->failed && !c->eof && c->rx.have)
        peer_event("event=finding conn=%u rule=%s severity=note detail=the stream ended %zu bytes into a PDU", c->id,
                   vw_req_id(VW_REQ_IFT_5_1_FRAME_TRUNCATED), c->rx.have);
    c->eof = true;
}
