/*
 * The VI/TCP protocol engine: one progress thread per NIC polls the
 * listener, half-open connections and every connected VI; segments are
 * built with vw_vitcp_encode and parsed with the wire framer/decoder only.
 * Consumer calls (VipPostSend, ...) run the transmit pump directly under the
 * NIC lock, so a send needs no thread hop; the thread takes over whenever
 * the socket is full and does all receiving.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>
#include "provider.h"
#include "vitcp/checksum.h"

static bool is_rr(const struct vipl_vi *vi) { return (vi->attrs.ReliabilityLevel & VIP_SERVICE_RELIABLE_RECEPTION) != 0; }
static bool is_u(const struct vipl_vi *vi) { return (vi->attrs.ReliabilityLevel & VIP_SERVICE_UNRELIABLE) != 0; }
static enum vipl_fault fault(const struct vipl_vi *vi) { return vi->nic->fault; }

/* ------------------------------------------------------------ sockets */
void vi_kick(struct vipl_vi *vi)
{
    if (vi->io_polling && vi->kick_fd >= 0) {
        uint64_t one = 1;
        ssize_t n = write(vi->kick_fd, &one, sizeof one);
        (void)n; /* a saturated counter already means "wake up" */
    }
}

static uint32_t vi_ep_wanted(const struct vipl_vi *vi)
{
    if (vi->fd < 0)
        return 0;
    if (vi->io_owner || vi->io_lazy_until) /* a consumer reads; the thread still writes */
        return vi->out_len > vi->out_off ? (uint32_t)EPOLLOUT : 0u;
    if (vi->phase == PH_TCP_CONNECTING)
        return EPOLLOUT;
    return EPOLLIN | (vi->out_len > vi->out_off ? (uint32_t)EPOLLOUT : 0u);
}

void vi_ep_update(struct vipl_vi *vi)
{
    int epfd = vi->nic->epfd;
    if (vi->ep_fd >= 0 && vi->ep_fd != vi->fd) {
        epoll_ctl(epfd, EPOLL_CTL_DEL, vi->ep_fd, NULL); /* the fd moved elsewhere */
        vi->ep_fd = -1;
    }
    uint32_t want = vi_ep_wanted(vi);
    if (!want) {
        if (vi->ep_fd >= 0)
            epoll_ctl(epfd, EPOLL_CTL_DEL, vi->ep_fd, NULL);
        vi->ep_fd = -1;
        return;
    }
    if (vi->ep_fd == vi->fd && vi->ep_events == want)
        return;
    struct epoll_event ev = {.events = want, .data.fd = vi->fd};
    if (epoll_ctl(epfd, vi->ep_fd == vi->fd ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, vi->fd, &ev) == 0) {
        vi->ep_fd = vi->fd;
        vi->ep_events = want;
    }
}

void vi_close_fd(struct vipl_vi *vi, bool rst)
{
    if (vi->fd < 0)
        return;
    if (vi->ep_fd >= 0) {
        epoll_ctl(vi->nic->epfd, EPOLL_CTL_DEL, vi->ep_fd, NULL);
        vi->ep_fd = -1;
    }
    vi->io_lazy_until = 0;
    vi_kick(vi);
    if (vi->io_polling) {
        /* A consumer is blocked in recv()/poll() on this socket without the
         * lock: wake it (SHUT_RD ends a blocked recv), and leave the close to
         * it, so the fd number is not reused under its recv(). */
        if (rst) {
            struct linger lg = {1, 0};
            setsockopt(vi->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        } else {
            shutdown(vi->fd, SHUT_WR);
        }
        shutdown(vi->fd, SHUT_RD);
        vi->io_zombie_fd = vi->fd;
        vi->fd = -1;
        vi->phase = PH_NONE;
        vi->out_len = vi->out_off = 0;
        nic_wake(vi->nic);
        return;
    }
    if (rst) {
        struct linger lg = {1, 0};
        setsockopt(vi->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    } else {
        shutdown(vi->fd, SHUT_WR);
        /* Unread input would turn close() into an RST: drain what is there. */
        uint8_t sink[4096];
        while (recv(vi->fd, sink, sizeof sink, MSG_DONTWAIT) > 0)
            ;
    }
    close(vi->fd);
    vi->fd = -1;
    vi->phase = PH_NONE;
    vi->out_len = vi->out_off = 0;
    nic_wake(vi->nic);
}

static void set_sock_opts(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

bool vi_conn_init(struct vipl_vi *vi, int fd)
{
    if (!vi->framer_ready) {
        if (vw_vitcp_framer_init(&vi->framer, VW_VITCP_CRC_OFF) != 0)
            return false;
        vi->framer_ready = true;
    }
    vw_vitcp_framer_resync(&vi->framer, 0);
    vw_vitcp_framer_set_crc(&vi->framer, VW_VITCP_CRC_OFF);
    if (!vi->out) {
        vi->out_cap = VIPL_OUT_HIGH_WATER + 2 * VW_VITCP_SEG_MAX;
        vi->out = malloc(vi->out_cap);
        vi->gather = malloc(VW_VITCP_SEG_MAX);
        if (!vi->out || !vi->gather)
            return false;
    }
    vi->fd = fd;
    vi->out_len = vi->out_off = 0;
    vi->tx_written = vi->tx_queued = 0;
    vi->crc = false;
    vi->ack_pending = vi->advert_pending = vi->close_after_flush = false;
    vi->err_to_send = 0;
    vi->reads_outstanding = 0;
    vi->inbound_count = 0;
    vi->rx_in_msg = false;
    vi->consumed = 0;
    vi->peer_consumed = 0;
    vi->io_owner = vi->io_polling = vi->io_blocking = false;
    vi->io_rcvtimeo_ms = -1;
    vi->rx_posted = (uint16_t)(vi->rq.tail - vi->rq.next); /* A12 */
    vi->adv_sent = vi->rx_posted;
    vi->tx_msg_num = random_u32();                          /* A16 */
    vi->peer_ack = vi->tx_msg_num;
    vi->dfc_sender = (vi->attrs.ReliabilityLevel & VIP_SERVICE_DFC) || vi->nic->dfc_on ||
                     fault(vi) == VIPL_FAULT_IGNORE_DFC;
    vi->my_window = vi->attrs.EnableRdmaRead ? vi->nic->read_window : 0;
    set_sock_opts(fd);
    return true;
}

/* ------------------------------------------------------------- output */
static size_t out_pending(const struct vipl_vi *vi) { return vi->out_len - vi->out_off; }

static bool out_reserve(struct vipl_vi *vi, size_t need)
{
    if (vi->out_len + need <= vi->out_cap)
        return true;
    if (vi->out_off) {
        memmove(vi->out, vi->out + vi->out_off, vi->out_len - vi->out_off);
        vi->out_len -= vi->out_off;
        vi->out_off = 0;
    }
    if (vi->out_len + need <= vi->out_cap)
        return true;
    size_t cap = (vi->out_len + need) * 2;
    uint8_t *n = realloc(vi->out, cap);
    if (!n)
        return false;
    vi->out = n;
    vi->out_cap = cap;
    return true;
}

/* Zero-copy path for data segments: with nothing buffered, the segment goes
 * out in one sendmsg of [headers, the consumer's payload, trailer] (headers
 * built by the wire encoder with the full Segment Length, the CRC chained
 * over headers and payload); only what the socket does not take is copied
 * to the output buffer. */
static bool emit_direct(struct vipl_vi *vi, const struct vw_vitcp_enc *enc)
{
    if (vi->fd < 0 || out_pending(vi) || enc->payload_len < VIPL_DIRECT_MIN || enc->keep_seg_len ||
        enc->with_ce || (enc->trailer != VW_VITCP_TRAILER_NONE && enc->trailer != VW_VITCP_TRAILER_CRC))
        return false;
    size_t total = vw_vitcp_encoded_len(enc);
    if (total > VW_VITCP_SEG_MAX)
        return false;
    struct vw_vitcp_enc h = *enc;
    h.payload = NULL;
    h.payload_len = 0;
    h.trailer = VW_VITCP_TRAILER_NONE;
    h.keep_seg_len = true;
    h.hdr.seg_len = (uint16_t)total;
    uint8_t hdr[VW_VITCP_SEG_HDR_LEN + VW_VITCP_RDMA_HDR_LEN], trl[VW_VITCP_CRC_LEN];
    size_t hl = vw_vitcp_encode(&h, hdr, sizeof hdr);
    if (!hl)
        return false;
    struct iovec iov[3] = {{hdr, hl}, {(void *)(uintptr_t)enc->payload, enc->payload_len}, {trl, 0}};
    if (enc->trailer == VW_VITCP_TRAILER_CRC) {
        vw_put_le32(trl, vw_crc_vitcp_update(vw_crc_vitcp(hdr, hl), enc->payload, enc->payload_len));
        iov[2].iov_len = sizeof trl;
    }
    struct msghdr mh = {.msg_iov = iov, .msg_iovlen = iov[2].iov_len ? 3 : 2};
    ssize_t n;
    do
        n = sendmsg(vi->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
    while (n < 0 && errno == EINTR);
    size_t done = n > 0 ? (size_t)n : 0; /* an error shows again in flush_out */
    if (done < total) {
        if (!out_reserve(vi, total - done))
            return false; /* cannot happen: the buffer is empty and holds 2 segments */
        size_t skip = done;
        for (int i = 0; i < 3; i++) {
            size_t l = iov[i].iov_len;
            if (skip >= l) {
                skip -= l;
                continue;
            }
            memcpy(vi->out + vi->out_len, (const uint8_t *)iov[i].iov_base + skip, l - skip);
            vi->out_len += l - skip;
            skip = 0;
        }
    }
    vi->tx_queued += total;
    vi->tx_written += done;
    vi->nic->stats.SegmentsSent++;
    vi->nic->stats.BytesSent += total;
    return true;
}

/* The urgent faults: how many of a segment's first bytes to send as TCP
 * urgent data. A socket can only designate urgent data the BSD way (the
 * pointer one past the last byte sent with MSG_OOB), which is why a
 * conforming provider never does (VITCP-3.7-URGENT-NEVER-IF-UNSURE). */
static size_t fault_urgent_len(const struct vipl_vi *vi)
{
    switch (fault(vi)) {
    case VIPL_FAULT_URGENT_BSD: return vi->peer_urgent ? 1 : 0;  /* RFC 1122: designates byte 1 */
    case VIPL_FAULT_URGENT_MID: return vi->peer_urgent ? 9 : 0;  /* designates byte 9 */
    case VIPL_FAULT_URGENT_UNOFFERED: return vi->peer_urgent ? 0 : 1;
    default: return 0;
    }
}

static void emit(struct vipl_vi *vi, struct vw_vitcp_enc *enc)
{
    size_t urgent = enc->with_ce ? 0 : fault_urgent_len(vi); /* data phase only */
    if (!urgent && emit_direct(vi, enc))
        return;
    size_t need = vw_vitcp_encoded_len(enc);
    if (!out_reserve(vi, need))
        return;
    bool at_stream_end = out_pending(vi) == 0; /* the segment's first byte is the next one sent */
    size_t n = vw_vitcp_encode(enc, vi->out + vi->out_len, vi->out_cap - vi->out_len);
    vi->out_len += n;
    vi->tx_queued += n;
    vi->nic->stats.SegmentsSent++;
    vi->nic->stats.BytesSent += n;
    if (urgent && at_stream_end && vi->fd >= 0 && n > urgent) {
        ssize_t w = send(vi->fd, vi->out + vi->out_off, urgent, MSG_OOB | MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            vi->out_off += (size_t)w;
            vi->tx_written += (uint64_t)w;
        }
    }
}

/* Common header fields of a data-phase segment (V14-V17). */
static void seg_init(struct vipl_vi *vi, struct vw_vitcp_enc *enc, unsigned type)
{
    vw_vitcp_enc_init(enc, type, vi->crc);
    if (is_rr(vi)) {
        /* 3.2: the last message received without error, or the message in
         * error when the Remote Error Code says so. */
        enc->hdr.msg_ack = (vi->err_to_send ? vi->err_msg_num : vi->rx_last_ok) +
                           (fault(vi) == VIPL_FAULT_ACK_AHEAD ? 1u : 0u);
        enc->hdr.remote_err = vi->err_to_send;
        vi->ack_pending = false;
    }
    enc->hdr.rx_desc_posted = vi->rx_posted;
    vi->adv_sent = vi->rx_posted;
    vi->advert_pending = false;
    switch (fault(vi)) {
    case VIPL_FAULT_BAD_VERSION: enc->hdr.version = 2; break;
    case VIPL_FAULT_BAD_CRC:
        if (vi->crc)
            enc->trailer = VW_VITCP_TRAILER_BAD_CRC;
        break;
    case VIPL_FAULT_OMIT_CRC: enc->trailer = VW_VITCP_TRAILER_NONE; break;
    case VIPL_FAULT_IMM_ON_NA_TYPE:
        if (!vw_vitcp_type_supports_imm(type))
            enc->hdr.imm_data = 0x5A5A5A5Au;
        break;
    default: break;
    }
}

static void emit_nop(struct vipl_vi *vi)
{
    struct vw_vitcp_enc enc;
    seg_init(vi, &enc, VW_VITCP_NOP);
    enc.hdr.msg_num = vi->tx_msg_num + (fault(vi) == VIPL_FAULT_NOP_MSG_NUM ? 5u : 0u);
    emit(vi, &enc);
}

/* Write what is buffered. false when the connection broke. */
static bool flush_out(struct vipl_vi *vi)
{
    while (vi->fd >= 0 && vi->out_off < vi->out_len) {
        ssize_t n = send(vi->fd, vi->out + vi->out_off, vi->out_len - vi->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            vi->out_off += (size_t)n;
            vi->tx_written += (uint64_t)n;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (errno == EINTR)
                continue;
            vi_kick(vi);       /* a consumer in poll() adds POLLOUT */
            vi_io_attach(vi);  /* the thread's epoll set waits for POLLOUT too */
            return true;
        }
        return false;
    }
    if (vi->out_off == vi->out_len)
        vi->out_off = vi->out_len = 0;
    return true;
}

void vi_fail(struct vipl_vi *vi, bool rst, VIP_ERROR_CODE code)
{
    if (vi->state == VIP_STATE_ERROR && vi->fd < 0)
        return;
    bool report = vi->state == VIP_STATE_CONNECTED;
    vi->state = VIP_STATE_ERROR;
    if (!rst)
        flush_out(vi);
    vi_close_fd(vi, rst);
    vi_flush_queues(vi);
    if (report)
        defer_error(vi->nic, vi, NULL, code, VIP_RESOURCE_VI);
    pthread_cond_broadcast(&vi->nic->cond);
}

static void protocol_error(struct vipl_vi *vi)
{
    vi->nic->stats.ProtocolErrors++;
    vi_fail(vi, true, VIP_ERROR_CONN_LOST);
}

/* A VI error seen by this end as target/receiver (A7-A10): RR answers with a
 * Message ACK carrying the code and closes; RD closes; U carries on. */
static void remote_error(struct vipl_vi *vi, uint32_t msg_num, uint16_t code, VIP_ERROR_CODE async, bool report)
{
    if (report)
        defer_error(vi->nic, vi, NULL, async, VIP_RESOURCE_VI);
    if (is_u(vi))
        return;
    if (is_rr(vi)) {
        vi->err_to_send = code;
        vi->err_msg_num = msg_num; /* VITCP-3.2-ACK-NAMES-ERROR-MSG */
        vi->ack_pending = true;
    }
    vi->close_after_flush = true;
}

/* -------------------------------------------------------- transmitting */
static uint32_t desc_op_status(unsigned op)
{
    return op == VIP_CONTROL_OP_RDMAWRITE ? VIP_STATUS_OP_RDMA_WRITE
           : op == VIP_CONTROL_OP_RDMAREAD ? VIP_STATUS_OP_RDMA_READ : VIP_STATUS_OP_SEND;
}

/* Fail a send descriptor locally (format, protection, length). */
static void local_send_error(struct vipl_vi *vi, struct wq_entry *e, uint32_t status)
{
    e->started = e->transmitted = true;
    e->desc->CS.Status = status | desc_op_status(e->desc->CS.Control & VIP_CONTROL_OP_MASK) | VIP_STATUS_DONE;
    e->completed = true;
    vi->sq.next++;
    vi_progress_sends(vi);
    if (!is_u(vi)) /* VIA 2.5.2: any error breaks a reliable connection */
        vi->close_after_flush = true;
}

static bool respond_one_segment(struct vipl_vi *vi)
{
    if (vi->inbound_count == 0 || fault(vi) == VIPL_FAULT_NO_READ_RESPONSE)
        return false;
    struct inbound_read *r = &vi->inbound[0];
    uint32_t seg = vi->nic->seg_payload;
    uint32_t chunk = r->length - r->sent < seg ? r->length - r->sent : seg;
    struct vw_vitcp_enc enc;
    seg_init(vi, &enc, VW_VITCP_RDMA_READ_RESP);
    enc.hdr.msg_num = r->msg_num;
    enc.hdr.data_offset = r->sent;
    if (r->sent + chunk != r->length)
        enc.hdr.flags &= (uint8_t)~VW_VITCP_FLAG_EOM;
    /* Re-check the source at every segment: the consumer may deregister it. */
    struct vipl_region *reg = r->refused ? NULL
                                         : region_check(vi->nic, r->handle, r->addr, r->length, vi->attrs.Ptag);
    if (!reg || !reg->rdma_read)
        r->refused = true;
    if (r->refused) {
        /* A8: Transmit Error with MPE, padded to the requested length. */
        enc.hdr.flags |= VW_VITCP_FLAG_TXERR;
        enc.hdr.remote_err |= VW_VITCP_ERR_MPE;
        memset(vi->gather, 0, chunk);
        enc.payload = vi->gather;
    } else {
        enc.payload = (const uint8_t *)(uintptr_t)(r->addr + r->sent);
    }
    enc.payload_len = chunk;
    emit(vi, &enc);
    r->sent += chunk;
    if (r->sent == r->length) {
        bool refused = r->refused;
        memmove(&vi->inbound[0], &vi->inbound[1], (vi->inbound_count - 1) * sizeof vi->inbound[0]);
        vi->inbound_count--;
        if (refused && !is_u(vi))
            vi->close_after_flush = true;
    }
    return true;
}

static bool send_one_segment(struct vipl_vi *vi)
{
    struct wq *q = &vi->sq;
    if (q->next == q->tail || vi->close_after_flush)
        return false;
    struct wq_entry *e = wq_at(q, q->next);
    VIP_DESCRIPTOR *d = e->desc;
    unsigned op = d->CS.Control & VIP_CONTROL_OP_MASK;
    unsigned first = op == VIP_CONTROL_OP_SENDRECV ? 0 : 1;
    bool imm = (d->CS.Control & VIP_CONTROL_IMMEDIATE) && op != VIP_CONTROL_OP_RDMAREAD;
    if (!e->started) {
        if ((d->CS.Control & VIP_CONTROL_QFENCE) && q->done != q->next)
            return false; /* A6: the fence waits for every earlier descriptor */
        uint64_t total = 0;
        uint32_t err = 0;
        if ((d->CS.Control & VIP_CONTROL_RESERVED) || op == VIP_CONTROL_OP_RESERVED || d->CS.Reserved ||
            (first && d->CS.SegCount < 1) || (op == VIP_CONTROL_OP_RDMAREAD && is_u(vi)))
            err = VIP_STATUS_FORMAT_ERROR;
        else
            err = desc_check_local(vi, d, first, &total);
        if (!err && total > vi->mtu && fault(vi) != VIPL_FAULT_IGNORE_MTU)
            err = VIP_STATUS_LENGTH_ERROR;
        if (err) {
            local_send_error(vi, e, err);
            return true;
        }
        if (op == VIP_CONTROL_OP_RDMAREAD && vi->peer_window == 0) {
            /* The peer holds no reads: it did not enable RDMA Read. */
            local_send_error(vi, e, VIP_STATUS_RDMA_PROT_ERROR);
            return true;
        }
        bool consumes = op == VIP_CONTROL_OP_SENDRECV || imm;
        if (consumes && vi->dfc_sender && fault(vi) != VIPL_FAULT_IGNORE_DFC &&
            (int16_t)(uint16_t)(vi->peer_rx_posted - vi->consumed) <= 0)
            return false; /* V17: no receive credit */
        if (op == VIP_CONTROL_OP_RDMAREAD && vi->reads_outstanding >= vi->peer_window &&
            fault(vi) != VIPL_FAULT_EXCEED_READ_WINDOW)
            return false; /* A13: wait for the read window */
        e->started = true;
        e->total = (uint32_t)total;
        e->sent = 0;
        vi->tx_msg_num += fault(vi) == VIPL_FAULT_SKIP_MSG_NUM ? 2u : 1u;
        e->msg_num = vi->tx_msg_num;
        if (consumes)
            vi->consumed++;
    }
    struct vw_vitcp_enc enc;
    VIP_ADDRESS_SEGMENT *remote = first ? &desc_seg(d, 0)->Remote : NULL;
    if (op == VIP_CONTROL_OP_RDMAREAD) {
        seg_init(vi, &enc, VW_VITCP_RDMA_READ_REQ);
        enc.hdr.msg_num = e->msg_num;
        enc.rdma.addr = remote->Data.AddressBits;
        enc.rdma.handle = remote->Handle;
        enc.rdma.length = e->total;
        emit(vi, &enc);
        e->sent = 0; /* now counts response bytes received */
        e->transmitted = true;
        e->tx_end = vi->tx_queued;
        vi->reads_outstanding++;
        q->next++;
        return true;
    }
    uint32_t seg = vi->nic->seg_payload;
    uint32_t chunk = e->total - e->sent < seg ? e->total - e->sent : seg;
    seg_init(vi, &enc, op == VIP_CONTROL_OP_RDMAWRITE ? VW_VITCP_RDMA_WRITE : VW_VITCP_SEND);
    enc.hdr.msg_num = e->msg_num;
    enc.hdr.data_offset = e->sent;
    if (fault(vi) == VIPL_FAULT_FIRST_OFFSET_NONZERO && e->sent == 0)
        enc.hdr.data_offset = 1;
    if (fault(vi) == VIPL_FAULT_WRONG_DATA_OFFSET && e->sent != 0)
        enc.hdr.data_offset = e->sent + 1;
    bool last = e->sent + chunk == e->total;
    if (!last || fault(vi) == VIPL_FAULT_NO_EOM)
        enc.hdr.flags &= (uint8_t)~VW_VITCP_FLAG_EOM;
    if (imm && !(fault(vi) == VIPL_FAULT_IDV_FIRST_ONLY && e->sent != 0)) {
        enc.hdr.flags |= VW_VITCP_FLAG_IDV;
        enc.hdr.imm_data = d->CS.ImmediateData;
    } else if (fault(vi) == VIPL_FAULT_IMM_WITHOUT_IDV) {
        enc.hdr.imm_data = 0xA5A5A5A5u;
    }
    if (remote) {
        enc.rdma.addr = remote->Data.AddressBits;
        enc.rdma.handle = remote->Handle;
        enc.rdma.length = e->total;
    }
    if (d->CS.SegCount - first == 1) {
        enc.payload = (const uint8_t *)(uintptr_t)desc_seg(d, first)->Local.Data.AddressBits + e->sent;
    } else {
        desc_gather(d, first, e->sent, vi->gather, chunk);
        enc.payload = vi->gather;
    }
    enc.payload_len = chunk;
    emit(vi, &enc);
    e->sent += chunk;
    if (last) {
        e->transmitted = true;
        e->tx_end = vi->tx_queued;
        q->next++;
    }
    return true;
}

void vi_pump(struct vipl_vi *vi)
{
    if (vi->phase != PH_OPEN || vi->fd < 0)
        return;
    /* Build segments up to the high-water mark, then write. If the socket
     * took everything, build again: with an empty output buffer nobody polls
     * for POLLOUT, so stopping here would leave the rest of the send queue
     * (or the rest of a message) waiting for an unrelated inbound segment. */
    bool more;
    do {
        more = false;
        for (;;) {
            if (out_pending(vi) >= VIPL_OUT_HIGH_WATER) {
                more = true;
                break;
            }
            if (respond_one_segment(vi))
                continue;
            if (!send_one_segment(vi))
                break;
            if (vi->fd < 0)
                return;
        }
        if (vi->ack_pending || vi->advert_pending)
            emit_nop(vi);
        if (!flush_out(vi)) {
            vi_fail(vi, true, VIP_ERROR_CONN_LOST);
            return;
        }
        /* Completions written just now may release a fenced descriptor. */
        uint32_t done_before = vi->sq.done;
        vi_progress_sends(vi);
        if (vi->sq.done != done_before && vi->sq.next != vi->sq.tail)
            more = true;
    } while (more && vi->fd >= 0 && out_pending(vi) == 0);
    if (vi->close_after_flush && out_pending(vi) == 0 && vi->inbound_count == 0)
        vi_fail(vi, false, VIP_ERROR_CONN_LOST);
}

/* ------------------------------------------------- connection setup (CE) */
static uint16_t vi_wire_attrs(const struct vipl_vi *vi)
{
    uint16_t a = (uint16_t)(vi->attrs.ReliabilityLevel & VW_VITCP_ATTR_RELIABILITY_MASK);
    if (vi->attrs.EnableRdmaWrite)
        a |= VW_VITCP_ATTR_RDMA_WRITE;
    if (vi->attrs.EnableRdmaRead)
        a |= VW_VITCP_ATTR_RDMA_READ;
    if (vi->dfc_sender)
        a |= VW_VITCP_ATTR_DFC;
    if (vi->p2p)
        a |= VW_VITCP_ATTR_P2P;
    return a;
}

void vi_encode_ce(struct vipl_vi *vi, unsigned type, const struct vw_vitcp_ce *req_ce, uint32_t ack)
{
    struct vw_vitcp_enc enc;
    uint8_t opts[16];
    bool crc_opt;
    vw_vitcp_enc_init(&enc, type, false);
    enc.hdr.msg_num = vi->tx_msg_num;
    enc.hdr.msg_ack = ack;
    enc.hdr.rx_desc_posted = vi->rx_posted;
    vi->adv_sent = vi->rx_posted;
    enc.ce.attrs = vi_wire_attrs(vi);
    enc.ce.rdma_read_window = vi->my_window;
    if (type == VW_VITCP_CONNECT_REQUEST) {
        crc_opt = vi->nic->crc_on;
        enc.ce.mtu = (uint32_t)vi->attrs.MaxTransferSize;
        enc.ce.calling_disc_len = vi->local_disc_len;
        memcpy(enc.ce.calling_disc, vi->local_disc, vi->local_disc_len);
        enc.ce.called_disc_len = vi->remote_disc_len;
        memcpy(enc.ce.called_disc, vi->remote_disc, vi->remote_disc_len);
    } else {
        crc_opt = (vi->nic->crc_on && req_ce->opt_crc) || fault(vi) == VIPL_FAULT_ACCEPT_CRC_UNREQUESTED;
        enc.ce.mtu = vi->mtu + (fault(vi) == VIPL_FAULT_ACCEPT_LARGER_MTU ? req_ce->mtu - vi->mtu + 1 : 0);
        enc.ce.calling_disc_len = req_ce->calling_disc_len; /* V9: copied */
        memcpy(enc.ce.calling_disc, req_ce->calling_disc, VW_VITCP_DISC_MAX);
        enc.ce.called_disc_len = req_ce->called_disc_len;
        memcpy(enc.ce.called_disc, req_ce->called_disc, VW_VITCP_DISC_MAX);
        if (fault(vi) == VIPL_FAULT_ACCEPT_WRONG_DISC)
            enc.ce.called_disc[0] ^= 0xFF, enc.ce.called_disc_len = enc.ce.called_disc_len ? enc.ce.called_disc_len : 1;
    }
    size_t ol = vw_vitcp_opts_build(opts, sizeof opts, crc_opt, vi->nic->urgent_opt, crc_opt);
    enc.ce.options = ol ? opts : NULL;
    enc.ce.options_len = ol;
    enc.trailer = crc_opt ? VW_VITCP_TRAILER_CRC : VW_VITCP_TRAILER_NONE; /* 3.5 */
    if (fault(vi) == VIPL_FAULT_CE_TRAILER_NO_OPTION) {
        enc.ce.options = NULL;
        enc.ce.options_len = 0;
        enc.trailer = VW_VITCP_TRAILER_CRC;
    }
    if (fault(vi) == VIPL_FAULT_BAD_VERSION)
        enc.hdr.version = 2;
    emit(vi, &enc);
}

static void fill_remote_attrs(struct vipl_vi *vi, const struct vw_vitcp_ce *ce, uint32_t mtu)
{
    memset(&vi->remote_attrs, 0, sizeof vi->remote_attrs);
    vi->remote_attrs.ReliabilityLevel = ce->attrs & VW_VITCP_ATTR_RELIABILITY_MASK;
    vi->remote_attrs.MaxTransferSize = mtu;
    vi->remote_attrs.EnableRdmaWrite = (ce->attrs & VW_VITCP_ATTR_RDMA_WRITE) != 0;
    vi->remote_attrs.EnableRdmaRead = (ce->attrs & VW_VITCP_ATTR_RDMA_READ) != 0;
}

/* Both ends: the CE exchange succeeded. */
static void vi_open(struct vipl_vi *vi, const struct vw_vitcp_hdr *peer_hdr, const struct vw_vitcp_ce *peer_ce,
                    bool crc, uint32_t mtu)
{
    vi->crc = crc;
    vw_vitcp_framer_set_crc(&vi->framer, crc ? VW_VITCP_CRC_ON : VW_VITCP_CRC_OFF);
    vi->mtu = mtu;
    vi->attrs.MaxTransferSize = mtu; /* A2 */
    vi->peer_window = peer_ce->rdma_read_window;
    vi->peer_dfc = (peer_ce->attrs & VW_VITCP_ATTR_DFC) != 0;
    vi->peer_urgent = peer_ce->opt_urgent;
    vi->rx_expected = peer_hdr->msg_num + 1;
    vi->rx_last_ok = peer_hdr->msg_num;
    vi->peer_rx_posted = peer_hdr->rx_desc_posted;
    fill_remote_attrs(vi, peer_ce, mtu);
    vi->state = VIP_STATE_CONNECTED;
    vi->phase = PH_OPEN;
    vi->connect_result = VIP_SUCCESS;
    pthread_cond_broadcast(&vi->nic->cond);
}

void vi_start_connect(struct vipl_vi *vi);

/* VIA 9.4.4 lists no "not reachable" outcome: a request that finds no
 * provider listening yet keeps trying until its Timeout
 * (VIA-9.4.4-RETRY-UNTIL-TIMEOUT); the draft's active machine re-establishes
 * TCP that closes in Pending Accept (section 4.2). The pause doubles up to
 * VIPL_RETRY_MAX_MS, so a long Timeout costs a few connects a second. */
static void connect_retry_later(struct vipl_vi *vi)
{
    vi_close_fd(vi, true);
    uint32_t pause = vi->retry_backoff_ms ? vi->retry_backoff_ms : VIPL_RETRY_FIRST_MS;
    vi->retry_backoff_ms = pause * 2 > VIPL_RETRY_MAX_MS ? VIPL_RETRY_MAX_MS : pause * 2;
    vi->phase = PH_RETRY_WAIT; /* run_timers reconnects, or times out first */
    vi->retry_at_ms = now_ms() + pause;
    nic_wake(vi->nic); /* new timer */
}

/* Would this connect() error pass if the request tried again later? */
static bool connect_errno_transient(int err)
{
    switch (err) {
    case ECONNREFUSED: /* no provider listening on that host yet */
    case ECONNRESET:
    case ECONNABORTED:
    case EPIPE:
    case ETIMEDOUT:    /* host not up (yet) */
    case EHOSTUNREACH:
    case EHOSTDOWN:
    case EAGAIN:       /* no local port free for the moment */
        return true;
    default:           /* no route, address family, policy: VIP_NOT_REACHABLE */
        return false;
    }
}

static void connect_failed(struct vipl_vi *vi, VIP_RETURN rc)
{
    if (rc == VIP_NOT_REACHABLE && vi->state == VIP_STATE_CONNECT_PENDING) {
        /* lost TCP before the answer, or the connect failed transiently */
        connect_retry_later(vi);
        return;
    }
    vi_close_fd(vi, rc != VIP_REJECT && rc != VIP_NO_MATCH);
    if (vi->p2p && rc == VIP_NO_MATCH) {
        vi->phase = PH_RETRY_WAIT; /* VITCP-4-P2P-RETRY-NOMATCH */
        vi->retry_at_ms = now_ms() + VIPL_P2P_RETRY_MS;
        return;
    }
    vi->state = VIP_STATE_IDLE;
    vi->phase = PH_NONE;
    vi->connect_result = rc;
    pthread_cond_broadcast(&vi->nic->cond);
}

/* A connect() error that waiting will not mend (no route, address family,
 * policy): VIP_NOT_REACHABLE at once. */
static void connect_gave_up(struct vipl_vi *vi)
{
    vi_close_fd(vi, true);
    vi->p2p = false;
    vi->state = VIP_STATE_IDLE;
    vi->phase = PH_NONE;
    vi->connect_result = VIP_NOT_REACHABLE;
    pthread_cond_broadcast(&vi->nic->cond);
}

void vi_start_connect(struct vipl_vi *vi)
{
    int fd = socket(vi->peer_sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        connect_failed(vi, VIP_ERROR_RESOURCE);
        return;
    }
    vi->nic->stats.ConnectionsRequested++;
    if (connect(fd, (struct sockaddr *)&vi->peer_sa, vi->peer_sa_len) < 0 && errno != EINPROGRESS) {
        int err = errno;
        close(fd);
        if (connect_errno_transient(err))
            connect_failed(vi, VIP_NOT_REACHABLE); /* tries again */
        else
            connect_gave_up(vi);
        return;
    }
    vi->fd = fd;
    vi->phase = PH_TCP_CONNECTING;
    vi_ep_update(vi);
    nic_wake(vi->nic); /* new deadline */
}

static void connect_established(struct vipl_vi *vi)
{
    int err = 0;
    socklen_t el = sizeof err;
    getsockopt(vi->fd, SOL_SOCKET, SO_ERROR, &err, &el);
    if (err) {
        if (connect_errno_transient(err))
            connect_failed(vi, VIP_NOT_REACHABLE); /* tries again */
        else
            connect_gave_up(vi);
        return;
    }
    int fd = vi->fd;
    if (!vi_conn_init(vi, fd)) {
        connect_failed(vi, VIP_ERROR_RESOURCE);
        return;
    }
    vi->request_msg_num = vi->tx_msg_num;
    vi_encode_ce(vi, VW_VITCP_CONNECT_REQUEST, NULL, 0);
    vi->phase = PH_AWAIT_ACCEPT;
    if (!flush_out(vi))
        connect_failed(vi, VIP_NOT_REACHABLE);
}

static bool disc_eq(const uint8_t *a, uint16_t alen, const uint8_t *b, uint16_t blen)
{
    return alen == blen && memcmp(a, b, alen) == 0;
}

/* Active side: the answer to our ConnectRequest (section 4.2). */
static void handle_answer(struct vipl_vi *vi, const struct vw_vitcp_seg *seg)
{
    const struct vw_vitcp_ce *ce = &seg->ce;
    switch (seg->hdr.type) {
    case VW_VITCP_CONNECT_ACCEPT: {
        uint16_t mine = (uint16_t)(vi->attrs.ReliabilityLevel & VW_VITCP_ATTR_RELIABILITY_MASK);
        bool ok = seg->has_ce && (ce->attrs & VW_VITCP_ATTR_RELIABILITY_MASK) == mine &&
                  ((ce->attrs & VW_VITCP_ATTR_P2P) != 0) == vi->p2p && ce->mtu != 0 &&
                  ce->mtu <= vi->attrs.MaxTransferSize && (!ce->opt_crc || vi->nic->crc_on) &&
                  disc_eq(ce->calling_disc, ce->calling_disc_len, vi->local_disc, vi->local_disc_len) &&
                  disc_eq(ce->called_disc, ce->called_disc_len, vi->remote_disc, vi->remote_disc_len) &&
                  seg->hdr.msg_ack == vi->request_msg_num;
        if (!ok) {
            /* VITCP-3.3-MTU-LESSER, -ACCEPT-DISC-COPY, -3.6-ACCEPT-CRC-ONLY-IF-REQUEST */
            vi->nic->stats.ProtocolErrors++;
            connect_failed(vi, VIP_REJECT);
            return;
        }
        vi_open(vi, &seg->hdr, ce, vi->nic->crc_on && ce->opt_crc, ce->mtu);
        return;
    }
    case VW_VITCP_CONNECT_REJECT: connect_failed(vi, VIP_REJECT); return;
    case VW_VITCP_CONNECT_NOMATCH: connect_failed(vi, VIP_NO_MATCH); return;
    default:
        vi->nic->stats.ProtocolErrors++; /* V19: data before ConnectAccept */
        connect_failed(vi, VIP_REJECT);
        return;
    }
}

/* ---------------------------------------------------------- receiving */
bool vi_advert_due(struct vipl_vi *vi)
{
    /* V17: a NOP tells a flow-controlled peer about new receives only when
     * what it last heard covers at most half of what is posted (an outgoing
     * data segment carries the count anyway). */
    if (!vi->peer_dfc || vi->adv_sent == vi->rx_posted || fault(vi) == VIPL_FAULT_NO_CREDIT_NOP)
        return false;
    int16_t peer_credit = (int16_t)(uint16_t)(vi->adv_sent - vi->peer_consumed);
    uint32_t posted = vi->rq.tail - vi->rq.next;
    if (peer_credit <= 0 || 2u * (uint32_t)peer_credit <= posted)
        vi->advert_pending = true;
    return vi->advert_pending;
}

static bool claim_recv(struct vipl_vi *vi, uint32_t msg_num)
{
    struct wq *q = &vi->rq;
    vi->peer_consumed++; /* the peer counts it against our advertisement (V17) */
    if (q->next == q->tail) {
        /* Receive queue empty (VIA 2.5): U drops, RD/RR break the connection. */
        vi->rx_drop = true;
        remote_error(vi, msg_num, VW_VITCP_ERR_VDE, VIP_ERROR_RECVQ_EMPTY, true);
        return false;
    }
    vi->rx_entry = q->next++;
    vi->rx_has_desc = true;
    vi_advert_due(vi); /* the peer's credit may be running out: vi_pump sends the NOP */
    VIP_DESCRIPTOR *d = wq_at(q, vi->rx_entry)->desc;
    uint64_t cap = 0;
    uint32_t err = 0;
    if ((d->CS.Control & (VIP_CONTROL_RESERVED | VIP_CONTROL_OP_MASK)) || d->CS.Reserved)
        err = VIP_STATUS_FORMAT_ERROR;
    else
        err = desc_check_local(vi, d, 0, &cap);
    vi->rx_status |= err;
    vi->rx_cap = err ? 0 : cap;
    return true;
}

static void finish_inbound_message(struct vipl_vi *vi)
{
    uint32_t status = vi->rx_status;
    if (vi->rx_has_desc) {
        struct wq_entry *e = wq_at(&vi->rq, vi->rx_entry);
        VIP_DESCRIPTOR *d = e->desc;
        d->CS.Length = vi->rx_bytes;
        d->CS.ImmediateData = vi->rx_idv ? vi->rx_imm : 0;
        uint32_t st = status | (vi->rx_type == VW_VITCP_SEND ? VIP_STATUS_OP_RECEIVE : VIP_STATUS_OP_REMOTE_RDMA_WRITE);
        if (vi->rx_idv)
            st |= VIP_STATUS_IMMEDIATE;
        vi_complete_entry(vi, &vi->rq, e, st);
    }
    vi->rx_in_msg = false;
    vi->rx_has_desc = false;
    vi->rx_region = NULL;
    if (vi->rx_drop)
        return;
    if (!(status & VIP_STATUS_ERROR_MASK)) {
        vi->rx_last_ok = vi->rx_msg_num;
        if (is_rr(vi))
            vi->ack_pending = true;
        return;
    }
    uint16_t code = (status & (VIP_STATUS_TRANSPORT_ERROR | VIP_STATUS_PARTIAL_ERROR)) ? VW_VITCP_ERR_UTE
                    : vi->rx_prot                                                      ? VW_VITCP_ERR_MPE
                                                                                       : VW_VITCP_ERR_VDE;
    bool report = vi->rx_prot && !vi->rx_has_desc; /* else the descriptor carries it */
    remote_error(vi, vi->rx_msg_num, code, VIP_ERROR_RDMAW_PROT, report);
}

static void on_data_segment(struct vipl_vi *vi, const struct vw_vitcp_seg *seg, bool crc_bad)
{
    const struct vw_vitcp_hdr *h = &seg->hdr;
    if (!vi->rx_in_msg) {
        if (h->msg_num != vi->rx_expected || h->data_offset != 0) {
            protocol_error(vi); /* VITCP-3.2-MSG-NUM-SEQ, VITCP-3.2-DATA-OFFSET-FIRST */
            return;
        }
        vi->rx_expected++;
        vi->rx_in_msg = true;
        vi->rx_type = h->type;
        vi->rx_msg_num = h->msg_num;
        vi->rx_bytes = 0;
        vi->rx_status = 0;
        vi->rx_drop = false;
        vi->rx_has_desc = false;
        vi->rx_prot = false;
        vi->rx_region = NULL;
        vi->rx_idv = (h->flags & VW_VITCP_FLAG_IDV) != 0;
        vi->rx_imm = h->imm_data;
        if (h->type == VW_VITCP_RDMA_WRITE) {
            vi->rx_rdma = seg->rdma;
            struct vipl_region *r = region_check(vi->nic, seg->rdma.handle, seg->rdma.addr, seg->rdma.length,
                                                 vi->attrs.Ptag);
            if (!vi->attrs.EnableRdmaWrite || !r || !r->rdma_write) {
                vi->rx_prot = true; /* VIA 9.5.3: the security boundary */
                vi->rx_status |= VIP_STATUS_RDMA_PROT_ERROR;
            } else {
                vi->rx_region = r;
            }
        }
        if ((h->type == VW_VITCP_SEND || vi->rx_idv) && !claim_recv(vi, h->msg_num) && vi->fd < 0)
            return;
    } else if (h->type != vi->rx_type || h->msg_num != vi->rx_msg_num || h->data_offset != vi->rx_bytes ||
               (h->type == VW_VITCP_RDMA_WRITE && memcmp(&seg->rdma, &vi->rx_rdma, sizeof seg->rdma))) {
        protocol_error(vi); /* NO-INTERLEAVE, DATA-OFFSET-NEXT, RDMA-SAME-HDR */
        return;
    }
    if ((uint64_t)vi->rx_bytes + seg->payload_len > vi->mtu) {
        protocol_error(vi); /* VITCP-3.3-MTU-RESPECTED */
        return;
    }
    if (h->flags & VW_VITCP_FLAG_TXERR)
        vi->rx_status |= VIP_STATUS_PARTIAL_ERROR | VIP_STATUS_TRANSPORT_ERROR; /* A9 */
    if (crc_bad)
        vi->rx_status |= VIP_STATUS_TRANSPORT_ERROR; /* A10 */
    if (!vi->rx_drop && !(vi->rx_status & VIP_STATUS_TRANSPORT_ERROR)) {
        if (h->type == VW_VITCP_RDMA_WRITE) {
            if ((uint64_t)h->data_offset + seg->payload_len > vi->rx_rdma.length) {
                protocol_error(vi); /* VITCP-3.4-RDMA-LEN-TOTAL */
                return;
            }
            if (vi->rx_region) /* region_check covered [addr, addr+length) */
                memcpy((uint8_t *)(uintptr_t)(vi->rx_rdma.addr + h->data_offset), seg->payload, seg->payload_len);
        } else if (vi->rx_has_desc && !(vi->rx_status & VIP_STATUS_ERROR_MASK)) {
            if ((uint64_t)vi->rx_bytes + seg->payload_len > vi->rx_cap) {
                vi->rx_status |= VIP_STATUS_LENGTH_ERROR;
            } else {
                VIP_DESCRIPTOR *d = wq_at(&vi->rq, vi->rx_entry)->desc;
                desc_scatter(d, 0, vi->rx_bytes, seg->payload, seg->payload_len);
            }
        }
    }
    vi->rx_bytes += (uint32_t)seg->payload_len;
    if (h->flags & VW_VITCP_FLAG_EOM) {
        if (h->type == VW_VITCP_RDMA_WRITE && vi->rx_bytes != vi->rx_rdma.length &&
            !(vi->rx_status & VIP_STATUS_TRANSPORT_ERROR)) {
            protocol_error(vi);
            return;
        }
        finish_inbound_message(vi);
    }
}

static void on_read_request(struct vipl_vi *vi, const struct vw_vitcp_seg *seg)
{
    const struct vw_vitcp_hdr *h = &seg->hdr;
    if (vi->rx_in_msg || h->msg_num != vi->rx_expected || vi->inbound_count >= vi->my_window ||
        vi->inbound_count >= VW_VITCP_MAX_TRACKED_READS || seg->rdma.length > vi->mtu) {
        protocol_error(vi); /* MSG-NUM-SEQ, VITCP-2.2.2.2.6-READ-WINDOW (A13), V11 */
        return;
    }
    vi->rx_expected++;
    struct vipl_region *r = region_check(vi->nic, seg->rdma.handle, seg->rdma.addr, seg->rdma.length, vi->attrs.Ptag);
    struct inbound_read *in = &vi->inbound[vi->inbound_count++];
    in->msg_num = h->msg_num;
    in->addr = seg->rdma.addr;
    in->length = seg->rdma.length;
    in->handle = seg->rdma.handle;
    in->sent = 0;
    in->refused = !vi->attrs.EnableRdmaRead || !r || !r->rdma_read;
    if (in->refused) {
        defer_error(vi->nic, vi, NULL, VIP_ERROR_RDMAR_PROT, VIP_RESOURCE_VI);
        if (is_rr(vi)) {
            vi->err_to_send = VW_VITCP_ERR_MPE;
            vi->err_msg_num = h->msg_num; /* VITCP-3.2-ACK-NAMES-ERROR-MSG */
        }
    } else {
        vi->rx_last_ok = h->msg_num;
        if (is_rr(vi))
            vi->ack_pending = true;
    }
}

static void on_read_response(struct vipl_vi *vi, const struct vw_vitcp_seg *seg, bool crc_bad)
{
    struct wq *q = &vi->sq;
    struct wq_entry *e = NULL;
    for (uint32_t i = q->done; i != q->next; i++) {
        struct wq_entry *c = wq_at(q, i);
        if (!c->completed && c->transmitted && !c->read_done && c->msg_num == seg->hdr.msg_num &&
            (c->desc->CS.Control & VIP_CONTROL_OP_MASK) == VIP_CONTROL_OP_RDMAREAD) {
            e = c;
            break;
        }
    }
    if (!e || seg->hdr.data_offset != e->sent || (uint64_t)e->sent + seg->payload_len > e->total) {
        protocol_error(vi); /* VITCP-3.2-RESP-MSG-NUM, VITCP-3.4-READ-RESP-LEN */
        return;
    }
    if (seg->hdr.flags & VW_VITCP_FLAG_TXERR)
        e->status |= (seg->hdr.remote_err & VW_VITCP_ERR_MPE) ? VIP_STATUS_RDMA_PROT_ERROR : VIP_STATUS_TRANSPORT_ERROR;
    if (crc_bad)
        e->status |= VIP_STATUS_TRANSPORT_ERROR;
    if (!(e->status & VIP_STATUS_ERROR_MASK)) {
        uint64_t total;
        /* Re-check the local buffer: it may have been deregistered. */
        if (desc_check_local(vi, e->desc, 1, &total) != 0)
            e->status |= VIP_STATUS_PROTECTION_ERROR;
        else
            desc_scatter(e->desc, 1, e->sent, seg->payload, seg->payload_len);
    }
    e->sent += (uint32_t)seg->payload_len;
    if (seg->hdr.flags & VW_VITCP_FLAG_EOM) {
        if (e->sent != e->total && !(e->status & VIP_STATUS_ERROR_MASK)) {
            protocol_error(vi);
            return;
        }
        e->read_done = true;
        vi->reads_outstanding--;
        if ((e->status & VIP_STATUS_ERROR_MASK) && !is_u(vi))
            vi->close_after_flush = true;
        vi_progress_sends(vi);
    }
}

/* Reliable Reception: Message ACK and Remote Error Code (A6, A7). */
static void on_ack(struct vipl_vi *vi, const struct vw_vitcp_hdr *h)
{
    uint32_t ack = h->msg_ack;
    if ((int32_t)(ack - vi->tx_msg_num) > 0) {
        protocol_error(vi); /* VITCP-3.2-ACK-VALID-RR: ahead of what we sent */
        return;
    }
    uint16_t err = h->remote_err & (VW_VITCP_ERR_MPE | VW_VITCP_ERR_VDE | VW_VITCP_ERR_UTE);
    /* 3.2: with a VI error the ACK names the message in error; the ones
     * before it were received. */
    uint32_t good = err ? ack - 1 : ack;
    if ((int32_t)(good - vi->peer_ack) > 0)
        vi->peer_ack = good;
    if (!err)
        return;
    vi_progress_sends(vi);
    struct wq *q = &vi->sq;
    for (uint32_t i = q->done; i != q->next; i++) {
        struct wq_entry *e = wq_at(q, i);
        if (!e->completed && e->msg_num == ack) {
            uint32_t st = (err & VW_VITCP_ERR_MPE)   ? VIP_STATUS_RDMA_PROT_ERROR
                          : (err & VW_VITCP_ERR_VDE) ? VIP_STATUS_REMOTE_DESC_ERROR
                                                     : VIP_STATUS_TRANSPORT_ERROR;
            e->desc->CS.Status = e->status | st | desc_op_status(e->desc->CS.Control & VIP_CONTROL_OP_MASK) |
                                 VIP_STATUS_DONE;
            e->completed = true;
            break;
        }
    }
    vi_fail(vi, true, VIP_ERROR_CONN_LOST);
}

static void vi_on_segment(void *ctx, const uint8_t *raw, size_t len, uint64_t stream_off,
                          const struct vw_vitcp_seg *seg, enum vw_req err, const struct vw_findings *fs)
{
    (void)raw, (void)stream_off, (void)fs;
    struct vipl_vi *vi = ctx;
    if (vi->fd < 0 || vi->state == VIP_STATE_ERROR || vi->close_after_flush)
        return;
    vi->nic->stats.SegmentsReceived++;
    vi->nic->stats.BytesReceived += len;
    if (err != VW_REQ_NONE || seg->hdr.version != VW_VITCP_VERSION) {
        if (vi->phase == PH_AWAIT_ACCEPT) {
            vi->nic->stats.ProtocolErrors++;
            connect_failed(vi, VIP_REJECT);
        } else {
            protocol_error(vi); /* V24, malformed segment */
        }
        return;
    }
    if (vi->phase == PH_AWAIT_ACCEPT) {
        handle_answer(vi, seg);
        return;
    }
    bool crc_bad = vi->crc && !seg->crc_ok && vi->nic->fault != VIPL_FAULT_BAD_CRC_ACCEPTED;
    if (crc_bad)
        vi->nic->stats.CrcErrors++;
    if (crc_bad && !is_u(vi)) {
        /* A10: deliver the error, then RR answers UTE and both close. */
        if (vi->rx_in_msg || seg->hdr.type == VW_VITCP_SEND) {
            if (!vi->rx_in_msg && (seg->hdr.type == VW_VITCP_SEND) && claim_recv(vi, seg->hdr.msg_num)) {
                vi->rx_in_msg = true;
                vi->rx_type = VW_VITCP_SEND;
                vi->rx_msg_num = seg->hdr.msg_num;
                vi->rx_bytes = 0;
                vi->rx_idv = false;
            }
            vi->rx_status |= VIP_STATUS_TRANSPORT_ERROR;
            finish_inbound_message(vi);
        } else {
            remote_error(vi, seg->hdr.msg_num, VW_VITCP_ERR_UTE, VIP_ERROR_RDMA_TRANSPORT, true);
        }
        return;
    }
    if (crc_bad && (seg->hdr.type == VW_VITCP_NOP || seg->hdr.type == VW_VITCP_RDMA_READ_REQ))
        return; /* U: a corrupt control segment is dropped */
    if (!crc_bad) {
        vi->peer_rx_posted = seg->hdr.rx_desc_posted;
        if (is_rr(vi)) {
            on_ack(vi, &seg->hdr);
            if (vi->fd < 0)
                return;
        }
    }
    switch (seg->hdr.type) {
    case VW_VITCP_SEND:
    case VW_VITCP_RDMA_WRITE: on_data_segment(vi, seg, crc_bad); break;
    case VW_VITCP_RDMA_READ_REQ: on_read_request(vi, seg); break;
    case VW_VITCP_RDMA_READ_RESP: on_read_response(vi, seg, crc_bad); break;
    case VW_VITCP_NOP: break;
    default: protocol_error(vi); break; /* V19: CE segment after the exchange */
    }
}

/* Bytes read from the VI's socket: n > 0 data, 0 FIN, < 0 error (errno).
 * false when nothing more should be read now. */
static bool vi_input(struct vipl_vi *vi, const uint8_t *buf, ssize_t n)
{
    if (n > 0) {
        enum vw_req fe = vw_vitcp_framer_feed(&vi->framer, buf, (size_t)n, vi_on_segment, vi);
        if (fe != VW_REQ_NONE && vi->fd >= 0) {
            if (vi->phase == PH_AWAIT_ACCEPT)
                connect_failed(vi, VIP_REJECT);
            else
                protocol_error(vi);
        }
        return vi->fd >= 0;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return false;
    /* FIN or RST from the peer (A5, VITCP-2.2.2.2.2-CLOSE-VI-ON-TCP-CLOSE). */
    if (vi->phase == PH_AWAIT_ACCEPT)
        connect_failed(vi, VIP_NOT_REACHABLE);
    else
        vi_fail(vi, true, VIP_ERROR_CONN_LOST);
    return false;
}

static void vi_on_readable(struct vipl_vi *vi)
{
    struct vipl_nic *nic = vi->nic;
    for (int round = 0; round < 16 && vi->fd >= 0; round++) {
        ssize_t n = recv(vi->fd, nic->rxbuf, nic->rxbuf_cap, MSG_DONTWAIT);
        if (!vi_input(vi, nic->rxbuf, n))
            break;
        if ((size_t)n < nic->rxbuf_cap)
            break;
    }
    vi_pump(vi);
}

/* ---------------------------------------------- consumer-driven waits */
/* Back from a wait without the lock: close what was closed under us. */
static void vi_io_reap(struct vipl_vi *vi)
{
    vi->io_polling = false;
    if (vi->io_zombie_fd >= 0) {
        close(vi->io_zombie_fd);
        vi->io_zombie_fd = -1;
    }
}

int vi_io_step(struct vipl_vi *vi, bool recv_wait, int64_t deadline, int64_t *until)
{
    struct vipl_nic *nic = vi->nic;
    if (vi->phase != PH_OPEN || vi->fd < 0 || (vi->io_owner && !*until))
        return 0; /* not connected, or another waiter drives it */
    int64_t now = now_ms();
    if (!*until)
        *until = now + VIPL_IO_WAIT_MS;
    int64_t end = deadline >= 0 && deadline < *until ? deadline : *until;
    if (now >= end)
        return 0;
    int fd = vi->fd;
    /* A receive wait with nothing to write blocks in recv() itself: the
     * peer's segment wakes this thread directly, as a blocking TCP read
     * would. Anything else polls the socket and the kick eventfd. */
    bool blocking = recv_wait && out_pending(vi) == 0;
    if (blocking) {
        if (!vi->io_rxbuf && !(vi->io_rxbuf = malloc(VIPL_IO_RXBUF)))
            return 0;
        if (!vi->io_blocking) {
            int fl = fcntl(fd, F_GETFL);
            if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
                return 0;
            vi->io_blocking = true;
        }
        int ms = (int)(end - now);
        if (vi->io_rcvtimeo_ms < 0 || vi->io_rcvtimeo_ms > ms || 2 * vi->io_rcvtimeo_ms < ms) {
            /* never longer than what is left; re-set only when far off */
            struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
            if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) < 0)
                return 0;
            vi->io_rcvtimeo_ms = ms;
        }
    } else if (vi->kick_fd < 0 && (vi->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0) {
        return 0;
    }
    if (!vi->io_owner) {
        vi->io_owner = true; /* the thread stops reading this socket */
        vi_ep_update(vi);
    }
    vi->io_polling = true;
    if (blocking) {
        uint8_t *buf = vi->io_rxbuf;
        nic_unlock(nic); /* handlers queued by our own processing run here */
        ssize_t n = recv(fd, buf, VIPL_IO_RXBUF, 0);
        int err = errno;
        pthread_mutex_lock(&nic->lock);
        if (!handle_valid(vi, OBJ_VI))
            return -1; /* destroyed meanwhile (VipDestroyVi refuses while we wait) */
        vi_io_reap(vi);
        if (vi->fd == fd && vi->phase == PH_OPEN) {
            errno = err;
            if (vi_input(vi, buf, n) && (size_t)n == VIPL_IO_RXBUF)
                vi_on_readable(vi); /* more may be there */
            else
                vi_pump(vi);
        }
        return 1;
    }
    struct pollfd p[2] = {
        {.fd = fd, .events = (short)(POLLIN | (out_pending(vi) ? POLLOUT : 0))},
        {.fd = vi->kick_fd, .events = POLLIN},
    };
    nic_unlock(nic);
    poll(p, 2, (int)(end - now));
    pthread_mutex_lock(&nic->lock);
    if (!handle_valid(vi, OBJ_VI))
        return -1;
    vi_io_reap(vi);
    if (p[1].revents) {
        uint64_t sink;
        ssize_t r = read(vi->kick_fd, &sink, sizeof sink);
        (void)r;
    }
    if (vi->fd == fd && vi->phase == PH_OPEN && p[0].revents) {
        if (p[0].revents & (POLLIN | POLLHUP | POLLERR))
            vi_on_readable(vi);
        else
            vi_pump(vi);
    }
    return 1;
}

void vi_io_attach(struct vipl_vi *vi)
{
    vi->io_lazy_until = 0;
    vi_ep_update(vi); /* input that came meanwhile wakes the thread */
}

void vi_io_end(struct vipl_vi *vi, bool keep)
{
    if (!vi->io_owner)
        return;
    vi->io_owner = false;
    if (keep && vi->fd >= 0 && vi->phase == PH_OPEN) {
        /* A consumer that waits again within VIPL_IO_LINGER_MS finds the
         * socket still out of the thread's set: no epoll_ctl, and no
         * spurious wakeup of the thread between two waits. */
        bool was = vi->io_lazy_until != 0;
        vi->io_lazy_until = now_ms() + VIPL_IO_LINGER_MS;
        if (!was)
            nic_wake(vi->nic); /* the thread must time the take-back */
        return;
    }
    vi_io_attach(vi);
}

/* ------------------------------------------------------------- thread */
static void accept_incoming(struct vipl_nic *nic)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof ss;
        int fd = accept4(nic->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE)
                listen_guard_out_of_fds(nic);
            return;
        }
        struct vipl_conn *c = calloc(1, sizeof *c);
        if (!c || vw_vitcp_framer_init(&c->framer, VW_VITCP_CRC_OFF) != 0) {
            free(c);
            close(fd);
            continue;
        }
        c->nic = nic;
        c->fd = fd;
        c->state = IN_WAIT_REQ;
        c->deadline_ms = now_ms() + VIPL_INCOMING_TIMEOUT_MS; /* V21 */
        c->peer_sa = ss;
        c->peer_sa_len = sl;
        c->next = nic->conns;
        nic->conns = c;
        nic->stats.ConnectionsAccepted++;
        set_sock_opts(fd);
    }
}

static void unlink_conn(struct vipl_nic *nic, struct vipl_conn *c)
{
    for (struct vipl_conn **pp = &nic->conns; *pp; pp = &(*pp)->next)
        if (*pp == c) {
            *pp = c->next;
            return;
        }
}

static int64_t vi_deadline(const struct vipl_vi *vi)
{
    int64_t d = -1;
    if (vi->phase == PH_RETRY_WAIT)
        d = vi->retry_at_ms;
    if (vi->state == VIP_STATE_CONNECT_PENDING && vi->deadline_ms >= 0 &&
        (d < 0 || vi->deadline_ms < d))
        d = vi->deadline_ms;
    return d;
}

static void run_timers(struct vipl_nic *nic)
{
    int64_t now = now_ms();
    for (struct vipl_conn *c = nic->conns, *next; c; c = next) {
        next = c->next;
        if (c->state == IN_CLAIMED || now < c->deadline_ms)
            continue;
        if (c->state == IN_HELD && !c->linger) {
            conn_refuse(c, VW_VITCP_CONNECT_NOMATCH); /* A4: grace over */
        } else {
            unlink_conn(nic, c); /* V21: incoming timeout */
            conn_free(c);
        }
    }
    for (struct vipl_vi *vi = nic->vis; vi; vi = vi->next) {
        if (vi->state != VIP_STATE_CONNECT_PENDING)
            continue;
        if (vi->deadline_ms >= 0 && now >= vi->deadline_ms) {
            vi->p2p = false; /* no more retries */
            vi_close_fd(vi, true);
            vi->state = VIP_STATE_IDLE;
            vi->phase = PH_NONE;
            vi->connect_result = VIP_TIMEOUT;
            pthread_cond_broadcast(&nic->cond);
        } else if (vi->phase == PH_RETRY_WAIT && now >= vi->retry_at_ms) {
            vi_start_connect(vi);
        }
    }
}

/* A ready VI socket in the progress thread (never one a consumer drives). */
static void vi_on_event(struct vipl_vi *vi, uint32_t re)
{
    if (vi->phase == PH_TCP_CONNECTING) {
        connect_established(vi);
        return;
    }
    if (re & (EPOLLIN | EPOLLHUP | EPOLLERR))
        vi_on_readable(vi);
    else if (re & EPOLLOUT)
        vi_pump(vi);
}

/* The progress thread polls its eventfd, the listener and half-open
 * connections with poll(), and the VI sockets through one epoll set (so a
 * waiting consumer can take its VI's socket out of the set without waking
 * the thread, see vi_io_step). */
void *provider_main(void *arg)
{
    struct vipl_nic *nic = arg;
    struct pollfd *pfds = NULL;
    size_t cap = 0;
    enum { MAX_EV = 64 };
    struct epoll_event evs[MAX_EV];
    pthread_mutex_lock(&nic->lock);
    while (nic->running) {
        host_tick(nic);
        size_t want = 4;
        for (struct vipl_conn *c = nic->conns; c; c = c->next)
            want++;
        if (want > cap) {
            struct pollfd *n = realloc(pfds, want * sizeof *n);
            if (!n)
                break;
            pfds = n;
            cap = want;
        }
        unsigned gen = ++nic->poll_gen;
        size_t n = 0;
        pfds[n++] = (struct pollfd){.fd = nic->wake_fd, .events = POLLIN};
        pfds[n++] = (struct pollfd){.fd = nic->epfd, .events = POLLIN};
        size_t listen_idx = n;
        int64_t next_deadline = host_deadline(nic);
        bool listen_paused = listen_guard_paused(nic, now_ms());
        if (listen_paused && (next_deadline < 0 || nic->listen_paused_until < next_deadline))
            next_deadline = nic->listen_paused_until; /* a negative fd is not polled */
        pfds[n++] = (struct pollfd){.fd = listen_paused ? -1 : nic->listen_fd, .events = POLLIN};
        size_t host_idx = n;
        pfds[n++] = (struct pollfd){.fd = host_poll_fd(nic), .events = POLLIN};
        for (struct vipl_conn *c = nic->conns; c; c = c->next) {
            if (c->state != IN_CLAIMED && (next_deadline < 0 || c->deadline_ms < next_deadline))
                next_deadline = c->deadline_ms;
            if (c->fd < 0 || c->peer_gone || c->linger)
                continue;
            c->poll_gen = gen;
            c->poll_idx = n;
            pfds[n++] = (struct pollfd){.fd = c->fd, .events = POLLIN};
        }
        int64_t now = now_ms();
        for (struct vipl_vi *vi = nic->vis; vi; vi = vi->next) {
            int64_t d = vi_deadline(vi);
            if (vi->io_lazy_until && !vi->io_owner) {
                if (now >= vi->io_lazy_until)
                    vi->io_lazy_until = 0; /* no consumer came back: take the socket */
                else if (d < 0 || vi->io_lazy_until < d)
                    d = vi->io_lazy_until;
            }
            if (d >= 0 && (next_deadline < 0 || d < next_deadline))
                next_deadline = d;
            vi_ep_update(vi);
        }
        int timeout = -1;
        if (next_deadline >= 0) {
            int64_t left = next_deadline - now;
            timeout = left < 0 ? 0 : left > 60000 ? 60000 : (int)left + 1;
        }
        nic_unlock(nic);
        int rc = poll(pfds, n, timeout);
        pthread_mutex_lock(&nic->lock);
        if (!nic->running)
            break;
        if (rc > 0) {
            if (pfds[0].revents) {
                uint64_t sink;
                ssize_t r = read(nic->wake_fd, &sink, sizeof sink);
                (void)r;
            }
            if (pfds[listen_idx].fd >= 0 && pfds[listen_idx].revents && nic->listen_fd >= 0)
                accept_incoming(nic);
            if (pfds[host_idx].revents)
                host_on_ready(nic);
            for (struct vipl_conn *c = nic->conns, *next; c; c = next) {
                next = c->next;
                if (c->poll_gen == gen && c->fd == pfds[c->poll_idx].fd && pfds[c->poll_idx].revents)
                    conn_on_readable(c); /* may free c */
            }
            if (pfds[1].revents) {
                /* Taken under the lock: the set is current (a consumer that
                 * took its socket out meanwhile gets no event here). */
                int ne = epoll_wait(nic->epfd, evs, MAX_EV, 0);
                for (int i = 0; i < ne; i++) {
                    struct vipl_vi *vi = nic->vis;
                    while (vi && !(vi->fd >= 0 && vi->ep_fd == vi->fd && vi->fd == evs[i].data.fd))
                        vi = vi->next;
                    if (!vi) {
                        /* Stale (its VI let go of it meanwhile): forget it. */
                        epoll_ctl(nic->epfd, EPOLL_CTL_DEL, evs[i].data.fd, NULL);
                        continue;
                    }
                    if (!vi->io_owner)
                        vi_on_event(vi, evs[i].events);
                }
            }
        }
        run_timers(nic);
    }
    nic_unlock(nic);
    free(pfds);
    return NULL;
}
