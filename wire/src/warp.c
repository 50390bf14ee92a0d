/*
 * WARP chunk codec (Appendix A sketch, W1-W3): decode with every bound
 * checked, encoder that can write wrong lengths, reserved bits and Adler-32.
 */
#include <string.h>
#include "vitcp/bytes.h"
#include "vitcp/checksum.h"
#include "vitcp/warp.h"

const char *vw_warp_type_name(unsigned type)
{
    switch (type) {
    case VW_WARP_SEND: return "Send";
    case VW_WARP_RDMA: return "RDMA Write";
    default: return "Unknown";
    }
}

size_t vw_warp_type_hdr_len(unsigned type)
{
    switch (type) {
    case VW_WARP_SEND: return VW_WARP_SEND_HDR_LEN;
    case VW_WARP_RDMA: return VW_WARP_RDMA_HDR_LEN;
    default: return 0;
    }
}

enum vw_req vw_warp_decode(const uint8_t *buf, size_t len, struct vw_warp_chunk *c,
                           struct vw_findings *fs)
{
    memset(c, 0, sizeof *c);
    if (len < 4)
        return VW_REQ_WARP_A_TRUNCATED;
    uint16_t word = vw_get_be16(buf);
    c->type = (uint8_t)(word >> VW_WARP_TYPE_SHIFT);
    c->rsvd = (uint16_t)((word & VW_WARP_RSVD_MASK) >> 3);
    c->flags = word & (VW_WARP_FLAG_E | VW_WARP_FLAG_C | VW_WARP_FLAG_L);
    c->chunk_len = vw_get_be16(buf + 2);
    if (c->chunk_len != len) {
        if (c->chunk_len > len)
            return VW_REQ_WARP_A_TRUNCATED;
        vw_findings_add(fs, VW_REQ_WARP_A_CHUNK_LEN, VW_SEV_ERROR, 2, 2,
                        "Chunk length %u but %zu bytes given", c->chunk_len, len);
        return VW_REQ_WARP_A_CHUNK_LEN;
    }
    size_t hdr = vw_warp_type_hdr_len(c->type);
    size_t min = (hdr ? hdr : 4u) + VW_WARP_ADLER_LEN;
    if (len < min) {
        vw_findings_add(fs, VW_REQ_WARP_A_CHUNK_LEN, VW_SEV_ERROR, 2, 2,
                        "Chunk length %u under the %zu bytes of a %s chunk's header and Adler-32",
                        c->chunk_len, min, vw_warp_type_name(c->type));
        return VW_REQ_WARP_A_CHUNK_LEN;
    }
    /* The Adler-32 frames every type, so it is checked even for unknown ones. */
    c->adler_wire = vw_get_be32(buf + len - VW_WARP_ADLER_LEN);
    c->adler_computed = vw_adler32(buf, len - VW_WARP_ADLER_LEN);
    c->adler_ok = c->adler_wire == c->adler_computed;
    /* W21: a Chunk length 4 more than the chunk: the Adler-32 four bytes
     * earlier checks out. The length is what is wrong, not the checksum. */
    if (!c->adler_ok && len >= min + VW_WARP_ADLER_LEN &&
        vw_adler32(buf, len - 2 * VW_WARP_ADLER_LEN) == vw_get_be32(buf + len - 2 * VW_WARP_ADLER_LEN)) {
        vw_findings_add(fs, VW_REQ_WARP_A_CHUNK_LEN, VW_SEV_ERROR, 2, 2,
                        "Chunk length %u is 4 more than the chunk: its Adler-32 checks out 4 bytes earlier "
                        "(W2 counts header, payload and Adler-32, no more); framing lost", c->chunk_len);
        return VW_REQ_WARP_A_CHUNK_LEN;
    }
    if (!c->adler_ok) {
        const char *how = "";
        uint32_t le = vw_get_le32(buf + len - VW_WARP_ADLER_LEN);
        if (le == c->adler_computed)
            how = " (matches when read least significant byte first)";
        vw_findings_add(fs, VW_REQ_WARP_A_ADLER_VALID, VW_SEV_ERROR, (uint32_t)(len - 4), 4,
                        "Bad Adler-32 0x%08x, computed 0x%08x%s", c->adler_wire, c->adler_computed, how);
    }
    /* W15: line 235's 8-bit Type code for an RDMA Write, named. */
    if (buf[0] == VW_WARP_TYPE8_RDMA_BYTE && len >= VW_WARP_RDMA_HDR_LEN + VW_WARP_ADLER_LEN) {
        vw_findings_add(fs, VW_REQ_WARP_A_TYPE_KNOWN, VW_SEV_ERROR, 0, 1,
                        "first byte 0x01: an RDMA Write with the summary's 8-bit Type code (line 235); "
                        "W1's Type is the 4 high bits, which read a Send with reserved bits set");
        return VW_REQ_WARP_A_TYPE_KNOWN;
    }
    if (c->rsvd)
        vw_findings_add(fs, VW_REQ_WARP_A_RSVD_ZERO, VW_SEV_NOTE, 0, 2,
                        "reserved bits 0x%03x (not checked on receive)", c->rsvd);
    if ((c->flags & VW_WARP_FLAG_C) && !(c->flags & VW_WARP_FLAG_L))
        vw_findings_add(fs, VW_REQ_WARP_C_ONLY_WITH_L, VW_SEV_ERROR, 1, 1,
                        "Completion bit set without the Last bit");
    if (c->flags & VW_WARP_FLAG_E)
        vw_findings_add(fs, VW_REQ_WARP_E_TXERR, VW_SEV_NOTE, 1, 1,
                        "Transmit Error: the sender hit an error in this ULP PDU (a signal, W13)");
    if (!hdr) {
        vw_findings_add(fs, VW_REQ_WARP_A_TYPE_KNOWN, VW_SEV_ERROR, 0, 1,
                        "Unknown type %u: chunk skipped by its length", c->type);
        return VW_REQ_WARP_A_TYPE_KNOWN;
    }
    if (c->type == VW_WARP_RDMA) {
        c->rid = vw_get_be32(buf + 4);
        c->offset = vw_get_be64(buf + 8);
    } else {
        c->ssn = vw_get_be32(buf + 4);
        c->offset = vw_get_be32(buf + 8);
    }
    c->payload_offset = hdr;
    c->payload = buf + hdr;
    c->payload_len = len - hdr - VW_WARP_ADLER_LEN;
    return VW_REQ_NONE;
}

bool vw_warp_len_without_adler(uint32_t full_adler, const uint8_t *p)
{
    return vw_get_be32(p) == full_adler;
}

/* A chunk header by the first word alone: known type, reserved bits zero,
 * C only with L (W1). */
static bool header_parses(const uint8_t *q)
{
    uint16_t word = vw_get_be16(q);
    unsigned type = word >> VW_WARP_TYPE_SHIFT;
    if (!vw_warp_type_hdr_len(type) || (word & VW_WARP_RSVD_MASK))
        return false;
    return !(word & VW_WARP_FLAG_C) || (word & VW_WARP_FLAG_L);
}

enum vw_warp_po vw_warp_payload_only(const uint8_t *p, size_t have)
{
    if (have < 4)
        return VW_WARP_PO_NO;
    size_t hdr = vw_warp_type_hdr_len(p[0] >> 4);
    size_t cl = vw_warp_peek_chunk_len(p, have);
    if (!hdr)
        return VW_WARP_PO_NO;
    size_t body = hdr + cl; /* the chunk before its Adler-32, read as payload-only */
    if (have < body + VW_WARP_ADLER_LEN)
        return VW_WARP_PO_NO;
    /* W2's reading first: a chunk it frames with a right Adler-32 is no
     * other reading. One pass: each Adler-32 here extends the one before
     * (body > cl, as the header is never empty). */
    uint32_t a;
    if (cl >= hdr + VW_WARP_ADLER_LEN) {
        a = vw_adler32(p, cl - VW_WARP_ADLER_LEN);
        if (vw_get_be32(p + cl - VW_WARP_ADLER_LEN) == a)
            return VW_WARP_PO_NO;
        a = vw_adler32_update(a, p + cl - VW_WARP_ADLER_LEN, VW_WARP_ADLER_LEN); /* all cl bytes */
        /* nor is one W15 names (the Adler-32 of the whole chunk follows it) */
        if (vw_warp_len_without_adler(a, p + cl))
            return VW_WARP_PO_NO;
        a = vw_adler32_update(a, p + cl, body - cl);
    } else {
        a = vw_adler32(p, body);
    }
    if (vw_get_be32(p + body) == a)
        return VW_WARP_PO_ADLER;
    if (have >= body + VW_WARP_ADLER_LEN + 4 && header_parses(p + body + VW_WARP_ADLER_LEN))
        return VW_WARP_PO_NEXT;
    return VW_WARP_PO_NO;
}

const char *vw_warp_payload_only_text(enum vw_warp_po po)
{
    switch (po) {
    case VW_WARP_PO_ADLER:
        return "the Chunk length counts the payload only: read so, the chunk's Adler-32 checks out "
               "(W2 counts header, payload and Adler-32); framing lost";
    case VW_WARP_PO_NEXT:
        return "the Chunk length counts the payload only: read so, a chunk header follows the chunk "
               "(W2 counts header, payload and Adler-32); framing lost";
    case VW_WARP_PO_NO:
        break;
    }
    return NULL;
}

void vw_warp_enc_init(struct vw_warp_enc *enc, unsigned type, const uint8_t *payload,
                      size_t payload_len)
{
    memset(enc, 0, sizeof *enc);
    enc->type = (uint8_t)type;
    enc->payload = payload;
    enc->payload_len = payload_len;
    enc->adler = VW_WARP_ADLER_GOOD;
}

static size_t enc_hdr_len(const struct vw_warp_enc *enc)
{
    size_t h = vw_warp_type_hdr_len(enc->type);
    return h ? h : VW_WARP_SEND_HDR_LEN;
}

size_t vw_warp_encoded_len(const struct vw_warp_enc *enc)
{
    return enc_hdr_len(enc) + enc->payload_len + VW_WARP_ADLER_LEN;
}

size_t vw_warp_encode(const struct vw_warp_enc *enc, uint8_t *buf, size_t cap)
{
    size_t n = vw_warp_encoded_len(enc);
    if (n > VW_WARP_CHUNK_MAX || n > cap)
        return 0;
    size_t hdr = enc_hdr_len(enc);
    uint16_t word = (uint16_t)((enc->type & 0xFu) << VW_WARP_TYPE_SHIFT |
                               ((enc->rsvd << 3) & VW_WARP_RSVD_MASK) |
                               (enc->flags & (VW_WARP_FLAG_E | VW_WARP_FLAG_C | VW_WARP_FLAG_L)));
    vw_put_be16(buf, word);
    vw_put_be16(buf + 2, enc->keep_chunk_len ? enc->chunk_len : (uint16_t)n);
    if (enc->type == VW_WARP_RDMA) {
        vw_put_be32(buf + 4, enc->rid);
        vw_put_be64(buf + 8, enc->offset);
    } else {
        vw_put_be32(buf + 4, enc->ssn);
        vw_put_be32(buf + 8, (uint32_t)enc->offset);
    }
    if (enc->payload_len)
        memcpy(buf + hdr, enc->payload, enc->payload_len);
    uint32_t a = vw_adler32(buf, n - VW_WARP_ADLER_LEN);
    uint8_t *t = buf + n - VW_WARP_ADLER_LEN;
    switch (enc->adler) {
    case VW_WARP_ADLER_GOOD: vw_put_be32(t, a); break;
    case VW_WARP_ADLER_BAD: vw_put_be32(t, ~a); break;
    case VW_WARP_ADLER_VALUE: vw_put_be32(t, enc->adler_value); break;
    case VW_WARP_ADLER_LE: vw_put_le32(t, a); break;
    }
    return n;
}
