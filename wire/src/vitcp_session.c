/*
 * A VI/TCP session: one framer per direction and one connection checker.
 * After every segment the checker's CRC mode is pushed back into both
 * framers, so the CE exchange decides how later segments are framed.
 */
#include <string.h>
#include "vitcp/vitcp_stream.h"

struct session_call {
    struct vw_vitcp_session *s;
    int dir;
    vw_vitcp_seg_cb cb;
    void *ctx;
};

static void on_segment(void *arg, const uint8_t *raw, size_t len, uint64_t off,
                       const struct vw_vitcp_seg *seg, enum vw_req err, const struct vw_findings *found)
{
    struct session_call *call = arg;
    struct vw_findings fs = *found;
    if (err == VW_REQ_NONE) {
        vw_vitcp_conn_check(&call->s->conn, call->dir, seg, &fs);
        enum vw_vitcp_crc_mode m = vw_vitcp_conn_crc_mode(&call->s->conn);
        vw_vitcp_framer_set_crc(&call->s->framer[0], m);
        vw_vitcp_framer_set_crc(&call->s->framer[1], m);
    }
    if (call->cb)
        call->cb(call->ctx, raw, len, off, seg, err, &fs);
}

int vw_vitcp_session_init(struct vw_vitcp_session *s)
{
    memset(s, 0, sizeof *s);
    vw_vitcp_conn_init(&s->conn);
    if (vw_vitcp_framer_init(&s->framer[0], VW_VITCP_CRC_AUTO) != 0)
        return -1;
    if (vw_vitcp_framer_init(&s->framer[1], VW_VITCP_CRC_AUTO) != 0) {
        vw_vitcp_framer_free(&s->framer[0]);
        return -1;
    }
    return 0;
}

void vw_vitcp_session_free(struct vw_vitcp_session *s)
{
    vw_vitcp_framer_free(&s->framer[0]);
    vw_vitcp_framer_free(&s->framer[1]);
}

enum vw_req vw_vitcp_session_feed(struct vw_vitcp_session *s, int dir, const uint8_t *data, size_t len,
                                  vw_vitcp_seg_cb cb, void *ctx)
{
    if (dir < 0 || dir > 1)
        return VW_REQ_NONE;
    struct session_call call = {s, dir, cb, ctx};
    return vw_vitcp_framer_feed(&s->framer[dir], data, len, on_segment, &call);
}

void vw_vitcp_badcrc_segment(struct vw_vitcp_badcrc_watch *w, const struct vw_vitcp_conn *c, int dir,
                             uint64_t seg_end, uint64_t frame, struct vw_findings *fs)
{
    if (dir != 0 && dir != 1)
        return;
    /* V29: only the receiver of the bad segment (the other side) reacts; a
     * segment of its own after it ACKed the bad one shows neither reaction.
     * The sender's own later segments (pipelined, or sent before it saw the
     * receiver's close) are no reaction of anybody's. */
    int sender = 1 - dir;
    if (w->pending[sender] && w->acked[sender]) {
        w->pending[sender] = false;
        /* At Reliable Reception the second reaction delivers the error
         * first: a segment whose Message ACK carries the VI error is that
         * report, and what must follow it (the close) is V15's
         * VITCP-3.2-ACK-ERROR-CLOSE. */
        if (c->dir[dir].error_acked)
            return;
        vw_findings_add(fs, VW_REQ_VITCP_3_6_BAD_CRC_REACTION, VW_SEV_ERROR, 0, 0,
                        "the receiver TCP-ACKed the bad-CRC segment of frame %llu and sends on instead of "
                        "closing: neither reaction of 3.6 (V26, V29)", (unsigned long long)w->frame[sender]);
    }
    bool reliable = c->level == VW_VITCP_ATTR_RELIABLE_DELIVERY || c->level == VW_VITCP_ATTR_RELIABLE_RECEPTION;
    if (!reliable || w->pending[dir])
        return;
    for (unsigned i = 0; i < fs->count; i++)
        if (fs->item[i].req == VW_REQ_VITCP_3_6_CRC_VALID && fs->item[i].severity == VW_SEV_ERROR) {
            w->pending[dir] = true;
            w->acked[dir] = false;
            w->end[dir] = seg_end;
            w->frame[dir] = frame;
            return;
        }
}

void vw_vitcp_badcrc_ack(struct vw_vitcp_badcrc_watch *w, int dir, uint64_t acked)
{
    if ((dir == 0 || dir == 1) && w->pending[1 - dir] && acked >= w->end[1 - dir])
        w->acked[1 - dir] = true;
}

void vw_vitcp_badcrc_close(struct vw_vitcp_badcrc_watch *w, int dir)
{
    /* V29: side dir closed (FIN or RST): the second reaction of 3.6 for a
     * bad segment it received; nothing of it is judged any more. */
    if (dir == 0 || dir == 1)
        w->pending[1 - dir] = false;
}
