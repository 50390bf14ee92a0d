/*
 * The VI/TCP module's receive side on the generic runner: the target's
 * bytes through the wire library's session (every rule it breaks fails the
 * case), its segments to the core as messages - reassembled unless the
 * case compares segments - its region announcement (C8) taken out, and
 * the values only a VI/TCP run knows ($variables, +N).
 */
#include "session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vitcp/bytes.h"

void *cf_vitcp_session_new(const struct cf_case *c, struct cf_engine *e)
{
    struct vs_session *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    if (vw_vitcp_session_init(&v->s) != 0) {
        free(v);
        return NULL;
    }
    v->c = c;
    v->e = e;
    v->tester_first_send_len = -1;
    return v;
}

void cf_vitcp_session_free(void *session)
{
    struct vs_session *v = session;
    if (!v)
        return;
    for (unsigned i = 0; i < VS_PARTIAL_MAX; i++)
        free(v->partial[i].data);
    vw_vitcp_session_free(&v->s);
    free(v);
}

/* A segment (or a reassembled message: bytes are then its payload) to the core. */
static void hand_over(struct vs_session *v, const uint8_t *bytes, size_t len, const struct vw_vitcp_seg *seg,
                      unsigned index, bool gathered)
{
    uint8_t *raw = malloc(len ? len : 1);
    struct vs_msg *d = calloc(1, sizeof *d);
    if (!raw || !d) {
        free(raw);
        free(d);
        return;
    }
    memcpy(raw, bytes, len);
    d->seg = *seg;
    d->index = index;
    d->gathered = gathered;
    if (gathered) {
        d->seg.payload = raw;
        d->seg.payload_len = len;
    } else {
        if (seg->payload)
            d->seg.payload = raw + (seg->payload - bytes);
        if (seg->ce.options)
            d->seg.ce.options = raw + (seg->ce.options - bytes);
    }
    struct cf_msg m = {
        .type = seg->hdr.type, .raw = raw, .len = len, .payload = d->seg.payload,
        .payload_len = d->seg.payload ? d->seg.payload_len : 0, .msg_offset = seg->hdr.data_offset, .decoded = d,
    };
    v->sink(v->sink_ctx, &m);
}

/* A gathered message as it is (without EOM, when it never ended: the
 * expect that meets it names the rule, EOM-LAST). */
static void flush_partial(struct vs_session *v, struct vs_partial *p)
{
    struct vw_vitcp_seg whole = p->first;
    whole.hdr.flags |= p->flags;
    hand_over(v, p->data ? p->data : (const uint8_t *)"", p->len, &whole, p->index, true);
    free(p->data);
    p->data = NULL;
    p->used = false;
}

/* Received messages are compared as messages, however the target divided
 * them (3.2 "may be divided into multiple VI segments"): the segments of a
 * Send, RdmaWrite or RdmaReadResponse are gathered until EOM and handed
 * over as one (its first segment's header, EOM, every payload byte; the
 * session has checked each segment already). True when the segment was
 * taken (the message is not complete, or it went whole). */
static bool reassemble(struct vs_session *v, const struct vw_vitcp_seg *seg, unsigned index)
{
    if (!vw_vitcp_type_has_payload(seg->hdr.type))
        return false;
    struct vs_partial *p = NULL, *free_slot = NULL;
    for (unsigned i = 0; i < VS_PARTIAL_MAX; i++) {
        struct vs_partial *c = &v->partial[i];
        if (c->used && c->first.hdr.type == seg->hdr.type && c->first.hdr.msg_num != seg->hdr.msg_num)
            flush_partial(v, c); /* a new message of the same type ends the one before it, EOM or not */
        if (c->used && c->first.hdr.type == seg->hdr.type)
            p = c;
        else if (!c->used && !free_slot)
            free_slot = c;
    }
    bool eom = (seg->hdr.flags & VW_VITCP_FLAG_EOM) != 0;
    if (!p && (eom || !free_slot || seg->hdr.data_offset != 0))
        return false; /* one segment, or nothing to gather into: as it is */
    if (!p) {
        p = free_slot;
        memset(p, 0, sizeof *p);
        p->used = true;
        p->first = *seg;
        p->first.payload = NULL;
        p->first.ce.options = NULL;
        p->index = index;
    }
    if (p->len + seg->payload_len > VS_MESSAGE_MAX) {
        free(p->data);
        p->data = NULL;
        p->used = false; /* an endless message: its segments are checked, not kept */
        return true;
    }
    if (!cf_bytes_append(&p->data, &p->len, &p->cap, seg->payload, seg->payload_len))
        return true;
    p->flags |= seg->hdr.flags & VW_VITCP_FLAG_TXERR;
    if (!eom)
        return true;
    p->flags |= VW_VITCP_FLAG_EOM;
    flush_partial(v, p);
    return true;
}

static void on_target_segment(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_vitcp_seg *seg,
                              enum vw_req err, const struct vw_findings *fs)
{
    (void)off;
    struct vs_session *v = ctx;
    unsigned index = ++v->rx_index;
    /* Every rule the target breaks fails the case, whatever step runs. */
    if (err != VW_REQ_NONE) {
        cf_rx_broke(v->rx, err, "target segment #%u (%s) cannot be parsed: %s", index,
                    vw_vitcp_type_name(len >= 2 ? raw[1] & VW_VITCP_TYPE_MASK : 99), vw_req_id(err));
        return;
    }
    cf_rx_findings(v->rx, fs, "target segment #%u (%s)", index, vw_vitcp_type_name(seg->hdr.type));
    for (unsigned i = 0; i < fs->count; i++)
        if (fs->item[i].severity == VW_SEV_WARN) {
            char *notes = v->rx->advisories;
            size_t have = strlen(notes), size = sizeof v->rx->advisories;
            if (have + 8 < size)
                snprintf(notes + have, size - have, "%s%s: %s", have ? "; advisory " : "", vw_req_id(fs->item[i].req),
                         fs->item[i].detail);
        }
    if ((seg->hdr.type == VW_VITCP_CONNECT_ACCEPT || seg->hdr.type == VW_VITCP_CONNECT_REQUEST) &&
        !v->target_init_known) {
        v->target_init_known = true;
        v->target_init = seg->hdr.msg_num;
    }
    if (seg->has_ce && !v->target_ce_known) {
        v->target_ce_known = true;
        v->target_window = seg->ce.rdma_read_window;
        v->target_rx = seg->hdr.rx_desc_posted;
    }
    /* The vipl-peer convention (C8): the target's first Send, unsolicited
     * and 16 bytes long, announces its RDMA region; it is not an answer. */
    if (seg->hdr.type == VW_VITCP_SEND && !v->announce_done) {
        v->announce_done = true;
        bool echo = v->tester_first_send_len == VS_ANNOUNCE_LEN && v->send_head_len == VS_ANNOUNCE_LEN &&
                    seg->payload && seg->payload_len >= VS_ANNOUNCE_LEN &&
                    memcmp(seg->payload, v->send_head, VS_ANNOUNCE_LEN) == 0;
        if (cf_vitcp_settings(v->e)->announce && !echo && seg->payload_len == VS_ANNOUNCE_LEN &&
            seg->hdr.data_offset == 0 && (seg->hdr.flags & VW_VITCP_FLAG_EOM)) {
            v->region_known = true;
            v->region_addr = vw_get_be64(seg->payload);
            v->region_handle = vw_get_be32(seg->payload + 8);
            v->region_len = vw_get_be32(seg->payload + 12);
            v->target_init++; /* msg=+N counts the messages after it */
            return;
        }
    }
    if (!(v->c->flags & CF_VITCP_CASE_SEGMENTS) && reassemble(v, seg, index))
        return;
    hand_over(v, raw, len, seg, index, false);
}

void cf_vitcp_session_feed(void *session, const uint8_t *data, size_t len, cf_msg_sink sink, void *ctx,
                           struct cf_rx_verdict *rx)
{
    struct vs_session *v = session;
    v->sink = sink;
    v->sink_ctx = ctx;
    v->rx = rx;
    v->rx_bytes += len;
    vw_vitcp_session_feed(&v->s, vs_target_dir(v), data, len, on_target_segment, v);
    v->rx = NULL;
}

void cf_vitcp_session_urgent(void *session, struct cf_rx_verdict *rx)
{
    struct vs_session *v = session;
    if (v->s.conn.dir[vs_tester_dir(v)].ce_urgent_opt || rx->req != VW_REQ_NONE)
        return;
    rx->req = VW_REQ_VITCP_3_7_URGENT_ONLY_IF_OFFERED;
    snprintf(rx->detail, sizeof rx->detail, "the target designated urgent data (stream byte %llu) although the "
             "tester never sent the Urgent Marker option", (unsigned long long)v->rx_bytes);
}

/* Bytes the target sent that no whole segment took: what they are and why
 * they could not be framed. */
size_t cf_vitcp_session_unframed(void *session, char *out, size_t n)
{
    struct vs_session *v = session;
    const struct vw_vitcp_framer *f = &v->s.framer[vs_target_dir(v)];
    if (f->have == 0 || !f->buf || !out)
        return f->buf ? f->have : 0;
    const uint8_t *b = f->buf;
    char head[3 * 8 + 1] = "";
    for (size_t i = 0; i < f->have && i < 8; i++)
        snprintf(head + 3 * i, sizeof head - 3 * i, "%02x ", b[i]);
    bool plausible = f->have < VW_VITCP_SEG_HDR_LEN || vw_vitcp_plausible_header(b, f->have);
    snprintf(out, n, "%llu bytes arrived but no whole VI/TCP segment: the last %zu (starting %s) %s",
             (unsigned long long)v->rx_bytes, f->have, head,
             f->have < 4 ? "are too few for a Segment Length"
                         : plausible ? "wait for the rest of the Segment Length they announce, "
                                     : "are no plausible VI/TCP header (version, type, reserved bits), "
                                       "so they cannot be framed; they announce ");
    size_t used = strlen(out);
    if (f->have >= 4 && used < n)
        snprintf(out + used, n - used, "a Segment Length of %u", vw_vitcp_peek_seg_len(b, f->have));
    return f->have;
}

bool cf_vitcp_session_flush(void *session, cf_msg_sink sink, void *ctx)
{
    struct vs_session *v = session;
    bool any = false;
    v->sink = sink;
    v->sink_ctx = ctx;
    for (unsigned i = 0; i < VS_PARTIAL_MAX; i++)
        if (v->partial[i].used) {
            flush_partial(v, &v->partial[i]);
            any = true;
        }
    return any;
}

bool cf_vitcp_field_value(const struct cf_msg *m, unsigned f, int64_t *v)
{
    const struct vw_vitcp_seg *s = &((const struct vs_msg *)m->decoded)->seg;
    switch ((enum cf_field)f) {
    case CF_F_VERSION: *v = s->hdr.version; return true;
    case CF_F_EOM: *v = !!(s->hdr.flags & VW_VITCP_FLAG_EOM); return true;
    case CF_F_IDV: *v = !!(s->hdr.flags & VW_VITCP_FLAG_IDV); return true;
    case CF_F_TXERR: *v = !!(s->hdr.flags & VW_VITCP_FLAG_TXERR); return true;
    case CF_F_SEGLEN: *v = s->hdr.seg_len; return true;
    case CF_F_OFFSET: *v = s->hdr.data_offset; return true;
    case CF_F_IMM: *v = s->hdr.imm_data; return true;
    case CF_F_MSG: *v = s->hdr.msg_num; return true;
    case CF_F_ACK: *v = s->hdr.msg_ack; return true;
    case CF_F_RXPOSTED: *v = s->hdr.rx_desc_posted; return true;
    case CF_F_ERR: *v = s->hdr.remote_err; return true;
    case CF_F_ATTRS: *v = s->ce.attrs; return s->has_ce;
    case CF_F_LEVEL: *v = s->ce.attrs & VW_VITCP_ATTR_RELIABILITY_MASK; return s->has_ce;
    case CF_F_MTU: *v = s->ce.mtu; return s->has_ce;
    case CF_F_WINDOW: *v = s->ce.rdma_read_window; return s->has_ce;
    case CF_F_CALLING_LEN: *v = s->ce.calling_disc_len; return s->has_ce;
    case CF_F_CALLED_LEN: *v = s->ce.called_disc_len; return s->has_ce;
    case CF_F_RDMA_ADDR: *v = (int64_t)s->rdma.addr; return s->has_rdma;
    case CF_F_RDMA_HANDLE: *v = s->rdma.handle; return s->has_rdma;
    case CF_F_RDMA_LEN: *v = s->rdma.length; return s->has_rdma;
    case CF_F_OPT_CRC: *v = s->ce.opt_crc; return s->has_ce;
    case CF_F_OPT_URGENT: *v = s->ce.opt_urgent; return s->has_ce;
    case CF_F_OPT_UNKNOWN: *v = s->ce.opt_unknown; return s->has_ce;
    case CF_F_PAYLOAD: *v = (int64_t)s->payload_len; return true;
    case CF_F_CRC: *v = s->has_crc; return true;
    case CF_F_COUNT: break;
    }
    return false;
}

/* A reassembled message has no one Segment Length. */
bool cf_vitcp_field_ignored(const struct cf_msg *m, unsigned f)
{
    return f == CF_F_SEGLEN && ((const struct vs_msg *)m->decoded)->gathered;
}

void cf_vitcp_describe(const struct cf_msg *m, char *out, size_t n)
{
    const struct vs_msg *d = m->decoded;
    const struct vw_vitcp_seg *s = &d->seg;
    int w = snprintf(out, n, "%s%s (PDU #%u) msg=%u ack=%u offset=%u payload=%zu crc=%d idv=%d imm=0x%x",
                     vw_vitcp_type_name(s->hdr.type), (s->hdr.flags & VW_VITCP_FLAG_EOM) ? " eom" : "", d->index,
                     s->hdr.msg_num, s->hdr.msg_ack, s->hdr.data_offset, s->payload_len, s->has_crc,
                     !!(s->hdr.flags & VW_VITCP_FLAG_IDV), s->hdr.imm_data);
    if (s->has_ce && w > 0 && (size_t)w < n)
        snprintf(out + w, n - (size_t)w, " attrs=0x%x mtu=%u window=%u opt.crc=%d opt.urgent=%d", s->ce.attrs,
                 s->ce.mtu, s->ce.rdma_read_window, s->ce.opt_crc, s->ce.opt_urgent);
}

/* NOPs carry only ACKs and credits: an expect passes over them. With
 * 'level-optional', a provider need not offer every level (VIA 2.5, V19). */
int cf_vitcp_unmatched(const struct cf_case *c, const struct cf_step *st, const struct cf_msg *m, char *why,
                       size_t whylen)
{
    if (m->type == VW_VITCP_NOP && st->type != VW_VITCP_NOP && st->type != CF_TYPE_ANY)
        return CF_UNMATCHED_PASS_OVER;
    if (!(c->flags & CF_VITCP_CASE_LEVEL_OPTIONAL) || st->type != VW_VITCP_CONNECT_ACCEPT ||
        m->type != VW_VITCP_CONNECT_REJECT)
        return 0;
    snprintf(why, whylen, "the target refused the request's reliability level with ConnectReject: a provider "
             "need not offer every level (VIA 2.5, V19)");
    return CF_UNMATCHED_REFUSED;
}

/* data=written (the tester's last RdmaWrite) and a capture case's payload bytes. */
int cf_vitcp_match_more(void *session, const struct cf_case *c, const struct cf_step *st, const struct cf_msg *m,
                        char *why, size_t whylen)
{
    const struct vs_session *v = session;
    const struct vw_vitcp_seg *s = &((const struct vs_msg *)m->decoded)->seg;
    if (st->data_capture) {
        size_t want = 0;
        for (unsigned i = 0; i < st->nmatch; i++)
            if (st->match[i].field == CF_F_PAYLOAD)
                want = (size_t)st->match[i].value;
        bool inside = st->cap_data_off <= c->blob_len && want <= c->blob_len - st->cap_data_off;
        if (!inside || s->payload_len != want || (want && memcmp(s->payload, c->blob + st->cap_data_off, want) != 0)) {
            size_t at = 0;
            while (inside && at < want && at < s->payload_len && s->payload[at] == c->blob[st->cap_data_off + at])
                at++;
            snprintf(why, whylen, "payload differs from the capture's at byte %zu (expected 0x%02x, got 0x%02x; "
                     "%zu bytes expected, %zu received)", at, inside && at < want ? c->blob[st->cap_data_off + at] : 0,
                     at < s->payload_len ? s->payload[at] : 0, want, s->payload_len);
            return -1;
        }
    }
    if (st->data_written) {
        size_t off = s->hdr.data_offset;
        if (off > v->written_len || s->payload_len > v->written_len - off ||
            (s->payload_len && memcmp(s->payload, v->written + off, s->payload_len) != 0)) {
            snprintf(why, whylen, "payload at offset %zu differs from the data written", off);
            return -1;
        }
    }
    return 0;
}

/* The target's region: announced (C8), or --region, else the case cannot apply. */
static int region(struct vs_session *v, bool final, char *why, size_t whylen)
{
    if (v->region_known)
        return CF_RESOLVED;
    if (cf_vitcp_settings(v->e)->announce && !v->announce_done && !final)
        return CF_RESOLVE_WAIT;
    if (v->e->region_set) {
        v->region_known = true;
        v->region_addr = v->e->region_addr;
        v->region_handle = v->e->region_handle;
        v->region_len = v->e->region_len;
        return CF_RESOLVED;
    }
    snprintf(why, whylen, "the target announced no RDMA region (vipl-peer convention) and no --region was given");
    return CF_RESOLVE_NA;
}

int cf_vitcp_resolve(void *session, unsigned field, unsigned var, bool relative, int64_t value,
                     const struct cf_msg *m, bool final, int64_t *out, char *why, size_t whylen)
{
    struct vs_session *v = session;
    if (relative) {
        /* msg=+N counts from the sender's initial number, except in an
         * RdmaReadResponse, which carries the tester's request number; a
         * send's ack=+N from the target's */
        bool tester_base = m ? field != CF_F_MSG || m->type == VW_VITCP_RDMA_READ_RESP : field == CF_F_MSG;
        bool known = tester_base ? v->tester_init_known : v->target_init_known;
        if (m && !known) {
            snprintf(why, whylen, "%s=+N before the initial number is known", cf_field_name((enum cf_field)field));
            return -1;
        }
        uint32_t base = tester_base ? v->tester_init : v->target_init;
        *out = m ? (int64_t)(uint32_t)(value + base) : (int64_t)((uint32_t)value + base);
        return CF_RESOLVED;
    }
    int64_t base = 0;
    switch (var) {
    case CF_VAR_ADDR: case CF_VAR_HANDLE: case CF_VAR_LEN: {
        int rc = region(v, final, why, whylen);
        if (rc != CF_RESOLVED)
            return rc;
        base = var == CF_VAR_ADDR ? (int64_t)v->region_addr
               : var == CF_VAR_HANDLE ? (int64_t)v->region_handle : (int64_t)v->region_len;
        break;
    }
    case CF_VAR_LEVEL:
        base = cf_vitcp_target_level(v->e);
        break;
    case CF_VAR_WINDOW: case CF_VAR_RX:
        if (!v->target_ce_known) {
            snprintf(why, whylen, "$window/$rx before the target's CE segment");
            return -1;
        }
        base = var == CF_VAR_WINDOW ? v->target_window : v->target_rx;
        break;
    default:
        break;
    }
    *out = base + value;
    return CF_RESOLVED;
}
