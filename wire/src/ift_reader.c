/*
 * Reading one IFT direction as an observer (ift_stream.h): PDUs whole in
 * the caller's chunk are delivered in place; the rest are gathered in a
 * buffer, only as far as deciding the next PDU's length needs, so the
 * buffer never holds more than one PDU and the look-ahead after it.
 */
#include <stdlib.h>
#include <string.h>
#include "vitcp/bytes.h"
#include "vitcp/ift_stream.h"

/* Bytes after a frame that show where its sender ended it: the next
 * frame's header (its VTag) past the longest layout (both CRCs). */
enum { LOOKAHEAD = VW_IFT_FRAME_HDR_LEN, EXTRA_CRCS = 2 * VW_IFT_CRC_LEN, MIN_BUF = 256 };

void vw_ift_reader_init(struct vw_ift_reader *r, const struct vw_ift_nego *nego, int dir, size_t limit)
{
    memset(r, 0, sizeof *r);
    r->nego = nego;
    r->dir = dir;
    r->limit = limit < VW_IFT_IND_LEN ? VW_IFT_IND_LEN : limit;
    r->status = VW_IFT_READ_OK;
}

void vw_ift_reader_free(struct vw_ift_reader *r)
{
    free(r->buf);
    r->buf = NULL;
    r->cap = r->have = 0;
}

/*
 * Length of the PDU at p, of which have bytes are at hand; 0 while it is
 * not known yet, with *need the bytes to gather before asking again (or
 * r->status set when the bytes cannot start a PDU). chunk_end: the bytes at
 * hand end where the caller's chunk ended; at_end: the stream ended there.
 */
static size_t pdu_len(struct vw_ift_reader *r, const uint8_t *p, size_t have, bool chunk_end, bool at_end,
                      size_t *need)
{
    *need = 4;
    if (have < 4)
        return 0;
    if (vw_get_be32(p) == VW_IFT_MAGIC)
        return VW_IFT_IND_LEN;
    if (!r->nego->ind_seen[r->dir]) {
        r->status = VW_IFT_READ_NOT_INDICATION;
        r->not_indication_rule = vw_ift_first_bytes_rule(p, have); /* I35 */
        return 0;
    }
    *need = VW_IFT_FRAME_HDR_LEN;
    if (have < VW_IFT_FRAME_HDR_LEN)
        return 0;
    struct vw_ift_frame_mode m = {0};
    vw_ift_nego_mode(r->nego, r->dir, &m);
    if (r->nego->ind_seen[1 - r->dir] && !vw_ift_frame_start_plausible(p, have, &m)) {
        r->status = VW_IFT_READ_FRAMING_LOST; /* I13 */
        r->lost_off = r->stream_off;
        r->lost_hs = vw_get_be16(p);
        r->lost_vtag = vw_get_be16(p + 4);
        return 0;
    }
    size_t announced = vw_ift_peek_frame_len(p, have, &m);
    if (!m.check_vtag || (chunk_end && have == announced))
        return announced;
    if (at_end)
        return vw_ift_frame_len_in_step(p, have, &m);
    /* The announced layout comes first in the in-step rule: the next
     * frame's VTag right after it settles the length at once. */
    if (have >= announced + LOOKAHEAD && vw_get_be16(p + announced + 4) == m.vtag)
        return announced;
    size_t shortest = vw_ift_frame_len(vw_get_be16(p), vw_get_be16(p + 2), false, false);
    size_t decisive = shortest + EXTRA_CRCS + LOOKAHEAD; /* every layout's look-ahead at hand */
    if (have >= decisive)
        return vw_ift_frame_len_in_step(p, decisive, &m);
    if (shortest > r->limit) {
        r->status = VW_IFT_READ_TOO_LARGE; /* no layout fits */
        return 0;
    }
    *need = have < announced ? announced : have < announced + LOOKAHEAD ? announced + LOOKAHEAD : decisive;
    return 0;
}

static bool deliver(struct vw_ift_reader *r, const uint8_t *raw, size_t len, vw_ift_read_cb cb, void *ctx)
{
    if (len > r->limit) {
        r->status = VW_IFT_READ_TOO_LARGE;
        return false;
    }
    uint64_t off = r->stream_off;
    r->stream_off += len;
    if (cb && !cb(ctx, raw, len, off, vw_get_be32(raw) == VW_IFT_MAGIC)) {
        r->status = VW_IFT_READ_STOPPED;
        return false;
    }
    return true;
}

static bool reserve(struct vw_ift_reader *r, size_t want)
{
    if (r->buf != NULL && r->cap >= want)
        return true;
    size_t most = r->limit + EXTRA_CRCS + LOOKAHEAD; /* what pdu_len can ask for */
    size_t n = want < MIN_BUF && MIN_BUF <= most ? MIN_BUF : want;
    uint8_t *b = realloc(r->buf, n);
    if (b == NULL) {
        r->status = VW_IFT_READ_NO_MEMORY;
        return false;
    }
    r->buf = b;
    r->cap = n;
    return true;
}

/* Deliver the buffered PDU if its length is settled and it is whole;
 * false when more bytes are needed (or reading stopped). */
static bool deliver_buffered(struct vw_ift_reader *r, bool chunk_end, bool at_end, vw_ift_read_cb cb,
                             void *ctx, size_t *need)
{
    size_t n = pdu_len(r, r->buf, r->have, chunk_end, at_end, need);
    if (r->status != VW_IFT_READ_OK)
        return false;
    if (n == 0 || n > r->have) {
        if (n > r->limit)
            r->status = VW_IFT_READ_TOO_LARGE;
        if (n != 0)
            *need = n;
        return false;
    }
    if (!deliver(r, r->buf, n, cb, ctx))
        return false;
    r->have -= n;
    memmove(r->buf, r->buf + n, r->have); /* the look-ahead starts the next PDU */
    return true;
}

enum vw_ift_read_status vw_ift_reader_feed(struct vw_ift_reader *r, const uint8_t *data, size_t len,
                                           vw_ift_read_cb cb, void *ctx)
{
    while (r->status == VW_IFT_READ_OK) {
        size_t need;
        if (r->have == 0) {
            if (len == 0)
                break;
            size_t n = pdu_len(r, data, len, true, false, &need);
            if (r->status != VW_IFT_READ_OK)
                break;
            if (n != 0 && n <= len) {
                if (!deliver(r, data, n, cb, ctx))
                    break;
                data += n;
                len -= n;
                continue;
            }
        }
        /* Gather up to the point where the next decision can be made. */
        if (!deliver_buffered(r, len == 0, false, cb, ctx, &need)) {
            if (r->status != VW_IFT_READ_OK || len == 0)
                break;
            size_t take = need - r->have < len ? need - r->have : len;
            if (!reserve(r, r->have + take))
                break;
            memcpy(r->buf + r->have, data, take);
            r->have += take;
            data += take;
            len -= take;
        }
    }
    return r->status;
}

enum vw_ift_read_status vw_ift_reader_finish(struct vw_ift_reader *r, vw_ift_read_cb cb, void *ctx)
{
    size_t need;
    while (r->status == VW_IFT_READ_OK && r->have > 0 && deliver_buffered(r, true, true, cb, ctx, &need))
        ;
    return r->status;
}

void vw_ift_direction_end(size_t cut_bytes, struct vw_findings *fs)
{
    if (cut_bytes)
        vw_findings_add(fs, VW_REQ_IFT_5_1_FRAME_TRUNCATED, VW_SEV_ERROR, 0, 0,
                        "the direction ended (TCP FIN) %zu bytes into a PDU", cut_bytes);
}
