/*
 * WARP RDMA memory regions as a receiver announces them (spec-decisions W5
 * in docs/decisions.md): a buffer id (RID), a size and a base, zero-based
 * (offset 0 is the first byte) or not (offsets are addresses). Where an RDMA
 * Write chunk lands, or the rule it breaks, before any byte is placed.
 */
#ifndef VITCP_WARP_REGION_H
#define VITCP_WARP_REGION_H

#include <stddef.h>
#include <stdint.h>
#include "vitcp/warp.h"

struct vw_warp_region {
    uint32_t rid;
    uint64_t base; /* offset of the first byte: 0 when zero-based, else its address */
    uint64_t len;
};

/* For an RDMA Write chunk c: VW_REQ_NONE with *index (into regions) and *at
 * (byte inside that region), or WARP-INTRO-RDMA-RID-ALLOCATED (no region
 * has c's RID) or WARP-INTRO-REGION-BOUNDS (payload not inside [base,
 * base + len)), with a finding added to findings (may be NULL). */
enum vw_req vw_warp_region_find(const struct vw_warp_region *regions, size_t n,
                                const struct vw_warp_chunk *c, size_t *index, uint64_t *at,
                                struct vw_findings *findings);

#endif
