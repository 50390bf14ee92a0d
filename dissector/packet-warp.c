/*
 * WARP over TCP: the packet sketch of Appendix A of
 * draft-jpink-warp-summary-00, as the project reads it (spec-decisions W1-W4).
 *
 * A chunk is | Type(4) Rsvd(9) E C L | Chunk length(16) | then, for Send,
 * SSN(32) and a 32-bit buffer offset, for RDMA Write, RID(32) and a 64-bit
 * buffer offset; then the payload and a big-endian Adler-32 of every byte
 * before it. Chunk length counts the whole chunk (W2). The chunks of one ULP
 * PDU (up to the L bit) are reassembled; their SSN/offset sequence is
 * checked per direction (W4).
 *
 * Every verdict comes from the wire library: vw_warp_decode checks the chunk
 * (length, type, flags, Adler-32) and vw_warp_seq_check the W4 sequence; the
 * findings become expert items whose text starts with the requirement ID
 * (wire/catalog/warp.def), so an ID means the same here, in lint and in
 * conformance reports. This file only builds the tree and reassembles.
 */
#include <epan/packet.h>
#include <epan/conversation.h>
#include <epan/decode_as.h>
#include <epan/exceptions.h>
#include <epan/expert.h>
#include <epan/prefs.h>
#include <epan/proto_data.h>
#include <epan/reassemble.h>
#include <epan/tap.h>
#include <epan/dissectors/packet-tcp.h>
#include <vitcp/checksum.h>
#include <vitcp/iscsi_bhs.h>
#include <vitcp/warp.h>
#include <vitcp/warp_stream.h>
#include "plugin_protos.h"
#include "info_column.h"
#include "rule_experts.h"
#include "stream_end.h"
#include "vitcp_dissector.h"

#define WARP_FIRST_WORD_LEN 4 /* type/flags word and chunk length */

static int proto_warp = -1;
static int warp_tap = -1;
static dissector_handle_t warp_handle;
static dissector_table_t warp_ulp_table;
static dissector_handle_t iscsi_handle;

static int hf_warp_type = -1;
static int hf_warp_rsvd = -1;
static int hf_warp_flags = -1;
static int hf_warp_flags_e = -1;
static int hf_warp_flags_c = -1;
static int hf_warp_flags_l = -1;
static int hf_warp_chunk_len = -1;
static int hf_warp_rid = -1;
static int hf_warp_ssn = -1;
static int hf_warp_offset = -1;
static int hf_warp_payload = -1;
static int hf_warp_adler32 = -1;
static int hf_warp_adler32_status = -1;
static int hf_warp_expected_offset = -1;
static int hf_warp_fragments = -1;
static int hf_warp_fragment = -1;
static int hf_warp_fragment_overlap = -1;
static int hf_warp_fragment_overlap_conflicts = -1;
static int hf_warp_fragment_multiple_tails = -1;
static int hf_warp_fragment_too_long_fragment = -1;
static int hf_warp_fragment_error = -1;
static int hf_warp_fragment_count = -1;
static int hf_warp_reassembled_in = -1;
static int hf_warp_reassembled_length = -1;
static int hf_warp_reassembled_data = -1;

static gint ett_warp = -1;
static gint ett_warp_flags = -1;
static gint ett_warp_fragment = -1;
static gint ett_warp_fragments = -1;

static rule_experts_t warp_rules;

static gboolean warp_desegment = TRUE;
static gboolean warp_reassemble = TRUE;
/* W16: Send ULP PDUs that look like iSCSI PDUs go to iSCSI without Decode As. */
static gboolean warp_iscsi_heuristic = TRUE;

static reassembly_table warp_send_reassembly;
static reassembly_table warp_rdma_reassembly;

static const fragment_items warp_frag_items = {
    &ett_warp_fragment, &ett_warp_fragments,
    &hf_warp_fragments, &hf_warp_fragment, &hf_warp_fragment_overlap,
    &hf_warp_fragment_overlap_conflicts, &hf_warp_fragment_multiple_tails,
    &hf_warp_fragment_too_long_fragment, &hf_warp_fragment_error, &hf_warp_fragment_count,
    &hf_warp_reassembled_in, &hf_warp_reassembled_length, &hf_warp_reassembled_data,
    "WARP chunks"
};

static const value_string warp_type_vals[] = {
    { VW_WARP_SEND, "Send" },
    { VW_WARP_RDMA, "RDMA Write" },
    { 0, NULL }
};

struct warp_conv {
    address side0_addr;
    guint32 side0_port;
    struct vw_warp_seq seq[2]; /* W4 state per direction, advanced on the first pass */
    guint32 lost_frame[2];     /* frame where the direction's framing was lost (0: never) */
    /* ULP PDUs begun per direction and type (Send, RDMA Write): the number of
     * a chunk's PDU is its reassembly key, so two RDMA Writes to the same RID
     * that complete in one frame stay apart (issue 22, W14). */
    guint32 pdus[2][2];
    stream_end_t end;          /* where each direction ends (W18, first pass) */
    /* W15: the last chunk's Adler-32 was bad, and the Adler-32 of all its
     * bytes; a next "header" that is that value means the sender's Chunk
     * length left its Adler-32 out (first pass). */
    gboolean prev_bad[2];
    guint32 prev_full[2];
    gboolean no_adler_pending[2];
    /* W17: where framing was lost to a payload-only Chunk length (frame,
     * raw offset of the chunk's start: every pass frames there the same),
     * which evidence showed it, and whether the record is still to make. */
    guint32 po_frame[2];
    guint32 po_raw[2];
    guint8 po_kind[2];
    gboolean po_pending[2];
};

/* What the first pass concluded for one chunk. */
struct warp_chunk_record {
    struct vw_warp_seq_pos pos;
    gboolean no_adler;         /* framing lost here to a Chunk length without the Adler-32 (W15) */
    guint8 payload_only;       /* framing lost here to a Chunk length of the payload only (W17) */
    guint32 pdu;               /* number of its ULP PDU in its direction and type, from 1 */
    rule_findings_t findings;
};

static struct warp_conv *warp_get_conv(packet_info *pinfo)
{
    conversation_t *conv = find_or_create_conversation(pinfo);
    struct warp_conv *c = (struct warp_conv *)conversation_get_proto_data(conv, proto_warp);
    if (!c) {
        c = wmem_new0(wmem_file_scope(), struct warp_conv);
        copy_address_wmem(wmem_file_scope(), &c->side0_addr, &pinfo->src);
        c->side0_port = pinfo->srcport;
        conversation_add_proto_data(conv, proto_warp, c);
    }
    return c;
}

static int warp_dir(const struct warp_conv *c, const packet_info *pinfo)
{
    return (addresses_equal(&c->side0_addr, &pinfo->src) && c->side0_port == pinfo->srcport) ? 0 : 1;
}


/* A chunk header the stream can be framed by: a length that holds its
 * type's header and the Adler-32. An unknown type is still framed by its
 * length (every chunk carries one at the same place, A.1), so long as the
 * length covers the type/length word itself. */
static gboolean warp_header_frameable(tvbuff_t *tvb, int offset)
{
    unsigned type = tvb_get_ntohs(tvb, offset) >> VW_WARP_TYPE_SHIFT;
    guint len = tvb_get_ntohs(tvb, offset + 2);
    guint min = type == VW_WARP_SEND ? VW_WARP_SEND_HDR_LEN + VW_WARP_ADLER_LEN
              : type == VW_WARP_RDMA ? VW_WARP_RDMA_HDR_LEN + VW_WARP_ADLER_LEN : 4;
    return len >= min;
}

/* Frames after the one where this direction's framing was lost: not framed
 * again. (WARP has no marker to resynchronise on; desegmenting on the
 * lengths that random bytes spell made one damaged chunk cost time
 * quadratic in the stream's length, issue 22.) */
static gboolean warp_after_loss(packet_info *pinfo)
{
    struct warp_conv *c = warp_get_conv(pinfo);
    guint32 lost = c->lost_frame[warp_dir(c, pinfo)];
    return lost && pinfo->num > lost;
}

static guint get_warp_pdu_len(packet_info *pinfo, tvbuff_t *tvb, int offset, void *data _U_)
{
    /* Framing lost (now or before): the rest of the segment is one PDU,
     * decoded once and shown, never asked of TCP again. */
    if (warp_after_loss(pinfo))
        return (guint)tvb_reported_length_remaining(tvb, offset);
    struct warp_conv *c = warp_get_conv(pinfo);
    int d = warp_dir(c, pinfo);
    if (!PINFO_FD_VISITED(pinfo) && c->prev_bad[d] &&
        vw_warp_len_without_adler(c->prev_full[d], tvb_get_ptr(tvb, offset, 4))) {
        if (!c->lost_frame[d])
            c->lost_frame[d] = pinfo->num;
        c->no_adler_pending[d] = TRUE;
        return (guint)tvb_reported_length_remaining(tvb, offset);
    }
    /* W17: bytes that read right with a payload-only Chunk length (the
     * same bytes at hand as lint's framer: to the end of this segment). */
    guint32 raw_off = (guint32)(tvb_raw_offset(tvb) + offset);
    if (c->po_frame[d] == pinfo->num && c->po_raw[d] == raw_off)
        return (guint)tvb_reported_length_remaining(tvb, offset);
    if (!PINFO_FD_VISITED(pinfo) && !c->lost_frame[d]) {
        guint have = (guint)tvb_captured_length_remaining(tvb, offset);
        enum vw_warp_po po = vw_warp_payload_only(tvb_get_ptr(tvb, offset, have), have);
        if (po != VW_WARP_PO_NO) {
            c->lost_frame[d] = c->po_frame[d] = pinfo->num;
            c->po_raw[d] = raw_off;
            c->po_kind[d] = (guint8)po;
            c->po_pending[d] = TRUE;
            return (guint)tvb_reported_length_remaining(tvb, offset);
        }
    }
    if (!warp_header_frameable(tvb, offset)) {
        if (!PINFO_FD_VISITED(pinfo) && !c->lost_frame[d])
            c->lost_frame[d] = pinfo->num;
        return (guint)tvb_reported_length_remaining(tvb, offset);
    }
    return tvb_get_ntohs(tvb, offset + 2);
}

/* The chunk's verdict, decided once on the first pass (in capture order)
 * and shown on every pass. */
static struct warp_chunk_record *warp_record(tvbuff_t *tvb, packet_info *pinfo, const guint8 *raw, guint32 len,
                                             const struct vw_warp_chunk *chunk, enum vw_req err,
                                             const struct vw_findings *decode_findings)
{
    struct warp_chunk_record *rec = (struct warp_chunk_record *)
        p_get_proto_data(wmem_file_scope(), pinfo, proto_warp, tvb_raw_offset(tvb));
    if (rec)
        return rec;
    rec = wmem_new0(wmem_file_scope(), struct warp_chunk_record);
    struct vw_findings fs = *decode_findings;
    struct warp_conv *c = warp_get_conv(pinfo);
    int d = warp_dir(c, pinfo);
    if (!PINFO_FD_VISITED(pinfo) && c->no_adler_pending[d]) {
        /* W15: these bytes are no chunk; the reading is the finding. */
        c->no_adler_pending[d] = FALSE;
        rec->no_adler = TRUE;
        vw_findings_clear(&fs);
        vw_findings_add(&fs, VW_REQ_WARP_A_CHUNK_LEN, VW_SEV_ERROR, 0, 4, "%s", VW_WARP_NO_ADLER_TEXT);
        rule_findings_keep(&rec->findings, &fs);
        p_add_proto_data(wmem_file_scope(), pinfo, proto_warp, tvb_raw_offset(tvb), rec);
        return rec;
    }
    if (!PINFO_FD_VISITED(pinfo) && c->po_pending[d]) {
        /* W17: no chunk here either; the reading is the finding. */
        c->po_pending[d] = FALSE;
        rec->payload_only = c->po_kind[d];
        vw_findings_clear(&fs);
        vw_findings_add(&fs, VW_REQ_WARP_A_CHUNK_LEN, VW_SEV_ERROR, 2, 2, "%s",
                        vw_warp_payload_only_text((enum vw_warp_po)c->po_kind[d]));
        rule_findings_keep(&rec->findings, &fs);
        p_add_proto_data(wmem_file_scope(), pinfo, proto_warp, tvb_raw_offset(tvb), rec);
        return rec;
    }
    if (!PINFO_FD_VISITED(pinfo)) {
        c->prev_bad[d] = (err == VW_REQ_NONE || err == VW_REQ_WARP_A_TYPE_KNOWN) && !chunk->adler_ok;
        if (c->prev_bad[d])
            c->prev_full[d] = vw_adler32(raw, len);
    }
    if (err == VW_REQ_NONE && !PINFO_FD_VISITED(pinfo)) {
        vw_warp_seq_check(&c->seq[d], chunk, &rec->pos, &fs);
        guint32 *n = &c->pdus[d][chunk->type == VW_WARP_RDMA];
        if (!rec->pos.continuation || !*n)
            ++*n;
        rec->pdu = *n;
    }
    rule_findings_keep(&rec->findings, &fs);
    p_add_proto_data(wmem_file_scope(), pinfo, proto_warp, tvb_raw_offset(tvb), rec);
    return rec;
}

/* The ULP PDU this chunk completes (its own payload when one chunk with L
 * holds it all, the reassembled chunks otherwise), or NULL. */
static tvbuff_t *warp_reassemble_ulp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *wt, const struct vw_warp_chunk *chunk,
                                     const struct warp_chunk_record *rec)
{
    gboolean last = (chunk->flags & VW_WARP_FLAG_L) != 0;
    /* A whole ULP PDU in one chunk needs no reassembly. */
    if (last && !rec->pos.continuation)
        return tvb_new_subset_length(tvb, (int)chunk->payload_offset, (int)chunk->payload_len);
    if (!warp_reassemble)
        return NULL;
    reassembly_table *table = chunk->type == VW_WARP_RDMA ? &warp_rdma_reassembly : &warp_send_reassembly;
    /* Not the RID or SSN: a ULP may write one region many times (W14). */
    guint32 id = rec->pdu;
    gboolean save_fragmented = pinfo->fragmented;
    pinfo->fragmented = TRUE;
    fragment_head *fd_head = fragment_add_seq_next(table, tvb, (int)chunk->payload_offset, pinfo, id, NULL,
                                                   (guint32)chunk->payload_len, !last);
    /* A later pass finds the PDU whole at its non-last chunks in the L chunk's
     * frame too: only the L chunk shows it, as on the first pass. */
    if (!last && fd_head && fd_head->reassembled_in == pinfo->num) {
        pinfo->fragmented = save_fragmented;
        return NULL;
    }
    tvbuff_t *ulp = process_reassembled_data(tvb, (int)chunk->payload_offset, pinfo, "Reassembled WARP ULP PDU",
                                             fd_head, &warp_frag_items, NULL, wt);
    pinfo->fragmented = save_fragmented;
    /* Another chunk of this frame may have completed it: only the L chunk hands it on. */
    if (!ulp || !last)
        return NULL;
    col_append_str(pinfo->cinfo, COL_INFO, " [ULP PDU reassembled]");
    return ulp;
}

/* W16: a Send ULP PDU whose bytes pass vw_iscsi_looks_like_pdu (a known
 * opcode, lengths that add up to the ULP PDU's) is an iSCSI PDU of the
 * draft's Appendix B mapping. RDMA Write ULP PDUs are data placed in a
 * buffer, never PDUs. */
static gboolean warp_ulp_is_iscsi(tvbuff_t *ulp, int type)
{
    guint len = tvb_captured_length(ulp);
    if (!warp_iscsi_heuristic || !iscsi_handle || type != VW_WARP_SEND || len < VW_ISCSI_BHS_LEN ||
        len != tvb_reported_length(ulp))
        return FALSE;
    return vw_iscsi_looks_like_pdu(tvb_get_ptr(ulp, 0, (gint)len), len);
}

/* A whole ULP PDU to the "warp.ulp" table (by TCP port, Decode As), which
 * writes after the WARP summary; else to iSCSI when it looks like one (W16);
 * else shown as data. */
static void warp_hand_off(tvbuff_t *ulp, packet_info *pinfo, proto_tree *tree, int type)
{
    if (!tvb_reported_length(ulp))
        return;
    guint32 low = MIN(pinfo->srcport, pinfo->destport), high = MAX(pinfo->srcport, pinfo->destport);
    dissector_handle_t h = dissector_get_uint_handle(warp_ulp_table, low);
    if (!h)
        h = dissector_get_uint_handle(warp_ulp_table, high);
    if (!h && warp_ulp_is_iscsi(ulp, type))
        h = iscsi_handle;
    if (!h) {
        call_data_dissector(ulp, pinfo, tree);
        return;
    }
    info_handoff_begin(pinfo);
    /* The PDU is whole: a ULP written for TCP (iSCSI) must not ask TCP for more. */
    guint16 save_can_desegment = pinfo->can_desegment;
    pinfo->can_desegment = 0;
    guint32 save_desegment_len = pinfo->desegment_len;
    int save_desegment_offset = pinfo->desegment_offset;
    TRY {
        call_dissector(h, ulp, pinfo, tree);
    }
    FINALLY {
        pinfo->can_desegment = save_can_desegment;
        pinfo->desegment_len = save_desegment_len;
        pinfo->desegment_offset = save_desegment_offset;
    }
    ENDTRY;
    info_handoff_end(pinfo);
}

static int dissect_warp_pdu(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    info_pdu_begin(pinfo, proto_warp);
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "WARP");
    guint32 len = tvb_reported_length(tvb);
    proto_item *ti = proto_tree_add_item(tree, proto_warp, tvb, 0, -1, ENC_NA);
    if (warp_after_loss(pinfo)) {
        proto_item_append_text(ti, ", %u bytes after the framing was lost (not dissected)", len);
        col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "[framing lost] Len=%u", len);
        return tvb_captured_length(tvb);
    }
    proto_tree *wt = proto_item_add_subtree(ti, ett_warp);
    proto_tree_add_item(wt, hf_warp_type, tvb, 0, 2, ENC_BIG_ENDIAN);
    proto_tree_add_item(wt, hf_warp_rsvd, tvb, 0, 2, ENC_BIG_ENDIAN);
    static int *const flag_fields[] = { &hf_warp_flags_e, &hf_warp_flags_c, &hf_warp_flags_l, NULL };
    proto_tree_add_bitmask(wt, tvb, 0, hf_warp_flags, ett_warp_flags, flag_fields, ENC_BIG_ENDIAN);
    proto_tree_add_item(wt, hf_warp_chunk_len, tvb, 2, 2, ENC_BIG_ENDIAN);

    /* Throws (packet size limited) when the capture cut the chunk short. */
    const guint8 *raw = tvb_get_ptr(tvb, 0, len);
    struct vw_warp_chunk chunk;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    enum vw_req err = vw_warp_decode(raw, len, &chunk, &fs);
    struct warp_chunk_record *rec = warp_record(tvb, pinfo, raw, len, &chunk, err, &fs);
    if (rec->no_adler || rec->payload_only) {
        /* Framing lost to a Chunk length read another way: W15 (without
         * the Adler-32, named first when both) or W17 (the payload only).
         * One branch, so that the two cannot drift apart; only the words differ. */
        const char *item_text = rec->no_adler ? "after a Chunk length without the Adler-32"
                                              : "from a Chunk length of the payload only";
        const char *info_text = rec->no_adler ? "length without Adler-32" : "length of the payload only";
        rule_experts_add_all(&warp_rules, wt, pinfo, tvb, rec->findings.items, rec->findings.count);
        proto_item_append_text(ti, ", %u bytes %s [%s]", len, item_text, vw_req_id(VW_REQ_WARP_A_CHUNK_LEN));
        col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "[framing lost: %s] Len=%u", info_text, len);
        return tvb_captured_length(tvb);
    }

    if (err == VW_REQ_NONE) {
        if (chunk.type == VW_WARP_RDMA) {
            proto_tree_add_item(wt, hf_warp_rid, tvb, 4, 4, ENC_BIG_ENDIAN);
            proto_tree_add_item(wt, hf_warp_offset, tvb, 8, 8, ENC_BIG_ENDIAN);
        } else {
            proto_tree_add_item(wt, hf_warp_ssn, tvb, 4, 4, ENC_BIG_ENDIAN);
            proto_tree_add_uint64(wt, hf_warp_offset, tvb, 8, 4, chunk.offset);
        }
        if (rec->pos.offset_known && (rec->pos.continuation || rec->pos.expected_offset != chunk.offset))
            proto_item_set_generated(proto_tree_add_uint64(wt, hf_warp_expected_offset, tvb, 0, 0,
                                                           rec->pos.expected_offset));
        proto_tree_add_item(wt, hf_warp_payload, tvb, (int)chunk.payload_offset, (int)chunk.payload_len, ENC_NA);
    } else if (err == VW_REQ_WARP_A_TYPE_KNOWN && len > 4 + VW_WARP_ADLER_LEN) {
        proto_tree_add_item(wt, hf_warp_payload, tvb, 4, len - 4 - VW_WARP_ADLER_LEN, ENC_NA);
    }
    /* The decoder checks the Adler-32 of every chunk long enough to frame. */
    if (err == VW_REQ_NONE || err == VW_REQ_WARP_A_TYPE_KNOWN)
        proto_tree_add_checksum(wt, tvb, len - VW_WARP_ADLER_LEN, hf_warp_adler32, hf_warp_adler32_status, NULL, pinfo,
                                chunk.adler_computed, ENC_BIG_ENDIAN, PROTO_CHECKSUM_VERIFY);
    rule_experts_add_all(&warp_rules, wt, pinfo, tvb, rec->findings.items, rec->findings.count);

    warp_tap_info_t *tap = wmem_new0(pinfo->pool, warp_tap_info_t);
    tap->type = err == VW_REQ_NONE ? chunk.type : -1;
    tap->last = err == VW_REQ_NONE && (chunk.flags & VW_WARP_FLAG_L) != 0;
    tap->len = len;
    tap->payload_len = err == VW_REQ_NONE ? (guint32)chunk.payload_len : 0;
    tap->adler_bad = (err == VW_REQ_NONE || err == VW_REQ_WARP_A_TYPE_KNOWN) && !chunk.adler_ok;
    tap_queue_packet(warp_tap, pinfo, tap);

    /* The plugin's Info style: type, Key=Value pairs, [flags], [findings]. */
    if (err != VW_REQ_NONE) {
        col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "%s Len=%u [%s]", vw_warp_type_name(chunk.type), len,
                            vw_req_id(err));
        proto_item_append_text(ti, ", %s chunk, %u bytes [%s]", vw_warp_type_name(chunk.type), len, vw_req_id(err));
        if (err == VW_REQ_WARP_A_TYPE_KNOWN && !chunk.adler_ok)
            col_append_str(pinfo->cinfo, COL_INFO, " [BAD ADLER-32]");
        return tvb_captured_length(tvb);
    }
    if (chunk.type == VW_WARP_RDMA) {
        col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "RDMA Write RID=0x%08x Off=%" G_GUINT64_FORMAT " Len=%u",
                            chunk.rid, chunk.offset, (unsigned)chunk.payload_len);
        proto_item_append_text(ti, ", RDMA Write, RID 0x%08x, Offset %" G_GUINT64_FORMAT ", Len %u", chunk.rid,
                               chunk.offset, (unsigned)chunk.payload_len);
    } else {
        col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "Send SSN=%u Off=%" G_GUINT64_FORMAT " Len=%u", chunk.ssn,
                            chunk.offset, (unsigned)chunk.payload_len);
        proto_item_append_text(ti, ", Send, SSN %u, Offset %" G_GUINT64_FORMAT ", Len %u", chunk.ssn, chunk.offset,
                               (unsigned)chunk.payload_len);
    }
    col_append_fstr(pinfo->cinfo, COL_INFO, "%s%s%s%s", (chunk.flags & VW_WARP_FLAG_L) ? " [L]" : "",
                    (chunk.flags & VW_WARP_FLAG_C) ? " [C]" : "", (chunk.flags & VW_WARP_FLAG_E) ? " [E]" : "",
                    chunk.adler_ok ? "" : " [BAD ADLER-32]");
    tvbuff_t *ulp = warp_reassemble_ulp(tvb, pinfo, wt, &chunk, rec);
    if (ulp)
        warp_hand_off(ulp, pinfo, tree, (int)chunk.type);
    return tvb_captured_length(tvb);
}

static int dissect_warp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    tcp_dissect_pdus(tvb, pinfo, tree, warp_desegment, WARP_FIRST_WORD_LEN, get_warp_pdu_len, dissect_warp_pdu, data);
    struct warp_conv *c = warp_get_conv(pinfo);
    stream_end_after_pdus(&c->end, warp_dir(c, pinfo), tvb, pinfo);
    return tvb_captured_length(tvb);
}

/* Heuristic for WARP on ports other than 5997: the segment starts with a
 * whole chunk of a known type, zero reserved bits, a chunk length that holds
 * its header and whose Adler-32 is right (a 1 in 2^32 chance for other
 * bytes). The connection is then WARP for the rest of the capture. */
static gboolean dissect_warp_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    guint have = tvb_captured_length(tvb);
    if (have < VW_WARP_SEND_HDR_LEN + VW_WARP_ADLER_LEN)
        return FALSE;
    guint chunk_len = tvb_get_ntohs(tvb, 2);
    if (chunk_len < VW_WARP_SEND_HDR_LEN + VW_WARP_ADLER_LEN || chunk_len > have)
        return FALSE;
    struct vw_warp_chunk chunk;
    if (vw_warp_decode(tvb_get_ptr(tvb, 0, chunk_len), chunk_len, &chunk, NULL) != VW_REQ_NONE || !chunk.adler_ok ||
        chunk.rsvd != 0)
        return FALSE;
    conversation_set_dissector(find_or_create_conversation(pinfo), warp_handle);
    dissect_warp(tvb, pinfo, tree, data);
    return TRUE;
}

/*
 * A direction's end (W18): at each direction's first FIN, on the first
 * pass, a chunk it left cut (WARP-A-TRUNCATED) and a Send or RDMA Write
 * ULP PDU still open (WARP-SUMMARY-L-LAST, W12), as lint judges them at
 * the same FIN (stream_end.h). The verdict is kept per frame.
 */
static dissector_handle_t warp_fin_handle;

static void warp_judge_end(packet_info *pinfo, proto_tree *tree, struct vw_findings *fs)
{
    conversation_t *conv = find_conversation_pinfo(pinfo, 0);
    struct warp_conv *c = conv ? (struct warp_conv *)conversation_get_proto_data(conv, proto_warp) : NULL;
    if (!c)
        return;
    int d = warp_dir(c, pinfo);
    if (stream_end_frame(&c->end, d, tree).dir_ended && !c->lost_frame[d])
        vw_warp_direction_end(&c->seq[d], c->end.pending[d], fs);
}

static const stream_end_dissector_t warp_end = {
    &proto_warp, &ett_warp, &warp_rules, warp_judge_end,
    ", end of the direction (TCP FIN) inside a chunk or ULP PDU",
    " [WARP direction ended inside a chunk or ULP PDU]"};

static int dissect_warp_fin(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    return stream_end_dissect(&warp_end, tvb, pinfo, tree);
}

/* Decode As for "warp.ulp": the connection's ports, like TCP's own entry. */
static void warp_da_port_label(packet_info *pinfo _U_, gchar *result)
{
    g_snprintf(result, MAX_DECODE_AS_PROMPT_LEN, "TCP port");
}
static gpointer warp_da_src_port(packet_info *pinfo) { return GUINT_TO_POINTER(pinfo->srcport); }
static gpointer warp_da_dst_port(packet_info *pinfo) { return GUINT_TO_POINTER(pinfo->destport); }
static build_valid_func warp_da_build[] = { warp_da_src_port, warp_da_dst_port };
static decode_as_value_t warp_da_values[] = { { warp_da_port_label, 2, warp_da_build } };
static decode_as_t warp_da = { "warp", "warp.ulp", 1, 0, warp_da_values, NULL, NULL,
                               decode_as_default_populate_list, decode_as_default_reset,
                               decode_as_default_change, NULL };

void proto_register_warp(void)
{
    static hf_register_info hf[] = {
        { &hf_warp_type, { "Type", "warp.type", FT_UINT16, BASE_DEC, VALS(warp_type_vals), 0xF000, "Chunk type: Send or RDMA Write", HFILL } },
        { &hf_warp_rsvd, { "Reserved", "warp.rsvd", FT_UINT16, BASE_HEX, NULL, VW_WARP_RSVD_MASK, "Nine reserved bits, zero on the wire", HFILL } },
        { &hf_warp_flags, { "Flags", "warp.flags", FT_UINT16, BASE_HEX, NULL, VW_WARP_FLAG_E | VW_WARP_FLAG_C | VW_WARP_FLAG_L,
            "The E, C and L bits of the chunk's first word", HFILL } },
        { &hf_warp_flags_e, { "Transmit error (E)", "warp.flags.e", FT_BOOLEAN, 16, NULL, VW_WARP_FLAG_E, "The sender saw a transmit error on this ULP PDU", HFILL } },
        { &hf_warp_flags_c, { "Completion (C)", "warp.flags.c", FT_BOOLEAN, 16, NULL, VW_WARP_FLAG_C, "The receiver signals completion once this ULP PDU is placed (only with L)", HFILL } },
        { &hf_warp_flags_l, { "Last chunk of the ULP PDU (L)", "warp.flags.l", FT_BOOLEAN, 16, NULL, VW_WARP_FLAG_L, "Last chunk of its ULP PDU", HFILL } },
        { &hf_warp_chunk_len, { "Chunk length", "warp.chunk_len", FT_UINT16, BASE_DEC, NULL, 0x0,
            "Whole chunk: header, payload and Adler-32", HFILL } },
        { &hf_warp_rid, { "Receive buffer ID (RID)", "warp.rid", FT_UINT32, BASE_HEX, NULL, 0x0, "Receive buffer the RDMA Write places data in", HFILL } },
        { &hf_warp_ssn, { "Send sequence number (SSN)", "warp.ssn", FT_UINT32, BASE_DEC, NULL, 0x0, "Number of the Send this chunk belongs to, counting up per direction", HFILL } },
        { &hf_warp_offset, { "Buffer offset", "warp.offset", FT_UINT64, BASE_DEC, NULL, 0x0,
            "64 bits for RDMA Write, 32 bits for Send", HFILL } },
        { &hf_warp_payload, { "Payload", "warp.payload", FT_BYTES, BASE_NONE, NULL, 0x0, "ULP bytes carried by this chunk", HFILL } },
        { &hf_warp_adler32, { "Adler-32", "warp.adler32", FT_UINT32, BASE_HEX, NULL, 0x0, "Adler-32 of every byte of the chunk before it, big-endian", HFILL } },
        { &hf_warp_adler32_status, { "Adler-32 status", "warp.adler32.status", FT_UINT8, BASE_NONE,
            VALS(proto_checksum_vals), 0x0, "Whether the Adler-32 matches the chunk", HFILL } },
        { &hf_warp_expected_offset, { "Expected offset", "warp.expected_offset", FT_UINT64, BASE_DEC, NULL, 0x0,
            "Offset that continues the previous chunk of this ULP PDU", HFILL } },
        { &hf_warp_fragments, { "WARP chunks", "warp.fragments", FT_NONE, BASE_NONE, NULL, 0x0, "The chunks of this reassembled ULP PDU", HFILL } },
        { &hf_warp_fragment, { "WARP chunk", "warp.fragment", FT_FRAMENUM, BASE_NONE, NULL, 0x0, "A chunk of this ULP PDU", HFILL } },
        { &hf_warp_fragment_overlap, { "Chunk overlap", "warp.fragment.overlap", FT_BOOLEAN, BASE_NONE, NULL, 0x0, "Chunks of the ULP PDU overlap", HFILL } },
        { &hf_warp_fragment_overlap_conflicts, { "Chunk overlapping with conflicting data",
            "warp.fragment.overlap.conflicts", FT_BOOLEAN, BASE_NONE, NULL, 0x0, "Overlapping chunks carry different bytes", HFILL } },
        { &hf_warp_fragment_multiple_tails, { "Multiple last chunks", "warp.fragment.multiple_tails",
            FT_BOOLEAN, BASE_NONE, NULL, 0x0, "More than one chunk of the ULP PDU has L", HFILL } },
        { &hf_warp_fragment_too_long_fragment, { "Chunk too long", "warp.fragment.too_long_fragment",
            FT_BOOLEAN, BASE_NONE, NULL, 0x0, "A chunk runs past the ULP PDU's end", HFILL } },
        { &hf_warp_fragment_error, { "Reassembly error", "warp.fragment.error", FT_FRAMENUM, BASE_NONE, NULL, 0x0, "Frame where reassembly failed", HFILL } },
        { &hf_warp_fragment_count, { "Chunk count", "warp.fragment.count", FT_UINT32, BASE_DEC, NULL, 0x0, "Number of chunks in the ULP PDU", HFILL } },
        { &hf_warp_reassembled_in, { "Reassembled in", "warp.reassembled_in", FT_FRAMENUM, BASE_NONE, NULL, 0x0, "Frame where this chunk's ULP PDU is complete", HFILL } },
        { &hf_warp_reassembled_length, { "Reassembled ULP PDU length", "warp.reassembled.length",
            FT_UINT32, BASE_DEC, NULL, 0x0, "Bytes of the reassembled ULP PDU", HFILL } },
        { &hf_warp_reassembled_data, { "Reassembled ULP PDU", "warp.reassembled.data", FT_BYTES, BASE_NONE, NULL, 0x0, "The reassembled ULP PDU", HFILL } },
    };
    static gint *ett[] = { &ett_warp, &ett_warp_flags, &ett_warp_fragment, &ett_warp_fragments };

    proto_warp = proto_register_protocol("WARP (draft-jpink-warp-summary Appendix A)", "WARP", "warp");
    proto_register_field_array(proto_warp, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    static const char *const rule_prefixes[] = {"WARP-", NULL};
    rule_experts_register(&warp_rules, proto_warp, "warp", rule_prefixes, "WARP-", TRUE);

    module_t *warp_module = prefs_register_protocol(proto_warp, NULL);
    prefs_register_bool_preference(warp_module, "desegment", "Reassemble WARP chunks spanning TCP segments",
        "Whether WARP should reassemble chunks spanning TCP segments "
        "(needs TCP's \"Allow subdissectors to reassemble TCP streams\").", &warp_desegment);
    prefs_register_bool_preference(warp_module, "reassemble", "Reassemble ULP PDUs from chunks",
        "Join the chunks of one ULP PDU up to the chunk with the L bit.", &warp_reassemble);
    prefs_register_bool_preference(warp_module, "iscsi_heuristic", "Hand iSCSI-looking Send ULP PDUs to iSCSI",
        "Without Decode As, give a Send's ULP PDU to the iSCSI dissector when it starts with an iSCSI header "
        "of a known opcode whose lengths add up to the ULP PDU's (the draft's Appendix B mapping).",
        &warp_iscsi_heuristic);

    reassembly_table_register(&warp_send_reassembly, &addresses_ports_reassembly_table_functions);
    reassembly_table_register(&warp_rdma_reassembly, &addresses_ports_reassembly_table_functions);
    warp_handle = register_dissector("warp", dissect_warp, proto_warp);
    warp_fin_handle = create_dissector_handle(dissect_warp_fin, proto_warp);
    register_postdissector(warp_fin_handle);
    warp_tap = register_tap(WARP_TAP_NAME);
    warp_ulp_table = register_dissector_table("warp.ulp", "WARP ULP PDU (by TCP port)", proto_warp, FT_UINT16,
                                              BASE_DEC);
    register_decode_as(&warp_da);
}

void proto_reg_handoff_warp(void)
{
    stream_end_want_flags(warp_fin_handle);
    dissector_add_uint_with_preference("tcp.port", VW_WARP_DEFAULT_PORT, warp_handle);
    heur_dissector_add("tcp", dissect_warp_heur, "WARP over TCP (a first chunk with a valid Adler-32)", "warp_tcp",
                       proto_warp, HEURISTIC_ENABLE);
    /* The WARP draft maps iSCSI onto WARP: its dissector is offered in Decode As. */
    dissector_handle_t iscsi = find_dissector("iscsi");
    iscsi_handle = iscsi;
    if (iscsi)
        dissector_add_for_decode_as("warp.ulp", iscsi);
    dissector_handle_t text = find_dissector("data-text-lines");
    if (text)
        dissector_add_for_decode_as("warp.ulp", text);
}
