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

struct vw_warp_framer {
    uint8_t *buf;            /* reassembly buffer, allocated once (64 KiB) */
    size_t have;
    uint64_t stream_off;
    enum vw_req error;       /* sticky framing error */
    uint64_t chunks;
    /* W4 state */
    bool have_ssn;
    uint32_t ssn;            /* SSN of the open (or last) Send PDU */
    bool send_open;          /* a Send PDU started and its L chunk not yet seen */
    uint32_t send_next_off;
    bool rdma_open;
    uint32_t rdma_rid;
    uint64_t rdma_next_off;
};

int vw_warp_framer_init(struct vw_warp_framer *f);
void vw_warp_framer_free(struct vw_warp_framer *f);
/* Feed bytes; returns VW_REQ_NONE or the framing rule broken (a chunk
 * length under 8, or under its known type's header plus Adler-32): then
 * sticky until resync. Never reads outside data[0..len). */
enum vw_req vw_warp_framer_feed(struct vw_warp_framer *f, const uint8_t *data, size_t len,
                                vw_warp_chunk_cb cb, void *ctx);
/* Drop buffered bytes and sequencing state; restart at stream_off. */
void vw_warp_framer_resync(struct vw_warp_framer *f, uint64_t stream_off);
/* Heuristic: could buf start a WARP chunk (known type, length fits)? */
bool vw_warp_plausible_header(const uint8_t *buf, size_t len);

#endif
