/*
 * PacketWay EEP messages (draft-ietf-pktway-protocol-eep-spec-03) as the
 * project reads them (../shared/spec-decisions.md P1-P8). EEP is
 * message-based (Ethertype 0x88B5, UDP port 5998, P1): a decoder takes one
 * whole message, there is no stream framer.
 *
 * Message, all in 8-byte words, headers big-endian:
 *   [L2RHs and symbols]  byte 1 = 0b10LLLLLL: L2RH, 8*[(L+9)/8] bytes (P2)
 *                        byte 1 = 0b1111ssss: symbol, 8*[(L+12)/8] bytes (P4)
 *   EEP header, 16 bytes:
 *      0 V(2) P(6) | 1 Destination-Type(24) | 4 TE(16) | 6 PT(16)
 *      8 E(4) PL(3) DL(25) | 12 h(1) RZ(7) | 13 Source Address(24)
 *   [optional header fields] when h: TCtttttt L data, 8*[(L+9)/8] bytes,
 *                        the last one has C = 1
 *   [data block]         DL words, of which the last PL bytes are padding
 *   [optional trailer fields] sized by the OH fields (P3)
 *   TAIL                 8-byte Error Indication, the last 8 bytes (P3)
 */
#ifndef VITCP_PKTWAY_H
#define VITCP_PKTWAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vitcp/findings.h"

#define VW_EEP_ETHERTYPE 0x88B5u /* P1 */
#define VW_EEP_UDP_PORT 5998     /* P1 */
#define VW_EEP_WORD 8
#define VW_EEP_HDR_LEN 16
#define VW_EEP_TAIL_LEN 8
#define VW_EEP_MIN_LEN (VW_EEP_HDR_LEN + VW_EEP_TAIL_LEN)
#define VW_EEP_DL_MAX 0x1FFFFFFu /* 25 bits */

/* Reserved physical addresses (6c). */
#define VW_EEP_ADDR_UNDEFINED 0x000000u
#define VW_EEP_ADDR_HEY_YOU 0x7FFFFEu
#define VW_EEP_ADDR_BROADCAST 0x7FFFFFu

/* Destination-Type kinds by their most significant bits (6c). */
enum vw_eep_dt_kind {
    VW_EEP_DT_PHYSICAL, /* 0xxx: 23-bit physical address */
    VW_EEP_DT_L2RH,     /* 10xx */
    VW_EEP_DT_RESERVED, /* 110x */
    VW_EEP_DT_LOGICAL,  /* 1110: 20-bit logical address */
    VW_EEP_DT_SYMBOL,   /* 1111: 20-bit symbol type */
};
enum vw_eep_dt_kind vw_eep_dt_kind(uint32_t dt24);
const char *vw_eep_dt_kind_name(enum vw_eep_dt_kind kind);
/* The address or symbol value inside a Destination-Type (23 / 20 bits). */
uint32_t vw_eep_dt_value(uint32_t dt24);
/* "Undefined", "Hey-You", "Broadcast" for the reserved physical addresses,
 * NULL for others. */
const char *vw_eep_reserved_addr_name(uint32_t addr24);

/* Packet types and ERR type extensions (P8: project-local, configurable). */
struct vw_eep_types {
    uint16_t pt_rrp, pt_err, pt_ipv4, pt_ipv6;
    uint16_t te_err_unknown_dest, te_err_too_long, te_err_unknown_oh;
};
extern const struct vw_eep_types vw_eep_types_default; /* 1, 2, 0x0800, 0x86DD; 1, 2, 3 */
/* "RRP", "ERR", "IPv4", "IPv6", "Unknown"; types NULL means the defaults. */
const char *vw_eep_pt_name(const struct vw_eep_types *types, uint16_t pt);
/* TE of an ERR message: "Destination Unknown (UNK)", ...; NULL when pt is
 * not ERR or the TE is unknown. */
const char *vw_eep_te_name(const struct vw_eep_types *types, uint16_t pt, uint16_t te);
/* The e bit of E (6f): "Big-Endian" / "Little-Endian". */
const char *vw_eep_endian_name(uint8_t e4);

/* Leading records before the EEP header (5). */
enum vw_eep_route_kind { VW_EEP_ROUTE_L2RH, VW_EEP_ROUTE_SYMBOL };
const char *vw_eep_route_kind_name(enum vw_eep_route_kind kind);

struct vw_eep_route {
    enum vw_eep_route_kind kind;
    uint8_t version;       /* byte 0 top 2 bits */
    uint8_t priority;      /* byte 0 low 6 bits */
    uint32_t symbol_type;  /* symbols: 20 bits */
    uint8_t data_len;      /* L */
    const uint8_t *data;   /* L bytes of routing or symbol data */
    size_t offset;         /* record offset in the message */
    size_t record_len;     /* bytes including padding */
};

/* Kind of record that starts at buf (>= 2 bytes): 1 = L2RH/symbol (kind
 * set), 0 = the EEP header starts here. */
int vw_eep_record_kind(const uint8_t *buf, size_t len, enum vw_eep_route_kind *kind);
/* Bytes of an L2RH / symbol record with L data bytes (P2, P4). */
static inline size_t vw_eep_l2rh_len(unsigned l) { return 8u * ((l + 9u) / 8u); }
static inline size_t vw_eep_symbol_len(unsigned l) { return 8u * ((l + 12u) / 8u); }
static inline size_t vw_eep_oh_len(unsigned l) { return 8u * ((l + 9u) / 8u); }

/* Walk the records area of a decoded message. Returns 1 and fills *r
 * (advancing *pos), 0 at the end, -1 on a malformed record. */
int vw_eep_route_next(const uint8_t *area, size_t area_len, size_t *pos, struct vw_eep_route *r);

struct vw_eep_hdr {
    uint8_t version;    /* V, 2 bits */
    uint8_t priority;   /* P, 6 bits */
    uint32_t dt;        /* Destination-Type, 24 bits */
    uint16_t te;        /* Type Extension */
    uint16_t pt;        /* Packet Type */
    uint8_t endian;     /* E, 4 bits (MSbit e: 1 = little-endian data) */
    uint8_t pl;         /* PL, 3 bits */
    uint32_t dl;        /* DL, 25 bits, 8-byte words */
    bool h;             /* optional header fields follow */
    uint8_t rz;         /* RZ, 7 bits */
    uint32_t sa;        /* Source Address, 24 bits */
};

/* Optional header field (7). */
#define VW_EEP_OH_T 0x80u /* mandatory */
#define VW_EEP_OH_C 0x40u /* last OH field */
#define VW_EEP_OH_TYPE_MASK 0x3Fu
struct vw_eep_oh {
    bool mandatory;     /* T */
    bool last;          /* C */
    uint8_t type;       /* 6 bits */
    uint8_t data_len;   /* L */
    const uint8_t *data;
    size_t offset;      /* offset in the message */
    size_t field_len;   /* bytes including padding */
};
/* Walk an OH area. Returns 1 and fills *oh, 0 after the field with C = 1
 * or at the end of the area, -1 when a field runs past the area. */
int vw_eep_oh_next(const uint8_t *area, size_t area_len, size_t *pos, struct vw_eep_oh *oh);

/* One decoded message; pointers refer into the decoder's buffer. */
struct vw_eep_msg {
    const uint8_t *routes;  /* leading records (offset 0) */
    size_t routes_len;
    unsigned n_l2rh, n_symbols;
    size_t hdr_offset;
    struct vw_eep_hdr hdr;
    const uint8_t *oh;      /* optional header fields */
    size_t oh_len;
    unsigned n_oh, n_oh_mandatory;
    size_t db_offset;
    size_t db_len;          /* 8 * DL */
    const uint8_t *data;    /* the data (db_len - PL bytes) */
    size_t data_len;
    const uint8_t *ot;      /* optional trailer fields (unsized, P3) */
    size_t ot_len;
    size_t tail_offset;
    uint64_t ei;            /* TAIL error indication */
    size_t msg_len;         /* bytes of the message proper */
    size_t link_padding;    /* bytes after the message (P1, messages without OH only) */
};

/*
 * Decode one message from buf[0..len) as the carrier delivered it.
 * Without optional header fields the header sizes the message and bytes
 * beyond it are link padding (a note); with them the TAIL is the last 8
 * bytes (P3). Returns VW_REQ_NONE when parsed (other violations go to
 * findings, which may be NULL), or the rule that made parsing impossible:
 * VW_REQ_EEP_4A_TRUNCATED, VW_REQ_EEP_5A_L2RH_LEN, VW_REQ_EEP_5B_SYMBOL_LEN,
 * VW_REQ_EEP_7_OH_FORMAT, VW_REQ_EEP_6H_DL_FITS, VW_REQ_EEP_1B_8B_WORDS (a
 * message that is not whole words, P11). A record sized otherwise than
 * P2 / P4 is found by the clean reading after it and returned as
 * 5A / 5B with one finding; msg->routes_len is then its offset (P12).
 */
enum vw_req vw_eep_decode(const uint8_t *buf, size_t len, struct vw_eep_msg *msg,
                          struct vw_findings *findings);

/* What carries the message (P1): a link frame may be padded after the
 * message; a datagram (UDP) is exactly the message. */
enum vw_eep_carrier {
    VW_EEP_CARRIER_LINK,     /* Ethernet: vw_eep_decode's reading */
    VW_EEP_CARRIER_DATAGRAM, /* UDP: the TAIL is the last 8 bytes even without OH fields */
};
/* vw_eep_decode for a carrier. Over a datagram a message without optional
 * header fields has its TAIL in the last 8 bytes, and bytes between the
 * data block and the TAIL break EEP-9-OT-NEEDS-OH. */
enum vw_req vw_eep_decode_on(const uint8_t *buf, size_t len, enum vw_eep_carrier carrier,
                             struct vw_eep_msg *msg, struct vw_findings *findings);

/* Notes a display adds to a message decoded without error (buf is the
 * decoded buffer): records not yet consumed (EEP-4B-ROUTES-CONSUMED),
 * Hey-You!/Broadcast (EEP-6C-LOCAL-ONLY), a PT outside types
 * (EEP-6E-PT-KNOWN; NULL: the P8 defaults), an ERR whose TE is not one of
 * types' (EEP-6E-ERR-TE) and non-zero padding (EEP-3-PADDING-UNCHECKED). None is a violation a receiver can hold
 * against the sender, so lint and conformance leave them out. */
void vw_eep_notes(const uint8_t *buf, const struct vw_eep_msg *msg, const struct vw_eep_types *types,
                  struct vw_findings *findings);

/* A router forwarding the TAIL (P6, section 10): shift left by one unless
 * the MSbit is set, then set the LSbit when this router saw an error. */
static inline uint64_t vw_eep_tail_forward(uint64_t ei, bool error)
{
    if (!(ei >> 63))
        ei <<= 1;
    return error ? (ei | 1u) : ei;
}

/* ------------------------------------------------------ router check */

/* What the link into a router did to a message, as the tester knows it. */
enum vw_eep_link_state {
    VW_EEP_LINK_CLEAN,   /* nothing damaged: the TAIL is shifted, LSbit not set */
    VW_EEP_LINK_DAMAGED, /* the router could see an error: shifted and LSbit set */
    VW_EEP_LINK_UNKNOWN, /* a capture: either is right */
};

/*
 * A message a router received (in) against the copy it forwarded (out),
 * both decoded without error from their buffers: the rules of a router
 * (sections 4b, 5, 8, 10; P6). The copy must carry the EEP header, OH
 * fields, data block and trailer fields byte for byte
 * (EEP-4B-ONLY-TAIL-MODIFIED; a changed data block is EEP-8-DB-UNMODIFIED);
 * its records must be in's minus the leading symbols and the first L2RH
 * (EEP-5-HR-CONSUMES-L2RH), or minus the symbols when no L2RH leads
 * (EEP-5-SYMBOL-CONSUMED); records a router put in front of those are
 * allowed (1c) and noted; its TAIL must be vw_eep_tail_forward of in's
 * (EEP-10-EI-SHIFT, EEP-10-EI-ERROR-LSBIT). Returns true when the copy
 * keeps every rule. For the active router cases, and for a capture that
 * holds both sides of a router.
 */
bool vw_eep_forward_check(const uint8_t *in_buf, const struct vw_eep_msg *in, const uint8_t *out_buf,
                          const struct vw_eep_msg *out, enum vw_eep_link_state link,
                          struct vw_findings *findings);

/* ------------------------------------------------------ router pairs */

/*
 * A capture that holds both hops of a message through a router (P11, P31):
 * the wire library pairs the copies so that lint and the dissector judge
 * them alike. A router has an address per interface (it receives on one
 * and forwards from another, over UDP or Ethernet), so copies are paired
 * by what a router may not change, whatever addresses carry them: a later
 * copy pairs with an earlier one of the same version, DT, SA and PT, seen
 * at most VW_EEP_PAIR_USEC before it, that has the same data block and
 * trailer or the same EEP header apart from the priority and OH fields;
 * never with one its own sender sent (the sender again) nor one it goes
 * back to (its destination is the earlier one's sender). Named router
 * addresses (vw_eep_pairer_add_router) settle ambiguous captures: then only
 * a copy sent from a router address, of a message sent to one (or to a
 * group), is a router's. Among candidates: the same data block first, then
 * the same header, then the one sent to this copy's sender (a router with
 * one address), then one not yet forwarded, then the oldest (the same
 * frame again, same addresses and bytes, is no hop and is kept once). The
 * pair is judged by vw_eep_forward_check with the link state unknown (TAIL
 * shift, records consumed, header, priority, data block and trailer
 * unmodified), and a forwarded Hey-You!/Broadcast breaks EEP-6C-LOCAL-ONLY
 * (P7).
 */
struct vw_eep_hop {
    uint8_t src[16], dst[16]; /* the carrier's addresses: MAC (Ethernet) or IP (UDP) */
    uint8_t len;              /* 6, 4 or 16; 0 = unknown (never paired) */
    uint64_t ts_usec;         /* capture time (vw_eep_hop_set_time); 0 = unknown: no time window */
};
/* len 6 (MAC), 4 (IPv4) or 16 (IPv6); anything else leaves the hop unknown. */
void vw_eep_hop_set(struct vw_eep_hop *hop, const uint8_t *src, const uint8_t *dst, size_t len);
static inline void vw_eep_hop_set_time(struct vw_eep_hop *hop, uint64_t ts_usec) { hop->ts_usec = ts_usec; }
/* An address written as a MAC (aa:bb:cc:dd:ee:ff), IPv4 or IPv6: its bytes
 * and length (6, 4, 16); false when it is none of them. */
bool vw_eep_addr_parse(const char *text, uint8_t out[16], size_t *len);

#define VW_EEP_PAIR_WINDOW 64 /* messages kept to pair with (copies of their bytes) */
#define VW_EEP_PAIR_USEC 1000000u /* a router's copy follows its first hop within a second (P31) */
#define VW_EEP_PAIR_ROUTERS_MAX 32
struct vw_eep_pairer;
/* NULL when out of memory. */
struct vw_eep_pairer *vw_eep_pairer_new(void);
void vw_eep_pairer_free(struct vw_eep_pairer *p);
/* Name one of a router's addresses (len 6, 4 or 16); false when the list
 * is full or the address is not one. Once any is named, only copies sent
 * from a named address are a router's (P31). */
bool vw_eep_pairer_add_router(struct vw_eep_pairer *p, const uint8_t *addr, size_t len);
/* Name router addresses from a list of them separated by commas or spaces;
 * false (and *bad the first one that is not an address) on an error. */
bool vw_eep_pairer_add_routers(struct vw_eep_pairer *p, const char *list, char *bad, size_t badlen);
/* Offer the next message of a capture (decoded without error from buf;
 * frame numbers increase). Returns true when it is a router's copy of an
 * earlier message: *first_frame names that one and the router rules go to
 * findings (offsets in buf). The message is kept for later hops (a copy:
 * buf may go away; when memory runs out it is not kept). */
bool vw_eep_pairer_add(struct vw_eep_pairer *p, uint64_t frame, const struct vw_eep_hop *hop,
                       enum vw_eep_carrier carrier, const uint8_t *buf, const struct vw_eep_msg *m,
                       uint64_t *first_frame, struct vw_findings *fs);

/* ------------------------------------------------------------ encoder */

struct vw_eep_route_enc {
    enum vw_eep_route_kind kind;
    uint8_t version, priority;
    uint32_t symbol_type;      /* symbols */
    const uint8_t *data;
    size_t data_len;           /* L2RH: <= 63; symbol: <= 255 */
};

struct vw_eep_oh_enc {
    bool mandatory;
    uint8_t type;              /* 6 bits */
    bool last;                 /* C as written when keep_c is set */
    const uint8_t *data;
    size_t data_len;           /* <= 255 */
};

struct vw_eep_enc {
    const struct vw_eep_route_enc *routes;
    size_t n_routes;
    struct vw_eep_hdr hdr;     /* dl, pl, h computed unless keep_lengths / keep_h */
    bool keep_lengths;         /* write hdr.dl and hdr.pl as given, right or wrong */
    bool keep_h;               /* write hdr.h as given */
    const struct vw_eep_oh_enc *oh;
    size_t n_oh;
    bool keep_c;               /* write each OH's C as given (else only the last has C) */
    const uint8_t *data;       /* data block contents (padded with zeros to words) */
    size_t data_len;
    const uint8_t *ot;         /* trailer bytes, written verbatim */
    size_t ot_len;
    uint64_t ei;               /* TAIL */
};

/* Defaults: version 0, priority 0, DT = dest, SA = src, PT = pt, E = 0,
 * no routes, OH or trailer, EI 0. */
void vw_eep_enc_init(struct vw_eep_enc *enc, uint32_t dest, uint32_t src, uint16_t pt,
                     const uint8_t *data, size_t data_len);
size_t vw_eep_encoded_len(const struct vw_eep_enc *enc);
/* Encode into buf (never allocates): bytes written, or 0 when cap is too
 * small or a length does not fit its field. */
size_t vw_eep_encode(const struct vw_eep_enc *enc, uint8_t *buf, size_t cap);

#endif
