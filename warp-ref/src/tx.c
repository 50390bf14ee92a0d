/* Cutting ULP PDUs into chunks, with the peer's fault applied (tx.h). */
#include <string.h>
#include "tx.h"
#include "vitcp/warp.h"

/* Where one PDU's cutting stands. */
struct cursor {
    struct tx_pdu pdu;
    uint32_t ssn;
    size_t done;
    bool started, finished;
};

static void cursor_start(struct warp_tx *tx, struct cursor *c, const struct tx_pdu *pdu)
{
    memset(c, 0, sizeof *c);
    c->pdu = *pdu;
    if (pdu->type == VW_WARP_SEND) {
        c->ssn = tx->next_ssn;
        tx->next_ssn += tx->fault == FAULT_SKIP_SSN ? 2u : 1u;
    } else if (tx->fault == FAULT_RID_UNKNOWN) {
        c->pdu.rid++;
    } else if (tx->fault == FAULT_OUT_OF_REGION) {
        c->pdu.offset += tx->region_len;
    }
}

static int put(struct outq *q, const struct vw_warp_enc *e)
{
    size_t n = vw_warp_encoded_len(e);
    uint8_t *p = outq_reserve(q, n);
    if (!p)
        return -1;
    if (vw_warp_encode(e, p, n) != n) {
        outq_unreserve(q, n);
        return -1;
    }
    return 0;
}

/* Queue the cursor's next chunk (with the fault's extra chunk before a PDU). */
static int next_chunk(struct warp_tx *tx, struct outq *q, struct cursor *c)
{
    const struct tx_pdu *p = &c->pdu;
    struct vw_warp_enc e;
    if (!c->started && tx->fault == FAULT_UNKNOWN_TYPE) {
        vw_warp_enc_init(&e, 2, (const uint8_t *)"W1?", 3);
        if (put(q, &e))
            return -1;
    }
    size_t frag = tx->frag ? tx->frag : TX_FRAG_MAX;
    if (!c->started && tx->header_chunk && tx->header_chunk < frag)
        frag = tx->header_chunk; /* choice header-chunk: the ULP header in a chunk of its own */
    size_t left = p->len - c->done;
    size_t n = left < frag ? left : frag;
    if (tx->last_byte && n == left && left > 1)
        n--; /* choice last-byte: the last byte follows in a chunk of its own */
    bool last = c->done + n == p->len;
    vw_warp_enc_init(&e, p->type, p->data ? p->data + c->done : NULL, n);
    uint16_t c_bit = p->flags & VW_WARP_FLAG_C;
    if (tx->completion == COMPLETION_NEVER && !tx->iscsi) /* B.4 526-528: iSCSI headers notify */
        c_bit = 0;
    else if (tx->completion == COMPLETION_ALL && !(tx->iscsi && p->type == VW_WARP_RDMA))
        c_bit = VW_WARP_FLAG_C;
    e.flags = last ? (uint16_t)(VW_WARP_FLAG_L | c_bit | (p->flags & VW_WARP_FLAG_E)) : 0;
    uint64_t off = c->done;
    bool later = c->started;
    switch (tx->fault) {
    case FAULT_C_WITHOUT_L: e.flags |= VW_WARP_FLAG_C; break;
    case FAULT_TX_ERROR: e.flags |= last ? VW_WARP_FLAG_E : 0; break;
    case FAULT_NO_LAST: /* C goes with L (else C-ONLY-WITH-L breaks first) */
        if (p->type == VW_WARP_SEND)
            e.flags &= (uint16_t)~(VW_WARP_FLAG_L | VW_WARP_FLAG_C);
        break;
    case FAULT_RDMA_NO_LAST:
        if (p->type == VW_WARP_RDMA)
            e.flags &= (uint16_t)~(VW_WARP_FLAG_L | VW_WARP_FLAG_C);
        break;
    case FAULT_RESERVED_BITS: e.rsvd = 0x1FF; break;
    case FAULT_BAD_ADLER: e.adler = VW_WARP_ADLER_BAD; break;
    case FAULT_SHORT_CHUNK_LEN:
        e.keep_chunk_len = true;
        e.chunk_len = (uint16_t)(vw_warp_type_hdr_len(p->type) + 3);
        break;
    case FAULT_SEND_OFFSET: off += later && p->type == VW_WARP_SEND; break;
    case FAULT_RDMA_GAP: off += later && p->type == VW_WARP_RDMA; break;
    default: break;
    }
    if (p->type == VW_WARP_SEND) {
        e.ssn = c->ssn;
        e.offset = off;
    } else {
        e.rid = p->rid + (tx->fault == FAULT_RDMA_RID_CHANGE && later ? 1u : 0u);
        e.offset = p->offset + off;
    }
    if (put(q, &e))
        return -1;
    c->done += n;
    c->started = true;
    c->finished = last;
    if (tx->fault == FAULT_CLOSE_MID_PDU && !last) /* the rest is never sent: the connection closes */
        tx->close_now = true;
    return 0;
}

static int drain(struct warp_tx *tx, struct outq *q, struct cursor *c)
{
    while (!c->finished && !tx->close_now)
        if (next_chunk(tx, q, c))
            return -1;
    return 0;
}

int tx_pdu(struct warp_tx *tx, struct outq *q, const struct tx_pdu *pdu)
{
    if (tx->close_now) /* close-mid-pdu: nothing after the cut */
        return 0;
    struct cursor c;
    cursor_start(tx, &c, pdu);
    if (drain(tx, q, &c))
        return -1;
    if (tx->fault == FAULT_RETRANSMIT && pdu->type == VW_WARP_SEND) {
        uint32_t ssn = c.ssn;
        cursor_start(tx, &c, pdu);
        tx->next_ssn = c.ssn; /* the copy takes no SSN of its own */
        c.ssn = ssn;
        return drain(tx, q, &c);
    }
    return 0;
}

int tx_mixed(struct warp_tx *tx, struct outq *q, const struct tx_pdu *a, const struct tx_pdu *b)
{
    struct cursor ca, cb;
    cursor_start(tx, &ca, a);
    cursor_start(tx, &cb, b);
    while ((!ca.finished || !cb.finished) && !tx->close_now) {
        if (!ca.finished && next_chunk(tx, q, &ca))
            return -1;
        if (!cb.finished && next_chunk(tx, q, &cb))
            return -1;
    }
    return 0;
}
