/* Appendix B of the WARP summary over one direction, chunk by chunk (W8). */
#include <string.h>
#include "vitcp/warp_iscsi.h"

void vw_warp_iscsi_init(struct vw_warp_iscsi *s) { memset(s, 0, sizeof *s); }

static void on_rdma(struct vw_warp_iscsi *s, const struct vw_warp_chunk *c, struct vw_findings *fs)
{
    if (!s->rdma_pending) {
        s->rdma_pending = true;
        s->rdma_rid = c->rid;
        s->rdma_first = c->offset;
    } else {
        if (c->rid != s->rdma_rid) {
            s->rdma_rid_mixed = true;
            vw_findings_add(fs, VW_REQ_WARP_B4_RDMA_OFFSET_NEXT, VW_SEV_ERROR, 4, 4,
                            "RID 0x%08x among RDMA Writes to RID 0x%08x before one header",
                            c->rid, s->rdma_rid);
        }
        if (c->offset != s->rdma_next)
            vw_findings_add(fs, VW_REQ_WARP_B4_RDMA_OFFSET_NEXT, VW_SEV_ERROR, 8, 8,
                            "RDMA Write at offset %llu, expected %llu: the writes of one Data PDU "
                            "fill the buffer in contiguous, increasing order",
                            (unsigned long long)c->offset, (unsigned long long)s->rdma_next);
    }
    s->rdma_next = c->offset + c->payload_len;
    s->rdma_bytes += c->payload_len;
    if (c->flags & VW_WARP_FLAG_C)
        s->rdma_completion = true;
}

/* A SCSI Data PDU whose data went (or should have gone) by RDMA Write. */
static void check_data_pdu(const struct vw_warp_iscsi *s, const struct vw_iscsi_hdr *h,
                           uint16_t send_flags, struct vw_findings *fs)
{
    const char *name = vw_iscsi_hdr_name(h);
    uint64_t header_only = VW_ISCSI_BHS_LEN + (uint64_t)h->ahs_len;
    if (s->send_len != header_only)
        vw_findings_add(fs, VW_REQ_WARP_B4_DATA_BY_RDMA, VW_SEV_ERROR, 0, 0,
                        "the Send of a %s carries %llu bytes: only its %llu-byte header belongs "
                        "there, its data in RDMA Writes", name, (unsigned long long)s->send_len,
                        (unsigned long long)header_only);
    else if (s->rdma_bytes != h->data_len)
        vw_findings_add(fs, VW_REQ_WARP_B4_DATA_BY_RDMA, VW_SEV_ERROR, 0, 0,
                        "%llu bytes of RDMA Writes before a %s with DataSegmentLength %u",
                        (unsigned long long)s->rdma_bytes, name, h->data_len);
    if (!s->rdma_pending)
        return;
    if (s->rdma_first != h->buffer_offset)
        vw_findings_add(fs, VW_REQ_WARP_B4_RDMA_FIRST_OFFSET, VW_SEV_ERROR, 0, 0,
                        "first RDMA Write at offset %llu, the %s's Buffer Offset is %u",
                        (unsigned long long)s->rdma_first, name, h->buffer_offset);
    bool read = h->opcode == VW_ISCSI_DATA_IN;
    uint32_t tag = read ? h->itt : h->word20;
    if (s->rdma_rid != tag || s->rdma_rid_mixed)
        vw_findings_add(fs, read ? VW_REQ_WARP_B42_RID_IS_ITT : VW_REQ_WARP_B41_RID_IS_TTT,
                        VW_SEV_ERROR, 0, 0, "RDMA Writes to RID 0x%08x, the %s's %s is 0x%08x",
                        s->rdma_rid, name, read ? "Initiator Task Tag" : "Target Transfer Tag", tag);
    if (s->rdma_completion)
        vw_findings_add(fs, VW_REQ_WARP_B4_RDMA_NO_COMPLETION, VW_SEV_ERROR, 0, 0,
                        "an RDMA Write carrying the data of a %s has the Completion bit", name);
    if (!(send_flags & VW_WARP_FLAG_C))
        vw_findings_add(fs, VW_REQ_WARP_B4_NOTIFY_BY_HEADER, VW_SEV_WARN, 1, 1,
                        "the Send of the %s header has no Completion bit: nothing notifies "
                        "the delivery of its data", name);
}

static void on_send_pdu(struct vw_warp_iscsi *s, uint16_t flags, struct vw_findings *fs)
{
    struct vw_iscsi_hdr h;
    if (!vw_iscsi_hdr_read(s->hdr, s->send_len < VW_ISCSI_BHS_LEN ? (size_t)s->send_len : VW_ISCSI_BHS_LEN, &h)) {
        vw_findings_add(fs, VW_REQ_WARP_B3_ISCSI_SEND, VW_SEV_ERROR, 0, 0,
                        "a Send ULP PDU of %llu bytes cannot hold an iSCSI header (48 bytes)",
                        (unsigned long long)s->send_len);
    } else {
        bool immediate = h.opcode == VW_ISCSI_DATA_OUT && h.word20 == VW_ISCSI_TTT_NONE;
        if (h.opcode == VW_ISCSI_DATA_IN || (h.opcode == VW_ISCSI_DATA_OUT && !immediate)) {
            check_data_pdu(s, &h, flags, fs);
        } else {
            enum vw_req rule = immediate ? VW_REQ_WARP_B3_IMMEDIATE_SEND : VW_REQ_WARP_B3_ISCSI_SEND;
            if (s->rdma_pending)
                vw_findings_add(fs, rule, VW_SEV_ERROR, 0, 0,
                                "%llu bytes of RDMA Writes before a %s (opcode 0x%02x): only "
                                "solicited SCSI Data travels by RDMA",
                                (unsigned long long)s->rdma_bytes, vw_iscsi_opcode_name(h.opcode),
                                h.opcode);
            if (s->send_len != vw_iscsi_pdu_len(&h))
                vw_findings_add(fs, rule, VW_SEV_ERROR, 0, 0,
                                "a Send ULP PDU of %llu bytes holds a %s of %llu bytes: one whole "
                                "iSCSI PDU per Send", (unsigned long long)s->send_len,
                                vw_iscsi_opcode_name(h.opcode),
                                (unsigned long long)vw_iscsi_pdu_len(&h));
        }
    }
    s->rdma_pending = s->rdma_rid_mixed = s->rdma_completion = false;
    s->rdma_bytes = 0;
}

void vw_warp_iscsi_check(struct vw_warp_iscsi *s, const struct vw_warp_chunk *c,
                         struct vw_findings *fs)
{
    if (c->type == VW_WARP_RDMA) {
        on_rdma(s, c, fs);
        return;
    }
    if (c->type != VW_WARP_SEND)
        return;
    if (c->offset == 0) {
        s->send_open = true;
        s->send_len = 0;
    }
    if (!s->send_open) /* a Send whose first chunk was never seen */
        return;
    if (s->send_len < VW_ISCSI_BHS_LEN && c->offset == s->send_len) {
        size_t n = VW_ISCSI_BHS_LEN - (size_t)s->send_len;
        if (n > c->payload_len)
            n = c->payload_len;
        memcpy(s->hdr + s->send_len, c->payload, n);
    }
    s->send_len += c->payload_len;
    if (c->flags & VW_WARP_FLAG_L) {
        on_send_pdu(s, c->flags, fs);
        s->send_open = false;
    }
}

void vw_warp_iscsi_finish(const struct vw_warp_iscsi *s, struct vw_findings *fs)
{
    if (s->rdma_pending)
        vw_findings_add(fs, VW_REQ_WARP_B3_ISCSI_SEND, VW_SEV_ERROR, 0, 0,
                        "the stream ended after %llu bytes of RDMA Writes that no SCSI Data PDU "
                        "header followed", (unsigned long long)s->rdma_bytes);
}
