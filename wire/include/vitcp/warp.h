/*
 * WARP over TCP, the sketch of Appendix A of draft-jpink-warp-summary-00, as
 * the project reads it (../shared/spec-decisions.md W1-W4).
 *
 * Chunk (numeric fields big-endian):
 *    0 Type(4) Rsvd(9) E C L | 2 Chunk length (whole chunk, W2)
 *   RDMA (type 1):  4 RID(32)  8 Buffer Offset(64)  16 payload
 *   Send (type 0):  4 SSN(32)  8 Buffer Offset(32)  12 payload
 *   last 4 bytes: Adler-32 of every byte before it, big-endian (W3)
 */
#ifndef VITCP_WARP_H
#define VITCP_WARP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vitcp/findings.h"

#define VW_WARP_DEFAULT_PORT 5997 /* W1 */
#define VW_WARP_SEND_HDR_LEN 12
#define VW_WARP_RDMA_HDR_LEN 16
#define VW_WARP_ADLER_LEN 4
#define VW_WARP_CHUNK_MAX 65535u
/* Smallest length the framer accepts for any type: word, length, Adler. */
#define VW_WARP_CHUNK_MIN_ANY 8u

enum vw_warp_type {
    VW_WARP_SEND = 0,
    VW_WARP_RDMA = 1,
};
/* First 16-bit word: | Type (4) | reserved (9) | E | C | L | */
#define VW_WARP_TYPE_SHIFT 12
#define VW_WARP_RSVD_MASK 0x0FF8u
#define VW_WARP_FLAG_E 0x0004u
#define VW_WARP_FLAG_C 0x0002u
#define VW_WARP_FLAG_L 0x0001u

/* "Send", "RDMA Write", "Unknown". */
const char *vw_warp_type_name(unsigned type);
/* Header bytes of a known type (12 / 16), 0 for unknown types. */
size_t vw_warp_type_hdr_len(unsigned type);

struct vw_warp_chunk {
    uint8_t type;
    uint16_t rsvd;        /* the 9 reserved bits, shifted down */
    uint16_t flags;       /* VW_WARP_FLAG_* */
    uint16_t chunk_len;
    uint32_t rid;         /* RDMA */
    uint64_t offset;      /* RDMA: 64-bit buffer offset; Send: 32-bit */
    uint32_t ssn;         /* Send */
    const uint8_t *payload;
    size_t payload_len;
    size_t payload_offset;
    uint32_t adler_wire;
    uint32_t adler_computed;
    bool adler_ok;
};

/* Chunk length from the first four bytes; 0 if fewer. */
static inline unsigned vw_warp_peek_chunk_len(const uint8_t *buf, size_t len)
{
    return len < 4 ? 0u : (unsigned)(buf[2] << 8 | buf[3]);
}

/*
 * Decode one chunk; len must be the whole chunk (normally chunk_len bytes).
 * Returns VW_REQ_NONE when parsed (bad Adler-32, reserved bits, C without
 * L, E set go to findings, which may be NULL), or the rule that made
 * parsing impossible: VW_REQ_WARP_A_TRUNCATED, VW_REQ_WARP_A_CHUNK_LEN
 * (length field not len, or under the type's header plus Adler-32),
 * VW_REQ_WARP_A_TYPE_KNOWN (chunk->adler_* are still filled).
 */
enum vw_req vw_warp_decode(const uint8_t *buf, size_t len, struct vw_warp_chunk *chunk,
                           struct vw_findings *findings);

/* W15: a chunk whose first byte is 0x01 is an RDMA Write written with
 * the summary's 8-bit Type code (line 235); W1's 4-bit Type reads it as a
 * Send with reserved bits set. vw_warp_decode names the reading (error
 * WARP-A-TYPE-KNOWN) instead of decoding it as a Send. */
#define VW_WARP_TYPE8_RDMA_BYTE 0x01u

/* W15: true when the four bytes at p (the place of the next chunk's
 * header) are the Adler-32 of every byte of the chunk before them, whose
 * own Adler-32 was bad (full_adler = vw_adler32 of that whole chunk): the
 * sender's Chunk length left its Adler-32 out (W2 counts it). */
bool vw_warp_len_without_adler(uint32_t full_adler, const uint8_t *p);
/* Detail text of that reading, for both tools. */
#define VW_WARP_NO_ADLER_TEXT                                                              \
    "the previous chunk's Adler-32 follows its Chunk length: that length leaves the Adler-32 out " \
    "(W2 counts header, payload and Adler-32); framing lost"

/* W17: the other Chunk length W2 rejects, one that counts the payload only
 * (a chunk is then header + length + 4 bytes). Given the bytes at hand from
 * a chunk's start (have of them: in both tools, up to the end of the TCP
 * segment that holds the chunk's start), says whether they show that
 * reading: never while the W2 reading frames a chunk whose Adler-32 is
 * right or W15's reading (Adler-32 left out) holds; VW_WARP_PO_ADLER when the Adler-32 after header + length bytes is
 * theirs; VW_WARP_PO_NEXT when, short of that, a chunk header (known type,
 * reserved bits zero, C only with L) follows that Adler-32's place. Reads
 * at most the payload-only chunk and 4 bytes after it; the Adler-32 is
 * computed only when the bytes reach that far. */
enum vw_warp_po { VW_WARP_PO_NO, VW_WARP_PO_ADLER, VW_WARP_PO_NEXT };
enum vw_warp_po vw_warp_payload_only(const uint8_t *p, size_t have);
/* Detail text of that reading, for both tools (NULL for VW_WARP_PO_NO). */
const char *vw_warp_payload_only_text(enum vw_warp_po po);

/* How the encoder writes the Adler-32. */
enum vw_warp_adler_write {
    VW_WARP_ADLER_GOOD,   /* correct, big-endian (W3) */
    VW_WARP_ADLER_BAD,    /* correct with every bit inverted */
    VW_WARP_ADLER_VALUE,  /* adler_value as given, big-endian */
    VW_WARP_ADLER_LE,     /* correct, least significant byte first (another reading) */
};

struct vw_warp_enc {
    uint8_t type;          /* written as given (4 bits), unknown types allowed */
    uint16_t rsvd;         /* 9 bits written as given */
    uint16_t flags;
    uint32_t rid;
    uint64_t offset;       /* Send: low 32 bits written */
    uint32_t ssn;
    const uint8_t *payload;
    size_t payload_len;
    bool keep_chunk_len;   /* write chunk_len as given, right or wrong */
    uint16_t chunk_len;
    enum vw_warp_adler_write adler;
    uint32_t adler_value;
};

/* Defaults for a type: reserved 0, flags 0 (set L and C yourself). */
void vw_warp_enc_init(struct vw_warp_enc *enc, unsigned type, const uint8_t *payload,
                      size_t payload_len);
/* Bytes vw_warp_encode will write (Send layout for unknown types). */
size_t vw_warp_encoded_len(const struct vw_warp_enc *enc);
/* Encode into buf (never allocates): bytes written, or 0 when cap is too
 * small or the chunk would exceed 65535 bytes. */
size_t vw_warp_encode(const struct vw_warp_enc *enc, uint8_t *buf, size_t cap);

#endif
