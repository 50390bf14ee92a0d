/* iSCSI over WARP, both roles (iscsi_mode.h; Appendix B, W8). */
#include <stdlib.h>
#include <string.h>
#include "iscsi_mode.h"
#include "vitcp/bytes.h"
#include "vitcp/iscsi_bhs.h"

#define SCSI_GOOD 0x00
#define SCSI_CHECK_CONDITION 0x02
#define CMD_FLAG_READ 0x40
#define CMD_FLAG_WRITE 0x20

static int send_pdu(struct conn *c, const uint8_t *data, size_t len, uint16_t flags)
{
    struct tx_pdu p = {.type = VW_WARP_SEND, .data = data, .len = len, .flags = flags};
    return tx_pdu(&c->tx, &c->out, &p);
}

static int rdma_pdu(struct conn *c, uint32_t rid, uint64_t offset, const uint8_t *data, size_t len,
                    uint16_t flags)
{
    struct tx_pdu p = {.type = VW_WARP_RDMA, .rid = rid, .offset = offset, .data = data, .len = len,
                       .flags = flags};
    return tx_pdu(&c->tx, &c->out, &p);
}

/* ------------------------------------------------------------ target */

static int respond(struct conn *c, struct iscsi_target *t, uint32_t itt, uint8_t status, uint32_t exp_cmdsn,
                   uint32_t exp_datasn)
{
    uint8_t rsp[VW_ISCSI_BHS_LEN];
    vw_iscsi_put_scsi_rsp(rsp, itt, status, t->statsn++, exp_cmdsn, exp_datasn);
    if (c->tx.fault == FAULT_ISCSI_STATUS_BY_RDMA)
        return rdma_pdu(c, itt, 0, rsp, sizeof rsp, VW_WARP_FLAG_C);
    return send_pdu(c, rsp, sizeof rsp, VW_WARP_FLAG_C);
}

/* Data-In by RDMA Write to RID = ITT (zero-based, W8), then its header. */
static int target_read(struct conn *c, struct iscsi_target *t, uint32_t itt, uint32_t len, uint32_t exp_cmdsn)
{
    enum warp_fault f = c->tx.fault;
    uint8_t *d = malloc((size_t)len + VW_ISCSI_BHS_LEN + 3);
    if (!d)
        return -1;
    uint8_t *hdr = d, *data = d + VW_ISCSI_BHS_LEN; /* header and data adjacent for the Send fault */
    for (uint32_t i = 0; i < len; i++)
        data[i] = iscsi_pattern(itt, i);
    vw_iscsi_put_data_in(hdr, f == FAULT_ISCSI_RID_NOT_ITT ? itt ^ 0x80000000u : itt, len,
                         f == FAULT_ISCSI_FIRST_OFFSET ? VW_ISCSI_BLOCK : 0, 0, exp_cmdsn);
    if (t->draft_data_in)
        hdr[0] = VW_ISCSI_DRAFT_DATA_IN;
    int rc = 0;
    if (f == FAULT_ISCSI_DATA_IN_SEND) {
        size_t padded = ((size_t)len + 3) & ~(size_t)3;
        memset(data + len, 0, padded - len);
        rc = send_pdu(c, d, VW_ISCSI_BHS_LEN + padded, VW_WARP_FLAG_C);
    } else {
        uint16_t rflags = f == FAULT_ISCSI_RDMA_COMPLETION ? VW_WARP_FLAG_C : 0;
        if (f == FAULT_ISCSI_OFFSET_ORDER && len >= 4) { /* first quarter, last quarter, middle */
            uint32_t q = len / 4;
            rc = rdma_pdu(c, itt, 0, data, q, rflags) || rdma_pdu(c, itt, len - q, data + len - q, q, rflags) ||
                 rdma_pdu(c, itt, q, data + q, len - 2 * q, rflags);
        } else {
            rc = rdma_pdu(c, itt, 0, data, len, rflags);
        }
        if (!rc)
            rc = send_pdu(c, hdr, VW_ISCSI_BHS_LEN, f == FAULT_ISCSI_HEADER_NO_C ? 0 : VW_WARP_FLAG_C);
    }
    free(d);
    if (!rc)
        rc = respond(c, t, itt, SCSI_GOOD, exp_cmdsn, 1);
    peer_event("event=iscsi conn=%u op=read itt=0x%x len=%u", c->id, itt, len);
    return rc;
}

static int target_command(struct conn *c, struct iscsi_target *t, const uint8_t *pdu, const struct vw_iscsi_hdr *h)
{
    uint32_t exp_cmdsn = vw_get_be32(pdu + 24) + 1;
    t->exp_cmdsn = exp_cmdsn;
    uint32_t len = h->word20; /* Expected Data Transfer Length */
    struct peer_region *buf = &c->regions[0];
    if (h->flags & CMD_FLAG_READ) {
        if (len > t->max_read) {
            peer_event("event=iscsi conn=%u op=read itt=0x%x len=%u status=check-condition", c->id, h->itt, len);
            return respond(c, t, h->itt, SCSI_CHECK_CONDITION, exp_cmdsn, 0);
        }
        if (len == 0) { /* no data, no Data-In */
            peer_event("event=iscsi conn=%u op=read itt=0x%x len=0", c->id, h->itt);
            return respond(c, t, h->itt, SCSI_GOOD, exp_cmdsn, 0);
        }
        return target_read(c, t, h->itt, len, exp_cmdsn);
    }
    if (!(h->flags & CMD_FLAG_WRITE) || len == 0)
        return respond(c, t, h->itt, SCSI_GOOD, exp_cmdsn, 0);
    if (len > buf->r.len || t->write_open) {
        peer_event("event=iscsi conn=%u op=write itt=0x%x len=%u status=check-condition", c->id, h->itt, len);
        return respond(c, t, h->itt, SCSI_CHECK_CONDITION, exp_cmdsn, 0);
    }
    /* R2T: the Target Transfer Tag is the RID the data goes to (B.4.1) */
    t->write_open = true;
    t->write_itt = h->itt;
    t->write_len = len;
    memset(buf->mem, 0, len);
    uint8_t r2t[VW_ISCSI_BHS_LEN];
    vw_iscsi_put_r2t(r2t, h->itt, buf->r.rid, 0, len, t->statsn, exp_cmdsn);
    return send_pdu(c, r2t, sizeof r2t, VW_WARP_FLAG_C);
}

static int target_data_out(struct conn *c, struct iscsi_target *t, const struct vw_iscsi_hdr *h)
{
    if (h->word20 == VW_ISCSI_TTT_NONE || !t->write_open || h->itt != t->write_itt) {
        peer_event("event=iscsi conn=%u op=data-out itt=0x%x ignored=unsolicited-or-unknown-task", c->id, h->itt);
        return 0;
    }
    const uint8_t *m = c->regions[0].mem;
    bool ok = (uint64_t)h->buffer_offset + h->data_len <= t->write_len;
    for (uint32_t i = 0; ok && i < h->data_len; i++)
        ok = m[h->buffer_offset + i] == iscsi_pattern(h->itt, (uint64_t)h->buffer_offset + i);
    t->write_open = false;
    peer_event("event=iscsi conn=%u op=write itt=0x%x len=%u ok=%d", c->id, h->itt, h->data_len, ok);
    return respond(c, t, h->itt, ok ? SCSI_GOOD : SCSI_CHECK_CONDITION, t->exp_cmdsn, 0);
}

static int target_on_send(struct conn *c, const uint8_t *data, size_t len, uint32_t ssn, uint16_t flags)
{
    (void)ssn, (void)flags;
    struct iscsi_target *t = c->owner;
    struct vw_iscsi_hdr h;
    if (!vw_iscsi_hdr_read(data, len, &h)) /* the checker failed the connection already */
        return -1;
    switch (h.opcode) {
    case VW_ISCSI_SCSI_CMD: return target_command(c, t, data, &h);
    case VW_ISCSI_DATA_OUT: return target_data_out(c, t, &h);
    default:
        peer_event("event=iscsi conn=%u op=ignored opcode=0x%02x", c->id, h.opcode);
        return 0;
    }
}

const struct conn_handlers iscsi_target_handlers = {target_on_send, NULL};

/* --------------------------------------------------------- initiator */

int iscsi_initiator_next(struct conn *c)
{
    struct iscsi_initiator *in = c->owner;
    if (in->busy || in->next >= in->ntasks)
        return 0;
    const struct iscsi_task *task = &in->tasks[in->next++];
    in->busy = true;
    in->got_data = false;
    in->itt = 0x100u + (uint32_t)in->next;
    c->regions[0].r.rid = in->itt; /* B.4.2: the RID for the READ data is the ITT */
    memset(c->regions[0].mem, 0, c->regions[0].r.len);
    uint8_t cmd[VW_ISCSI_BHS_LEN];
    vw_iscsi_put_scsi_cmd(cmd, !task->write, in->itt, task->len, in->cmdsn++, in->exp_statsn, 0);
    peer_event("event=iscsi conn=%u op=%s itt=0x%x len=%u started=1", c->id, task->write ? "write" : "read",
               in->itt, task->len);
    return send_pdu(c, cmd, sizeof cmd, VW_WARP_FLAG_C);
}

static void task_done(struct conn *c, struct iscsi_initiator *in, bool ok, const char *why)
{
    const struct iscsi_task *task = &in->tasks[in->next - 1];
    peer_event("event=iscsi conn=%u op=%s itt=0x%x len=%u ok=%d%s%s", c->id, task->write ? "write" : "read",
               in->itt, task->len, ok, why ? " detail=" : "", why ? why : "");
    if (ok)
        in->ok++;
    else
        in->failed++;
    in->busy = false;
}

/* R2T: the data by RDMA Write to RID = Target Transfer Tag, then the Data-Out header. */
static int initiator_r2t(struct conn *c, struct iscsi_initiator *in, const struct vw_iscsi_hdr *h)
{
    uint32_t off = h->buffer_offset, len = h->desired_len;
    uint8_t *d = malloc(len ? len : 1);
    if (!d)
        return -1;
    for (uint32_t i = 0; i < len; i++)
        d[i] = iscsi_pattern(in->itt, (uint64_t)off + i);
    uint8_t hdr[VW_ISCSI_BHS_LEN];
    uint32_t ttt = c->tx.fault == FAULT_ISCSI_WRITE_TTT ? h->word20 ^ 1u : h->word20;
    vw_iscsi_put_data_out(hdr, in->itt, ttt, len, off, 0, in->exp_statsn);
    int rc = rdma_pdu(c, h->word20, off, d, len, 0) || send_pdu(c, hdr, sizeof hdr, VW_WARP_FLAG_C);
    free(d);
    return rc;
}

static int initiator_on_send(struct conn *c, const uint8_t *data, size_t len, uint32_t ssn, uint16_t flags)
{
    (void)ssn, (void)flags;
    struct iscsi_initiator *in = c->owner;
    struct vw_iscsi_hdr h;
    if (!vw_iscsi_hdr_read(data, len, &h))
        return -1;
    if (!in->busy || h.itt != in->itt) {
        peer_event("event=mismatch conn=%u rule=WARP-B.4.2-RID-IS-ITT detail=%s for task 0x%x, none such runs",
                   c->id, vw_iscsi_opcode_name(h.opcode), h.itt);
        return -1;
    }
    const struct peer_region *r = &c->regions[0];
    switch (h.opcode) {
    case VW_ISCSI_R2T:
        return initiator_r2t(c, in, &h);
    case VW_ISCSI_DATA_IN: {
        bool ok = (uint64_t)h.buffer_offset + h.data_len <= r->r.len;
        for (uint32_t i = 0; ok && i < h.data_len; i++)
            ok = r->mem[h.buffer_offset + i] == iscsi_pattern(h.itt, (uint64_t)h.buffer_offset + i);
        if (!ok) {
            peer_event("event=mismatch conn=%u rule=WARP-B.4-DATA-BY-RDMA detail=the %u bytes at Buffer Offset %u "
                       "are not the data of task 0x%x", c->id, h.data_len, h.buffer_offset, h.itt);
            return -1;
        }
        in->got_data = true;
        return 0;
    }
    case VW_ISCSI_SCSI_RSP: {
        in->exp_statsn = vw_get_be32(data + 24) + 1;
        const struct iscsi_task *task = &in->tasks[in->next - 1];
        bool ok = h.status == SCSI_GOOD && (task->write || task->len == 0 || in->got_data);
        task_done(c, in, ok, h.status != SCSI_GOOD ? "status not GOOD" : ok ? NULL : "no Data-In before the status");
        return iscsi_initiator_next(c);
    }
    default:
        peer_event("event=iscsi conn=%u op=ignored opcode=0x%02x", c->id, h.opcode);
        return 0;
    }
}

const struct conn_handlers iscsi_initiator_handlers = {initiator_on_send, NULL};
