/*
 * The VI/TCP rules that need connection state: the CE exchange (sections 3.3,
 * 3.5, 3.6, 4), message numbering and data offsets (3.2), RDMA reads and the
 * read window (2.2.2.2.6, V18), Message ACKs (V15) and descriptor flow
 * control (V17). One checker sees both directions; dir is the sending side.
 * Serial-number comparisons use signed differences (mod 2^32 / 2^16).
 */
#include <string.h>
#include "vitcp/vitcp_stream.h"

#define SEV_E VW_SEV_ERROR
#define SEV_W VW_SEV_WARN
#define SEV_N VW_SEV_NOTE

void vw_vitcp_conn_init(struct vw_vitcp_conn *c)
{
    memset(c, 0, sizeof *c);
    c->phase = VW_VITCP_PHASE_INIT;
}

void vw_vitcp_conn_saw_start(struct vw_vitcp_conn *c)
{
    c->start_seen = true;
}

enum vw_vitcp_crc_mode vw_vitcp_conn_crc_mode(const struct vw_vitcp_conn *c)
{
    if (!c->crc_known)
        return VW_VITCP_CRC_AUTO;
    return c->crc_negotiated ? VW_VITCP_CRC_ON : VW_VITCP_CRC_OFF;
}

static void remember_ce(struct vw_vitcp_dir *d, const struct vw_vitcp_seg *seg)
{
    d->ce_seen = true;
    d->ce_crc_opt = seg->ce.opt_crc;
    d->ce_urgent_opt = seg->ce.opt_urgent;
    d->attrs = seg->ce.attrs;
    d->mtu = seg->ce.mtu;
    d->read_window = seg->ce.rdma_read_window;
    d->have_msg_num = true;
    d->last_msg_num = seg->hdr.msg_num; /* the initial number I (V14) */
}

static void check_accept(struct vw_vitcp_conn *c, int dir, const struct vw_vitcp_seg *seg,
                         struct vw_findings *fs)
{
    const struct vw_vitcp_dir *req = &c->dir[1 - dir];
    const struct vw_vitcp_ce *ce = &seg->ce;
    if (ce->opt_crc && !req->ce_crc_opt)
        vw_findings_add(fs, VW_REQ_VITCP_3_6_ACCEPT_CRC_ONLY_IF_REQ, SEV_E, 0, 0,
                        "ConnectAccept carries the CRC option the ConnectRequest did not offer");
    if (ce->mtu > req->mtu)
        vw_findings_add(fs, VW_REQ_VITCP_3_3_MTU_LESSER, SEV_E, 28, 4,
                        "agreed MTU %u is above the proposed %u", ce->mtu, req->mtu);
    if ((ce->attrs & VW_VITCP_ATTR_RELIABILITY_MASK) != (req->attrs & VW_VITCP_ATTR_RELIABILITY_MASK))
        vw_findings_add(fs, VW_REQ_VITCP_3_3_LEVEL_MATCH, SEV_E, 24, 2,
                        "accepted with reliability bits 0x%x, requested 0x%x",
                        ce->attrs & VW_VITCP_ATTR_RELIABILITY_MASK, req->attrs & VW_VITCP_ATTR_RELIABILITY_MASK);
    if ((ce->attrs ^ req->attrs) & VW_VITCP_ATTR_P2P)
        vw_findings_add(fs, VW_REQ_VITCP_3_3_P2P_MATCH, SEV_E, 24, 2, "peer-to-peer bit differs from the request");
    if (seg->hdr.msg_ack != req->last_msg_num)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_ACK_VALID_RR, SEV_N, 16, 4,
                        "ConnectAccept Message ACK %u, request's Message Number %u (V15)",
                        seg->hdr.msg_ack, req->last_msg_num);
}

static void check_disc_copy(const struct vw_vitcp_ce *req, const struct vw_vitcp_ce *acc, struct vw_findings *fs)
{
    bool same = req->calling_disc_len == acc->calling_disc_len && req->called_disc_len == acc->called_disc_len &&
                req->calling_disc_len <= VW_VITCP_DISC_MAX && req->called_disc_len <= VW_VITCP_DISC_MAX &&
                !memcmp(req->calling_disc, acc->calling_disc, req->calling_disc_len) &&
                !memcmp(req->called_disc, acc->called_disc, req->called_disc_len);
    if (!same)
        vw_findings_add(fs, VW_REQ_VITCP_3_3_RESPONSE_DISC, SEV_E, 32, 136,
                        "ConnectAccept discriminators differ from the request's (V9)");
}

/* An answer before any request, where the capture holds no start: the
 * request came before the capture (or before the plugin recognised the
 * connection), so the answer answers one nobody saw (V38). */
static bool request_not_captured(const struct vw_vitcp_conn *c)
{
    return c->phase == VW_VITCP_PHASE_INIT && !c->start_seen;
}

/* Connection setup: returns false when the segment must not be checked as data. */
static bool check_setup(struct vw_vitcp_conn *c, int dir, const struct vw_vitcp_seg *seg,
                        struct vw_findings *fs, struct vw_vitcp_ce *req_ce)
{
    unsigned type = seg->hdr.type;
    if (c->phase == VW_VITCP_PHASE_REFUSED) {
        vw_findings_add(fs, VW_REQ_VITCP_4_CLOSE_AFTER_REFUSE, SEV_E, 0, 0,
                        "%s after the connection was refused; TCP must close", vw_vitcp_type_name(type));
        return false;
    }
    switch (type) {
    case VW_VITCP_CONNECT_REQUEST:
        if (c->phase != VW_VITCP_PHASE_INIT) {
            vw_findings_add(fs, VW_REQ_VITCP_4_UNEXPECTED_CLOSE, SEV_E, 0, 0, "ConnectRequest in an established or pending connection");
            return false;
        }
        if (seg->hdr.msg_ack != 0)
            vw_findings_add(fs, VW_REQ_VITCP_3_2_ACK_VALID_RR, SEV_N, 16, 4, "ConnectRequest Message ACK %u (V15: 0)", seg->hdr.msg_ack);
        c->phase = VW_VITCP_PHASE_REQUESTED;
        c->requester = dir;
        c->request_malformed = seg->hdr.version != VW_VITCP_VERSION || seg->ce.calling_disc_len > VW_VITCP_DISC_MAX ||
                               seg->ce.called_disc_len > VW_VITCP_DISC_MAX;
        remember_ce(&c->dir[dir], seg);
        *req_ce = seg->ce;
        req_ce->options = NULL; /* points into a segment that will be gone */
        req_ce->options_len = 0;
        return false;
    case VW_VITCP_CONNECT_ACCEPT:
        if (request_not_captured(c)) {
            /* nothing to check the answer against */
            remember_ce(&c->dir[dir], seg);
            c->phase = VW_VITCP_PHASE_MIDSTREAM;
            c->mtu = seg->ce.mtu;
            c->level = seg->ce.attrs & VW_VITCP_ATTR_RELIABILITY_MASK;
            return false;
        }
        if (c->phase != VW_VITCP_PHASE_REQUESTED || dir == c->requester) {
            vw_findings_add(fs, VW_REQ_VITCP_4_UNEXPECTED_CLOSE, SEV_E, 0, 0,
                            "ConnectAccept without a pending ConnectRequest from the other side");
            return false;
        }
        check_accept(c, dir, seg, fs);
        check_disc_copy(req_ce, &seg->ce, fs);
        remember_ce(&c->dir[dir], seg);
        c->phase = VW_VITCP_PHASE_CONNECTED;
        c->crc_known = true;
        c->crc_negotiated = seg->ce.opt_crc && c->dir[1 - dir].ce_crc_opt;
        c->mtu = seg->ce.mtu;
        c->level = seg->ce.attrs & VW_VITCP_ATTR_RELIABILITY_MASK;
        return false;
    case VW_VITCP_CONNECT_REJECT:
    case VW_VITCP_CONNECT_NOMATCH:
        if ((c->phase != VW_VITCP_PHASE_REQUESTED || dir == c->requester) &&
            !request_not_captured(c))
            vw_findings_add(fs, VW_REQ_VITCP_4_UNEXPECTED_CLOSE, SEV_E, 0, 0,
                            "%s without a pending ConnectRequest from the other side", vw_vitcp_type_name(type));
        c->phase = VW_VITCP_PHASE_REFUSED;
        return false;
    default:
        break;
    }
    if (c->phase == VW_VITCP_PHASE_REQUESTED) {
        vw_findings_add(fs, VW_REQ_VITCP_4_REQUEST_FIRST, SEV_E, 0, 0,
                        "%s before the ConnectAccept", vw_vitcp_type_name(type));
    } else if (c->phase == VW_VITCP_PHASE_INIT && c->start_seen) {
        /* the state machine leaves Incoming only on a ConnectRequest */
        vw_findings_add(fs, VW_REQ_VITCP_4_REQUEST_FIRST, SEV_E, 0, 0,
                        "%s before any ConnectRequest: a connection starts with the CE exchange",
                        vw_vitcp_type_name(type));
        return false;
    } else if (c->phase == VW_VITCP_PHASE_INIT) {
        c->phase = VW_VITCP_PHASE_MIDSTREAM; /* the capture started after the CE exchange */
    }
    return true;
}

static struct vw_vitcp_read *find_read(struct vw_vitcp_dir *d, uint32_t msg_num)
{
    for (unsigned i = 0; i < d->reads_outstanding; i++)
        if (d->reads[i].msg_num == msg_num)
            return &d->reads[i];
    return NULL;
}

static void drop_read(struct vw_vitcp_dir *d, struct vw_vitcp_read *r)
{
    size_t i = (size_t)(r - d->reads);
    memmove(&d->reads[i], &d->reads[i + 1], (d->reads_outstanding - i - 1) * sizeof *r);
    d->reads_outstanding--;
}

static void check_read_response(struct vw_vitcp_conn *c, int dir, const struct vw_vitcp_seg *seg,
                                 struct vw_findings *fs)
{
    struct vw_vitcp_dir *me = &c->dir[dir];
    struct vw_vitcp_dir *requester = &c->dir[1 - dir];
    const struct vw_vitcp_hdr *h = &seg->hdr;
    if (me->in_resp && me->resp_msg_num != h->msg_num)
        vw_findings_add(fs, VW_REQ_VITCP_2_2_NO_INTERLEAVE, SEV_E, 12, 4,
                        "RdmaReadResponse %u starts before response %u ended", h->msg_num, me->resp_msg_num);
    struct vw_vitcp_read *r = find_read(requester, h->msg_num);
    if (!r) {
        if (c->phase != VW_VITCP_PHASE_MIDSTREAM)
            vw_findings_add(fs, VW_REQ_VITCP_3_2_RESP_MSG_NUM, SEV_E, 12, 4,
                            "RdmaReadResponse %u answers no outstanding RdmaReadRequest", h->msg_num);
        me->in_resp = !(h->flags & VW_VITCP_FLAG_EOM);
        me->resp_msg_num = h->msg_num;
        return;
    }
    if (r->received == 0 && h->data_offset != 0 && !me->in_resp)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_DATA_OFFSET_FIRST, SEV_E, 4, 4,
                        "first response segment has Data Offset %u", h->data_offset);
    else if (h->data_offset != r->received)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_DATA_OFFSET_NEXT, SEV_E, 4, 4,
                        "Data Offset %u, %u bytes already sent", h->data_offset, r->received);
    r->received += (uint32_t)seg->payload_len;
    if (r->received > r->length)
        vw_findings_add(fs, VW_REQ_VITCP_3_4_READ_RESP_LEN, SEV_E, 0, 0,
                        "responses carry %u bytes, the request asked for %u", r->received, r->length);
    me->in_resp = !(h->flags & VW_VITCP_FLAG_EOM);
    me->resp_msg_num = h->msg_num;
    if (!me->in_resp) {
        if (r->received < r->length)
            vw_findings_add(fs, VW_REQ_VITCP_3_4_READ_RESP_LEN, SEV_E, 0, 0,
                            "response ended after %u of %u bytes", r->received, r->length);
        drop_read(requester, r);
    }
}

static void start_message(struct vw_vitcp_conn *c, struct vw_vitcp_dir *me, int dir,
                          const struct vw_vitcp_seg *seg, struct vw_findings *fs)
{
    const struct vw_vitcp_hdr *h = &seg->hdr;
    if (me->have_msg_num && h->msg_num != me->last_msg_num + 1)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_MSG_NUM_SEQ, SEV_E, 12, 4,
                        "Message Number %u, expected %u", h->msg_num, me->last_msg_num + 1);
    me->have_msg_num = true;
    me->last_msg_num = h->msg_num;
    if (h->data_offset != 0)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_DATA_OFFSET_FIRST, SEV_E, 4, 4,
                        "first segment of message %u has Data Offset %u", h->msg_num, h->data_offset);
    me->cur_type = h->type;
    me->cur_msg_num = h->msg_num;
    me->cur_offset = h->data_offset;
    me->cur_flags = h->flags;
    me->cur_imm = h->imm_data;
    me->cur_rdma = seg->rdma;
    me->mtu_reported = false;
    if (h->type == VW_VITCP_RDMA_READ_REQ) {
        const struct vw_vitcp_dir *peer = &c->dir[1 - dir];
        if (peer->ce_seen && me->reads_outstanding >= peer->read_window)
            vw_findings_add(fs, VW_REQ_VITCP_2_2_READ_WINDOW, SEV_E, 0, 0,
                            "%u RDMA reads outstanding; the responder's window is %u",
                            me->reads_outstanding + 1, peer->read_window);
        if (c->mtu && seg->rdma.length > c->mtu)
            vw_findings_add(fs, VW_REQ_VITCP_3_3_MTU_RESPECTED, SEV_E, 36, 4,
                            "RDMA read of %u bytes exceeds the agreed MTU %u", seg->rdma.length, c->mtu);
        if (me->reads_outstanding == VW_VITCP_MAX_TRACKED_READS)
            drop_read(me, &me->reads[0]); /* keep the newest; the oldest is reported lost */
        struct vw_vitcp_read *r = &me->reads[me->reads_outstanding++];
        r->msg_num = h->msg_num;
        r->length = seg->rdma.length;
        r->received = 0;
    }
    /* Descriptor flow control (V17): the DFC end consumes peer descriptors. */
    const struct vw_vitcp_dir *peer = &c->dir[1 - dir];
    bool consumes = h->type == VW_VITCP_SEND || (h->type == VW_VITCP_RDMA_WRITE && (h->flags & VW_VITCP_FLAG_IDV));
    if (consumes && me->ce_seen && (me->attrs & VW_VITCP_ATTR_DFC) && peer->have_rx_posted) {
        me->consumed++;
        if ((int16_t)(uint16_t)(peer->rx_posted - me->consumed) < 0)
            vw_findings_add(fs, VW_REQ_VITCP_3_2_DFC_DELAY, SEV_E, 0, 0,
                            "message %u consumes descriptor %u; the peer has posted %u",
                            h->msg_num, me->consumed, peer->rx_posted);
    }
}

static void continue_message(struct vw_vitcp_dir *me, const struct vw_vitcp_seg *seg, struct vw_findings *fs)
{
    const struct vw_vitcp_hdr *h = &seg->hdr;
    if (h->data_offset != me->cur_offset)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_DATA_OFFSET_NEXT, SEV_E, 4, 4,
                        "Data Offset %u, %u bytes already sent", h->data_offset, me->cur_offset);
    if ((h->flags ^ me->cur_flags) & VW_VITCP_FLAG_IDV)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_IDV_EACH_SEGMENT, SEV_E, 1, 1,
                        "Immediate Data Valid differs between segments of message %u", h->msg_num);
    else if (h->imm_data != me->cur_imm && (h->flags & VW_VITCP_FLAG_IDV))
        vw_findings_add(fs, VW_REQ_VITCP_3_2_IMM_SAME, SEV_E, 8, 4,
                        "Immediate Data 0x%08x, earlier segments 0x%08x", h->imm_data, me->cur_imm);
    if (seg->has_rdma && memcmp(&seg->rdma, &me->cur_rdma, sizeof seg->rdma) != 0)
        vw_findings_add(fs, VW_REQ_VITCP_3_4_RDMA_SAME_HDR, SEV_E, 24, 16,
                        "RDMA header differs from the message's first segment");
}

static void check_message(struct vw_vitcp_conn *c, int dir, const struct vw_vitcp_seg *seg,
                          struct vw_findings *fs)
{
    struct vw_vitcp_dir *me = &c->dir[dir];
    const struct vw_vitcp_hdr *h = &seg->hdr;
    bool cont = me->in_msg && h->type == me->cur_type && h->msg_num == me->cur_msg_num;
    if (me->in_msg && !cont)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_EOM_LAST, SEV_E, 0, 0,
                        "%s %u starts while %s %u has not ended (no EOM)", vw_vitcp_type_name(h->type),
                        h->msg_num, vw_vitcp_type_name(me->cur_type), me->cur_msg_num);
    if (cont)
        continue_message(me, seg, fs);
    else
        start_message(c, me, dir, seg, fs);
    me->cur_offset += (uint32_t)seg->payload_len;
    me->in_msg = !(h->flags & VW_VITCP_FLAG_EOM);
    if (c->mtu && me->cur_offset > c->mtu && !me->mtu_reported) {
        me->mtu_reported = true;
        vw_findings_add(fs, VW_REQ_VITCP_3_3_MTU_RESPECTED, SEV_E, 0, 0,
                        "message %u is %u bytes so far, above the agreed MTU %u", h->msg_num, me->cur_offset, c->mtu);
    }
    if (h->type == VW_VITCP_RDMA_WRITE && !me->in_msg && me->cur_offset != me->cur_rdma.length)
        vw_findings_add(fs, VW_REQ_VITCP_3_4_RDMA_LEN_TOTAL, SEV_E, 36, 4,
                        "RdmaWrite carried %u bytes, RDMA Length says %u", me->cur_offset, me->cur_rdma.length);
}

static void check_ack_fields(struct vw_vitcp_conn *c, int dir, const struct vw_vitcp_seg *seg,
                             struct vw_findings *fs)
{
    struct vw_vitcp_dir *me = &c->dir[dir];
    const struct vw_vitcp_dir *peer = &c->dir[1 - dir];
    const struct vw_vitcp_hdr *h = &seg->hdr;
    unsigned vi_err = h->remote_err & (VW_VITCP_ERR_MPE | VW_VITCP_ERR_VDE | VW_VITCP_ERR_UTE);
    if (me->error_acked)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_ACK_ERROR_CLOSE, SEV_E, 0, 0,
                        "segment after this side reported a VI error; it must close (V15)");
    if (c->level == VW_VITCP_ATTR_RELIABLE_RECEPTION) {
        if (peer->have_msg_num && (int32_t)(h->msg_ack - peer->last_msg_num) > 0)
            vw_findings_add(fs, VW_REQ_VITCP_3_2_ACK_VALID_RR, SEV_E, 16, 4,
                            "Message ACK %u is ahead of the last message %u received", h->msg_ack, peer->last_msg_num);
        else if (me->have_ack && (int32_t)(h->msg_ack - me->last_ack) < 0)
            vw_findings_add(fs, VW_REQ_VITCP_3_2_ACK_VALID_RR, SEV_E, 16, 4,
                            "Message ACK went back from %u to %u", me->last_ack, h->msg_ack);
        if (vi_err)
            me->error_acked = true;
        me->have_ack = true;
        me->last_ack = h->msg_ack;
    } else if (c->level) {
        if (h->msg_ack != 0 && peer->have_msg_num && (int32_t)(h->msg_ack - peer->last_msg_num) > 0)
            vw_findings_add(fs, VW_REQ_VITCP_3_2_ACK_ZERO_RD, SEV_W, 16, 4,
                            "Message ACK %u is neither 0 nor a message received (V15)", h->msg_ack);
        if (vi_err)
            vw_findings_add(fs, VW_REQ_VITCP_3_2_ERR_ZERO_RD, SEV_N, 22, 2,
                            "VI Error Type 0x%x below Reliable Reception (receivers ignore it)", vi_err);
    }
    if (me->have_rx_posted && (int16_t)(uint16_t)(h->rx_desc_posted - me->rx_posted) < 0)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_RX_DESC_MOD, SEV_E, 20, 2,
                        "Rx Descriptors Posted went back from %u to %u", me->rx_posted, h->rx_desc_posted);
    me->have_rx_posted = true;
    me->rx_posted = h->rx_desc_posted;
}

void vw_vitcp_conn_check(struct vw_vitcp_conn *c, int dir, const struct vw_vitcp_seg *seg,
                         struct vw_findings *fs)
{
    if (dir < 0 || dir > 1 || seg->hdr.type >= VW_VITCP_TYPE_COUNT)
        return;
    struct vw_vitcp_dir *me = &c->dir[dir];
    me->seen_any = true;
    me->segments++;
    me->bytes += seg->hdr.seg_len;
    bool is_data = check_setup(c, dir, seg, fs, &c->request_ce);
    if (seg->hdr.type == VW_VITCP_CONNECT_REQUEST || seg->hdr.type == VW_VITCP_CONNECT_ACCEPT) {
        me->have_rx_posted = true;
        me->rx_posted = seg->hdr.rx_desc_posted;
    }
    if (!is_data)
        return;
    if (!c->crc_known) {
        /* Mid-stream: the first data segment shows whether trailers are used. */
        c->crc_known = true;
        c->crc_negotiated = seg->has_crc;
    } else if (seg->has_crc != c->crc_negotiated &&
               !vw_findings_has(fs, VW_REQ_VITCP_3_6_CRC_ONLY_IF_NEGOTIATED)) {
        vw_findings_add(fs, VW_REQ_VITCP_3_6_CRC_ONLY_IF_NEGOTIATED, SEV_E, 0, 0,
                        "segment %s a trailer CRC; the CE exchange negotiated %s", seg->has_crc ? "carries" : "lacks",
                        c->crc_negotiated ? "CRC" : "no CRC");
    }
    check_ack_fields(c, dir, seg, fs);
    switch (seg->hdr.type) {
    case VW_VITCP_NOP:
        if (me->have_msg_num && seg->hdr.msg_num != me->last_msg_num)
            vw_findings_add(fs, VW_REQ_VITCP_3_2_NOP_MSG_NUM, SEV_E, 12, 4,
                            "NOP Message Number %u, last message sent %u", seg->hdr.msg_num, me->last_msg_num);
        break;
    case VW_VITCP_RDMA_READ_RESP:
        check_read_response(c, dir, seg, fs);
        break;
    default:
        check_message(c, dir, seg, fs);
        break;
    }
}

static void open_message_note(const struct vw_vitcp_conn *c, int d, struct vw_findings *fs)
{
    const struct vw_vitcp_dir *me = &c->dir[d];
    vw_findings_add(fs, VW_REQ_VITCP_3_2_EOM_LAST, SEV_N, 0, 0, "side %d: %s %u has no segment with EOM", d,
                    vw_vitcp_type_name(me->cur_type), me->cur_msg_num);
}

void vw_vitcp_direction_end(struct vw_vitcp_conn *c, int dir, size_t cut_bytes, struct vw_findings *fs)
{
    if (dir < 0 || dir > 1 || c->dir[dir].ended)
        return;
    c->dir[dir].ended = true;
    if (cut_bytes)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_SEG_TRUNCATED, SEV_E, 0, 0,
                        "side %d ended (TCP FIN) %zu bytes into a segment", dir, cut_bytes);
    if (c->dir[dir].in_msg)
        open_message_note(c, dir, fs);
}

void vw_vitcp_conn_finish(struct vw_vitcp_conn *c, struct vw_findings *fs)
{
    /* a malformed request is rightly closed without an answer (V10, V24) */
    if (c->phase == VW_VITCP_PHASE_REQUESTED && !c->request_malformed)
        vw_findings_add(fs, VW_REQ_VITCP_4_ANSWER_TYPES, SEV_W, 0, 0, "ConnectRequest never answered");
    for (int d = 0; d < 2; d++) {
        const struct vw_vitcp_dir *me = &c->dir[d];
        if (me->in_msg && !me->ended)
            open_message_note(c, d, fs);
        for (unsigned i = 0; i < me->reads_outstanding; i++)
            vw_findings_add(fs, VW_REQ_VITCP_3_4_READ_RESP_LEN, SEV_N, 0, 0,
                            "side %d: RdmaReadRequest %u (%u bytes) answered with %u bytes", d,
                            me->reads[i].msg_num, me->reads[i].length, me->reads[i].received);
    }
}

enum vw_req vw_vitcp_urgent_verdict(uint64_t designated, uint64_t seg_off, size_t seg_len)
{
    if (designated < seg_off || designated - seg_off >= seg_len)
        return VW_REQ_COUNT;
    if (designated == seg_off)
        return VW_REQ_NONE;
    return designated == seg_off + 1 ? VW_REQ_VITCP_3_7_URGENT_RFC1122 : VW_REQ_VITCP_3_7_URGENT_FIRST_BYTE;
}
