/*
 * One WARP connection of warp-peer, either side: received bytes are framed
 * and checked by the wire library (decoder, W4 sequence, regions, and with
 * iSCSI the Appendix B checker) before anything is placed; Sends are
 * reassembled into ULP PDUs, RDMA Writes placed into the announced regions;
 * whole ULP PDUs go to the mode's handlers. A broken rule is reported as
 * "event=error conn=N rule=ID detail=..." and fails the connection; a
 * warning or note as "event=finding ...". What to send waits in an output
 * queue for a non-blocking socket.
 */
#ifndef WARP_PEER_CONN_H
#define WARP_PEER_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "outq.h"
#include "tx.h"
#include "vitcp/warp_iscsi.h"
#include "vitcp/warp_region.h"
#include "vitcp/warp_stream.h"

/* A registered region: what the peer announced, and its bytes. */
struct peer_region {
    struct vw_warp_region r;
    uint8_t *mem;
};

#define CONN_REGIONS_MAX 8 /* regions a connection can place into */

struct conn;
struct conn_handlers {
    /* A whole Send ULP PDU (one with E is dropped before). 0, or -1 to fail. */
    int (*on_send)(struct conn *c, const uint8_t *data, size_t len, uint32_t ssn, uint16_t flags);
    /* An RDMA Write ULP PDU whose L chunk arrived: len bytes placed at byte
     * `at` of region r, which the writer addressed as `offset`. */
    int (*on_rdma)(struct conn *c, struct peer_region *r, uint64_t at, uint64_t offset, size_t len,
                   uint16_t flags);
};

struct conn {
    int fd;
    unsigned id;
    const struct conn_handlers *h;
    void *owner;                 /* the mode's state */
    struct peer_region *regions;
    size_t nregions;
    size_t max_pdu;              /* largest Send ULP PDU reassembled */
    bool iscsi_checks;
    struct vw_warp_framer framer;
    struct vw_warp_iscsi iscsi;
    /* the Send ULP PDU being reassembled */
    bool send_open;
    uint8_t *pdu;
    size_t pdu_len, pdu_cap;
    uint32_t pdu_ssn;
    uint16_t pdu_flags;
    /* the RDMA Write ULP PDU being placed */
    bool rdma_open;
    size_t rdma_region;
    uint64_t rdma_at, rdma_offset;
    size_t rdma_len;
    uint16_t rdma_flags;
    struct outq out;
    struct warp_tx tx;
    bool failed;                 /* an error was reported: close without sending more */
    bool no_close;               /* choice no-close: an invalid chunk is discarded, the connection kept */
    bool unframed;               /* no-close: framing was lost, the rest of the stream is dropped */
    bool lax_noted;              /* a receiving fault's ignored rule was printed (framing, dropped chunks) */
    bool eof;                    /* the peer closed its direction */
    double last_io_ms;
    unsigned long completions, errors, warnings;
};

void peer_conn_init(struct conn *c, int fd, unsigned id, const struct conn_handlers *h, void *owner,
               struct peer_region *regions, size_t nregions, size_t max_pdu, bool iscsi_checks);
/* The allowed choices (choices.h) that shape what c sends and how it
 * receives: chunk cuts, first SSN, completions, no-close. */
void peer_tx_choices(struct conn *c, const struct peer_choices *ch, bool iscsi);
/* Received bytes. Returns 0, or -1 once the connection failed. */
int peer_conn_feed(struct conn *c, const uint8_t *data, size_t len);
/* The peer's direction ended (or the wait for it did): end-of-stream checks. */
int peer_conn_finish(struct conn *c);
/* Write queued bytes, at most max_write per send() call (0: no limit).
 * Returns 0, or -1 when the socket failed. */
int peer_conn_flush(struct conn *c, size_t max_write);
void peer_conn_free(struct conn *c);

/* One "event=..." line on stdout, flushed. */
void peer_event(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
double peer_now_ms(void);

#endif
