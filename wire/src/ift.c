/*
 * IFT codec: the adaption indication, the frame and the RFC 5041 DDP header
 * a frame carries (I2-I6, I9), decoded with every bound checked and encoded
 * with optional deliberate faults. The layout is described in ift.h.
 */
#include <stdio.h>
#include <string.h>
#include "vitcp/bytes.h"
#include "vitcp/checksum.h"
#include "vitcp/ift.h"

static const struct {
    uint32_t bit;
    const char *name;
} flag_names[] = {
    {VW_IFT_FLAG_PH, "PH"}, {VW_IFT_FLAG_R, "R"},   {VW_IFT_FLAG_HC, "HC"},
    {VW_IFT_FLAG_PC, "PC"}, {VW_IFT_FLAG_IH, "IH"}, {VW_IFT_FLAG_IP, "IP"},
    {VW_IFT_FLAG_SP, "SP"}, {VW_IFT_FLAG_SM, "SM"}, {VW_IFT_FLAG_RM, "RM"},
};

const char *vw_ift_flag_name(uint32_t bit)
{
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++)
        if (flag_names[i].bit == bit)
            return flag_names[i].name;
    return "Reserved";
}

char *vw_ift_flags_str(uint32_t flags, char *out, size_t cap)
{
    size_t n = 0;
    if (cap == 0)
        return out;
    out[0] = '\0';
    for (size_t i = 0; i < sizeof flag_names / sizeof flag_names[0]; i++) {
        if (!(flags & flag_names[i].bit))
            continue;
        int w = snprintf(out + n, cap - n, "%s%s", n ? "|" : "", flag_names[i].name);
        if (w < 0 || (size_t)w >= cap - n)
            return out;
        n += (size_t)w;
    }
    if (flags & VW_IFT_FLAG_RESERVED)
        snprintf(out + n, cap - n, "%sReserved(0x%06x)", n ? "|" : "", flags & VW_IFT_FLAG_RESERVED);
    return out;
}

/* ------------------------------------------------- adaption indication */

/* Index of the first non-zero byte, n when all are zero. */
static size_t first_nonzero_byte(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return i;
    return n;
}

enum vw_req vw_ift_ind_decode(const uint8_t *b, size_t len, struct vw_ift_ind *ind,
                              struct vw_findings *fs)
{
    memset(ind, 0, sizeof *ind);
    if (len >= 4)
        ind->magic = vw_get_be32(b);
    if (len >= 4 && ind->magic != VW_IFT_MAGIC) {
        vw_findings_add(fs, VW_REQ_IFT_4_1_MAGIC, VW_SEV_ERROR, 0, 4,
                        "magic 0x%08x, expected 0x%08x", ind->magic, VW_IFT_MAGIC);
        return VW_REQ_IFT_4_1_MAGIC;
    }
    if (len < VW_IFT_IND_LEN)
        return VW_REQ_IFT_4_1_LENGTH;
    ind->version = vw_get_be16(b + 4);
    ind->bc_version = vw_get_be16(b + 6);
    ind->flags = vw_get_be32(b + 8);
    ind->vtag = vw_get_be16(b + 12);
    ind->marker_interval = vw_get_be16(b + 14);
    ind->reserved = b + VW_IFT_IND_RESERVED_OFF;
    ind->crc_wire = vw_get_le32(b + VW_IFT_IND_CRC_OFF);
    ind->crc_computed = vw_crc32c(b, VW_IFT_IND_CRC_OFF);
    ind->crc_ok = ind->crc_wire == ind->crc_computed;
    size_t first_nonzero = first_nonzero_byte(ind->reserved, VW_IFT_IND_RESERVED_LEN);
    bool res_bytes_zero = first_nonzero == VW_IFT_IND_RESERVED_LEN;
    ind->reserved_zero = res_bytes_zero && !(ind->flags & VW_IFT_FLAG_RESERVED);

    if (!ind->crc_ok) {
        const char *how = vw_get_be32(b + VW_IFT_IND_CRC_OFF) == ind->crc_computed
                              ? " (matches when read most significant byte first)" : "";
        vw_findings_add(fs, VW_REQ_IFT_4_2_IND_CRC, VW_SEV_ERROR, VW_IFT_IND_CRC_OFF, 4,
                        "indication CRC 0x%08x, computed 0x%08x%s", ind->crc_wire,
                        ind->crc_computed, how);
    }
    /* The provocation only: the rule binds the receiver, whose reaction
     * vw_ift_nego judges (an answer or a frame from it is the error). */
    if (ind->bc_version > VW_IFT_BC_VERSION)
        vw_findings_add(fs, VW_REQ_IFT_4_2_BC_VERSION_REJECT, VW_SEV_NOTE, 6, 2,
                        "BC version %u is above %u: incompatible, the receiver must reject it and close",
                        ind->bc_version, VW_IFT_BC_VERSION);
    if (ind->version == 0)
        vw_findings_add(fs, VW_REQ_IFT_4_2_VERSION, VW_SEV_ERROR, 4, 2,
                        "Version must be 1, this indication has version 0");
    else if (ind->version > VW_IFT_VERSION && ind->bc_version <= VW_IFT_BC_VERSION)
        vw_findings_add(fs, VW_REQ_IFT_4_2_VERSION, VW_SEV_NOTE, 4, 2,
                        "Newer version %u, backward compatible with %u: accepted (I8)", ind->version,
                        ind->bc_version);
    if (ind->version == VW_IFT_VERSION && ind->bc_version != VW_IFT_BC_VERSION)
        vw_findings_add(fs, VW_REQ_IFT_4_2_BC_VERSION_SET, VW_SEV_ERROR, 6, 2,
                        "BC version %u in a version 1 indication, must be 1", ind->bc_version);
    if (ind->flags & VW_IFT_FLAG_RESERVED)
        vw_findings_add(fs, VW_REQ_IFT_4_2_RESERVED_ZERO, VW_SEV_WARN, 8, 4,
                        "Reserved flag bits 0x%06x set: must be sent as zero", ind->flags & VW_IFT_FLAG_RESERVED);
    if (!res_bytes_zero)
        vw_findings_add(fs, VW_REQ_IFT_4_2_RESERVED_ZERO, VW_SEV_WARN,
                        (uint32_t)(VW_IFT_IND_RESERVED_OFF + first_nonzero), 1,
                        "Reserved byte %zu not zero (0x%02x): must be sent as zero", first_nonzero,
                        ind->reserved[first_nonzero]);
    if (ind->flags & (VW_IFT_FLAG_SM | VW_IFT_FLAG_RM) || ind->marker_interval)
        vw_findings_add(fs, VW_REQ_IFT_4_2_MARKERS, VW_SEV_NOTE, 8, 8,
                        "markers are undefined (SM=%u RM=%u interval %u): none are sent (I9)",
                        !!(ind->flags & VW_IFT_FLAG_SM), !!(ind->flags & VW_IFT_FLAG_RM),
                        ind->marker_interval);
    return VW_REQ_NONE;
}

enum vw_req vw_ift_ind_fatal(const struct vw_ift_ind *ind)
{
    if (ind->magic != VW_IFT_MAGIC)
        return VW_REQ_IFT_4_1_MAGIC;
    if (ind->bc_version > VW_IFT_BC_VERSION)
        return VW_REQ_IFT_4_2_BC_VERSION_REJECT;
    if (!ind->crc_ok)
        return VW_REQ_IFT_4_2_IND_CRC;
    return VW_REQ_NONE;
}

enum vw_req vw_ift_first_bytes_rule(const uint8_t *p, size_t have)
{
    if (have >= 2 && vw_get_be16(p) > 255) /* VW_IFT_DDP_HDR_PLAUSIBLE_MAX (ift_stream.h) */
        return VW_REQ_IFT_4_1_MAGIC;
    if (have >= VW_IFT_IND_LEN && vw_get_le32(p + VW_IFT_IND_CRC_OFF) == vw_crc32c(p, VW_IFT_IND_CRC_OFF))
        return VW_REQ_IFT_4_1_MAGIC; /* its own indication CRC is right */
    return VW_REQ_IFT_4_INDICATION_FIRST;
}

bool vw_ift_plausible_indication(const uint8_t *buf, size_t len)
{
    return len >= VW_IFT_IND_LEN && vw_get_be32(buf) == VW_IFT_MAGIC &&
           vw_get_le32(buf + VW_IFT_IND_CRC_OFF) == vw_crc32c(buf, VW_IFT_IND_CRC_OFF);
}

/* Place a CRC as asked: iSCSI byte order (I3) unless a fault wants otherwise. */
static void put_crc(uint8_t *p, enum vw_ift_crc_write how, uint32_t crc, uint32_t value)
{
    switch (how) {
    case VW_IFT_CRC_GOOD: vw_put_le32(p, crc); break;
    case VW_IFT_CRC_BAD: vw_put_le32(p, ~crc); break;
    case VW_IFT_CRC_VALUE: vw_put_le32(p, value); break;
    case VW_IFT_CRC_BE: vw_put_be32(p, crc); break;
    case VW_IFT_CRC_OMIT: vw_put_le32(p, 0); break;
    }
}

void vw_ift_ind_enc_init(struct vw_ift_ind_enc *enc, unsigned phase, uint16_t vtag, bool hc,
                         bool pc)
{
    memset(enc, 0, sizeof *enc);
    enc->magic = VW_IFT_MAGIC;
    enc->version = VW_IFT_VERSION;
    enc->bc_version = VW_IFT_BC_VERSION;
    enc->flags = VW_IFT_FLAG_R | (phase ? VW_IFT_FLAG_PH : 0u) | (hc ? VW_IFT_FLAG_HC : 0u) |
                 (pc ? VW_IFT_FLAG_PC : 0u);
    enc->vtag = vtag;
    enc->crc = VW_IFT_CRC_GOOD;
}

size_t vw_ift_ind_encode(const struct vw_ift_ind_enc *enc, uint8_t *b, size_t cap)
{
    if (cap < VW_IFT_IND_LEN)
        return 0;
    vw_put_be32(b, enc->magic);
    vw_put_be16(b + 4, enc->version);
    vw_put_be16(b + 6, enc->bc_version);
    vw_put_be32(b + 8, enc->flags);
    vw_put_be16(b + 12, enc->vtag);
    vw_put_be16(b + 14, enc->marker_interval);
    if (enc->reserved)
        memcpy(b + VW_IFT_IND_RESERVED_OFF, enc->reserved, VW_IFT_IND_RESERVED_LEN);
    else
        memset(b + VW_IFT_IND_RESERVED_OFF, 0, VW_IFT_IND_RESERVED_LEN);
    put_crc(b + VW_IFT_IND_CRC_OFF, enc->crc, vw_crc32c(b, VW_IFT_IND_CRC_OFF), enc->crc_value);
    return VW_IFT_IND_LEN;
}

/* ------------------------------------------------------------ DDP (I5) */

const char *vw_rdmap_opcode_name(unsigned opcode)
{
    static const char *const names[] = {
        "RDMA Write", "RDMA Read Request", "RDMA Read Response", "Send",
        "Send with Invalidate", "Send with Solicited Event",
        "Send with Solicited Event and Invalidate", "Terminate",
    };
    return opcode < sizeof names / sizeof names[0] ? names[opcode] : "Unknown";
}

bool vw_ddp_decode(const uint8_t *b, size_t len, struct vw_ddp_hdr *h)
{
    memset(h, 0, sizeof *h);
    if (len < 2)
        return false;
    h->tagged = b[0] & VW_DDP_FLAG_T;
    h->last = b[0] & VW_DDP_FLAG_L;
    h->reserved = (uint8_t)((b[0] >> 2) & 0x0Fu);
    h->dv = b[0] & VW_DDP_DV_MASK;
    h->rdmap_rv = (uint8_t)(b[1] >> 6);
    h->rdmap_opcode = b[1] & 0x0Fu;
    if (h->tagged) {
        if (len != VW_DDP_TAGGED_HDR_LEN)
            return false;
        h->stag = vw_get_be32(b + 2);
        h->to = vw_get_be64(b + 6);
    } else {
        if (len != VW_DDP_UNTAGGED_HDR_LEN)
            return false;
        h->qn = vw_get_be32(b + 6);
        h->msn = vw_get_be32(b + 10);
        h->mo = vw_get_be32(b + 14);
    }
    return true;
}

size_t vw_ddp_encode(const struct vw_ddp_hdr *h, uint8_t *b, size_t cap)
{
    size_t n = h->tagged ? VW_DDP_TAGGED_HDR_LEN : VW_DDP_UNTAGGED_HDR_LEN;
    if (cap < n)
        return 0;
    b[0] = (uint8_t)((h->tagged ? VW_DDP_FLAG_T : 0u) | (h->last ? VW_DDP_FLAG_L : 0u) |
                     ((h->reserved & 0x0Fu) << 2) | (h->dv & VW_DDP_DV_MASK));
    b[1] = (uint8_t)((h->rdmap_rv & 0x3u) << 6 | (h->rdmap_opcode & 0x0Fu));
    if (h->tagged) {
        vw_put_be32(b + 2, h->stag);
        vw_put_be64(b + 6, h->to);
    } else {
        vw_put_be32(b + 2, 0); /* RsvdULP: RDMAP places its own fields here (unused) */
        vw_put_be32(b + 6, h->qn);
        vw_put_be32(b + 10, h->msn);
        vw_put_be32(b + 14, h->mo);
    }
    return n;
}

size_t vw_rdmap_read_req_encode(const struct vw_rdmap_read_req *r, uint8_t *b, size_t cap)
{
    if (cap < VW_RDMAP_READ_REQ_HDR_LEN)
        return 0;
    vw_put_be32(b, r->sink_stag);
    vw_put_be64(b + 4, r->sink_to);
    vw_put_be32(b + 12, r->size);
    vw_put_be32(b + 16, r->src_stag);
    vw_put_be64(b + 20, r->src_to);
    return VW_RDMAP_READ_REQ_HDR_LEN;
}

bool vw_rdmap_read_req_decode(const uint8_t *b, size_t len, struct vw_rdmap_read_req *r)
{
    memset(r, 0, sizeof *r);
    if (len < VW_RDMAP_READ_REQ_HDR_LEN)
        return false;
    r->sink_stag = vw_get_be32(b);
    r->sink_to = vw_get_be64(b + 4);
    r->size = vw_get_be32(b + 12);
    r->src_stag = vw_get_be32(b + 16);
    r->src_to = vw_get_be64(b + 20);
    return true;
}

/* ------------------------------------------------------------- frame */

/* An untagged RDMA Read Request whose header_size also counts its RDMAP
 * header (I6: the RDMA header is payload, 5.1). */
static bool rdmap_header_counted(const uint8_t *ddp, unsigned header_size)
{
    return header_size == VW_DDP_UNTAGGED_HDR_LEN + VW_RDMAP_READ_REQ_HDR_LEN &&
           !(ddp[0] & VW_DDP_FLAG_T) && (ddp[1] & 0x0Fu) == VW_RDMAP_READ_REQUEST;
}

enum vw_req vw_ift_frame_decode(const uint8_t *b, size_t len, const struct vw_ift_frame_mode *mode,
                                struct vw_ift_frame *fr, struct vw_findings *fs)
{
    memset(fr, 0, sizeof *fr);
    if (len < VW_IFT_FRAME_HDR_LEN)
        return VW_REQ_IFT_5_1_FRAME_TRUNCATED;
    fr->header_size = vw_get_be16(b);
    fr->payload_size = vw_get_be16(b + 2);
    fr->vtag = vw_get_be16(b + 4);
    size_t want = vw_ift_frame_len(fr->header_size, fr->payload_size, mode->hc, mode->pc);
    if (want != len) {
        vw_findings_add(fs, VW_REQ_IFT_5_1_FRAME_LEN, VW_SEV_ERROR, 0, 4,
                        "header_size %u + payload_size %u%s%s make %zu bytes, frame has %zu",
                        fr->header_size, fr->payload_size, mode->hc ? " + header CRC" : "",
                        mode->pc ? " + payload CRC" : "", want, len);
        return VW_REQ_IFT_5_1_FRAME_LEN;
    }
    size_t p = VW_IFT_FRAME_HDR_LEN;
    fr->ddp = b + p;
    p += fr->header_size;
    if (mode->hc) {
        fr->has_hdr_crc = true;
        fr->hdr_crc_wire = vw_get_le32(b + p);
        fr->hdr_crc_computed = vw_crc32c(b, p);
        fr->hdr_crc_ok = fr->hdr_crc_wire == fr->hdr_crc_computed;
        if (!fr->hdr_crc_ok)
            vw_findings_add(fs, VW_REQ_IFT_5_1_HDR_CRC, VW_SEV_ERROR, (uint32_t)p, 4,
                            "header CRC 0x%08x, computed 0x%08x%s", fr->hdr_crc_wire,
                            fr->hdr_crc_computed,
                            vw_get_be32(b + p) == fr->hdr_crc_computed
                                ? " (matches when read most significant byte first)" : "");
        p += VW_IFT_CRC_LEN;
    }
    fr->payload_offset = p;
    fr->payload = b + p;
    p += fr->payload_size;
    if (mode->pc) {
        fr->has_payload_crc = true;
        fr->payload_crc_wire = vw_get_le32(b + p);
        fr->payload_crc_computed = vw_crc32c(fr->payload, fr->payload_size);
        fr->payload_crc_ok = fr->payload_crc_wire == fr->payload_crc_computed;
        if (!fr->payload_crc_ok)
            vw_findings_add(fs, VW_REQ_IFT_5_1_PAYLOAD_CRC, VW_SEV_ERROR, (uint32_t)p, 4,
                            "payload CRC 0x%08x, computed 0x%08x%s", fr->payload_crc_wire,
                            fr->payload_crc_computed,
                            vw_get_be32(b + p) == fr->payload_crc_computed
                                ? " (matches when read most significant byte first)" : "");
    }
    if (mode->check_vtag && fr->vtag != mode->vtag)
        vw_findings_add(fs, VW_REQ_IFT_4_2_VTAG_MATCH, VW_SEV_ERROR, 4, 2,
                        "VTag 0x%04x, the receiver announced 0x%04x", fr->vtag, mode->vtag);
    if (fr->header_size == 0) {
        vw_findings_add(fs, VW_REQ_IFT_5_1_DDP_HDR_PRESENT, VW_SEV_WARN, 0, 2,
                        "header_size 0: no DDP header");
    } else {
        fr->ddp_decoded = vw_ddp_decode(fr->ddp, fr->header_size, &fr->ddp_hdr);
        if (!fr->ddp_decoded && rdmap_header_counted(fr->ddp, fr->header_size))
            vw_findings_add(fs, VW_REQ_IFT_5_1_RDMA_HDR_IN_PAYLOAD, VW_SEV_ERROR, 0, 2,
                            "header_size %u counts the %u-byte RDMA Read Request header, which belongs "
                            "to the payload (DDP header: %u bytes)",
                            fr->header_size, VW_RDMAP_READ_REQ_HDR_LEN, VW_DDP_UNTAGGED_HDR_LEN);
        else if (!fr->ddp_decoded)
            vw_findings_add(fs, VW_REQ_IFT_5_1_DDP_HDR_PRESENT, VW_SEV_ERROR, 0, 2,
                            "header_size %u is not an RFC 5041 %s DDP header (%u bytes): sizes that do not fit (I5, I8)",
                            fr->header_size, (fr->ddp[0] & VW_DDP_FLAG_T) ? "tagged" : "untagged",
                            (fr->ddp[0] & VW_DDP_FLAG_T) ? VW_DDP_TAGGED_HDR_LEN
                                                         : VW_DDP_UNTAGGED_HDR_LEN);
    }
    return VW_REQ_NONE;
}

enum vw_req vw_ift_frame_fatal(const struct vw_ift_frame *fr, const struct vw_ift_frame_mode *mode)
{
    if (mode->check_vtag && fr->vtag != mode->vtag)
        return VW_REQ_IFT_4_2_VTAG_MATCH;
    if (fr->has_hdr_crc && !fr->hdr_crc_ok)
        return VW_REQ_IFT_5_1_HDR_CRC;
    if (fr->has_payload_crc && !fr->payload_crc_ok)
        return VW_REQ_IFT_5_1_PAYLOAD_CRC;
    return VW_REQ_NONE;
}

bool vw_ift_guess_mode(const uint8_t *b, size_t len, struct vw_ift_frame_mode *mode)
{
    /* A frame with both CRCs also "matches" as header-CRC-only (its prefix),
     * so the combination verifying the most CRCs wins; a tie is ambiguous. */
    int best = -1, best_count = 0;
    for (int combo = 0; combo < 4; combo++) {
        struct vw_ift_frame_mode m = {.hc = combo & 1, .pc = (combo >> 1) & 1};
        size_t n = vw_ift_peek_frame_len(b, len, &m);
        if (n == 0 || n > len)
            continue;
        struct vw_ift_frame fr;
        if (vw_ift_frame_decode(b, n, &m, &fr, NULL) != VW_REQ_NONE)
            continue;
        if ((m.hc && !fr.hdr_crc_ok) || (m.pc && !fr.payload_crc_ok))
            continue;
        int crcs = (int)m.hc + (int)m.pc;
        if (crcs > best) {
            best = crcs;
            best_count = 1;
            mode->hc = m.hc;
            mode->pc = m.pc;
        } else if (crcs == best) {
            best_count++;
        }
    }
    if (best < 0 || best_count != 1)
        return false;
    mode->check_vtag = false;
    return true;
}

void vw_ift_frame_enc_init(struct vw_ift_frame_enc *enc, uint16_t vtag, bool hc, bool pc,
                           const uint8_t *ddp, size_t ddp_len, const uint8_t *payload,
                           size_t payload_len)
{
    memset(enc, 0, sizeof *enc);
    enc->vtag = vtag;
    enc->hc = hc;
    enc->pc = pc;
    enc->ddp = ddp;
    enc->ddp_len = ddp_len;
    enc->payload = payload;
    enc->payload_len = payload_len;
    enc->hdr_crc = VW_IFT_CRC_GOOD;
    enc->payload_crc = VW_IFT_CRC_GOOD;
}

size_t vw_ift_frame_encoded_len(const struct vw_ift_frame_enc *enc)
{
    bool hc = enc->hc && enc->hdr_crc != VW_IFT_CRC_OMIT;
    bool pc = enc->pc && enc->payload_crc != VW_IFT_CRC_OMIT;
    return VW_IFT_FRAME_HDR_LEN + enc->ddp_len + enc->payload_len + (hc ? VW_IFT_CRC_LEN : 0u) +
           (pc ? VW_IFT_CRC_LEN : 0u);
}

size_t vw_ift_frame_encode(const struct vw_ift_frame_enc *enc, uint8_t *b, size_t cap)
{
    if (enc->ddp_len > 0xFFFFu || enc->payload_len > 0xFFFFu)
        return 0;
    size_t n = vw_ift_frame_encoded_len(enc);
    if (n > cap)
        return 0;
    vw_put_be16(b, enc->keep_sizes ? enc->header_size : (uint16_t)enc->ddp_len);
    vw_put_be16(b + 2, enc->keep_sizes ? enc->payload_size : (uint16_t)enc->payload_len);
    vw_put_be16(b + 4, enc->vtag);
    size_t p = VW_IFT_FRAME_HDR_LEN;
    if (enc->ddp_len)
        memcpy(b + p, enc->ddp, enc->ddp_len);
    p += enc->ddp_len;
    if (enc->hc && enc->hdr_crc != VW_IFT_CRC_OMIT) {
        put_crc(b + p, enc->hdr_crc, vw_crc32c(b, p), enc->hdr_crc_value);
        p += VW_IFT_CRC_LEN;
    }
    if (enc->payload_len)
        memcpy(b + p, enc->payload, enc->payload_len);
    p += enc->payload_len;
    if (enc->pc && enc->payload_crc != VW_IFT_CRC_OMIT) {
        const uint8_t *pl = enc->payload ? enc->payload : (const uint8_t *)"";
        put_crc(b + p, enc->payload_crc, vw_crc32c(pl, enc->payload_len), enc->payload_crc_value);
        p += VW_IFT_CRC_LEN;
    }
    return p;
}

/* ------------------------------------- what a display adds (announcements) */

void vw_ift_ind_notes(const struct vw_ift_ind *ind, struct vw_findings *fs)
{
    if (ind->flags & VW_IFT_FLAG_SP)
        vw_findings_add(fs, VW_REQ_IFT_4_2_SP_PERMISSION, VW_SEV_NOTE, 8, 4,
                        "Speculative placement permitted to the receiver (SP)");
    if (ind->flags & (VW_IFT_FLAG_IH | VW_IFT_FLAG_IP)) {
        bool ih = ind->flags & VW_IFT_FLAG_IH, ip = ind->flags & VW_IFT_FLAG_IP;
        vw_findings_add(fs, VW_REQ_IFT_4_2_IGNORE_CRC, VW_SEV_NOTE, 8, 4,
                        "Sender will not check the %s%s%s CRC it receives (I9: presence still follows HC/PC)",
                        ih ? "header" : "", ih && ip ? " and" : "", ip ? " payload" : "");
    }
}

/* ------------------------------------ frames that break their own HC/PC */

bool vw_ift_frame_layout(const uint8_t *b, size_t len, const struct vw_ift_frame_mode *announced,
                         struct vw_ift_frame_mode *carried)
{
    if (len < VW_IFT_FRAME_HDR_LEN)
        return false;
    size_t hs = vw_get_be16(b), ps = vw_get_be16(b + 2);
    size_t bare = VW_IFT_FRAME_HDR_LEN + hs + ps;
    if (len < bare)
        return false;
    *carried = *announced;
    switch (len - bare) {
    case 0:
        carried->hc = carried->pc = false;
        return true;
    case 2 * VW_IFT_CRC_LEN:
        carried->hc = carried->pc = true;
        return true;
    case VW_IFT_CRC_LEN: {
        /* One CRC: whichever verifies in place; the announced one when
         * neither or both do (then the CRC finding says which failed). */
        size_t hend = VW_IFT_FRAME_HDR_LEN + hs;
        bool hdr_ok = vw_get_le32(b + hend) == vw_crc32c(b, hend);
        bool pay_ok = vw_get_le32(b + hend + ps) == vw_crc32c(b + hend, ps);
        carried->hc = hdr_ok != pay_ok ? hdr_ok : announced->hc;
        carried->pc = !carried->hc;
        return true;
    }
    default:
        return false;
    }
}

enum vw_req vw_ift_frame_decode_as_sent(const uint8_t *b, size_t len,
                                        const struct vw_ift_frame_mode *announced,
                                        struct vw_ift_frame *frame, struct vw_ift_frame_mode *carried,
                                        struct vw_findings *fs)
{
    if (!vw_ift_frame_layout(b, len, announced, carried)) {
        *carried = *announced;
        return vw_ift_frame_decode(b, len, announced, frame, fs);
    }
    enum vw_req err = vw_ift_frame_decode(b, len, carried, frame, fs);
    if (err != VW_REQ_NONE)
        return err;
    if (carried->hc != announced->hc)
        vw_findings_add(fs, VW_REQ_IFT_5_1_CRC_AS_NEGOTIATED, VW_SEV_ERROR, 0, 0,
                        "Header CRC %s, but the sender announced HC=%u",
                        carried->hc ? "present" : "missing", announced->hc ? 1u : 0u);
    if (carried->pc != announced->pc)
        vw_findings_add(fs, VW_REQ_IFT_5_1_CRC_AS_NEGOTIATED, VW_SEV_ERROR, 0, 0,
                        "Payload CRC %s, but the sender announced PC=%u",
                        carried->pc ? "present" : "missing", announced->pc ? 1u : 0u);
    return VW_REQ_NONE;
}

size_t vw_ift_frame_len_in_step(const uint8_t *buf, size_t have, const struct vw_ift_frame_mode *mode)
{
    if (have < VW_IFT_FRAME_HDR_LEN)
        return 0;
    unsigned hs = vw_get_be16(buf), ps = vw_get_be16(buf + 2);
    size_t negotiated = vw_ift_frame_len(hs, ps, mode->hc, mode->pc);
    if (!mode->check_vtag || have == negotiated)
        return negotiated;
    const bool layouts[4][2] = {{mode->hc, mode->pc}, {!mode->hc, mode->pc}, {mode->hc, !mode->pc},
                                {!mode->hc, !mode->pc}};
    for (int i = 0; i < 4; i++) {
        size_t len = vw_ift_frame_len(hs, ps, layouts[i][0], layouts[i][1]);
        if (have == len || (have >= len + VW_IFT_FRAME_HDR_LEN && vw_get_be16(buf + len + 4) == mode->vtag))
            return len;
    }
    return negotiated;
}

size_t vw_ift_frame_build(const struct vw_ddp_hdr *h, const uint8_t *payload, size_t payload_len,
                          uint16_t vtag, bool hc, bool pc, uint8_t *buf, size_t cap)
{
    uint8_t ddp[VW_DDP_UNTAGGED_HDR_LEN];
    size_t n = vw_ddp_encode(h, ddp, sizeof ddp);
    struct vw_ift_frame_enc enc;
    vw_ift_frame_enc_init(&enc, vtag, hc, pc, ddp, n, payload, payload_len);
    return n ? vw_ift_frame_encode(&enc, buf, cap) : 0;
}
