/*
 * VI/TCP segments (draft-dicecco-vitcp-01, section 3) as the project reads
 * them (../shared/spec-decisions.md V1-V25): constants, the decoded form,
 * a bounds-checked decoder that names every violated rule, and an encoder
 * that can also write deliberately wrong values for the traffic generator.
 *
 * Wire layout (all numeric fields big-endian):
 *   segment header   24 bytes   always
 *   RDMA header      16 bytes   RdmaWrite, RdmaReadRequest (V7)
 *   CE header       140 bytes   ConnectRequest, ConnectAccept (V6)
 *     + options               up to the trailer (V5)
 *   payload                    Send, RdmaWrite, RdmaReadResponse
 *   trailer CRC       4 bytes   when negotiated (3.5, 3.6); LSB first (V4)
 * Segment Length counts every byte including the trailer (V2).
 */
#ifndef VITCP_VITCP_H
#define VITCP_VITCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vitcp/findings.h"

#define VW_VITCP_VERSION 1
#define VW_VITCP_DEFAULT_PORT 5995 /* V1 */
#define VW_VITCP_SEG_HDR_LEN 24
#define VW_VITCP_RDMA_HDR_LEN 16
#define VW_VITCP_DISC_MAX 64
#define VW_VITCP_CE_HDR_LEN (4 + 4 + VW_VITCP_DISC_MAX + 4 + VW_VITCP_DISC_MAX) /* 140 */
#define VW_VITCP_CRC_LEN 4
#define VW_VITCP_SEG_MAX 65535u
#define VW_VITCP_MTU_NOTE_BELOW 32768u /* V11: accepted with a note */

enum vw_vitcp_type {
    VW_VITCP_SEND = 0,
    VW_VITCP_RDMA_WRITE = 1,
    VW_VITCP_RDMA_READ_REQ = 2,
    VW_VITCP_RDMA_READ_RESP = 3,
    VW_VITCP_NOP = 4,
    VW_VITCP_CONNECT_REQUEST = 5,
    VW_VITCP_CONNECT_ACCEPT = 6,
    VW_VITCP_CONNECT_REJECT = 7,
    VW_VITCP_CONNECT_NOMATCH = 8,
    VW_VITCP_TYPE_COUNT = 9,
};

/* Type/Flags byte: | EOM | IDV | TxErr | Type (5 bits) | */
#define VW_VITCP_FLAG_EOM 0x80u
#define VW_VITCP_FLAG_IDV 0x40u
#define VW_VITCP_FLAG_TXERR 0x20u
#define VW_VITCP_TYPE_MASK 0x1Fu

/* Remote Error Code: | IS error code (8) | reserved (5) | UTE | VDE | MPE | */
#define VW_VITCP_ERR_MPE 0x0001u
#define VW_VITCP_ERR_VDE 0x0002u
#define VW_VITCP_ERR_UTE 0x0004u
#define VW_VITCP_ERR_RESERVED 0x00F8u
#define VW_VITCP_ERR_IS_SHIFT 8

/* Calling Attributes (V8). */
#define VW_VITCP_ATTR_UNRELIABLE 0x0001u
#define VW_VITCP_ATTR_RELIABLE_DELIVERY 0x0002u
#define VW_VITCP_ATTR_RELIABLE_RECEPTION 0x0004u
#define VW_VITCP_ATTR_RDMA_WRITE 0x0008u
#define VW_VITCP_ATTR_RDMA_READ 0x0010u
#define VW_VITCP_ATTR_DFC 0x0020u
#define VW_VITCP_ATTR_P2P 0x0040u
#define VW_VITCP_ATTR_RELIABILITY_MASK 0x0007u
#define VW_VITCP_ATTR_RESERVED 0xFF80u

/* CE options (V5): Type(16) Length(16, counts Type and Length) Data. */
enum vw_vitcp_opt_type {
    VW_VITCP_OPT_EOL = 0,
    VW_VITCP_OPT_CRC = 1,
    VW_VITCP_OPT_URGENT = 2,
};
#define VW_VITCP_OPT_HDR_LEN 4

struct vw_vitcp_hdr {
    uint8_t version;
    uint8_t type;  /* low 5 bits of byte 1 */
    uint8_t flags; /* high 3 bits of byte 1 (VW_VITCP_FLAG_*) */
    uint16_t seg_len;
    uint32_t data_offset;
    uint32_t imm_data;
    uint32_t msg_num;
    uint32_t msg_ack;
    uint16_t rx_desc_posted;
    uint16_t remote_err; /* whole 16-bit Remote Error Code */
};

struct vw_vitcp_rdma {
    uint64_t addr;
    uint32_t handle;
    uint32_t length;
};

struct vw_vitcp_ce {
    uint16_t attrs;
    uint16_t calling_disc_len;
    uint32_t mtu;
    uint8_t calling_disc[VW_VITCP_DISC_MAX];
    uint16_t rdma_read_window;
    uint16_t called_disc_len;
    uint8_t called_disc[VW_VITCP_DISC_MAX];
    /* Options area as found on the wire (decoder: points into the segment;
     * encoder: the bytes to write, built with vw_vitcp_opts_build or by hand). */
    const uint8_t *options;
    size_t options_len;
    /* Summary filled by the decoder. */
    bool opt_crc;     /* CRC option present */
    bool opt_urgent;  /* Urgent Marker option present */
    bool opt_eol;     /* End of Option List present */
    unsigned opt_unknown; /* options of unknown type */
};

/* One decoded segment. Pointers refer into the buffer given to the decoder. */
struct vw_vitcp_seg {
    struct vw_vitcp_hdr hdr;
    bool has_rdma;
    struct vw_vitcp_rdma rdma;
    bool has_ce;
    struct vw_vitcp_ce ce;
    const uint8_t *payload;
    size_t payload_len;
    size_t payload_offset; /* offset of payload in the segment */
    bool has_crc;
    uint32_t crc_wire;     /* trailer as written, read LSB first (V4) */
    uint32_t crc_computed; /* vw_crc_vitcp over the bytes before the trailer */
    bool crc_ok;
};

/* Whether the trailer CRC is expected on non-CE segments (3.5). */
enum vw_vitcp_crc_mode {
    VW_VITCP_CRC_OFF, /* negotiated off: no trailer */
    VW_VITCP_CRC_ON,  /* negotiated on: trailer present */
    VW_VITCP_CRC_AUTO /* unknown (capture started mid-connection): infer */
};

/* Does a type carry an RDMA header / CE header / payload / immediate data? */
bool vw_vitcp_type_has_rdma(unsigned type);
bool vw_vitcp_type_has_ce(unsigned type);
bool vw_vitcp_type_has_payload(unsigned type);
bool vw_vitcp_type_supports_imm(unsigned type);
bool vw_vitcp_type_single_segment(unsigned type);
/* Fixed header bytes (segment + RDMA + CE header) of a type. */
size_t vw_vitcp_type_hdr_len(unsigned type);
/* "Send", "RdmaWrite", ... ; "Unknown" for others. */
const char *vw_vitcp_type_name(unsigned type);
const char *vw_vitcp_opt_name(unsigned opt_type);

/*
 * Decode one segment from buf[0..len). len must be the whole segment
 * (normally hdr.seg_len bytes, as a framer delivers it).
 * crc_mode says whether non-CE segments carry the trailer; CE segments decide
 * from their own content (3.5, V6). With VW_VITCP_CRC_AUTO the decoder
 * accepts the trailer if its CRC matches (and reports the guess as a note).
 * Returns VW_REQ_NONE when the segment could be parsed (rule violations that
 * do not prevent parsing go to findings, which may be NULL), or the rule
 * whose violation made parsing impossible (truncated, Segment Length below
 * the headers of its type, ...); *seg is then only partly filled.
 */
enum vw_req vw_vitcp_decode(const uint8_t *buf, size_t len, enum vw_vitcp_crc_mode crc_mode,
                            struct vw_vitcp_seg *seg, struct vw_findings *findings);

/* Read just the Segment Length from >= 4 bytes; 0 if fewer bytes. */
static inline unsigned vw_vitcp_peek_seg_len(const uint8_t *buf, size_t len)
{
    return len < 4 ? 0u : (unsigned)(buf[2] << 8 | buf[3]);
}

/*
 * Stateless rule checks of one decoded segment that need no connection
 * state (reserved bits, version, IDV/immediate data by type, EOM on
 * single-segment types, option rules, CE field ranges). vw_vitcp_decode
 * already calls it; exposed for tools that build segments.
 */
void vw_vitcp_check_segment(const struct vw_vitcp_seg *seg, struct vw_findings *findings);

/* How an encoder writes the trailer. */
enum vw_vitcp_trailer {
    VW_VITCP_TRAILER_NONE,
    VW_VITCP_TRAILER_CRC,       /* correct CRC, LSB first */
    VW_VITCP_TRAILER_BAD_CRC,   /* correct CRC with every bit inverted */
    VW_VITCP_TRAILER_VALUE,     /* trailer_value written LSB first as given */
    VW_VITCP_TRAILER_CRC_BE,    /* correct CRC written MSB first (another reading) */
    VW_VITCP_TRAILER_CRC_MSB_FIRST, /* vw_crc_vitcp_msb_first, LSB first */
};

struct vw_vitcp_enc {
    struct vw_vitcp_hdr hdr;    /* seg_len: computed unless keep_seg_len */
    bool keep_seg_len;          /* write hdr.seg_len as given, right or wrong */
    bool with_rdma;             /* write an RDMA header (normally by type) */
    struct vw_vitcp_rdma rdma;
    bool with_ce;               /* write a CE header (normally by type) */
    struct vw_vitcp_ce ce;      /* ce.options/options_len written verbatim */
    const uint8_t *payload;
    size_t payload_len;
    enum vw_vitcp_trailer trailer;
    uint32_t trailer_value;
};

/* Fill enc with the defaults for a type: version 1, has-headers by type,
 * EOM set, trailer per crc_on. */
void vw_vitcp_enc_init(struct vw_vitcp_enc *enc, unsigned type, bool crc_on);

/* Bytes vw_vitcp_encode will write for enc. */
size_t vw_vitcp_encoded_len(const struct vw_vitcp_enc *enc);

/* Encode into buf (never allocates). Returns the bytes written, or 0 when
 * cap is too small or the segment would exceed 65535 bytes without
 * keep_seg_len (a wrong length must be asked for explicitly). */
size_t vw_vitcp_encode(const struct vw_vitcp_enc *enc, uint8_t *buf, size_t cap);

/* Build an options area: CRC option, Urgent Marker option, then End of
 * Option List (always written when crc is set, as 3.3 requires).
 * Returns the bytes written (0 if cap too small). */
size_t vw_vitcp_opts_build(uint8_t *buf, size_t cap, bool crc, bool urgent, bool eol);

/* Walk an options area (V5). Returns 1 and fills *type, *len and *data when an
 * option was read and *pos advanced; 0 at the end (EOL or end of area);
 * -1 on a malformed option (length < 4 or past the area). */
int vw_vitcp_opt_next(const uint8_t *opts, size_t opts_len, size_t *pos,
                      uint16_t *type, uint16_t *len, const uint8_t **data);

#endif
