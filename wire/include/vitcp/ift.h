/*
 * IFT, iWARP Framing for TCP (draft-williams-iwarp-ift-01) as the project
 * reads it (../shared/spec-decisions.md I1-I9): the 64-byte adaption
 * indication, the frame, and the RFC 5041 DDP header a frame carries (I5).
 * Decoders check every bound and name the rule that made parsing
 * impossible; encoders write into the caller's buffer and can write
 * deliberately wrong values for the traffic generator.
 *
 * Adaption indication (64 bytes, numeric fields big-endian):
 *    0 magic 0x52444450 | 4 version(16) BC version(16) | 8 flags(32)
 *   12 sender's VTag(16) marker interval(16) | 16 reserved (44 bytes)
 *   60 CRC-32C of bytes 0..59, least significant byte first (I3)
 *
 * Frame:
 *    0 header_size(16) payload_size(16) | 4 receiver's VTag(16)
 *    6 DDP header (header_size bytes, I6) | [header CRC, 4] (I4)
 *      payload (payload_size bytes)        | [payload CRC, 4] (I6)
 * No padding anywhere (5.1). Which CRCs are present is announced by the
 * sender's own indication (HC, PC); the VTag is the one the frame's
 * receiver announced in its indication.
 */
#ifndef VITCP_IFT_H
#define VITCP_IFT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vitcp/findings.h"

#define VW_IFT_DEFAULT_PORT 5996 /* I1 */
#define VW_IFT_MAGIC 0x52444450u /* "RDDP" */
#define VW_IFT_VERSION 1
#define VW_IFT_BC_VERSION 1
#define VW_IFT_IND_LEN 64
#define VW_IFT_IND_RESERVED_OFF 16
#define VW_IFT_IND_RESERVED_LEN 44
#define VW_IFT_IND_CRC_OFF 60
#define VW_IFT_FRAME_HDR_LEN 6 /* header_size, payload_size, VTag */
#define VW_IFT_CRC_LEN 4
#define VW_IFT_FRAME_MAX (VW_IFT_FRAME_HDR_LEN + 65535u + VW_IFT_CRC_LEN + 65535u + VW_IFT_CRC_LEN)

/* Flags, from the most significant bit (I2). */
#define VW_IFT_FLAG_PH (1u << 31) /* phase: 0 from A, 1 answer from B */
#define VW_IFT_FLAG_R (1u << 30)  /* RDMA mode wanted */
#define VW_IFT_FLAG_HC (1u << 29) /* sender includes a header CRC */
#define VW_IFT_FLAG_PC (1u << 28) /* sender includes a payload CRC */
#define VW_IFT_FLAG_IH (1u << 27) /* sender ignores received header CRCs */
#define VW_IFT_FLAG_IP (1u << 26) /* sender ignores received payload CRCs */
#define VW_IFT_FLAG_SP (1u << 25) /* receiver may place speculatively */
#define VW_IFT_FLAG_SM (1u << 24) /* sender willing to send markers */
#define VW_IFT_FLAG_RM (1u << 23) /* sender wishes to receive markers */
#define VW_IFT_FLAG_RESERVED 0x007FFFFFu

/* Name of one flag bit ("PH", "R", ...; "Reserved" for others). */
const char *vw_ift_flag_name(uint32_t bit);
/* Write the set flags as "PH|R|HC" into out (always terminated);
 * returns out. */
char *vw_ift_flags_str(uint32_t flags, char *out, size_t cap);

/* ------------------------------------------------- adaption indication */

struct vw_ift_ind {
    uint32_t magic;
    uint16_t version;
    uint16_t bc_version;
    uint32_t flags;
    uint16_t vtag;            /* sender's VTag: receivers put it in their frames */
    uint16_t marker_interval;
    const uint8_t *reserved;  /* the 44 reserved bytes inside the decoded buffer */
    bool reserved_zero;       /* reserved bytes and reserved flag bits all 0 */
    uint32_t crc_wire;        /* bytes 60..63 read LSB first (I3) */
    uint32_t crc_computed;    /* CRC-32C of bytes 0..59 */
    bool crc_ok;
};

static inline unsigned vw_ift_ind_phase(const struct vw_ift_ind *ind)
{
    return (ind->flags & VW_IFT_FLAG_PH) ? 1u : 0u;
}

/* Decode an indication from buf[0..len) (len >= 64; extra bytes ignored).
 * Returns VW_REQ_NONE when parsed (violations such as a bad CRC, version,
 * BC version or reserved bits go to findings, which may be NULL), or
 * VW_REQ_IFT_4_1_LENGTH (fewer than 64 bytes) / VW_REQ_IFT_4_1_MAGIC. */
enum vw_req vw_ift_ind_decode(const uint8_t *buf, size_t len, struct vw_ift_ind *ind,
                              struct vw_findings *findings);

/* Does this indication make the rest of the stream unframeable or require
 * the connection to close (I8)? Returns the first such rule of the
 * decoded indication (bad CRC, BC version above 1), else VW_REQ_NONE. */
enum vw_req vw_ift_ind_fatal(const struct vw_ift_ind *ind);

/* Announcements of a decoded indication that break no rule but change
 * what the peer may do, as notes for displays (the dissector):
 * IFT-4.2-SP-PERMISSION (SP set) and IFT-4.2-IGNORE-CRC (IH/IP set).
 * Lint and conformance leave them out: they are not violations. */
void vw_ift_ind_notes(const struct vw_ift_ind *ind, struct vw_findings *findings);

/* Magic in the first four bytes and a matching CRC: could buf start an
 * indication? (heuristic dissection, the ULP-upgrade case of section 4) */
bool vw_ift_plausible_indication(const uint8_t *buf, size_t len);

/* I35: the rule broken by a direction's first bytes when they do not start
 * with the magic (have >= 2). Bytes that cannot start a frame (a
 * header_size above 255: RFC 5041's DDP headers are 14 and 18 bytes), or
 * 64 bytes whose last four are the CRC-32C of the first 60, sit where the
 * indication is due: an indication with a bad magic, IFT-4.1-MAGIC. Other
 * bytes are a frame sent before the indication, IFT-4-INDICATION-FIRST.
 * Decided on the bytes at hand (the first TCP segment), as the plugin
 * sees them. The reader, the framer, lint and the
 * plugin all name the first bytes with this. */
enum vw_req vw_ift_first_bytes_rule(const uint8_t *p, size_t have);

/* How an encoder writes a CRC (indication, header or payload CRC). */
enum vw_ift_crc_write {
    VW_IFT_CRC_GOOD,   /* the correct CRC-32C, LSB first (I3) */
    VW_IFT_CRC_BAD,    /* the correct CRC with every bit inverted */
    VW_IFT_CRC_VALUE,  /* the given value, LSB first */
    VW_IFT_CRC_BE,     /* the correct CRC written MSB first (another reading) */
    VW_IFT_CRC_OMIT,   /* leave the CRC out although negotiated (frames only) */
};

struct vw_ift_ind_enc {
    uint32_t magic;           /* VW_IFT_MAGIC unless testing a bad magic */
    uint16_t version;
    uint16_t bc_version;
    uint32_t flags;           /* written as given, reserved bits included */
    uint16_t vtag;
    uint16_t marker_interval;
    const uint8_t *reserved;  /* 44 bytes to write, or NULL for zeros */
    enum vw_ift_crc_write crc;
    uint32_t crc_value;       /* for VW_IFT_CRC_VALUE */
};

/* Defaults: magic, version 1, BC version 1, PH per phase, R set, HC/PC as
 * given, SM = RM = 0 and interval 0 (I9), good CRC. */
void vw_ift_ind_enc_init(struct vw_ift_ind_enc *enc, unsigned phase, uint16_t vtag, bool hc,
                         bool pc);
/* Write the 64 bytes; returns 64, or 0 when cap < 64. (VW_IFT_CRC_OMIT
 * writes zeros in the CRC field: the indication's CRC is always there.) */
size_t vw_ift_ind_encode(const struct vw_ift_ind_enc *enc, uint8_t *buf, size_t cap);

/* ------------------------------------------------------ DDP header (I5) */

#define VW_DDP_TAGGED_HDR_LEN 14   /* RFC 5041 4.2 */
#define VW_DDP_UNTAGGED_HDR_LEN 18 /* RFC 5041 4.3 */
#define VW_DDP_VERSION 1
#define VW_RDMAP_VERSION 1
#define VW_DDP_FLAG_T 0x80u
#define VW_DDP_FLAG_L 0x40u
#define VW_DDP_DV_MASK 0x03u
#define VW_RDMAP_READ_REQ_HDR_LEN 28 /* RFC 5040 4.4: sink STag, TO, size, source STag, TO */

/* RDMAP opcodes (RFC 5040 4.2). */
enum vw_rdmap_opcode {
    VW_RDMAP_WRITE = 0,
    VW_RDMAP_READ_REQUEST = 1,
    VW_RDMAP_READ_RESPONSE = 2,
    VW_RDMAP_SEND = 3,
    VW_RDMAP_SEND_INVALIDATE = 4,
    VW_RDMAP_SEND_SE = 5,
    VW_RDMAP_SEND_SE_INVALIDATE = 6,
    VW_RDMAP_TERMINATE = 7,
};
const char *vw_rdmap_opcode_name(unsigned opcode);

struct vw_ddp_hdr {
    bool tagged;
    bool last;
    uint8_t reserved;    /* the 4 reserved bits of byte 0 */
    uint8_t dv;          /* DDP version */
    uint8_t rdmap_rv;    /* RDMAP version (byte 1, top 2 bits) */
    uint8_t rdmap_opcode;
    uint32_t stag;       /* tagged */
    uint64_t to;         /* tagged: tagged offset */
    uint32_t qn, msn, mo; /* untagged: queue, message sequence, message offset */
};

/* Decode a DDP header of exactly len bytes (14 tagged / 18 untagged).
 * Returns false if len does not match the T bit. */
bool vw_ddp_decode(const uint8_t *buf, size_t len, struct vw_ddp_hdr *h);
/* Encode (DV and RDMAP version as given in h); returns 14 or 18, 0 if cap
 * is too small. */
size_t vw_ddp_encode(const struct vw_ddp_hdr *h, uint8_t *buf, size_t cap);

/* The RDMAP (RFC 5040 4.4) RDMA Read Request header: the first 28 bytes of
 * the untagged Read Request's DDP payload (I6: payload, not header_size). */
struct vw_rdmap_read_req {
    uint32_t sink_stag;
    uint64_t sink_to;
    uint32_t size;       /* RDMA Read Message Size */
    uint32_t src_stag;
    uint64_t src_to;
};
/* Encode; returns 28, or 0 when cap is too small. */
size_t vw_rdmap_read_req_encode(const struct vw_rdmap_read_req *r, uint8_t *buf, size_t cap);
/* Decode the first 28 bytes of buf; false when len is under 28. */
bool vw_rdmap_read_req_decode(const uint8_t *buf, size_t len, struct vw_rdmap_read_req *r);

/* A whole frame of one DDP segment: the DDP header h (encoded with
 * vw_ddp_encode) and payload, under the sender's negotiated HC/PC and the
 * receiver's VTag, with good CRCs. Returns the bytes written, or 0 when cap
 * is too small or payload_len exceeds 65535. Callers that need a wrong
 * field build the frame with vw_ift_frame_enc instead. */
size_t vw_ift_frame_build(const struct vw_ddp_hdr *h, const uint8_t *payload, size_t payload_len,
                          uint16_t vtag, bool hc, bool pc, uint8_t *buf, size_t cap);

/* ------------------------------------------------------------- frame */

/* What the framer knows of a direction: its sender's HC and PC, and the
 * VTag its receiver announced. */
struct vw_ift_frame_mode {
    bool hc;
    bool pc;
    bool check_vtag;   /* false until the receiver's indication is known */
    uint16_t vtag;
};

struct vw_ift_frame {
    uint16_t header_size;
    uint16_t payload_size;
    uint16_t vtag;
    const uint8_t *ddp;       /* DDP header (header_size bytes) */
    bool ddp_decoded;         /* ddp_hdr holds an RFC 5041 header */
    struct vw_ddp_hdr ddp_hdr;
    const uint8_t *payload;
    size_t payload_offset;
    bool has_hdr_crc;
    uint32_t hdr_crc_wire, hdr_crc_computed;
    bool hdr_crc_ok;
    bool has_payload_crc;
    uint32_t payload_crc_wire, payload_crc_computed;
    bool payload_crc_ok;
};

/* Bytes of a frame with these sizes and CRCs. */
static inline size_t vw_ift_frame_len(unsigned header_size, unsigned payload_size, bool hc, bool pc)
{
    return VW_IFT_FRAME_HDR_LEN + header_size + payload_size + (hc ? VW_IFT_CRC_LEN : 0u) +
           (pc ? VW_IFT_CRC_LEN : 0u);
}

/* Frame length announced by the first four bytes under mode; 0 if fewer. */
static inline size_t vw_ift_peek_frame_len(const uint8_t *buf, size_t len,
                                           const struct vw_ift_frame_mode *mode)
{
    if (len < 4)
        return 0;
    return vw_ift_frame_len((unsigned)(buf[0] << 8 | buf[1]), (unsigned)(buf[2] << 8 | buf[3]),
                            mode->hc, mode->pc);
}

/*
 * Frame length for a reader that frames a stream itself (the dissector;
 * vw_ift_reader for the lint): the length under mode, unless the sender broke its own HC/PC announcement
 * and another CRC layout ends exactly at the bytes at hand or where a frame
 * carrying the expected VTag starts; then that layout's length, so the stream
 * stays in step and vw_ift_frame_decode_as_sent names the rule
 * (IFT-5.1-CRC-AS-NEGOTIATED). have: bytes available from buf (>= 6); 0 if
 * fewer.
 */
size_t vw_ift_frame_len_in_step(const uint8_t *buf, size_t have, const struct vw_ift_frame_mode *mode);

/*
 * Decode one frame; len must be the whole frame (as a framer delivers it).
 * Returns VW_REQ_NONE when parsed (wrong VTag, bad CRCs, DDP header size
 * notes, an RDMAP header counted in header_size go to findings), or VW_REQ_IFT_5_1_FRAME_TRUNCATED (under 6 bytes)
 * / VW_REQ_IFT_5_1_FRAME_LEN (the sizes and CRCs do not add up to len).
 */
enum vw_req vw_ift_frame_decode(const uint8_t *buf, size_t len, const struct vw_ift_frame_mode *mode,
                                struct vw_ift_frame *frame, struct vw_findings *findings);

/* First rule of a decoded frame that closes the connection (I8: wrong
 * VTag, bad header or payload CRC), else VW_REQ_NONE. */
enum vw_req vw_ift_frame_fatal(const struct vw_ift_frame *frame, const struct vw_ift_frame_mode *mode);

/* A capture that starts after the indications: find the HC/PC combination
 * under which buf (>= one whole frame) starts with a frame whose sizes fit
 * and whose CRCs all match, preferring the one that verifies the most CRCs.
 * Returns true and sets mode->hc/pc (VTag unchecked) when that choice is
 * unique; false (mode untouched) when nothing fits or it is ambiguous. */
bool vw_ift_guess_mode(const uint8_t *buf, size_t len, struct vw_ift_frame_mode *mode);

/* The CRCs a whole frame of len bytes carries, from its sizes: none, both,
 * or (one CRC's room) the one that verifies in place, the announced one
 * when neither or both verify. For a sender that breaks its own HC/PC.
 * carried keeps announced's VTag check. False when len fits no layout. */
bool vw_ift_frame_layout(const uint8_t *buf, size_t len, const struct vw_ift_frame_mode *announced,
                         struct vw_ift_frame_mode *carried);

/* Decode a whole frame with the CRCs it carries (vw_ift_frame_layout) and
 * add IFT-5.1-CRC-AS-NEGOTIATED for each CRC missing or extra against what
 * its sender announced. When no layout fits, decodes as announced (and
 * returns IFT-5.1-FRAME-LEN). carried receives the layout used. */
enum vw_req vw_ift_frame_decode_as_sent(const uint8_t *buf, size_t len,
                                        const struct vw_ift_frame_mode *announced,
                                        struct vw_ift_frame *frame, struct vw_ift_frame_mode *carried,
                                        struct vw_findings *findings);

struct vw_ift_frame_enc {
    uint16_t vtag;
    const uint8_t *ddp;        /* DDP header bytes, written verbatim */
    size_t ddp_len;
    const uint8_t *payload;
    size_t payload_len;
    bool hc, pc;               /* CRCs negotiated by the sender */
    enum vw_ift_crc_write hdr_crc, payload_crc;
    uint32_t hdr_crc_value, payload_crc_value;
    bool keep_sizes;           /* write header_size/payload_size as given, right or wrong */
    uint16_t header_size, payload_size;
};

void vw_ift_frame_enc_init(struct vw_ift_frame_enc *enc, uint16_t vtag, bool hc, bool pc,
                           const uint8_t *ddp, size_t ddp_len, const uint8_t *payload,
                           size_t payload_len);
/* Bytes vw_ift_frame_encode will write. */
size_t vw_ift_frame_encoded_len(const struct vw_ift_frame_enc *enc);
/* Encode (never allocates). Returns the bytes written, or 0 when cap is
 * too small or a part exceeds 65535 bytes. */
size_t vw_ift_frame_encode(const struct vw_ift_frame_enc *enc, uint8_t *buf, size_t cap);

#endif
