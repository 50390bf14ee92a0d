/*
 * Capture reader: opens pcap or pcapng files with libpcap (Ethernet with
 * 802.1Q/802.1ad tags, Linux cooked v1/v2, raw IP, BSD loopback), follows
 * TCP connections over IPv4 and IPv6 and reassembles each direction in
 * sequence order. It calls back with:
 *   - every contiguous chunk of a TCP stream, with its stream offset and the
 *     frame that carried it (out-of-order segments are held until the hole
 *     fills);
 *   - retransmissions, with how many bytes differ from what was first
 *     delivered (spec-decisions V25: lint reports differing bytes);
 *   - gaps: bytes the capture never saw (the peer ACKed past them, the
 *     buffer limit was hit, or the capture ended with a hole), with the
 *     count of missing bytes;
 *   - UDP datagrams and frames of any other Ethertype, whole.
 * Memory is bounded by the limits below; bad or truncated files give an
 * error message, never a crash.
 */
#ifndef VITCP_PCAP_READER_H
#define VITCP_PCAP_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vitcp/frame.h"
#include "vitcp/tcp_flow.h"

enum vn_tcp_event_kind {
    VN_TCP_OPEN,  /* first frame of a connection (syn_seen says if the handshake was captured) */
    VN_TCP_DATA,  /* next contiguous bytes of one direction */
    VN_TCP_GAP,   /* len bytes at offset were never captured; the stream continues after them */
    VN_TCP_RETX,  /* bytes at offset sent again; diff_bytes of them differ from the first copy */
    VN_TCP_CLOSE, /* connection over: both FINs, an RST, or the end of the capture */
    VN_TCP_URGENT, /* a segment with URG set: offset is its first byte's stream offset,
                      urgent its urgent pointer (sent before the segment's DATA) */
    VN_TCP_DIR_END,   /* one direction ended: its FIN came and every byte before it was
                     delivered or declared a gap (offset: the FIN's stream offset);
                     once per direction, before the CLOSE that both FINs make */
};

enum vn_close_reason { VN_CLOSE_FIN, VN_CLOSE_RST, VN_CLOSE_END_OF_CAPTURE, VN_CLOSE_REUSED };

struct vn_tcp_event {
    enum vn_tcp_event_kind kind;
    unsigned conn;            /* connection number, 0 upward in order of appearance */
    enum vn_dir dir;          /* VN_C2S: from the side that sent the SYN (or was seen first) */
    const struct vn_endpoint *src; /* sender of this direction (MAC not filled) */
    const struct vn_endpoint *dst;
    uint64_t frame;           /* 1-based frame number, as Wireshark counts */
    uint64_t ts_usec;         /* frame timestamp, microseconds since the epoch */
    uint64_t offset;          /* stream offset (0 = first byte after the SYN) */
    const uint8_t *data;      /* DATA, RETX: the bytes; GAP: NULL */
    size_t len;               /* DATA, RETX: bytes; GAP: missing bytes */
    size_t diff_bytes;        /* RETX: differing bytes (0 = identical copy) */
    uint64_t diff_offset;     /* RETX: stream offset of the first differing byte */
    size_t unchecked_bytes;   /* RETX: bytes too old to compare */
    bool syn_seen;            /* OPEN */
    uint16_t urgent;          /* URGENT: the TCP urgent pointer */
    enum vn_close_reason reason; /* CLOSE */
};

enum vn_datagram_kind { VN_DGRAM_UDP, VN_DGRAM_ETH };

struct vn_datagram {
    enum vn_datagram_kind kind;
    uint64_t frame;
    uint64_t ts_usec;
    uint16_t vlan;            /* innermost VLAN ID, 0 if untagged */
    uint16_t ethertype;       /* VN_DGRAM_ETH */
    const uint8_t *src_mac;   /* VN_DGRAM_ETH on Ethernet captures, else NULL */
    const uint8_t *dst_mac;
    struct vn_endpoint src;   /* VN_DGRAM_UDP: addresses and ports */
    struct vn_endpoint dst;
    const uint8_t *data;
    size_t len;
    bool truncated;           /* the capture cut the datagram (snaplen) */
};

struct vn_reader_callbacks {
    void (*tcp)(void *ctx, const struct vn_tcp_event *ev);
    void (*datagram)(void *ctx, const struct vn_datagram *dg);
    /* Something in the capture the reader could not follow (truncated or
     * malformed headers, IP fragments, limits reached). May be NULL. */
    void (*notice)(void *ctx, uint64_t frame, const char *msg);
    void *ctx;
    /* Every TCP segment with ACK set, before its data is handed on (the ACK
     * says what its sender had received when it sent that data, V29): dir is
     * the ACK's sender, acked the stream offset of the other direction it
     * acknowledges (its next expected byte). May be NULL. */
    void (*ack)(void *ctx, unsigned conn, enum vn_dir dir, uint64_t acked, uint64_t frame);
};

struct vn_reader_limits {
    size_t max_connections;   /* default 65536; later connections are ignored with a notice */
    size_t max_ooo_bytes;     /* per direction, default 4 MiB (data plus about 48 bytes per
                               * segment); over it, or over 4096 held segments, the hole
                               * becomes a gap */
    size_t retx_history;      /* per direction, bytes kept to compare retransmissions, default 64 KiB */
};

struct vn_reader_stats {
    uint64_t frames;
    uint64_t tcp_segments;
    uint64_t connections;
    uint64_t tcp_bytes;       /* delivered in order */
    uint64_t gaps;
    uint64_t gap_bytes;
    uint64_t retransmissions;
    uint64_t retx_differing;  /* retransmissions with differing bytes */
    uint64_t datagrams;
    uint64_t ignored;         /* frames not followed (other IP protocols, fragments, errors) */
};

/* Incremental interface: feed frames yourself (live capture, tests). */
struct vn_reader;
struct vn_reader *vn_reader_new(int linktype, const struct vn_reader_callbacks *cb,
                                const struct vn_reader_limits *limits /* NULL: defaults */);
/* One frame as captured (caplen bytes; wire_len as on the wire). */
void vn_reader_feed(struct vn_reader *r, uint64_t ts_usec, const uint8_t *frame, size_t caplen,
                    size_t wire_len);
/* End of input: report remaining holes as gaps, deliver what was held and
 * close every open connection. */
void vn_reader_finish(struct vn_reader *r);
const struct vn_reader_stats *vn_reader_stats(const struct vn_reader *r);
void vn_reader_free(struct vn_reader *r);
/* 1 if the link type is one the reader decodes. */
int vn_reader_linktype_supported(int linktype);

/* Read a whole pcap/pcapng file. Returns 0, or -1 with the reason in err
 * (cannot open, unsupported link type, file cut short or corrupt: frames
 * before the damage have been delivered). stats may be NULL. */
int vn_pcap_read(const char *path, const struct vn_reader_callbacks *cb,
                 const struct vn_reader_limits *limits, struct vn_reader_stats *stats, char *err,
                 size_t errlen);

#endif
