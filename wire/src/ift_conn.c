/*
 * An IFT connection: two framers fed in capture order, plus the rules that
 * need both directions (I7, I8): phase 0 then phase 1, the R bits agree,
 * A sends frames only after phase 1 arrived, each side's frames carry the
 * VTag the other side announced.
 */
#include <string.h>
#include "vitcp/ift_stream.h"

int vw_ift_conn_init(struct vw_ift_conn *c)
{
    memset(c, 0, sizeof *c);
    c->phase0_dir = -1;
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

static void check_indication(struct vw_ift_conn *c, int dir, const struct vw_ift_ind *ind,
                             struct vw_findings *fs)
{
    struct vw_ift_framer *peer = &c->dir[1 - dir];
    unsigned phase = vw_ift_ind_phase(ind);
    if (c->phase0_dir < 0) {
        c->phase0_dir = dir;
        if (phase != 0)
            vw_findings_add(fs, VW_REQ_IFT_4_2_PHASE, VW_SEV_ERROR, 8, 1,
                            "first indication of the connection has PH=1");
    } else if (phase != 1) {
        vw_findings_add(fs, VW_REQ_IFT_4_2_PHASE, VW_SEV_ERROR, 8, 1,
                        "answer to phase 0 has PH=0");
    }
    if (peer->ind_seen && peer->ind.magic == VW_IFT_MAGIC &&
        ((peer->ind.flags ^ ind->flags) & VW_IFT_FLAG_R)) {
        c->r_disagree = true;
        vw_findings_add(fs, VW_REQ_IFT_4_2_R_AGREE, VW_SEV_ERROR, 8, 1,
                        "R=%u here, R=%u from the peer: the connection must close",
                        !!(ind->flags & VW_IFT_FLAG_R), !!(peer->ind.flags & VW_IFT_FLAG_R));
        if (c->dir[dir].close_reason == VW_REQ_NONE)
            c->dir[dir].close_reason = VW_REQ_IFT_4_2_R_AGREE;
    }
    /* Frames the peer sends must carry this side's VTag. */
    vw_ift_framer_set_vtag(peer, ind->vtag);
}

static void conn_pdu(void *vctx, const uint8_t *raw, size_t len, uint64_t stream_off,
                     const struct vw_ift_pdu *pdu, enum vw_req err,
                     const struct vw_findings *findings)
{
    struct conn_call *call = vctx;
    struct vw_ift_conn *c = call->conn;
    struct vw_findings fs = *findings;
    if (pdu->is_indication && err == VW_REQ_NONE) {
        check_indication(c, call->dir, &pdu->ind, &fs);
    } else if (!pdu->is_indication) {
        /* I7: A frames only after phase 1 arrived; B after sending it. */
        if (!c->dir[1 - call->dir].ind_seen)
            vw_findings_add(&fs, VW_REQ_IFT_4_2_FRAMES_AFTER_PHASE1, VW_SEV_ERROR, 0, 0,
                            "frame sent before the peer's adaption indication");
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
