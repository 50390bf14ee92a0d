/*
 * What a WARP peer sends: ULP PDUs cut into chunks of at most `frag` payload
 * bytes (W4: one SSN per Send, offsets from 0; RDMA offsets contiguous), L on
 * the last chunk, C only there, each chunk encoded by the wire library with
 * the peer's fault (faults.h) applied.
 */
#ifndef WARP_PEER_TX_H
#define WARP_PEER_TX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "choices.h"
#include "faults.h"
#include "outq.h"

/* Largest payload of one chunk, whatever the type (65535 - 16 - 4). */
#define TX_FRAG_MAX 65515u

struct warp_tx {
    uint32_t next_ssn;
    size_t frag;            /* payload bytes per chunk, 1..TX_FRAG_MAX */
    enum warp_fault fault;
    uint64_t region_len;    /* how far out-of-region moves RDMA Writes */
    /* allowed choices (choices.h) */
    size_t header_chunk;    /* first chunk of a ULP PDU: at most this many payload bytes (0: frag) */
    bool last_byte;         /* the last byte of a ULP PDU in a chunk of its own */
    enum completion_policy completion;
    bool iscsi;             /* iSCSI data RDMA Writes never carry C (B.4), whatever the policy */
    bool close_now;         /* fault close-mid-pdu: a ULP PDU was cut; close once the queue is out */
};

/* One ULP PDU to cut: a Send (rid unused) or an RDMA Write. flags: C and E
 * for the last chunk (L is added). */
struct tx_pdu {
    unsigned type;
    uint32_t rid;
    uint64_t offset;        /* RDMA: where the first byte goes */
    const uint8_t *data;
    size_t len;
    uint16_t flags;
};

/* Queue the chunks of one PDU. Returns 0, or -1 without memory. */
int tx_pdu(struct warp_tx *tx, struct outq *q, const struct tx_pdu *pdu);
/* Queue two PDUs with their chunks alternating (a Send and an RDMA Write
 * mixed on one stream). */
int tx_mixed(struct warp_tx *tx, struct outq *q, const struct tx_pdu *a, const struct tx_pdu *b);

#endif
