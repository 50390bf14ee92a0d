/*
 * iWARP Framing for TCP (draft-williams-iwarp-ift-01), with the project's
 * readings of it (spec-decisions I1-I9).
 *
 * Each TCP direction starts with a 64-byte adaption indication (AI), then
 * carries frames: header_size, payload_size, the receiver's VTag, the DDP
 * header, the header CRC (if the sender announced HC), the payload and the
 * payload CRC (if the sender announced PC). The two AIs of a connection are
 * tracked per conversation and applied to every later frame. The DDP header
 * and payload are handed to Wireshark's own iWARP DDP/RDMAP dissector (I5).
 *
 * Every verdict comes from the wire library: vw_ift_ind_decode and
 * vw_ift_frame_decode_as_sent check each PDU (CRCs included), a vw_ift_nego
 * per conversation the rules that need both sides (phases, R bits, VTags,
 * frames before the indications). Their findings become expert items whose
 * text starts with the requirement ID (wire/catalog/ift.def), so an ID
 * means the same here, in lint and in conformance reports. This file only
 * frames PDUs (tcp_dissect_pdus) and builds the tree.
 */
#include <epan/packet.h>
#include <epan/conversation.h>
#include <epan/exceptions.h>
#include <epan/expert.h>
#include <epan/prefs.h>
#include <epan/proto_data.h>
#include <epan/tap.h>
#include <epan/dissectors/packet-tcp.h>
#include <vitcp/ift.h>
#include <vitcp/ift_stream.h>
#include "plugin_protos.h"
#include "info_column.h"
#include "rule_experts.h"
#include "stream_end.h"
#include "tcp_repair.h"
#include "vitcp_dissector.h"


static int proto_ift = -1;
static int ift_tap = -1;
static dissector_handle_t ift_handle;
static dissector_handle_t ddp_rdmap_handle;
static int proto_ddp_rdmap = -1; /* Wireshark's iwarp_ddp_rdmap, for its per-frame data */

static int hf_ift_ai = -1;
static int hf_ift_ai_magic = -1;
static int hf_ift_ai_version = -1;
static int hf_ift_ai_bc_version = -1;
static int hf_ift_ai_flags = -1;
static int hf_ift_ai_flags_ph = -1;
static int hf_ift_ai_flags_r = -1;
static int hf_ift_ai_flags_hc = -1;
static int hf_ift_ai_flags_pc = -1;
static int hf_ift_ai_flags_ih = -1;
static int hf_ift_ai_flags_ip = -1;
static int hf_ift_ai_flags_sp = -1;
static int hf_ift_ai_flags_sm = -1;
static int hf_ift_ai_flags_rm = -1;
static int hf_ift_ai_flags_reserved = -1;
static int hf_ift_ai_vtag = -1;
static int hf_ift_ai_marker_interval = -1;
static int hf_ift_ai_reserved = -1;
static int hf_ift_ai_crc = -1;
static int hf_ift_ai_crc_status = -1;
static int hf_ift_frame = -1;
static int hf_ift_header_size = -1;
static int hf_ift_payload_size = -1;
static int hf_ift_vtag = -1;
static int hf_ift_ddp_header = -1;
/* The RFC 5041 DDP header's fields in DDP mode (I14, D7): Wireshark's DDP
 * dissector would read byte 1 as RDMAP, which in DDP mode is the ULP's. */
static int hf_ift_ddp_tagged = -1;
static int hf_ift_ddp_last = -1;
static int hf_ift_ddp_reserved = -1;
static int hf_ift_ddp_dv = -1;
static int hf_ift_ddp_rsvdulp = -1;
static int hf_ift_ddp_stag = -1;
static int hf_ift_ddp_to = -1;
static int hf_ift_ddp_rsvdulp2 = -1;
static int hf_ift_ddp_qn = -1;
static int hf_ift_ddp_msn = -1;
static int hf_ift_ddp_mo = -1;
static int hf_ift_hcrc = -1;
static int hf_ift_hcrc_status = -1;
static int hf_ift_payload = -1;
static int hf_ift_pcrc = -1;
static int hf_ift_pcrc_status = -1;
static int hf_ift_state = -1;
static int hf_ift_state_ai_frame = -1;
static int hf_ift_state_peer_ai_frame = -1;
static int hf_ift_state_hc = -1;
static int hf_ift_state_pc = -1;
static int hf_ift_state_vtag = -1;
static int hf_ift_state_mode = -1;

static gint ett_ift = -1;
static gint ett_ift_ai = -1;
static gint ett_ift_ai_flags = -1;
static gint ett_ift_frame = -1;
static gint ett_ift_ddp = -1;
static gint ett_ift_ddp_control = -1;
static gint ett_ift_state = -1;

static rule_experts_t ift_rules;

/* Preferences. */
static gboolean ift_desegment = TRUE;
static gboolean ift_call_ddp = TRUE;
/* Layout assumed for a direction whose AI is not in the capture. */
static gboolean ift_assume_hc = FALSE;
static gboolean ift_assume_pc = FALSE;

static const value_string ift_phase_vals[] = {
    { 0, "Phase 0 (from A)" },
    { 1, "Phase 1 (answer from B)" },
    { 0, NULL }
};

enum ift_mode { IFT_MODE_DDP, IFT_MODE_RDMA, IFT_MODE_R_DISAGREE, IFT_MODE_UNKNOWN };
static const value_string ift_mode_vals[] = {
    { IFT_MODE_DDP, "DDP mode (both R clear)" },
    { IFT_MODE_RDMA, "RDMA mode (both R set)" },
    { IFT_MODE_R_DISAGREE, "R bits disagree: connection must close" },
    { IFT_MODE_UNKNOWN, "Not yet negotiated" },
    { 0, NULL }
};

/* A side's first AI and the frame it is in. Only framing uses this: the
 * PDU length must come out the same on every pass, so it depends on which
 * AIs came before this frame, not on the state at the end of the file. */
struct ift_side {
    guint32 ai_frame;   /* 0: no AI seen from this side */
    guint32 flags;
    /* The first 64 bytes of this side's stream when they lack the magic:
     * the indication's place (IFT-4.1-MAGIC, I35), shown as a broken
     * indication so the frames after it stay in step. */
    guint32 ai_slot_frame;
    guint32 ai_slot_raw_offset;
    /* I13: where this side's framing was lost (bytes that cannot start a
     * frame); its PDUs after that frame are not framed again. */
    guint32 lost_frame;
    guint32 lost_raw_offset;
    /* I38: TCP's analysis flagged a frame of this side since it last
     * framed a PDU (first pass); framing lost then is TCP's finding. */
    gboolean tcp_repair;
    gboolean lost_to_tcp;
};

/* The segments of one untagged Send as Wireshark's DDP/RDMAP dissector
 * reassembles them (see ift_call_ddp_rdmap). */
struct ift_send_msg {
    void *ddp_head; /* DDP's reassembly, as it caches it on the last segment's frame */
};

struct ift_conv {
    address side0_addr; /* the side that sent the first packet seen */
    guint32 side0_port;
    struct ift_side side[2];
    struct ift_send_msg *open_send[2]; /* first pass: the Send each direction is in */
    struct vw_ift_nego nego; /* the wire library's rule state, advanced on the first pass */
    stream_end_t end;        /* I22: where each direction ends (first pass) */
};

/* What the first pass decided about one PDU, shown on every pass. */
struct ift_pdu_record {
    struct vw_ift_frame_mode announced; /* frames: sender's HC/PC, receiver's VTag */
    guint32 ai_frame;                   /* this side's AI in force (0: none) */
    guint32 peer_ai_frame;
    guint8 mode;                        /* enum ift_mode */
    rule_findings_t findings;
    struct ift_send_msg *send_msg;      /* untagged Send segments handed to DDP/RDMAP */
};

static struct ift_conv *ift_get_conv(packet_info *pinfo)
{
    conversation_t *conv = find_or_create_conversation(pinfo);
    struct ift_conv *c = (struct ift_conv *)conversation_get_proto_data(conv, proto_ift);
    if (!c) {
        c = wmem_new0(wmem_file_scope(), struct ift_conv);
        copy_address_wmem(wmem_file_scope(), &c->side0_addr, &pinfo->src);
        c->side0_port = pinfo->srcport;
        vw_ift_nego_init(&c->nego);
        conversation_add_proto_data(conv, proto_ift, c);
    }
    return c;
}

static int ift_direction(const struct ift_conv *c, const packet_info *pinfo)
{
    return (addresses_equal(&c->side0_addr, &pinfo->src) && c->side0_port == pinfo->srcport) ? 0 : 1;
}

/* The AI of a side counts for this packet only if it came no later. */
static gboolean ift_side_known(const struct ift_side *s, const packet_info *pinfo)
{
    return s->ai_frame != 0 && s->ai_frame <= pinfo->num;
}

#define IFT_DDP_HDR_PLAUSIBLE_MAX 255

/* I35: after a side's indication with a bad magic nothing of that side is
 * read as IFT (lint's reader stops there too): its later frames would only
 * repeat the fault as "a frame before the indication". raw_offset: where
 * the PDU starts in the frame's data. */
static gboolean ift_after_bad_indication(const struct ift_side *s, const packet_info *pinfo, guint32 raw_offset)
{
    return s->ai_slot_frame && !s->ai_frame &&
           (pinfo->num > s->ai_slot_frame || (pinfo->num == s->ai_slot_frame && raw_offset > s->ai_slot_raw_offset));
}

static gboolean ift_is_ai(tvbuff_t *tvb, int offset)
{
    return tvb_captured_length_remaining(tvb, offset) >= 4 && tvb_get_ntohl(tvb, offset) == VW_IFT_MAGIC;
}

/*
 * PDU length. The AI is found by its magic (a frame whose header_size were
 * 0x5244 would carry a 21060-byte DDP header: not a real frame). A frame is
 * sized with the CRCs its sender announced, unless the sender broke its
 * announcement and another layout keeps the stream in step
 * (vw_ift_frame_len_in_step, the same rule as the lint's).
 */
static guint get_ift_pdu_len(packet_info *pinfo, tvbuff_t *tvb, int offset, void *data)
{
    if (ift_is_ai(tvb, offset))
        return VW_IFT_IND_LEN;
    struct ift_conv *c = ift_get_conv(pinfo);
    int dir = ift_direction(c, pinfo);
    struct ift_side *sender = &c->side[dir];
    /* The sender's first byte (relative sequence number 1) is where its
     * indication must be. Without the magic, bytes that cannot start a
     * frame (a DDP header over IFT_DDP_HDR_PLAUSIBLE_MAX bytes; RFC 5041's
     * are 14 and 18) or that carry their own indication CRC are an
     * indication with a bad magic (I35, as lint), so the frames after it
     * stay in step; other bytes there are a frame before the indication. */
    const struct tcpinfo *tcp = (const struct tcpinfo *)data;
    if (tcp && tcp->seq == 1 && offset == 0 && !ift_side_known(sender, pinfo) &&
        vw_ift_first_bytes_rule(tvb_get_ptr(tvb, offset, tvb_captured_length_remaining(tvb, offset)),
                                (size_t)tvb_captured_length_remaining(tvb, offset)) == VW_REQ_IFT_4_1_MAGIC) {
        sender->ai_slot_frame = pinfo->num;
        sender->ai_slot_raw_offset = (guint32)tvb_raw_offset(tvb);
        return VW_IFT_IND_LEN;
    }
    if ((sender->lost_frame && pinfo->num > sender->lost_frame) ||
        ift_after_bad_indication(sender, pinfo, (guint32)tvb_raw_offset(tvb) + (guint32)offset))
        return (guint)tvb_reported_length_remaining(tvb, offset);
    const struct ift_side *receiver = &c->side[1 - dir];
    gboolean known = ift_side_known(sender, pinfo);
    struct vw_ift_frame_mode mode = {
        .hc = known ? (sender->flags & VW_IFT_FLAG_HC) != 0 : ift_assume_hc,
        .pc = known ? (sender->flags & VW_IFT_FLAG_PC) != 0 : ift_assume_pc,
        .check_vtag = ift_side_known(receiver, pinfo),
        .vtag = c->nego.ind[1 - dir].vtag,
    };
    guint have = (guint)tvb_captured_length_remaining(tvb, offset);
    const guint8 *p = tvb_get_ptr(tvb, offset, have);
    /* I13, as lint's reader: bytes that cannot start a frame lose the framing. */
    if (known && !vw_ift_frame_start_plausible(p, have, &mode)) {
        if (!PINFO_FD_VISITED(pinfo) && !sender->lost_frame) {
            sender->lost_frame = pinfo->num;
            sender->lost_raw_offset = (guint32)(tvb_raw_offset(tvb) + offset);
            sender->lost_to_tcp = sender->tcp_repair;
        }
        return (guint)tvb_reported_length_remaining(tvb, offset);
    }
    guint len = (guint)vw_ift_frame_len_in_step(p, have, &mode);
    /* I36: a layout the sender did not announce, chosen only because it
     * ends where this segment ends, is the sender's own framing only if
     * its write ended there (PSH). A segment cut inside a write (an MSS
     * boundary, a path that re-segments, a retransmission of another
     * size) may end anywhere: then the frame is sized as announced and
     * the bytes after it decide when they arrive (the reader's rule,
     * vw_ift_reader). */
    guint announced = (guint)vw_ift_peek_frame_len(p, have, &mode);
    if (len == have && len != announced && tcp && !(tcp->flags & TH_PUSH))
        return announced;
    return len;
}

static guint8 ift_mode_of(const struct vw_ift_nego *n)
{
    if (!n->ind_seen[0] || !n->ind_seen[1])
        return IFT_MODE_UNKNOWN;
    if (n->r_disagree)
        return IFT_MODE_R_DISAGREE;
    return (n->ind[0].flags & VW_IFT_FLAG_R) ? IFT_MODE_RDMA : IFT_MODE_DDP;
}

/* The record of this PDU; on the first pass, run the wire library's
 * checks in capture order (decoder findings plus the connection's). */
static struct ift_pdu_record *ift_record(tvbuff_t *tvb, packet_info *pinfo, struct ift_conv *c, int dir,
                                         const guint8 *raw, guint32 len, gboolean is_ai,
                                         const struct tcpinfo *tcp)
{
    struct ift_pdu_record *rec = (struct ift_pdu_record *)
        p_get_proto_data(wmem_file_scope(), pinfo, proto_ift, tvb_raw_offset(tvb));
    if (rec)
        return rec;
    rec = wmem_new0(wmem_file_scope(), struct ift_pdu_record);
    struct vw_findings fs;
    vw_findings_clear(&fs);
    if (!PINFO_FD_VISITED(pinfo)) {
        if (!tcp_repair_in_frame(pinfo))
            c->side[dir].tcp_repair = FALSE; /* framed again (I38) */
        if (is_ai) {
            struct vw_ift_ind ind;
            /* Without the magic nothing else was decoded: no indication
             * for the negotiation (the frames after it are then frames
             * before an indication, as vw_ift_conn sees them). */
            enum vw_req ind_err = vw_ift_ind_decode(raw, len, &ind, &fs);
            /* Without the magic, bytes that cannot start a frame at the
             * sender's stream start are an indication with a bad magic:
             * IFT-4.1-MAGIC, the ID lint gives the same bytes (I35). */
            if (ind_err != VW_REQ_IFT_4_1_MAGIC && ind_err != VW_REQ_IFT_4_1_LENGTH &&
                vw_ift_nego_indication(&c->nego, dir, &ind, &fs)) {
                c->side[dir].ai_frame = pinfo->num;
                c->side[dir].flags = ind.flags;
            }
            vw_ift_ind_notes(&ind, &fs);
        } else {
            if (!vw_ift_nego_mode(&c->nego, dir, &rec->announced)) {
                rec->announced.hc = ift_assume_hc;
                rec->announced.pc = ift_assume_pc;
            }
            vw_ift_nego_frame(&c->nego, dir, &fs);
            /* V29, as lint: this segment's own ACK first (what its sender had received) */
            if (tcp && (tcp->flags & TH_ACK))
                vw_ift_nego_ack(&c->nego, dir, tcp->lastackseq);
            vw_ift_nego_after_error(&c->nego, dir, &fs); /* I12, as the lint */
            struct vw_ift_frame frame;
            struct vw_ift_frame_mode carried;
            if (vw_ift_frame_decode_as_sent(raw, len, &rec->announced, &frame, &carried, &fs) == VW_REQ_NONE)
                vw_ift_nego_frame_rules(&c->nego, dir, &frame, &fs); /* IFT-4.2-R-MODE, as the lint */
            vw_ift_nego_frame_done(&c->nego, dir, &fs);
            if (tcp) /* V29: its end, for the receiver's TCP ACK (relative sequence numbers) */
                vw_ift_nego_frame_end(&c->nego, dir, tcp->nxtseq);
        }
        rec->ai_frame = c->side[dir].ai_frame;
        rec->peer_ai_frame = c->side[1 - dir].ai_frame;
        rec->mode = ift_mode_of(&c->nego);
    }
    rule_findings_keep(&rec->findings, &fs);
    p_add_proto_data(wmem_file_scope(), pinfo, proto_ift, tvb_raw_offset(tvb), rec);
    return rec;
}

static void ift_add_state_tree(proto_tree *tree, tvbuff_t *tvb, const struct ift_pdu_record *rec, gboolean is_ai)
{
    proto_item *ti = proto_tree_add_item(tree, hf_ift_state, tvb, 0, 0, ENC_NA);
    proto_item_set_generated(ti);
    proto_tree *st = proto_item_add_subtree(ti, ett_ift_state);
    if (rec->ai_frame)
        proto_item_set_generated(proto_tree_add_uint(st, hf_ift_state_ai_frame, tvb, 0, 0, rec->ai_frame));
    if (rec->peer_ai_frame)
        proto_item_set_generated(proto_tree_add_uint(st, hf_ift_state_peer_ai_frame, tvb, 0, 0, rec->peer_ai_frame));
    if (!is_ai) {
        proto_item_set_generated(proto_tree_add_boolean(st, hf_ift_state_hc, tvb, 0, 0, rec->announced.hc));
        proto_item_set_generated(proto_tree_add_boolean(st, hf_ift_state_pc, tvb, 0, 0, rec->announced.pc));
        if (rec->announced.check_vtag)
            proto_item_set_generated(proto_tree_add_uint(st, hf_ift_state_vtag, tvb, 0, 0, rec->announced.vtag));
    }
    proto_item_set_generated(proto_tree_add_uint(st, hf_ift_state_mode, tvb, 0, 0, rec->mode));
}

static void dissect_ift_ai(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, const guint8 *raw,
                           const struct ift_pdu_record *rec)
{
    static int *const flag_fields[] = {
        &hf_ift_ai_flags_ph, &hf_ift_ai_flags_r, &hf_ift_ai_flags_hc, &hf_ift_ai_flags_pc,
        &hf_ift_ai_flags_ih, &hf_ift_ai_flags_ip, &hf_ift_ai_flags_sp, &hf_ift_ai_flags_sm,
        &hf_ift_ai_flags_rm, &hf_ift_ai_flags_reserved, NULL
    };
    struct vw_ift_ind ind;
    vw_ift_ind_decode(raw, VW_IFT_IND_LEN, &ind, NULL);
    proto_item *ai_item = proto_tree_add_item(tree, hf_ift_ai, tvb, 0, VW_IFT_IND_LEN, ENC_NA);
    proto_tree *ai = proto_item_add_subtree(ai_item, ett_ift_ai);
    proto_tree_add_item(ai, hf_ift_ai_magic, tvb, 0, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(ai, hf_ift_ai_version, tvb, 4, 2, ENC_BIG_ENDIAN);
    proto_tree_add_item(ai, hf_ift_ai_bc_version, tvb, 6, 2, ENC_BIG_ENDIAN);
    proto_tree_add_bitmask(ai, tvb, 8, hf_ift_ai_flags, ett_ift_ai_flags, flag_fields, ENC_BIG_ENDIAN);
    proto_tree_add_item(ai, hf_ift_ai_vtag, tvb, 12, 2, ENC_BIG_ENDIAN);
    proto_tree_add_item(ai, hf_ift_ai_marker_interval, tvb, 14, 2, ENC_BIG_ENDIAN);
    proto_tree_add_item(ai, hf_ift_ai_reserved, tvb, VW_IFT_IND_RESERVED_OFF, VW_IFT_IND_RESERVED_LEN, ENC_NA);
    proto_tree_add_checksum(ai, tvb, VW_IFT_IND_CRC_OFF, hf_ift_ai_crc, hf_ift_ai_crc_status, NULL, pinfo,
                            ind.crc_computed, ENC_LITTLE_ENDIAN, PROTO_CHECKSUM_VERIFY);
    rule_experts_add_all(&ift_rules, ai, pinfo, tvb, rec->findings.items, rec->findings.count);

    ift_tap_info_t *tap = wmem_new0(pinfo->pool, ift_tap_info_t);
    tap->indication = TRUE;
    tap->ddp_opcode = -1;
    tap->len = VW_IFT_IND_LEN;
    tap->crc_bad = ind.magic == VW_IFT_MAGIC && !ind.crc_ok; /* without the magic nothing else was decoded */
    tap_queue_packet(ift_tap, pinfo, tap);
    col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "Indication Phase=%u VTag=0x%04x%s%s%s%s%s",
                        vw_ift_ind_phase(&ind), ind.vtag, (ind.flags & VW_IFT_FLAG_R) ? " [R]" : "",
                        (ind.flags & VW_IFT_FLAG_HC) ? " [HC]" : "", (ind.flags & VW_IFT_FLAG_PC) ? " [PC]" : "",
                        ind.magic == VW_IFT_MAGIC ? "" : " [BAD MAGIC]",
                        ind.magic != VW_IFT_MAGIC || ind.crc_ok ? "" : " [BAD CRC]");
    proto_item_append_text(proto_tree_get_parent(tree), ", Adaption indication, %s, VTag 0x%04x",
                           val_to_str_const(vw_ift_ind_phase(&ind), ift_phase_vals, "?"), ind.vtag);
    ift_add_state_tree(tree, tvb, rec, TRUE);
}

/*
 * Wireshark 4.0's RPC-over-RDMA heuristic on iWARP ("rpcrdma_iwarp") fails
 * "tvbuff.c:748: failed assertion tvb && tvb->initialized" on every pass
 * after the first (tshark -2, any packet clicked in the GUI) for the last
 * DDP segment of an untagged Send of several segments: the DDP dissector
 * reassembles the Send itself and gives the heuristic the whole message
 * with the last segment's Message Offset (> 0); the heuristic then takes it
 * for the last fragment of a Send it reassembles itself, finds no such
 * reassembly on the revisit, and reads a NULL tvb. The payload does not
 * matter, and Wireshark's MPA path takes the same way. On the first pass
 * it runs (and decides); on later passes of such a segment it is left out
 * for the length of our call only, so a revisit cannot reach the NULL tvb.
 */
static gboolean ift_trips_rpcrdma_revisit(packet_info *pinfo, const guint8 *ddp, guint32 hs)
{
    struct vw_ddp_hdr h;
    if (!PINFO_FD_VISITED(pinfo) || !vw_ddp_decode(ddp, hs, &h))
        return FALSE;
    /* Send and Send with Invalidate: the opcodes that heuristic reassembles. */
    gboolean send = h.rdmap_opcode == VW_RDMAP_SEND || h.rdmap_opcode == VW_RDMAP_SEND_INVALIDATE;
    return !h.tagged && h.last && send && h.mo > 0;
}

/* An untagged Send segment: what DDP/RDMAP reassembles. */
static gboolean ift_ddp_send(const guint8 *ddp, guint32 hs, struct vw_ddp_hdr *h)
{
    if (!vw_ddp_decode(ddp, hs, h) || h->tagged)
        return FALSE;
    return h->rdmap_opcode == VW_RDMAP_SEND || h->rdmap_opcode == VW_RDMAP_SEND_INVALIDATE ||
           h->rdmap_opcode == VW_RDMAP_SEND_SE || h->rdmap_opcode == VW_RDMAP_SEND_SE_INVALIDATE;
}

/*
 * Wireshark 4.0's DDP/RDMAP dissector reassembles untagged Sends (preference
 * iwarp_ddp_rdmap.reassemble_iwarp_rdma_send, on by default), one direction
 * at a time, and caches the reassembly in the frame's own data (key 0) only
 * when it gets it back: on a message's last segment. On every later pass it
 * adds each earlier segment again, as new, to a reassembly that no last
 * segment completes any more, and every addition walks that list: the second
 * pass of a file (tshark -2, Wireshark loading it) cost time quadratic in the
 * number of multi-segment Sends (issue 22: 2.2 s for 8000 three-segment
 * Sends, 0.5 s for 4000). So on the first pass the segments of each Send are
 * linked to one record that takes DDP's cache from the last segment; a
 * revisit of an earlier segment puts that cache in its own frame first, and
 * DDP finds it there as on the last segment: it shows where the message was
 * reassembled and adds nothing.
 */
static void ift_ddp_send_track(packet_info *pinfo, struct ift_conv *c, int dir, struct ift_pdu_record *rec,
                               const struct vw_ddp_hdr *h, gboolean after)
{
    if (proto_ddp_rdmap <= 0)
        return;
    if (!PINFO_FD_VISITED(pinfo)) {
        if (!after) {
            if (!c->open_send[dir])
                c->open_send[dir] = wmem_new0(wmem_file_scope(), struct ift_send_msg);
            rec->send_msg = c->open_send[dir];
        } else if (h->last && rec->send_msg) {
            rec->send_msg->ddp_head = p_get_proto_data(wmem_file_scope(), pinfo, proto_ddp_rdmap, 0);
            c->open_send[dir] = NULL;
        }
    } else if (!after && rec->send_msg && rec->send_msg->ddp_head &&
               !p_get_proto_data(wmem_file_scope(), pinfo, proto_ddp_rdmap, 0)) {
        p_add_proto_data(wmem_file_scope(), pinfo, proto_ddp_rdmap, 0, rec->send_msg->ddp_head);
    }
}

static void ift_call_ddp_rdmap(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, struct ift_conv *c, int dir,
                               struct ift_pdu_record *rec, guint32 hs, int payload_offset, guint32 ps)
{
    /* DDP sees header and payload as one segment, without the header CRC. */
    guint32 len = hs + ps;
    guint8 *buf = (guint8 *)wmem_alloc(pinfo->pool, len ? len : 1);
    tvb_memcpy(tvb, buf, VW_IFT_FRAME_HDR_LEN, hs);
    tvb_memcpy(tvb, buf + hs, payload_offset, ps);
    tvbuff_t *ddp_tvb = tvb_new_child_real_data(tvb, buf, len, len);
    add_new_data_source(pinfo, ddp_tvb, "DDP segment");
    struct vw_ddp_hdr h;
    gboolean send = ift_ddp_send(buf, hs, &h);
    if (send)
        ift_ddp_send_track(pinfo, c, dir, rec, &h, FALSE);
    heur_dtbl_entry_t *rpcrdma = ift_trips_rpcrdma_revisit(pinfo, buf, hs)
                                     ? find_heur_dissector_by_unique_short_name("rpcrdma_iwarp")
                                     : NULL;
    gboolean was_enabled = rpcrdma ? rpcrdma->enabled : FALSE;
    if (rpcrdma)
        rpcrdma->enabled = FALSE;
    TRY {
        call_dissector(ddp_rdmap_handle, ddp_tvb, pinfo, tree);
    }
    FINALLY {
        if (rpcrdma)
            rpcrdma->enabled = was_enabled;
        if (send)
            ift_ddp_send_track(pinfo, c, dir, rec, &h, TRUE);
    }
    ENDTRY;
}

static void ift_add_crc(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, int offset, int hf, int hf_status,
                        gboolean present, guint32 computed)
{
    proto_tree_add_checksum(tree, tvb, offset, hf, hf_status, NULL, pinfo, present ? computed : 0,
                            ENC_LITTLE_ENDIAN, present ? PROTO_CHECKSUM_VERIFY : PROTO_CHECKSUM_NOT_PRESENT);
}

/* D7: the DDP header's fields in DDP mode (both R clear, I14), RFC 5041's
 * layout: the control byte, the ULP's byte, then STag and TO (tagged) or
 * the ULP's four bytes, QN, MSN and MO (untagged). */
static void ift_add_ddp_fields(proto_tree *t, tvbuff_t *tvb, int offset, const struct vw_ddp_hdr *h)
{
    static int *const control_fields[] = {&hf_ift_ddp_tagged, &hf_ift_ddp_last, &hf_ift_ddp_reserved, &hf_ift_ddp_dv,
                                          NULL};
    proto_tree_add_bitmask_text(t, tvb, offset, 1, "DDP control: ", NULL, ett_ift_ddp_control, control_fields,
                                ENC_BIG_ENDIAN, BMT_NO_APPEND);
    proto_tree_add_item(t, hf_ift_ddp_rsvdulp, tvb, offset + 1, 1, ENC_BIG_ENDIAN);
    if (h->tagged) {
        proto_tree_add_item(t, hf_ift_ddp_stag, tvb, offset + 2, 4, ENC_BIG_ENDIAN);
        proto_tree_add_item(t, hf_ift_ddp_to, tvb, offset + 6, 8, ENC_BIG_ENDIAN);
        proto_item_append_text(proto_tree_get_parent(t), ": Tagged, STag 0x%08x, TO %" G_GUINT64_FORMAT "%s", h->stag,
                               h->to, h->last ? ", Last" : "");
    } else {
        proto_tree_add_item(t, hf_ift_ddp_rsvdulp2, tvb, offset + 2, 4, ENC_BIG_ENDIAN);
        proto_tree_add_item(t, hf_ift_ddp_qn, tvb, offset + 6, 4, ENC_BIG_ENDIAN);
        proto_tree_add_item(t, hf_ift_ddp_msn, tvb, offset + 10, 4, ENC_BIG_ENDIAN);
        proto_tree_add_item(t, hf_ift_ddp_mo, tvb, offset + 14, 4, ENC_BIG_ENDIAN);
        proto_item_append_text(proto_tree_get_parent(t), ": Untagged, QN %u, MSN %u, MO %u%s", h->qn, h->msn, h->mo,
                               h->last ? ", Last" : "");
    }
}

static void dissect_ift_frame(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_tree *ift_tree,
                              const guint8 *raw, guint32 len, struct ift_conv *c, int dir,
                              struct ift_pdu_record *rec)
{
    struct vw_ift_frame frame;
    struct vw_ift_frame_mode carried;
    enum vw_req err = vw_ift_frame_decode_as_sent(raw, len, &rec->announced, &frame, &carried, NULL);
    proto_item *frame_item = proto_tree_add_item(ift_tree, hf_ift_frame, tvb, 0, -1, ENC_NA);
    proto_tree *ft = proto_item_add_subtree(frame_item, ett_ift_frame);
    proto_tree_add_item(ft, hf_ift_header_size, tvb, 0, 2, ENC_BIG_ENDIAN);
    proto_tree_add_item(ft, hf_ift_payload_size, tvb, 2, 2, ENC_BIG_ENDIAN);
    proto_tree_add_item(ft, hf_ift_vtag, tvb, 4, 2, ENC_BIG_ENDIAN);
    col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "Frame VTag=0x%04x Hdr=%u Payload=%u", tvb_get_ntohs(tvb, 4),
                        tvb_get_ntohs(tvb, 0), tvb_get_ntohs(tvb, 2));
    proto_item_append_text(proto_tree_get_parent(ift_tree), ", Frame, VTag 0x%04x, DDP header %u, payload %u",
                           tvb_get_ntohs(tvb, 4), tvb_get_ntohs(tvb, 0), tvb_get_ntohs(tvb, 2));
    if (err == VW_REQ_NONE) {
        if (frame.has_hdr_crc && !frame.hdr_crc_ok)
            col_append_str(pinfo->cinfo, COL_INFO, " [BAD HEADER CRC]");
        if (frame.has_payload_crc && !frame.payload_crc_ok)
            col_append_str(pinfo->cinfo, COL_INFO, " [BAD PAYLOAD CRC]");
        int offset = VW_IFT_FRAME_HDR_LEN;
        proto_item *ddp_item = proto_tree_add_item(ft, hf_ift_ddp_header, tvb, offset, frame.header_size, ENC_NA);
        if (frame.ddp_decoded && rec->mode == IFT_MODE_DDP)
            ift_add_ddp_fields(proto_item_add_subtree(ddp_item, ett_ift_ddp), tvb, offset, &frame.ddp_hdr);
        offset += frame.header_size;
        ift_add_crc(ft, tvb, pinfo, offset, hf_ift_hcrc, hf_ift_hcrc_status, frame.has_hdr_crc, frame.hdr_crc_computed);
        proto_tree_add_item(ft, hf_ift_payload, tvb, (int)frame.payload_offset, frame.payload_size, ENC_NA);
        offset = (int)frame.payload_offset + frame.payload_size;
        ift_add_crc(ft, tvb, pinfo, offset, hf_ift_pcrc, hf_ift_pcrc_status, frame.has_payload_crc,
                    frame.payload_crc_computed);
    } else {
        col_append_fstr(pinfo->cinfo, COL_INFO, " [%s]", vw_req_id(err));
    }
    rule_experts_add_all(&ift_rules, ft, pinfo, tvb, rec->findings.items, rec->findings.count);
    ift_add_state_tree(ift_tree, tvb, rec, FALSE);
    ift_tap_info_t *tap = wmem_new0(pinfo->pool, ift_tap_info_t);
    tap->ddp_opcode = err == VW_REQ_NONE && frame.ddp_decoded ? frame.ddp_hdr.rdmap_opcode : -1;
    tap->ddp_last = err == VW_REQ_NONE && frame.ddp_decoded && frame.ddp_hdr.last;
    tap->len = len;
    tap->crc_bad = err == VW_REQ_NONE && ((frame.has_hdr_crc && !frame.hdr_crc_ok) ||
                                          (frame.has_payload_crc && !frame.payload_crc_ok));
    tap_queue_packet(ift_tap, pinfo, tap);

    /* Only an RFC 5041 header (as the wire library decoded it) goes to
     * Wireshark's DDP/RDMAP dissector: a wrong header_size already has its
     * finding, and DDP would only add a malformed-packet error. */
    /* I14: in DDP mode (both R clear) the DDP header's second byte is the
     * ULP's, not RDMAP: Wireshark's DDP/RDMAP dissector would decode it as
     * RDMAP all the same, so the segment is described here and its payload
     * handed on as data. */
    if (err == VW_REQ_NONE && frame.ddp_decoded && rec->mode == IFT_MODE_DDP) {
        const struct vw_ddp_hdr *h = &frame.ddp_hdr;
        if (h->tagged)
            col_append_fstr(pinfo->cinfo, COL_INFO, " DDP Tagged STag=0x%08x TO=%" G_GUINT64_FORMAT "%s", h->stag, h->to,
                            h->last ? " [L]" : "");
        else
            col_append_fstr(pinfo->cinfo, COL_INFO, " DDP Untagged QN=%u MSN=%u MO=%u%s", h->qn, h->msn, h->mo,
                            h->last ? " [L]" : "");
        if (frame.payload_size)
            call_data_dissector(tvb_new_subset_length(tvb, (int)frame.payload_offset, frame.payload_size), pinfo,
                                tree);
        return;
    }
    if (err == VW_REQ_NONE && ift_call_ddp && ddp_rdmap_handle && frame.ddp_decoded) {
        /* DDP/RDMAP rewrites the Info column: it writes after ours. */
        info_handoff_begin(pinfo);
        ift_call_ddp_rdmap(tvb, pinfo, tree, c, dir, rec, frame.header_size, (int)frame.payload_offset,
                           frame.payload_size);
        info_handoff_end(pinfo);
    }
}

/* I13: the bytes where this side's framing was lost, said once under
 * IFT-5.1-FRAME-LEN (as lint's reader says it), and everything after them
 * shown as bytes, never read as fields. */
static void ift_dissect_lost(tvbuff_t *tvb, packet_info *pinfo, proto_tree *ift_tree, proto_item *ti,
                             const struct ift_side *sender, guint32 len)
{
    if (pinfo->num == sender->lost_frame && (guint32)tvb_raw_offset(tvb) == sender->lost_raw_offset &&
        sender->lost_to_tcp) {
        /* I38: after a TCP repair, which TCP's own analysis reports */
        proto_item_append_text(ti, ", %u bytes where the framing was lost after a TCP repair", len);
        col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "[framing lost after a TCP repair] Len=%u", len);
        return;
    }
    if (pinfo->num == sender->lost_frame && (guint32)tvb_raw_offset(tvb) == sender->lost_raw_offset) {
        struct vw_finding f = {.req = VW_REQ_IFT_5_1_FRAME_LEN, .severity = VW_SEV_ERROR, .offset = 0, .length = 6};
        g_snprintf(f.detail, sizeof f.detail,
                   "bytes that cannot start a frame (header_size %u, VTag 0x%04x): the frame before did not "
                   "fit; framing lost", len >= 2 ? tvb_get_ntohs(tvb, 0) : 0,
                   len >= 6 ? tvb_get_ntohs(tvb, 4) : 0);
        rule_expert_add(&ift_rules, ift_tree, pinfo, tvb, &f);
        proto_item_append_text(ti, ", %u bytes where the framing was lost [%s]", len, vw_req_id(f.req));
        col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "[framing lost] Len=%u", len);
        return;
    }
    proto_item_append_text(ti, ", %u bytes after the framing was lost (not dissected)", len);
    col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "[framing lost] Len=%u", len);
}

static int dissect_ift_pdu(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    info_pdu_begin(pinfo, proto_ift);
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "IFT");
    struct ift_conv *c = ift_get_conv(pinfo);
    int dir = ift_direction(c, pinfo);
    proto_item *ti = proto_tree_add_item(tree, proto_ift, tvb, 0, -1, ENC_NA);
    proto_tree *ift_tree = proto_item_add_subtree(ti, ett_ift);
    guint32 len = tvb_reported_length(tvb);
    /* Throws (packet size limited) when the capture cut the PDU short. */
    const guint8 *raw = tvb_get_ptr(tvb, 0, len);
    /* An AI is exactly 64 bytes and starts with the magic, or sits at the
     * sender's stream start without it (see get_ift_pdu_len). */
    const struct ift_side *sender = &c->side[dir];
    gboolean is_ai = len == VW_IFT_IND_LEN &&
                     (ift_is_ai(tvb, 0) || (sender->ai_slot_frame == pinfo->num &&
                                            sender->ai_slot_raw_offset == (guint32)tvb_raw_offset(tvb)));
    if (sender->lost_frame && (pinfo->num > sender->lost_frame ||
                               (pinfo->num == sender->lost_frame &&
                                (guint32)tvb_raw_offset(tvb) == sender->lost_raw_offset))) {
        ift_dissect_lost(tvb, pinfo, ift_tree, ti, sender, len);
        return tvb_captured_length(tvb);
    }
    if (ift_after_bad_indication(sender, pinfo, (guint32)tvb_raw_offset(tvb))) {
        proto_item_append_text(ti, ", %u bytes after this side's indication with a bad magic (not dissected)", len);
        col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "[after a bad indication] Len=%u", len);
        return tvb_captured_length(tvb);
    }
    struct ift_pdu_record *rec = ift_record(tvb, pinfo, c, dir, raw, len, is_ai, (const struct tcpinfo *)data);
    if (is_ai)
        dissect_ift_ai(tvb, pinfo, ift_tree, raw, rec);
    else
        dissect_ift_frame(tvb, pinfo, tree, ift_tree, raw, len, c, dir, rec);
    return tvb_captured_length(tvb);
}

static int dissect_ift(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    struct ift_conv *c = ift_get_conv(pinfo);
    int dir = ift_direction(c, pinfo);
    if (!PINFO_FD_VISITED(pinfo) && tcp_repair_in_frame(pinfo))
        c->side[dir].tcp_repair = TRUE;
    tcp_dissect_pdus(tvb, pinfo, tree, ift_desegment, VW_IFT_FRAME_HDR_LEN, get_ift_pdu_len, dissect_ift_pdu, data);
    stream_end_after_pdus(&c->end, dir, tvb, pinfo);
    return tvb_captured_length(tvb);
}

/* A direction's end (I22): at a side's first FIN, a PDU it left cut breaks
 * IFT-5.1-FRAME-TRUNCATED, judged on the first pass at the same FIN as
 * lint (stream_end.h); not after the side's framing was lost (I13). */
static dissector_handle_t ift_end_handle;

/* Every TCP ACK of an IFT connection on the first pass (V29, as lint): a
 * receiver's frames count as carrying on after an error frame only once its
 * ACK covered it. Pure ACKs never reach IFT, so a postdissector reads
 * TCP's ack field. */
static dissector_handle_t ift_ack_handle;
static int hf_tcp_ack_id = -1;

static int dissect_ift_ack(tvbuff_t *tvb _U_, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    if (pinfo->ptype != PT_TCP || PINFO_FD_VISITED(pinfo) || hf_tcp_ack_id < 0 || !tree)
        return 0;
    conversation_t *conv = find_conversation_pinfo(pinfo, 0);
    struct ift_conv *c = conv ? (struct ift_conv *)conversation_get_proto_data(conv, proto_ift) : NULL;
    GPtrArray *acks = c ? proto_get_finfo_ptr_array(tree, hf_tcp_ack_id) : NULL;
    if (!acks || !acks->len)
        return 0;
    field_info *ack = (field_info *)g_ptr_array_index(acks, 0);
    vw_ift_nego_ack(&c->nego, ift_direction(c, pinfo), fvalue_get_uinteger(&ack->value));
    return 0;
}

static void ift_judge_end(packet_info *pinfo, proto_tree *tree, struct vw_findings *fs)
{
    conversation_t *conv = find_conversation_pinfo(pinfo, 0);
    struct ift_conv *c = conv ? (struct ift_conv *)conversation_get_proto_data(conv, proto_ift) : NULL;
    if (!c)
        return;
    int d = ift_direction(c, pinfo);
    if (stream_end_frame(&c->end, d, tree).dir_ended && !c->side[d].lost_frame)
        vw_ift_direction_end(c->end.pending[d], fs);
}

static const stream_end_dissector_t ift_end = {
    &proto_ift, &ett_ift, &ift_rules, ift_judge_end,
    ", end of the direction (TCP FIN) inside a PDU", " [IFT direction ended inside a PDU]"};

static int dissect_ift_end(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    return stream_end_dissect(&ift_end, tvb, pinfo, tree);
}

/* Heuristic (I1): a TCP payload starting with the AI magic. The
 * connection is IFT from this frame on (I21): a ULP that upgrades
 * mid-stream keeps its earlier frames, on every pass (set for the whole
 * conversation, a second pass handed the ULP's bytes to IFT). */
static gboolean dissect_ift_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    if (tvb_captured_length(tvb) < 8 || !ift_is_ai(tvb, 0))
        return FALSE;
    conversation_t *conv = find_or_create_conversation(pinfo);
    conversation_set_dissector_from_frame_number(conv, pinfo->num, ift_handle);
    dissect_ift(tvb, pinfo, tree, data);
    return TRUE;
}

void proto_register_ift(void)
{
    static hf_register_info hf[] = {
        { &hf_ift_ai, { "Adaption indication", "ift.ai", FT_NONE, BASE_NONE, NULL, 0x0, "The 64-byte adaption indication that starts each direction of an IFT connection", HFILL } },
        { &hf_ift_ai_magic, { "Magic", "ift.ai.magic", FT_UINT32, BASE_HEX, NULL, 0x0, "0x52444450 (\"RDDP\")", HFILL } },
        { &hf_ift_ai_version, { "Version", "ift.ai.version", FT_UINT16, BASE_DEC, NULL, 0x0, "IFT version of the sender; this draft is version 1", HFILL } },
        { &hf_ift_ai_bc_version, { "BC version", "ift.ai.bc_version", FT_UINT16, BASE_DEC, NULL, 0x0,
            "Oldest version this sender is backward compatible with", HFILL } },
        { &hf_ift_ai_flags, { "Flags", "ift.ai.flags", FT_UINT32, BASE_HEX, NULL, 0x0, "Phase, mode and CRC/marker choices of the sender", HFILL } },
        { &hf_ift_ai_flags_ph, { "Phase (PH)", "ift.ai.flags.ph", FT_UINT32, BASE_DEC, VALS(ift_phase_vals), VW_IFT_FLAG_PH, "0: the indication of the side that starts (A); 1: the answer (B)", HFILL } },
        { &hf_ift_ai_flags_r, { "RDMA mode (R)", "ift.ai.flags.r", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_R, "RDMA mode; both sides must agree or the connection closes", HFILL } },
        { &hf_ift_ai_flags_hc, { "Sends header CRC (HC)", "ift.ai.flags.hc", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_HC, "The sender's frames carry a header CRC", HFILL } },
        { &hf_ift_ai_flags_pc, { "Sends payload CRC (PC)", "ift.ai.flags.pc", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_PC, "The sender's frames carry a payload CRC", HFILL } },
        { &hf_ift_ai_flags_ih, { "Ignores header CRC (IH)", "ift.ai.flags.ih", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_IH, "The sender will not check header CRCs it receives", HFILL } },
        { &hf_ift_ai_flags_ip, { "Ignores payload CRC (IP)", "ift.ai.flags.ip", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_IP, "The sender will not check payload CRCs it receives", HFILL } },
        { &hf_ift_ai_flags_sp, { "Permits speculative placement (SP)", "ift.ai.flags.sp", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_SP, "The receiver may place data before the frame's payload CRC is checked", HFILL } },
        { &hf_ift_ai_flags_sm, { "Willing to send markers (SM)", "ift.ai.flags.sm", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_SM, "The sender would send markers (IFT leaves markers undefined: none are sent)", HFILL } },
        { &hf_ift_ai_flags_rm, { "Wants to receive markers (RM)", "ift.ai.flags.rm", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_RM, "The sender would like markers (IFT leaves markers undefined: none are sent)", HFILL } },
        { &hf_ift_ai_flags_reserved, { "Reserved", "ift.ai.flags.reserved", FT_UINT32, BASE_HEX, NULL, VW_IFT_FLAG_RESERVED, "Reserved flag bits, zero on the wire", HFILL } },
        { &hf_ift_ai_vtag, { "Sender's VTag", "ift.ai.vtag", FT_UINT16, BASE_HEX, NULL, 0x0,
            "Echoed by the receiver of this indication in every frame it sends", HFILL } },
        { &hf_ift_ai_marker_interval, { "Marker interval", "ift.ai.marker_interval", FT_UINT16, BASE_DEC, NULL, 0x0, "Marker interval offered (markers are undefined in IFT)", HFILL } },
        { &hf_ift_ai_reserved, { "Reserved", "ift.ai.reserved", FT_BYTES, BASE_NONE, NULL, 0x0, "44 reserved bytes, zero on the wire", HFILL } },
        { &hf_ift_ai_crc, { "CRC", "ift.ai.crc", FT_UINT32, BASE_HEX, NULL, 0x0, "CRC-32C of the first 60 bytes", HFILL } },
        { &hf_ift_ai_crc_status, { "CRC status", "ift.ai.crc.status", FT_UINT8, BASE_NONE, VALS(proto_checksum_vals), 0x0, "Whether the indication's CRC matches", HFILL } },
        { &hf_ift_frame, { "Frame", "ift.frame", FT_NONE, BASE_NONE, NULL, 0x0, "One IFT frame: sizes, VTag, DDP header, CRCs and payload", HFILL } },
        { &hf_ift_header_size, { "Header size", "ift.header_size", FT_UINT16, BASE_DEC, NULL, 0x0, "Bytes of DDP header", HFILL } },
        { &hf_ift_payload_size, { "Payload size", "ift.payload_size", FT_UINT16, BASE_DEC, NULL, 0x0, "Bytes of DDP payload", HFILL } },
        { &hf_ift_vtag, { "Receiver's VTag", "ift.vtag", FT_UINT16, BASE_HEX, NULL, 0x0, "VTag the receiver of this frame announced in its indication", HFILL } },
        { &hf_ift_ddp_header, { "DDP header", "ift.ddp_header", FT_BYTES, BASE_NONE, NULL, 0x0, "RFC 5041 DDP header carried by the frame (14 bytes tagged, 18 untagged)", HFILL } },
        { &hf_ift_ddp_tagged, { "Tagged", "ift.ddp.tagged", FT_BOOLEAN, 8, NULL, 0x80, "T: a tagged buffer model segment (RFC 5041)", HFILL } },
        { &hf_ift_ddp_last, { "Last", "ift.ddp.last", FT_BOOLEAN, 8, NULL, 0x40, "L: the last segment of a DDP message", HFILL } },
        { &hf_ift_ddp_reserved, { "Reserved", "ift.ddp.reserved", FT_UINT8, BASE_HEX, NULL, 0x3C, "Reserved bits of the DDP control byte", HFILL } },
        { &hf_ift_ddp_dv, { "DDP version", "ift.ddp.dv", FT_UINT8, BASE_DEC, NULL, 0x03, "DV", HFILL } },
        { &hf_ift_ddp_rsvdulp, { "Reserved for the ULP", "ift.ddp.rsvdulp", FT_UINT8, BASE_HEX, NULL, 0x0, "RsvdULP: the ULP's byte in DDP mode (RDMAP's control byte only in RDMA mode)", HFILL } },
        { &hf_ift_ddp_stag, { "STag", "ift.ddp.stag", FT_UINT32, BASE_HEX, NULL, 0x0, "Steering tag of the tagged buffer", HFILL } },
        { &hf_ift_ddp_to, { "Tagged offset", "ift.ddp.to", FT_UINT64, BASE_DEC, NULL, 0x0, "TO: offset in the tagged buffer", HFILL } },
        { &hf_ift_ddp_rsvdulp2, { "Reserved for the ULP (untagged)", "ift.ddp.rsvdulp2", FT_UINT32, BASE_HEX, NULL, 0x0, "RsvdULP of an untagged segment: the ULP's in DDP mode", HFILL } },
        { &hf_ift_ddp_qn, { "Queue number", "ift.ddp.qn", FT_UINT32, BASE_DEC, NULL, 0x0, "QN", HFILL } },
        { &hf_ift_ddp_msn, { "Message sequence number", "ift.ddp.msn", FT_UINT32, BASE_DEC, NULL, 0x0, "MSN", HFILL } },
        { &hf_ift_ddp_mo, { "Message offset", "ift.ddp.mo", FT_UINT32, BASE_DEC, NULL, 0x0, "MO", HFILL } },
        { &hf_ift_hcrc, { "Header CRC", "ift.hcrc", FT_UINT32, BASE_HEX, NULL, 0x0, "CRC-32C over the frame header and DDP header, least significant byte first", HFILL } },
        { &hf_ift_hcrc_status, { "Header CRC status", "ift.hcrc.status", FT_UINT8, BASE_NONE, VALS(proto_checksum_vals), 0x0, "Whether the header CRC matches (Not present when the sender announced no HC)", HFILL } },
        { &hf_ift_payload, { "DDP payload", "ift.payload", FT_BYTES, BASE_NONE, NULL, 0x0, "DDP payload bytes of the frame", HFILL } },
        { &hf_ift_pcrc, { "Payload CRC", "ift.pcrc", FT_UINT32, BASE_HEX, NULL, 0x0, "CRC-32C over the payload, least significant byte first", HFILL } },
        { &hf_ift_pcrc_status, { "Payload CRC status", "ift.pcrc.status", FT_UINT8, BASE_NONE, VALS(proto_checksum_vals), 0x0, "Whether the payload CRC matches (Not present when the sender announced no PC)", HFILL } },
        { &hf_ift_state, { "Negotiated state", "ift.state", FT_NONE, BASE_NONE, NULL, 0x0, "What the indications seen so far decide for this PDU (in capture order)", HFILL } },
        { &hf_ift_state_ai_frame, { "This side's indication", "ift.state.ai_frame", FT_FRAMENUM, BASE_NONE, NULL, 0x0, "Frame of this side's adaption indication", HFILL } },
        { &hf_ift_state_peer_ai_frame, { "Peer's indication", "ift.state.peer_ai_frame", FT_FRAMENUM, BASE_NONE, NULL, 0x0, "Frame of the other side's adaption indication", HFILL } },
        { &hf_ift_state_hc, { "Sender sends header CRC", "ift.state.hc", FT_BOOLEAN, BASE_NONE, NULL, 0x0, "This frame's sender announced HC: frames carry a header CRC", HFILL } },
        { &hf_ift_state_pc, { "Sender sends payload CRC", "ift.state.pc", FT_BOOLEAN, BASE_NONE, NULL, 0x0, "This frame's sender announced PC: frames carry a payload CRC", HFILL } },
        { &hf_ift_state_vtag, { "Expected VTag", "ift.state.vtag", FT_UINT16, BASE_HEX, NULL, 0x0, "VTag the receiver announced, which this frame must carry", HFILL } },
        { &hf_ift_state_mode, { "Mode", "ift.state.mode", FT_UINT32, BASE_DEC, VALS(ift_mode_vals), 0x0, "DDP or RDMA mode agreed by the two indications", HFILL } },
    };
    static gint *ett[] = { &ett_ift, &ett_ift_ai, &ett_ift_ai_flags, &ett_ift_frame, &ett_ift_state, &ett_ift_ddp,
                           &ett_ift_ddp_control };

    proto_ift = proto_register_protocol("iWARP Framing for TCP", "IFT", "ift");
    proto_register_field_array(proto_ift, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    static const char *const rule_prefixes[] = {"IFT-", NULL};
    rule_experts_register(&ift_rules, proto_ift, "ift", rule_prefixes, "IFT-", FALSE);

    module_t *ift_module = prefs_register_protocol(proto_ift, NULL);
    prefs_register_bool_preference(ift_module, "desegment",
        "Reassemble IFT frames spanning multiple TCP segments",
        "Whether IFT should reassemble frames spanning TCP segments "
        "(needs TCP's \"Allow subdissectors to reassemble TCP streams\").", &ift_desegment);
    prefs_register_bool_preference(ift_module, "call_ddp",
        "Decode DDP/RDMAP with the iWARP DDP/RDMAP dissector",
        "Hand each frame's DDP header and payload to Wireshark's iwarp_ddp_rdmap dissector.", &ift_call_ddp);
    prefs_register_bool_preference(ift_module, "assume_hc",
        "Assume a header CRC without an indication",
        "Layout of frames whose sender's adaption indication is not in the capture.", &ift_assume_hc);
    prefs_register_bool_preference(ift_module, "assume_pc",
        "Assume a payload CRC without an indication",
        "Layout of frames whose sender's adaption indication is not in the capture.", &ift_assume_pc);

    ift_handle = register_dissector("ift", dissect_ift, proto_ift);
    ift_end_handle = create_dissector_handle(dissect_ift_end, proto_ift);
    register_postdissector(ift_end_handle);
    ift_ack_handle = create_dissector_handle(dissect_ift_ack, proto_ift);
    register_postdissector(ift_ack_handle);
    ift_tap = register_tap(IFT_TAP_NAME);
}

void proto_reg_handoff_ift(void)
{
    ddp_rdmap_handle = find_dissector("iwarp_ddp_rdmap");
    proto_ddp_rdmap = proto_get_id_by_filter_name("iwarp_ddp_rdmap");
    stream_end_want_flags(ift_end_handle);
    hf_tcp_ack_id = proto_registrar_get_id_byname("tcp.ack");
    if (hf_tcp_ack_id >= 0) {
        GArray *want_ack = g_array_new(FALSE, FALSE, (guint)sizeof(int));
        g_array_append_val(want_ack, hf_tcp_ack_id);
        set_postdissector_wanted_hfids(ift_ack_handle, want_ack);
    }
    dissector_add_uint_with_preference("tcp.port", VW_IFT_DEFAULT_PORT, ift_handle);
    heur_dissector_add("tcp", dissect_ift_heur, "IFT over TCP (adaption indication magic)", "ift_tcp",
                       proto_ift, HEURISTIC_ENABLE);
}
