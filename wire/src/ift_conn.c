/*
 * An IFT connection: two framers fed in capture order, plus the rules that
 * need both directions (I7, I8): phase 0 then phase 1, the R bits agree,
 * A sends frames only after phase 1 arrived, each side's frames carry the
 * VTag the other side announced. The rules themselves are in ift_nego.c.
 */
#include <string.h>
#include "vitcp/ift_stream.h"

int vw_ift_conn_init(struct vw_ift_conn *c)
{
    memset(c, 0, sizeof *c);
    vw_ift_nego_init(&c->nego);
    if (vw_ift_framer_init(&c->dir[0], true) != 0)
        return -1;
    if (vw_ift_framer_init(&c->dir[1], true) != 0) {
        vw_ift_framer_free(&c->dir[0]);
        return -1;
    }
    return 0;
}

void vw_ift_conn_free(struct vw_ift_conn *c)
{
    vw_ift_framer_free(&c->dir[0]);
    vw_ift_framer_free(&c->dir[1]);
}

struct conn_call {
    struct vw_ift_conn *conn;
    int dir;
    vw_ift_pdu_cb cb;
    void *ctx;
};

static void conn_pdu(void *vctx, const uint8_t *raw, size_t len, uint64_t stream_off,
                     const struct vw_ift_pdu *pdu, enum vw_req err,
                     const struct vw_findings *findings)
{
    struct conn_call *call = vctx;
    struct vw_ift_conn *c = call->conn;
    int dir = call->dir;
    struct vw_findings fs = *findings;
    if (pdu->is_indication && err == VW_REQ_NONE) {
        bool disagreed = c->nego.r_disagree;
        if (vw_ift_nego_indication(&c->nego, dir, &pdu->ind, &fs))
            vw_ift_framer_set_vtag(&c->dir[1 - dir], pdu->ind.vtag); /* the peer's frames carry it */
        /* B answers a disagreeing phase 0 with phase 1, then must close (I8). */
        if (!disagreed && c->nego.r_disagree && c->dir[dir].close_reason == VW_REQ_NONE)
            c->dir[dir].close_reason = VW_REQ_IFT_4_2_R_AGREE;
    } else if (!pdu->is_indication) {
        vw_ift_nego_frame(&c->nego, dir, &fs);
        vw_ift_nego_after_error(&c->nego, dir, &fs);
        if (err == VW_REQ_NONE)
            vw_ift_nego_frame_rules(&c->nego, dir, &pdu->frame, &fs);
        vw_ift_nego_frame_done(&c->nego, dir, &fs);
    }
    if (call->cb)
        call->cb(call->ctx, raw, len, stream_off, pdu, err, &fs);
}

enum vw_req vw_ift_conn_feed(struct vw_ift_conn *c, int dir, const uint8_t *data, size_t len,
                             vw_ift_pdu_cb cb, void *ctx)
{
    if (dir != 0 && dir != 1)
        return VW_REQ_IFT_4_INDICATION_FIRST;
    struct conn_call call = {c, dir, cb, ctx};
    return vw_ift_framer_feed(&c->dir[dir], data, len, conn_pdu, &call);
}
