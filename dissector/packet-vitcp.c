/* packet-vitcp.c
 * VI/TCP (Internet VI, draft-dicecco-vitcp-01) over TCP, as the project reads
 * the draft (../shared/spec-decisions.md V1-V25, docs/dissector-vitcp.md).
 *
 * The tree is built from the tvb; checksums and every rule check come from
 * the wire library (vw_vitcp_decode, vw_vitcp_conn_check), so an expert note
 * names the same requirement ID as lint and the conformance engine.
 *
 * State kept across passes: everything computed on the first pass (rule
 * findings, the connection summary, RDMA read links) is stored per PDU and
 * only read back later, so one-pass and two-pass (-2) output agree.
 */
#include <string.h>

#include <epan/conversation.h>
#include <epan/decode_as.h>
#include <epan/expert.h>
#include <epan/packet.h>
#include <epan/prefs.h>
#include <epan/proto_data.h>
#include <epan/reassemble.h>
#include <epan/tap.h>
#include <epan/strutil.h>
#include <epan/dissectors/packet-tcp.h>

#include "vitcp/catalog.h"
#include "vitcp/findings.h"
#include "vitcp/vitcp.h"
#include "vitcp/vitcp_stream.h"

#include "info_column.h"
#include "plugin_protos.h"
#include "rule_experts.h"
#include "stream_end.h"
#include "tcp_repair.h"
#include "vitcp_dissector.h"

/* Offsets inside a segment (draft 3.2-3.4). */
#define OFF_TYPE 1
#define OFF_SEG_LEN 2
#define OFF_DATA_OFFSET 4
#define OFF_IMM 8
#define OFF_MSG_NUM 12
#define OFF_MSG_ACK 16
#define OFF_RX_POSTED 20
#define OFF_REMOTE_ERR 22
#define OFF_AFTER_HDR VW_VITCP_SEG_HDR_LEN
#define OFF_CE_OPTIONS (VW_VITCP_SEG_HDR_LEN + VW_VITCP_CE_HDR_LEN)

/* Frame-scope key of the per-dissection context; PDU keys start at 1. */
#define KEY_FRAME_CTX 0
/* A mid-stream capture decides "no trailer" only after this many segments
 * that had room for one and did not end in a matching CRC. */
#define CRC_INFER_MISSES 3

static int proto_vitcp = -1;
static int vitcp_tap = -1;
static dissector_handle_t vitcp_handle;
static dissector_table_t payload_table;
static heur_dissector_list_t payload_heur_list;

/* Preferences */
static gboolean pref_desegment = TRUE;
static gboolean pref_check_crc = TRUE;
static gboolean pref_reassemble = TRUE;
static guint pref_max_reassembly = 16u * 1024u * 1024u;
static gboolean pref_relative_msg_num = FALSE;

static int hf_version = -1;
static int hf_type_flags = -1;
static int hf_flags_eom = -1;
static int hf_flags_idv = -1;
static int hf_flags_txerr = -1;
static int hf_type = -1;
static int hf_seg_len = -1;
static int hf_data_offset = -1;
static int hf_imm_data = -1;
static int hf_msg_num = -1;
static int hf_msg_ack = -1;
static int hf_msg_num_rel = -1;
static int hf_msg_ack_rel = -1;
static int hf_rx_desc_posted = -1;
static int hf_remote_err = -1;
static int hf_err_is_code = -1;
static int hf_err_reserved = -1;
static int hf_err_ute = -1;
static int hf_err_vde = -1;
static int hf_err_mpe = -1;
static int hf_rdma_addr = -1;
static int hf_rdma_handle = -1;
static int hf_rdma_len = -1;
static int hf_ce_attrs = -1;
static int hf_ce_attr_unreliable = -1;
static int hf_ce_attr_rd = -1;
static int hf_ce_attr_rr = -1;
static int hf_ce_attr_rdma_write = -1;
static int hf_ce_attr_rdma_read = -1;
static int hf_ce_attr_dfc = -1;
static int hf_ce_attr_p2p = -1;
static int hf_ce_attr_reserved = -1;
static int hf_ce_calling_disc_len = -1;
static int hf_ce_mtu = -1;
static int hf_ce_calling_disc = -1;
static int hf_ce_calling_disc_str = -1;
static int hf_ce_read_window = -1;
static int hf_ce_called_disc_len = -1;
static int hf_ce_called_disc = -1;
static int hf_ce_called_disc_str = -1;
static int hf_opt = -1;
static int hf_opt_type = -1;
static int hf_opt_len = -1;
static int hf_opt_data = -1;
static int hf_opt_padding = -1;
static int hf_payload = -1;
static int hf_payload_len = -1;
static int hf_crc = -1;
static int hf_crc_status = -1;
static int hf_conn = -1;
static int hf_conn_phase = -1;
static int hf_conn_crc = -1;
static int hf_conn_crc_source = -1;
static int hf_conn_level = -1;
static int hf_conn_mtu = -1;
static int hf_conn_sender_window = -1;
static int hf_conn_receiver_window = -1;
static int hf_conn_dir = -1;
static int hf_rdma_response_in = -1;
static int hf_rdma_request_in = -1;
static int hf_rdma_time = -1;
static int hf_rdma_read_received = -1;
static int hf_unframed = -1;
static int hf_unclaimed = -1;
static int hf_retransmission = -1;
static int hf_fragments = -1;
static int hf_fragment = -1;
static int hf_fragment_overlap = -1;
static int hf_fragment_overlap_conflicts = -1;
static int hf_fragment_multiple_tails = -1;
static int hf_fragment_too_long_fragment = -1;
static int hf_fragment_error = -1;
static int hf_fragment_count = -1;
static int hf_reassembled_in = -1;
static int hf_reassembled_length = -1;
static int hf_reassembled_data = -1;

static gint ett_vitcp = -1;
static gint ett_type_flags = -1;
static gint ett_remote_err = -1;
static gint ett_rdma = -1;
static gint ett_ce = -1;
static gint ett_ce_attrs = -1;
static gint ett_opt = -1;
static gint ett_conn = -1;
static gint ett_fragment = -1;
static gint ett_fragments = -1;

/* One expert field per catalog rule and severity: vitcp.expert.<slug>.<sev>. */
static rule_experts_t vitcp_rules;

static reassembly_table msg_reassembly;  /* Send and RdmaWrite: the sender's numbering */
static reassembly_table resp_reassembly; /* RdmaReadResponse: the requester's numbering */

static const fragment_items vitcp_frag_items = {
    &ett_fragment, &ett_fragments, &hf_fragments, &hf_fragment, &hf_fragment_overlap,
    &hf_fragment_overlap_conflicts, &hf_fragment_multiple_tails, &hf_fragment_too_long_fragment,
    &hf_fragment_error, &hf_fragment_count, &hf_reassembled_in, &hf_reassembled_length,
    &hf_reassembled_data, "VI/TCP message fragments"};

static const value_string type_vals[] = {
    {VW_VITCP_SEND, "Send"},
    {VW_VITCP_RDMA_WRITE, "RdmaWrite"},
    {VW_VITCP_RDMA_READ_REQ, "RdmaReadRequest"},
    {VW_VITCP_RDMA_READ_RESP, "RdmaReadResponse"},
    {VW_VITCP_NOP, "NOP"},
    {VW_VITCP_CONNECT_REQUEST, "ConnectRequest"},
    {VW_VITCP_CONNECT_ACCEPT, "ConnectAccept"},
    {VW_VITCP_CONNECT_REJECT, "ConnectReject"},
    {VW_VITCP_CONNECT_NOMATCH, "ConnectNoMatch"},
    {0, NULL}};

static const value_string opt_type_vals[] = {
    {VW_VITCP_OPT_EOL, "End of Option List"},
    {VW_VITCP_OPT_CRC, "CRC"},
    {VW_VITCP_OPT_URGENT, "Urgent Marker"},
    {0, NULL}};

static const value_string level_vals[] = {
    {0, "Unknown"},
    {VW_VITCP_ATTR_UNRELIABLE, "Unreliable"},
    {VW_VITCP_ATTR_RELIABLE_DELIVERY, "Reliable Delivery"},
    {VW_VITCP_ATTR_RELIABLE_RECEPTION, "Reliable Reception"},
    {0, NULL}};

static const value_string phase_vals[] = {
    {VW_VITCP_PHASE_INIT, "No segment seen"},
    {VW_VITCP_PHASE_REQUESTED, "ConnectRequest seen"},
    {VW_VITCP_PHASE_CONNECTED, "Connected (CE exchange seen)"},
    {VW_VITCP_PHASE_REFUSED, "Refused (ConnectReject/ConnectNoMatch seen)"},
    {VW_VITCP_PHASE_MIDSTREAM, "Capture started after the CE exchange"},
    {0, NULL}};

enum crc_source { CRC_SOURCE_UNKNOWN, CRC_SOURCE_CE, CRC_SOURCE_INFERRED };
static const value_string crc_source_vals[] = {
    {CRC_SOURCE_UNKNOWN, "Not yet known"},
    {CRC_SOURCE_CE, "CE exchange"},
    {CRC_SOURCE_INFERRED, "Inferred from trailers (capture started mid-connection)"},
    {0, NULL}};

/* An RDMA read, from its request to the response segment that completes it. */
typedef struct {
    guint32 req_frame;
    nstime_t req_time;
    guint32 length;       /* RDMA Length requested */
    guint32 received;     /* response payload bytes seen */
    guint32 first_resp_frame;
    guint32 done_frame;   /* frame of the response segment that completed it */
} vitcp_read_t;

typedef struct {
    struct vw_vitcp_conn conn;  /* the wire library's rule state */
    address addr0;              /* side 0 sent the first segment seen */
    guint32 port0;
    gboolean have_side0;
    gboolean start_decided;   /* whether the capture holds the connection's start is settled */
    guint crc_misses;           /* mid-stream segments with room for, but no, CRC */
    gboolean crc_inferred;
    gboolean have_nxtseq[2];
    guint32 max_nxtseq[2];      /* TCP bytes already applied to the state, per side */
    guint32 max_nxtseq_frame[2];
    gboolean have_base[2];
    guint32 msg_base[2];        /* first Message Number seen from each side (relative numbers) */
    wmem_map_t *reads;          /* (requester side << 32 | msg num) -> vitcp_read_t */
    wmem_map_t *copies;         /* (side << 32 | TCP seq) -> retx_copy_t, first copies of TCP payloads */
    guint reads_outstanding;
    struct vw_vitcp_badcrc_watch badcrc; /* V26: bad CRC ACKed at RD/RR (relative TCP sequence numbers) */
    stream_end_t end;           /* V28: where each direction and the connection end (first pass) */
    gboolean unframed_seen[2];  /* the side's framing was lost once: its end is not judged (as lint) */
    gboolean tcp_repair[2];     /* TCP repaired the side since its last framed segment (V38) */
} vitcp_conv_t;

/* What the first pass learnt about one PDU. */
typedef struct {
    gboolean unframed;
    gboolean tcp_repair;        /* unframed after a TCP repair: TCP's finding, no rule (V38) */
    guint8 dir;
    guint8 crc_mode;            /* enum vw_vitcp_crc_mode used to decode */
    guint8 phase;
    guint8 crc_source;
    gboolean crc_negotiated;
    gboolean retransmission;
    gboolean reassemble;        /* handed to the reassembly tables */
    guint16 level;
    guint16 sender_window;
    guint16 receiver_window;
    guint32 mtu;
    gboolean have_rel;          /* msg_base of the numbering side(s) known */
    guint32 msg_rel;            /* Message Number relative to its numbering side's first */
    gboolean have_ack_rel;
    guint32 ack_rel;            /* Message ACK relative to the peer's first */
    guint findings_count;
    struct vw_finding *findings;
    vitcp_read_t *read;         /* RdmaReadRequest/Response: its read */
} vitcp_pdu_t;

typedef struct {
    guint ordinal; /* PDUs dissected so far in this frame */
    gboolean tcp_repair; /* TCP's analysis flags this frame as repaired (first pass, V38) */
} vitcp_frame_ctx_t;

/* ------------------------------------------------------------ experts */

/* An expert item whose text starts with the rule ID, plus a vitcp.rule
 * field so a display filter can select one rule at any severity. */
static proto_item *add_rule_note(proto_tree *tree, packet_info *pinfo, tvbuff_t *tvb, enum vw_req req,
                                 enum vw_severity sev, guint32 offset, guint32 length, const char *detail)
{
    struct vw_finding f = {.req = req, .severity = sev, .offset = offset, .length = length};
    g_strlcpy(f.detail, detail, sizeof f.detail);
    return rule_expert_add(&vitcp_rules, tree, pinfo, tvb, &f);
}

static gboolean is_crc_rule(enum vw_req req)
{
    return req == VW_REQ_VITCP_3_6_CRC_VALID || req == VW_REQ_VITCP_3_6_CRC_READING;
}

/* ------------------------------------------------------------ framing */

/* A segment of another Version whose header is otherwise strictly
 * plausible (a tester's version-2 ConnectRequest, V24): framed whole, so
 * that its Version is the rule it breaks, as the lint says, rather than
 * bytes skipped to a false header inside it. */
static gboolean other_version_plausible(tvbuff_t *tvb, int offset)
{
    guint8 head[VW_VITCP_SEG_HDR_LEN + 80];
    gint n = MIN(tvb_captured_length_remaining(tvb, offset), (gint)sizeof head);
    if (n < VW_VITCP_SEG_HDR_LEN)
        return FALSE;
    tvb_memcpy(tvb, head, offset, (size_t)n);
    head[0] = VW_VITCP_VERSION;
    return vw_vitcp_plausible_header(head, (size_t)n);
}

/* Bytes that can be framed as a segment: Version 1 and a length that can
 * hold a segment header (V2), or another Version with a strictly plausible
 * header. Everything else is left to the rule checks. */
static gboolean header_frameable(tvbuff_t *tvb, int offset)
{
    if (tvb_captured_length_remaining(tvb, offset) < 4)
        return FALSE;
    if (tvb_get_guint8(tvb, offset) != VW_VITCP_VERSION)
        return other_version_plausible(tvb, offset);
    return tvb_get_ntohs(tvb, offset + OFF_SEG_LEN) >= VW_VITCP_SEG_HDR_LEN;
}

/* Where the stream must be found again: the wire library's strict header
 * test, or near the end of the data, the bytes that are there. */
static gboolean header_resync_candidate(tvbuff_t *tvb, int offset)
{
    gint avail = tvb_captured_length_remaining(tvb, offset);
    if (avail >= VW_VITCP_SEG_HDR_LEN) {
        gint n = MIN(avail, VW_VITCP_SEG_HDR_LEN + 80);
        return vw_vitcp_plausible_header(tvb_get_ptr(tvb, offset, n), (size_t)n);
    }
    if (avail < 1 || tvb_get_guint8(tvb, offset) != VW_VITCP_VERSION)
        return FALSE;
    if (avail >= 2 && (tvb_get_guint8(tvb, offset + 1) & VW_VITCP_TYPE_MASK) >= VW_VITCP_TYPE_COUNT)
        return FALSE;
    if (avail >= 4) {
        unsigned type = tvb_get_guint8(tvb, offset + 1) & VW_VITCP_TYPE_MASK;
        return tvb_get_ntohs(tvb, offset + OFF_SEG_LEN) >= vw_vitcp_type_hdr_len(type);
    }
    return TRUE;
}

/* Bytes from offset up to the next plausible segment header. */
static guint resync_distance(tvbuff_t *tvb, int offset)
{
    gint cap = tvb_captured_length_remaining(tvb, offset);
    for (gint k = 1; k < cap; k++)
        if (header_resync_candidate(tvb, offset + k))
            return (guint)k;
    return (guint)tvb_reported_length_remaining(tvb, offset);
}

/* tcp_dissect_pdus asks with at least one byte (fixed_len 1) so that a bad
 * length never reaches it: implausible bytes become a PDU of their own, up
 * to the next plausible header, and framing resumes there. */
static guint get_vitcp_pdu_len(packet_info *pinfo, tvbuff_t *tvb, int offset, void *data _U_)
{
    gint avail = tvb_captured_length_remaining(tvb, offset);
    if (avail < 4) {
        if (header_resync_candidate(tvb, offset))
            return pref_desegment && pinfo->can_desegment ? 0 : (guint)tvb_reported_length_remaining(tvb, offset);
        return resync_distance(tvb, offset);
    }
    if (header_frameable(tvb, offset))
        return tvb_get_ntohs(tvb, offset + OFF_SEG_LEN);
    return resync_distance(tvb, offset);
}

/* ------------------------------------------------------------ state */

static vitcp_conv_t *get_conv(packet_info *pinfo, conversation_t **convp)
{
    conversation_t *conv = find_or_create_conversation(pinfo);
    vitcp_conv_t *vc = (vitcp_conv_t *)conversation_get_proto_data(conv, proto_vitcp);
    if (!vc) {
        vc = wmem_new0(wmem_file_scope(), vitcp_conv_t);
        vw_vitcp_conn_init(&vc->conn);
        vc->reads = wmem_map_new(wmem_file_scope(), g_int64_hash, g_int64_equal);
        conversation_add_proto_data(conv, proto_vitcp, vc);
    }
    if (convp)
        *convp = conv;
    return vc;
}

static int side_of(vitcp_conv_t *vc, packet_info *pinfo)
{
    if (!vc->have_side0) {
        copy_address_wmem(wmem_file_scope(), &vc->addr0, &pinfo->src);
        vc->port0 = pinfo->srcport;
        vc->have_side0 = TRUE;
    }
    return addresses_equal(&vc->addr0, &pinfo->src) && vc->port0 == pinfo->srcport ? 0 : 1;
}

static vitcp_frame_ctx_t *frame_ctx(packet_info *pinfo)
{
    vitcp_frame_ctx_t *ctx = (vitcp_frame_ctx_t *)p_get_proto_data(pinfo->pool, pinfo, proto_vitcp, KEY_FRAME_CTX);
    if (!ctx) {
        ctx = wmem_new0(pinfo->pool, vitcp_frame_ctx_t);
        p_add_proto_data(pinfo->pool, pinfo, proto_vitcp, KEY_FRAME_CTX, ctx);
    }
    return ctx;
}

/* TCP data already applied to the connection state: a retransmission. */
static gboolean is_retransmission(vitcp_conv_t *vc, int side, packet_info *pinfo, const struct tcpinfo *ti)
{
    if (!ti)
        return FALSE;
    if (vc->have_nxtseq[side] && vc->max_nxtseq_frame[side] != pinfo->num &&
        (gint32)(ti->nxtseq - vc->max_nxtseq[side]) <= 0)
        return TRUE;
    if (!vc->have_nxtseq[side] || (gint32)(ti->nxtseq - vc->max_nxtseq[side]) > 0) {
        vc->max_nxtseq[side] = ti->nxtseq;
        vc->have_nxtseq[side] = TRUE;
    }
    vc->max_nxtseq_frame[side] = pinfo->num;
    return FALSE;
}

static gint64 *read_key(int requester, guint32 msg_num)
{
    gint64 *key = wmem_new(wmem_file_scope(), gint64);
    *key = (gint64)requester << 32 | msg_num;
    return key;
}

/* First pass: RDMA read bookkeeping for display (the rules are the wire
 * library's; this only links frames). */
static vitcp_read_t *track_read(vitcp_conv_t *vc, int side, packet_info *pinfo, const struct vw_vitcp_seg *seg)
{
    if (seg->hdr.type == VW_VITCP_RDMA_READ_REQ) {
        vitcp_read_t *rd = wmem_new0(wmem_file_scope(), vitcp_read_t);
        rd->req_frame = pinfo->num;
        rd->req_time = pinfo->abs_ts;
        rd->length = seg->rdma.length;
        wmem_map_insert(vc->reads, read_key(side, seg->hdr.msg_num), rd);
        vc->reads_outstanding++;
        if (rd->length == 0) {
            rd->done_frame = pinfo->num; /* nothing to answer */
            vc->reads_outstanding--;
        }
        return rd;
    }
    if (seg->hdr.type != VW_VITCP_RDMA_READ_RESP)
        return NULL;
    gint64 key = (gint64)(1 - side) << 32 | seg->hdr.msg_num;
    vitcp_read_t *rd = (vitcp_read_t *)wmem_map_lookup(vc->reads, &key);
    if (!rd)
        return NULL;
    if (!rd->first_resp_frame)
        rd->first_resp_frame = pinfo->num;
    rd->received += (guint32)seg->payload_len;
    if (!rd->done_frame && (rd->received >= rd->length || (seg->hdr.flags & VW_VITCP_FLAG_EOM))) {
        rd->done_frame = pinfo->num;
        if (vc->reads_outstanding)
            vc->reads_outstanding--;
    }
    return rd;
}

/* Mid-stream captures: a trailer is assumed once one matched; "no trailer"
 * needs a segment with no room for one or several that did not match. */
static void infer_crc(vitcp_conv_t *vc, enum vw_vitcp_crc_mode mode, const struct vw_vitcp_seg *seg)
{
    unsigned type = seg->hdr.type;
    if (mode != VW_VITCP_CRC_AUTO || vw_vitcp_type_has_ce(type) || type == VW_VITCP_CONNECT_REJECT ||
        type == VW_VITCP_CONNECT_NOMATCH || !vc->conn.crc_known)
        return;
    if (seg->has_crc || seg->hdr.seg_len < vw_vitcp_type_hdr_len(type) + VW_VITCP_CRC_LEN) {
        vc->crc_inferred = TRUE;
        return;
    }
    if (++vc->crc_misses < CRC_INFER_MISSES)
        vc->conn.crc_known = false; /* not sure yet: keep inferring per segment */
    else
        vc->crc_inferred = TRUE;
}

static enum crc_source crc_source_of(const vitcp_conv_t *vc)
{
    if (!vc->conn.crc_known)
        return CRC_SOURCE_UNKNOWN;
    return vc->crc_inferred ? CRC_SOURCE_INFERRED : CRC_SOURCE_CE;
}

static void store_findings(vitcp_pdu_t *pdu, const struct vw_findings *fs)
{
    pdu->findings_count = fs->count;
    if (fs->count)
        pdu->findings = (struct vw_finding *)wmem_memdup(wmem_file_scope(), fs->item,
                                                          fs->count * sizeof fs->item[0]);
}

/*
 * Reassembly copies every message and keeps it for the whole file; on
 * tshark's single pass printing summary lines only, with no dissector on
 * vitcp.payload, nobody would see the result (messages_wanted). Decided
 * once per segment on the first pass, so later passes agree with it.
 */
static gboolean payload_consumers_known, payload_consumers;

static void note_table_entry(const gchar *table_name _U_, ftenum_t selector_type _U_, gpointer key _U_,
                             gpointer value _U_, gpointer user_data)
{
    *(gboolean *)user_data = TRUE;
}

static void note_heur_entry(const gchar *table_name _U_, struct heur_dtbl_entry *entry, gpointer user_data)
{
    if (entry->enabled)
        *(gboolean *)user_data = TRUE;
}

static gboolean have_payload_consumers(void)
{
    if (!payload_consumers_known) {
        payload_consumers = FALSE;
        dissector_table_foreach("vitcp.payload", note_table_entry, &payload_consumers);
        heur_dissector_table_foreach("vitcp.payload", note_heur_entry, &payload_consumers);
        payload_consumers_known = TRUE;
    }
    return payload_consumers;
}

/* A first pass that fills the columns without building a tree is tshark's
 * one pass printing summary lines: nothing later can show a message. A
 * first pass without columns may be followed by one that shows them (tshark
 * -2, Wireshark's file load), so it reassembles. */
static gboolean messages_wanted(packet_info *pinfo, proto_tree *tree)
{
    return tree || !pinfo->cinfo || have_payload_consumers();
}

static void vitcp_init(void)
{
    payload_consumers_known = FALSE; /* Decode As and heuristics may have changed */
}

/* Relative message numbers, like TCP's relative sequence numbers: each
 * side's numbering counts from the first Message Number seen from that side
 * (its ConnectRequest or ConnectAccept when the capture has them, so its
 * first message is 1). An RdmaReadResponse carries the requester's number,
 * a Message ACK the peer's. */
static void relative_numbers(vitcp_conv_t *vc, int side, const struct vw_vitcp_seg *seg, vitcp_pdu_t *pdu)
{
    int numbering = seg->hdr.type == VW_VITCP_RDMA_READ_RESP ? 1 - side : side;
    if (!vc->have_base[side] && seg->hdr.type != VW_VITCP_RDMA_READ_RESP) {
        vc->msg_base[side] = seg->hdr.msg_num;
        vc->have_base[side] = TRUE;
    }
    if (vc->have_base[numbering]) {
        pdu->have_rel = TRUE;
        pdu->msg_rel = seg->hdr.msg_num - vc->msg_base[numbering];
    }
    if (vc->have_base[1 - side] && seg->hdr.msg_ack != 0) {
        pdu->have_ack_rel = TRUE;
        pdu->ack_rel = seg->hdr.msg_ack - vc->msg_base[1 - side];
    }
}

/* This segment carries its direction's first byte after a SYN that TCP saw
 * (TCP then knows the server port), and the other side has sent nothing
 * before it: the connection's start, not a late look at it (V27, V38). */
static gboolean at_connection_start(packet_info *pinfo, const struct tcpinfo *ti)
{
    struct tcp_analysis *tcpd = get_tcp_conversation_data(NULL, pinfo);
    return tcpd && tcpd->server_port && ti && ti->seq == 1 && !(ti->flags & TH_ACK && ti->lastackseq > 1);
}

/* First pass over one framed segment: decode, check against the connection,
 * remember the outcome. */
static vitcp_pdu_t *first_pass(tvbuff_t *tvb, packet_info *pinfo, vitcp_conv_t *vc, int side,
                               const struct tcpinfo *ti, gboolean want_messages, struct vw_vitcp_seg *seg,
                               enum vw_req *err)
{
    vitcp_pdu_t *pdu = wmem_new0(wmem_file_scope(), vitcp_pdu_t);
    struct vw_findings fs;
    vw_findings_clear(&fs);
    guint cap = tvb_captured_length(tvb);
    enum vw_vitcp_crc_mode mode = vw_vitcp_conn_crc_mode(&vc->conn);
    pdu->dir = (guint8)side;
    pdu->crc_mode = (guint8)mode;
    pdu->retransmission = is_retransmission(vc, side, pinfo, ti);
    *err = vw_vitcp_decode(tvb_get_ptr(tvb, 0, cap), cap, mode, seg, &fs);
    if (!vc->start_decided) {
        /* TCP saw the SYN (it remembers the server port then) and this is
         * the stream's first byte: a segment before any ConnectRequest
         * breaks VITCP-4.2-REQUEST-FIRST, as the lint says, instead of
         * taking the capture to start mid-stream */
        vc->start_decided = TRUE;
        if (at_connection_start(pinfo, ti))
            vw_vitcp_conn_saw_start(&vc->conn);
    }
    if (*err == VW_REQ_NONE && !pdu->retransmission) {
        vw_vitcp_conn_check(&vc->conn, side, seg, &fs);
        infer_crc(vc, mode, seg);
        pdu->read = track_read(vc, side, pinfo, seg);
        pdu->reassemble = want_messages && vw_vitcp_type_has_payload(seg->hdr.type) &&
                          !(seg->hdr.data_offset == 0 && (seg->hdr.flags & VW_VITCP_FLAG_EOM)) &&
                          (guint64)seg->hdr.data_offset + seg->payload_len <= pref_max_reassembly;
    }
    if (*err == VW_REQ_NONE)
        relative_numbers(vc, side, seg, pdu);
    /* V26, V29, as lint: a segment of the receiver after it ACKed a bad-CRC
     * one (the ACKs come from the postdissector dissect_vitcp_ack) */
    if (*err == VW_REQ_NONE && !pdu->retransmission && ti) {
        if (ti->flags & TH_ACK) /* V29, as lint: this segment's own ACK first */
            vw_vitcp_badcrc_ack(&vc->badcrc, side, ti->lastackseq);
        vw_vitcp_badcrc_segment(&vc->badcrc, &vc->conn, side, ti->nxtseq, pinfo->num, &fs);
    }
    pdu->phase = (guint8)vc->conn.phase;
    pdu->crc_negotiated = vc->conn.crc_known && vc->conn.crc_negotiated;
    pdu->crc_source = (guint8)crc_source_of(vc);
    pdu->level = vc->conn.level;
    pdu->mtu = vc->conn.mtu;
    pdu->sender_window = vc->conn.dir[side].read_window;
    pdu->receiver_window = vc->conn.dir[1 - side].read_window;
    store_findings(pdu, &fs);
    return pdu;
}

/* ------------------------------------------------------------ tree */

static void add_segment_header(proto_tree *tree, tvbuff_t *tvb)
{
    static int *const type_flag_fields[] = {&hf_flags_eom, &hf_flags_idv, &hf_flags_txerr, &hf_type, NULL};
    static int *const remote_err_fields[] = {&hf_err_is_code, &hf_err_reserved, &hf_err_ute, &hf_err_vde,
                                             &hf_err_mpe, NULL};
    proto_tree_add_item(tree, hf_version, tvb, 0, 1, ENC_BIG_ENDIAN);
    proto_tree_add_bitmask(tree, tvb, OFF_TYPE, hf_type_flags, ett_type_flags, type_flag_fields, ENC_BIG_ENDIAN);
    proto_tree_add_item(tree, hf_seg_len, tvb, OFF_SEG_LEN, 2, ENC_BIG_ENDIAN);
    proto_tree_add_item(tree, hf_data_offset, tvb, OFF_DATA_OFFSET, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(tree, hf_imm_data, tvb, OFF_IMM, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(tree, hf_msg_num, tvb, OFF_MSG_NUM, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(tree, hf_msg_ack, tvb, OFF_MSG_ACK, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(tree, hf_rx_desc_posted, tvb, OFF_RX_POSTED, 2, ENC_BIG_ENDIAN);
    proto_tree_add_bitmask(tree, tvb, OFF_REMOTE_ERR, hf_remote_err, ett_remote_err, remote_err_fields,
                           ENC_BIG_ENDIAN);
}

static void add_rdma_header(proto_tree *tree, tvbuff_t *tvb)
{
    proto_tree *sub = proto_tree_add_subtree(tree, tvb, OFF_AFTER_HDR, VW_VITCP_RDMA_HDR_LEN, ett_rdma, NULL,
                                             "RDMA Header");
    proto_tree_add_item(sub, hf_rdma_addr, tvb, OFF_AFTER_HDR, 8, ENC_BIG_ENDIAN);
    proto_tree_add_item(sub, hf_rdma_handle, tvb, OFF_AFTER_HDR + 8, 4, ENC_BIG_ENDIAN);
    proto_tree_add_item(sub, hf_rdma_len, tvb, OFF_AFTER_HDR + 12, 4, ENC_BIG_ENDIAN);
}

static void add_discriminator(proto_tree *tree, tvbuff_t *tvb, int offset, guint16 len, int hf_bytes, int hf_str)
{
    proto_tree_add_item(tree, hf_bytes, tvb, offset, VW_VITCP_DISC_MAX, ENC_NA);
    proto_item *ti = proto_tree_add_item(tree, hf_str, tvb, offset, MIN(len, VW_VITCP_DISC_MAX), ENC_ASCII);
    proto_item_set_generated(ti);
}

static void add_options(proto_tree *tree, tvbuff_t *tvb, const struct vw_vitcp_seg *seg)
{
    const guint8 *opts = seg->ce.options;
    size_t area = seg->ce.options_len, pos = 0, start;
    guint16 type = 0, len = 0;
    const guint8 *data;
    int r;
    while (start = pos, (r = vw_vitcp_opt_next(opts, area, &pos, &type, &len, &data)) == 1) {
        int at = OFF_CE_OPTIONS + (int)start;
        proto_tree *sub = proto_tree_add_subtree_format(tree, tvb, at, len, ett_opt, NULL, "Option: %s",
                                                        val_to_str_const(type, opt_type_vals, "Unknown"));
        proto_tree_add_item(sub, hf_opt_type, tvb, at, 2, ENC_BIG_ENDIAN);
        proto_tree_add_item(sub, hf_opt_len, tvb, at + 2, 2, ENC_BIG_ENDIAN);
        if (len > VW_VITCP_OPT_HDR_LEN)
            proto_tree_add_item(sub, hf_opt_data, tvb, at + 4, len - VW_VITCP_OPT_HDR_LEN, ENC_NA);
    }
    if (r == 0 && pos > start && type == VW_VITCP_OPT_EOL) {
        proto_tree *sub = proto_tree_add_subtree(tree, tvb, OFF_CE_OPTIONS + (int)start, 2, ett_opt, NULL,
                                                 "Option: End of Option List");
        proto_tree_add_item(sub, hf_opt_type, tvb, OFF_CE_OPTIONS + (int)start, 2, ENC_BIG_ENDIAN);
    }
    /* Bytes after the options and before the trailer (or the segment end). */
    size_t body_end = seg->hdr.seg_len - (seg->has_crc ? VW_VITCP_CRC_LEN : 0);
    size_t opt_end = OFF_CE_OPTIONS + (r == 0 ? pos : start);
    if (body_end > opt_end)
        proto_tree_add_item(tree, hf_opt_padding, tvb, (int)opt_end, (int)(body_end - opt_end), ENC_NA);
}

static void add_ce_header(proto_tree *tree, tvbuff_t *tvb, const struct vw_vitcp_seg *seg)
{
    static int *const attr_fields[] = {&hf_ce_attr_reserved, &hf_ce_attr_p2p, &hf_ce_attr_dfc,
                                       &hf_ce_attr_rdma_read, &hf_ce_attr_rdma_write, &hf_ce_attr_rr,
                                       &hf_ce_attr_rd, &hf_ce_attr_unreliable, NULL};
    const int ce = OFF_AFTER_HDR;
    proto_tree *sub = proto_tree_add_subtree(tree, tvb, ce, seg->hdr.seg_len - ce, ett_ce, NULL,
                                             "Connection Establishment Header");
    proto_tree_add_bitmask(sub, tvb, ce, hf_ce_attrs, ett_ce_attrs, attr_fields, ENC_BIG_ENDIAN);
    proto_tree_add_item(sub, hf_ce_calling_disc_len, tvb, ce + 2, 2, ENC_BIG_ENDIAN);
    proto_tree_add_item(sub, hf_ce_mtu, tvb, ce + 4, 4, ENC_BIG_ENDIAN);
    add_discriminator(sub, tvb, ce + 8, seg->ce.calling_disc_len, hf_ce_calling_disc, hf_ce_calling_disc_str);
    proto_tree_add_item(sub, hf_ce_read_window, tvb, ce + 72, 2, ENC_BIG_ENDIAN);
    proto_tree_add_item(sub, hf_ce_called_disc_len, tvb, ce + 74, 2, ENC_BIG_ENDIAN);
    add_discriminator(sub, tvb, ce + 76, seg->ce.called_disc_len, hf_ce_called_disc, hf_ce_called_disc_str);
    add_options(sub, tvb, seg);
}

static void add_conn_summary(proto_tree *tree, tvbuff_t *tvb, const vitcp_pdu_t *pdu)
{
    proto_item *ti = proto_tree_add_item(tree, hf_conn, tvb, 0, 0, ENC_NA);
    proto_item_set_generated(ti);
    proto_tree *sub = proto_item_add_subtree(ti, ett_conn);
    proto_item_append_text(ti, ": %s, CRC %s, MTU %u", val_to_str_const(pdu->level, level_vals, "Unknown"),
                           pdu->crc_source == CRC_SOURCE_UNKNOWN ? "unknown" : pdu->crc_negotiated ? "on" : "off",
                           pdu->mtu);
    proto_item_set_generated(proto_tree_add_uint(sub, hf_conn_dir, tvb, 0, 0, pdu->dir));
    proto_item_set_generated(proto_tree_add_uint(sub, hf_conn_phase, tvb, 0, 0, pdu->phase));
    proto_item_set_generated(proto_tree_add_boolean(sub, hf_conn_crc, tvb, 0, 0, pdu->crc_negotiated));
    proto_item_set_generated(proto_tree_add_uint(sub, hf_conn_crc_source, tvb, 0, 0, pdu->crc_source));
    proto_item_set_generated(proto_tree_add_uint(sub, hf_conn_level, tvb, 0, 0, pdu->level));
    proto_item_set_generated(proto_tree_add_uint(sub, hf_conn_mtu, tvb, 0, 0, pdu->mtu));
    proto_item_set_generated(proto_tree_add_uint(sub, hf_conn_sender_window, tvb, 0, 0, pdu->sender_window));
    proto_item_set_generated(proto_tree_add_uint(sub, hf_conn_receiver_window, tvb, 0, 0, pdu->receiver_window));
}

static void add_read_links(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, const vitcp_pdu_t *pdu,
                           unsigned type)
{
    const vitcp_read_t *rd = pdu->read;
    if (!rd)
        return;
    if (type == VW_VITCP_RDMA_READ_REQ) {
        guint32 resp = rd->done_frame ? rd->done_frame : rd->first_resp_frame;
        if (resp && resp != pinfo->num)
            proto_item_set_generated(proto_tree_add_uint(tree, hf_rdma_response_in, tvb, 0, 0, resp));
        else if (!rd->done_frame && PINFO_FD_VISITED(pinfo))
            add_rule_note(tree, pinfo, tvb, VW_REQ_VITCP_2_2_READ_ANSWERED, VW_SEV_WARN, 0, 0,
                          rd->first_resp_frame ? "RdmaReadRequest only partly answered in this capture"
                                               : "RdmaReadRequest never answered in this capture");
        return;
    }
    nstime_t delta;
    proto_item_set_generated(proto_tree_add_uint(tree, hf_rdma_request_in, tvb, 0, 0, rd->req_frame));
    nstime_delta(&delta, &pinfo->abs_ts, &rd->req_time);
    proto_item_set_generated(proto_tree_add_time(tree, hf_rdma_time, tvb, 0, 0, &delta));
    proto_item_set_generated(proto_tree_add_uint(tree, hf_rdma_read_received, tvb, 0, 0, rd->received));
}

/* A whole message to its ULP, which writes its Info after ours (" | "). */
static void dispatch_payload(tvbuff_t *payload, packet_info *pinfo, proto_tree *tree)
{
    heur_dtbl_entry_t *hdtbl_entry;
    guint32 low = MIN(pinfo->srcport, pinfo->destport), high = MAX(pinfo->srcport, pinfo->destport);
    info_handoff_begin(pinfo);
    if (!dissector_try_heuristic(payload_heur_list, payload, pinfo, tree, &hdtbl_entry, NULL) &&
        !dissector_try_uint(payload_table, low, payload, pinfo, tree) &&
        !dissector_try_uint(payload_table, high, payload, pinfo, tree))
        call_data_dissector(payload, pinfo, tree);
    info_handoff_end(pinfo);
}

/* Payload: direct for one-segment messages, through reassembly otherwise. */
static void add_payload(proto_tree *tree, proto_tree *top, tvbuff_t *tvb, packet_info *pinfo,
                        const vitcp_pdu_t *pdu, const struct vw_vitcp_seg *seg)
{
    int off = (int)seg->payload_offset, len = (int)seg->payload_len;
    if (len)
        proto_tree_add_item(tree, hf_payload, tvb, off, len, ENC_NA);
    proto_item_set_generated(proto_tree_add_uint(tree, hf_payload_len, tvb, off, len, (guint32)len));
    gboolean eom = (seg->hdr.flags & VW_VITCP_FLAG_EOM) != 0;
    if (!pdu->reassemble) {
        if (len && seg->hdr.data_offset == 0 && eom && !pdu->retransmission)
            dispatch_payload(tvb_new_subset_length(tvb, off, len), pinfo, top);
        return;
    }
    reassembly_table *table = seg->hdr.type == VW_VITCP_RDMA_READ_RESP ? &resp_reassembly : &msg_reassembly;
    gboolean save_fragmented = pinfo->fragmented;
    pinfo->fragmented = TRUE;
    fragment_head *head = fragment_add_check(table, tvb, off, pinfo, seg->hdr.msg_num, NULL, seg->hdr.data_offset,
                                             (guint32)len, !eom);
    if (eom && head) {
        gboolean update_col = FALSE;
        tvbuff_t *whole = process_reassembled_data(tvb, off, pinfo, "Reassembled VI/TCP message", head,
                                                   &vitcp_frag_items, &update_col, tree);
        if (whole)
            dispatch_payload(whole, pinfo, top);
    } else if (head && head->reassembled_in && head->reassembled_in != pinfo->num) {
        proto_item_set_generated(proto_tree_add_uint(tree, hf_reassembled_in, tvb, off, len, head->reassembled_in));
    }
    pinfo->fragmented = save_fragmented;
}

static void add_trailer(proto_tree *tree, tvbuff_t *tvb, packet_info *pinfo, const struct vw_vitcp_seg *seg)
{
    int at = seg->hdr.seg_len - VW_VITCP_CRC_LEN;
    if (!seg->has_crc) {
        proto_tree_add_checksum(tree, tvb, 0, hf_crc, hf_crc_status, NULL, pinfo, 0, ENC_LITTLE_ENDIAN,
                                PROTO_CHECKSUM_NOT_PRESENT);
        return;
    }
    proto_tree_add_checksum(tree, tvb, at, hf_crc, hf_crc_status, NULL, pinfo, seg->crc_computed,
                            ENC_LITTLE_ENDIAN, pref_check_crc ? PROTO_CHECKSUM_VERIFY : PROTO_CHECKSUM_NO_FLAGS);
}

/* Short level names for the Info column (one word each). */
static const value_string level_info_vals[] = {
    {VW_VITCP_ATTR_UNRELIABLE, "Unreliable"},
    {VW_VITCP_ATTR_RELIABLE_DELIVERY, "ReliableDelivery"},
    {VW_VITCP_ATTR_RELIABLE_RECEPTION, "ReliableReception"},
    {0, NULL}};

#define LEVEL_MASK (VW_VITCP_ATTR_UNRELIABLE | VW_VITCP_ATTR_RELIABLE_DELIVERY | VW_VITCP_ATTR_RELIABLE_RECEPTION)

static void info_disc(packet_info *pinfo, const char *key, const guint8 *disc, guint16 len)
{
    if (!len)
        return;
    gchar *text = format_text(pinfo->pool, disc, MIN(len, VW_VITCP_DISC_MAX));
    col_append_fstr(pinfo->cinfo, COL_INFO, " %s=\"%s\"", key, text);
}

/*
 * The plugin's Info style (docs/dissector-vitcp.md "Info column"): the
 * type, then Key=Value pairs, then [FLAGS] and [findings]; several PDUs in
 * one frame are separated by " | ". What matters per type: CE segments
 * their MTU, level, CRC option and discriminators; RdmaReadRequest the
 * RDMA address, handle and length; data segments message, offset, length.
 */
static void set_info(packet_info *pinfo, const struct vw_vitcp_seg *seg, const vitcp_pdu_t *pdu)
{
    const struct vw_vitcp_hdr *h = &seg->hdr;
    gboolean rel = pref_relative_msg_num && pdu->have_rel;
    guint32 msg = rel ? pdu->msg_rel : h->msg_num;
    col_append_sep_str(pinfo->cinfo, COL_INFO, " | ", val_to_str_const(h->type, type_vals, "Unknown"));
    if (seg->has_ce) {
        col_append_fstr(pinfo->cinfo, COL_INFO, " MTU=%u Level=%s CRC=%s", seg->ce.mtu,
                        val_to_str_const(seg->ce.attrs & LEVEL_MASK, level_info_vals, "None"),
                        seg->ce.opt_crc ? "on" : "off");
        info_disc(pinfo, "Calling", seg->ce.calling_disc, seg->ce.calling_disc_len);
        info_disc(pinfo, "Called", seg->ce.called_disc, seg->ce.called_disc_len);
    } else if (h->type == VW_VITCP_RDMA_READ_REQ) {
        col_append_fstr(pinfo->cinfo, COL_INFO, " Msg=%u Addr=0x%016" G_GINT64_MODIFIER "x Handle=0x%08x Len=%u", msg,
                        seg->rdma.addr, seg->rdma.handle, seg->rdma.length);
    } else if (h->type == VW_VITCP_NOP) {
        col_append_fstr(pinfo->cinfo, COL_INFO, " Msg=%u Ack=%u Posted=%u", msg,
                        pref_relative_msg_num && pdu->have_ack_rel ? pdu->ack_rel : h->msg_ack, h->rx_desc_posted);
    } else if (vw_vitcp_type_has_payload(h->type)) {
        col_append_fstr(pinfo->cinfo, COL_INFO, " Msg=%u Off=%u Len=%u", msg, h->data_offset, (guint)seg->payload_len);
        if (h->type == VW_VITCP_RDMA_WRITE && h->data_offset == 0)
            col_append_fstr(pinfo->cinfo, COL_INFO, " Addr=0x%016" G_GINT64_MODIFIER "x", seg->rdma.addr);
    } else {
        col_append_fstr(pinfo->cinfo, COL_INFO, " Msg=%u", msg);
    }
    col_append_fstr(pinfo->cinfo, COL_INFO, "%s%s%s%s", (h->flags & VW_VITCP_FLAG_EOM) ? " [EOM]" : "",
                    (h->flags & VW_VITCP_FLAG_IDV) ? " [IDV]" : "", (h->flags & VW_VITCP_FLAG_TXERR) ? " [TxErr]" : "",
                    seg->has_crc && !seg->crc_ok && pref_check_crc ? " [BAD CRC]" : "");
    if (pdu->retransmission)
        col_append_str(pinfo->cinfo, COL_INFO, " [Retransmission]");
}

static void add_findings(proto_tree *tree, packet_info *pinfo, tvbuff_t *tvb, const vitcp_pdu_t *pdu)
{
    for (guint i = 0; i < pdu->findings_count; i++) {
        const struct vw_finding *f = &pdu->findings[i];
        if (!pref_check_crc && is_crc_rule(f->req))
            continue;
        rule_expert_add(&vitcp_rules, tree, pinfo, tvb, f);
    }
}

static vitcp_tap_info_t *make_tap_info(packet_info *pinfo, conversation_t *conv, vitcp_conv_t *vc, guint8 type,
                                   gboolean eom, guint32 seg_len, guint32 payload_len, gboolean crc_bad)
{
    vitcp_tap_info_t *info = wmem_new0(pinfo->pool, vitcp_tap_info_t);
    info->conv_index = conv->conv_index;
    info->type = type;
    info->eom = eom;
    info->seg_len = seg_len;
    info->payload_len = payload_len;
    info->crc_bad = crc_bad;
    info->reads_outstanding = vc->reads_outstanding;
    return info;
}

/* Bytes that do not frame as a segment (Segment Length under 24, another
 * Version, a capture gap): show what is there and resynchronise. */
static int dissect_unframed(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, vitcp_pdu_t *pdu,
                            conversation_t *conv, vitcp_conv_t *vc)
{
    guint len = tvb_reported_length(tvb);
    gint cap = (gint)tvb_captured_length(tvb);
    proto_item *ti = proto_tree_add_item(tree, proto_vitcp, tvb, 0, -1, ENC_NA);
    proto_tree *vt = proto_item_add_subtree(ti, ett_vitcp);
    proto_item_append_text(ti, ", unframed bytes (%u)", len);
    if (pdu && pdu->tcp_repair) {
        /* TCP's repair, which its own analysis reports on this frame or an
         * earlier one of the side: no VI/TCP rule (V38) */
        proto_item_append_text(ti, " after a TCP repair");
        col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "[Unframed %u bytes after a TCP repair]", len);
        if (len)
            proto_tree_add_item(vt, hf_unframed, tvb, 0, -1, ENC_NA);
        add_conn_summary(vt, tvb, pdu);
        return (int)len;
    }
    col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "[Unframed %u bytes]", len);
    char detail[VW_FINDING_DETAIL_MAX];
    enum vw_req req = VW_REQ_VITCP_3_2_SEG_CHAIN;
    if (cap >= 4 && tvb_get_guint8(tvb, 0) == VW_VITCP_VERSION &&
        tvb_get_ntohs(tvb, OFF_SEG_LEN) < VW_VITCP_SEG_HDR_LEN) {
        req = VW_REQ_VITCP_3_2_SEG_LEN_MIN;
        proto_tree_add_item(vt, hf_version, tvb, 0, 1, ENC_BIG_ENDIAN);
        proto_tree_add_item(vt, hf_type, tvb, OFF_TYPE, 1, ENC_BIG_ENDIAN);
        proto_tree_add_item(vt, hf_seg_len, tvb, OFF_SEG_LEN, 2, ENC_BIG_ENDIAN);
        g_snprintf(detail, sizeof detail, "Segment Length %u is under 24: %u bytes skipped to the next plausible header",
                   tvb_get_ntohs(tvb, OFF_SEG_LEN), len);
    } else if (cap >= 24 && tvb_get_guint8(tvb, 0) != VW_VITCP_VERSION &&
               (tvb_get_guint8(tvb, OFF_TYPE) & VW_VITCP_TYPE_MASK) < VW_VITCP_TYPE_COUNT &&
               tvb_get_ntohs(tvb, OFF_SEG_LEN) == len) {
        /* A whole segment of another version (V24): decode its header as v1. */
        req = VW_REQ_VITCP_3_2_VERSION;
        add_segment_header(vt, tvb);
        g_snprintf(detail, sizeof detail, "Version %u (this draft is version 1); not framed as a VI/TCP v1 segment",
                   tvb_get_guint8(tvb, 0));
    } else {
        g_snprintf(detail, sizeof detail, "%u bytes where a segment header must start; skipped to the next plausible header",
                   len);
    }
    if (len)
        proto_tree_add_item(vt, hf_unframed, tvb, 0, -1, ENC_NA);
    add_rule_note(vt, pinfo, tvb, req, VW_SEV_ERROR, 0, 0, detail);
    if (pdu)
        add_conn_summary(vt, tvb, pdu);
    tap_queue_packet(vitcp_tap, pinfo, make_tap_info(pinfo, conv, vc, VITCP_TAP_TYPE_UNFRAMED, FALSE, len, 0, FALSE));
    return (int)len;
}

static int dissect_vitcp_pdu(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    const struct tcpinfo *ti = (const struct tcpinfo *)data;
    vitcp_frame_ctx_t *ctx = frame_ctx(pinfo);
    guint key = ++ctx->ordinal;
    conversation_t *conv;
    vitcp_conv_t *vc = get_conv(pinfo, &conv);
    int side = side_of(vc, pinfo);
    guint len = tvb_reported_length(tvb);

    col_set_str(pinfo->cinfo, COL_PROTOCOL, "VI/TCP");
    if (key == 1)
        col_clear(pinfo->cinfo, COL_INFO);

    vitcp_pdu_t *pdu = (vitcp_pdu_t *)p_get_proto_data(wmem_file_scope(), pinfo, proto_vitcp, key);
    if (!header_frameable(tvb, 0) || len < VW_VITCP_SEG_HDR_LEN || (PINFO_FD_VISITED(pinfo) && !pdu)) {
        if (!pdu) {
            pdu = wmem_new0(wmem_file_scope(), vitcp_pdu_t);
            pdu->unframed = TRUE;
            /* a later pass that meets bytes the first did not frame here is
             * TCP's reassembly handing on other bytes (V38) */
            pdu->tcp_repair = PINFO_FD_VISITED(pinfo) || vc->tcp_repair[side];
            vc->unframed_seen[side] = TRUE;
            pdu->dir = (guint8)side;
            pdu->phase = (guint8)vc->conn.phase;
            pdu->crc_negotiated = vc->conn.crc_known && vc->conn.crc_negotiated;
            pdu->crc_source = (guint8)crc_source_of(vc);
            pdu->level = vc->conn.level;
            pdu->mtu = vc->conn.mtu;
            p_add_proto_data(wmem_file_scope(), pinfo, proto_vitcp, key, pdu);
        }
        return dissect_unframed(tvb, pinfo, tree, pdu, conv, vc);
    }

    struct vw_vitcp_seg seg;
    enum vw_req err;
    if (!pdu) {
        pdu = first_pass(tvb, pinfo, vc, side, ti, pref_reassemble && messages_wanted(pinfo, tree), &seg, &err);
        p_add_proto_data(wmem_file_scope(), pinfo, proto_vitcp, key, pdu);
        if (err == VW_REQ_NONE && !ctx->tcp_repair)
            vc->tcp_repair[side] = FALSE; /* framed again */
    } else {
        guint cap = tvb_captured_length(tvb);
        err = vw_vitcp_decode(tvb_get_ptr(tvb, 0, cap), cap, (enum vw_vitcp_crc_mode)pdu->crc_mode, &seg, NULL);
    }

    unsigned type = seg.hdr.type;
    proto_item *root = proto_tree_add_item(tree, proto_vitcp, tvb, 0, -1, ENC_NA);
    proto_tree *vt = proto_item_add_subtree(root, ett_vitcp);
    proto_item_append_text(root, ", %s, Msg %u, Off %u, Len %u", val_to_str_const(type, type_vals, "Unknown"),
                           pref_relative_msg_num && pdu->have_rel ? pdu->msg_rel : seg.hdr.msg_num,
                           seg.hdr.data_offset, (guint)seg.payload_len);
    add_segment_header(vt, tvb);
    if (pdu->have_rel)
        proto_item_set_generated(proto_tree_add_uint(vt, hf_msg_num_rel, tvb, OFF_MSG_NUM, 4, pdu->msg_rel));
    if (pdu->have_ack_rel)
        proto_item_set_generated(proto_tree_add_uint(vt, hf_msg_ack_rel, tvb, OFF_MSG_ACK, 4, pdu->ack_rel));
    if (err != VW_REQ_NONE) {
        /* The segment frames but cannot be parsed further (too short for the
         * headers of its type, unknown type, truncated capture). */
        col_append_sep_fstr(pinfo->cinfo, COL_INFO, " | ", "%s Msg=%u [Malformed]",
                            val_to_str_const(type, type_vals, "Unknown"), seg.hdr.msg_num);
        char detail[VW_FINDING_DETAIL_MAX];
        g_snprintf(detail, sizeof detail, "%s of %u bytes cannot be parsed: %s",
                   val_to_str_const(type, type_vals, "Unknown type"), seg.hdr.seg_len, vw_req_info(err)->reason);
        add_rule_note(vt, pinfo, tvb, err, VW_SEV_ERROR, 0, 0, detail);
        add_findings(vt, pinfo, tvb, pdu);
        add_conn_summary(vt, tvb, pdu);
        tap_queue_packet(vitcp_tap, pinfo, make_tap_info(pinfo, conv, vc, (guint8)type, FALSE, len, 0, FALSE));
        return (int)len;
    }
    set_info(pinfo, &seg, pdu);
    if (seg.has_rdma)
        add_rdma_header(vt, tvb);
    if (seg.has_ce)
        add_ce_header(vt, tvb, &seg);
    add_trailer(vt, tvb, pinfo, &seg);
    add_conn_summary(vt, tvb, pdu);
    add_read_links(vt, tvb, pinfo, pdu, type);
    if (pdu->retransmission) {
        proto_item *ri = proto_tree_add_boolean(vt, hf_retransmission, tvb, 0, 0, TRUE);
        proto_item_set_generated(ri);
        add_rule_note(vt, pinfo, tvb, VW_REQ_VITCP_2_2_RETX_SAME_DATA, VW_SEV_NOTE, 0, 0,
                      "retransmitted TCP data: shown, not applied again to the connection state");
    }
    add_findings(vt, pinfo, tvb, pdu);
    vitcp_tap_info_t *tap = make_tap_info(pinfo, conv, vc, (guint8)type, (seg.hdr.flags & VW_VITCP_FLAG_EOM) != 0, len,
                                      (guint32)seg.payload_len, seg.has_crc && !seg.crc_ok);
    if (type == VW_VITCP_RDMA_READ_RESP && pdu->read && pdu->read->done_frame == pinfo->num && !pdu->retransmission) {
        tap->read_done = TRUE;
        tap->read_req_time = pdu->read->req_time;
    }
    tap_queue_packet(vitcp_tap, pinfo, tap);
    if (vw_vitcp_type_has_payload(type))
        add_payload(vt, tree, tvb, pinfo, pdu, &seg);
    return (int)len;
}

/* The segment starts of one TCP segment's payload, for the urgent pointer. */
typedef struct {
    guint count;
    gint starts[64];
} pdu_starts_t;

static void check_urgent(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, const struct tcpinfo *ti,
                         vitcp_conv_t *vc, int side)
{
    if (!ti || !(ti->flags & 0x20 /* URG */) || ti->is_reassembled)
        return;
    gint up = ti->urgent_pointer;
    gint len = (gint)tvb_reported_length(tvb);
    if (up > len)
        return; /* the urgent byte is in a later segment */
    /* Segment starts in this payload: walk the chain from the first byte
     * to the segment holding the designated byte (vw_vitcp_urgent_verdict,
     * the lint's rule too). */
    enum vw_req verdict = VW_REQ_VITCP_3_7_URGENT_FIRST_BYTE;
    gint off = 0;
    for (int n = 0; n < 4096 && off < len && header_frameable(tvb, off); n++) {
        guint seg_len = tvb_get_ntohs(tvb, off + OFF_SEG_LEN);
        enum vw_req v = vw_vitcp_urgent_verdict((guint64)up, (guint64)off, seg_len);
        if (v != VW_REQ_COUNT) {
            verdict = v;
            break;
        }
        off += (gint)seg_len;
    }
    if (up == off && off < len)
        verdict = VW_REQ_NONE;
    if (!vc->conn.dir[1 - side].ce_urgent_opt && vc->conn.phase != VW_VITCP_PHASE_MIDSTREAM)
        add_rule_note(tree, pinfo, tvb, VW_REQ_VITCP_3_7_URGENT_ONLY_IF_OFFERED, VW_SEV_ERROR, 0, 0,
                      "urgent data sent but the peer did not offer the Urgent Marker option");
    if (verdict == VW_REQ_NONE)
        return;
    if (verdict == VW_REQ_VITCP_3_7_URGENT_RFC1122)
        add_rule_note(tree, pinfo, tvb, VW_REQ_VITCP_3_7_URGENT_RFC1122, VW_SEV_ERROR, (guint32)(up - 1), 1,
                      "urgent pointer points at the byte after a segment's first byte (BSD reading, not RFC 1122)");
    else
        add_rule_note(tree, pinfo, tvb, VW_REQ_VITCP_3_7_URGENT_FIRST_BYTE, VW_SEV_ERROR, (guint32)MIN(up, len - 1),
                      1, "urgent pointer does not designate the first byte of a VI segment");
}

#define KEY_HANDED 0x7FFFFFFD /* file-scope key: TCP handed this frame to VI/TCP on the first pass */

/* A later pass's bytes of a connection that VI/TCP's heuristic recognised
 * only after them: the first pass never decoded them, and judging them now
 * would judge bytes without the state before them (V38). */
static int dissect_not_decoded(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree)
{
    proto_item *ti = proto_tree_add_item(tree, proto_vitcp, tvb, 0, -1, ENC_NA);
    proto_item_append_text(ti, ", before the connection was recognised: not decoded");
    proto_tree_add_item(proto_item_add_subtree(ti, ett_vitcp), hf_unclaimed, tvb, 0, -1, ENC_NA);
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "VI/TCP");
    col_append_sep_str(pinfo->cinfo, COL_INFO, " | ", "[Not decoded: before VI/TCP was recognised]");
    return (int)tvb_captured_length(tvb);
}

static int dissect_vitcp(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    vitcp_conv_t *vc = get_conv(pinfo, NULL);
    int side = side_of(vc, pinfo);
    if (!PINFO_FD_VISITED(pinfo)) {
        if (!p_get_proto_data(wmem_file_scope(), pinfo, proto_vitcp, KEY_HANDED))
            p_add_proto_data(wmem_file_scope(), pinfo, proto_vitcp, KEY_HANDED, GUINT_TO_POINTER(1));
        /* once per frame; its PDUs read it (dissect_vitcp_pdu) */
        vitcp_frame_ctx_t *ctx = frame_ctx(pinfo);
        ctx->tcp_repair = tcp_repair_in_frame(pinfo);
        if (ctx->tcp_repair)
            vc->tcp_repair[side] = TRUE;
    } else if (!p_get_proto_data(wmem_file_scope(), pinfo, proto_vitcp, KEY_HANDED)) {
        return dissect_not_decoded(tvb, pinfo, tree);
    }
    tcp_dissect_pdus(tvb, pinfo, tree, pref_desegment, 1, get_vitcp_pdu_len, dissect_vitcp_pdu, data);
    stream_end_after_pdus(&vc->end, side, tvb, pinfo);
    const struct tcpinfo *ti = (const struct tcpinfo *)data;
    if (ti && (ti->flags & 0x20))
        check_urgent(tvb, pinfo, tree, ti, vc, side);
    return (int)tvb_captured_length(tvb);
}

/* Heuristic: a ConnectRequest, or a TCP payload that is exactly a chain of
 * strictly plausible segment headers (unambiguous mid-stream). */
static gboolean dissect_vitcp_heur(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data)
{
    gint len = (gint)tvb_captured_length(tvb);
    if (len < 4 || !header_resync_candidate(tvb, 0))
        return FALSE;
    unsigned type = tvb_get_guint8(tvb, OFF_TYPE) & VW_VITCP_TYPE_MASK;
    gboolean ok = FALSE;
    if (len < VW_VITCP_SEG_HDR_LEN) {
        /* A ConnectRequest whose first TCP segment is shorter than its
         * header (a network that re-segments): the connection's first bytes
         * after a SYN TCP saw, with a plausible version, type and length
         * (V38); later segments come by the conversation. */
        ok = type == VW_VITCP_CONNECT_REQUEST && at_connection_start(pinfo, (const struct tcpinfo *)data) &&
             (len < OFF_MSG_ACK + 4 || tvb_get_ntohl(tvb, OFF_MSG_ACK) == 0);
    } else if (type == VW_VITCP_CONNECT_REQUEST) {
        ok = tvb_get_ntohl(tvb, OFF_MSG_ACK) == 0;
    } else {
        gint off = 0, n = 0;
        while (off + VW_VITCP_SEG_HDR_LEN <= len && header_resync_candidate(tvb, off)) {
            off += tvb_get_ntohs(tvb, off + OFF_SEG_LEN);
            n++;
        }
        ok = n > 0 && off == len && (gint)tvb_reported_length(tvb) == len;
    }
    if (!ok)
        return FALSE;
    conversation_set_dissector(find_or_create_conversation(pinfo), vitcp_handle);
    dissect_vitcp(tvb, pinfo, tree, data);
    return TRUE;
}

/* ------------------------------------------------------------ retransmissions */

/*
 * TCP does not hand retransmitted data to its subdissector once it has
 * reassembled that range, so a retransmission whose bytes differ from the
 * first copy (VITCP-2.2.2.2.5-RETX-SAME-DATA; the lint checks the same) is
 * found by a postdissector: on the first pass it keeps, per VI/TCP
 * connection and side, a hash of every TCP payload by relative sequence
 * number; a TCP retransmission with the same sequence number and length is
 * compared with it. The verdict is stored per frame for later passes.
 */
static dissector_handle_t vitcp_retx_handle;
static int hf_tcp_seq_id = -1, hf_tcp_payload_id = -1, hf_tcp_retx_id = -1;

typedef struct {
    guint32 len;
    guint32 frame;
    guint64 hash;
} retx_copy_t;

typedef struct {
    guint32 first_frame; /* 0: same bytes (no finding) */
    gint start, length;  /* the TCP payload in the frame */
} retx_verdict_t;

#define KEY_RETX 0x7FFFFFFE /* file-scope key of a frame's retransmission verdict */

static guint64 fnv1a64(const guint8 *p, guint len)
{
    guint64 h = 0xcbf29ce484222325ull;
    for (guint i = 0; i < len; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static field_info *first_finfo(proto_tree *tree, int hf)
{
    GPtrArray *a = hf >= 0 ? proto_get_finfo_ptr_array(tree, hf) : NULL;
    return a && a->len ? (field_info *)g_ptr_array_index(a, 0) : NULL;
}

static int dissect_vitcp_retx(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    if (pinfo->ptype != PT_TCP)
        return 0;
    conversation_t *conv = find_conversation_pinfo(pinfo, 0);
    vitcp_conv_t *vc = conv ? (vitcp_conv_t *)conversation_get_proto_data(conv, proto_vitcp) : NULL;
    if (!vc)
        return 0;
    retx_verdict_t *v = (retx_verdict_t *)p_get_proto_data(wmem_file_scope(), pinfo, proto_vitcp, KEY_RETX);
    if (!v && !PINFO_FD_VISITED(pinfo)) {
        field_info *seq = first_finfo(tree, hf_tcp_seq_id), *payload = first_finfo(tree, hf_tcp_payload_id);
        if (!seq || !payload || payload->ds_tvb != tvb || payload->length <= 0)
            return 0;
        guint32 len = (guint32)payload->length;
        if ((guint32)tvb_captured_length_remaining(payload->ds_tvb, payload->start) < len)
            return 0;
        guint64 hash = fnv1a64(tvb_get_ptr(payload->ds_tvb, payload->start, (gint)len), len);
        int side = side_of(vc, pinfo);
        if (!vc->copies)
            vc->copies = wmem_map_new(wmem_file_scope(), g_int64_hash, g_int64_equal);
        gint64 key = (gint64)side << 32 | fvalue_get_uinteger(&seq->value);
        retx_copy_t *first = (retx_copy_t *)wmem_map_lookup(vc->copies, &key);
        if (!first_finfo(tree, hf_tcp_retx_id) || !first) {
            if (!first) {
                first = wmem_new(wmem_file_scope(), retx_copy_t);
                first->len = len;
                first->frame = pinfo->num;
                first->hash = hash;
                gint64 *k = wmem_new(wmem_file_scope(), gint64);
                *k = key;
                wmem_map_insert(vc->copies, k, first);
            }
            return 0;
        }
        v = wmem_new0(wmem_file_scope(), retx_verdict_t);
        if (first->len == len && first->hash != hash)
            v->first_frame = first->frame;
        v->start = payload->start;
        v->length = payload->length;
        p_add_proto_data(wmem_file_scope(), pinfo, proto_vitcp, KEY_RETX, v);
    }
    if (!v || !v->first_frame)
        return 0;
    /* Later passes need not have TCP's fields: the payload's place was kept. */
    tvbuff_t *ds = tvb;
    proto_item *ti = proto_tree_add_item(tree, proto_vitcp, ds, v->start, v->length, ENC_NA);
    proto_item_append_text(ti, ", retransmitted TCP data that differs from the first copy (frame %u)", v->first_frame);
    proto_tree *vt = proto_item_add_subtree(ti, ett_vitcp);
    char detail[VW_FINDING_DETAIL_MAX];
    g_snprintf(detail, sizeof detail, "retransmitted TCP data differs from the first copy in frame %u", v->first_frame);
    add_rule_note(vt, pinfo, ds, VW_REQ_VITCP_2_2_RETX_SAME_DATA, VW_SEV_ERROR, (guint32)v->start,
                  (guint32)v->length, detail);
    col_set_str(pinfo->cinfo, COL_PROTOCOL, "VI/TCP");
    col_append_str(pinfo->cinfo, COL_INFO, " [VI/TCP data differs from the first copy]");
    return (int)tvb_captured_length(tvb);
}

/* Every TCP ACK of a VI/TCP connection on the first pass (V26): did the
 * receiver of a bad-CRC segment acknowledge it? Pure ACKs never reach the
 * VI/TCP dissector, so a postdissector reads TCP's ack field. */
static dissector_handle_t vitcp_ack_handle;
static int hf_tcp_ack_id = -1;

static int dissect_vitcp_ack(tvbuff_t *tvb _U_, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    if (pinfo->ptype != PT_TCP || PINFO_FD_VISITED(pinfo))
        return 0;
    conversation_t *conv = find_conversation_pinfo(pinfo, 0);
    vitcp_conv_t *vc = conv ? (vitcp_conv_t *)conversation_get_proto_data(conv, proto_vitcp) : NULL;
    field_info *ack = vc ? first_finfo(tree, hf_tcp_ack_id) : NULL;
    if (!ack || !(vc->badcrc.pending[0] || vc->badcrc.pending[1]))
        return 0;
    vw_vitcp_badcrc_ack(&vc->badcrc, side_of(vc, pinfo), fvalue_get_uinteger(&ack->value));
    return 0;
}

/* A direction's end and the connection's (V28): at a side's first FIN, a
 * segment it left cut (VITCP-3.2-SEG-TRUNCATED) and a message without EOM;
 * at the second FIN or an RST, requests never answered and reads answered
 * short. Judged on the first pass with the wire library's rules, at the
 * same frames as lint (stream_end.h); the verdict is kept per frame. */
static dissector_handle_t vitcp_end_handle;

static void vitcp_judge_end(packet_info *pinfo, proto_tree *tree, struct vw_findings *fs)
{
    conversation_t *conv = find_conversation_pinfo(pinfo, 0);
    vitcp_conv_t *vc = conv ? (vitcp_conv_t *)conversation_get_proto_data(conv, proto_vitcp) : NULL;
    if (!vc || !vc->have_side0)
        return;
    int side = side_of(vc, pinfo);
    stream_end_step_t step = stream_end_frame(&vc->end, side, tree);
    if (step.dir_ended || step.conn_closed)
        vw_vitcp_badcrc_close(&vc->badcrc, side); /* V29: this side's close is its reaction */
    if (step.dir_ended && !vc->unframed_seen[side])
        vw_vitcp_direction_end(&vc->conn, side, vc->end.pending[side], fs);
    if (step.conn_closed)
        vw_vitcp_conn_finish(&vc->conn, fs);
}

static const stream_end_dissector_t vitcp_end = {
    &proto_vitcp, &ett_vitcp, &vitcp_rules, vitcp_judge_end,
    ", end of the connection or of one direction (TCP FIN or RST)", " [VI/TCP left unfinished at its end]"};

static int dissect_vitcp_end(tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree, void *data _U_)
{
    return stream_end_dissect(&vitcp_end, tvb, pinfo, tree);
}

/* ------------------------------------------------------------ registration */

/* Decode As for "vitcp.payload": the connection's ports. */
static void vitcp_da_port_label(packet_info *pinfo _U_, gchar *result)
{
    g_snprintf(result, MAX_DECODE_AS_PROMPT_LEN, "TCP port");
}
static gpointer vitcp_da_src_port(packet_info *pinfo) { return GUINT_TO_POINTER(pinfo->srcport); }
static gpointer vitcp_da_dst_port(packet_info *pinfo) { return GUINT_TO_POINTER(pinfo->destport); }
static build_valid_func vitcp_da_build[] = {vitcp_da_src_port, vitcp_da_dst_port};
static decode_as_value_t vitcp_da_values[] = {{vitcp_da_port_label, 2, vitcp_da_build}};
static decode_as_t vitcp_da = {"vitcp", "vitcp.payload", 1, 0, vitcp_da_values, NULL, NULL,
                               decode_as_default_populate_list, decode_as_default_reset, decode_as_default_change,
                               NULL};

void proto_register_vitcp(void)
{
    static hf_register_info hf[] = {
        {&hf_version, {"Version", "vitcp.version", FT_UINT8, BASE_DEC, NULL, 0x0, "VI/TCP version of the segment; this draft defines version 1", HFILL}},
        {&hf_type_flags, {"Type/Flags", "vitcp.type_flags", FT_UINT8, BASE_HEX, NULL, 0x0, "Second byte of the segment header: EOM, IDV and Transmit Error flags and the 5-bit segment type", HFILL}},
        {&hf_flags_eom, {"End of Message", "vitcp.flags.eom", FT_BOOLEAN, 8, NULL, VW_VITCP_FLAG_EOM, "Set on the last segment of a message", HFILL}},
        {&hf_flags_idv, {"Immediate Data Valid", "vitcp.flags.idv", FT_BOOLEAN, 8, NULL, VW_VITCP_FLAG_IDV, "The Immediate Data field carries data for the receiver's descriptor", HFILL}},
        {&hf_flags_txerr, {"Transmit Error", "vitcp.flags.txerr", FT_BOOLEAN, 8, NULL, VW_VITCP_FLAG_TXERR, "The sender saw a transmit error on this message; the receiver completes it in error", HFILL}},
        {&hf_type, {"Type", "vitcp.type", FT_UINT8, BASE_DEC, VALS(type_vals), VW_VITCP_TYPE_MASK, "Segment type: data transfer (Send, RdmaWrite, RdmaReadRequest/Response, NOP) or connection establishment", HFILL}},
        {&hf_seg_len, {"Segment Length", "vitcp.seg_len", FT_UINT16, BASE_DEC, NULL, 0x0,
                       "Bytes of the whole segment, header and trailer CRC included, so a segment is at least 24 bytes (the project reads the draft's two wordings this way)", HFILL}},
        {&hf_data_offset, {"Data Offset", "vitcp.data_offset", FT_UINT32, BASE_DEC, NULL, 0x0, "Offset of this segment's payload in its message", HFILL}},
        {&hf_imm_data, {"Immediate Data", "vitcp.imm_data", FT_UINT32, BASE_HEX, NULL, 0x0, "32 bits delivered with the message when IDV is set", HFILL}},
        {&hf_msg_num, {"Message Number", "vitcp.msg_num", FT_UINT32, BASE_DEC, NULL, 0x0, "Number of the message this segment belongs to, in its sender's numbering (a read response carries the requester's)", HFILL}},
        {&hf_msg_ack, {"Message ACK", "vitcp.msg_ack", FT_UINT32, BASE_DEC, NULL, 0x0, "Highest message number of the peer that this side has received", HFILL}},
        {&hf_msg_num_rel, {"Relative Message Number", "vitcp.msg_num_rel", FT_UINT32, BASE_DEC, NULL, 0x0,
                           "Message Number minus the first one seen from its numbering side (that side's "
                           "ConnectRequest or ConnectAccept when captured, so its first message is 1)", HFILL}},
        {&hf_msg_ack_rel, {"Relative Message ACK", "vitcp.msg_ack_rel", FT_UINT32, BASE_DEC, NULL, 0x0,
                           "Message ACK minus the first Message Number seen from the peer", HFILL}},
        {&hf_rx_desc_posted, {"Rx Descriptors Posted", "vitcp.rx_desc_posted", FT_UINT16, BASE_DEC, NULL, 0x0, "Receive descriptors the sender has posted since the last report (descriptor flow control)", HFILL}},
        {&hf_remote_err, {"Remote Error Code", "vitcp.remote_err", FT_UINT16, BASE_HEX, NULL, 0x0, "Error the sender reports on the peer's message: IS error code and error bits", HFILL}},
        {&hf_err_is_code, {"IS Error Code", "vitcp.err.is_code", FT_UINT16, BASE_DEC, NULL, 0xFF00, "Implementation-specific error code", HFILL}},
        {&hf_err_reserved, {"Reserved", "vitcp.err.reserved", FT_UINT16, BASE_HEX, NULL, VW_VITCP_ERR_RESERVED, "Reserved bits, zero on the wire", HFILL}},
        {&hf_err_ute, {"Unrecoverable Transport Error", "vitcp.err.ute", FT_BOOLEAN, 16, NULL, VW_VITCP_ERR_UTE, "The receiver lost the transport: the connection is unusable", HFILL}},
        {&hf_err_vde, {"VI Descriptor Error", "vitcp.err.vde", FT_BOOLEAN, 16, NULL, VW_VITCP_ERR_VDE, "The receiver's descriptor for this message was in error", HFILL}},
        {&hf_err_mpe, {"RDMA Memory Protection Error", "vitcp.err.mpe", FT_BOOLEAN, 16, NULL, VW_VITCP_ERR_MPE, "The RDMA address or handle failed the receiver's memory protection check", HFILL}},
        {&hf_rdma_addr, {"RDMA Address", "vitcp.rdma.addr", FT_UINT64, BASE_HEX, NULL, 0x0, "Remote virtual address the RDMA operation reads or writes", HFILL}},
        {&hf_rdma_handle, {"Registered Memory Handle", "vitcp.rdma.handle", FT_UINT32, BASE_HEX, NULL, 0x0, "Memory handle registered by the owner of the remote buffer", HFILL}},
        {&hf_rdma_len, {"RDMA Length", "vitcp.rdma.len", FT_UINT32, BASE_DEC, NULL, 0x0, "Bytes the RDMA operation transfers", HFILL}},
        {&hf_ce_attrs, {"Calling Attributes", "vitcp.ce.attrs", FT_UINT16, BASE_HEX, NULL, 0x0, "Connection attributes the sender asks for or grants: reliability level and RDMA/DFC/peer-to-peer options", HFILL}},
        {&hf_ce_attr_unreliable, {"Unreliable", "vitcp.ce.attrs.unreliable", FT_BOOLEAN, 16, NULL, VW_VITCP_ATTR_UNRELIABLE, "Unreliable delivery level", HFILL}},
        {&hf_ce_attr_rd, {"Reliable Delivery", "vitcp.ce.attrs.reliable_delivery", FT_BOOLEAN, 16, NULL, VW_VITCP_ATTR_RELIABLE_DELIVERY, "Reliable Delivery level: messages arrive once, in order, or the VI breaks", HFILL}},
        {&hf_ce_attr_rr, {"Reliable Reception", "vitcp.ce.attrs.reliable_reception", FT_BOOLEAN, 16, NULL, VW_VITCP_ATTR_RELIABLE_RECEPTION, "Reliable Reception level: a send completes only once the peer received it", HFILL}},
        {&hf_ce_attr_rdma_write, {"RDMA Write Enable", "vitcp.ce.attrs.rdma_write", FT_BOOLEAN, 16, NULL, VW_VITCP_ATTR_RDMA_WRITE, "RDMA writes to this VI are allowed", HFILL}},
        {&hf_ce_attr_rdma_read, {"RDMA Read Enable", "vitcp.ce.attrs.rdma_read", FT_BOOLEAN, 16, NULL, VW_VITCP_ATTR_RDMA_READ, "RDMA reads from this VI are allowed", HFILL}},
        {&hf_ce_attr_dfc, {"Descriptor Flow Control Enabled", "vitcp.ce.attrs.dfc", FT_BOOLEAN, 16, NULL, VW_VITCP_ATTR_DFC, "Descriptor flow control: senders wait for posted receive descriptors", HFILL}},
        {&hf_ce_attr_p2p, {"Peer-to-peer", "vitcp.ce.attrs.p2p", FT_BOOLEAN, 16, NULL, VW_VITCP_ATTR_P2P, "Peer-to-peer connection model instead of client/server", HFILL}},
        {&hf_ce_attr_reserved, {"Reserved", "vitcp.ce.attrs.reserved", FT_UINT16, BASE_HEX, NULL, VW_VITCP_ATTR_RESERVED, "Reserved attribute bits, zero on the wire", HFILL}},
        {&hf_ce_calling_disc_len, {"Calling Discriminator Length", "vitcp.ce.calling_disc_len", FT_UINT16, BASE_DEC, NULL, 0x0, "Bytes of the Calling Discriminator in use (at most 64)", HFILL}},
        {&hf_ce_mtu, {"MTU Size", "vitcp.ce.mtu", FT_UINT32, BASE_DEC, NULL, 0x0,
                      "Largest message payload the sender accepts (VIA's MaxTransferSize, not a segment size)", HFILL}},
        {&hf_ce_calling_disc, {"Calling Discriminator", "vitcp.ce.calling_disc", FT_BYTES, BASE_NONE, NULL, 0x0, "The 64-byte Calling Discriminator field as sent", HFILL}},
        {&hf_ce_calling_disc_str, {"Calling Discriminator (text)", "vitcp.ce.calling_disc_str", FT_STRING, BASE_NONE, NULL, 0x0, "The Calling Discriminator's used bytes as text", HFILL}},
        {&hf_ce_read_window, {"RDMA Read Window", "vitcp.ce.rdma_read_window", FT_UINT16, BASE_DEC, NULL, 0x0, "RDMA reads the sender lets the peer have outstanding at once", HFILL}},
        {&hf_ce_called_disc_len, {"Called Discriminator Length", "vitcp.ce.called_disc_len", FT_UINT16, BASE_DEC, NULL, 0x0, "Bytes of the Called Discriminator in use (at most 64)", HFILL}},
        {&hf_ce_called_disc, {"Called Discriminator", "vitcp.ce.called_disc", FT_BYTES, BASE_NONE, NULL, 0x0, "The 64-byte Called Discriminator field as sent", HFILL}},
        {&hf_ce_called_disc_str, {"Called Discriminator (text)", "vitcp.ce.called_disc_str", FT_STRING, BASE_NONE, NULL, 0x0, "The Called Discriminator's used bytes as text", HFILL}},
        {&hf_opt, {"Option", "vitcp.opt", FT_NONE, BASE_NONE, NULL, 0x0, "One connection establishment option: Type, Length and data", HFILL}},
        {&hf_opt_type, {"Option Type", "vitcp.opt.type", FT_UINT16, BASE_DEC, VALS(opt_type_vals), 0x0, "Option type: End of Option List, CRC or Urgent Marker", HFILL}},
        {&hf_opt_len, {"Option Length", "vitcp.opt.len", FT_UINT16, BASE_DEC, NULL, 0x0, "Bytes of the option, Type and Length included", HFILL}},
        {&hf_opt_data, {"Option Data", "vitcp.opt.data", FT_BYTES, BASE_NONE, NULL, 0x0, "Option data after Type and Length", HFILL}},
        {&hf_opt_padding, {"Bytes after the options", "vitcp.opt.padding", FT_BYTES, BASE_NONE, NULL, 0x0, "Bytes after the option list and before the trailer or the segment's end", HFILL}},
        {&hf_payload, {"Payload", "vitcp.payload", FT_BYTES, BASE_NONE, NULL, 0x0, "Message bytes carried by this segment", HFILL}},
        {&hf_payload_len, {"Payload Length", "vitcp.payload_len", FT_UINT32, BASE_DEC, NULL, 0x0, "Bytes of message payload in this segment", HFILL}},
        {&hf_crc, {"CRC", "vitcp.crc", FT_UINT32, BASE_HEX, NULL, 0x0,
                   "Trailer CRC over the bytes before it, written least significant byte first as Ethernet places its FCS (generator 0xDB710641, reflected, not CRC-32C)", HFILL}},
        {&hf_crc_status, {"CRC Status", "vitcp.crc.status", FT_UINT8, BASE_NONE, VALS(proto_checksum_vals), 0x0, "Whether the trailer CRC matches the segment", HFILL}},
        {&hf_conn, {"Connection", "vitcp.conn", FT_NONE, BASE_NONE, NULL, 0x0, "What the connection has negotiated by this segment (decided in capture order)", HFILL}},
        {&hf_conn_dir, {"Side", "vitcp.conn.side", FT_UINT8, BASE_DEC, NULL, 0x0,
                        "0: the side that sent the first segment seen", HFILL}},
        {&hf_conn_phase, {"Phase", "vitcp.conn.phase", FT_UINT8, BASE_DEC, VALS(phase_vals), 0x0, "Connection establishment phase reached by this segment", HFILL}},
        {&hf_conn_crc, {"CRC negotiated", "vitcp.conn.crc", FT_BOOLEAN, BASE_NONE, NULL, 0x0, "Both sides offered the CRC option: data segments carry a trailer CRC", HFILL}},
        {&hf_conn_crc_source, {"CRC decided by", "vitcp.conn.crc_source", FT_UINT8, BASE_DEC, VALS(crc_source_vals), 0x0, "Whether the CE exchange decided the CRC, or trailers seen mid-connection", HFILL}},
        {&hf_conn_level, {"Reliability level", "vitcp.conn.level", FT_UINT16, BASE_HEX, VALS(level_vals), 0x0, "Reliability level the connection agreed", HFILL}},
        {&hf_conn_mtu, {"Agreed MTU", "vitcp.conn.mtu", FT_UINT32, BASE_DEC, NULL, 0x0, "Smaller of the two MTU Sizes of the CE exchange", HFILL}},
        {&hf_conn_sender_window, {"Sender's RDMA Read Window", "vitcp.conn.sender_read_window", FT_UINT16, BASE_DEC, NULL, 0x0, "RDMA Read Window this segment's sender announced", HFILL}},
        {&hf_conn_receiver_window, {"Receiver's RDMA Read Window", "vitcp.conn.receiver_read_window", FT_UINT16, BASE_DEC, NULL, 0x0, "RDMA Read Window the other side announced", HFILL}},
        {&hf_rdma_response_in, {"Response in", "vitcp.rdma.response_in", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_RESPONSE), 0x0,
                                "Frame of the response segment that completes this read", HFILL}},
        {&hf_rdma_request_in, {"Request in", "vitcp.rdma.request_in", FT_FRAMENUM, BASE_NONE, FRAMENUM_TYPE(FT_FRAMENUM_REQUEST), 0x0, "Frame of the RdmaReadRequest this response answers", HFILL}},
        {&hf_rdma_time, {"Response time", "vitcp.rdma.time", FT_RELATIVE_TIME, BASE_NONE, NULL, 0x0,
                         "Time since the RdmaReadRequest", HFILL}},
        {&hf_rdma_read_received, {"Read bytes received so far", "vitcp.rdma.read_received", FT_UINT32, BASE_DEC, NULL, 0x0, "Response payload bytes of this read seen up to this segment", HFILL}},
        {&hf_unframed, {"Unframed bytes", "vitcp.unframed", FT_BYTES, BASE_NONE, NULL, 0x0, "Bytes where a segment header must start that do not frame as one; dissection resumes at the next plausible header", HFILL}},
        {&hf_unclaimed, {"Not decoded", "vitcp.not_decoded", FT_BYTES, BASE_NONE, NULL, 0x0, "Bytes of a connection recognised as VI/TCP only later: the first pass never decoded them, so they are not judged", HFILL}},
        {&hf_retransmission, {"Retransmission", "vitcp.retransmission", FT_BOOLEAN, BASE_NONE, NULL, 0x0, "TCP data already seen: shown, not applied again to the connection state", HFILL}},
        {&hf_fragments, {"Message fragments", "vitcp.fragments", FT_NONE, BASE_NONE, NULL, 0x0, "The segments of this reassembled message", HFILL}},
        {&hf_fragment, {"Message fragment", "vitcp.fragment", FT_FRAMENUM, BASE_NONE, NULL, 0x0, "A segment of this message", HFILL}},
        {&hf_fragment_overlap, {"Fragment overlap", "vitcp.fragment.overlap", FT_BOOLEAN, BASE_NONE, NULL, 0x0, "Segments of the message overlap", HFILL}},
        {&hf_fragment_overlap_conflicts, {"Conflicting data in fragment overlap", "vitcp.fragment.overlap.conflicts", FT_BOOLEAN, BASE_NONE, NULL, 0x0, "Overlapping segments carry different bytes", HFILL}},
        {&hf_fragment_multiple_tails, {"Multiple tail fragments", "vitcp.fragment.multiple_tails", FT_BOOLEAN, BASE_NONE, NULL, 0x0, "More than one segment of the message has EOM", HFILL}},
        {&hf_fragment_too_long_fragment, {"Fragment too long", "vitcp.fragment.too_long_fragment", FT_BOOLEAN, BASE_NONE, NULL, 0x0, "A segment runs past the message's end", HFILL}},
        {&hf_fragment_error, {"Reassembly error", "vitcp.fragment.error", FT_FRAMENUM, BASE_NONE, NULL, 0x0, "Frame where reassembly failed", HFILL}},
        {&hf_fragment_count, {"Fragment count", "vitcp.fragment.count", FT_UINT32, BASE_DEC, NULL, 0x0, "Number of segments in the message", HFILL}},
        {&hf_reassembled_in, {"Reassembled in", "vitcp.reassembled_in", FT_FRAMENUM, BASE_NONE, NULL, 0x0, "Frame where this segment's message is complete", HFILL}},
        {&hf_reassembled_length, {"Reassembled message length", "vitcp.reassembled.length", FT_UINT32, BASE_DEC, NULL, 0x0, "Bytes of the reassembled message", HFILL}},
        {&hf_reassembled_data, {"Reassembled message", "vitcp.reassembled.data", FT_BYTES, BASE_NONE, NULL, 0x0, "The reassembled message payload", HFILL}},
    };
    static gint *ett[] = {&ett_vitcp, &ett_type_flags, &ett_remote_err, &ett_rdma, &ett_ce, &ett_ce_attrs,
                          &ett_opt, &ett_conn, &ett_fragment, &ett_fragments};

    proto_vitcp = proto_register_protocol("VI/TCP (Internet VI)", "VI/TCP", "vitcp");
    proto_register_field_array(proto_vitcp, hf, array_length(hf));
    proto_register_subtree_array(ett, array_length(ett));
    static const char *const rule_prefixes[] = {"VITCP-", NULL};
    rule_experts_register(&vitcp_rules, proto_vitcp, "vitcp", rule_prefixes, "VITCP-", FALSE);

    module_t *prefs = prefs_register_protocol(proto_vitcp, NULL);
    prefs_register_bool_preference(prefs, "desegment", "Reassemble VI/TCP segments spanning TCP segments",
                                   "Whether VI segments split over TCP segments are reassembled "
                                   "(needs TCP's \"Allow subdissector to reassemble TCP streams\")",
                                   &pref_desegment);
    prefs_register_bool_preference(prefs, "check_crc", "Validate the trailer CRC",
                                   "Whether the trailer CRC is checked: written least significant byte first, "
                                   "generator 0xDB710641 (reflected), over every byte before it", &pref_check_crc);
    prefs_register_bool_preference(prefs, "reassemble", "Reassemble VI messages",
                                   "Whether the segments of a Send, RdmaWrite or RdmaReadResponse are "
                                   "reassembled into the whole message", &pref_reassemble);
    prefs_register_bool_preference(prefs, "relative_msg_num", "Relative message numbers",
                                   "Show Message Numbers and ACKs in the Info column and the tree summary relative "
                                   "to the first one seen from their side (like TCP's relative sequence numbers); "
                                   "vitcp.msg_num_rel and vitcp.msg_ack_rel carry them either way",
                                   &pref_relative_msg_num);
    prefs_register_uint_preference(prefs, "max_reassembly", "Largest message to reassemble (bytes)",
                                   "Messages whose segments reach past this many bytes are not reassembled",
                                   10, &pref_max_reassembly);

    vitcp_handle = register_dissector("vitcp", dissect_vitcp, proto_vitcp);
    vitcp_retx_handle = create_dissector_handle(dissect_vitcp_retx, proto_vitcp);
    register_postdissector(vitcp_retx_handle);
    vitcp_ack_handle = create_dissector_handle(dissect_vitcp_ack, proto_vitcp);
    register_postdissector(vitcp_ack_handle);
    vitcp_end_handle = create_dissector_handle(dissect_vitcp_end, proto_vitcp);
    register_postdissector(vitcp_end_handle);
    register_init_routine(vitcp_init);
    reassembly_table_register(&msg_reassembly, &addresses_ports_reassembly_table_functions);
    reassembly_table_register(&resp_reassembly, &addresses_ports_reassembly_table_functions);
    payload_table = register_dissector_table("vitcp.payload", "VI/TCP message payload (by TCP port)", proto_vitcp,
                                             FT_UINT16, BASE_DEC);
    payload_heur_list = register_heur_dissector_list("vitcp.payload", proto_vitcp);
    register_decode_as(&vitcp_da);
    vitcp_tap = register_tap(VITCP_TAP_NAME);
    vitcp_register_stats();
}

void proto_reg_handoff_vitcp(void)
{
    hf_tcp_seq_id = proto_registrar_get_id_byname("tcp.seq");
    hf_tcp_payload_id = proto_registrar_get_id_byname("tcp.payload");
    hf_tcp_retx_id = proto_registrar_get_id_byname("tcp.analysis.retransmission");
    GArray *wanted = g_array_new(FALSE, FALSE, (guint)sizeof(int));
    int ids[] = {hf_tcp_seq_id, hf_tcp_payload_id, hf_tcp_retx_id};
    for (unsigned i = 0; i < G_N_ELEMENTS(ids); i++)
        if (ids[i] >= 0)
            g_array_append_val(wanted, ids[i]);
    set_postdissector_wanted_hfids(vitcp_retx_handle, wanted);
    hf_tcp_ack_id = proto_registrar_get_id_byname("tcp.ack");
    if (hf_tcp_ack_id >= 0) {
        GArray *want_ack = g_array_new(FALSE, FALSE, (guint)sizeof(int));
        g_array_append_val(want_ack, hf_tcp_ack_id);
        set_postdissector_wanted_hfids(vitcp_ack_handle, want_ack);
    }
    stream_end_want_flags(vitcp_end_handle);
    dissector_add_uint_with_preference("tcp.port", VW_VITCP_DEFAULT_PORT, vitcp_handle);
    heur_dissector_add("tcp", dissect_vitcp_heur, "VI/TCP over TCP", "vitcp_tcp", proto_vitcp, HEURISTIC_ENABLE);
    /* Decode As candidates for message payloads: a ULP's own dissector adds
     * itself to "vitcp.payload"; line-based text is offered for any. */
    dissector_handle_t text = find_dissector("data-text-lines");
    if (text)
        dissector_add_for_decode_as("vitcp.payload", text);
}
