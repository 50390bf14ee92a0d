/*
 * WARP framing over a TCP byte stream: Chunk length (W2) delimits every
 * chunk, so four bytes tell where a chunk ends. Chunks contiguous in the
 * caller's data are decoded in place; split ones are gathered in a buffer
 * that grows to the chunk being gathered (at most 64 KiB). The framer also
 * keeps the W4 sequencing state.
 */
#include <stdlib.h>
#include <string.h>
#include "vitcp/bytes.h"
#include "vitcp/checksum.h"
#include "vitcp/warp_stream.h"
#include "pdu_gather.h"

int vw_warp_framer_init(struct vw_warp_framer *f)
{
    memset(f, 0, sizeof *f);
    f->error = VW_REQ_NONE;
    return 0;
}

void vw_warp_framer_free(struct vw_warp_framer *f)
{
    free(f->buf);
    f->buf = NULL;
    f->cap = 0;
}

void vw_warp_framer_resync(struct vw_warp_framer *f, uint64_t stream_off)
{
    uint8_t *buf = f->buf;
    size_t cap = f->cap;
    uint64_t chunks = f->chunks;
    memset(f, 0, sizeof *f);
    f->buf = buf;
    f->cap = cap;
    f->chunks = chunks;
    f->stream_off = stream_off;
    f->error = VW_REQ_NONE;
}

/* Smallest chunk length that frames, from the first two bytes' type. */
static size_t min_len(const uint8_t *p)
{
    size_t hdr = vw_warp_type_hdr_len(p[0] >> 4);
    return hdr ? hdr + VW_WARP_ADLER_LEN : VW_WARP_CHUNK_MIN_ANY;
}

/* W4: Send Sequence Numbers and offsets, contiguous RDMA chunks. */
void vw_warp_seq_check(struct vw_warp_seq *f, const struct vw_warp_chunk *c,
                       struct vw_warp_seq_pos *pos, struct vw_findings *fs)
{
    struct vw_warp_seq_pos local;
    if (!pos)
        pos = &local;
    memset(pos, 0, sizeof *pos);
    bool last = c->flags & VW_WARP_FLAG_L;
    if (c->type == VW_WARP_SEND) {
        uint32_t off = (uint32_t)c->offset;
        pos->offset_known = true;
        if (f->send_open) {
            pos->continuation = true;
            pos->expected_offset = f->send_next_off;
            /* The next Send starting cleanly says the open one lost its L bit. */
            if (c->ssn == (uint32_t)(f->ssn + 1u) && off == 0)
                vw_findings_add(fs, VW_REQ_WARP_SUMMARY_L_LAST, VW_SEV_ERROR, 1, 1,
                                "Send %u starts while Send %u has no chunk with the Last bit",
                                c->ssn, f->ssn);
            else if (c->ssn != f->ssn)
                vw_findings_add(fs, VW_REQ_WARP_W4_SSN_NEXT, VW_SEV_ERROR, 4, 4,
                                "SSN %u, expected %u (Send %u is still open: no L chunk yet)",
                                c->ssn, f->ssn, f->ssn);
            else if (off != f->send_next_off)
                vw_findings_add(fs, VW_REQ_WARP_W4_SEND_OFFSET, VW_SEV_ERROR, 8, 4,
                                "Offset %u does not continue the Send (expected %u)", off,
                                f->send_next_off);
        } else if (f->have_ssn && c->ssn == f->ssn && off != 0 && off == f->send_next_off) {
            /* The Send goes on where it stopped: its L came too early, the
             * rule broken is L's (line 238), not a retransmission's. */
            pos->continuation = true;
            pos->expected_offset = f->send_next_off;
            vw_findings_add(fs, VW_REQ_WARP_SUMMARY_L_LAST, VW_SEV_ERROR, 1, 1,
                            "Send %u continues at offset %u after a chunk with the Last bit: L was set on a "
                            "chunk that was not its last", c->ssn, off);
        } else {
            if (f->have_ssn && c->ssn != (uint32_t)(f->ssn + 1u))
                vw_findings_add(fs, VW_REQ_WARP_W4_SSN_NEXT, VW_SEV_ERROR, 4, 4,
                                "SSN %u, expected %u (one more than the previous Send)", c->ssn,
                                (uint32_t)(f->ssn + 1u));
            /* TCP retransmits; the same first chunk of a Send sent again over
             * WARP is a second copy: named after the SSN rule it breaks. */
            if (f->have_ssn && c->ssn == f->ssn && off == 0 && c->payload_len == f->first_len &&
                c->adler_computed == f->first_adler)
                vw_findings_add(fs, VW_REQ_WARP_INTRO_NO_RELIABLE_DELIVERY, VW_SEV_ERROR, 4, 4,
                                "Send %u sent again after its Last chunk (the same first chunk): WARP does not "
                                "retransmit (TCP does)", c->ssn);
            if (off != 0)
                vw_findings_add(fs, VW_REQ_WARP_W4_SEND_OFFSET, VW_SEV_ERROR, 8, 4,
                                "Offset %u in the first chunk of Send %u, expected 0", off, c->ssn);
            f->first_adler = c->adler_computed;
            f->first_len = c->payload_len;
        }
        f->have_ssn = true;
        f->ssn = c->ssn;
        f->send_open = !last;
        f->send_next_off = off + (uint32_t)c->payload_len;
    } else if (c->type == VW_WARP_RDMA) {
        if (f->rdma_open) {
            pos->continuation = true;
            pos->offset_known = true;
            pos->expected_offset = f->rdma_next_off;
            /* Both are reported: a wrong RID and a gap are two different faults. */
            if (c->rid != f->rdma_rid)
                vw_findings_add(fs, VW_REQ_WARP_W4_RDMA_CONTIGUOUS, VW_SEV_ERROR, 4, 4,
                                "RID 0x%08x while the RDMA PDU to RID 0x%08x is still open",
                                c->rid, f->rdma_rid);
            if (c->offset != f->rdma_next_off)
                vw_findings_add(fs, VW_REQ_WARP_W4_RDMA_CONTIGUOUS, VW_SEV_ERROR, 8, 8,
                                "Offset %llu does not continue the previous chunk (expected %llu)",
                                (unsigned long long)c->offset,
                                (unsigned long long)f->rdma_next_off);
        }
        f->rdma_open = !last;
        f->rdma_rid = c->rid;
        f->rdma_next_off = c->offset + c->payload_len;
    }
}

void vw_warp_seq_finish(const struct vw_warp_seq *s, struct vw_findings *fs)
{
    if (s->send_open)
        vw_findings_add(fs, VW_REQ_WARP_SUMMARY_L_LAST, VW_SEV_ERROR, 0, 0,
                        "stream ended inside Send %u: no chunk with the Last bit", s->ssn);
    if (s->rdma_open)
        vw_findings_add(fs, VW_REQ_WARP_SUMMARY_L_LAST, VW_SEV_ERROR, 0, 0,
                        "stream ended inside an RDMA Write PDU to RID 0x%08x: no chunk with the Last bit",
                        s->rdma_rid);
}

void vw_warp_direction_end(const struct vw_warp_seq *s, size_t cut_bytes, struct vw_findings *fs)
{
    if (cut_bytes)
        vw_findings_add(fs, VW_REQ_WARP_A_TRUNCATED, VW_SEV_ERROR, 0, 0,
                        "stream ended %zu bytes into a chunk", cut_bytes);
    vw_warp_seq_finish(s, fs);
}

void vw_warp_framer_finish(const struct vw_warp_framer *f, struct vw_findings *fs)
{
    vw_warp_direction_end(&f->seq, f->error == VW_REQ_NONE && !f->oom ? f->have : 0, fs);
}

struct feed_call {
    struct vw_warp_framer *f;
    vw_warp_chunk_cb cb;
    void *ctx;
    const uint8_t *seg;      /* the caller's bytes (one TCP segment's) */
    size_t seg_len;
    size_t have0;            /* bytes the framer had buffered when the call began */
};

/* W17, once per chunk, when its first four bytes are known (where the
 * plugin's PDU-length callback asks): do the bytes from the chunk's start
 * to the end of the caller's segment read right with a payload-only Chunk
 * length? A header gathered across segments was completed by this call
 * (its first LEN bytes of the segment): those bytes follow the buffered
 * header, copied behind it for the check (as TCP reassembles them for the
 * plugin). */
static enum vw_warp_po payload_only_at_start(struct feed_call *call, const uint8_t *p)
{
    struct vw_warp_framer *f = call->f;
    if (f->po_checked)
        return VW_WARP_PO_NO;
    f->po_checked = true;
    if (p != f->buf)
        return vw_warp_payload_only(p, call->seg_len - (size_t)(p - call->seg));
    size_t used = f->have - call->have0; /* header bytes taken from this segment */
    if (call->have0 >= 4 || f->have != 4 || used > call->seg_len)
        return VW_WARP_PO_NO;
    size_t rest = call->seg_len - used;
    size_t hdr = vw_warp_type_hdr_len(p[0] >> 4);
    size_t most = hdr + vw_warp_peek_chunk_len(p, 4) + VW_WARP_ADLER_LEN + 4; /* all the check reads */
    size_t n = 4 + rest < most ? 4 + rest : most;
    if (!hdr || n < most - 4)
        return VW_WARP_PO_NO; /* unknown type, or too few bytes at hand: no reading */
    uint8_t *tmp = malloc(n);
    if (tmp == NULL)
        return VW_WARP_PO_NO;
    memcpy(tmp, p, 4);
    memcpy(tmp + 4, call->seg + used, n - 4);
    enum vw_warp_po po = vw_warp_payload_only(tmp, n);
    free(tmp);
    return po;
}

static size_t chunk_len(void *owner, const uint8_t *p)
{
    struct vw_warp_framer *f = ((struct feed_call *)owner)->f;
    size_t cl = vw_warp_peek_chunk_len(p, 4);
    if (f->prev_bad_adler && vw_warp_len_without_adler(f->prev_full_adler, p)) {
        f->no_adler_reading = true;
        f->error = VW_REQ_WARP_A_CHUNK_LEN;
        return 0;
    }
    enum vw_warp_po po = payload_only_at_start(owner, p);
    if (po != VW_WARP_PO_NO) {
        f->payload_only = po;
        f->error = VW_REQ_WARP_A_CHUNK_LEN;
        return 0;
    }
    if (cl < min_len(p)) {
        f->error = VW_REQ_WARP_A_CHUNK_LEN;
        return 0;
    }
    return cl;
}

static void deliver(void *owner, const uint8_t *raw, size_t len)
{
    struct feed_call *call = owner;
    struct vw_warp_framer *f = call->f;
    struct vw_warp_chunk chunk;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    enum vw_req err = vw_warp_decode(raw, len, &chunk, &fs);
    f->po_checked = false; /* the next chunk's start is still to check (W17) */
    f->seq_before = f->seq;
    if (err == VW_REQ_NONE)
        vw_warp_seq_check(&f->seq, &chunk, NULL, &fs);
    if (err == VW_REQ_WARP_A_CHUNK_LEN) /* W21: a length 4 too long took the next chunk's first bytes */
        f->error = VW_REQ_WARP_A_CHUNK_LEN;
    f->prev_bad_adler = (err == VW_REQ_NONE || err == VW_REQ_WARP_A_TYPE_KNOWN) && !chunk.adler_ok;
    if (f->prev_bad_adler)
        f->prev_full_adler = vw_adler32(raw, len);
    uint64_t off = f->stream_off;
    f->stream_off += len;
    f->chunks++;
    if (call->cb)
        call->cb(call->ctx, raw, len, off, &chunk, err, &fs);
}

static bool stopped(void *owner)
{
    struct feed_call *call = owner;
    return call->f->error != VW_REQ_NONE || call->f->oom;
}

static void no_memory(void *owner) { ((struct feed_call *)owner)->f->oom = true; }

static const struct vw_gather_ops gather_ops = {chunk_len, deliver, stopped, no_memory};

enum vw_req vw_warp_framer_feed(struct vw_warp_framer *f, const uint8_t *data, size_t len,
                                vw_warp_chunk_cb cb, void *ctx)
{
    struct feed_call call = {f, cb, ctx, data, len, f->have};
    vw_gather_feed(&f->buf, &f->cap, &f->have, data, len, &gather_ops, &call);
    return f->error;
}

bool vw_warp_plausible_header(const uint8_t *buf, size_t len)
{
    if (len < 4)
        return false;
    size_t hdr = vw_warp_type_hdr_len(buf[0] >> 4);
    return hdr != 0 && vw_warp_peek_chunk_len(buf, len) >= hdr + VW_WARP_ADLER_LEN;
}
