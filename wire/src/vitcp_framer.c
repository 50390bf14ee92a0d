/*
 * VI/TCP framing over a TCP byte stream: Segment Length (V2) delimits every
 * segment, so a framer only needs the first four bytes of a segment to know
 * where it ends. Whole segments already contiguous in the caller's chunk are
 * decoded in place; split ones are gathered in a buffer that grows to the
 * segment being gathered (at most 64 KiB).
 */
#include <stdlib.h>
#include <string.h>
#include "vitcp/bytes.h"
#include "vitcp/vitcp_stream.h"
#include "pdu_gather.h"

int vw_vitcp_framer_init(struct vw_vitcp_framer *f, enum vw_vitcp_crc_mode crc_mode)
{
    memset(f, 0, sizeof *f);
    f->crc_mode = crc_mode;
    f->error = VW_REQ_NONE;
    return 0;
}

void vw_vitcp_framer_free(struct vw_vitcp_framer *f)
{
    free(f->buf);
    f->buf = NULL;
    f->cap = 0;
}

void vw_vitcp_framer_set_crc(struct vw_vitcp_framer *f, enum vw_vitcp_crc_mode crc_mode)
{
    f->crc_mode = crc_mode;
}

void vw_vitcp_framer_resync(struct vw_vitcp_framer *f, uint64_t stream_off)
{
    f->have = 0;
    f->stream_off = stream_off;
    f->error = VW_REQ_NONE;
    f->oom = false;
}

/* One feed call: the framer plus the caller's callback. */
struct feed_call {
    struct vw_vitcp_framer *f;
    vw_vitcp_seg_cb cb;
    void *ctx;
};

static size_t seg_len(void *owner, const uint8_t *p)
{
    struct feed_call *call = owner;
    size_t sl = vw_vitcp_peek_seg_len(p, 4);
    if (sl < VW_VITCP_SEG_HDR_LEN) {
        call->f->error = VW_REQ_VITCP_3_2_SEG_LEN_MIN;
        return 0;
    }
    return sl;
}

static void deliver(void *owner, const uint8_t *raw, size_t len)
{
    struct feed_call *call = owner;
    struct vw_vitcp_framer *f = call->f;
    struct vw_vitcp_seg seg;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    enum vw_req err = vw_vitcp_decode(raw, len, f->crc_mode, &seg, &fs);
    uint64_t off = f->stream_off;
    f->stream_off += len;
    if (call->cb)
        call->cb(call->ctx, raw, len, off, &seg, err, &fs);
}

static bool stopped(void *owner)
{
    struct feed_call *call = owner;
    return call->f->error != VW_REQ_NONE || call->f->oom;
}

static void no_memory(void *owner) { ((struct feed_call *)owner)->f->oom = true; }

static const struct vw_gather_ops gather_ops = {seg_len, deliver, stopped, no_memory};

enum vw_req vw_vitcp_framer_feed(struct vw_vitcp_framer *f, const uint8_t *data, size_t len,
                                 vw_vitcp_seg_cb cb, void *ctx)
{
    struct feed_call call = {f, cb, ctx};
    vw_gather_feed(&f->buf, &f->cap, &f->have, data, len, &gather_ops, &call);
    return f->error;
}

bool vw_vitcp_plausible_header(const uint8_t *buf, size_t len)
{
    if (len < VW_VITCP_SEG_HDR_LEN || buf[0] != VW_VITCP_VERSION)
        return false;
    unsigned type = buf[1] & VW_VITCP_TYPE_MASK;
    unsigned flags = buf[1] & ~VW_VITCP_TYPE_MASK;
    unsigned sl = vw_get_be16(buf + 2);
    if (type >= VW_VITCP_TYPE_COUNT || sl < vw_vitcp_type_hdr_len(type))
        return false;
    if (vw_vitcp_type_single_segment(type)) {
        if (!(flags & VW_VITCP_FLAG_EOM) || vw_get_be32(buf + 4) != 0)
            return false;
        if (type == VW_VITCP_NOP && sl != 24 && sl != 28)
            return false;
        if (type == VW_VITCP_RDMA_READ_REQ && sl != 40 && sl != 44)
            return false;
        if ((type == VW_VITCP_CONNECT_REJECT || type == VW_VITCP_CONNECT_NOMATCH) && sl != 24 && sl != 28)
            return false;
    }
    if (!vw_vitcp_type_supports_imm(type) && ((flags & VW_VITCP_FLAG_IDV) || vw_get_be32(buf + 8) != 0))
        return false;
    if (vw_vitcp_type_has_ce(type) && len >= 24 + 76) {
        if (vw_get_be16(buf + 26) > VW_VITCP_DISC_MAX || vw_get_be16(buf + 24 + 74) > VW_VITCP_DISC_MAX)
            return false;
    }
    return true;
}
