/*
 * The VI/TCP module's send side on the generic runner: a send step
 * encoded by the wire library (message numbers in sequence, the answer to
 * a live request, CE options, the RDMA header), a capture case's PDU
 * replayed with the live numbers, the receive descriptors a message needs
 * (V17), the NOP that acknowledges at Reliable Reception (V15), the
 * tester's own segments judged before they leave, and the questions to
 * the target outside the evidence ($level, the survival probe).
 */
#include "session.h"

#include <stdlib.h>
#include <string.h>

#include "vitcp/bytes.h"

#define DEFAULT_RX_POSTED 1024 /* what the tester advertises (V17) */

/* Remember a message the tester sends: the start of a Send (the
 * announcement is not its echo), an RdmaWrite's data (data=written). */
static void keep_sent(struct vs_session *v, unsigned type, uint32_t offset, const uint8_t *payload, size_t plen)
{
    if (type == VW_VITCP_SEND) {
        if (v->tester_first_send_len < 0)
            v->tester_first_send_len = (long)plen;
        if (offset == 0)
            v->send_head_len = 0;
        if (offset == v->send_head_len && v->send_head_len < VS_ANNOUNCE_LEN) {
            size_t k = plen < VS_ANNOUNCE_LEN - v->send_head_len ? plen : VS_ANNOUNCE_LEN - v->send_head_len;
            if (k)
                memcpy(v->send_head + v->send_head_len, payload, k);
            v->send_head_len += k;
        }
    } else if (type == VW_VITCP_RDMA_WRITE) {
        if (offset == 0)
            v->written_len = 0;
        if (offset == v->written_len && v->written_len + plen <= VS_WRITTEN_MAX) {
            if (plen)
                memcpy(v->written + v->written_len, payload, plen);
            v->written_len += plen;
        }
    }
}

/* The numbers the tester's messages carry from here on. */
static void number_sent(struct vs_session *v, unsigned t, uint32_t msg)
{
    if (t == VW_VITCP_CONNECT_REQUEST || t == VW_VITCP_CONNECT_ACCEPT) {
        v->tester_init_known = true;
        v->tester_init = msg;
        v->tester_last_msg = msg;
    } else if (t != VW_VITCP_NOP && t != VW_VITCP_RDMA_READ_RESP && t != VW_VITCP_CONNECT_REJECT &&
               t != VW_VITCP_CONNECT_NOMATCH) {
        v->tester_last_msg = msg;
    }
}

/* The encoded bytes to the core: the payload's place, the echo it keeps
 * (Sends only: data=echo compares with the tester's last Send). */
static int finish(struct vw_vitcp_enc *enc, size_t cap, struct cf_encoded *out, char *why, size_t whylen)
{
    uint8_t *buf = malloc(cap);
    size_t n = buf ? vw_vitcp_encode(enc, buf, cap) : 0;
    if (!n) {
        free(buf);
        snprintf(why, whylen, "the encoder cannot build this %s", vw_vitcp_type_name(enc->hdr.type));
        return -1;
    }
    out->bytes = buf;
    out->len = n;
    out->payload_len = enc->payload_len;
    out->payload_off = enc->payload_len ? vw_vitcp_encoded_len(enc) - enc->payload_len -
                                              (enc->trailer == VW_VITCP_TRAILER_NONE ? 0 : VW_VITCP_CRC_LEN)
                                        : 0;
    if (out->payload_off > n || out->payload_len > n - out->payload_off)
        out->payload_off = 0, out->payload_len = 0;
    out->msg_offset = enc->hdr.type == VW_VITCP_SEND ? enc->hdr.data_offset : CF_MSG_NO_ECHO;
    return 0;
}

/* Role passive: a replayed ConnectAccept answers the live request as the
 * captured one answered the captured request (st->replay_answer, capcase.c). */
static void answer_live_request(const struct vs_session *v, const struct cf_step *st, struct vw_vitcp_enc *enc,
                                uint8_t *opts, size_t opts_cap)
{
    const struct vw_vitcp_ce *req = &v->s.conn.request_ce;
    if (!v->c->passive || !v->target_ce_known || enc->hdr.type != VW_VITCP_CONNECT_ACCEPT)
        return;
    if (st->replay_answer & CF_ANSWER_DISC) {
        memcpy(enc->ce.calling_disc, req->calling_disc, VW_VITCP_DISC_MAX);
        memcpy(enc->ce.called_disc, req->called_disc, VW_VITCP_DISC_MAX);
        enc->ce.calling_disc_len = req->calling_disc_len > VW_VITCP_DISC_MAX ? VW_VITCP_DISC_MAX : req->calling_disc_len;
        enc->ce.called_disc_len = req->called_disc_len > VW_VITCP_DISC_MAX ? VW_VITCP_DISC_MAX : req->called_disc_len;
        enc->keep_seg_len = false;
    }
    if (st->replay_answer & CF_ANSWER_LEVEL)
        enc->ce.attrs = (uint16_t)((enc->ce.attrs & ~VW_VITCP_ATTR_RELIABILITY_MASK) |
                                   (req->attrs & VW_VITCP_ATTR_RELIABILITY_MASK));
    if ((st->replay_answer & CF_ANSWER_MTU) && req->mtu < enc->ce.mtu)
        enc->ce.mtu = req->mtu;
    if ((st->replay_answer & CF_ANSWER_CRC) && enc->ce.opt_crc && !req->opt_crc) {
        /* the live request declined the CRC option (3.6 MAY): so does the accept, and its trailer goes */
        enc->ce.opt_crc = false;
        enc->ce.options_len = vw_vitcp_opts_build(opts, opts_cap, false, enc->ce.opt_urgent, false);
        enc->ce.options = enc->ce.options_len ? opts : NULL;
        if (enc->trailer == VW_VITCP_TRAILER_CRC)
            enc->trailer = VW_VITCP_TRAILER_NONE;
        enc->keep_seg_len = false;
    }
}

/* The level found for the current target (0: not asked yet). */
static uint16_t known_level(struct cf_engine *e)
{
    const struct cf_vitcp_settings *s = cf_vitcp_settings(e);
    char target[sizeof s->level_target];
    snprintf(target, sizeof target, "%s:%s", e->host, e->port);
    return strcmp(s->level_target, target) == 0 ? s->level_bits : 0;
}

/*
 * A capture case's PDU of the tester's side, re-encoded by the wire library
 * with the capture's fields, payload and options. Its own message numbers
 * stay as captured (the tester chooses them); numbers that refer to the
 * target's messages (Message ACK, an RdmaReadResponse's number) are mapped
 * from the capture's initial number of the other side to the live one. A
 * trailer that was right stays right after the mapping, a wrong one stays
 * wrong.
 */
static int encode_replay(struct vs_session *v, const struct cf_step *st, struct cf_encoded *out, char *why,
                         size_t whylen)
{
    const struct cf_case *c = v->c;
    if (st->pdu_off > c->blob_len || st->pdu_len > c->blob_len - st->pdu_off) {
        snprintf(why, whylen, "capture PDU %u is outside the capture", st->cap_pdu);
        return -1;
    }
    const uint8_t *raw = c->blob + st->pdu_off;
    struct vw_vitcp_seg seg;
    enum vw_req e = vw_vitcp_decode(raw, st->pdu_len, st->replay_crc ? VW_VITCP_CRC_ON : VW_VITCP_CRC_OFF, &seg, NULL);
    if (e != VW_REQ_NONE) {
        snprintf(why, whylen, "capture PDU %u cannot be decoded (%s)", st->cap_pdu, vw_req_id(e));
        return -1;
    }
    struct vw_vitcp_enc enc;
    vw_vitcp_enc_init(&enc, seg.hdr.type, seg.has_crc);
    enc.hdr = seg.hdr;
    enc.with_rdma = seg.has_rdma;
    enc.rdma = seg.rdma;
    enc.with_ce = seg.has_ce;
    enc.ce = seg.ce;
    enc.payload = seg.payload;
    enc.payload_len = seg.payload_len;
    enc.trailer = !seg.has_crc ? VW_VITCP_TRAILER_NONE : seg.crc_ok ? VW_VITCP_TRAILER_CRC : VW_VITCP_TRAILER_BAD_CRC;
    /* a Segment Length that does not describe the segment is kept as captured */
    size_t natural = vw_vitcp_encoded_len(&enc);
    if (natural != seg.hdr.seg_len)
        enc.keep_seg_len = true;
    unsigned t = seg.hdr.type;
    const struct cf_vitcp_settings *set = cf_vitcp_settings(v->e);
    if ((c->flags & CF_VITCP_CASE_RUN_DISC) && t == VW_VITCP_CONNECT_REQUEST) {
        size_t dl = strlen(set->discriminator);
        if (dl > VW_VITCP_DISC_MAX)
            dl = VW_VITCP_DISC_MAX;
        memset(enc.ce.called_disc, 0, sizeof enc.ce.called_disc);
        memcpy(enc.ce.called_disc, set->discriminator, dl);
        enc.ce.called_disc_len = (uint16_t)dl;
        enc.keep_seg_len = false; /* the segment's length is the encoder's */
    }
    uint16_t level = known_level(v->e);
    if (!c->passive && t == VW_VITCP_CONNECT_REQUEST && level)
        enc.ce.attrs = (uint16_t)((enc.ce.attrs & ~VW_VITCP_ATTR_RELIABILITY_MASK) | level);
    uint8_t opts[16];
    if (st->replay_answer)
        answer_live_request(v, st, &enc, opts, sizeof opts);
    /* A data segment's good trailer follows the live negotiation: the
     * target may have declined the CRC option the capture's peer took. */
    const struct vw_vitcp_conn *conn = &v->s.conn;
    if (!seg.has_ce && t != VW_VITCP_CONNECT_REJECT && t != VW_VITCP_CONNECT_NOMATCH && conn->crc_known &&
        !conn->crc_negotiated && enc.trailer == VW_VITCP_TRAILER_CRC) {
        enc.trailer = VW_VITCP_TRAILER_NONE;
        enc.keep_seg_len = false;
    }
    if (c->cap_target_init_known && v->target_init_known && t != VW_VITCP_CONNECT_REQUEST) {
        enc.hdr.msg_ack = seg.hdr.msg_ack - c->cap_target_init + v->target_init;
        if (t == VW_VITCP_RDMA_READ_RESP)
            enc.hdr.msg_num = seg.hdr.msg_num - c->cap_target_init + v->target_init;
    }
    number_sent(v, t, seg.hdr.msg_num);
    keep_sent(v, t, seg.hdr.data_offset, seg.payload, seg.payload_len);
    return finish(&enc, (enc.keep_seg_len ? natural : vw_vitcp_encoded_len(&enc)) + 8, out, why, whylen);
}

/* Does the step start a message that takes a receive descriptor of the
 * target (a Send, an RdmaWrite with immediate data; V17)? */
static bool consumes_descriptor(const struct cf_step *st)
{
    bool first = !st->set[CF_F_OFFSET] || (st->val[CF_F_OFFSET] == 0 && st->var[CF_F_OFFSET] == CF_VAR_NONE);
    return first && !st->cap_pdu &&
           (st->type == VW_VITCP_SEND || (st->type == VW_VITCP_RDMA_WRITE && st->set[CF_F_IDV] && st->val[CF_F_IDV]));
}

/* The CE header of a scripted ConnectRequest/Accept. An accept (role
 * passive) answers the implementation's request: its level, the lesser
 * MTU, its discriminators (V9). */
static void encode_ce(const struct vs_session *v, const struct cf_step *st, const int64_t *vals,
                      struct vw_vitcp_enc *enc, uint8_t *opts, size_t opts_cap)
{
    const struct vw_vitcp_conn *conn = &v->s.conn;
    const struct vw_vitcp_ce *req = &conn->request_ce;
    bool answer = st->type == VW_VITCP_CONNECT_ACCEPT && conn->phase == VW_VITCP_PHASE_REQUESTED;
    uint16_t attrs = (uint16_t)(VW_VITCP_ATTR_RELIABLE_DELIVERY | VW_VITCP_ATTR_RDMA_WRITE | VW_VITCP_ATTR_RDMA_READ);
    uint32_t mtu = 65536u;
    if (answer) {
        attrs = (uint16_t)((req->attrs & VW_VITCP_ATTR_RELIABILITY_MASK) | VW_VITCP_ATTR_RDMA_WRITE |
                           VW_VITCP_ATTR_RDMA_READ);
        if (req->mtu && req->mtu < mtu)
            mtu = req->mtu;
    }
    enc->ce.attrs = st->set[CF_F_ATTRS] ? (uint16_t)vals[CF_F_ATTRS] : attrs; /* $level|RWE|RRE */
    enc->ce.mtu = st->set[CF_F_MTU] ? (uint32_t)vals[CF_F_MTU] : mtu;
    /* V18: a read window only with RDMA Read Enable */
    enc->ce.rdma_read_window = st->set[CF_F_WINDOW] ? (uint16_t)vals[CF_F_WINDOW]
                               : (enc->ce.attrs & VW_VITCP_ATTR_RDMA_READ) ? 4 : 0;
    if (answer && !st->str[CF_VITCP_STR_CALLING][0] && !st->str[CF_VITCP_STR_CALLED][0]) {
        memcpy(enc->ce.calling_disc, req->calling_disc, VW_VITCP_DISC_MAX);
        memcpy(enc->ce.called_disc, req->called_disc, VW_VITCP_DISC_MAX);
        enc->ce.calling_disc_len = req->calling_disc_len > VW_VITCP_DISC_MAX ? VW_VITCP_DISC_MAX : req->calling_disc_len;
        enc->ce.called_disc_len = req->called_disc_len > VW_VITCP_DISC_MAX ? VW_VITCP_DISC_MAX : req->called_disc_len;
    } else {
        const char *calling = st->str[CF_VITCP_STR_CALLING][0] ? st->str[CF_VITCP_STR_CALLING] : "vitcp-conform-tester";
        const char *called = st->str[CF_VITCP_STR_CALLED][0] ? st->str[CF_VITCP_STR_CALLED]
                                                              : cf_vitcp_settings(v->e)->discriminator;
        size_t cl = strlen(calling) > VW_VITCP_DISC_MAX ? VW_VITCP_DISC_MAX : strlen(calling);
        size_t dl = strlen(called) > VW_VITCP_DISC_MAX ? VW_VITCP_DISC_MAX : strlen(called);
        memcpy(enc->ce.calling_disc, calling, cl);
        memcpy(enc->ce.called_disc, called, dl);
        enc->ce.calling_disc_len = (uint16_t)cl;
        enc->ce.called_disc_len = (uint16_t)dl;
    }
    if (st->set[CF_F_CALLING_LEN]) enc->ce.calling_disc_len = (uint16_t)vals[CF_F_CALLING_LEN];
    if (st->set[CF_F_CALLED_LEN]) enc->ce.called_disc_len = (uint16_t)vals[CF_F_CALLED_LEN];
    size_t n = 0;
    if ((st->opts & CF_VITCP_OPT_UNKNOWN)) {
        /* An option of a type no draft defines, with 4 data bytes (V5). */
        vw_put_be16(opts, 0x7A7A);
        vw_put_be16(opts + 2, 8);
        vw_put_be32(opts + 4, 0xC0FFEE00u);
        n = 8;
    }
    if ((st->opts & CF_VITCP_OPT_BAD_LEN)) {
        vw_put_be16(opts + n, 0x7A7B);
        vw_put_be16(opts + n + 2, 2); /* under 4: malformed (V5) */
        n += 4;
    }
    n += vw_vitcp_opts_build(opts + n, opts_cap - n, (st->opts & CF_VITCP_OPT_CRC), (st->opts & CF_VITCP_OPT_URGENT),
                             (st->opts & CF_VITCP_OPT_EOL) || (st->opts & CF_VITCP_OPT_CRC) || n > 0);
    enc->ce.options = opts;
    enc->ce.options_len = n;
    enc->trailer = (st->opts & CF_VITCP_OPT_CRC) ? VW_VITCP_TRAILER_CRC : VW_VITCP_TRAILER_NONE;
}

int cf_vitcp_encode(void *session, const struct cf_step *st, const int64_t *vals, struct cf_encoded *out, char *why,
                    size_t whylen)
{
    struct vs_session *v = session;
    if (st->cap_pdu)
        return encode_replay(v, st, out, why, whylen);
    struct vw_vitcp_enc enc;
    const struct vw_vitcp_conn *conn = &v->s.conn;
    vw_vitcp_enc_init(&enc, st->type, conn->crc_known && conn->crc_negotiated);
    bool is_init = st->type == VW_VITCP_CONNECT_REQUEST || st->type == VW_VITCP_CONNECT_ACCEPT;

    /* Message numbers: explicit, relative (resolved), or the next in sequence. */
    uint32_t msg;
    if (st->set[CF_F_MSG])
        msg = (uint32_t)vals[CF_F_MSG];
    else if (is_init)
        msg = 1000;
    else if (st->type == VW_VITCP_NOP)
        msg = v->tester_last_msg;
    else if (st->type == VW_VITCP_CONNECT_REJECT || st->type == VW_VITCP_CONNECT_NOMATCH ||
             st->type == VW_VITCP_RDMA_READ_RESP)
        msg = 0;
    else
        msg = v->tester_last_msg + 1;
    number_sent(v, st->type, msg);
    enc.hdr.msg_num = msg;
    const struct vw_vitcp_dir *target = &conn->dir[vs_target_dir(v)];
    if (st->set[CF_F_ACK])
        enc.hdr.msg_ack = (uint32_t)vals[CF_F_ACK];
    else if (st->type != VW_VITCP_CONNECT_REQUEST && target->have_msg_num)
        enc.hdr.msg_ack = target->last_msg_num;
    enc.hdr.rx_desc_posted = st->set[CF_F_RXPOSTED] ? (uint16_t)vals[CF_F_RXPOSTED] : DEFAULT_RX_POSTED;
    if (st->set[CF_F_VERSION]) enc.hdr.version = (uint8_t)vals[CF_F_VERSION];
    if (st->set[CF_F_OFFSET]) enc.hdr.data_offset = (uint32_t)vals[CF_F_OFFSET];
    if (st->set[CF_F_IMM]) enc.hdr.imm_data = (uint32_t)vals[CF_F_IMM];
    if (st->set[CF_F_ERR]) enc.hdr.remote_err = (uint16_t)vals[CF_F_ERR];
    if (st->noeom || (st->set[CF_F_EOM] && !vals[CF_F_EOM]))
        enc.hdr.flags &= (uint8_t)~VW_VITCP_FLAG_EOM;
    if (st->set[CF_F_IDV] && vals[CF_F_IDV]) enc.hdr.flags |= VW_VITCP_FLAG_IDV;
    if (st->set[CF_F_TXERR] && vals[CF_F_TXERR]) enc.hdr.flags |= VW_VITCP_FLAG_TXERR;
    if (st->set[CF_F_SEGLEN]) {
        enc.keep_seg_len = true;
        enc.hdr.seg_len = (uint16_t)vals[CF_F_SEGLEN];
    }
    uint8_t opts[64];
    if (vw_vitcp_type_has_ce(st->type))
        encode_ce(v, st, vals, &enc, opts, sizeof opts);

    /* Payload and RDMA header. */
    size_t plen = st->set[CF_F_PAYLOAD] && vals[CF_F_PAYLOAD] > 0 ? (size_t)vals[CF_F_PAYLOAD] : 0;
    if (plen > VW_VITCP_SEG_MAX) {
        snprintf(why, whylen, "payload %zu is larger than a segment", plen);
        return -1;
    }
    uint8_t *payload = NULL;
    if (plen) {
        payload = malloc(plen);
        if (!payload) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        for (size_t i = 0; i < plen; i++)
            payload[i] = cf_pattern_byte(i + enc.hdr.data_offset, st->fill);
        enc.payload = payload;
        enc.payload_len = plen;
    }
    if (enc.with_rdma) {
        enc.rdma.addr = st->set[CF_F_RDMA_ADDR] ? (uint64_t)vals[CF_F_RDMA_ADDR] : 0;
        enc.rdma.handle = st->set[CF_F_RDMA_HANDLE] ? (uint32_t)vals[CF_F_RDMA_HANDLE] : 0;
        enc.rdma.length = st->set[CF_F_RDMA_LEN] ? (uint32_t)vals[CF_F_RDMA_LEN] : (uint32_t)plen;
    }
    switch (st->trailer) {
    case CF_TRAILER_AUTO: break;
    case CF_TRAILER_NONE: enc.trailer = VW_VITCP_TRAILER_NONE; break;
    case CF_TRAILER_GOOD: enc.trailer = VW_VITCP_TRAILER_CRC; break;
    case CF_TRAILER_BAD: enc.trailer = VW_VITCP_TRAILER_BAD_CRC; break;
    }
    keep_sent(v, st->type, enc.hdr.data_offset, payload, plen);
    if (consumes_descriptor(st))
        v->tester_consumed++;
    int rc = finish(&enc, vw_vitcp_encoded_len(&enc) + 8, out, why, whylen);
    free(payload);
    return rc;
}

/* A tester never sends a message the target has no receive descriptor for:
 * the target may advertise few (Rx Descriptors Posted, V17) and post more
 * later, and a message without a descriptor is an error at its end even
 * without DFC (VIA). The runner waits for its next advertisement. */
int cf_vitcp_send_ready(void *session, const struct cf_step *st, char *why, size_t whylen)
{
    struct vs_session *v = session;
    const struct vw_vitcp_conn *conn = &v->s.conn;
    const struct vw_vitcp_dir *target = &conn->dir[vs_target_dir(v)];
    if (!consumes_descriptor(st) || conn->phase != VW_VITCP_PHASE_CONNECTED || !target->have_rx_posted ||
        (int16_t)(uint16_t)(target->rx_posted - v->tester_consumed) > 0)
        return 1;
    snprintf(why, whylen, "the target advertised %u receive descriptor(s) (Rx Descriptors Posted) and posted no "
             "more for the case's next message within %u ms", target->rx_posted, v->e->slack_ms);
    return 0;
}

/* At Reliable Reception the target completes a message only when the
 * tester acknowledges it (V15), and may hold its next one until then: while
 * the tester waits and has data messages of the target it has not
 * acknowledged yet, it sends a NOP whose Message ACK names the last one, as
 * a conforming peer would. */
int cf_vitcp_idle_send(void *session, struct cf_encoded *out)
{
    struct vs_session *v = session;
    const struct vw_vitcp_conn *conn = &v->s.conn;
    const struct vw_vitcp_dir *target = &conn->dir[vs_target_dir(v)], *tester = &conn->dir[vs_tester_dir(v)];
    if (conn->phase != VW_VITCP_PHASE_CONNECTED || conn->level != VW_VITCP_ATTR_RELIABLE_RECEPTION ||
        !target->have_msg_num || (tester->have_ack && tester->last_ack == target->last_msg_num) ||
        (v->target_init_known && target->last_msg_num == v->target_init))
        return 0;
    struct cf_step nop = {.kind = CF_STEP_SEND, .type = VW_VITCP_NOP};
    int64_t vals[CF_MAX_FIELDS] = {0};
    char why[100];
    return cf_vitcp_encode(v, &nop, vals, out, why, sizeof why) == 0 ? 1 : 0;
}

/* The tester's own segments, before they leave: a message above the MTU
 * the target agreed would break the rule on the tester's side, so the case
 * cannot apply to a target that chose that MTU (V11 allows it). */
static void on_tester_segment(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_vitcp_seg *seg,
                              enum vw_req err, const struct vw_findings *fs)
{
    (void)raw, (void)len, (void)off, (void)err;
    struct vs_session *v = ctx;
    for (unsigned i = 0; i < fs->count && !v->mtu_na; i++)
        if (fs->item[i].req == VW_REQ_VITCP_3_3_MTU_RESPECTED && fs->item[i].severity == VW_SEV_ERROR) {
            v->mtu_na = true;
            snprintf(v->mtu_why, sizeof v->mtu_why, "the case's %s would exceed the MTU the target agreed (%u "
                     "bytes, a choice V11 allows): %s", vw_vitcp_type_name(seg->hdr.type), v->s.conn.mtu,
                     fs->item[i].detail);
        }
}

int cf_vitcp_session_sending(void *session, const struct cf_encoded *enc, char *why, size_t whylen)
{
    struct vs_session *v = session;
    vw_vitcp_session_feed(&v->s, vs_tester_dir(v), enc->bytes, enc->len, on_tester_segment, v);
    if (!v->mtu_na)
        return 0;
    snprintf(why, whylen, "%s", v->mtu_why);
    return 1;
}

/* The reliability levels a target is asked for, in this order. */
static const struct { const char *name; uint16_t bits; } levels[] = {
    {"RD", VW_VITCP_ATTR_RELIABLE_DELIVERY}, {"RR", VW_VITCP_ATTR_RELIABLE_RECEPTION}, {"U", VW_VITCP_ATTR_UNRELIABLE}};

/* Does the target accept a ConnectRequest at level (RD, RR, U)? A question
 * outside the evidence. 0 yes, -1 no (why: "got ConnectReject" for a
 * refused level). */
static int accepts_level(struct cf_engine *e, const char *level, char *why, size_t whylen)
{
    char script[256];
    snprintf(script, sizeof script,
             "case survival\nrequire VITCP-4.3-ACCEPT-ON-MATCH\nconnect\n"
             "send ConnectRequest attrs=%s|RWE|RRE mtu=65536 window=4\nexpect ConnectAccept\n", level);
    struct cf_case c;
    if (cf_case_parse(script, "survival", &c, why, whylen) < 0)
        return -1;
    return cf_generic_probe(e, &c, why, whylen);
}

/* $level: the first of RD, RR, U the target accepts (RD when none is:
 * the cases then fail on their own requests). */
uint16_t cf_vitcp_target_level(struct cf_engine *e)
{
    uint16_t known = known_level(e);
    if (known)
        return known;
    struct cf_vitcp_settings *s = cf_vitcp_settings(e);
    snprintf(s->level_target, sizeof s->level_target, "%s:%s", e->host, e->port);
    s->level_bits = VW_VITCP_ATTR_RELIABLE_DELIVERY;
    char why[CF_MESSAGE_MAX];
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (accepts_level(e, levels[i].name, why, sizeof why) == 0) {
            s->level_bits = levels[i].bits;
            break;
        }
    return s->level_bits;
}

/* A fresh connection must be accepted at some level: a target may offer
 * fewer levels than three (VIA 2.5), so a ConnectReject tries the next. */
int cf_vitcp_check_alive(struct cf_engine *e, char *why, size_t whylen)
{
    int rc = -1;
    for (size_t i = 0; i < sizeof levels / sizeof levels[0] && rc < 0; i++) {
        rc = accepts_level(e, levels[i].name, why, whylen);
        if (rc < 0 && !strstr(why, "got ConnectReject"))
            break; /* not a refused level: the target is gone */
    }
    return rc;
}

/* Does the case use $level (so the target's level is asked before it, not
 * in the middle of its connection)? */
static bool case_uses_level(const struct cf_case *c)
{
    for (unsigned i = 0; i < c->nsteps; i++) {
        const struct cf_step *st = &c->steps[i];
        for (unsigned f = 0; f < CF_F_COUNT; f++)
            if (st->var[f] == CF_VAR_LEVEL)
                return true;
        for (unsigned k = 0; k < st->nmatch; k++)
            if (st->match[k].var == CF_VAR_LEVEL)
                return true;
    }
    return false;
}

/* The module's run_case: $level is asked before the case, then the
 * generic runner runs it. */
void cf_vitcp_run_case(struct cf_engine *e, const struct cf_case *c, struct cf_result *res)
{
    if (!c->passive && case_uses_level(c))
        cf_vitcp_target_level(e);
    cf_generic_run_case(e, c, res);
}
