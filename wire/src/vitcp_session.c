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
    for (int d = 0; d < 2; d++) {
        if (!w->pending[d] || !w->acked[d])
            continue;
        w->pending[d] = false;
        vw_findings_add(fs, VW_REQ_VITCP_3_6_BAD_CRC_REACTION, VW_SEV_ERROR, 0, 0,
                        "bad-CRC segment of frame %llu was TCP-ACKed, the connection goes on: neither "
                        "reaction of 3.6 (V26)", (unsigned long long)w->frame[d]);
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
