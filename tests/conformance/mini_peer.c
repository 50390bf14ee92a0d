/* The conformance tests' small VI/TCP responder (see mini_peer.h). */
#include "mini_peer.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vitcp/bytes.h"
#include "vitcp/vitcp_stream.h"

#define PEER_DISC "vitcp-conform"
#define PEER_MTU 65536u
#define PEER_INIT_MSG 7000u
#define ECHO_CAP (256u * 1024u)
#define REGION_LEN 65536u
#define REGION_ADDR 0x10000000ull
#define REGION_HANDLE 0x51u
#define PEER_WINDOW 4
#define PEER_RX_POSTED 64
#define RESP_CHUNK 16000u

struct read_req {
    uint32_t msg, len;
    uint64_t addr;
    bool refused;
};
struct conn {
    struct mini_peer *p;
    int fd;
    bool connected, crc, close_now;
    uint32_t mtu, next_msg, last_rx_msg;
    struct vw_vitcp_session s;
    uint8_t *msg;
    size_t msg_len;
    bool msg_idv;            /* the message carries immediate data (echoed, like vipl-peer) */
    uint32_t msg_imm;
    uint16_t level;
    uint8_t *region;
    uint32_t last_ok;        /* last message received without error (RR ACK) */
    uint16_t rx_posted;      /* descriptors posted so far (V17) */
    struct read_req reads[16];
    unsigned nreads;
    bool overrun;            /* more reads than the window in one batch */
};

static void send_seg(struct conn *c, struct vw_vitcp_enc *enc)
{
    uint8_t buf[70000];
    size_t n = vw_vitcp_encode(enc, buf, sizeof buf);
    if (!n) {
        c->close_now = true;
        return;
    }
    vw_vitcp_session_feed(&c->s, 1, buf, n, NULL, NULL);
    if (send(c->fd, buf, n, MSG_NOSIGNAL) != (ssize_t)n)
        c->close_now = true;
}

/* Data-phase header fields: ACK (RR), credits. */
static void data_hdr(struct conn *c, struct vw_vitcp_enc *enc, unsigned type)
{
    vw_vitcp_enc_init(enc, type, c->crc);
    enc->hdr.msg_ack = c->last_ok;
    enc->hdr.rx_desc_posted = c->rx_posted;
}

/* Reliable Reception: a Message ACK carrying a VI error, then close (V15). */
static void error_ack(struct conn *c, uint32_t msg, uint16_t code)
{
    bool skip = (code == VW_VITCP_ERR_MPE && c->p->fault == MINI_FAULT_NO_ERR_CODE) ||
                (code == VW_VITCP_ERR_UTE && c->p->fault == MINI_FAULT_NO_UTE);
    if (c->level == VW_VITCP_ATTR_RELIABLE_RECEPTION && !skip) {
        struct vw_vitcp_enc enc;
        data_hdr(c, &enc, VW_VITCP_NOP);
        enc.hdr.msg_num = c->next_msg - 1;
        enc.hdr.msg_ack = msg;
        enc.hdr.remote_err = code;
        send_seg(c, &enc);
    }
    c->close_now = true;
}

/* Idle, with a receive descriptor posted again: a NOP tells the tester
 * (VITCP-3.2-NOP-SUFFICIENT); a stale count stays stale (the fault). */
static void credit_nop(struct conn *c)
{
    if (c->p->fault != MINI_FAULT_STALE_RX_POSTED)
        c->rx_posted++;
    struct vw_vitcp_enc enc;
    data_hdr(c, &enc, VW_VITCP_NOP);
    enc.hdr.msg_num = c->next_msg - 1;
    send_seg(c, &enc);
}

static void refuse(struct conn *c, unsigned type)
{
    struct vw_vitcp_enc enc;
    vw_vitcp_enc_init(&enc, type, false);
    enc.trailer = VW_VITCP_TRAILER_NONE;
    send_seg(c, &enc);
    c->close_now = true;
}

static void on_request(struct conn *c, const struct vw_vitcp_seg *seg)
{
    const struct vw_vitcp_ce *ce = &seg->ce;
    if (seg->hdr.version != VW_VITCP_VERSION || ce->calling_disc_len > VW_VITCP_DISC_MAX ||
        ce->called_disc_len > VW_VITCP_DISC_MAX) {
        c->close_now = true; /* V10, V24: malformed: close without answer */
        return;
    }
    if (ce->called_disc_len != strlen(PEER_DISC) || memcmp(ce->called_disc, PEER_DISC, strlen(PEER_DISC)) != 0) {
        refuse(c, VW_VITCP_CONNECT_NOMATCH);
        return;
    }
    unsigned level = ce->attrs & VW_VITCP_ATTR_RELIABILITY_MASK;
    bool one_level = level && !(level & (level - 1));
    if (!one_level || (ce->attrs & VW_VITCP_ATTR_P2P) ||
        (ce->mtu == 0 && c->p->fault != MINI_FAULT_ACCEPT_MTU_ZERO)) {
        refuse(c, VW_VITCP_CONNECT_REJECT);
        return;
    }
    c->crc = ce->opt_crc;
    c->mtu = ce->mtu < PEER_MTU ? ce->mtu : PEER_MTU;
    struct vw_vitcp_enc enc;
    vw_vitcp_enc_init(&enc, VW_VITCP_CONNECT_ACCEPT, false);
    uint8_t opts[16];
    enc.ce.options = opts;
    enc.ce.options_len = c->crc ? vw_vitcp_opts_build(opts, sizeof opts, true, false, true) : 0;
    enc.trailer = c->crc ? VW_VITCP_TRAILER_CRC : VW_VITCP_TRAILER_NONE;
    enc.ce.attrs = (uint16_t)(level | VW_VITCP_ATTR_RDMA_WRITE | VW_VITCP_ATTR_RDMA_READ);
    /* The correct responder never sets DFC (it is not flow-controlled); the
     * fault sets it and still sends without looking at the tester's credit. */
    if (c->p->fault == MINI_FAULT_IGNORE_DFC)
        enc.ce.attrs |= VW_VITCP_ATTR_DFC;
    enc.ce.mtu = c->p->fault == MINI_FAULT_MTU_GREATER ? ce->mtu + 1 : c->mtu;
    enc.ce.rdma_read_window = 4;
    memcpy(enc.ce.calling_disc, ce->calling_disc, VW_VITCP_DISC_MAX);
    memcpy(enc.ce.called_disc, ce->called_disc, VW_VITCP_DISC_MAX);
    enc.ce.calling_disc_len = ce->calling_disc_len;
    enc.ce.called_disc_len = ce->called_disc_len;
    enc.hdr.msg_num = PEER_INIT_MSG;
    enc.hdr.msg_ack = seg->hdr.msg_num;
    enc.hdr.rx_desc_posted = c->rx_posted;
    enc.ce.rdma_read_window = PEER_WINDOW;
    c->next_msg = PEER_INIT_MSG + 1;
    c->last_rx_msg = seg->hdr.msg_num;
    c->last_ok = seg->hdr.msg_num;
    c->level = (uint16_t)level;
    c->connected = true;
    send_seg(c, &enc);
    /* The region announcement (the vipl-peer convention). */
    uint8_t ann[16];
    vw_put_be32(ann, (uint32_t)(REGION_ADDR >> 32));
    vw_put_be32(ann + 4, (uint32_t)REGION_ADDR);
    vw_put_be32(ann + 8, REGION_HANDLE);
    vw_put_be32(ann + 12, REGION_LEN);
    data_hdr(c, &enc, VW_VITCP_SEND);
    enc.hdr.msg_num = c->next_msg++;
    enc.payload = ann;
    enc.payload_len = sizeof ann;
    send_seg(c, &enc);
}

static void echo(struct conn *c)
{
    size_t off = 0, max = c->mtu < 60000 ? c->mtu : 60000;
    if (max == 0)
        max = 60000;
    do {
        size_t n = c->msg_len - off < max ? c->msg_len - off : max;
        struct vw_vitcp_enc enc;
        data_hdr(c, &enc, VW_VITCP_SEND);
        if (c->crc && c->p->fault == MINI_FAULT_NO_CRC)
            enc.trailer = VW_VITCP_TRAILER_NONE;
        enc.hdr.msg_num = c->next_msg;
        if (c->level != VW_VITCP_ATTR_RELIABLE_RECEPTION)
            enc.hdr.msg_ack = c->last_rx_msg;
        enc.hdr.data_offset = (uint32_t)off + (c->p->fault == MINI_FAULT_DATA_OFFSET ? 1u : 0u);
        if (off + n < c->msg_len)
            enc.hdr.flags &= (uint8_t)~VW_VITCP_FLAG_EOM;
        enc.payload = c->msg + off;
        enc.payload_len = n;
        if (c->msg_idv) { /* in each segment (VITCP-3.2-IDV-EACH-SEGMENT) */
            enc.hdr.flags |= VW_VITCP_FLAG_IDV;
            enc.hdr.imm_data = c->msg_imm;
        }
        send_seg(c, &enc);
        off += n;
    } while (off < c->msg_len && !c->close_now);
    c->next_msg++;
    c->msg_len = 0;
    /* The receive buffer is posted again (V17). */
    if (c->p->fault != MINI_FAULT_STALE_RX_POSTED)
        c->rx_posted++;
    if (c->p->fault == MINI_FAULT_URGENT) {
        struct vw_vitcp_enc enc;
        data_hdr(c, &enc, VW_VITCP_NOP);
        enc.hdr.msg_num = c->next_msg - 1;
        uint8_t buf[64];
        size_t n = vw_vitcp_encode(&enc, buf, sizeof buf);
        vw_vitcp_session_feed(&c->s, 1, buf, n, NULL, NULL);
        if (n && send(c->fd, buf, n, MSG_NOSIGNAL | MSG_OOB) != (ssize_t)n)
            c->close_now = true;
    }
}

/* Answer the queued reads (after a whole receive batch, like a provider
 * that drains its socket before it transmits). */
static void serve_reads(struct conn *c)
{
    if (c->overrun && c->p->fault != MINI_FAULT_READ_OVERRUN) {
        c->close_now = true; /* A13: more reads than the window: protocol error */
        return;
    }
    for (unsigned k = 0; k < c->nreads && !c->close_now; k++) {
        struct read_req *q = &c->reads[k];
        uint32_t off = 0;
        do {
            uint32_t n = q->len - off < RESP_CHUNK ? q->len - off : RESP_CHUNK;
            struct vw_vitcp_enc enc;
            data_hdr(c, &enc, VW_VITCP_RDMA_READ_RESP);
            enc.hdr.msg_num = q->msg + (c->p->fault == MINI_FAULT_READ_WRONG_MSG ? 1u : 0u);
            enc.hdr.data_offset = off;
            if (off + n < q->len)
                enc.hdr.flags &= (uint8_t)~VW_VITCP_FLAG_EOM;
            if (q->refused) {
                enc.hdr.flags |= VW_VITCP_FLAG_TXERR;
                enc.hdr.remote_err = c->p->fault == MINI_FAULT_NO_ERR_CODE ? 0 : VW_VITCP_ERR_MPE;
                enc.payload = c->msg; /* any bytes: padding */
            } else {
                enc.payload = c->region + (q->addr - REGION_ADDR) + off;
            }
            enc.payload_len = n;
            send_seg(c, &enc);
            off += n;
        } while (off < q->len && !c->close_now);
        if (q->refused) /* the response carried MPE (A8); then close (V15) */
            c->close_now = true;
    }
    c->nreads = 0;
    c->overrun = false;
}

static bool in_region(uint32_t handle, uint64_t addr, uint32_t len)
{
    return handle == REGION_HANDLE && addr >= REGION_ADDR && addr - REGION_ADDR <= REGION_LEN &&
           len <= REGION_LEN - (addr - REGION_ADDR);
}

static void on_segment(void *ctx, const uint8_t *raw, size_t len, uint64_t off,
                       const struct vw_vitcp_seg *seg, enum vw_req err, const struct vw_findings *fs)
{
    (void)raw; (void)len; (void)off; (void)fs;
    struct conn *c = ctx;
    if (c->close_now)
        return;
    if (err != VW_REQ_NONE) {
        c->close_now = true;
        return;
    }
    if (!c->connected) {
        if (seg->hdr.type != VW_VITCP_CONNECT_REQUEST)
            c->close_now = true; /* V19: data before the CE exchange */
        else
            on_request(c, seg);
        return;
    }
    if (seg->has_crc && !seg->crc_ok && c->p->fault != MINI_FAULT_KEEP_OPEN_BAD_CRC) {
        error_ack(c, seg->hdr.msg_num, VW_VITCP_ERR_UTE); /* V22 / A10: RR answers UTE; RD/RR close */
        return;
    }
    switch (seg->hdr.type) {
    case VW_VITCP_NOP:
        return;
    case VW_VITCP_RDMA_WRITE:
        if (!in_region(seg->rdma.handle, seg->rdma.addr, seg->rdma.length) ||
            (uint64_t)seg->hdr.data_offset + seg->payload_len > seg->rdma.length) {
            error_ack(c, seg->hdr.msg_num, VW_VITCP_ERR_MPE);
            return;
        }
        memcpy(c->region + (seg->rdma.addr - REGION_ADDR) + seg->hdr.data_offset, seg->payload, seg->payload_len);
        if (seg->hdr.flags & VW_VITCP_FLAG_EOM)
            c->last_ok = seg->hdr.msg_num;
        if ((seg->hdr.flags & (VW_VITCP_FLAG_EOM | VW_VITCP_FLAG_IDV)) == (VW_VITCP_FLAG_EOM | VW_VITCP_FLAG_IDV))
            credit_nop(c); /* immediate data took a receive descriptor: post it again and say so */
        return;
    case VW_VITCP_RDMA_READ_REQ: {
        if (c->nreads >= PEER_WINDOW)
            c->overrun = true;
        if (c->nreads == sizeof c->reads / sizeof c->reads[0]) {
            c->close_now = true;
            return;
        }
        struct read_req *q = &c->reads[c->nreads++];
        q->msg = seg->hdr.msg_num;
        q->addr = seg->rdma.addr;
        q->len = seg->rdma.length;
        q->refused = !in_region(seg->rdma.handle, seg->rdma.addr, seg->rdma.length) || q->len > c->mtu;
        if (q->refused)
            q->addr = REGION_ADDR;
        else
            c->last_ok = seg->hdr.msg_num;
        return;
    }
    case VW_VITCP_SEND:
        if (seg->hdr.flags & VW_VITCP_FLAG_TXERR) {
            c->close_now = true; /* A9 */
            return;
        }
        if (c->msg_len + seg->payload_len > ECHO_CAP) {
            c->close_now = true;
            return;
        }
        memcpy(c->msg + c->msg_len, seg->payload, seg->payload_len);
        c->msg_len += seg->payload_len;
        c->msg_idv = seg->hdr.flags & VW_VITCP_FLAG_IDV;
        c->msg_imm = seg->hdr.imm_data;
        c->last_rx_msg = seg->hdr.msg_num;
        if (seg->hdr.flags & VW_VITCP_FLAG_EOM) {
            c->last_ok = seg->hdr.msg_num;
            echo(c);
        }
        return;
    default:
        c->close_now = true; /* a second ConnectRequest, or what this peer does not serve */
        return;
    }
}

static void serve(struct mini_peer *p, int fd)
{
    struct conn c = {.p = p, .fd = fd, .rx_posted = PEER_RX_POSTED};
    c.msg = calloc(1, ECHO_CAP);
    c.region = calloc(1, REGION_LEN);
    if (!c.msg || !c.region || vw_vitcp_session_init(&c.s) != 0) {
        free(c.msg);
        free(c.region);
        close(fd);
        return;
    }
    uint8_t buf[16384];
    while (!p->stop && !c.close_now) {
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, 50) <= 0)
            continue;
        ssize_t n = recv(fd, buf, sizeof buf, 0);
        if (n <= 0)
            break;
        vw_vitcp_session_feed(&c.s, 0, buf, (size_t)n, on_segment, &c);
        if (!c.close_now)
            serve_reads(&c);
    }
    vw_vitcp_session_free(&c.s);
    free(c.msg);
    free(c.region);
    close(fd);
}

static void *run(void *arg)
{
    struct mini_peer *p = arg;
    while (!p->stop) {
        struct pollfd pf = {p->listen_fd, POLLIN, 0};
        if (poll(&pf, 1, 50) <= 0)
            continue;
        int fd = accept(p->listen_fd, NULL, NULL);
        if (fd >= 0)
            serve(p, fd);
    }
    return NULL;
}

int mini_peer_start(struct mini_peer *p, enum mini_fault fault)
{
    memset(p, 0, sizeof *p);
    p->fault = fault;
    p->listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (p->listen_fd < 0)
        return -1;
    /* Every address: the packet relay's cases reach it at the relay's
     * address of this host (conform/relay.h). */
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t al = sizeof a;
    if (bind(p->listen_fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(p->listen_fd, 16) < 0 ||
        getsockname(p->listen_fd, (struct sockaddr *)&a, &al) < 0) {
        close(p->listen_fd);
        return -1;
    }
    p->port = ntohs(a.sin_port);
    if (pthread_create(&p->thread, NULL, run, p) != 0) {
        close(p->listen_fd);
        return -1;
    }
    return 0;
}

void mini_peer_stop(struct mini_peer *p)
{
    p->stop = 1;
    pthread_join(p->thread, NULL);
    close(p->listen_fd);
}
