/*
 * PacketWay End-to-End Protocol (draft-ietf-pktway-protocol-eep-spec-03) as
 * the project reads it (spec-decisions P1-P8).
 *
 * A message is: leading L2 routing headers and symbols, the 16-byte EEP
 * header, optional header fields (if h), the data block (DL 8-byte words,
 * the last PL bytes padding), optional trailer fields, and the 8-byte TAIL
 * (error indication). Everything is big-endian and whole 8-byte words.
 * Carried on Ethertype 0x88B5 and UDP port 5998 by default (P1); the data
 * block goes to the "pktway.pt" table by packet type (P8 defaults: 0x0800
 * IPv4, 0x86DD IPv6).
 *
 * Expert items carry the requirement ID of the catalog (wire/catalog/eep.def).
 */
#include <epan/packet.h>
#include <epan/expert.h>
#include <epan/prefs.h>
#include <vitcp/pktway.h>
#include "plugin_protos.h"

#define EEP_SYMBOL_MIN 5 /* V/P, 1111 + type (20 bits), length */

static int proto_pktway = -1;
static dissector_handle_t pktway_handle;
static dissector_table_t pktway_pt_table;

static int hf_pktway_l2rh = -1;
static int hf_pktway_l2rh_version = -1;
static int hf_pktway_l2rh_priority = -1;
static int hf_pktway_l2rh_len = -1;
static int hf_pktway_l2rh_route = -1;
static int hf_pktway_symbol = -1;
static int hf_pktway_symbol_version = -1;
static int hf_pktway_symbol_priority = -1;
static int hf_pktway_symbol_type = -1;
static int hf_pktway_symbol_len = -1;
static int hf_pktway_symbol_data = -1;
static int hf_pktway_padding = -1;
static int hf_pktway_header = -1;
static int hf_pktway_version = -1;
static int hf_pktway_priority = -1;
static int hf_pktway_dt = -1;
static int hf_pktway_dt_kind = -1;
static int hf_pktway_dt_addr = -1;
static int hf_pktway_te = -1;
static int hf_pktway_pt = -1;
static int hf_pktway_endian = -1;
static int hf_pktway_endian_e = -1;
static int hf_pktway_pl = -1;
static int hf_pktway_dl = -1;
static int hf_pktway_h = -1;
static int hf_pktway_rz = -1;
static int hf_pktway_sa = -1;
static int hf_pktway_oh = -1;
static int hf_pktway_oh_type = -1;
static int hf_pktway_oh_mandatory = -1;
static int hf_pktway_oh_last = -1;
static int hf_pktway_oh_len = -1;
static int hf_pktway_oh_value = -1;
static int hf_pktway_data = -1;
static int hf_pktway_data_len = -1;
static int hf_pktway_ot = -1;
static int hf_pktway_ei = -1;
static int hf_pktway_ei_hop = -1;
static int hf_pktway_link_padding = -1;

static gint ett_pktway = -1;
static gint ett_pktway_route = -1;
static gint ett_pktway_header = -1;
static gint ett_pktway_oh = -1;
static gint ett_pktway_tail = -1;

static expert_field ei_pktway_version = EI_INIT;
static expert_field ei_pktway_rz = EI_INIT;
static expert_field ei_pktway_sa = EI_INIT;
static expert_field ei_pktway_dt_undefined = EI_INIT;
static expert_field ei_pktway_dt_kind = EI_INIT;
static expert_field ei_pktway_dt_local = EI_INIT;
static expert_field ei_pktway_pl_no_data = EI_INIT;
static expert_field ei_pktway_dl_fits = EI_INIT;
static expert_field ei_pktway_l2rh_len = EI_INIT;
static expert_field ei_pktway_symbol_len = EI_INIT;
static expert_field ei_pktway_symbol_priority = EI_INIT;
static expert_field ei_pktway_routes_left = EI_INIT;
static expert_field ei_pktway_truncated = EI_INIT;
static expert_field ei_pktway_oh_mandatory = EI_INIT;
static expert_field ei_pktway_oh_chain = EI_INIT;
static expert_field ei_pktway_ot_needs_oh = EI_INIT;
static expert_field ei_pktway_ot_unsized = EI_INIT;
static expert_field ei_pktway_ei_error = EI_INIT;
static expert_field ei_pktway_pt_unknown = EI_INIT;
static expert_field ei_pktway_padding = EI_INIT;
static expert_field ei_pktway_link_padding = EI_INIT;
static expert_field ei_pktway_words = EI_INIT;

static const value_string pktway_dt_kind_vals[] = {
    { VW_EEP_DT_PHYSICAL, "Physical address" },
    { VW_EEP_DT_L2RH, "L2 routing header" },
    { VW_EEP_DT_RESERVED, "Reserved (110x)" },
    { VW_EEP_DT_LOGICAL, "Logical address" },
    { VW_EEP_DT_SYMBOL, "Symbol" },
    { 0, NULL }
};

static const value_string pktway_reserved_addr_vals[] = {
    { VW_EEP_ADDR_UNDEFINED, "Undefined" },
    { VW_EEP_ADDR_HEY_YOU, "Hey-You!" },
    { VW_EEP_ADDR_BROADCAST, "Broadcast" },
    { 0, NULL }
};

/* P8: the enumeration document is missing; project-local defaults. */
static const value_string pktway_pt_vals[] = {
    { 0x0001, "RRP" },
    { 0x0002, "ERR" },
    { 0x0800, "IPv4" },
    { 0x86DD, "IPv6" },
    { 0, NULL }
};
#define PKTWAY_PT_ERR 0x0002
static const value_string pktway_err_te_vals[] = {
    { 0x0001, "Destination Unknown (UNK)" },
    { 0x0002, "Message too long for path MTU" },
    { 0x0003, "Unknown mandatory optional header" },
    { 0, NULL }
};

static const true_false_string tfs_little_big = { "Little-Endian", "Big-Endian" };
static const true_false_string tfs_mandatory = { "Mandatory (T=1)", "Optional (T=0)" };
static const true_false_string tfs_last = { "Last optional header field (C=1)", "More follow (C=0)" };

static enum vw_eep_dt_kind pktway_dt_kind(guint32 dt24)
{
    if (!(dt24 & 0x800000))
        return VW_EEP_DT_PHYSICAL;
    if ((dt24 & 0xC00000) == 0x800000)
        return VW_EEP_DT_L2RH;
    if ((dt24 & 0xE00000) == 0xC00000)
        return VW_EEP_DT_RESERVED;
    return (dt24 & 0xF00000) == 0xE00000 ? VW_EEP_DT_LOGICAL : VW_EEP_DT_SYMBOL;
}

/* Padding bytes are discarded unchecked (section 3): show them, note non-zero. */
static void pktway_add_padding(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, int offset, int len)
{
    if (len <= 0)
        return;
    proto_item *pi = proto_tree_add_item(tree, hf_pktway_padding, tvb, offset, len, ENC_NA);
    for (int i = 0; i < len; i++) {
        if (tvb_get_guint8(tvb, offset + i) != 0) {
            expert_add_info(pinfo, pi, &ei_pktway_padding);
            break;
        }
    }
}

/* Leading L2RHs and symbols (5, P2, P4). Returns the EEP header's offset, or
 * -1 if a record runs past the message. */
static int dissect_pktway_routes(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, guint *count)
{
    int offset = 0;
    gint len = tvb_reported_length(tvb);
    *count = 0;
    while (len - offset >= 2) {
        guint8 b1 = tvb_get_guint8(tvb, offset + 1);
        if ((b1 & 0xC0) == 0x80) {
            guint l = b1 & 0x3F;
            int rec_len = (int)vw_eep_l2rh_len(l);
            proto_item *ri = proto_tree_add_item(tree, hf_pktway_l2rh, tvb, offset, MIN(rec_len, len - offset), ENC_NA);
            proto_tree *rt = proto_item_add_subtree(ri, ett_pktway_route);
            proto_tree_add_item(rt, hf_pktway_l2rh_version, tvb, offset, 1, ENC_NA);
            proto_tree_add_item(rt, hf_pktway_l2rh_priority, tvb, offset, 1, ENC_NA);
            proto_tree_add_item(rt, hf_pktway_l2rh_len, tvb, offset + 1, 1, ENC_NA);
            if (rec_len > len - offset) {
                expert_add_info_format(pinfo, ri, &ei_pktway_l2rh_len,
                                       "[EEP-5A-L2RH-LEN] L2RH with %u routing bytes needs %d bytes, %d left",
                                       l, rec_len, len - offset);
                return -1;
            }
            if (l)
                proto_tree_add_item(rt, hf_pktway_l2rh_route, tvb, offset + 2, l, ENC_NA);
            pktway_add_padding(rt, tvb, pinfo, offset + 2 + (int)l, rec_len - 2 - (int)l);
            proto_item_append_text(ri, ", %u routing bytes", l);
            offset += rec_len;
        } else if ((b1 & 0xF0) == 0xF0) {
            if (len - offset < EEP_SYMBOL_MIN) {
                proto_item *ri = proto_tree_add_item(tree, hf_pktway_symbol, tvb, offset, len - offset, ENC_NA);
                expert_add_info_format(pinfo, ri, &ei_pktway_symbol_len,
                                       "[EEP-5B-SYMBOL-LEN] Symbol cut short: %d bytes left", len - offset);
                return -1;
            }
            guint l = tvb_get_guint8(tvb, offset + 4);
            int rec_len = (int)vw_eep_symbol_len(l);
            proto_item *ri = proto_tree_add_item(tree, hf_pktway_symbol, tvb, offset, MIN(rec_len, len - offset), ENC_NA);
            proto_tree *rt = proto_item_add_subtree(ri, ett_pktway_route);
            proto_tree_add_item(rt, hf_pktway_symbol_version, tvb, offset, 1, ENC_NA);
            proto_item *prio = proto_tree_add_item(rt, hf_pktway_symbol_priority, tvb, offset, 1, ENC_NA);
            if (tvb_get_guint8(tvb, offset) & 0x3F)
                expert_add_info(pinfo, prio, &ei_pktway_symbol_priority);
            guint32 stype;
            proto_tree_add_item_ret_uint(rt, hf_pktway_symbol_type, tvb, offset + 1, 3, ENC_BIG_ENDIAN, &stype);
            proto_tree_add_item(rt, hf_pktway_symbol_len, tvb, offset + 4, 1, ENC_NA);
            if (rec_len > len - offset) {
                expert_add_info_format(pinfo, ri, &ei_pktway_symbol_len,
                                       "[EEP-5B-SYMBOL-LEN] Symbol with %u data bytes needs %d bytes, %d left",
                                       l, rec_len, len - offset);
                return -1;
            }
            if (l)
                proto_tree_add_item(rt, hf_pktway_symbol_data, tvb, offset + 5, l, ENC_NA);
            pktway_add_padding(rt, tvb, pinfo, offset + 5 + (int)l, rec_len - 5 - (int)l);
            proto_item_append_text(ri, ", type 0x%05x, %u data bytes", stype & 0xFFFFF, l);
            offset += rec_len;
        } else {
            break;
        }
        (*count)++;
    }
    return offset;
}

/* The TAIL's error indication (10, P6): bit k set = flagged k router shifts
 * before the last router (bit 63 set: the word stopped shifting). */
static void dissect_pktway_tail(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, int offset)
{
    guint64 ei;
    proto_item *ti = proto_tree_add_item_ret_uint64(tree, hf_pktway_ei, tvb, offset, VW_EEP_TAIL_LEN, ENC_BIG_ENDIAN, &ei);
    if (ei == 0)
        return;
    proto_tree *tt = proto_item_add_subtree(ti, ett_pktway_tail);
    wmem_strbuf_t *hops = wmem_strbuf_new(pinfo->pool, "");
    for (guint bit = 0; bit < 64; bit++) {
        if (ei & ((guint64)1 << bit)) {
            proto_item_set_generated(proto_tree_add_uint(tt, hf_pktway_ei_hop, tvb, offset, VW_EEP_TAIL_LEN, bit));
            wmem_strbuf_append_printf(hops, "%s%u", wmem_strbuf_get_len(hops) ? ", " : "", bit);
        }
    }
    expert_add_info_format(pinfo, ti, &ei_pktway_ei_error,
                           "[EEP-10-EI-ERROR] Error indicated (EI 0x%016" G_GINT64_MODIFIER "x): bit(s) %s, "
                           "counted in router shifts back from the last router%s", ei, wmem_strbuf_get_str(hops),
                           (ei >> 63) ? " (MSbit set: no longer shifted)" : "");
}

static int dissect_pktway(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    gint len = tvb_reported_length(tvb);
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "PKTWAY");
    col_clear(pinfo->cinfo, COL_INFO);
    proto_item *root = proto_tree_add_item(tree, proto_pktway, tvb, 0, -1, ENC_NA);
    proto_tree *pt_tree = proto_item_add_subtree(root, ett_pktway);

    guint routes;
    int offset = dissect_pktway_routes(tvb, pinfo, pt_tree, &routes);
    if (offset < 0) {
        col_set_str(pinfo->cinfo, COL_INFO, "Routing record past the message end");
        return tvb_captured_length(tvb);
    }
    if (routes)
        expert_add_info_format(pinfo, root, &ei_pktway_routes_left,
                               "[EEP-4B-ROUTES-CONSUMED] %u L2RH/symbol record(s) not yet consumed", routes);
    if (len - offset < VW_EEP_MIN_LEN) {
        expert_add_info_format(pinfo, root, &ei_pktway_truncated,
                               "[EEP-4A-TRUNCATED] %d bytes after the routing records: under the 16-byte header "
                               "and 8-byte TAIL", len - offset);
        col_set_str(pinfo->cinfo, COL_INFO, "Truncated message");
        return tvb_captured_length(tvb);
    }

    /* EEP header (6). */
    int hdr = offset;
    proto_item *hi = proto_tree_add_item(pt_tree, hf_pktway_header, tvb, hdr, VW_EEP_HDR_LEN, ENC_NA);
    proto_tree *ht = proto_item_add_subtree(hi, ett_pktway_header);
    guint32 version, dt, te, pt, word2, word3, pl, dl, sa;
    proto_item *ver_item = proto_tree_add_item_ret_uint(ht, hf_pktway_version, tvb, hdr, 1, ENC_NA, &version);
    proto_tree_add_item(ht, hf_pktway_priority, tvb, hdr, 1, ENC_NA);
    proto_item *dt_item = proto_tree_add_item_ret_uint(ht, hf_pktway_dt, tvb, hdr + 1, 3, ENC_BIG_ENDIAN, &dt);
    enum vw_eep_dt_kind kind = pktway_dt_kind(dt);
    proto_item_set_generated(proto_tree_add_uint(ht, hf_pktway_dt_kind, tvb, hdr + 1, 3, kind));
    if (kind == VW_EEP_DT_PHYSICAL)
        proto_item_set_generated(proto_tree_add_uint(ht, hf_pktway_dt_addr, tvb, hdr + 1, 3, dt & 0x7FFFFF));
    proto_tree_add_item_ret_uint(ht, hf_pktway_te, tvb, hdr + 4, 2, ENC_BIG_ENDIAN, &te);
    proto_item *pt_item = proto_tree_add_item_ret_uint(ht, hf_pktway_pt, tvb, hdr + 6, 2, ENC_BIG_ENDIAN, &pt);
    word2 = tvb_get_ntohl(tvb, hdr + 8);
    proto_tree_add_item(ht, hf_pktway_endian, tvb, hdr + 8, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(ht, hf_pktway_endian_e, tvb, hdr + 8, 4, ENC_BIG_ENDIAN);
    proto_item *pl_item = proto_tree_add_item_ret_uint(ht, hf_pktway_pl, tvb, hdr + 8, 4, ENC_BIG_ENDIAN, &pl);
    proto_item *dl_item = proto_tree_add_item_ret_uint(ht, hf_pktway_dl, tvb, hdr + 8, 4, ENC_BIG_ENDIAN, &dl);
    word3 = tvb_get_ntohl(tvb, hdr + 12);
    proto_tree_add_item(ht, hf_pktway_h, tvb, hdr + 12, 4, ENC_BIG_ENDIAN);
    proto_item *rz_item = proto_tree_add_item(ht, hf_pktway_rz, tvb, hdr + 12, 4, ENC_BIG_ENDIAN);
    proto_item *sa_item = proto_tree_add_item_ret_uint(ht, hf_pktway_sa, tvb, hdr + 12, 4, ENC_BIG_ENDIAN, &sa);
    (void)word2;
    gboolean has_oh = (word3 & 0x80000000u) != 0;

    if (version != 0)
        expert_add_info_format(pinfo, ver_item, &ei_pktway_version,
                               "[EEP-6A-VERSION] Version %u: end nodes drop messages whose version is not 0", version);
    if (kind == VW_EEP_DT_RESERVED)
        expert_add_info(pinfo, dt_item, &ei_pktway_dt_kind);
    else if (dt == VW_EEP_ADDR_UNDEFINED)
        expert_add_info(pinfo, dt_item, &ei_pktway_dt_undefined);
    else if (dt == VW_EEP_ADDR_HEY_YOU || dt == VW_EEP_ADDR_BROADCAST)
        expert_add_info_format(pinfo, dt_item, &ei_pktway_dt_local,
                               "[EEP-6C-LOCAL-ONLY] %s: delivered locally, never forwarded",
                               val_to_str_const(dt, pktway_reserved_addr_vals, "?"));
    if (word3 & 0x7F000000u)
        expert_add_info(pinfo, rz_item, &ei_pktway_rz);
    if (sa & 0x800000u)
        expert_add_info_format(pinfo, sa_item, &ei_pktway_sa,
                               "[EEP-6K-SA-PHYSICAL] Source address 0x%06x is a %s, not a physical address", sa,
                               val_to_str_const(pktway_dt_kind(sa), pktway_dt_kind_vals, "?"));
    if (dl == 0 && pl != 0)
        expert_add_info(pinfo, pl_item, &ei_pktway_pl_no_data);
    if (!try_val_to_str(pt, pktway_pt_vals))
        expert_add_info_format(pinfo, pt_item, &ei_pktway_pt_unknown,
                               "[EEP-6E-PT-KNOWN] Packet type 0x%04x is not in the project's enumeration (P8)", pt);
    else if (pt == PKTWAY_PT_ERR)
        col_append_fstr(pinfo->cinfo, COL_INFO, "ERR %s, ", val_to_str(te, pktway_err_te_vals, "TE 0x%04x"));
    col_append_fstr(pinfo->cinfo, COL_INFO, "%s 0x%06x -> %s 0x%06x, %s, DL %u",
                    "SA", sa, val_to_str_const(kind, pktway_dt_kind_vals, "?"), dt,
                    val_to_str(pt, pktway_pt_vals, "PT 0x%04x"), dl);
    offset = hdr + VW_EEP_HDR_LEN;

    /* Optional header fields (7), chained until C=1. */
    guint64 db_bytes = (guint64)dl * VW_EEP_WORD;
    gint db_and_tail = (gint)MIN(db_bytes + VW_EEP_TAIL_LEN, (guint64)G_MAXINT);
    if (has_oh) {
        gboolean last = FALSE;
        while (!last) {
            if (len - offset < 2 || offset + 2 > len - db_and_tail) {
                expert_add_info(pinfo, hi, &ei_pktway_oh_chain);
                break;
            }
            guint32 oh_type, oh_len;
            guint8 b0 = tvb_get_guint8(tvb, offset);
            oh_len = tvb_get_guint8(tvb, offset + 1);
            int field_len = (int)vw_eep_oh_len(oh_len);
            proto_item *oi = proto_tree_add_item(pt_tree, hf_pktway_oh, tvb, offset, MIN(field_len, len - offset), ENC_NA);
            proto_tree *ot = proto_item_add_subtree(oi, ett_pktway_oh);
            proto_tree_add_item(ot, hf_pktway_oh_mandatory, tvb, offset, 1, ENC_NA);
            proto_tree_add_item(ot, hf_pktway_oh_last, tvb, offset, 1, ENC_NA);
            proto_tree_add_item_ret_uint(ot, hf_pktway_oh_type, tvb, offset, 1, ENC_NA, &oh_type);
            proto_tree_add_item(ot, hf_pktway_oh_len, tvb, offset + 1, 1, ENC_NA);
            proto_item_append_text(oi, ", type %u, %u bytes%s", oh_type, oh_len, (b0 & VW_EEP_OH_T) ? ", mandatory" : "");
            if (field_len > len - offset) {
                expert_add_info_format(pinfo, oi, &ei_pktway_dl_fits,
                                       "[EEP-7-OH-FORMAT] Optional header field of %d bytes runs past the message", field_len);
                return tvb_captured_length(tvb);
            }
            if (oh_len)
                proto_tree_add_item(ot, hf_pktway_oh_value, tvb, offset + 2, oh_len, ENC_NA);
            pktway_add_padding(ot, tvb, pinfo, offset + 2 + (int)oh_len, field_len - 2 - (int)oh_len);
            if (b0 & VW_EEP_OH_T)
                expert_add_info_format(pinfo, oi, &ei_pktway_oh_mandatory,
                                       "[EEP-7-MANDATORY-UNKNOWN] Mandatory optional header type %u is unknown: "
                                       "the message should not be processed", oh_type);
            last = (b0 & VW_EEP_OH_C) != 0;
            offset += field_len;
        }
    }

    /* Data block (8): DL words, PL padding bytes at its end. */
    if (db_bytes + VW_EEP_TAIL_LEN > (guint64)(len - offset)) {
        expert_add_info_format(pinfo, dl_item, &ei_pktway_dl_fits,
                               "[EEP-6H-DL-FITS] Data block of %u words (%" G_GUINT64_FORMAT " bytes) and TAIL "
                               "run past the message (%d bytes left)", dl, db_bytes, len - offset);
        return tvb_captured_length(tvb);
    }
    int db_len = (int)db_bytes;
    int data_len = db_len - (int)pl;
    if (data_len < 0)
        data_len = 0;
    if (db_len > 0) {
        proto_tree_add_item(pt_tree, hf_pktway_data, tvb, offset, data_len, ENC_NA);
        proto_item_set_generated(proto_tree_add_uint(pt_tree, hf_pktway_data_len, tvb, offset, data_len, data_len));
        pktway_add_padding(pt_tree, tvb, pinfo, offset + data_len, db_len - data_len);
    }
    int db_offset = offset;
    offset += db_len;

    /* Trailer fields and TAIL (9, 10, P3). Without OH fields the TAIL follows
     * the data block and later bytes are link padding (P1). */
    gboolean udp = pinfo->ptype == PT_UDP; /* UDP carries no link padding */
    int tail_offset = (has_oh || udp) ? len - VW_EEP_TAIL_LEN : offset;
    if (tail_offset > offset) {
        proto_item *oi = proto_tree_add_item(pt_tree, hf_pktway_ot, tvb, offset, tail_offset - offset, ENC_NA);
        if (has_oh)
            expert_add_info_format(pinfo, oi, &ei_pktway_ot_unsized,
                                   "[EEP-9-OT-UNSIZED] %d bytes of optional trailer fields: their formats come from "
                                   "optional header types that are not known", tail_offset - offset);
        else
            expert_add_info_format(pinfo, oi, &ei_pktway_ot_needs_oh,
                                   "[EEP-9-OT-NEEDS-OH] %d bytes between the data block and the TAIL, but h=0",
                                   tail_offset - offset);
    }
    proto_tree *tail_tree = pt_tree;
    dissect_pktway_tail(tvb, pinfo, tail_tree, tail_offset);
    int msg_end = tail_offset + VW_EEP_TAIL_LEN;
    proto_item_set_len(root, msg_end);
    if (msg_end < len) {
        proto_item *pi = proto_tree_add_item(tree, hf_pktway_link_padding, tvb, msg_end, len - msg_end, ENC_NA);
        expert_add_info_format(pinfo, pi, &ei_pktway_link_padding,
                               "[EEP-4A-CARRIAGE] %d bytes after the TAIL: link padding, not part of the message",
                               len - msg_end);
    }
    if (msg_end % VW_EEP_WORD)
        expert_add_info_format(pinfo, root, &ei_pktway_words,
                               "[EEP-1B-8B-WORDS] Message of %d bytes is not whole 8-byte words", msg_end);

    /* Hand the data to the packet type's dissector (P8). */
    if (data_len > 0) {
        tvbuff_t *next = tvb_new_subset_length(tvb, db_offset, data_len);
        if (!dissector_try_uint_new(pktway_pt_table, pt, next, pinfo, tree, TRUE, NULL))
            call_data_dissector(next, pinfo, tree);
    }
    return msg_end;
}

void proto_register_pktway(void)
{
    static hf_register_info hf[] = {
        { &hf_pktway_l2rh, { "L2 routing header", "pktway.l2rh", FT_NONE, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_l2rh_version, { "Version", "pktway.l2rh.version", FT_UINT8, BASE_DEC, NULL, 0xC0, NULL, HFILL } },
        { &hf_pktway_l2rh_priority, { "Priority", "pktway.l2rh.priority", FT_UINT8, BASE_DEC, NULL, 0x3F, NULL, HFILL } },
        { &hf_pktway_l2rh_len, { "Routing bytes (L)", "pktway.l2rh.len", FT_UINT8, BASE_DEC, NULL, 0x3F, NULL, HFILL } },
        { &hf_pktway_l2rh_route, { "Route", "pktway.l2rh.route", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_symbol, { "Symbol", "pktway.symbol", FT_NONE, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_symbol_version, { "Version", "pktway.symbol.version", FT_UINT8, BASE_DEC, NULL, 0xC0, NULL, HFILL } },
        { &hf_pktway_symbol_priority, { "Priority", "pktway.symbol.priority", FT_UINT8, BASE_DEC, NULL, 0x3F, NULL, HFILL } },
        { &hf_pktway_symbol_type, { "Symbol type", "pktway.symbol.type", FT_UINT24, BASE_HEX, NULL, 0x0FFFFF, NULL, HFILL } },
        { &hf_pktway_symbol_len, { "Data bytes (L)", "pktway.symbol.len", FT_UINT8, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_symbol_data, { "Data", "pktway.symbol.data", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_padding, { "Padding", "pktway.padding", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_header, { "EEP header", "pktway.header", FT_NONE, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_version, { "Version", "pktway.version", FT_UINT8, BASE_DEC, NULL, 0xC0, NULL, HFILL } },
        { &hf_pktway_priority, { "Priority", "pktway.priority", FT_UINT8, BASE_DEC, NULL, 0x3F, NULL, HFILL } },
        { &hf_pktway_dt, { "Destination type", "pktway.dt", FT_UINT24, BASE_HEX, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_dt_kind, { "Destination kind", "pktway.dt.kind", FT_UINT8, BASE_DEC, VALS(pktway_dt_kind_vals), 0x0, NULL, HFILL } },
        { &hf_pktway_dt_addr, { "Destination address", "pktway.dt.addr", FT_UINT24, BASE_HEX, VALS(pktway_reserved_addr_vals), 0x0, NULL, HFILL } },
        { &hf_pktway_te, { "Type extension", "pktway.te", FT_UINT16, BASE_HEX, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_pt, { "Packet type", "pktway.pt", FT_UINT16, BASE_HEX, VALS(pktway_pt_vals), 0x0, NULL, HFILL } },
        { &hf_pktway_endian, { "Endianness", "pktway.endian", FT_UINT32, BASE_HEX, NULL, 0xF0000000, NULL, HFILL } },
        { &hf_pktway_endian_e, { "Data block byte order (e)", "pktway.endian.e", FT_BOOLEAN, 32, TFS(&tfs_little_big), 0x80000000, NULL, HFILL } },
        { &hf_pktway_pl, { "Padding length (PL)", "pktway.pl", FT_UINT32, BASE_DEC, NULL, 0x0E000000, NULL, HFILL } },
        { &hf_pktway_dl, { "Data length (DL, 8-byte words)", "pktway.dl", FT_UINT32, BASE_DEC, NULL, 0x01FFFFFF, NULL, HFILL } },
        { &hf_pktway_h, { "Optional header fields (h)", "pktway.h", FT_BOOLEAN, 32, NULL, 0x80000000, NULL, HFILL } },
        { &hf_pktway_rz, { "Reserved (RZ)", "pktway.rz", FT_UINT32, BASE_HEX, NULL, 0x7F000000, NULL, HFILL } },
        { &hf_pktway_sa, { "Source address", "pktway.sa", FT_UINT32, BASE_HEX, VALS(pktway_reserved_addr_vals), 0x00FFFFFF, NULL, HFILL } },
        { &hf_pktway_oh, { "Optional header field", "pktway.oh", FT_NONE, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_oh_type, { "Type", "pktway.oh.type", FT_UINT8, BASE_DEC, NULL, VW_EEP_OH_TYPE_MASK, NULL, HFILL } },
        { &hf_pktway_oh_mandatory, { "Processing (T)", "pktway.oh.mandatory", FT_BOOLEAN, 8, TFS(&tfs_mandatory), VW_EEP_OH_T, NULL, HFILL } },
        { &hf_pktway_oh_last, { "Last (C)", "pktway.oh.last", FT_BOOLEAN, 8, TFS(&tfs_last), VW_EEP_OH_C, NULL, HFILL } },
        { &hf_pktway_oh_len, { "Length", "pktway.oh.len", FT_UINT8, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_oh_value, { "Value", "pktway.oh.value", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_data, { "Data", "pktway.data", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_data_len, { "Data bytes (8*DL-PL)", "pktway.data.len", FT_UINT32, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_ot, { "Optional trailer fields", "pktway.ot", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_ei, { "Error indication (TAIL)", "pktway.ei", FT_UINT64, BASE_HEX, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_ei_hop, { "Error flagged, router shifts ago", "pktway.ei.hop", FT_UINT32, BASE_DEC, NULL, 0x0, NULL, HFILL } },
        { &hf_pktway_link_padding, { "Link padding", "pktway.link_padding", FT_BYTES, BASE_NONE, NULL, 0x0, NULL, HFILL } },
    };
    static gint *ett[] = { &ett_pktway, &ett_pktway_route, &ett_pktway_header, &ett_pktway_oh, &ett_pktway_tail };
    static ei_register_info ei[] = {
        { &ei_pktway_version, { "pktway.version.nonzero", PI_PROTOCOL, PI_WARN,
            "[EEP-6A-VERSION] Version not 0", EXPFILL } },
        { &ei_pktway_rz, { "pktway.rz.nonzero", PI_PROTOCOL, PI_WARN,
            "[EEP-6J-RZ-ZERO] Reserved field RZ not zero", EXPFILL } },
        { &ei_pktway_sa, { "pktway.sa.not_physical", PI_PROTOCOL, PI_ERROR,
            "[EEP-6K-SA-PHYSICAL] Source address is not a physical address", EXPFILL } },
        { &ei_pktway_dt_undefined, { "pktway.dt.undefined", PI_PROTOCOL, PI_ERROR,
            "[EEP-6C-DT-UNDEFINED] Destination 0x000000 is the undefined address, illegal as a destination", EXPFILL } },
        { &ei_pktway_dt_kind, { "pktway.dt.reserved", PI_PROTOCOL, PI_WARN,
            "[EEP-6C-DT-KIND] Destination type 110x is reserved: dropped", EXPFILL } },
        { &ei_pktway_dt_local, { "pktway.dt.local_only", PI_PROTOCOL, PI_CHAT,
            "[EEP-6C-LOCAL-ONLY] Reserved address: delivered locally, never forwarded", EXPFILL } },
        { &ei_pktway_pl_no_data, { "pktway.pl.no_data", PI_PROTOCOL, PI_ERROR,
            "[EEP-6G-PL-ZERO-NO-DATA] PL must be 0 when DL is 0", EXPFILL } },
        { &ei_pktway_dl_fits, { "pktway.length.past_end", PI_MALFORMED, PI_ERROR,
            "[EEP-6H-DL-FITS] Lengths run past the message", EXPFILL } },
        { &ei_pktway_l2rh_len, { "pktway.l2rh.past_end", PI_MALFORMED, PI_ERROR,
            "[EEP-5A-L2RH-LEN] L2RH runs past the message", EXPFILL } },
        { &ei_pktway_symbol_len, { "pktway.symbol.past_end", PI_MALFORMED, PI_ERROR,
            "[EEP-5B-SYMBOL-LEN] Symbol runs past the message", EXPFILL } },
        { &ei_pktway_symbol_priority, { "pktway.symbol.priority_nonzero", PI_PROTOCOL, PI_NOTE,
            "[EEP-5B-SYMBOL-PRIORITY] Symbol priority not 0", EXPFILL } },
        { &ei_pktway_routes_left, { "pktway.routes_left", PI_SEQUENCE, PI_CHAT,
            "[EEP-4B-ROUTES-CONSUMED] Routing records not yet consumed", EXPFILL } },
        { &ei_pktway_truncated, { "pktway.truncated", PI_MALFORMED, PI_ERROR,
            "[EEP-4A-TRUNCATED] Message shorter than the EEP header and TAIL", EXPFILL } },
        { &ei_pktway_oh_mandatory, { "pktway.oh.mandatory_unknown", PI_PROTOCOL, PI_WARN,
            "[EEP-7-MANDATORY-UNKNOWN] Mandatory optional header type unknown", EXPFILL } },
        { &ei_pktway_oh_chain, { "pktway.oh.unterminated", PI_MALFORMED, PI_ERROR,
            "[EEP-7-OH-FORMAT] Optional header fields end without a field marked last (C=1)", EXPFILL } },
        { &ei_pktway_ot_needs_oh, { "pktway.ot.without_oh", PI_PROTOCOL, PI_ERROR,
            "[EEP-9-OT-NEEDS-OH] Trailer bytes without optional header fields", EXPFILL } },
        { &ei_pktway_ot_unsized, { "pktway.ot.unsized", PI_UNDECODED, PI_NOTE,
            "[EEP-9-OT-UNSIZED] Optional trailer fields of unknown format", EXPFILL } },
        { &ei_pktway_ei_error, { "pktway.ei.error", PI_RESPONSE_CODE, PI_WARN,
            "[EEP-10-EI-ERROR] Error indicated in the TAIL", EXPFILL } },
        { &ei_pktway_pt_unknown, { "pktway.pt.unknown", PI_UNDECODED, PI_CHAT,
            "[EEP-6E-PT-KNOWN] Packet type not in the enumeration", EXPFILL } },
        { &ei_pktway_padding, { "pktway.padding.nonzero", PI_PROTOCOL, PI_CHAT,
            "[EEP-3-PADDING-UNCHECKED] Padding bytes not zero (discarded without checking)", EXPFILL } },
        { &ei_pktway_link_padding, { "pktway.link_padding", PI_PROTOCOL, PI_CHAT,
            "[EEP-4A-CARRIAGE] Bytes after the TAIL: link padding", EXPFILL } },
        { &ei_pktway_words, { "pktway.not_words", PI_MALFORMED, PI_WARN,
            "[EEP-1B-8B-WORDS] Message is not whole 8-byte words", EXPFILL } },
    };

    proto_pktway = proto_register_protocol("PacketWay End-to-End Protocol", "PKTWAY", "pktway");
    proto_register_field_array(proto_pktway, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    expert_module_t *expert_pktway = expert_register_protocol(proto_pktway);
    expert_register_field_array(expert_pktway, ei, array_length(ei));
    pktway_pt_table = register_dissector_table("pktway.pt", "PacketWay packet type", proto_pktway,
                                               FT_UINT16, BASE_HEX);
    pktway_handle = register_dissector("pktway", dissect_pktway, proto_pktway);
}

void proto_reg_handoff_pktway(void)
{
    dissector_add_uint_with_preference("ethertype", VW_EEP_ETHERTYPE, pktway_handle);
    dissector_add_uint_with_preference("udp.port", VW_EEP_UDP_PORT, pktway_handle);
    dissector_handle_t ip_handle = find_dissector("ip");
    dissector_handle_t ipv6_handle = find_dissector("ipv6");
    if (ip_handle)
        dissector_add_uint("pktway.pt", 0x0800, ip_handle);
    if (ipv6_handle)
        dissector_add_uint("pktway.pt", 0x86DD, ipv6_handle);
}
