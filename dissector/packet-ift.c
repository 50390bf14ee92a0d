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
 * Expert items carry the requirement ID of the catalog (wire/catalog/ift.def);
 * CRCs come from the wire library (checksum.h).
 */
#include <epan/packet.h>
#include <epan/conversation.h>
#include <epan/expert.h>
#include <epan/prefs.h>
#include <epan/dissectors/packet-tcp.h>
#include <vitcp/checksum.h>
#include <vitcp/ift.h>
#include "plugin_protos.h"


static int proto_ift = -1;
static dissector_handle_t ift_handle;
static dissector_handle_t ddp_rdmap_handle;

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
static gint ett_ift_state = -1;

static expert_field ei_ift_ai_version = EI_INIT;
static expert_field ei_ift_ai_version_newer = EI_INIT;
static expert_field ei_ift_ai_bc_version = EI_INIT;
static expert_field ei_ift_ai_bc_version_reject = EI_INIT;
static expert_field ei_ift_ai_reserved = EI_INIT;
static expert_field ei_ift_ai_crc_bad = EI_INIT;
static expert_field ei_ift_r_disagree = EI_INIT;
static expert_field ei_ift_ph_order = EI_INIT;
static expert_field ei_ift_sp = EI_INIT;
static expert_field ei_ift_markers = EI_INIT;
static expert_field ei_ift_ignores_crc = EI_INIT;
static expert_field ei_ift_no_ai = EI_INIT;
static expert_field ei_ift_frame_early = EI_INIT;
static expert_field ei_ift_vtag_mismatch = EI_INIT;
static expert_field ei_ift_hcrc_bad = EI_INIT;
static expert_field ei_ift_pcrc_bad = EI_INIT;
static expert_field ei_ift_hcrc_presence = EI_INIT;
static expert_field ei_ift_pcrc_presence = EI_INIT;
static expert_field ei_ift_sizes = EI_INIT;

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

static const value_string ift_mode_vals[] = {
    { 0, "DDP mode (both R clear)" },
    { 1, "RDMA mode (both R set)" },
    { 2, "R bits disagree: connection must close" },
    { 3, "Not yet negotiated" },
    { 0, NULL }
};

/* What one side announced in its AI, and where. */
struct ift_side {
    guint32 ai_frame;   /* 0: no AI seen from this side */
    guint32 flags;
    guint16 vtag;       /* the sender's VTag: the peer echoes it in frames */
};

struct ift_conv {
    address side0_addr; /* the side that sent the first packet seen */
    guint32 side0_port;
    struct ift_side side[2];
    guint32 first_ai_frame; /* the AI that opened the negotiation */
    int first_ai_dir;
};

static struct ift_conv *ift_get_conv(packet_info *pinfo)
{
    conversation_t *conv = find_or_create_conversation(pinfo);
    struct ift_conv *c = (struct ift_conv *)conversation_get_proto_data(conv, proto_ift);
    if (!c) {
        c = wmem_new0(wmem_file_scope(), struct ift_conv);
        copy_address_wmem(wmem_file_scope(), &c->side0_addr, &pinfo->src);
        c->side0_port = pinfo->srcport;
        c->first_ai_dir = -1;
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

static gboolean ift_sender_hc(const struct ift_side *s, const packet_info *pinfo)
{
    return ift_side_known(s, pinfo) ? (s->flags & VW_IFT_FLAG_HC) != 0 : ift_assume_hc;
}

static gboolean ift_sender_pc(const struct ift_side *s, const packet_info *pinfo)
{
    return ift_side_known(s, pinfo) ? (s->flags & VW_IFT_FLAG_PC) != 0 : ift_assume_pc;
}

static gboolean ift_is_ai(tvbuff_t *tvb, int offset)
{
    return tvb_captured_length_remaining(tvb, offset) >= 4 && tvb_get_ntohl(tvb, offset) == VW_IFT_MAGIC;
}

static guint32 ift_frame_len(guint32 hs, guint32 ps, gboolean hc, gboolean pc)
{
    return VW_IFT_FRAME_HDR_LEN + hs + (hc ? VW_IFT_CRC_LEN : 0) + ps + (pc ? VW_IFT_CRC_LEN : 0);
}

/*
 * PDU length. The AI is found by its magic (a frame whose header_size were
 * 0x5244 would carry a 21060-byte DDP header: not a real frame). A frame is
 * sized with the CRCs its sender announced; when the sender broke its own
 * announcement and the next frame is in the same segment, the layout whose
 * end lines up with a frame carrying the expected VTag is taken instead, so
 * the stream stays in step and the frame is flagged.
 */
static guint get_ift_pdu_len(packet_info *pinfo, tvbuff_t *tvb, int offset, void *data _U_)
{
    if (ift_is_ai(tvb, offset))
        return VW_IFT_IND_LEN;
    struct ift_conv *c = ift_get_conv(pinfo);
    int dir = ift_direction(c, pinfo);
    const struct ift_side *sender = &c->side[dir];
    const struct ift_side *receiver = &c->side[1 - dir];
    guint32 hs = tvb_get_ntohs(tvb, offset);
    guint32 ps = tvb_get_ntohs(tvb, offset + 2);
    gboolean hc = ift_sender_hc(sender, pinfo);
    gboolean pc = ift_sender_pc(sender, pinfo);
    guint32 negotiated = ift_frame_len(hs, ps, hc, pc);
    gint remaining = tvb_captured_length_remaining(tvb, offset);
    if (!ift_side_known(receiver, pinfo) || remaining == (gint)negotiated)
        return negotiated;
    const gboolean layouts[4][2] = { { hc, pc }, { !hc, pc }, { hc, !pc }, { !hc, !pc } };
    for (unsigned i = 0; i < 4; i++) {
        guint32 len = ift_frame_len(hs, ps, layouts[i][0], layouts[i][1]);
        if (remaining == (gint)len)
            return len;
        if (remaining >= (gint)len + VW_IFT_FRAME_HDR_LEN &&
            tvb_get_ntohs(tvb, offset + len + 4) == receiver->vtag)
            return len;
    }
    return negotiated;
}

static void ift_add_state_tree(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo,
                               const struct ift_conv *c, int dir)
{
    const struct ift_side *me = &c->side[dir];
    const struct ift_side *peer = &c->side[1 - dir];
    proto_item *ti = proto_tree_add_item(tree, hf_ift_state, tvb, 0, 0, ENC_NA);
    proto_item_set_generated(ti);
    proto_tree *st = proto_item_add_subtree(ti, ett_ift_state);
    if (ift_side_known(me, pinfo))
        proto_item_set_generated(proto_tree_add_uint(st, hf_ift_state_ai_frame, tvb, 0, 0, me->ai_frame));
    if (ift_side_known(peer, pinfo))
        proto_item_set_generated(proto_tree_add_uint(st, hf_ift_state_peer_ai_frame, tvb, 0, 0, peer->ai_frame));
    proto_item_set_generated(proto_tree_add_boolean(st, hf_ift_state_hc, tvb, 0, 0, ift_sender_hc(me, pinfo)));
    proto_item_set_generated(proto_tree_add_boolean(st, hf_ift_state_pc, tvb, 0, 0, ift_sender_pc(me, pinfo)));
    if (ift_side_known(peer, pinfo))
        proto_item_set_generated(proto_tree_add_uint(st, hf_ift_state_vtag, tvb, 0, 0, peer->vtag));
    guint32 mode = 3;
    if (ift_side_known(me, pinfo) && ift_side_known(peer, pinfo)) {
        gboolean r0 = (me->flags & VW_IFT_FLAG_R) != 0, r1 = (peer->flags & VW_IFT_FLAG_R) != 0;
        mode = r0 != r1 ? 2 : (r0 ? 1 : 0);
    }
    proto_item_set_generated(proto_tree_add_uint(st, hf_ift_state_mode, tvb, 0, 0, mode));
}

static void dissect_ift_ai(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
                           struct ift_conv *c, int dir)
{
    static int *const flag_fields[] = {
        &hf_ift_ai_flags_ph, &hf_ift_ai_flags_r, &hf_ift_ai_flags_hc, &hf_ift_ai_flags_pc,
        &hf_ift_ai_flags_ih, &hf_ift_ai_flags_ip, &hf_ift_ai_flags_sp, &hf_ift_ai_flags_sm,
        &hf_ift_ai_flags_rm, &hf_ift_ai_flags_reserved, NULL
    };
    guint32 version, bc_version, flags, vtag, interval;
    proto_item *ai_item = proto_tree_add_item(tree, hf_ift_ai, tvb, 0, VW_IFT_IND_LEN, ENC_NA);
    proto_tree *ai = proto_item_add_subtree(ai_item, ett_ift_ai);

    proto_tree_add_item(ai, hf_ift_ai_magic, tvb, 0, 4, ENC_BIG_ENDIAN);
    proto_item *ver_item = proto_tree_add_item_ret_uint(ai, hf_ift_ai_version, tvb, 4, 2, ENC_BIG_ENDIAN, &version);
    proto_item *bc_item = proto_tree_add_item_ret_uint(ai, hf_ift_ai_bc_version, tvb, 6, 2, ENC_BIG_ENDIAN, &bc_version);
    proto_item *flags_item = proto_tree_add_bitmask(ai, tvb, 8, hf_ift_ai_flags, ett_ift_ai_flags, flag_fields, ENC_BIG_ENDIAN);
    flags = tvb_get_ntohl(tvb, 8);
    proto_item *vtag_item = proto_tree_add_item_ret_uint(ai, hf_ift_ai_vtag, tvb, 12, 2, ENC_BIG_ENDIAN, &vtag);
    proto_item *mi_item = proto_tree_add_item_ret_uint(ai, hf_ift_ai_marker_interval, tvb, 14, 2, ENC_BIG_ENDIAN, &interval);
    proto_item *rsv_item = proto_tree_add_item(ai, hf_ift_ai_reserved, tvb, VW_IFT_IND_RESERVED_OFF, VW_IFT_IND_RESERVED_LEN, ENC_NA);
    guint32 computed = vw_crc32c(tvb_get_ptr(tvb, 0, VW_IFT_IND_CRC_OFF), VW_IFT_IND_CRC_OFF);
    proto_tree_add_checksum(ai, tvb, VW_IFT_IND_CRC_OFF, hf_ift_ai_crc, hf_ift_ai_crc_status, &ei_ift_ai_crc_bad,
                            pinfo, computed, ENC_LITTLE_ENDIAN, PROTO_CHECKSUM_VERIFY);
    (void)vtag_item;

    /* Version rules (4.2, I8): a newer version is fine while BC version <= 1. */
    if (bc_version > 1)
        expert_add_info(pinfo, bc_item, &ei_ift_ai_bc_version_reject);
    else if (bc_version != 1)
        expert_add_info(pinfo, bc_item, &ei_ift_ai_bc_version);
    if (version > 1 && bc_version <= 1)
        expert_add_info(pinfo, ver_item, &ei_ift_ai_version_newer);
    else if (version != 1)
        expert_add_info(pinfo, ver_item, &ei_ift_ai_version);

    if (flags & VW_IFT_FLAG_RESERVED)
        expert_add_info_format(pinfo, flags_item, &ei_ift_ai_reserved,
                               "[IFT-4.2-RESERVED-ZERO] Reserved flag bits set (0x%06x): must be sent as zero",
                               flags & VW_IFT_FLAG_RESERVED);
    for (int i = 0; i < VW_IFT_IND_RESERVED_LEN; i++) {
        if (tvb_get_guint8(tvb, VW_IFT_IND_RESERVED_OFF + i) != 0) {
            expert_add_info_format(pinfo, rsv_item, &ei_ift_ai_reserved,
                                   "[IFT-4.2-RESERVED-ZERO] Reserved byte %d not zero: must be sent as zero", i);
            break;
        }
    }
    if (flags & VW_IFT_FLAG_SP)
        expert_add_info(pinfo, flags_item, &ei_ift_sp);
    if ((flags & (VW_IFT_FLAG_SM | VW_IFT_FLAG_RM)) || interval != 0)
        expert_add_info_format(pinfo, (flags & (VW_IFT_FLAG_SM | VW_IFT_FLAG_RM)) ? flags_item : mi_item, &ei_ift_markers,
                               "[IFT-4.2-MARKERS] Markers %s%s%s (interval %u): markers are undefined, "
                               "none are sent", (flags & VW_IFT_FLAG_SM) ? "offered (SM)" : "",
                               ((flags & VW_IFT_FLAG_SM) && (flags & VW_IFT_FLAG_RM)) ? " and " : "",
                               (flags & VW_IFT_FLAG_RM) ? "requested (RM)" : (flags & VW_IFT_FLAG_SM) ? "" : "not negotiated",
                               interval);
    if (flags & (VW_IFT_FLAG_IH | VW_IFT_FLAG_IP))
        expert_add_info_format(pinfo, flags_item, &ei_ift_ignores_crc,
                               "[IFT-4.2-IGNORE-CRC] Sender will not check the %s%s%s CRC it receives",
                               (flags & VW_IFT_FLAG_IH) ? "header" : "",
                               ((flags & VW_IFT_FLAG_IH) && (flags & VW_IFT_FLAG_IP)) ? " and" : "",
                               (flags & VW_IFT_FLAG_IP) ? " payload" : "");

    /* Negotiation state: the first AI from each side is the one that counts. */
    struct ift_side *me = &c->side[dir];
    if (!PINFO_FD_VISITED(pinfo) && me->ai_frame == 0) {
        me->ai_frame = pinfo->num;
        me->flags = flags;
        me->vtag = (guint16)vtag;
        if (c->first_ai_dir < 0) {
            c->first_ai_dir = dir;
            c->first_ai_frame = pinfo->num;
        }
    }
    guint32 phase = (flags & VW_IFT_FLAG_PH) ? 1 : 0;
    const struct ift_side *peer = &c->side[1 - dir];
    col_add_fstr(pinfo->cinfo, COL_INFO, "Adaption indication, %s, VTag 0x%04x%s%s",
                 val_to_str_const(phase, ift_phase_vals, "?"), vtag,
                 (flags & VW_IFT_FLAG_HC) ? ", HC" : "", (flags & VW_IFT_FLAG_PC) ? ", PC" : "");
    if (me->ai_frame != pinfo->num) {
        expert_add_info_format(pinfo, ai_item, &ei_ift_ph_order,
                               "[IFT-4.2-PHASE] Second adaption indication from this side (first in frame %u): "
                               "a protocol error", me->ai_frame);
    } else if (c->first_ai_frame == pinfo->num && c->first_ai_dir == dir) {
        if (phase != 0)
            expert_add_info_format(pinfo, ai_item, &ei_ift_ph_order,
                                   "[IFT-4.2-PHASE] The first adaption indication must be phase 0, this is phase 1");
    } else if (phase != 1) {
        expert_add_info_format(pinfo, ai_item, &ei_ift_ph_order,
                               "[IFT-4.2-PHASE] The answer to phase 0 must be phase 1, this is phase 0");
    }
    /* R agreement is known once both AIs are in: flag it on the later one. */
    if (me->ai_frame == pinfo->num && ift_side_known(peer, pinfo) && peer->ai_frame <= me->ai_frame &&
        ((peer->flags ^ flags) & VW_IFT_FLAG_R))
        expert_add_info_format(pinfo, flags_item, &ei_ift_r_disagree,
                               "[IFT-4.2-R-AGREE] R bits disagree (this side %u, peer %u in frame %u): "
                               "the connection must be closed in error",
                               (flags & VW_IFT_FLAG_R) ? 1 : 0, (peer->flags & VW_IFT_FLAG_R) ? 1 : 0, peer->ai_frame);
    ift_add_state_tree(tree, tvb, pinfo, c, dir);
}

static void ift_call_ddp_rdmap(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree,
                               guint32 hs, int payload_offset, guint32 ps)
{
    /* DDP sees header and payload as one segment, without the header CRC. */
    guint32 len = hs + ps;
    guint8 *buf = (guint8 *)wmem_alloc(pinfo->pool, len ? len : 1);
    tvb_memcpy(tvb, buf, VW_IFT_FRAME_HDR_LEN, hs);
    tvb_memcpy(tvb, buf + hs, payload_offset, ps);
    tvbuff_t *ddp_tvb = tvb_new_child_real_data(tvb, buf, len, len);
    add_new_data_source(pinfo, ddp_tvb, "DDP segment");
    call_dissector(ddp_rdmap_handle, ddp_tvb, pinfo, tree);
}

static void dissect_ift_frame(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, proto_tree *ift_tree,
                              struct ift_conv *c, int dir)
{
    const struct ift_side *sender = &c->side[dir];
    const struct ift_side *receiver = &c->side[1 - dir];
    guint32 hs, ps, vtag;
    guint32 total = tvb_reported_length(tvb);
    proto_item *frame_item = proto_tree_add_item(ift_tree, hf_ift_frame, tvb, 0, -1, ENC_NA);
    proto_tree *ft = proto_item_add_subtree(frame_item, ett_ift_frame);
    proto_item *hs_item = proto_tree_add_item_ret_uint(ft, hf_ift_header_size, tvb, 0, 2, ENC_BIG_ENDIAN, &hs);
    proto_tree_add_item_ret_uint(ft, hf_ift_payload_size, tvb, 2, 2, ENC_BIG_ENDIAN, &ps);
    proto_item *vtag_item = proto_tree_add_item_ret_uint(ft, hf_ift_vtag, tvb, 4, 2, ENC_BIG_ENDIAN, &vtag);
    col_add_fstr(pinfo->cinfo, COL_INFO, "Frame, header %u, payload %u, VTag 0x%04x", hs, ps, vtag);

    if (!ift_side_known(sender, pinfo))
        expert_add_info(pinfo, frame_item, &ei_ift_no_ai);
    else if (!ift_side_known(receiver, pinfo))
        expert_add_info(pinfo, frame_item, &ei_ift_frame_early);
    if (ift_side_known(receiver, pinfo) && vtag != receiver->vtag)
        expert_add_info_format(pinfo, vtag_item, &ei_ift_vtag_mismatch,
                               "[IFT-4.2-VTAG-MATCH] VTag 0x%04x is not the receiver's VTag 0x%04x (frame %u): "
                               "the connection must be reset", vtag, receiver->vtag, receiver->ai_frame);

    /* Which CRCs are present: the framer chose the length; compare it with the
     * announcement and say which CRC is missing or extra. */
    gboolean hc_announced = ift_sender_hc(sender, pinfo);
    gboolean pc_announced = ift_sender_pc(sender, pinfo);
    guint32 crc_bytes = total >= VW_IFT_FRAME_HDR_LEN + hs + ps ? total - (VW_IFT_FRAME_HDR_LEN + hs + ps) : 0;
    gboolean hc = hc_announced, pc = pc_announced;
    if (crc_bytes == 0) {
        hc = pc = FALSE;
    } else if (crc_bytes == 2 * VW_IFT_CRC_LEN) {
        hc = pc = TRUE;
    } else if (crc_bytes == VW_IFT_CRC_LEN) {
        /* One CRC: whichever verifies in place; if neither or both, the announced one. */
        guint32 hlen = VW_IFT_FRAME_HDR_LEN + hs;
        gboolean hdr_ok = tvb_get_letohl(tvb, hlen) == vw_crc32c(tvb_get_ptr(tvb, 0, hlen), hlen);
        gboolean pay_ok = tvb_get_letohl(tvb, hlen + ps) == vw_crc32c(tvb_get_ptr(tvb, hlen, ps), ps);
        if (hdr_ok != pay_ok)
            hc = hdr_ok;
        else
            hc = hc_announced;
        pc = !hc;
    }

    int offset = VW_IFT_FRAME_HDR_LEN;
    proto_item *ddp_item = proto_tree_add_item(ft, hf_ift_ddp_header, tvb, offset, hs, ENC_NA);
    if (hs >= 1 && tvb_captured_length_remaining(tvb, offset) >= 1) {
        guint32 want = (tvb_get_guint8(tvb, offset) & VW_DDP_FLAG_T) ? VW_DDP_TAGGED_HDR_LEN : VW_DDP_UNTAGGED_HDR_LEN;
        if (hs < want)
            expert_add_info_format(pinfo, hs_item, &ei_ift_sizes,
                                   "[IFT-5.1-DDP-HDR-PRESENT] header_size %u is shorter than the %s DDP header (%u bytes): "
                                   "the frame does not fit", hs, want == VW_DDP_TAGGED_HDR_LEN ? "tagged" : "untagged", want);
    } else {
        expert_add_info_format(pinfo, hs_item, &ei_ift_sizes,
                               "[IFT-5.1-DDP-HDR-PRESENT] header_size 0: a frame carries a DDP header");
    }
    (void)ddp_item;
    offset += hs;
    if (hc) {
        guint32 computed = vw_crc32c(tvb_get_ptr(tvb, 0, offset), offset);
        proto_tree_add_checksum(ft, tvb, offset, hf_ift_hcrc, hf_ift_hcrc_status, &ei_ift_hcrc_bad, pinfo,
                                computed, ENC_LITTLE_ENDIAN, PROTO_CHECKSUM_VERIFY);
        offset += VW_IFT_CRC_LEN;
    } else {
        proto_tree_add_checksum(ft, tvb, offset, hf_ift_hcrc, hf_ift_hcrc_status, NULL, pinfo, 0,
                                ENC_LITTLE_ENDIAN, PROTO_CHECKSUM_NOT_PRESENT);
    }
    if (hc != hc_announced)
        expert_add_info_format(pinfo, frame_item, &ei_ift_hcrc_presence,
                               "[IFT-5.1-CRC-AS-NEGOTIATED] Header CRC %s, but the sender announced HC=%u",
                               hc ? "present" : "missing", hc_announced ? 1 : 0);
    int payload_offset = offset;
    proto_tree_add_item(ft, hf_ift_payload, tvb, offset, ps, ENC_NA);
    offset += ps;
    if (pc) {
        guint32 computed = vw_crc32c(tvb_get_ptr(tvb, payload_offset, ps), ps);
        proto_tree_add_checksum(ft, tvb, offset, hf_ift_pcrc, hf_ift_pcrc_status, &ei_ift_pcrc_bad, pinfo,
                                computed, ENC_LITTLE_ENDIAN, PROTO_CHECKSUM_VERIFY);
        offset += VW_IFT_CRC_LEN;
    } else {
        proto_tree_add_checksum(ft, tvb, offset, hf_ift_pcrc, hf_ift_pcrc_status, NULL, pinfo, 0,
                                ENC_LITTLE_ENDIAN, PROTO_CHECKSUM_NOT_PRESENT);
    }
    if (pc != pc_announced)
        expert_add_info_format(pinfo, frame_item, &ei_ift_pcrc_presence,
                               "[IFT-5.1-CRC-AS-NEGOTIATED] Payload CRC %s, but the sender announced PC=%u",
                               pc ? "present" : "missing", pc_announced ? 1 : 0);
    ift_add_state_tree(ift_tree, tvb, pinfo, c, dir);

    if (ift_call_ddp && ddp_rdmap_handle && hs > 0)
        ift_call_ddp_rdmap(tvb, pinfo, tree, hs, payload_offset, ps);
}

static int dissect_ift_pdu(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "IFT");
    struct ift_conv *c = ift_get_conv(pinfo);
    int dir = ift_direction(c, pinfo);
    proto_item *ti = proto_tree_add_item(tree, proto_ift, tvb, 0, -1, ENC_NA);
    proto_tree *ift_tree = proto_item_add_subtree(ti, ett_ift);
    /* Only an AI is exactly 64 bytes and starts with the magic (see get_ift_pdu_len). */
    if (tvb_reported_length(tvb) == VW_IFT_IND_LEN && ift_is_ai(tvb, 0))
        dissect_ift_ai(tvb, pinfo, ift_tree, c, dir);
    else
        dissect_ift_frame(tvb, pinfo, tree, ift_tree, c, dir);
    return tvb_captured_length(tvb);
}

static int dissect_ift(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    tcp_dissect_pdus(tvb, pinfo, tree, ift_desegment, VW_IFT_FRAME_HDR_LEN, get_ift_pdu_len, dissect_ift_pdu, data);
    return tvb_captured_length(tvb);
}

/* Heuristic (I1): a TCP payload starting with the AI magic. */
static gboolean dissect_ift_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    if (tvb_captured_length(tvb) < 8 || !ift_is_ai(tvb, 0))
        return FALSE;
    conversation_t *conv = find_or_create_conversation(pinfo);
    conversation_set_dissector(conv, ift_handle);
    dissect_ift(tvb, pinfo, tree, data);
    return TRUE;
}

void proto_register_ift(void)
{
    static hf_register_info hf[] = {
        { &hf_ift_ai, { "Adaption indication", "ift.ai", FT_NONE, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_ai_magic, { "Magic", "ift.ai.magic", FT_UINT32, BASE_HEX, NULL, 0x0, "0x52444450 (\"RDDP\")", HFILL } },
        { &hf_ift_ai_version, { "Version", "ift.ai.version", FT_UINT16, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_ai_bc_version, { "BC version", "ift.ai.bc_version", FT_UINT16, BASE_DEC, NULL, 0x0,
            "Oldest version this sender is backward compatible with", HFILL } },
        { &hf_ift_ai_flags, { "Flags", "ift.ai.flags", FT_UINT32, BASE_HEX, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_ai_flags_ph, { "Phase (PH)", "ift.ai.flags.ph", FT_UINT32, BASE_DEC, VALS(ift_phase_vals), VW_IFT_FLAG_PH, NULL, HFILL } },
        { &hf_ift_ai_flags_r, { "RDMA mode (R)", "ift.ai.flags.r", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_R, NULL, HFILL } },
        { &hf_ift_ai_flags_hc, { "Sends header CRC (HC)", "ift.ai.flags.hc", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_HC, NULL, HFILL } },
        { &hf_ift_ai_flags_pc, { "Sends payload CRC (PC)", "ift.ai.flags.pc", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_PC, NULL, HFILL } },
        { &hf_ift_ai_flags_ih, { "Ignores header CRC (IH)", "ift.ai.flags.ih", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_IH, NULL, HFILL } },
        { &hf_ift_ai_flags_ip, { "Ignores payload CRC (IP)", "ift.ai.flags.ip", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_IP, NULL, HFILL } },
        { &hf_ift_ai_flags_sp, { "Permits speculative placement (SP)", "ift.ai.flags.sp", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_SP, NULL, HFILL } },
        { &hf_ift_ai_flags_sm, { "Willing to send markers (SM)", "ift.ai.flags.sm", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_SM, NULL, HFILL } },
        { &hf_ift_ai_flags_rm, { "Wants to receive markers (RM)", "ift.ai.flags.rm", FT_BOOLEAN, 32, NULL, VW_IFT_FLAG_RM, NULL, HFILL } },
        { &hf_ift_ai_flags_reserved, { "Reserved", "ift.ai.flags.reserved", FT_UINT32, BASE_HEX, NULL, VW_IFT_FLAG_RESERVED, NULL, HFILL } },
        { &hf_ift_ai_vtag, { "Sender's VTag", "ift.ai.vtag", FT_UINT16, BASE_HEX, NULL, 0x0,
            "Echoed by the receiver of this indication in every frame it sends", HFILL } },
        { &hf_ift_ai_marker_interval, { "Marker interval", "ift.ai.marker_interval", FT_UINT16, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_ai_reserved, { "Reserved", "ift.ai.reserved", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_ai_crc, { "CRC", "ift.ai.crc", FT_UINT32, BASE_HEX, NULL, 0x0, "CRC-32C of the first 60 bytes", HFILL } },
        { &hf_ift_ai_crc_status, { "CRC status", "ift.ai.crc.status", FT_UINT8, BASE_NONE, VALS(proto_checksum_vals), 0x0, NULL, HFILL } },
        { &hf_ift_frame, { "Frame", "ift.frame", FT_NONE, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_header_size, { "Header size", "ift.header_size", FT_UINT16, BASE_DEC, NULL, 0x0, "Bytes of DDP header", HFILL } },
        { &hf_ift_payload_size, { "Payload size", "ift.payload_size", FT_UINT16, BASE_DEC, NULL, 0x0, "Bytes of DDP payload", HFILL } },
        { &hf_ift_vtag, { "Receiver's VTag", "ift.vtag", FT_UINT16, BASE_HEX, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_ddp_header, { "DDP header", "ift.ddp_header", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_hcrc, { "Header CRC", "ift.hcrc", FT_UINT32, BASE_HEX, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_hcrc_status, { "Header CRC status", "ift.hcrc.status", FT_UINT8, BASE_NONE, VALS(proto_checksum_vals), 0x0, NULL, HFILL } },
        { &hf_ift_payload, { "DDP payload", "ift.payload", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_pcrc, { "Payload CRC", "ift.pcrc", FT_UINT32, BASE_HEX, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_pcrc_status, { "Payload CRC status", "ift.pcrc.status", FT_UINT8, BASE_NONE, VALS(proto_checksum_vals), 0x0, NULL, HFILL } },
        { &hf_ift_state, { "Negotiated state", "ift.state", FT_NONE, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_state_ai_frame, { "This side's indication", "ift.state.ai_frame", FT_FRAMENUM, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_state_peer_ai_frame, { "Peer's indication", "ift.state.peer_ai_frame", FT_FRAMENUM, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_state_hc, { "Sender sends header CRC", "ift.state.hc", FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_state_pc, { "Sender sends payload CRC", "ift.state.pc", FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_state_vtag, { "Expected VTag", "ift.state.vtag", FT_UINT16, BASE_HEX, NULL, 0x0, NULL, HFILL } },
        { &hf_ift_state_mode, { "Mode", "ift.state.mode", FT_UINT32, BASE_DEC, VALS(ift_mode_vals), 0x0, NULL, HFILL } },
    };
    static gint *ett[] = { &ett_ift, &ett_ift_ai, &ett_ift_ai_flags, &ett_ift_frame, &ett_ift_state };
    static ei_register_info ei[] = {
        { &ei_ift_ai_version, { "ift.ai.version.bad", PI_PROTOCOL, PI_ERROR,
            "[IFT-4.2-VERSION] Version must be 1", EXPFILL } },
        { &ei_ift_ai_version_newer, { "ift.ai.version.newer", PI_PROTOCOL, PI_NOTE,
            "[IFT-4.2-VERSION] Newer version with BC version <= 1: accepted", EXPFILL } },
        { &ei_ift_ai_bc_version, { "ift.ai.bc_version.bad", PI_PROTOCOL, PI_ERROR,
            "[IFT-4.2-BC-VERSION-SET] BC version must be 1", EXPFILL } },
        { &ei_ift_ai_bc_version_reject, { "ift.ai.bc_version.incompatible", PI_PROTOCOL, PI_ERROR,
            "[IFT-4.2-BC-VERSION-REJECT] BC version above 1: must be rejected as incompatible", EXPFILL } },
        { &ei_ift_ai_reserved, { "ift.ai.reserved.nonzero", PI_PROTOCOL, PI_WARN,
            "[IFT-4.2-RESERVED-ZERO] Reserved bits must be sent as zero", EXPFILL } },
        { &ei_ift_ai_crc_bad, { "ift.ai.crc.bad", PI_CHECKSUM, PI_ERROR,
            "[IFT-4.2-IND-CRC] Bad adaption indication CRC: the connection must be reset", EXPFILL } },
        { &ei_ift_r_disagree, { "ift.ai.r_disagree", PI_PROTOCOL, PI_ERROR,
            "[IFT-4.2-R-AGREE] R bits disagree: the connection must be closed in error", EXPFILL } },
        { &ei_ift_ph_order, { "ift.ai.ph_order", PI_SEQUENCE, PI_ERROR,
            "[IFT-4.2-PHASE] Unexpected phase", EXPFILL } },
        { &ei_ift_sp, { "ift.ai.sp", PI_PROTOCOL, PI_NOTE,
            "[IFT-4.2-SP-PERMISSION] Speculative placement permitted to the receiver", EXPFILL } },
        { &ei_ift_markers, { "ift.ai.markers", PI_PROTOCOL, PI_NOTE,
            "[IFT-4.2-MARKERS] Markers requested or offered", EXPFILL } },
        { &ei_ift_ignores_crc, { "ift.ai.ignores_crc", PI_PROTOCOL, PI_CHAT,
            "[IFT-4.2-IGNORE-CRC] Sender will not check received CRCs", EXPFILL } },
        { &ei_ift_no_ai, { "ift.no_ai", PI_SEQUENCE, PI_ERROR,
            "[IFT-4-INDICATION-FIRST] Frame before this side's adaption indication: a protocol error "
            "(layout from preferences)", EXPFILL } },
        { &ei_ift_frame_early, { "ift.frame_before_phase1", PI_SEQUENCE, PI_ERROR,
            "[IFT-4.2-FRAMES-AFTER-PHASE1] Frame sent before the peer's adaption indication: a protocol error", EXPFILL } },
        { &ei_ift_vtag_mismatch, { "ift.vtag.mismatch", PI_PROTOCOL, PI_ERROR,
            "[IFT-4.2-VTAG-MATCH] VTag is not the receiver's VTag", EXPFILL } },
        { &ei_ift_hcrc_bad, { "ift.hcrc.bad", PI_CHECKSUM, PI_ERROR,
            "[IFT-5.1-HDR-CRC] Bad header CRC: no data of this frame may be placed", EXPFILL } },
        { &ei_ift_pcrc_bad, { "ift.pcrc.bad", PI_CHECKSUM, PI_ERROR,
            "[IFT-5.1-PAYLOAD-CRC] Bad payload CRC: no data of this frame may be placed", EXPFILL } },
        { &ei_ift_hcrc_presence, { "ift.hcrc.presence", PI_PROTOCOL, PI_ERROR,
            "[IFT-5.1-CRC-AS-NEGOTIATED] Header CRC presence differs from the sender's HC", EXPFILL } },
        { &ei_ift_pcrc_presence, { "ift.pcrc.presence", PI_PROTOCOL, PI_ERROR,
            "[IFT-5.1-CRC-AS-NEGOTIATED] Payload CRC presence differs from the sender's PC", EXPFILL } },
        { &ei_ift_sizes, { "ift.sizes.bad", PI_MALFORMED, PI_ERROR,
            "[IFT-5.1-DDP-HDR-PRESENT] header_size does not fit the DDP header", EXPFILL } },
    };

    proto_ift = proto_register_protocol("iWARP Framing for TCP", "IFT", "ift");
    proto_register_field_array(proto_ift, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    expert_module_t *expert_ift = expert_register_protocol(proto_ift);
    expert_register_field_array(expert_ift, ei, array_length(ei));

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
}

void proto_reg_handoff_ift(void)
{
    ddp_rdmap_handle = find_dissector("iwarp_ddp_rdmap");
    dissector_add_uint_with_preference("tcp.port", VW_IFT_DEFAULT_PORT, ift_handle);
    heur_dissector_add("tcp", dissect_ift_heur, "IFT over TCP (adaption indication magic)", "ift_tcp",
                       proto_ift, HEURISTIC_ENABLE);
}
