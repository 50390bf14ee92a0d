/*
 * VI/TCP segment codec: decode with every bound checked, stateless rule
 * checks, and an encoder that can write deliberately wrong values.
 * The layout and the readings of the draft are described in vitcp.h.
 */
#include <string.h>
#include "vitcp/bytes.h"
#include "vitcp/checksum.h"
#include "vitcp/vitcp.h"

/* Offsets inside the segment (draft section 3.2 / 3.3 / 3.4). */
enum {
    OFF_VERSION = 0,
    OFF_TYPE = 1,
    OFF_SEG_LEN = 2,
    OFF_DATA_OFFSET = 4,
    OFF_IMM = 8,
    OFF_MSG_NUM = 12,
    OFF_MSG_ACK = 16,
    OFF_RX_POSTED = 20,
    OFF_REMOTE_ERR = 22,
    OFF_CE = VW_VITCP_SEG_HDR_LEN,
    OFF_CE_CALLING_DISC = OFF_CE + 8,
    OFF_CE_READ_WINDOW = OFF_CE + 72,
    OFF_CE_CALLED_DISC = OFF_CE + 76,
    OFF_CE_OPTIONS = OFF_CE + VW_VITCP_CE_HDR_LEN,
};

static const char *const type_names[VW_VITCP_TYPE_COUNT] = {
    "Send", "RdmaWrite", "RdmaReadRequest", "RdmaReadResponse", "NOP",
    "ConnectRequest", "ConnectAccept", "ConnectReject", "ConnectNoMatch",
};

const char *vw_vitcp_type_name(unsigned type)
{
    return type < VW_VITCP_TYPE_COUNT ? type_names[type] : "Unknown";
}

const char *vw_vitcp_opt_name(unsigned opt_type)
{
    switch (opt_type) {
    case VW_VITCP_OPT_EOL: return "End of Option List";
    case VW_VITCP_OPT_CRC: return "CRC";
    case VW_VITCP_OPT_URGENT: return "Urgent Marker";
    default: return "Unknown";
    }
}

bool vw_vitcp_type_has_rdma(unsigned type)
{
    return type == VW_VITCP_RDMA_WRITE || type == VW_VITCP_RDMA_READ_REQ;
}

bool vw_vitcp_type_has_ce(unsigned type)
{
    return type == VW_VITCP_CONNECT_REQUEST || type == VW_VITCP_CONNECT_ACCEPT;
}

bool vw_vitcp_type_has_payload(unsigned type)
{
    return type == VW_VITCP_SEND || type == VW_VITCP_RDMA_WRITE || type == VW_VITCP_RDMA_READ_RESP;
}

bool vw_vitcp_type_supports_imm(unsigned type)
{
    return type == VW_VITCP_SEND || type == VW_VITCP_RDMA_WRITE;
}

bool vw_vitcp_type_single_segment(unsigned type)
{
    return type < VW_VITCP_TYPE_COUNT && !vw_vitcp_type_has_payload(type);
}

size_t vw_vitcp_type_hdr_len(unsigned type)
{
    size_t n = VW_VITCP_SEG_HDR_LEN;
    if (vw_vitcp_type_has_rdma(type))
        n += VW_VITCP_RDMA_HDR_LEN;
    if (vw_vitcp_type_has_ce(type))
        n += VW_VITCP_CE_HDR_LEN;
    return n;
}

int vw_vitcp_opt_next(const uint8_t *opts, size_t opts_len, size_t *pos, uint16_t *type,
                      uint16_t *len, const uint8_t **data)
{
    size_t p = *pos;
    if (p >= opts_len)
        return 0;
    if (opts_len - p < 2)
        return -1; /* a lone byte cannot be an option */
    *type = vw_get_be16(opts + p);
    if (*type == VW_VITCP_OPT_EOL) {
        *len = 2;
        *data = NULL;
        *pos = p + 2;
        return 0;
    }
    if (opts_len - p < VW_VITCP_OPT_HDR_LEN)
        return -1;
    *len = vw_get_be16(opts + p + 2);
    if (*len < VW_VITCP_OPT_HDR_LEN || *len > opts_len - p)
        return -1;
    *data = opts + p + VW_VITCP_OPT_HDR_LEN;
    *pos = p + *len;
    return 1;
}

size_t vw_vitcp_opts_build(uint8_t *buf, size_t cap, bool crc, bool urgent, bool eol)
{
    size_t need = (crc ? 4u : 0u) + (urgent ? 4u : 0u) + ((eol || crc) ? 2u : 0u);
    if (cap < need)
        return 0;
    size_t n = 0;
    if (crc) {
        vw_put_be16(buf + n, VW_VITCP_OPT_CRC);
        vw_put_be16(buf + n + 2, 4);
        n += 4;
    }
    if (urgent) {
        vw_put_be16(buf + n, VW_VITCP_OPT_URGENT);
        vw_put_be16(buf + n + 2, 4);
        n += 4;
    }
    if (eol || crc) {
        vw_put_be16(buf + n, VW_VITCP_OPT_EOL);
        n += 2;
    }
    return n;
}

static void decode_hdr(const uint8_t *b, struct vw_vitcp_hdr *h)
{
    h->version = b[OFF_VERSION];
    h->type = b[OFF_TYPE] & VW_VITCP_TYPE_MASK;
    h->flags = b[OFF_TYPE] & (uint8_t)~VW_VITCP_TYPE_MASK;
    h->seg_len = vw_get_be16(b + OFF_SEG_LEN);
    h->data_offset = vw_get_be32(b + OFF_DATA_OFFSET);
    h->imm_data = vw_get_be32(b + OFF_IMM);
    h->msg_num = vw_get_be32(b + OFF_MSG_NUM);
    h->msg_ack = vw_get_be32(b + OFF_MSG_ACK);
    h->rx_desc_posted = vw_get_be16(b + OFF_RX_POSTED);
    h->remote_err = vw_get_be16(b + OFF_REMOTE_ERR);
}

static void decode_ce(const uint8_t *b, struct vw_vitcp_ce *ce)
{
    const uint8_t *p = b + OFF_CE;
    ce->attrs = vw_get_be16(p);
    ce->calling_disc_len = vw_get_be16(p + 2);
    ce->mtu = vw_get_be32(p + 4);
    memcpy(ce->calling_disc, p + 8, VW_VITCP_DISC_MAX);
    ce->rdma_read_window = vw_get_be16(p + 72);
    ce->called_disc_len = vw_get_be16(p + 74);
    memcpy(ce->called_disc, p + 76, VW_VITCP_DISC_MAX);
}

/* Whether the last four bytes are the CRC of the rest: under the reading of
 * spec-decisions V3/V4 (either placement), and with all_readings also under
 * the MSB-first reading (V4). The capture-started-mid-connection inference
 * and CE segments use every reading; the unnegotiated-trailer check on every
 * no-CRC data segment uses the fast one only (an unnegotiated trailer in
 * another reading is not recognised: a 4-byte payload tail is not worth a
 * second CRC pass over every segment of a provider). */
static bool trailer_matches(const uint8_t *b, size_t n, bool all_readings)
{
    size_t at = n - VW_VITCP_CRC_LEN;
    uint32_t crc = vw_crc_vitcp(b, at);
    if (vw_get_le32(b + at) == crc || vw_get_be32(b + at) == crc)
        return true;
    if (!all_readings)
        return false;
    uint32_t msb = vw_crc_vitcp_msb_first(b, at);
    return vw_get_le32(b + at) == msb || vw_get_be32(b + at) == msb;
}

/* Options of a CE segment in area bytes: the summary in ce, where an End of
 * Option List ends (0: none) and whether the walk hit a malformed option. */
static bool walk_options(const uint8_t *opts, size_t area, struct vw_vitcp_ce *ce, size_t *eol_end,
                         size_t *stop)
{
    size_t pos = 0;
    uint16_t type = 0, len = 0;
    const uint8_t *data;
    int r;
    ce->opt_crc = ce->opt_urgent = ce->opt_eol = false;
    ce->opt_unknown = 0;
    *eol_end = 0;
    while ((r = vw_vitcp_opt_next(opts, area, &pos, &type, &len, &data)) == 1) {
        if (type == VW_VITCP_OPT_CRC)
            ce->opt_crc = true;
        else if (type == VW_VITCP_OPT_URGENT)
            ce->opt_urgent = true;
        else
            ce->opt_unknown++;
    }
    if (r == 0 && pos <= area && type == VW_VITCP_OPT_EOL && pos > 0 &&
        vw_get_be16(opts + pos - 2) == VW_VITCP_OPT_EOL) {
        ce->opt_eol = true;
        *eol_end = pos;
    }
    *stop = pos;
    return r < 0;
}

/*
 * Walk the options of a CE segment (V5). Options run to EOL or to the end of
 * the segment; the trailer (3.5) is there when the CRC option is, unless the
 * End of Option List ends the segment and the last four bytes are no CRC
 * (then the option came without its trailer); without the option, four
 * bytes after the options that are the CRC of the rest are a trailer all the
 * same (a false match has probability 2^-32). Either mismatch is
 * VITCP-3.5-CE-TRAILER-IFF-OPT (check_ce). EOL must come before the trailer
 * (3.3). Sets the option summary and options/options_len; returns whether
 * the trailer is present.
 */
static bool walk_ce_options(const uint8_t *b, size_t n, struct vw_vitcp_seg *seg,
                            struct vw_findings *fs)
{
    struct vw_vitcp_ce *ce = &seg->ce;
    const uint8_t *opts = b + OFF_CE_OPTIONS;
    size_t area = n - OFF_CE_OPTIONS;
    size_t eol_end, pos;
    bool malformed = walk_options(opts, area, ce, &eol_end, &pos);
    bool room = n >= OFF_CE_OPTIONS + VW_VITCP_CRC_LEN;
    bool trailer;
    if (ce->opt_crc) {
        /* the CRC is computed only when the options end the segment */
        trailer = room && !(ce->opt_eol && eol_end == area && !trailer_matches(b, n, true));
    } else if (room && trailer_matches(b, n, true)) {
        /* The trailer's bytes were walked as options: walk again without them. */
        struct vw_vitcp_ce without;
        size_t eol2, pos2;
        bool bad2 = walk_options(opts, area - VW_VITCP_CRC_LEN, &without, &eol2, &pos2);
        trailer = !without.opt_crc;
        if (trailer) {
            ce->opt_urgent = without.opt_urgent;
            ce->opt_eol = without.opt_eol;
            ce->opt_unknown = without.opt_unknown;
            eol_end = eol2;
            pos = pos2;
            malformed = bad2;
        }
    } else {
        trailer = false;
    }
    size_t opt_area = trailer ? area - VW_VITCP_CRC_LEN : area;
    if (trailer && ce->opt_crc && (!ce->opt_eol || eol_end > opt_area)) {
        vw_findings_add(fs, VW_REQ_VITCP_3_3_OPT_EOL_WITH_CRC, VW_SEV_ERROR, OFF_CE_OPTIONS,
                        (uint32_t)area, "CRC option without End of Option List before the trailer");
        malformed = false; /* the trailer bytes were read as options; not a format error of its own */
    }
    if (malformed)
        vw_findings_add(fs, VW_REQ_VITCP_3_3_OPT_FORMAT, VW_SEV_ERROR, (uint32_t)(OFF_CE_OPTIONS + pos),
                        (uint32_t)(opt_area > pos ? opt_area - pos : 0),
                        "malformed option (Length under 4 or past the segment)");
    ce->options = opts;
    ce->options_len = ce->opt_eol && eol_end <= opt_area ? eol_end : opt_area;
    return trailer;
}

static void check_crc(const uint8_t *b, size_t n, struct vw_vitcp_seg *seg, struct vw_findings *fs)
{
    size_t at = n - VW_VITCP_CRC_LEN;
    seg->has_crc = true;
    seg->crc_wire = vw_get_le32(b + at);
    seg->crc_computed = vw_crc_vitcp(b, at);
    seg->crc_ok = seg->crc_wire == seg->crc_computed;
    if (seg->crc_ok)
        return;
    uint32_t be = vw_get_be32(b + at);
    uint32_t msb = vw_crc_vitcp_msb_first(b, at);
    const char *reading = NULL;
    if (be == seg->crc_computed)
        reading = "big-endian placement of the CRC";
    else if (seg->crc_wire == msb)
        reading = "MSB-first (non-reflected) CRC";
    else if (be == msb)
        reading = "MSB-first CRC in big-endian placement";
    if (reading)
        vw_findings_add(fs, VW_REQ_VITCP_3_6_CRC_READING, VW_SEV_WARN, (uint32_t)at, 4,
                        "CRC does not match as placed by spec-decisions V3/V4 but matches the %s",
                        reading);
    else
        vw_findings_add(fs, VW_REQ_VITCP_3_6_CRC_VALID, VW_SEV_ERROR, (uint32_t)at, 4,
                        "bad CRC 0x%08x, expected 0x%08x", seg->crc_wire, seg->crc_computed);
}

enum vw_req vw_vitcp_decode(const uint8_t *buf, size_t len, enum vw_vitcp_crc_mode crc_mode,
                            struct vw_vitcp_seg *seg, struct vw_findings *fs)
{
    memset(seg, 0, sizeof *seg);
    if (len < VW_VITCP_SEG_HDR_LEN) {
        if (len >= 4) {
            seg->hdr.version = buf[OFF_VERSION];
            seg->hdr.type = buf[OFF_TYPE] & VW_VITCP_TYPE_MASK;
            seg->hdr.flags = buf[OFF_TYPE] & (uint8_t)~VW_VITCP_TYPE_MASK;
            seg->hdr.seg_len = vw_get_be16(buf + OFF_SEG_LEN);
        }
        return VW_REQ_VITCP_3_2_SEG_LEN_MIN;
    }
    decode_hdr(buf, &seg->hdr);
    size_t n = seg->hdr.seg_len;
    unsigned type = seg->hdr.type;
    if (n < VW_VITCP_SEG_HDR_LEN)
        return VW_REQ_VITCP_3_2_SEG_LEN_MIN;
    if (n > len)
        return VW_REQ_VITCP_3_2_SEG_LEN_EXACT; /* truncated: fewer bytes than announced */
    if (type >= VW_VITCP_TYPE_COUNT)
        return VW_REQ_VITCP_3_2_TYPE_KNOWN;

    size_t hl = vw_vitcp_type_hdr_len(type);
    if (n < hl)
        return vw_vitcp_type_has_ce(type)     ? VW_REQ_VITCP_3_CE_HDR_PRESENT
               : vw_vitcp_type_has_rdma(type) ? VW_REQ_VITCP_3_RDMA_HDR_PRESENT
                                              : VW_REQ_VITCP_3_2_SEG_LEN_HEADERS;
    if (vw_vitcp_type_has_rdma(type)) {
        const uint8_t *r = buf + VW_VITCP_SEG_HDR_LEN;
        seg->has_rdma = true;
        seg->rdma.addr = vw_get_be64(r);
        seg->rdma.handle = vw_get_be32(r + 8);
        seg->rdma.length = vw_get_be32(r + 12);
    }

    bool trailer;
    if (vw_vitcp_type_has_ce(type)) {
        seg->has_ce = true;
        decode_ce(buf, &seg->ce);
        trailer = walk_ce_options(buf, n, seg, fs);
    } else if (type == VW_VITCP_CONNECT_REJECT || type == VW_VITCP_CONNECT_NOMATCH) {
        trailer = n >= VW_VITCP_SEG_HDR_LEN + VW_VITCP_CRC_LEN; /* V6: 24 or 28 */
        if (n != VW_VITCP_SEG_HDR_LEN && n != VW_VITCP_SEG_HDR_LEN + VW_VITCP_CRC_LEN)
            vw_findings_add(fs, VW_REQ_VITCP_3_2_SEG_LEN_EXACT, VW_SEV_ERROR, OFF_SEG_LEN, 2,
                            "%s is %zu bytes; it must be 24 or 28", vw_vitcp_type_name(type), n);
    } else if (crc_mode == VW_VITCP_CRC_ON) {
        trailer = true;
        if (n < hl + VW_VITCP_CRC_LEN)
            return VW_REQ_VITCP_3_2_SEG_LEN_HEADERS;
    } else if (crc_mode == VW_VITCP_CRC_AUTO) {
        trailer = n >= hl + VW_VITCP_CRC_LEN && trailer_matches(buf, n, true);
        if (trailer)
            vw_findings_add(fs, VW_REQ_VITCP_3_6_CRC_ONLY_IF_NEGOTIATED, VW_SEV_NOTE, (uint32_t)(n - 4), 4,
                            "CE exchange not seen: trailer CRC inferred from its value");
    } else {
        /* Not negotiated: a trailer that is there anyway shows as the CRC of
         * the rest (a false match has probability 2^-32). */
        trailer = n >= hl + VW_VITCP_CRC_LEN && trailer_matches(buf, n, false);
        if (trailer)
            vw_findings_add(fs, VW_REQ_VITCP_3_6_CRC_ONLY_IF_NEGOTIATED, VW_SEV_ERROR, (uint32_t)(n - 4), 4,
                            "trailer CRC present although the CE exchange did not negotiate it");
    }

    size_t body_end = trailer ? n - VW_VITCP_CRC_LEN : n;
    if (!seg->has_ce) {
        seg->payload_offset = hl;
        seg->payload = buf + hl;
        seg->payload_len = body_end - hl;
    } else {
        seg->payload_offset = body_end;
        seg->payload = buf + body_end;
        seg->payload_len = 0;
    }
    if (trailer)
        check_crc(buf, n, seg, fs);
    vw_vitcp_check_segment(seg, fs);
    return VW_REQ_NONE;
}

static unsigned popcount16(unsigned v)
{
    unsigned c = 0;
    for (; v; v &= v - 1)
        c++;
    return c;
}

static void check_ce(const struct vw_vitcp_seg *seg, struct vw_findings *fs)
{
    const struct vw_vitcp_ce *ce = &seg->ce;
    unsigned levels = popcount16(ce->attrs & VW_VITCP_ATTR_RELIABILITY_MASK);
    if (levels != 1)
        vw_findings_add(fs, VW_REQ_VITCP_3_3_ONE_LEVEL, VW_SEV_ERROR, OFF_CE, 2,
                        "%u reliability bits set in Calling Attributes 0x%04x; exactly one is allowed",
                        levels, ce->attrs);
    if (ce->attrs & VW_VITCP_ATTR_RESERVED)
        vw_findings_add(fs, VW_REQ_VITCP_3_3_ATTR_RESERVED, VW_SEV_WARN, OFF_CE, 2,
                        "reserved Calling Attributes bits 0x%04x set", ce->attrs & VW_VITCP_ATTR_RESERVED);
    const struct { uint16_t len; const uint8_t *disc; unsigned off; const char *name; } d[2] = {
        {ce->calling_disc_len, ce->calling_disc, OFF_CE_CALLING_DISC, "Calling"},
        {ce->called_disc_len, ce->called_disc, OFF_CE_CALLED_DISC, "Called"},
    };
    for (int i = 0; i < 2; i++) {
        if (d[i].len > VW_VITCP_DISC_MAX) {
            vw_findings_add(fs, VW_REQ_VITCP_3_3_DISC_LEN_MAX, VW_SEV_ERROR, d[i].off - (i ? 2u : 6u), 2,
                            "%s Discriminator Length %u exceeds 64", d[i].name, d[i].len);
            continue;
        }
        for (unsigned k = d[i].len; k < VW_VITCP_DISC_MAX; k++)
            if (d[i].disc[k]) {
                vw_findings_add(fs, VW_REQ_VITCP_3_3_DISC_PAD_ZERO, VW_SEV_NOTE, d[i].off + k,
                                VW_VITCP_DISC_MAX - k, "%s Discriminator not zero-filled past its length",
                                d[i].name);
                break;
            }
    }
    if (ce->mtu == 0)
        vw_findings_add(fs, VW_REQ_VITCP_3_3_MTU_NONZERO, VW_SEV_ERROR, OFF_CE + 4, 4, "MTU Size 0");
    else if (ce->mtu < VW_VITCP_MTU_NOTE_BELOW)
        vw_findings_add(fs, VW_REQ_VITCP_3_3_MTU_NONZERO, VW_SEV_NOTE, OFF_CE + 4, 4,
                        "MTU Size %u is under 32 KiB", ce->mtu);
    if (!(ce->attrs & VW_VITCP_ATTR_RDMA_READ) && ce->rdma_read_window != 0)
        vw_findings_add(fs, VW_REQ_VITCP_2_2_READ_WINDOW, VW_SEV_NOTE, OFF_CE_READ_WINDOW, 2,
                        "RDMA Read Window %u without RDMA Read Enable (V18: 0 expected)",
                        ce->rdma_read_window);
    /* Walk again for per-option rules (the decoder kept only a summary). */
    size_t pos = 0;
    uint16_t type, len;
    const uint8_t *data;
    size_t start;
    while (start = pos, vw_vitcp_opt_next(ce->options, ce->options_len, &pos, &type, &len, &data) == 1) {
        uint32_t at = (uint32_t)(OFF_CE_OPTIONS + start);
        if ((type == VW_VITCP_OPT_CRC || type == VW_VITCP_OPT_URGENT) && len != 4)
            vw_findings_add(fs, VW_REQ_VITCP_3_3_OPT_LEN_FIXED, VW_SEV_WARN, at, len,
                            "%s option with Length %u (4 expected)", vw_vitcp_opt_name(type), len);
        else if (type != VW_VITCP_OPT_CRC && type != VW_VITCP_OPT_URGENT)
            vw_findings_add(fs, VW_REQ_VITCP_3_3_OPT_IGNORE_UNKNOWN, VW_SEV_NOTE, at, len,
                            "unknown option type %u (ignored by receivers)", type);
    }
    if (seg->has_crc != ce->opt_crc)
        vw_findings_add(fs, VW_REQ_VITCP_3_5_CE_TRAILER_IFF_OPT, VW_SEV_ERROR, 0, 0,
                        "CE segment trailer present=%d but CRC option present=%d", seg->has_crc, ce->opt_crc);
}

void vw_vitcp_check_segment(const struct vw_vitcp_seg *seg, struct vw_findings *fs)
{
    const struct vw_vitcp_hdr *h = &seg->hdr;
    unsigned type = h->type;
    if (h->version != VW_VITCP_VERSION)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_VERSION, VW_SEV_ERROR, OFF_VERSION, 1,
                        "Version %u (this draft is version 1)", h->version);
    if (type >= VW_VITCP_TYPE_COUNT) {
        vw_findings_add(fs, VW_REQ_VITCP_3_2_TYPE_KNOWN, VW_SEV_ERROR, OFF_TYPE, 1, "unknown type %u", type);
        return;
    }
    bool imm_ok = vw_vitcp_type_supports_imm(type);
    if (!imm_ok && (h->flags & VW_VITCP_FLAG_IDV))
        vw_findings_add(fs, VW_REQ_VITCP_3_2_IDV_ZERO_NA, VW_SEV_ERROR, OFF_TYPE, 1,
                        "Immediate Data Valid set on %s", vw_vitcp_type_name(type));
    if (!imm_ok && h->imm_data != 0)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_IMM_ZERO_NA, VW_SEV_ERROR, OFF_IMM, 4,
                        "Immediate Data 0x%08x on %s (must be 0)", h->imm_data, vw_vitcp_type_name(type));
    if (imm_ok && !(h->flags & VW_VITCP_FLAG_IDV) && h->imm_data != 0)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_IMM_ZERO_NO_IDV, VW_SEV_NOTE, OFF_IMM, 4,
                        "Immediate Data 0x%08x with Immediate Data Valid clear", h->imm_data);
    if (vw_vitcp_type_single_segment(type)) {
        if (h->data_offset != 0)
            vw_findings_add(fs, VW_REQ_VITCP_3_2_SINGLE_SEGMENT, VW_SEV_ERROR, OFF_DATA_OFFSET, 4,
                            "Data Offset %u on single-segment %s", h->data_offset, vw_vitcp_type_name(type));
        if (!(h->flags & VW_VITCP_FLAG_EOM))
            vw_findings_add(fs, VW_REQ_VITCP_3_2_FLAGS_RESERVED, VW_SEV_ERROR, OFF_TYPE, 1,
                            "End of Message clear on single-segment %s", vw_vitcp_type_name(type));
        if ((h->flags & VW_VITCP_FLAG_TXERR) && type != VW_VITCP_RDMA_READ_REQ)
            vw_findings_add(fs, VW_REQ_VITCP_3_2_FLAGS_RESERVED, VW_SEV_WARN, OFF_TYPE, 1,
                            "Transmit Error set on %s", vw_vitcp_type_name(type));
    }
    if ((h->flags & VW_VITCP_FLAG_TXERR) && vw_vitcp_type_has_payload(type))
        vw_findings_add(fs, VW_REQ_VITCP_3_2_TXERR_SEEN, VW_SEV_NOTE, OFF_TYPE, 1,
                        "Transmit Error: the receiver must treat the whole message as in error");
    if (h->remote_err & VW_VITCP_ERR_RESERVED)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_ERR_RESERVED, VW_SEV_WARN, OFF_REMOTE_ERR, 2,
                        "reserved Remote Error Code bits 0x%04x set", h->remote_err & VW_VITCP_ERR_RESERVED);
    if (!vw_vitcp_type_has_payload(type) && !seg->has_ce && seg->payload_len != 0 &&
        type != VW_VITCP_CONNECT_REJECT && type != VW_VITCP_CONNECT_NOMATCH)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_SEG_LEN_EXACT, VW_SEV_ERROR, (uint32_t)seg->payload_offset,
                        (uint32_t)seg->payload_len, "%zu bytes of payload on %s, which carries none",
                        seg->payload_len, vw_vitcp_type_name(type));
    if ((uint64_t)h->data_offset + seg->payload_len > UINT32_MAX + (uint64_t)1)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_MSG_SIZE_4G, VW_SEV_ERROR, OFF_DATA_OFFSET, 4,
                        "message passes 4 GiB");
    if ((type == VW_VITCP_CONNECT_REJECT || type == VW_VITCP_CONNECT_NOMATCH) && h->msg_num != 0)
        vw_findings_add(fs, VW_REQ_VITCP_3_2_MSG_NUM_SEQ, VW_SEV_NOTE, OFF_MSG_NUM, 4,
                        "%s carries Message Number %u (V14: 0)", vw_vitcp_type_name(type), h->msg_num);
    if (seg->has_ce)
        check_ce(seg, fs);
}

/* ---------------------------------------------------------------- encoder */

static const uint8_t opts_crc_eol[] = {0, VW_VITCP_OPT_CRC, 0, 4, 0, VW_VITCP_OPT_EOL};

void vw_vitcp_enc_init(struct vw_vitcp_enc *enc, unsigned type, bool crc_on)
{
    memset(enc, 0, sizeof *enc);
    enc->hdr.version = VW_VITCP_VERSION;
    enc->hdr.type = (uint8_t)type;
    enc->hdr.flags = VW_VITCP_FLAG_EOM;
    enc->with_rdma = vw_vitcp_type_has_rdma(type);
    enc->with_ce = vw_vitcp_type_has_ce(type);
    if (enc->with_ce) {
        enc->ce.attrs = VW_VITCP_ATTR_RELIABLE_DELIVERY;
        enc->ce.mtu = 65536;
        if (crc_on) {
            enc->ce.options = opts_crc_eol;
            enc->ce.options_len = sizeof opts_crc_eol;
        }
    }
    enc->trailer = crc_on ? VW_VITCP_TRAILER_CRC : VW_VITCP_TRAILER_NONE;
}

size_t vw_vitcp_encoded_len(const struct vw_vitcp_enc *enc)
{
    size_t n = VW_VITCP_SEG_HDR_LEN + enc->payload_len;
    if (enc->with_rdma)
        n += VW_VITCP_RDMA_HDR_LEN;
    if (enc->with_ce)
        n += VW_VITCP_CE_HDR_LEN + enc->ce.options_len;
    if (enc->trailer != VW_VITCP_TRAILER_NONE)
        n += VW_VITCP_CRC_LEN;
    return n;
}

size_t vw_vitcp_encode(const struct vw_vitcp_enc *enc, uint8_t *buf, size_t cap)
{
    size_t n = vw_vitcp_encoded_len(enc);
    if (n > cap || (!enc->keep_seg_len && n > VW_VITCP_SEG_MAX))
        return 0;
    const struct vw_vitcp_hdr *h = &enc->hdr;
    buf[OFF_VERSION] = h->version;
    buf[OFF_TYPE] = (uint8_t)((h->type & VW_VITCP_TYPE_MASK) | (h->flags & ~VW_VITCP_TYPE_MASK));
    vw_put_be16(buf + OFF_SEG_LEN, enc->keep_seg_len ? h->seg_len : (uint16_t)n);
    vw_put_be32(buf + OFF_DATA_OFFSET, h->data_offset);
    vw_put_be32(buf + OFF_IMM, h->imm_data);
    vw_put_be32(buf + OFF_MSG_NUM, h->msg_num);
    vw_put_be32(buf + OFF_MSG_ACK, h->msg_ack);
    vw_put_be16(buf + OFF_RX_POSTED, h->rx_desc_posted);
    vw_put_be16(buf + OFF_REMOTE_ERR, h->remote_err);
    size_t at = VW_VITCP_SEG_HDR_LEN;
    if (enc->with_rdma) {
        vw_put_be64(buf + at, enc->rdma.addr);
        vw_put_be32(buf + at + 8, enc->rdma.handle);
        vw_put_be32(buf + at + 12, enc->rdma.length);
        at += VW_VITCP_RDMA_HDR_LEN;
    }
    if (enc->with_ce) {
        const struct vw_vitcp_ce *ce = &enc->ce;
        uint8_t *p = buf + at;
        vw_put_be16(p, ce->attrs);
        vw_put_be16(p + 2, ce->calling_disc_len);
        vw_put_be32(p + 4, ce->mtu);
        memcpy(p + 8, ce->calling_disc, VW_VITCP_DISC_MAX);
        vw_put_be16(p + 72, ce->rdma_read_window);
        vw_put_be16(p + 74, ce->called_disc_len);
        memcpy(p + 76, ce->called_disc, VW_VITCP_DISC_MAX);
        at += VW_VITCP_CE_HDR_LEN;
        if (ce->options_len)
            memcpy(buf + at, ce->options, ce->options_len);
        at += ce->options_len;
    }
    if (enc->payload_len)
        memcpy(buf + at, enc->payload, enc->payload_len);
    at += enc->payload_len;
    uint32_t crc;
    switch (enc->trailer) {
    case VW_VITCP_TRAILER_NONE:
        break;
    case VW_VITCP_TRAILER_CRC:
        vw_put_le32(buf + at, vw_crc_vitcp(buf, at));
        break;
    case VW_VITCP_TRAILER_BAD_CRC:
        vw_put_le32(buf + at, ~vw_crc_vitcp(buf, at));
        break;
    case VW_VITCP_TRAILER_VALUE:
        vw_put_le32(buf + at, enc->trailer_value);
        break;
    case VW_VITCP_TRAILER_CRC_BE:
        crc = vw_crc_vitcp(buf, at);
        vw_put_be32(buf + at, crc);
        break;
    case VW_VITCP_TRAILER_CRC_MSB_FIRST:
        vw_put_le32(buf + at, vw_crc_vitcp_msb_first(buf, at));
        break;
    }
    return n;
}
