/* Internal: the TCP connection table and per-direction reassembly behind
 * pcap_reader.h. */
#ifndef VITCP_NETIO_TCP_REASM_H
#define VITCP_NETIO_TCP_REASM_H

#include "vitcp/pcap_reader.h"

struct vn_conn;

struct vn_reasm {
    const struct vn_reader_callbacks *cb;
    struct vn_reader_limits lim;
    struct vn_reader_stats *stats;
    struct vn_conn **buckets;
    size_t nbuckets;
    struct vn_conn *all; /* every connection, newest first */
    size_t nconns;
    bool limit_noticed;
};

/* One TCP segment as decoded from a frame. */
struct vn_tcp_seg_in {
    uint64_t frame;
    uint64_t ts_usec;
    struct vn_endpoint src; /* ip + port */
    struct vn_endpoint dst;
    uint32_t seq;
    uint32_t ack;
    uint8_t flags;
    uint16_t urgent;
    const uint8_t *data;
    size_t len;
};

int vn_reasm_init(struct vn_reasm *r, const struct vn_reader_callbacks *cb,
                  const struct vn_reader_limits *lim, struct vn_reader_stats *stats);
void vn_reasm_segment(struct vn_reasm *r, const struct vn_tcp_seg_in *seg);
void vn_reasm_finish(struct vn_reasm *r, uint64_t last_frame, uint64_t last_ts);
void vn_reasm_free(struct vn_reasm *r);

#endif
