/*
 * WARP over a byte stream: a framer per direction that turns bytes (any
 * chunking, as TCP delivers them) into whole decoded chunks and checks the
 * sequencing rules that need the chunks before (W4): Send Sequence Numbers
 * and Send offsets, contiguous RDMA offsets within one ULP PDU.
 */
#ifndef VITCP_WARP_STREAM_H
#define VITCP_WARP_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vitcp/warp.h"

/* Called once per whole chunk (raw valid only during the call). err is
 * VW_REQ_NONE when chunk was decoded, else the fatal rule (chunk partial).
 * findings holds the chunk's and the sequencing rule violations. */
typedef void (*vw_warp_chunk_cb)(void *ctx, const uint8_t *raw, size_t len, uint64_t stream_off,
                                 const struct vw_warp_chunk *chunk, enum vw_req err,
                                 const struct vw_findings *findings);

/* W4 sequencing state of one direction: Send Sequence Numbers and Send
 * offsets, contiguous RDMA offsets within one ULP PDU. Used by the framer
 * and by anything that frames chunks itself (the dissector). */
struct vw_warp_seq {
    bool have_ssn;
    uint32_t ssn;            /* SSN of the open (or last) Send PDU */
    bool send_open;          /* a Send PDU started and its L chunk not yet seen */
    uint32_t send_next_off;
    uint32_t first_adler;    /* the last Send's first chunk: its Adler-32 and payload length, */
    size_t first_len;        /* which a copy sent again repeats (WARP-INTRO-NO-WARP-RETRANSMIT) */
    bool rdma_open;
    uint32_t rdma_rid;
    uint64_t rdma_next_off;
};

/* Where a chunk stands in its ULP PDU, as vw_warp_seq_check saw it. */
struct vw_warp_seq_pos {
    bool continuation;       /* continues an open ULP PDU of its type */
    bool offset_known;       /* an offset was expected (every Send, RDMA continuations) */
    uint64_t expected_offset;
};

/* Check one decoded chunk against the chunks before it (W4), adding
 * WARP-A.1.2-SSN-NEXT, WARP-A.1.2-SEND-OFFSET and WARP-A.1.1-RDMA-CONTIGUOUS
 * to findings (may be NULL), then advance the state. pos may be NULL.
 * Diagnoses: the next SSN at offset 0 while a Send is open is
 * WARP-SUMMARY-L-LAST, and so is a chunk of the Send just ended that goes
 * on at its next offset (its L came early); a repeated SSN breaks SSN-NEXT,
 * followed by WARP-INTRO-NO-WARP-RETRANSMIT when it is the same first chunk
 * again (W21).
 * Chunks of unknown type change nothing. */
void vw_warp_seq_check(struct vw_warp_seq *s, const struct vw_warp_chunk *c,
                       struct vw_warp_seq_pos *pos, struct vw_findings *findings);

/* End of a direction: a Send or RDMA ULP PDU still open (no L chunk) breaks
 * WARP-SUMMARY-L-LAST. */
void vw_warp_seq_finish(const struct vw_warp_seq *s, struct vw_findings *findings);
/* A direction's FIN (W18): cut_bytes of a chunk it never finished break
 * WARP-A-TRUNCATED, and open ULP PDUs WARP-SUMMARY-L-LAST (as above). Lint
 * and the plugin both judge a direction's end with this. */
void vw_warp_direction_end(const struct vw_warp_seq *s, size_t cut_bytes, struct vw_findings *findings);

struct vw_warp_framer {
    uint8_t *buf;            /* reassembly buffer of a split PDU: grows to the PDU's length, NULL until needed */
    size_t cap;
    bool oom;                /* the buffer could not grow: the framer stopped (sticky; bytes were lost) */
    size_t have;
    uint64_t stream_off;
    enum vw_req error;       /* sticky framing error */
    uint64_t chunks;
    struct vw_warp_seq seq;  /* W4 state */
    struct vw_warp_seq seq_before; /* W4 state before the last chunk delivered: a receiver
                                      that discards an invalid chunk (W10 leaves the reaction
                                      open, C62) restores it in its callback */
    bool prev_bad_adler;     /* the last chunk's Adler-32 was bad ... */
    uint32_t prev_full_adler; /* ... and this is the Adler-32 of all its bytes (W15) */
    bool no_adler_reading;   /* framing was lost to a Chunk length without the Adler-32 (W15) */
    enum vw_warp_po payload_only; /* framing was lost to a Chunk length of the payload only (W17) */
    bool po_checked;         /* the current chunk's start was checked for that reading */
};

int vw_warp_framer_init(struct vw_warp_framer *f);
void vw_warp_framer_free(struct vw_warp_framer *f);
/* Feed bytes; returns VW_REQ_NONE or the framing rule broken (a chunk
 * length under 8, or under its known type's header plus Adler-32): then
 * sticky until resync. Never reads outside data[0..len). */
enum vw_req vw_warp_framer_feed(struct vw_warp_framer *f, const uint8_t *data, size_t len,
                                vw_warp_chunk_cb cb, void *ctx);
/* The direction ended (FIN): a partial chunk (WARP-A-TRUNCATED) and open
 * ULP PDUs (vw_warp_seq_finish) go to findings. */
void vw_warp_framer_finish(const struct vw_warp_framer *f, struct vw_findings *findings);
/* Drop buffered bytes and sequencing state; restart at stream_off. */
void vw_warp_framer_resync(struct vw_warp_framer *f, uint64_t stream_off);
/* Heuristic: could buf start a WARP chunk (known type, length fits)? */
bool vw_warp_plausible_header(const uint8_t *buf, size_t len);

#endif
