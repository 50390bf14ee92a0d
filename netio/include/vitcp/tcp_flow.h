/*
 * A synthetic TCP connection written frame by frame to a sink: handshake,
 * data split at the MSS or as one segment of any size, segments at any
 * stream offset (retransmission, out of order, overlap), gaps, ACKs, FIN,
 * RST. Sequence and acknowledgment numbers stay consistent so Wireshark
 * reads the result as a real conversation.
 *
 * Stream offsets are relative: offset 0 is the first data byte (ISN + 1).
 */
#ifndef VITCP_TCP_FLOW_H
#define VITCP_TCP_FLOW_H

#include "vitcp/frame.h"

enum vn_dir { VN_C2S = 0, VN_S2C = 1 };

struct vn_tcp_flow {
    struct vn_sink sink;
    struct vn_endpoint ep[2]; /* [VN_C2S] client, [VN_S2C] server */
    uint32_t isn[2];
    uint64_t next_off[2];     /* next new stream offset each side sends */
    uint64_t acked_off[2];    /* what each side has acknowledged of the other */
    bool fin_sent[2];
    uint16_t mss;             /* default 1460 */
    uint16_t window;          /* default 65535 */
    uint16_t vlan;            /* 0: untagged */
    bool auto_ack;            /* receiver ACKs after every vn_tcp_send (default off) */
    bool timestamps;          /* RFC 7323 timestamps on every segment (default off) */
    uint32_t ts_val[2];       /* last TSval each side sent */
    uint16_t ip_id[2];
};

/* Set up a flow: client and server address texts (both IPv4 or both IPv6)
 * and ports; ISNs 1000 (client) and 5000 (server). Returns 0, -1 on bad
 * addresses. Nothing is emitted until a function below is called. */
int vn_tcp_flow_init(struct vn_tcp_flow *f, struct vn_sink sink, const char *client_ip,
                     uint16_t client_port, const char *server_ip, uint16_t server_port);

/* SYN, SYN-ACK, ACK. */
int vn_tcp_handshake(struct vn_tcp_flow *f);
/* len bytes from one side, split into MSS-sized segments, PSH on the last. */
int vn_tcp_send(struct vn_tcp_flow *f, enum vn_dir dir, const uint8_t *data, size_t len);
/* Exactly one segment carrying len bytes (any size up to 65495), so a test can
 * cut PDUs anywhere or coalesce several. */
int vn_tcp_send_segment(struct vn_tcp_flow *f, enum vn_dir dir, const uint8_t *data, size_t len);
/* One segment at an explicit stream offset: below the next offset it is a
 * retransmission (same or different bytes), above it leaves a hole that a
 * later call may fill (out of order). The next offset becomes the larger of
 * the two. */
int vn_tcp_send_at(struct vn_tcp_flow *f, enum vn_dir dir, uint64_t offset, const uint8_t *data,
                   size_t len);
/* Skip n bytes of the stream without sending them (a capture gap). */
void vn_tcp_skip(struct vn_tcp_flow *f, enum vn_dir dir, uint64_t n);
/* A pure ACK from dir of everything the other side sent. */
int vn_tcp_ack(struct vn_tcp_flow *f, enum vn_dir dir);
/* FIN|ACK from dir. */
int vn_tcp_fin(struct vn_tcp_flow *f, enum vn_dir dir);
/* FIN from the client, ACK, FIN from the server, ACK. */
int vn_tcp_close(struct vn_tcp_flow *f);
/* RST|ACK from dir. */
int vn_tcp_rst(struct vn_tcp_flow *f, enum vn_dir dir);
/* Any segment: chosen flags, offset, urgent pointer, raw options. */
int vn_tcp_raw(struct vn_tcp_flow *f, enum vn_dir dir, uint8_t flags, uint64_t offset,
               uint16_t urgent, const uint8_t *options, size_t options_len,
               const uint8_t *data, size_t len);

/* Sequence number of a stream offset of one side. */
static inline uint32_t vn_tcp_seq(const struct vn_tcp_flow *f, enum vn_dir dir, uint64_t offset)
{
    return (uint32_t)(f->isn[dir] + 1u + offset);
}

#endif
