/*
 * The rules of an IFT connection that need both indications (I7, I8): the
 * phases, one indication per side, R-bit agreement, frames only once both
 * indications are out, and the frame layout each side's indication sets.
 * Shared by vw_ift_conn and by callers that frame PDUs themselves.
 */
#include <stdio.h>
#include <string.h>
#include "vitcp/bytes.h"
#include "vitcp/ift_stream.h"

void vw_ift_nego_init(struct vw_ift_nego *n)
{
    memset(n, 0, sizeof *n);
    n->phase0_dir = -1;
}

/* I34: an answer to a version-1 indication confirms the agreement to speak
 * version 1 (section 4: "the sending of the adaption indication is a
 * confirmation of this agreement"), so version 1's field values bind it: a
 * BC version above 1 in it breaks IFT-4.2-BC-VERSION-SET ("For this version
 * of the protocol, this field MUST be set to 1"), whatever its version
 * field says. The decoder's note (the provocation of a receiver's
 * rejection) is the symptom: it gives way to the error. */
static void answer_breaks_bc_version(struct vw_findings *fs, const struct vw_ift_ind *ind)
{
    bool have_error = vw_findings_has(fs, VW_REQ_IFT_4_2_BC_VERSION_SET);
    unsigned kept = 0;
    for (unsigned i = 0; i < fs->count; i++) {
        struct vw_finding *it = &fs->item[i];
        if (it->req == VW_REQ_IFT_4_2_BC_VERSION_REJECT && it->severity == VW_SEV_NOTE) {
            if (have_error)
                continue;
            it->req = VW_REQ_IFT_4_2_BC_VERSION_SET;
            it->severity = VW_SEV_ERROR;
            snprintf(it->detail, sizeof it->detail, "BC version %u in the answer to a version 1 indication (I34)",
                     (unsigned)ind->bc_version);
            have_error = true;
        }
        fs->item[kept++] = *it;
    }
    fs->count = kept;
    if (!have_error)
        vw_findings_add(fs, VW_REQ_IFT_4_2_BC_VERSION_SET, VW_SEV_ERROR, 6, 2,
                        "BC version %u in the answer to a version 1 indication: answering confirms version 1, "
                        "whose BC version must be 1 (I34)", ind->bc_version);
}

bool vw_ift_nego_indication(struct vw_ift_nego *n, int dir, const struct vw_ift_ind *ind,
                            struct vw_findings *fs)
{
    if (dir != 0 && dir != 1)
        return false;
    if (n->ind_seen[dir]) {
        vw_findings_add(fs, VW_REQ_IFT_4_2_PHASE, VW_SEV_ERROR, 0, VW_IFT_IND_LEN,
                        "Second adaption indication from this side: a protocol error "
                        "(the first one stays in force)");
        return false;
    }
    unsigned phase = vw_ift_ind_phase(ind);
    if (n->phase0_dir < 0) {
        n->phase0_dir = dir;
        if (phase != 0)
            vw_findings_add(fs, VW_REQ_IFT_4_2_PHASE, VW_SEV_ERROR, 8, 1,
                            "The first adaption indication must be phase 0, this is phase 1");
    } else if (phase != 1) {
        vw_findings_add(fs, VW_REQ_IFT_4_2_PHASE, VW_SEV_ERROR, 8, 1,
                        "The answer to phase 0 must be phase 1, this is phase 0");
    }
    const struct vw_ift_ind *peer = &n->ind[1 - dir];
    /* Each end chooses R; only the close after a disagreement is required
     * (I8: phase 1, then RST), so the disagreement itself is a note. */
    if (n->ind_seen[1 - dir] && ((peer->flags ^ ind->flags) & VW_IFT_FLAG_R)) {
        n->r_disagree = true;
        vw_findings_add(fs, VW_REQ_IFT_4_2_R_AGREE, VW_SEV_NOTE, 8, 1,
                        "R=%u here, R=%u from the peer: the ends disagree, the connection must now "
                        "close in error", !!(ind->flags & VW_IFT_FLAG_R), !!(peer->flags & VW_IFT_FLAG_R));
    }
    if (n->ind_seen[1 - dir] && peer->version == VW_IFT_VERSION && ind->bc_version > VW_IFT_BC_VERSION)
        answer_breaks_bc_version(fs, ind);
    if (n->incompatible[1 - dir])
        vw_findings_add(fs, VW_REQ_IFT_4_2_BC_VERSION_REJECT, VW_SEV_ERROR, 0, VW_IFT_IND_LEN,
                        "An answer to the peer's incompatible indication (BC version %u): it must be "
                        "rejected and the connection closed", peer->bc_version);
    n->incompatible[dir] = ind->bc_version > VW_IFT_BC_VERSION;
    n->ind_seen[dir] = true;
    n->ind[dir] = *ind;
    n->ind[dir].reserved = NULL; /* points into bytes that do not outlive the call */
    return true;
}

void vw_ift_nego_frame(const struct vw_ift_nego *n, int dir, struct vw_findings *fs)
{
    if (dir != 0 && dir != 1)
        return;
    if (!n->ind_seen[dir])
        vw_findings_add(fs, VW_REQ_IFT_4_INDICATION_FIRST, VW_SEV_ERROR, 0, 0,
                        "Frame before this side's adaption indication: a protocol error");
    else if (!n->ind_seen[1 - dir])
        vw_findings_add(fs, VW_REQ_IFT_4_2_FRAMES_AFTER_PHASE1, VW_SEV_ERROR, 0, 0,
                        "Frame sent before the peer's adaption indication");
    if (n->r_disagree)
        vw_findings_add(fs, VW_REQ_IFT_4_2_R_AGREE, VW_SEV_ERROR, 0, 0,
                        "Frame after the R bits disagreed: the connection must close in error, "
                        "not carry data");
    if (n->incompatible[1 - dir])
        vw_findings_add(fs, VW_REQ_IFT_4_2_BC_VERSION_REJECT, VW_SEV_ERROR, 0, 0,
                        "Frame after the peer's incompatible indication (BC version %u): it must be "
                        "rejected and the connection closed", n->ind[1 - dir].bc_version);
}

bool vw_ift_nego_rdma(const struct vw_ift_nego *n)
{
    /* 4.2 R: both set is RDMA mode; both clear DDP mode; a disagreement is no mode. */
    return n->ind_seen[0] && n->ind_seen[1] && (n->ind[0].flags & VW_IFT_FLAG_R) &&
           (n->ind[1].flags & VW_IFT_FLAG_R);
}

bool vw_ift_nego_mode(const struct vw_ift_nego *n, int dir, struct vw_ift_frame_mode *mode)
{
    if (dir != 0 && dir != 1)
        return false;
    mode->check_vtag = n->ind_seen[1 - dir];
    mode->vtag = n->ind_seen[1 - dir] ? n->ind[1 - dir].vtag : 0;
    if (!n->ind_seen[dir])
        return false;
    mode->hc = n->ind[dir].flags & VW_IFT_FLAG_HC;
    mode->pc = n->ind[dir].flags & VW_IFT_FLAG_PC;
    return true;
}

void vw_ift_nego_frame_rules(const struct vw_ift_nego *n, int dir, const struct vw_ift_frame *fr,
                             struct vw_findings *fs)
{
    if ((dir != 0 && dir != 1) || !fr->ddp_decoded || !vw_ift_nego_rdma(n))
        return;
    if (fr->ddp_hdr.rdmap_rv != VW_RDMAP_VERSION)
        vw_findings_add(fs, VW_REQ_IFT_4_2_R_MODE, VW_SEV_ERROR, VW_IFT_FRAME_HDR_LEN + 1, 1,
                        "RDMAP version %u in RDMA mode (both ends set R), must be %u (RFC 5040, I5)",
                        fr->ddp_hdr.rdmap_rv, VW_RDMAP_VERSION);
}

void vw_ift_nego_frame_done(struct vw_ift_nego *n, int dir, const struct vw_findings *fs)
{
    if ((dir != 0 && dir != 1) || !fs)
        return;
    uint32_t rx_flags = n->ind_seen[1 - dir] ? n->ind[1 - dir].flags : 0;
    for (unsigned i = 0; i < fs->count; i++) {
        const struct vw_finding *f = &fs->item[i];
        if (f->severity != VW_SEV_ERROR)
            continue;
        bool fatal = f->req == VW_REQ_IFT_4_2_VTAG_MATCH || f->req == VW_REQ_IFT_5_1_FRAME_LEN ||
                     f->req == VW_REQ_IFT_5_1_DDP_HDR_PRESENT || f->req == VW_REQ_IFT_5_1_RDMA_HDR_IN_PAYLOAD ||
                     (f->req == VW_REQ_IFT_5_1_HDR_CRC && !(rx_flags & VW_IFT_FLAG_IH)) ||
                     (f->req == VW_REQ_IFT_5_1_PAYLOAD_CRC && !(rx_flags & VW_IFT_FLAG_IP));
        if (fatal)
            n->error_frame[dir] = true;
    }
}

void vw_ift_nego_frame_end(struct vw_ift_nego *n, int dir, uint64_t end)
{
    if ((dir == 0 || dir == 1) && n->error_frame[dir] && !n->error_end_known[dir]) {
        n->error_end_known[dir] = true;
        n->error_end[dir] = end;
    }
}

void vw_ift_nego_ack(struct vw_ift_nego *n, int dir, uint64_t acked)
{
    if (dir != 0 && dir != 1)
        return;
    n->acks_reported = true;
    if (acked > n->acked[dir])
        n->acked[dir] = acked;
}

void vw_ift_nego_after_error(struct vw_ift_nego *n, int dir, struct vw_findings *fs)
{
    if ((dir != 0 && dir != 1) || !n->error_frame[1 - dir] || n->after_error_seen[dir])
        return;
    /* V29: not yet received (by its TCP ACK): the frame was in flight */
    if (n->acks_reported && n->error_end_known[1 - dir] && n->acked[dir] < n->error_end[1 - dir])
        return;
    n->after_error_seen[dir] = true;
    vw_findings_add(fs, VW_REQ_IFT_5_1_NO_DATA_AFTER_ERROR, VW_SEV_ERROR, 0, 0,
                    "Frame sent after the peer's frame broke I8 (VTag, CRC, sizes): the connection "
                    "must close, not carry data");
}

bool vw_ift_frame_start_plausible(const uint8_t *p, size_t have, const struct vw_ift_frame_mode *m)
{
    if (have < VW_IFT_FRAME_HDR_LEN || !m->check_vtag)
        return true;
    if (vw_get_be32(p) == VW_IFT_MAGIC)
        return true;
    return vw_get_be16(p) <= VW_IFT_DDP_HDR_PLAUSIBLE_MAX || vw_get_be16(p + 4) == m->vtag;
}
