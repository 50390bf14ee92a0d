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
 * Every verdict comes from the wire library: vw_eep_decode_on checks the
 * message for its carrier and vw_eep_notes adds what a display notes; the
 * findings become expert items whose text starts with the requirement ID
 * (wire/catalog/eep.def), so an ID means the same here, in lint and in
 * conformance reports. Records and OH fields are walked with the wire
 * library too; this file only builds the tree and hands the data on.
 */
#include <string.h>
#include <epan/packet.h>
#include <epan/exceptions.h>
#include <epan/decode_as.h>
#include <epan/expert.h>
#include <epan/prefs.h>
#include <epan/tap.h>
#include <epan/proto_data.h>
#include <vitcp/pktway.h>
#include "plugin_protos.h"
#include "info_column.h"
#include "rule_experts.h"
#include "vitcp_dissector.h"


static int proto_pktway = -1;
static int pktway_tap = -1;
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
static int hf_pktway_first_hop = -1;
static int hf_pktway_forwarded_in = -1;

static gint ett_pktway = -1;
static gint ett_pktway_route = -1;
static gint ett_pktway_header = -1;
static gint ett_pktway_word = -1;
static gint ett_pktway_oh = -1;
static gint ett_pktway_tail = -1;

static rule_experts_t pktway_rules;

/* Both hops of a message through a router (P11): the wire library pairs a
 * router's copy with the first hop in capture order (first pass); the
 * verdict is kept per frame so later passes show it too. */
typedef struct {
    guint32 first_hop;
    rule_findings_t findings;
} pktway_hop_t;
static struct vw_eep_pairer *pktway_pairer;
static wmem_map_t *pktway_hops;     /* frame number -> pktway_hop_t */
static wmem_map_t *pktway_forwards; /* first hop's frame number -> the router's copy's (the pair the other way) */
static guint32 pktway_last_offered;
/* P31: router addresses (MAC, IPv4, IPv6; commas or spaces) where pairing
 * a router's hops by content is ambiguous, as lint's --eep-router. */
static const char *pktway_router_addresses = "";

static void pktway_init(void)
{
    pktway_pairer = vw_eep_pairer_new();
    pktway_last_offered = 0;
    /* an address that is none stops the list there (the ones before it count) */
    if (pktway_pairer)
        vw_eep_pairer_add_routers(pktway_pairer, pktway_router_addresses, NULL, 0);
}

static void pktway_cleanup(void)
{
    vw_eep_pairer_free(pktway_pairer);
    pktway_pairer = NULL;
}

/* The carrier's addresses of this frame: IP for UDP, else the MACs. */
static void pktway_hop_of(packet_info *pinfo, struct vw_eep_hop *hop)
{
    const address *src = pinfo->ptype == PT_UDP ? &pinfo->net_src : &pinfo->dl_src;
    const address *dst = pinfo->ptype == PT_UDP ? &pinfo->net_dst : &pinfo->dl_dst;
    if (src->type != dst->type || src->len != dst->len ||
        (src->type != AT_ETHER && src->type != AT_IPv4 && src->type != AT_IPv6))
        vw_eep_hop_set(hop, NULL, NULL, 0);
    else
        vw_eep_hop_set(hop, (const uint8_t *)src->data, (const uint8_t *)dst->data, (size_t)src->len);
}

/* First pass: offer the message to the pairer; every pass: the link to the
 * first hop and the router rules, under the IDs lint gives them. */
static void pktway_router_copy(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, const guint8 *raw,
                               enum vw_eep_carrier carrier, const struct vw_eep_msg *m)
{
    if (!pinfo->fd->visited && pktway_pairer && pktway_last_offered != pinfo->num) {
        pktway_last_offered = pinfo->num;
        struct vw_eep_hop hop;
        pktway_hop_of(pinfo, &hop);
        vw_eep_hop_set_time(&hop, (guint64)pinfo->abs_ts.secs * 1000000u + (guint64)(pinfo->abs_ts.nsecs / 1000));
        struct vw_findings fs;
        vw_findings_clear(&fs);
        uint64_t first = 0;
        if (vw_eep_pairer_add(pktway_pairer, pinfo->num, &hop, carrier, raw, m, &first, &fs)) {
            pktway_hop_t *h = wmem_new0(wmem_file_scope(), pktway_hop_t);
            h->first_hop = (guint32)first;
            rule_findings_keep(&h->findings, &fs);
            wmem_map_insert(pktway_hops, GUINT_TO_POINTER(pinfo->num), h);
            if (!wmem_map_contains(pktway_forwards, GUINT_TO_POINTER(h->first_hop)))
                wmem_map_insert(pktway_forwards, GUINT_TO_POINTER(h->first_hop), GUINT_TO_POINTER(pinfo->num));
        }
    }
    /* The pair the other way: known once the copy was seen (tshark -2, the GUI). */
    guint32 copy = GPOINTER_TO_UINT(wmem_map_lookup(pktway_forwards, GUINT_TO_POINTER(pinfo->num)));
    if (copy) {
        proto_item *ci = proto_tree_add_uint(tree, hf_pktway_forwarded_in, tvb, 0, 0, copy);
        proto_item_set_generated(ci);
    }
    pktway_hop_t *h = (pktway_hop_t *)wmem_map_lookup(pktway_hops, GUINT_TO_POINTER(pinfo->num));
    if (!h)
        return;
    proto_item *fi = proto_tree_add_uint(tree, hf_pktway_first_hop, tvb, 0, 0, h->first_hop);
    proto_item_set_generated(fi);
    rule_experts_add_all(&pktway_rules, tree, pinfo, tvb, h->findings.items, h->findings.count);
    col_append_fstr(pinfo->cinfo, COL_INFO, " [router copy of %u]", h->first_hop);
}

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
static const true_false_string tfs_little_big = { "Little-Endian", "Big-Endian" };
static const true_false_string tfs_mandatory = { "Mandatory (T=1)", "Optional (T=0)" };
static const true_false_string tfs_last = { "Last optional header field (C=1)", "More follow (C=0)" };

/* Padding is discarded unchecked (section 3): shown; the wire library notes non-zero bytes. */
static void pktway_add_padding(proto_tree *tree, tvbuff_t *tvb, int offset, int len)
{
    if (len > 0)
        proto_tree_add_item(tree, hf_pktway_padding, tvb, offset, len, ENC_NA);
}

/* Leading L2RHs and symbols (5, P2, P4), walked with the wire library;
 * a record that runs past the message is shown as far as it goes. */
static void dissect_pktway_routes(tvbuff_t *tvb, proto_tree *tree, const guint8 *raw, guint32 len)
{
    size_t pos = 0;
    struct vw_eep_route r;
    int more;
    while ((more = vw_eep_route_next(raw, len, &pos, &r)) != 0) {
        if (more < 0) {
            /* r describes the record that does not fit (a symbol under 5 bytes: offset only). */
            size_t at = pos;
            enum vw_eep_route_kind kind = VW_EEP_ROUTE_L2RH;
            vw_eep_record_kind(raw + at, len - at, &kind);
            proto_tree_add_item(tree, kind == VW_EEP_ROUTE_L2RH ? hf_pktway_l2rh : hf_pktway_symbol, tvb, (int)at,
                                (int)(len - at), ENC_NA);
            return;
        }
        int off = (int)r.offset, rec_len = (int)r.record_len;
        if (r.kind == VW_EEP_ROUTE_L2RH) {
            proto_item *ri = proto_tree_add_item(tree, hf_pktway_l2rh, tvb, off, rec_len, ENC_NA);
            proto_tree *rt = proto_item_add_subtree(ri, ett_pktway_route);
            proto_tree_add_item(rt, hf_pktway_l2rh_version, tvb, off, 1, ENC_NA);
            proto_tree_add_item(rt, hf_pktway_l2rh_priority, tvb, off, 1, ENC_NA);
            proto_tree_add_item(rt, hf_pktway_l2rh_len, tvb, off + 1, 1, ENC_NA);
            if (r.data_len)
                proto_tree_add_item(rt, hf_pktway_l2rh_route, tvb, off + 2, r.data_len, ENC_NA);
            pktway_add_padding(rt, tvb, off + 2 + r.data_len, rec_len - 2 - r.data_len);
            proto_item_append_text(ri, ", %u routing bytes", r.data_len);
        } else {
            proto_item *ri = proto_tree_add_item(tree, hf_pktway_symbol, tvb, off, rec_len, ENC_NA);
            proto_tree *rt = proto_item_add_subtree(ri, ett_pktway_route);
            proto_tree_add_item(rt, hf_pktway_symbol_version, tvb, off, 1, ENC_NA);
            proto_tree_add_item(rt, hf_pktway_symbol_priority, tvb, off, 1, ENC_NA);
            proto_tree_add_item(rt, hf_pktway_symbol_type, tvb, off + 1, 3, ENC_BIG_ENDIAN);
            proto_tree_add_item(rt, hf_pktway_symbol_len, tvb, off + 4, 1, ENC_NA);
            if (r.data_len)
                proto_tree_add_item(rt, hf_pktway_symbol_data, tvb, off + 5, r.data_len, ENC_NA);
            pktway_add_padding(rt, tvb, off + 5 + r.data_len, rec_len - 5 - r.data_len);
            proto_item_append_text(ri, ", type 0x%05x, %u data bytes", r.symbol_type, r.data_len);
        }
    }
}

/* Address fields: the reserved name before the value, else the value. */
static void pktway_fmt_addr(gchar *result, guint32 addr)
{
    const char *name = try_val_to_str(addr, pktway_reserved_addr_vals);
    if (name)
        g_snprintf(result, ITEM_LABEL_LENGTH, "%s (0x%06x)", name, addr);
    else
        g_snprintf(result, ITEM_LABEL_LENGTH, "0x%06x", addr);
}

/* A 23-bit physical address by its reserved name (Hey-You!, Broadcast,
 * Undefined) or in hex. */
static const char *pktway_addr_str(packet_info *pinfo, guint32 addr)
{
    const char *name = try_val_to_str(addr, pktway_reserved_addr_vals);
    return name ? name : wmem_strdup_printf(pinfo->pool, "0x%06x", addr);
}

/* Destination-Type by its kind: a physical address as above, else the
 * kind and its 20-bit value. */
static const char *pktway_dt_str(packet_info *pinfo, guint32 dt)
{
    enum vw_eep_dt_kind kind = vw_eep_dt_kind(dt);
    switch (kind) {
    case VW_EEP_DT_PHYSICAL:
        return pktway_addr_str(pinfo, vw_eep_dt_value(dt));
    case VW_EEP_DT_LOGICAL:
        return wmem_strdup_printf(pinfo->pool, "Logical:0x%05x", vw_eep_dt_value(dt));
    case VW_EEP_DT_SYMBOL:
        return wmem_strdup_printf(pinfo->pool, "Symbol:0x%05x", vw_eep_dt_value(dt));
    case VW_EEP_DT_L2RH:
        return "L2RH";
    default:
        return wmem_strdup_printf(pinfo->pool, "Reserved:0x%06x", dt);
    }
}

static void dissect_pktway_header(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, const struct vw_eep_msg *m)
{
    int hdr = (int)m->hdr_offset;
    const struct vw_eep_hdr *h = &m->hdr;
    proto_item *hi = proto_tree_add_item(tree, hf_pktway_header, tvb, hdr, VW_EEP_HDR_LEN, ENC_NA);
    proto_tree *ht = proto_item_add_subtree(hi, ett_pktway_header);
    /* One subtree per 32-bit word, its bit fields under it (as Wireshark
     * shows packed headers). */
    proto_tree *w0 = proto_tree_add_subtree_format(ht, tvb, hdr, 4, ett_pktway_word, NULL,
                                                   "Word 0: 0x%08x (Version, Priority, Destination-Type)",
                                                   tvb_get_ntohl(tvb, hdr));
    proto_tree_add_item(w0, hf_pktway_version, tvb, hdr, 1, ENC_NA);
    proto_tree_add_item(w0, hf_pktway_priority, tvb, hdr, 1, ENC_NA);
    proto_tree_add_item(w0, hf_pktway_dt, tvb, hdr + 1, 3, ENC_BIG_ENDIAN);
    enum vw_eep_dt_kind kind = vw_eep_dt_kind(h->dt);
    proto_item_set_generated(proto_tree_add_uint(w0, hf_pktway_dt_kind, tvb, hdr + 1, 3, kind));
    if (kind == VW_EEP_DT_PHYSICAL)
        proto_item_set_generated(proto_tree_add_uint(w0, hf_pktway_dt_addr, tvb, hdr + 1, 3, vw_eep_dt_value(h->dt)));
    proto_tree *w1 = proto_tree_add_subtree_format(ht, tvb, hdr + 4, 4, ett_pktway_word, NULL,
                                                   "Word 1: 0x%08x (Type extension, Packet type)",
                                                   tvb_get_ntohl(tvb, hdr + 4));
    proto_tree_add_item(w1, hf_pktway_te, tvb, hdr + 4, 2, ENC_BIG_ENDIAN);
    proto_tree_add_item(w1, hf_pktway_pt, tvb, hdr + 6, 2, ENC_BIG_ENDIAN);
    proto_tree *w2 = proto_tree_add_subtree_format(ht, tvb, hdr + 8, 4, ett_pktway_word, NULL,
                                                   "Word 2: 0x%08x (Byte order, PL, DL)", tvb_get_ntohl(tvb, hdr + 8));
    proto_tree_add_item(w2, hf_pktway_endian, tvb, hdr + 8, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(w2, hf_pktway_endian_e, tvb, hdr + 8, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(w2, hf_pktway_pl, tvb, hdr + 8, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(w2, hf_pktway_dl, tvb, hdr + 8, 4, ENC_BIG_ENDIAN);
    proto_tree *w3 = proto_tree_add_subtree_format(ht, tvb, hdr + 12, 4, ett_pktway_word, NULL,
                                                   "Word 3: 0x%08x (h, RZ, Source address)", tvb_get_ntohl(tvb, hdr + 12));
    proto_tree_add_item(w3, hf_pktway_h, tvb, hdr + 12, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(w3, hf_pktway_rz, tvb, hdr + 12, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(w3, hf_pktway_sa, tvb, hdr + 12, 4, ENC_BIG_ENDIAN);
    proto_item_append_text(hi, ", Src: %s, Dst: %s", pktway_addr_str(pinfo, h->sa), pktway_dt_str(pinfo, h->dt));

    /* The plugin's Info style: type, Key=Value pairs, [flags], [findings]. */
    const char *te_name = vw_eep_te_name(NULL, h->pt, h->te);
    const char *sa = pktway_addr_str(pinfo, h->sa);
    const char *dt = pktway_dt_str(pinfo, h->dt);
    if (te_name)
        col_append_fstr(pinfo->cinfo, COL_INFO, "ERR %s", te_name);
    else
        col_append_str(pinfo->cinfo, COL_INFO, "Message");
    col_append_fstr(pinfo->cinfo, COL_INFO, " SA=%s DT=%s PT=%s DL=%u", sa, dt,
                    val_to_str(h->pt, pktway_pt_vals, "0x%04x"), h->dl);
    proto_item_append_text(proto_tree_get_parent(tree), ", Src: %s, Dst: %s, %s, %u data words", sa, dt,
                           val_to_str(h->pt, pktway_pt_vals, "Packet type 0x%04x"), h->dl);
}

/* Optional header fields (7) as the wire library walks them, up to the
 * one with C=1 or the first that does not fit. */
static void dissect_pktway_oh(tvbuff_t *tvb, proto_tree *tree, const guint8 *raw, guint32 len,
                              const struct vw_eep_msg *m)
{
    size_t base = m->hdr_offset + VW_EEP_HDR_LEN;
    size_t area_len = len - VW_EEP_TAIL_LEN - base;
    size_t pos = 0;
    struct vw_eep_oh oh;
    int more;
    while ((more = vw_eep_oh_next(raw + base, area_len, &pos, &oh)) == 1) {
        int off = (int)(base + oh.offset), field_len = (int)oh.field_len;
        proto_item *oi = proto_tree_add_item(tree, hf_pktway_oh, tvb, off, field_len, ENC_NA);
        proto_tree *ot = proto_item_add_subtree(oi, ett_pktway_oh);
        proto_tree_add_item(ot, hf_pktway_oh_mandatory, tvb, off, 1, ENC_NA);
        proto_tree_add_item(ot, hf_pktway_oh_last, tvb, off, 1, ENC_NA);
        proto_tree_add_item(ot, hf_pktway_oh_type, tvb, off, 1, ENC_NA);
        proto_tree_add_item(ot, hf_pktway_oh_len, tvb, off + 1, 1, ENC_NA);
        if (oh.data_len)
            proto_tree_add_item(ot, hf_pktway_oh_value, tvb, off + 2, oh.data_len, ENC_NA);
        pktway_add_padding(ot, tvb, off + 2 + oh.data_len, field_len - 2 - oh.data_len);
        proto_item_append_text(oi, ", type %u, %u bytes%s", oh.type, oh.data_len, oh.mandatory ? ", mandatory" : "");
        if (oh.last)
            return;
    }
    if (more < 0 && pos < area_len)
        proto_tree_add_item(tree, hf_pktway_oh, tvb, (int)(base + pos), (int)(area_len - pos), ENC_NA);
}

/* The TAIL's error indication (10, P6): bit k set = flagged k router shifts
 * before the last router. */
static void dissect_pktway_tail(tvbuff_t *tvb, proto_tree *tree, int offset, guint64 ei)
{
    proto_item *ti = proto_tree_add_item(tree, hf_pktway_ei, tvb, offset, VW_EEP_TAIL_LEN, ENC_BIG_ENDIAN);
    if (ei == 0)
        return;
    proto_tree *tt = proto_item_add_subtree(ti, ett_pktway_tail);
    for (guint bit = 0; bit < 64; bit++)
        if (ei & ((guint64)1 << bit))
            proto_item_set_generated(proto_tree_add_uint(tt, hf_pktway_ei_hop, tvb, offset, VW_EEP_TAIL_LEN, bit));
}

/* The data block's dissector (by packet type, "pktway.pt", Decode As)
 * writes after the EEP summary (" | " and a fence) and cannot replace the
 * Protocol column: the packet list shows the EEP row whatever the data
 * block holds. Without one, the block is shown as data. */
static void pktway_hand_off(tvbuff_t *next, packet_info *pinfo, proto_tree *tree, guint16 pt)
{
    p_add_proto_data(pinfo->pool, pinfo, proto_pktway, 0, GUINT_TO_POINTER((guint)pt + 1));
    dissector_handle_t h = dissector_get_uint_handle(pktway_pt_table, pt);
    if (!h) {
        call_data_dissector(next, pinfo, tree);
        return;
    }
    info_handoff_begin(pinfo);
    col_set_writable(pinfo->cinfo, COL_PROTOCOL, FALSE);
    TRY {
        call_dissector(h, next, pinfo, tree);
    }
    FINALLY {
        col_set_writable(pinfo->cinfo, COL_PROTOCOL, TRUE);
    }
    ENDTRY;
    info_handoff_end(pinfo);
}

/* Decode As for "pktway.pt": the packet type of the selected message. */
static void pktway_da_pt_label(packet_info *pinfo _U_, gchar *result)
{
    g_snprintf(result, MAX_DECODE_AS_PROMPT_LEN, "Packet type");
}
static gpointer pktway_da_pt(packet_info *pinfo)
{
    guint v = GPOINTER_TO_UINT(p_get_proto_data(pinfo->pool, pinfo, proto_pktway, 0));
    return GUINT_TO_POINTER(v ? v - 1 : 0);
}
static build_valid_func pktway_da_build[] = { pktway_da_pt };
static decode_as_value_t pktway_da_values[] = { { pktway_da_pt_label, 1, pktway_da_build } };
static decode_as_t pktway_da = { "pktway", "pktway.pt", 1, 0, pktway_da_values, NULL, NULL,
                                 decode_as_default_populate_list, decode_as_default_reset,
                                 decode_as_default_change, NULL };

static int dissect_pktway(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    guint32 len = tvb_reported_length(tvb);
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "PKTWAY");
    col_clear(pinfo->cinfo, COL_INFO);
    proto_item *root = proto_tree_add_item(tree, proto_pktway, tvb, 0, -1, ENC_NA);
    proto_tree *pt_tree = proto_item_add_subtree(root, ett_pktway);

    /* Throws (packet size limited) when the capture cut the message short. */
    const guint8 *raw = tvb_get_ptr(tvb, 0, len);
    /* Wireshark-only context: the carrier. UDP carries no link padding. */
    enum vw_eep_carrier carrier = pinfo->ptype == PT_UDP ? VW_EEP_CARRIER_DATAGRAM : VW_EEP_CARRIER_LINK;
    struct vw_eep_msg m;
    memset(&m, 0, sizeof m);
    struct vw_findings fs;
    vw_findings_clear(&fs);
    enum vw_req err = vw_eep_decode_on(raw, len, carrier, &m, &fs);
    if (err == VW_REQ_NONE)
        vw_eep_notes(raw, &m, NULL, &fs);

    if (err == VW_REQ_EEP_5A_L2RH_LEN || err == VW_REQ_EEP_5B_SYMBOL_LEN) {
        /* The records before the one whose framing failed; that one and
         * everything after it as one item, not read as fields (P12). */
        dissect_pktway_routes(tvb, pt_tree, raw, (guint32)m.routes_len);
        enum vw_eep_route_kind kind = VW_EEP_ROUTE_L2RH;
        vw_eep_record_kind(raw + m.routes_len, len - m.routes_len, &kind);
        proto_item *bi = proto_tree_add_item(pt_tree, kind == VW_EEP_ROUTE_L2RH ? hf_pktway_l2rh : hf_pktway_symbol,
                                             tvb, (int)m.routes_len, (int)(len - m.routes_len), ENC_NA);
        proto_item_append_text(bi, " (framing failed: the bytes from here on are not read)");
    } else {
        dissect_pktway_routes(tvb, pt_tree, raw, len);
    }
    gboolean have_hdr = err == VW_REQ_NONE || err == VW_REQ_EEP_7_OH_FORMAT || err == VW_REQ_EEP_6H_DL_FITS;
    if (have_hdr) {
        dissect_pktway_header(tvb, pinfo, pt_tree, &m);
        if (m.hdr.h)
            dissect_pktway_oh(tvb, pt_tree, raw, len, &m);
    }
    pktway_tap_info_t *tap = wmem_new0(pinfo->pool, pktway_tap_info_t);
    tap->decoded = have_hdr;
    tap->sa = m.hdr.sa;
    tap->dt = m.hdr.dt;
    tap->pt = m.hdr.pt;
    tap->len = err == VW_REQ_NONE ? (guint32)m.msg_len : len;
    tap->ei = err == VW_REQ_NONE && m.ei != 0;
    for (guint i = 0; i < fs.count; i++)
        tap->error |= fs.item[i].severity == VW_SEV_ERROR;
    tap_queue_packet(pktway_tap, pinfo, tap);
    if (err != VW_REQ_NONE) {
        rule_experts_add_all(&pktway_rules, pt_tree, pinfo, tvb, fs.item, fs.count);
        if (!have_hdr)
            col_append_str(pinfo->cinfo, COL_INFO, "Message");
        col_append_fstr(pinfo->cinfo, COL_INFO, " [%s]", vw_req_id(err));
        return tvb_captured_length(tvb);
    }

    /* Data block (8): DL words, PL padding bytes at its end. */
    if (m.db_len > 0) {
        proto_tree_add_item(pt_tree, hf_pktway_data, tvb, (int)m.db_offset, (int)m.data_len, ENC_NA);
        proto_item_set_generated(proto_tree_add_uint(pt_tree, hf_pktway_data_len, tvb, (int)m.db_offset,
                                                     (int)m.data_len, (guint32)m.data_len));
        pktway_add_padding(pt_tree, tvb, (int)(m.db_offset + m.data_len), (int)(m.db_len - m.data_len));
    }
    if (m.ot_len)
        proto_tree_add_item(pt_tree, hf_pktway_ot, tvb, (int)(m.tail_offset - m.ot_len), (int)m.ot_len, ENC_NA);
    dissect_pktway_tail(tvb, pt_tree, (int)m.tail_offset, m.ei);
    if (m.ei)
        col_append_str(pinfo->cinfo, COL_INFO, " [EI]");
    proto_item_set_len(root, (gint)m.msg_len);
    if (m.link_padding)
        proto_tree_add_item(tree, hf_pktway_link_padding, tvb, (int)m.msg_len, (int)m.link_padding, ENC_NA);
    rule_experts_add_all(&pktway_rules, pt_tree, pinfo, tvb, fs.item, fs.count);
    pktway_router_copy(tvb, pinfo, pt_tree, raw, carrier, &m);

    /* Hand the data to the packet type's dissector (P8). */
    if (m.data_len > 0)
        pktway_hand_off(tvb_new_subset_length(tvb, (int)m.db_offset, (int)m.data_len), pinfo, tree, m.hdr.pt);
    return (int)m.msg_len;
}

/* Heuristic for EEP over UDP on ports other than 5998: the datagram is
 * exactly one message that decodes without error (version 0, lengths in
 * 8-byte words adding up to the datagram, the TAIL last) with zero RZ. */
static gboolean dissect_pktway_heur_udp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    guint len = tvb_captured_length(tvb);
    if (len < VW_EEP_HDR_LEN + VW_EEP_TAIL_LEN || len % 8 != 0 || len != tvb_reported_length(tvb))
        return FALSE;
    struct vw_eep_msg m;
    memset(&m, 0, sizeof m);
    if (vw_eep_decode_on(tvb_get_ptr(tvb, 0, len), len, VW_EEP_CARRIER_DATAGRAM, &m, NULL) != VW_REQ_NONE ||
        m.hdr.version != 0 || m.hdr.rz != 0 || m.msg_len != len)
        return FALSE;
    dissect_pktway(tvb, pinfo, tree, data);
    return TRUE;
}

void proto_register_pktway(void)
{
    static hf_register_info hf[] = {
        { &hf_pktway_l2rh, { "L2 routing header", "pktway.l2rh", FT_NONE, BASE_NONE, NULL, 0x0, "Level-2 routing header consumed by the routers on the way", HFILL } },
        { &hf_pktway_l2rh_version, { "Version", "pktway.l2rh.version", FT_UINT8, BASE_DEC, NULL, 0xC0, "Routing header version", HFILL } },
        { &hf_pktway_l2rh_priority, { "Priority", "pktway.l2rh.priority", FT_UINT8, BASE_DEC, NULL, 0x3F, "Routing priority", HFILL } },
        { &hf_pktway_l2rh_len, { "Routing bytes (L)", "pktway.l2rh.len", FT_UINT8, BASE_DEC, NULL, 0x3F, "Routing bytes that follow (the record is padded to whole 8-byte words)", HFILL } },
        { &hf_pktway_l2rh_route, { "Route", "pktway.l2rh.route", FT_BYTES, BASE_NONE, NULL, 0x0, "Route bytes, one per hop", HFILL } },
        { &hf_pktway_symbol, { "Symbol", "pktway.symbol", FT_NONE, BASE_NONE, NULL, 0x0, "Symbol record routed by symbol type", HFILL } },
        { &hf_pktway_symbol_version, { "Version", "pktway.symbol.version", FT_UINT8, BASE_DEC, NULL, 0xC0, "Symbol record version", HFILL } },
        { &hf_pktway_symbol_priority, { "Priority", "pktway.symbol.priority", FT_UINT8, BASE_DEC, NULL, 0x3F, "Symbol record priority", HFILL } },
        { &hf_pktway_symbol_type, { "Symbol type", "pktway.symbol.type", FT_UINT24, BASE_HEX, NULL, 0x0FFFFF, "20-bit symbol type", HFILL } },
        { &hf_pktway_symbol_len, { "Data bytes (L)", "pktway.symbol.len", FT_UINT8, BASE_DEC, NULL, 0x0, "Data bytes that follow (the record is padded to whole 8-byte words)", HFILL } },
        { &hf_pktway_symbol_data, { "Data", "pktway.symbol.data", FT_BYTES, BASE_NONE, NULL, 0x0, "Symbol data bytes", HFILL } },
        { &hf_pktway_padding, { "Padding", "pktway.padding", FT_BYTES, BASE_NONE, NULL, 0x0, "Bytes that fill a record or field to whole 8-byte words; discarded unchecked", HFILL } },
        { &hf_pktway_header, { "EEP header", "pktway.header", FT_NONE, BASE_NONE, NULL, 0x0, "The 16-byte EEP header", HFILL } },
        { &hf_pktway_version, { "Version", "pktway.version", FT_UINT8, BASE_DEC, NULL, 0xC0, "EEP version; this draft is version 0", HFILL } },
        { &hf_pktway_priority, { "Priority", "pktway.priority", FT_UINT8, BASE_DEC, NULL, 0x3F, "Message priority", HFILL } },
        { &hf_pktway_dt, { "Destination type", "pktway.dt", FT_UINT24, BASE_HEX, NULL, 0xFFFFFF, "24-bit Destination-Type: a physical address, an L2 routing header, a logical address or a symbol, by its top bits", HFILL } },
        { &hf_pktway_dt_kind, { "Destination kind", "pktway.dt.kind", FT_UINT8, BASE_DEC, VALS(pktway_dt_kind_vals), 0x0, "What the Destination-Type's top bits make it", HFILL } },
        { &hf_pktway_dt_addr, { "Destination address", "pktway.dt.addr", FT_UINT24, BASE_CUSTOM, CF_FUNC(pktway_fmt_addr), 0x0, "23-bit physical destination address (reserved: Undefined, Hey-You!, Broadcast)", HFILL } },
        { &hf_pktway_te, { "Type extension", "pktway.te", FT_UINT16, BASE_HEX, NULL, 0x0, "Type extension of the packet type (e.g. the error type of an ERR message)", HFILL } },
        { &hf_pktway_pt, { "Packet type", "pktway.pt", FT_UINT16, BASE_HEX, VALS(pktway_pt_vals), 0x0, "What the data block holds: RRP 0x0001, ERR 0x0002, IPv4 0x0800, IPv6 0x86DD (the enumeration document is missing; these values are the project's defaults)", HFILL } },
        { &hf_pktway_endian, { "Endianness", "pktway.endian", FT_UINT32, BASE_HEX, NULL, 0xF0000000, "First nibble of the length word: the data block's byte order", HFILL } },
        { &hf_pktway_endian_e, { "Data block byte order (e)", "pktway.endian.e", FT_BOOLEAN, 32, TFS(&tfs_little_big), 0x80000000, "Byte order of the data block's contents", HFILL } },
        { &hf_pktway_pl, { "Padding length (PL)", "pktway.pl", FT_UINT32, BASE_DEC, NULL, 0x0E000000, "Padding bytes at the end of the data block's last word", HFILL } },
        { &hf_pktway_dl, { "Data length (DL, 8-byte words)", "pktway.dl", FT_UINT32, BASE_DEC, NULL, 0x01FFFFFF, "Data block length in 8-byte words", HFILL } },
        { &hf_pktway_h, { "Optional header fields (h)", "pktway.h", FT_BOOLEAN, 32, NULL, 0x80000000, "Optional header fields follow the EEP header", HFILL } },
        { &hf_pktway_rz, { "Reserved (RZ)", "pktway.rz", FT_UINT32, BASE_HEX, NULL, 0x7F000000, "Reserved bits, zero on the wire", HFILL } },
        { &hf_pktway_sa, { "Source address", "pktway.sa", FT_UINT32, BASE_HEX, NULL, 0x00FFFFFF, "23-bit physical source address", HFILL } },
        { &hf_pktway_oh, { "Optional header field", "pktway.oh", FT_NONE, BASE_NONE, NULL, 0x0, "One optional header field: T, C, type, length and value", HFILL } },
        { &hf_pktway_oh_type, { "Type", "pktway.oh.type", FT_UINT8, BASE_DEC, NULL, VW_EEP_OH_TYPE_MASK, "6-bit optional header field type", HFILL } },
        { &hf_pktway_oh_mandatory, { "Processing (T)", "pktway.oh.mandatory", FT_BOOLEAN, 8, TFS(&tfs_mandatory), VW_EEP_OH_T, "A receiver that does not know the type must not process the message", HFILL } },
        { &hf_pktway_oh_last, { "Last (C)", "pktway.oh.last", FT_BOOLEAN, 8, TFS(&tfs_last), VW_EEP_OH_C, "The last optional header field", HFILL } },
        { &hf_pktway_oh_len, { "Length", "pktway.oh.len", FT_UINT8, BASE_DEC, NULL, 0x0, "Bytes of the value", HFILL } },
        { &hf_pktway_oh_value, { "Value", "pktway.oh.value", FT_BYTES, BASE_NONE, NULL, 0x0, "Value of the optional header field", HFILL } },
        { &hf_pktway_data, { "Data", "pktway.data", FT_BYTES, BASE_NONE, NULL, 0x0, "The data block's bytes (padding excluded), handed on by packet type", HFILL } },
        { &hf_pktway_data_len, { "Data bytes (8*DL-PL)", "pktway.data.len", FT_UINT32, BASE_DEC, NULL, 0x0, "Data block bytes without padding: 8 times DL minus PL", HFILL } },
        { &hf_pktway_ot, { "Optional trailer fields", "pktway.ot", FT_BYTES, BASE_NONE, NULL, 0x0, "Optional trailer fields between the data block and the TAIL", HFILL } },
        { &hf_pktway_ei, { "Error indication (TAIL)", "pktway.ei", FT_UINT64, BASE_HEX, NULL, 0x0, "TAIL word: each set bit flags an error a router saw, bit k being k router shifts before the last router", HFILL } },
        { &hf_pktway_ei_hop, { "Error flagged, router shifts ago", "pktway.ei.hop", FT_UINT32, BASE_DEC, NULL, 0x0, "Router shifts before the last router at which an error was flagged", HFILL } },
        { &hf_pktway_first_hop, { "First hop in", "pktway.first_hop_in", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_NONE), 0x0, "This message is a router's copy of the one in that frame (the same version, DT, SA and PT, and the same data block or header, seen within a second, sent on by another node than its sender); the pair is judged by the router rules", HFILL } },
        { &hf_pktway_forwarded_in, { "Forwarded in", "pktway.forwarded_in", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_NONE), 0x0, "A router's copy of this message is in that frame (its pktway.first_hop_in points back here; shown once the copy was dissected: on a second pass, in the GUI)", HFILL } },
        { &hf_pktway_link_padding, { "Link padding", "pktway.link_padding", FT_BYTES, BASE_NONE, NULL, 0x0, "Bytes after the TAIL that the link added (Ethernet minimum frame)", HFILL } },
    };
    static gint *ett[] = { &ett_pktway, &ett_pktway_route, &ett_pktway_header, &ett_pktway_word, &ett_pktway_oh, &ett_pktway_tail };

    proto_pktway = proto_register_protocol("PacketWay End-to-End Protocol", "PKTWAY", "pktway");
    proto_register_field_array(proto_pktway, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    static const char *const rule_prefixes[] = {"EEP-", NULL};
    rule_experts_register(&pktway_rules, proto_pktway, "pktway", rule_prefixes, "EEP-", TRUE);
    pktway_pt_table = register_dissector_table("pktway.pt", "PacketWay packet type", proto_pktway,
                                               FT_UINT16, BASE_HEX);
    register_decode_as(&pktway_da);
    pktway_handle = register_dissector("pktway", dissect_pktway, proto_pktway);
    pktway_tap = register_tap(PKTWAY_TAP_NAME);
    pktway_hops = wmem_map_new_autoreset(wmem_epan_scope(), wmem_file_scope(), g_direct_hash, g_direct_equal);
    pktway_forwards = wmem_map_new_autoreset(wmem_epan_scope(), wmem_file_scope(), g_direct_hash, g_direct_equal);
    module_t *pktway_module = prefs_register_protocol(proto_pktway, NULL);
    prefs_register_string_preference(pktway_module, "router_addresses", "Router addresses",
        "Addresses of routers (MAC aa:bb:cc:dd:ee:ff, IPv4 or IPv6; commas between them) for pairing the hops of "
        "a message through a router where the capture is ambiguous: a copy is then a router's only when sent from "
        "one of them, of a message sent to one (or to a group). Empty: copies are paired by what a router may "
        "not change (P31). vitcp-conform lint --eep-router does the same.", &pktway_router_addresses);
    register_init_routine(pktway_init);
    register_cleanup_routine(pktway_cleanup);
}

void proto_reg_handoff_pktway(void)
{
    dissector_add_uint_with_preference("ethertype", VW_EEP_ETHERTYPE, pktway_handle);
    dissector_add_uint_with_preference("udp.port", VW_EEP_UDP_PORT, pktway_handle);
    heur_dissector_add("udp", dissect_pktway_heur_udp, "PacketWay EEP over UDP (one whole message)", "pktway_udp",
                       proto_pktway, HEURISTIC_ENABLE);
    dissector_handle_t ip_handle = find_dissector("ip");
    dissector_handle_t ipv6_handle = find_dissector("ipv6");
    if (ip_handle)
        dissector_add_uint("pktway.pt", 0x0800, ip_handle);
    if (ipv6_handle)
        dissector_add_uint("pktway.pt", 0x86DD, ipv6_handle);
    /* Decode As: an Ethernet frame is another thing a data block can hold. */
    dissector_handle_t eth_handle = find_dissector("eth_withoutfcs");
    if (eth_handle)
        dissector_add_for_decode_as("pktway.pt", eth_handle);
}
