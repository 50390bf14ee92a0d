/*
 * VI/TCP over a byte stream: a framer that turns bytes (in any chunking, as
 * TCP delivers them) into whole decoded segments, and the connection rule
 * checker that keeps the state the stateless checks cannot see (CE exchange
 * and CRC negotiation, message numbering, data offsets, NOP numbers, RDMA
 * read window, data after reject...). A session pairs two framers (one per
 * direction) with one checker; lint, conformance and tests use it, the
 * dissector uses the checker directly with its own tvb framing.
 */
#ifndef VITCP_VITCP_STREAM_H
#define VITCP_VITCP_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vitcp/vitcp.h"

/* ---------------------------------------------------------------- framer */

/* Called once per whole segment. raw/len are the segment's bytes (valid only
 * during the call), stream_off its offset in the direction's byte stream.
 * err is VW_REQ_NONE when seg was decoded, else the fatal rule (then seg is
 * partial). findings holds every rule violation seen in this segment. */
typedef void (*vw_vitcp_seg_cb)(void *ctx, const uint8_t *raw, size_t len, uint64_t stream_off,
                                const struct vw_vitcp_seg *seg, enum vw_req err,
                                const struct vw_findings *findings);

struct vw_vitcp_framer {
    uint8_t *buf;            /* reassembly buffer of a split PDU: grows to the PDU's length, NULL until needed */
    size_t cap;
    bool oom;                /* the buffer could not grow: the framer stopped (sticky; bytes were lost) */
    size_t have;            /* bytes buffered of the current segment */
    uint64_t stream_off;    /* stream offset of buf[0] */
    enum vw_vitcp_crc_mode crc_mode;
    enum vw_req error;      /* sticky framing error; VW_REQ_NONE while healthy */
};

/* 0 (the reassembly buffer is allocated when a segment first arrives split;
 * -1 is kept for callers that check). */
int vw_vitcp_framer_init(struct vw_vitcp_framer *f, enum vw_vitcp_crc_mode crc_mode);
void vw_vitcp_framer_free(struct vw_vitcp_framer *f);
void vw_vitcp_framer_set_crc(struct vw_vitcp_framer *f, enum vw_vitcp_crc_mode crc_mode);

/* Feed bytes; cb runs for every completed segment. Returns VW_REQ_NONE, or
 * the framing rule broken (Segment Length under 24, ...): the framer then
 * stops consuming and keeps returning that error until resynchronised.
 * Never reads outside data[0..len). */
enum vw_req vw_vitcp_framer_feed(struct vw_vitcp_framer *f, const uint8_t *data, size_t len,
                                 vw_vitcp_seg_cb cb, void *ctx);

/* After a framing error or a capture gap: drop buffered bytes and restart at
 * the given stream offset (the caller found a plausible header there). */
void vw_vitcp_framer_resync(struct vw_vitcp_framer *f, uint64_t stream_off);

/* Heuristic: could buf (>= 24 bytes) start a VI/TCP segment? Checks version,
 * type, length bounds and type-dependent minimum length. */
bool vw_vitcp_plausible_header(const uint8_t *buf, size_t len);

/* ---------------------------------------------------- connection checker */

#define VW_VITCP_MAX_TRACKED_READS 64

enum vw_vitcp_phase {
    VW_VITCP_PHASE_INIT,      /* nothing seen */
    VW_VITCP_PHASE_REQUESTED, /* ConnectRequest seen */
    VW_VITCP_PHASE_CONNECTED, /* ConnectAccept seen */
    VW_VITCP_PHASE_REFUSED,   /* ConnectReject or ConnectNoMatch seen */
    VW_VITCP_PHASE_MIDSTREAM, /* capture started after the CE exchange */
};

struct vw_vitcp_read {
    uint32_t msg_num;
    uint32_t length;   /* RDMA Length requested */
    uint32_t received; /* response bytes seen so far */
};

/* Per direction: what this side has sent. dir 0 is the side that sent the
 * first segment seen (normally the ConnectRequest). */
struct vw_vitcp_dir {
    bool seen_any;
    bool ce_crc_opt;         /* its CE carried the CRC option */
    bool ce_urgent_opt;      /* it offered the Urgent Marker option */
    uint16_t attrs;          /* its Calling Attributes */
    uint32_t mtu;            /* MTU it proposed/agreed */
    uint16_t read_window;    /* inbound reads it will hold (V18) */
    bool have_msg_num;
    uint32_t last_msg_num;   /* last non-RdmaReadResponse message number (V14) */
    /* the message in progress (not yet EOM), for offsets/IDV/immediate rules */
    bool in_msg;
    uint8_t cur_type;
    uint32_t cur_msg_num;
    uint32_t cur_offset;     /* bytes of payload sent so far in the message */
    uint8_t cur_flags;
    uint32_t cur_imm;
    struct vw_vitcp_rdma cur_rdma; /* RDMA header of the open RdmaWrite (V7) */
    bool mtu_reported;       /* MTU finding already given for the open message */
    /* RdmaReadResponses in progress (interleavable, 2.2.2.2.3) */
    bool in_resp;
    uint32_t resp_msg_num;
    uint32_t resp_offset;
    /* reads this side requested, awaiting responses from the other side */
    unsigned reads_outstanding;
    struct vw_vitcp_read reads[VW_VITCP_MAX_TRACKED_READS];
    bool have_ack;
    uint32_t last_ack;       /* last Message ACK sent (Reliable Reception) */
    bool have_rx_posted;
    uint16_t rx_posted;      /* last Rx Descriptors Posted sent */
    uint16_t consumed;       /* descriptor-consuming messages sent (V17) */
    bool error_acked;        /* sent an ACK with a VI error: must close (V15) */
    bool ended;              /* its FIN was judged (vw_vitcp_direction_end) */
    bool ce_seen;            /* its CE header was seen (window/MTU known) */
    uint64_t bytes;          /* segment bytes sent */
    uint64_t segments;
};

struct vw_vitcp_conn {
    enum vw_vitcp_phase phase;
    bool crc_negotiated;     /* both CE segments carried the CRC option */
    bool crc_known;          /* false until CE exchange or inference */
    uint32_t mtu;            /* agreed MTU (0 unknown) */
    uint16_t level;          /* agreed reliability bit (0 unknown) */
    int requester;           /* side that sent the ConnectRequest */
    struct vw_vitcp_ce request_ce; /* the ConnectRequest's CE (options not kept) */
    bool request_malformed;  /* another Version or a discriminator over 64 bytes: the
                                answer is a close without answer (V10, V24) */
    bool start_seen;         /* the connection's first bytes are seen (vw_vitcp_conn_saw_start) */
    struct vw_vitcp_dir dir[2];
};

/*
 * V26: the reaction to a bad CRC at Reliable Delivery or Reliable Reception
 * (3.6: withhold the TCP ACK, or deliver with error and close at once), as a
 * capture shows it. The caller reports each segment (its end in the caller's
 * stream unit: lint's stream offsets, the dissector's relative TCP sequence
 * numbers), each TCP ACK and each side's close; a VI segment the receiver
 * sends after it ACKed past a bad-CRC segment, before it closed, breaks
 * VITCP-3.6-BAD-CRC-REACTION: the ACK was not withheld and the connection
 * was not closed. The reaction is judged on the receiving side only (V29):
 * the sender's segments after the bad one (pipelined, or after the
 * receiver's FIN) are not the receiver's fault.
 */
struct vw_vitcp_badcrc_watch {
    bool pending[2];   /* side d sent a bad-CRC segment at RD/RR, not judged yet */
    bool acked[2];     /* ... and the other side ACKed past it */
    uint64_t end[2];   /* its end */
    uint64_t frame[2]; /* its frame */
};
/* Call for every segment side dir sends, with its findings complete, before
 * anything else about it: judges the watch (findings gets the error) and
 * then watches this segment if it has a bad CRC at RD/RR. At Reliable
 * Reception the receiver's Message ACK with the error is the second
 * reaction's report (V29). */
void vw_vitcp_badcrc_segment(struct vw_vitcp_badcrc_watch *w, const struct vw_vitcp_conn *c, int dir,
                             uint64_t seg_end, uint64_t frame, struct vw_findings *findings);
/* A TCP ACK from side dir acknowledging the other side up to acked. */
void vw_vitcp_badcrc_ack(struct vw_vitcp_badcrc_watch *w, int dir, uint64_t acked);
/* Side dir closed (its FIN, or an RST from it): the reaction to a bad
 * segment it received is the close; nothing is judged after it. */
void vw_vitcp_badcrc_close(struct vw_vitcp_badcrc_watch *w, int dir);

void vw_vitcp_conn_init(struct vw_vitcp_conn *c);
/* The caller saw the TCP connection open (its SYN): then a segment before
 * any ConnectRequest breaks VITCP-4.2-REQUEST-FIRST and the CE exchange is
 * still awaited, instead of taking the capture to have started mid-stream
 * (which derailed the CRC negotiation that followed). */
void vw_vitcp_conn_saw_start(struct vw_vitcp_conn *c);
/* The CRC mode segments from either side must follow now. */
enum vw_vitcp_crc_mode vw_vitcp_conn_crc_mode(const struct vw_vitcp_conn *c);
/* Check one decoded segment sent by side dir (0/1) against the connection
 * state, update the state, add violations to findings. */
void vw_vitcp_conn_check(struct vw_vitcp_conn *c, int dir, const struct vw_vitcp_seg *seg,
                         struct vw_findings *findings);
/* A direction's FIN (V28): cut_bytes of a segment it never finished break
 * VITCP-3.2-SEG-TRUNCATED; a message it left without EOM is noted under
 * VITCP-3.2-EOM-LAST. Lint and the plugin both judge a direction's end
 * with this, once per direction. */
void vw_vitcp_direction_end(struct vw_vitcp_conn *c, int dir, size_t cut_bytes, struct vw_findings *findings);
/* The connection closed (both FINs or an RST, not the capture's end):
 * requests never answered, reads answered short, and messages without EOM
 * of a direction whose end was not judged. */
void vw_vitcp_conn_finish(struct vw_vitcp_conn *c, struct vw_findings *findings);

/* ----------------------------------------------------------------- session */

/*
 * Urgent data (3.7, V23). designated: the stream offset of the byte a TCP
 * segment's urgent pointer designates in the RFC 1122 sense (the segment's
 * first byte's offset + the pointer). Against the VI segment at seg_off of
 * seg_len bytes: VW_REQ_NONE when it is the segment's first byte,
 * VITCP-3.7-URGENT-RFC1122 when it is the byte after (a pointer set in the BSD
 * sense, one past the byte meant), VITCP-3.7-URGENT-FIRST-BYTE for any other
 * byte of the segment; VW_REQ_COUNT when the byte is not in this segment.
 */
enum vw_req vw_vitcp_urgent_verdict(uint64_t designated, uint64_t seg_off, size_t seg_len);

struct vw_vitcp_session {
    struct vw_vitcp_conn conn;
    struct vw_vitcp_framer framer[2];
};

int vw_vitcp_session_init(struct vw_vitcp_session *s);
void vw_vitcp_session_free(struct vw_vitcp_session *s);
/* Feed bytes sent by side dir; cb gets every segment with the findings of
 * both the stateless and the connection checks. */
enum vw_req vw_vitcp_session_feed(struct vw_vitcp_session *s, int dir, const uint8_t *data,
                                  size_t len, vw_vitcp_seg_cb cb, void *ctx);

#endif
