/*
 * IFT framing over a TCP byte stream, per direction: first the sender's
 * 64-byte adaption indication (I7), then frames whose length follows from
 * header_size, payload_size and the CRCs the indication announced (I6).
 * Whole PDUs contiguous in the caller's data are decoded in place; split
 * ones are gathered in a buffer that grows to the frame being gathered.
 */
#include <stdlib.h>
#include <string.h>
#include "vitcp/bytes.h"
#include "vitcp/ift_stream.h"
#include "pdu_gather.h"

int vw_ift_framer_init(struct vw_ift_framer *f, bool expect_indication)
{
    memset(f, 0, sizeof *f);
    f->ind_seen = !expect_indication;
    f->error = VW_REQ_NONE;
    f->close_reason = VW_REQ_NONE;
    return 0;
}

void vw_ift_framer_free(struct vw_ift_framer *f)
{
    free(f->buf);
    f->buf = NULL;
    f->cap = 0;
}

void vw_ift_framer_set_mode(struct vw_ift_framer *f, const struct vw_ift_frame_mode *mode)
{
    f->mode = *mode;
}

void vw_ift_framer_set_vtag(struct vw_ift_framer *f, uint16_t vtag)
{
    f->mode.vtag = vtag;
    f->mode.check_vtag = true;
}

void vw_ift_framer_resync(struct vw_ift_framer *f, uint64_t stream_off)
{
    f->have = 0;
    f->stream_off = stream_off;
    f->error = VW_REQ_NONE;
    f->oom = false;
}

/* Bytes of the PDU starting at p (>= 4 bytes); 0 when p cannot start one,
 * with f->error set. */
struct feed_call {
    struct vw_ift_framer *f;
    vw_ift_pdu_cb cb;
    void *ctx;
};

static size_t pdu_len(void *owner, const uint8_t *p)
{
    struct vw_ift_framer *f = ((struct feed_call *)owner)->f;
    if (!f->ind_seen) {
        if (vw_get_be32(p) != VW_IFT_MAGIC) {
            f->error = vw_ift_first_bytes_rule(p, 4); /* I35 */
            return 0;
        }
        return VW_IFT_IND_LEN;
    }
    return vw_ift_peek_frame_len(p, 4, &f->mode);
}

static void deliver(void *owner, const uint8_t *raw, size_t len)
{
    struct feed_call *call = owner;
    struct vw_ift_framer *f = call->f;
    struct vw_ift_pdu pdu;
    struct vw_findings fs;
    enum vw_req err;
    vw_findings_clear(&fs);
    memset(&pdu, 0, sizeof pdu);
    if (!f->ind_seen) {
        pdu.is_indication = true;
        err = vw_ift_ind_decode(raw, len, &pdu.ind, &fs);
        f->ind_seen = true;
        f->ind = pdu.ind;
        f->ind.reserved = NULL; /* points into bytes that do not outlive the call */
        f->mode.hc = pdu.ind.flags & VW_IFT_FLAG_HC;
        f->mode.pc = pdu.ind.flags & VW_IFT_FLAG_PC;
        enum vw_req fatal = vw_ift_ind_fatal(&pdu.ind);
        if (fatal != VW_REQ_NONE && f->close_reason == VW_REQ_NONE)
            f->close_reason = fatal;
        /* Frames after an incompatible indication have an unknown layout. */
        if (pdu.ind.bc_version > VW_IFT_BC_VERSION)
            f->error = VW_REQ_IFT_4_2_BC_VERSION_REJECT;
    } else {
        err = vw_ift_frame_decode(raw, len, &f->mode, &pdu.frame, &fs);
        enum vw_req fatal = err != VW_REQ_NONE ? err : vw_ift_frame_fatal(&pdu.frame, &f->mode);
        if (fatal != VW_REQ_NONE && f->close_reason == VW_REQ_NONE)
            f->close_reason = fatal;
        f->frames++;
    }
    uint64_t off = f->stream_off;
    f->stream_off += len;
    if (call->cb)
        call->cb(call->ctx, raw, len, off, &pdu, err, &fs);
}

static bool stopped(void *owner)
{
    struct feed_call *call = owner;
    return call->f->error != VW_REQ_NONE || call->f->oom;
}

static void no_memory(void *owner) { ((struct feed_call *)owner)->f->oom = true; }

static const struct vw_gather_ops gather_ops = {pdu_len, deliver, stopped, no_memory};

enum vw_req vw_ift_framer_feed(struct vw_ift_framer *f, const uint8_t *data, size_t len,
                               vw_ift_pdu_cb cb, void *ctx)
{
    struct feed_call call = {f, cb, ctx};
    vw_gather_feed(&f->buf, &f->cap, &f->have, data, len, &gather_ops, &call);
    return f->error;
}
