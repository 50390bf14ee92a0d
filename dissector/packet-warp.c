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
 * Expert items carry the requirement ID of the catalog (wire/catalog/warp.def);
 * the Adler-32 comes from the wire library (checksum.h).
 */
#include <epan/packet.h>
#include <epan/conversation.h>
#include <epan/expert.h>
#include <epan/prefs.h>
#include <epan/proto_data.h>
#include <epan/reassemble.h>
#include <epan/dissectors/packet-tcp.h>
#include <vitcp/checksum.h>
#include <vitcp/warp.h>
#include "plugin_protos.h"

#define WARP_FIRST_WORD_LEN 4 /* type/flags word and chunk length */

static int proto_warp = -1;
static dissector_handle_t warp_handle;

static int hf_warp_type = -1;
static int hf_warp_rsvd = -1;
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
static gint ett_warp_fragment = -1;
static gint ett_warp_fragments = -1;

static expert_field ei_warp_adler_bad = EI_INIT;
static expert_field ei_warp_c_without_l = EI_INIT;
static expert_field ei_warp_e_set = EI_INIT;
static expert_field ei_warp_rsvd = EI_INIT;
static expert_field ei_warp_type_unknown = EI_INIT;
static expert_field ei_warp_chunk_len = EI_INIT;
static expert_field ei_warp_ssn = EI_INIT;
static expert_field ei_warp_send_offset = EI_INIT;
static expert_field ei_warp_rdma_contiguous = EI_INIT;

static gboolean warp_desegment = TRUE;
static gboolean warp_reassemble = TRUE;

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

/* Where a direction's ULP PDU stands after the chunks seen so far. */
struct warp_dir {
    gboolean send_seen;
    gboolean send_open;      /* last Send chunk had L clear */
    guint32 send_ssn;
    guint64 send_next_offset;
    gboolean rdma_open;      /* last RDMA chunk had L clear */
    guint32 rdma_rid;
    guint64 rdma_next_offset;
};

struct warp_conv {
    address side0_addr;
    guint32 side0_port;
    struct warp_dir dir[2];
};

/* What the sequence checks concluded for one chunk (first pass). */
struct warp_chunk_verdict {
    gboolean continuation;   /* not the first chunk of its ULP PDU */
    gboolean ssn_bad;
    guint32 ssn_expected;
    gboolean offset_bad;
    guint64 offset_expected;
    gboolean rid_bad;
    guint32 rid_expected;
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

static struct warp_dir *warp_get_dir(packet_info *pinfo)
{
    struct warp_conv *c = warp_get_conv(pinfo);
    int d = (addresses_equal(&c->side0_addr, &pinfo->src) && c->side0_port == pinfo->srcport) ? 0 : 1;
    return &c->dir[d];
}

static guint get_warp_pdu_len(packet_info *pinfo _U_, tvbuff_t *tvb, int offset, void *data _U_)
{
    /* A length under 4 cannot frame anything: tcp_dissect_pdus reports it. */
    return tvb_get_ntohs(tvb, offset + 2);
}

/* Apply W4 to one chunk, update the direction, and say what was wrong. */
static void warp_sequence(struct warp_dir *d, guint type, guint16 flags, guint32 id, guint64 offset,
                          guint32 payload_len, struct warp_chunk_verdict *v)
{
    gboolean last = (flags & VW_WARP_FLAG_L) != 0;
    if (type == VW_WARP_SEND) {
        if (d->send_open) {
            v->continuation = TRUE;
            v->ssn_expected = d->send_ssn;
            v->offset_expected = d->send_next_offset;
        } else {
            v->ssn_expected = d->send_seen ? d->send_ssn + 1 : id;
            v->offset_expected = 0;
        }
        v->ssn_bad = id != v->ssn_expected;
        v->offset_bad = offset != v->offset_expected;
        d->send_seen = TRUE;
        d->send_open = !last;
        d->send_ssn = id;
        d->send_next_offset = offset + payload_len;
    } else if (type == VW_WARP_RDMA) {
        if (d->rdma_open) {
            v->continuation = TRUE;
            v->rid_expected = d->rdma_rid;
            v->offset_expected = d->rdma_next_offset;
            v->rid_bad = id != d->rdma_rid;
            v->offset_bad = offset != d->rdma_next_offset;
        }
        d->rdma_open = !last;
        d->rdma_rid = id;
        d->rdma_next_offset = offset + payload_len;
    }
}

static int dissect_warp_pdu(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "WARP");
    guint32 chunk_len = tvb_reported_length(tvb);
    guint16 word = tvb_get_ntohs(tvb, 0);
    guint type = word >> VW_WARP_TYPE_SHIFT;
    guint16 flags = word & (VW_WARP_FLAG_E | VW_WARP_FLAG_C | VW_WARP_FLAG_L);
    size_t hdr_len = vw_warp_type_hdr_len(type);

    proto_item *ti = proto_tree_add_item(tree, proto_warp, tvb, 0, -1, ENC_NA);
    proto_tree *wt = proto_item_add_subtree(ti, ett_warp);
    proto_item *type_item = proto_tree_add_item(wt, hf_warp_type, tvb, 0, 2, ENC_BIG_ENDIAN);
    proto_item *rsvd_item = proto_tree_add_item(wt, hf_warp_rsvd, tvb, 0, 2, ENC_BIG_ENDIAN);
    proto_item *e_item = proto_tree_add_item(wt, hf_warp_flags_e, tvb, 0, 2, ENC_BIG_ENDIAN);
    proto_item *c_item = proto_tree_add_item(wt, hf_warp_flags_c, tvb, 0, 2, ENC_BIG_ENDIAN);
    proto_tree_add_item(wt, hf_warp_flags_l, tvb, 0, 2, ENC_BIG_ENDIAN);
    proto_item *len_item = proto_tree_add_item(wt, hf_warp_chunk_len, tvb, 2, 2, ENC_BIG_ENDIAN);

    if (word & VW_WARP_RSVD_MASK)
        expert_add_info(pinfo, rsvd_item, &ei_warp_rsvd);
    if (flags & VW_WARP_FLAG_E)
        expert_add_info(pinfo, e_item, &ei_warp_e_set);
    if ((flags & VW_WARP_FLAG_C) && !(flags & VW_WARP_FLAG_L))
        expert_add_info(pinfo, c_item, &ei_warp_c_without_l);

    if (hdr_len == 0) {
        expert_add_info_format(pinfo, type_item, &ei_warp_type_unknown,
                               "[WARP-A-TYPE-KNOWN] Unknown type %u: chunk skipped by its length", type);
        col_add_fstr(pinfo->cinfo, COL_INFO, "Unknown type %u, %u bytes", type, chunk_len);
        if (chunk_len > WARP_FIRST_WORD_LEN)
            proto_tree_add_item(wt, hf_warp_payload, tvb, WARP_FIRST_WORD_LEN, -1, ENC_NA);
        return tvb_captured_length(tvb);
    }
    if (chunk_len < hdr_len + VW_WARP_ADLER_LEN) {
        expert_add_info_format(pinfo, len_item, &ei_warp_chunk_len,
                               "[WARP-A-CHUNK-LEN] Chunk length %u is under the %s header and Adler-32 (%u bytes)",
                               chunk_len, val_to_str_const(type, warp_type_vals, "?"),
                               (unsigned)(hdr_len + VW_WARP_ADLER_LEN));
        return tvb_captured_length(tvb);
    }

    guint32 id;
    guint64 offset;
    proto_item *id_item, *off_item;
    if (type == VW_WARP_RDMA) {
        id_item = proto_tree_add_item_ret_uint(wt, hf_warp_rid, tvb, 4, 4, ENC_BIG_ENDIAN, &id);
        off_item = proto_tree_add_item_ret_uint64(wt, hf_warp_offset, tvb, 8, 8, ENC_BIG_ENDIAN, &offset);
    } else {
        id_item = proto_tree_add_item_ret_uint(wt, hf_warp_ssn, tvb, 4, 4, ENC_BIG_ENDIAN, &id);
        offset = tvb_get_ntohl(tvb, 8);
        off_item = proto_tree_add_uint64(wt, hf_warp_offset, tvb, 8, 4, offset);
    }
    guint32 payload_len = chunk_len - (guint32)hdr_len - VW_WARP_ADLER_LEN;
    int payload_off = (int)hdr_len;
    proto_tree_add_item(wt, hf_warp_payload, tvb, payload_off, payload_len, ENC_NA);

    guint32 adler_off = chunk_len - VW_WARP_ADLER_LEN;
    guint32 computed = vw_adler32(tvb_get_ptr(tvb, 0, adler_off), adler_off);
    proto_item *adler_item = proto_tree_add_checksum(wt, tvb, adler_off, hf_warp_adler32, hf_warp_adler32_status,
                                                     NULL, pinfo, computed, ENC_BIG_ENDIAN, PROTO_CHECKSUM_VERIFY);
    guint32 wire = tvb_get_ntohl(tvb, adler_off);
    if (wire != computed)
        expert_add_info_format(pinfo, adler_item, &ei_warp_adler_bad,
                               "[WARP-A-ADLER-VALID] Bad Adler-32 0x%08x, should be 0x%08x%s", wire, computed,
                               tvb_get_letohl(tvb, adler_off) == computed
                                   ? " (it is the right value written least significant byte first)" : "");

    /* Sequence (W4): decided once on the first pass, shown on every pass. */
    struct warp_chunk_verdict *v = (struct warp_chunk_verdict *)
        p_get_proto_data(wmem_file_scope(), pinfo, proto_warp, tvb_raw_offset(tvb));
    if (!v) {
        v = wmem_new0(wmem_file_scope(), struct warp_chunk_verdict);
        if (!PINFO_FD_VISITED(pinfo))
            warp_sequence(warp_get_dir(pinfo), type, flags, id, offset, payload_len, v);
        p_add_proto_data(wmem_file_scope(), pinfo, proto_warp, tvb_raw_offset(tvb), v);
    }
    if (v->ssn_bad)
        expert_add_info_format(pinfo, id_item, &ei_warp_ssn,
                               "[WARP-A.1.2-SSN-NEXT] SSN %u, expected %u (%s)", id, v->ssn_expected,
                               v->continuation ? "the previous chunk of this Send had L clear" : "one more than the previous Send");
    if (v->rid_bad)
        expert_add_info_format(pinfo, id_item, &ei_warp_rdma_contiguous,
                               "[WARP-A.1.1-RDMA-CONTIGUOUS] RID 0x%08x, but the previous chunk of this ULP PDU "
                               "used RID 0x%08x", id, v->rid_expected);
    if (v->offset_bad || v->continuation) {
        proto_item *exp_item = proto_tree_add_uint64(wt, hf_warp_expected_offset, tvb, 0, 0, v->offset_expected);
        proto_item_set_generated(exp_item);
    }
    if (v->offset_bad) {
        if (type == VW_WARP_SEND)
            expert_add_info_format(pinfo, off_item, &ei_warp_send_offset,
                                   "[WARP-A.1.2-SEND-OFFSET] Offset %" G_GUINT64_FORMAT " does not continue the Send "
                                   "(expected %" G_GUINT64_FORMAT ")", offset, v->offset_expected);
        else
            expert_add_info_format(pinfo, off_item, &ei_warp_rdma_contiguous,
                                   "[WARP-A.1.1-RDMA-CONTIGUOUS] Offset %" G_GUINT64_FORMAT " does not continue the "
                                   "previous chunk (expected %" G_GUINT64_FORMAT ")", offset, v->offset_expected);
    }

    if (type == VW_WARP_RDMA)
        col_add_fstr(pinfo->cinfo, COL_INFO, "RDMA Write RID 0x%08x offset %" G_GUINT64_FORMAT ", %u bytes%s%s",
                     id, offset, payload_len, (flags & VW_WARP_FLAG_L) ? " [L]" : "", (flags & VW_WARP_FLAG_C) ? " [C]" : "");
    else
        col_add_fstr(pinfo->cinfo, COL_INFO, "Send SSN %u offset %" G_GUINT64_FORMAT ", %u bytes%s%s",
                     id, offset, payload_len, (flags & VW_WARP_FLAG_L) ? " [L]" : "", (flags & VW_WARP_FLAG_C) ? " [C]" : "");

    /* ULP PDU reassembly up to the L bit; a whole PDU in one chunk needs none. */
    gboolean single = (flags & VW_WARP_FLAG_L) && !v->continuation;
    if (warp_reassemble && !single) {
        reassembly_table *table = type == VW_WARP_RDMA ? &warp_rdma_reassembly : &warp_send_reassembly;
        gboolean save_fragmented = pinfo->fragmented;
        pinfo->fragmented = TRUE;
        fragment_head *fd_head = fragment_add_seq_next(table, tvb, payload_off, pinfo, id, NULL, payload_len,
                                                       !(flags & VW_WARP_FLAG_L));
        tvbuff_t *ulp = process_reassembled_data(tvb, payload_off, pinfo, "Reassembled WARP ULP PDU", fd_head,
                                                 &warp_frag_items, NULL, wt);
        pinfo->fragmented = save_fragmented;
        if (ulp)
            col_append_str(pinfo->cinfo, COL_INFO, " (ULP PDU reassembled)");
    }
    return tvb_captured_length(tvb);
}

static int dissect_warp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    tcp_dissect_pdus(tvb, pinfo, tree, warp_desegment, WARP_FIRST_WORD_LEN, get_warp_pdu_len, dissect_warp_pdu, data);
    return tvb_captured_length(tvb);
}

void proto_register_warp(void)
{
    static hf_register_info hf[] = {
        { &hf_warp_type, { "Type", "warp.type", FT_UINT16, BASE_DEC, VALS(warp_type_vals), 0xF000, NULL, HFILL } },
        { &hf_warp_rsvd, { "Reserved", "warp.rsvd", FT_UINT16, BASE_HEX, NULL, VW_WARP_RSVD_MASK, NULL, HFILL } },
        { &hf_warp_flags_e, { "Transmit error (E)", "warp.flags.e", FT_BOOLEAN, 16, NULL, VW_WARP_FLAG_E, NULL, HFILL } },
        { &hf_warp_flags_c, { "Completion (C)", "warp.flags.c", FT_BOOLEAN, 16, NULL, VW_WARP_FLAG_C, NULL, HFILL } },
        { &hf_warp_flags_l, { "Last chunk of the ULP PDU (L)", "warp.flags.l", FT_BOOLEAN, 16, NULL, VW_WARP_FLAG_L, NULL, HFILL } },
        { &hf_warp_chunk_len, { "Chunk length", "warp.chunk_len", FT_UINT16, BASE_DEC, NULL, 0x0,
            "Whole chunk: header, payload and Adler-32", HFILL } },
        { &hf_warp_rid, { "Receive buffer ID (RID)", "warp.rid", FT_UINT32, BASE_HEX, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_ssn, { "Send sequence number (SSN)", "warp.ssn", FT_UINT32, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_offset, { "Buffer offset", "warp.offset", FT_UINT64, BASE_DEC, NULL, 0x0,
            "64 bits for RDMA Write, 32 bits for Send", HFILL } },
        { &hf_warp_payload, { "Payload", "warp.payload", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_adler32, { "Adler-32", "warp.adler32", FT_UINT32, BASE_HEX, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_adler32_status, { "Adler-32 status", "warp.adler32.status", FT_UINT8, BASE_NONE,
            VALS(proto_checksum_vals), 0x0, NULL, HFILL } },
        { &hf_warp_expected_offset, { "Expected offset", "warp.expected_offset", FT_UINT64, BASE_DEC, NULL, 0x0,
            "Offset that continues the previous chunk of this ULP PDU", HFILL } },
        { &hf_warp_fragments, { "WARP chunks", "warp.fragments", FT_NONE, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_fragment, { "WARP chunk", "warp.fragment", FT_FRAMENUM, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_fragment_overlap, { "Chunk overlap", "warp.fragment.overlap", FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_fragment_overlap_conflicts, { "Chunk overlapping with conflicting data",
            "warp.fragment.overlap.conflicts", FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_fragment_multiple_tails, { "Multiple last chunks", "warp.fragment.multiple_tails",
            FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_fragment_too_long_fragment, { "Chunk too long", "warp.fragment.too_long_fragment",
            FT_BOOLEAN, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_fragment_error, { "Reassembly error", "warp.fragment.error", FT_FRAMENUM, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_fragment_count, { "Chunk count", "warp.fragment.count", FT_UINT32, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_reassembled_in, { "Reassembled in", "warp.reassembled.in", FT_FRAMENUM, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_reassembled_length, { "Reassembled ULP PDU length", "warp.reassembled.length",
            FT_UINT32, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_warp_reassembled_data, { "Reassembled ULP PDU", "warp.reassembled.data", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
    };
    static gint *ett[] = { &ett_warp, &ett_warp_fragment, &ett_warp_fragments };
    static ei_register_info ei[] = {
        { &ei_warp_adler_bad, { "warp.adler32.bad", PI_CHECKSUM, PI_ERROR,
            "[WARP-A-ADLER-VALID] Bad Adler-32", EXPFILL } },
        { &ei_warp_c_without_l, { "warp.flags.c_without_l", PI_PROTOCOL, PI_ERROR,
            "[WARP-SUMMARY-C-ONLY-WITH-L] Completion bit set without the Last bit", EXPFILL } },
        { &ei_warp_e_set, { "warp.flags.e_set", PI_RESPONSE_CODE, PI_WARN,
            "[WARP-SUMMARY-E-TXERR] Transmit error: the sender hit an error while sending this ULP PDU", EXPFILL } },
        { &ei_warp_rsvd, { "warp.rsvd.nonzero", PI_PROTOCOL, PI_NOTE,
            "[WARP-A-RSVD-ZERO] Reserved bits not zero (transmit as zeros, not checked on receive)", EXPFILL } },
        { &ei_warp_type_unknown, { "warp.type.unknown", PI_PROTOCOL, PI_WARN,
            "[WARP-A-TYPE-KNOWN] Unknown type", EXPFILL } },
        { &ei_warp_chunk_len, { "warp.chunk_len.bad", PI_MALFORMED, PI_ERROR,
            "[WARP-A-CHUNK-LEN] Chunk length too small", EXPFILL } },
        { &ei_warp_ssn, { "warp.ssn.unexpected", PI_SEQUENCE, PI_WARN,
            "[WARP-A.1.2-SSN-NEXT] Unexpected SSN", EXPFILL } },
        { &ei_warp_send_offset, { "warp.offset.send_gap", PI_SEQUENCE, PI_WARN,
            "[WARP-A.1.2-SEND-OFFSET] Offset does not continue the Send", EXPFILL } },
        { &ei_warp_rdma_contiguous, { "warp.offset.rdma_gap", PI_SEQUENCE, PI_WARN,
            "[WARP-A.1.1-RDMA-CONTIGUOUS] RDMA chunk does not continue the ULP PDU", EXPFILL } },
    };

    proto_warp = proto_register_protocol("WARP (draft-jpink-warp-summary Appendix A)", "WARP", "warp");
    proto_register_field_array(proto_warp, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    expert_module_t *expert_warp = expert_register_protocol(proto_warp);
    expert_register_field_array(expert_warp, ei, array_length(ei));

    module_t *warp_module = prefs_register_protocol(proto_warp, NULL);
    prefs_register_bool_preference(warp_module, "desegment", "Reassemble WARP chunks spanning TCP segments",
        "Whether WARP should reassemble chunks spanning TCP segments "
        "(needs TCP's \"Allow subdissectors to reassemble TCP streams\").", &warp_desegment);
    prefs_register_bool_preference(warp_module, "reassemble", "Reassemble ULP PDUs from chunks",
        "Join the chunks of one ULP PDU up to the chunk with the L bit.", &warp_reassemble);

    reassembly_table_register(&warp_send_reassembly, &addresses_ports_reassembly_table_functions);
    reassembly_table_register(&warp_rdma_reassembly, &addresses_ports_reassembly_table_functions);
    warp_handle = register_dissector("warp", dissect_warp, proto_warp);
}

void proto_reg_handoff_warp(void)
{
    dissector_add_uint_with_preference("tcp.port", VW_WARP_DEFAULT_PORT, warp_handle);
}
