/* Where an RDMA Write lands in the receiver's announced regions (W5). */
#include "vitcp/warp_region.h"

enum vw_req vw_warp_region_find(const struct vw_warp_region *regions, size_t n,
                                const struct vw_warp_chunk *c, size_t *index, uint64_t *at,
                                struct vw_findings *fs)
{
    for (size_t i = 0; i < n; i++) {
        const struct vw_warp_region *r = &regions[i];
        if (r->rid != c->rid)
            continue;
        /* Compared without overflow: offset, then the room left after it. */
        if (c->offset < r->base || c->offset - r->base > r->len ||
            c->payload_len > r->len - (c->offset - r->base)) {
            vw_findings_add(fs, VW_REQ_WARP_INTRO_REGION_BOUNDS, VW_SEV_ERROR, 8, 8,
                            "RDMA Write of %zu bytes at offset 0x%llx outside RID 0x%08x "
                            "[0x%llx, +%llu)",
                            c->payload_len, (unsigned long long)c->offset, c->rid,
                            (unsigned long long)r->base, (unsigned long long)r->len);
            return VW_REQ_WARP_INTRO_REGION_BOUNDS;
        }
        *index = i;
        *at = c->offset - r->base;
        return VW_REQ_NONE;
    }
    vw_findings_add(fs, VW_REQ_WARP_INTRO_RDMA_RID_ALLOCATED, VW_SEV_ERROR, 4, 4,
                    "RDMA Write to RID 0x%08x, which the receiver never announced", c->rid);
    return VW_REQ_WARP_INTRO_RDMA_RID_ALLOCATED;
}
