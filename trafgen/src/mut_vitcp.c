/* VI/TCP mutations: each breaks the rule its catalog ID names, in one
 * segment, through the wire encoder's fields (or its deliberate-fault
 * options). */
#include <string.h>

#include "internal.h"
#include "mutations.h"

static bool is_data(const struct tg_pdu *p) { return p->type <= VW_VITCP_NOP; }
static bool is_request(const struct tg_pdu *p) { return p->type == VW_VITCP_CONNECT_REQUEST; }
static bool is_accept(const struct tg_pdu *p) { return p->type == VW_VITCP_CONNECT_ACCEPT; }
static bool is_nop(const struct tg_pdu *p) { return p->type == VW_VITCP_NOP; }

/* VITCP-3.6-CRC-VALID */
static bool el_crc_data(const struct tg_pdu *p) { return p->crc && is_data(p); }
static void ap_bad_crc(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.trailer = VW_VITCP_TRAILER_BAD_CRC; }
/* VITCP-3.6-CRC-READING */
static void ap_crc_be(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.trailer = VW_VITCP_TRAILER_CRC_BE; }
static bool el_crc_request(const struct tg_pdu *p) { return p->crc && is_request(p); }
/* VITCP-3.6-ACCEPT-CRC-ONLY-IF-REQUEST */
static bool el_nocrc_accept(const struct tg_pdu *p) { return !p->crc && is_accept(p); }
static void ap_accept_crc(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r;
    size_t n = vw_vitcp_opts_build(p->opts, sizeof p->opts, true, false, true);
    p->vitcp.ce.options = p->opts;
    p->vitcp.ce.options_len = n;
    p->vitcp.trailer = VW_VITCP_TRAILER_CRC;
}
/* VITCP-3.2-VERSION */
static void ap_version(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.version = 2; }
static bool el_data(const struct tg_pdu *p) { return is_data(p); }
/* VITCP-3.2-TYPE-KNOWN */
static void ap_type(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.type = 0x11; }
/* VITCP-3.2-SEG-LEN-MIN / -HEADERS: the framer cannot continue after these */
static void ap_seg_len_min(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r;
    p->vitcp.keep_seg_len = true;
    p->vitcp.hdr.seg_len = 20;
}
static bool el_write_single(const struct tg_pdu *p);
/* VITCP-3-RDMA-HDR-PRESENT: an RdmaWrite too short for its RDMA header */
static void ap_rdma_hdr_cut(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* 24 + 16 RDMA header needed; say 32 and send 32 */
    p->vitcp.keep_seg_len = true;
    p->vitcp.hdr.seg_len = 32;
    p->post_truncate = 32;
}
/* VITCP-3.2-SEG-LEN-HEADERS: a NOP without the negotiated trailer (24 bytes, 28 needed) */
static bool el_crc_nop(const struct tg_pdu *p) { return p->crc && is_nop(p); }
static void ap_nop_no_trailer(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.trailer = VW_VITCP_TRAILER_NONE; }
/* VITCP-3.2-ERR-RESERVED */
static void ap_err_reserved(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.remote_err |= 0x0010; }
/* VITCP-3.3-ATTR-RESERVED */
static void ap_attr_reserved(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.ce.attrs |= 0x0100; }
/* VITCP-3.3-ONE-LEVEL */
static void ap_two_levels(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r;
    p->vitcp.ce.attrs |= VW_VITCP_ATTR_UNRELIABLE | VW_VITCP_ATTR_RELIABLE_DELIVERY;
}
/* VITCP-3.3-DISC-LEN-MAX */
static void ap_disc_len(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.ce.calling_disc_len = 65; }
/* VITCP-3.3-DISC-PAD-ZERO */
static void ap_disc_pad(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.ce.called_disc[63] = 0xA5; }
/* VITCP-3.3-MTU-NONZERO */
static void ap_mtu_zero(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.ce.mtu = 0; }
/* VITCP-3.3-MTU-LESSER */
static void ap_mtu_more(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.ce.mtu += 4096; }
/* VITCP-3.3-LEVEL-MATCH */
static void ap_level(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r;
    p->vitcp.ce.attrs = (uint16_t)((p->vitcp.ce.attrs & ~VW_VITCP_ATTR_RELIABILITY_MASK) |
                                   VW_VITCP_ATTR_UNRELIABLE);
}
/* VITCP-3.3-ACCEPT-DISC-COPY */
static void ap_disc_copy(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.ce.calling_disc[0] ^= 0x20; }
/* VITCP-3.3-OPT-FORMAT: an option whose Length is under 4 */
static void ap_opt_format(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r;
    static const uint8_t bad[] = {0x00, 0x02, 0x00, 0x02, 0x00, 0x00};
    memcpy(p->opts, bad, sizeof bad);
    p->vitcp.ce.options = p->opts;
    p->vitcp.ce.options_len = sizeof bad;
    p->vitcp.trailer = VW_VITCP_TRAILER_NONE;
}
static bool el_nocrc_request(const struct tg_pdu *p) { return !p->crc && is_request(p); }
/* VITCP-3.3-OPT-EOL-WITH-CRC: CRC option without End of Option List */
static void ap_no_eol(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r;
    size_t n = vw_vitcp_opts_build(p->opts, sizeof p->opts, true, false, false);
    /* opts_build always adds EOL after CRC (3.3); drop it deliberately */
    if (n >= 2 && p->opts[n - 1] == 0 && p->opts[n - 2] == 0)
        n -= 2;
    p->vitcp.ce.options = p->opts;
    p->vitcp.ce.options_len = n;
}
/* VITCP-3.3-OPT-IGNORE-UNKNOWN: an unknown option type (legal; receivers skip it) */
static void ap_opt_unknown(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r;
    static const uint8_t unk[] = {0x7E, 0x57, 0x00, 0x08, 0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x00};
    memcpy(p->opts, unk, sizeof unk);
    p->vitcp.ce.options = p->opts;
    p->vitcp.ce.options_len = sizeof unk;
    p->vitcp.trailer = VW_VITCP_TRAILER_NONE;
}
/* VITCP-3.2-IMM-ZERO-NO-IDV */
static bool el_send_no_idv(const struct tg_pdu *p)
{
    return p->type == VW_VITCP_SEND && !(p->vitcp.hdr.flags & VW_VITCP_FLAG_IDV);
}
static void ap_imm_no_idv(struct tg_pdu *p, struct tg_rng *r) { p->vitcp.hdr.imm_data = (uint32_t)tg_rng_next(r) | 1u; }
/* VITCP-3.2-IMM-ZERO-NA */
static void ap_imm_na(struct tg_pdu *p, struct tg_rng *r) { p->vitcp.hdr.imm_data = (uint32_t)tg_rng_next(r) | 1u; }
/* VITCP-3.2-IDV-ZERO-NA */
static void ap_idv_na(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.flags |= VW_VITCP_FLAG_IDV; }
/* VITCP-3.2-SINGLE-SEGMENT: a NOP at Data Offset 64 */
static void ap_single_offset(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.data_offset = 64; }
/* VITCP-3.2-FLAGS-RESERVED (EOM on single-segment types), VITCP-3.2-EOM-LAST: EOM clear */
static void ap_no_eom(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.flags &= (uint8_t)~VW_VITCP_FLAG_EOM; }
/* VITCP-3.2-DATA-OFFSET-FIRST: single-segment message not at offset 0 */
static bool el_single_msg(const struct tg_pdu *p)
{
    return p->type == VW_VITCP_SEND && p->first_seg && p->last_seg; /* RdmaWrite would also break its RDMA Length */
}
static void ap_offset_first(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.data_offset += 8; }
/* VITCP-3.2-DATA-OFFSET-NEXT: the last segment of a multi-segment message */
static bool el_last_of_many(const struct tg_pdu *p)
{
    return p->type == VW_VITCP_SEND && !p->first_seg && p->last_seg;
}
static void ap_offset_next(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.data_offset -= 4; }
/* VITCP-3.2-MSG-NUM-SEQ */
static bool el_first_send(const struct tg_pdu *p) { return p->type == VW_VITCP_SEND && p->first_seg && p->last_seg; }
static void ap_msg_jump(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.msg_num += 7; }
/* VITCP-3.2-NOP-MSG-NUM */
static void ap_nop_num(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.msg_num += 1; }
/* VITCP-3.4-RDMA-SAME-HDR */
static bool el_write_later(const struct tg_pdu *p) { return p->type == VW_VITCP_RDMA_WRITE && !p->first_seg; }
static void ap_rdma_hdr(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.rdma.addr += 4096; }
/* VITCP-3.4-RDMA-LEN-TOTAL */
static bool el_write_single(const struct tg_pdu *p) { return p->type == VW_VITCP_RDMA_WRITE && p->first_seg && p->last_seg; }
static void ap_rdma_len(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.rdma.length += 1; }
/* VITCP-3.4-READ-RESP-LEN: the request asks for less than the responder sends */
static bool el_read_req(const struct tg_pdu *p) { return p->type == VW_VITCP_RDMA_READ_REQ; }
static void ap_read_short(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.rdma.length -= 1; }
/* VITCP-3.2-RESP-MSG-NUM */
static bool el_resp_first(const struct tg_pdu *p) { return p->type == VW_VITCP_RDMA_READ_RESP && p->first_seg && p->last_seg; }
static void ap_resp_num(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.msg_num += 100; }
/* VITCP-2.2.2.2.6-READ-WINDOW: the responder announces no read resources */
static void ap_window_zero(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.ce.rdma_read_window = 0; }
static bool el_accept_rdma_read(const struct tg_pdu *p)
{
    return is_accept(p) && (p->vitcp.ce.attrs & VW_VITCP_ATTR_RDMA_READ);
}
/* VITCP-3.2-RX-DESC-POSTED: the count goes back */
static bool el_data_not_ce(const struct tg_pdu *p) { return is_data(p) && p->vitcp.hdr.rx_desc_posted >= 16; }
static void ap_rx_back(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.rx_desc_posted -= 16; }
/* VITCP-3.2-DFC-DELAY: no descriptors announced, the peer sends anyway */
static bool el_accept_dfc(const struct tg_pdu *p) { return is_accept(p) && p->dfc; }
static void ap_no_desc(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.rx_desc_posted = 0; }
/* VITCP-3.2-EOM-LAST: the last segment lacks EOM and another message follows */
static bool el_send_last(const struct tg_pdu *p)
{
    return p->type == VW_VITCP_SEND && p->last_seg && !p->first_seg;
}
/* VITCP-2.2.2.2.5-RETX-SAME-DATA: a TCP retransmission with other bytes */
static void ap_retx(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->post_retx_differs = true; }
/* VITCP-3.2-SEG-LEN-EXACT: a NOP carrying 8 bytes it has no room for */
static void ap_nop_payload(struct tg_pdu *p, struct tg_rng *r)
{
    tg_rng_fill(r, p->opts, 8);
    p->vitcp.payload = p->opts;
    p->vitcp.payload_len = 8;
}

/* VITCP-3.6-CRC-ONLY-IF-NEGOTIATED: a trailer on a connection that did not negotiate CRC */
static bool el_nocrc_data(const struct tg_pdu *p) { return !p->crc && is_data(p); }
static void ap_unneg_trailer(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.trailer = VW_VITCP_TRAILER_CRC; }
/* VITCP-3.5-CE-TRAILER-IFF-OPT: a ConnectRequest with a (correct) trailer but no CRC option */
static void ap_ce_trailer_no_opt(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.trailer = VW_VITCP_TRAILER_CRC; }
/* VITCP-3.2-IDV-EACH-SEGMENT: a later segment of a Send with IDV toggled */
static bool el_send_later(const struct tg_pdu *p) { return p->type == VW_VITCP_SEND && !p->first_seg; }
static void ap_idv_toggle(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r;
    p->vitcp.hdr.flags ^= VW_VITCP_FLAG_IDV;
    if (!(p->vitcp.hdr.flags & VW_VITCP_FLAG_IDV))
        p->vitcp.hdr.imm_data = 0;
}
/* VITCP-3-CE-HDR-PRESENT: a ConnectRequest cut after 40 bytes, Segment Length saying so */
static void ap_ce_cut(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r;
    p->vitcp.keep_seg_len = true;
    p->vitcp.hdr.seg_len = 40;
    p->post_truncate = 40;
}
/* VITCP-3.3-OPT-LEN-FIXED: the CRC option with Length 8 */
static void ap_opt_len(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r;
    static const uint8_t opt[] = {0x00, 0x01, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    memcpy(p->opts, opt, sizeof opt);
    p->vitcp.ce.options = p->opts;
    p->vitcp.ce.options_len = sizeof opt;
}
/* VITCP-3.2-TXERR-SEEN: Transmit Error on a Send segment */
static bool el_send(const struct tg_pdu *p) { return p->type == VW_VITCP_SEND; }
static void ap_txerr(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->vitcp.hdr.flags |= VW_VITCP_FLAG_TXERR; }

#define M(sym, el, ap, what) {VW_REQ_##sym, TG_VITCP, what, el, ap}
const struct tg_mutation tg_vitcp_mutations[] = {
    M(VITCP_3_6_CRC_VALID, el_crc_data, ap_bad_crc, "trailer CRC with every bit inverted"),
    M(VITCP_3_6_CRC_READING, el_crc_data, ap_crc_be, "right CRC written most significant byte first"),
    M(VITCP_3_6_ACCEPT_CRC_ONLY_IF_REQ, el_nocrc_accept, ap_accept_crc, "ConnectAccept adds the CRC option the request lacked"),
    M(VITCP_3_2_VERSION, el_data, ap_version, "Version 2 in a data segment"),
    M(VITCP_3_2_TYPE_KNOWN, is_nop, ap_type, "NOP sent as unknown type 17"),
    M(VITCP_3_2_SEG_LEN_MIN, is_nop, ap_seg_len_min, "Segment Length 20, under the 24-byte header"),
    M(VITCP_3_RDMA_HDR_PRESENT, el_write_single, ap_rdma_hdr_cut, "single-segment RdmaWrite with Segment Length 32, under its 40 header bytes"),
    M(VITCP_3_2_SEG_LEN_HEADERS, el_crc_nop, ap_nop_no_trailer, "NOP without the negotiated trailer"),
    M(VITCP_3_2_ERR_RESERVED, el_data, ap_err_reserved, "reserved Remote Error Code bit set"),
    M(VITCP_3_3_ATTR_RESERVED, is_request, ap_attr_reserved, "reserved Calling Attributes bit set"),
    M(VITCP_3_3_ONE_LEVEL, is_request, ap_two_levels, "two reliability levels requested"),
    M(VITCP_3_3_DISC_LEN_MAX, is_request, ap_disc_len, "Calling Discriminator Length 65"),
    M(VITCP_3_3_DISC_PAD_ZERO, is_request, ap_disc_pad, "non-zero byte after the discriminator"),
    M(VITCP_3_3_MTU_NONZERO, is_request, ap_mtu_zero, "MTU 0 requested"),
    M(VITCP_3_3_MTU_LESSER, is_accept, ap_mtu_more, "ConnectAccept MTU above the request's"),
    M(VITCP_3_3_LEVEL_MATCH, is_accept, ap_level, "ConnectAccept with another reliability level"),
    M(VITCP_3_3_RESPONSE_DISC, is_accept, ap_disc_copy, "ConnectAccept discriminator not copied"),
    M(VITCP_3_3_OPT_FORMAT, el_nocrc_request, ap_opt_format, "option with Length 2"),
    M(VITCP_3_3_OPT_EOL_WITH_CRC, el_crc_request, ap_no_eol, "CRC option without End of Option List"),
    M(VITCP_3_3_OPT_IGNORE_UNKNOWN, el_nocrc_request, ap_opt_unknown, "unknown option type 0x7E57"),
    M(VITCP_3_2_IMM_ZERO_NO_IDV, el_send_no_idv, ap_imm_no_idv, "Immediate Data without IDV"),
    M(VITCP_3_2_IMM_ZERO_NA, is_nop, ap_imm_na, "Immediate Data in a NOP"),
    M(VITCP_3_2_IDV_ZERO_NA, is_nop, ap_idv_na, "IDV set on a NOP"),
    M(VITCP_3_2_SINGLE_SEGMENT, is_nop, ap_single_offset, "NOP at Data Offset 64"),
    M(VITCP_3_2_FLAGS_RESERVED, is_nop, ap_no_eom, "NOP without EOM"),
    M(VITCP_3_2_DATA_OFFSET_FIRST, el_single_msg, ap_offset_first, "message starting at Data Offset 8"),
    M(VITCP_3_2_DATA_OFFSET_NEXT, el_last_of_many, ap_offset_next, "last segment 4 bytes back"),
    M(VITCP_3_2_MSG_NUM_SEQ, el_first_send, ap_msg_jump, "Message Number jumps by 7"),
    M(VITCP_3_2_NOP_MSG_NUM, is_nop, ap_nop_num, "NOP with the next, unsent Message Number"),
    M(VITCP_3_4_RDMA_SAME_HDR, el_write_later, ap_rdma_hdr, "later RdmaWrite segment with another RDMA Address"),
    M(VITCP_3_4_RDMA_LEN_TOTAL, el_write_single, ap_rdma_len, "RDMA Length one more than the data"),
    M(VITCP_3_4_READ_RESP_LEN, el_read_req, ap_read_short, "read request one byte shorter than the response"),
    M(VITCP_3_2_RESP_MSG_NUM, el_resp_first, ap_resp_num, "RdmaReadResponse with no matching request"),
    M(VITCP_2_2_READ_WINDOW, el_accept_rdma_read, ap_window_zero, "responder announces RDMA read window 0, reads follow"),
    M(VITCP_3_2_RX_DESC_MOD, el_data_not_ce, ap_rx_back, "Rx Descriptors Posted goes back by 16"),
    M(VITCP_3_2_DFC_DELAY, el_accept_dfc, ap_no_desc, "no descriptors posted, the peer sends anyway"),
    M(VITCP_3_2_EOM_LAST, el_send_last, ap_no_eom, "message without EOM, the next one starts"),
    M(VITCP_2_2_RETX_SAME_DATA, el_data, ap_retx, "TCP retransmission of a segment with one byte changed"),
    M(VITCP_3_2_SEG_LEN_EXACT, is_nop, ap_nop_payload, "NOP 8 bytes longer than its header"),
    M(VITCP_3_6_CRC_ONLY_IF_NEGOTIATED, el_nocrc_data, ap_unneg_trailer, "data segment with a (correct) trailer CRC on a connection without CRC"),
    M(VITCP_3_5_CE_TRAILER_IFF_OPT, el_nocrc_request, ap_ce_trailer_no_opt, "ConnectRequest with a trailer CRC but no CRC option"),
    M(VITCP_3_2_IDV_EACH_SEGMENT, el_send_later, ap_idv_toggle, "later Send segment with Immediate Data Valid unlike the first"),
    M(VITCP_3_CE_HDR_PRESENT, is_request, ap_ce_cut, "ConnectRequest cut to 40 bytes, under its CE header"),
    M(VITCP_3_3_OPT_LEN_FIXED, el_crc_request, ap_opt_len, "CRC option with Length 8"),
    M(VITCP_3_2_TXERR_SEEN, el_send, ap_txerr, "Transmit Error set on a Send segment"),
};
const size_t tg_vitcp_mutation_count = sizeof tg_vitcp_mutations / sizeof tg_vitcp_mutations[0];
