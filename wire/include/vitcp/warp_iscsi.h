/*
 * Appendix B (iSCSI on WARP) checked over one direction of a WARP stream,
 * chunk by chunk, without reassembly: each Send ULP PDU must be one whole
 * iSCSI PDU; the data of a SCSI Data-In (and of a Data-Out answering an R2T)
 * travels in RDMA Writes right before the Send of its header, at the header's
 * Buffer Offset, contiguous and increasing, without C, to the RID its task
 * tag names; immediate data stays in the Send. spec-decisions W8
 * (docs/decisions.md) fixes what the draft leaves open.
 */
#ifndef VITCP_WARP_ISCSI_H
#define VITCP_WARP_ISCSI_H

#include <stdbool.h>
#include <stdint.h>
#include "vitcp/iscsi_bhs.h"
#include "vitcp/warp.h"

struct vw_warp_iscsi {
    /* RDMA Writes since the last Send ULP PDU */
    bool rdma_pending;
    bool rdma_rid_mixed;
    bool rdma_completion;    /* one of them had C */
    uint32_t rdma_rid;
    uint64_t rdma_first, rdma_next, rdma_bytes;
    /* the Send ULP PDU being received: its first 48 bytes and its length */
    bool send_open;
    uint8_t hdr[VW_ISCSI_BHS_LEN];
    uint64_t send_len;
};

void vw_warp_iscsi_init(struct vw_warp_iscsi *s);
/* One decoded chunk of the direction, in stream order. Findings: on an RDMA
 * chunk the order of the RDMA Writes (WARP-B.4-RDMA-OFFSET-NEXT), on a
 * Send's L chunk everything its iSCSI header decides. */
void vw_warp_iscsi_check(struct vw_warp_iscsi *s, const struct vw_warp_chunk *c,
                         struct vw_findings *findings);
/* The direction ended: RDMA Writes no header followed break WARP-B.3-ISCSI-SEND. */
void vw_warp_iscsi_finish(const struct vw_warp_iscsi *s, struct vw_findings *findings);

#endif
