/* iSCSI Basic Header Segments, byte by byte as RFC 3720 section 10 lays
 * them out (the writers leave every reserved byte zero). */
#include <string.h>
#include "vitcp/bytes.h"
#include "vitcp/iscsi_bhs.h"

bool vw_iscsi_hdr_read(const uint8_t *b, size_t len, struct vw_iscsi_hdr *h)
{
    memset(h, 0, sizeof *h);
    if (len < VW_ISCSI_BHS_LEN)
        return false;
    h->opcode = b[0] & 0x3F;
    if ((b[0] & 0x7F) == VW_ISCSI_DRAFT_DATA_IN) { /* W19: the draft's number of Data-In */
        h->opcode = VW_ISCSI_DATA_IN;
        h->draft_opcode = true;
    }
    h->flags = b[1];
    h->status = b[3];
    h->ahs_len = 4u * b[4];
    h->data_len = (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
    h->itt = vw_get_be32(b + 16);
    h->word20 = vw_get_be32(b + 20);
    h->buffer_offset = vw_get_be32(b + 40);
    h->desired_len = vw_get_be32(b + 44);
    return true;
}

uint64_t vw_iscsi_pdu_len(const struct vw_iscsi_hdr *h)
{
    return VW_ISCSI_BHS_LEN + (uint64_t)h->ahs_len + (((uint64_t)h->data_len + 3) & ~(uint64_t)3);
}

bool vw_iscsi_looks_like_pdu(const uint8_t *b, size_t len)
{
    struct vw_iscsi_hdr h;
    if (!b || !vw_iscsi_hdr_read(b, len, &h) || (b[0] & 0x80))
        return false;
    switch (h.opcode) {
    /* initiator opcodes: NOP-Out, SCSI Command, Task Management, Login, Text, Data-Out, Logout, SNACK */
    case 0x00: case 0x01: case 0x02: case 0x03: case 0x04: case 0x05: case 0x06: case 0x10:
        break;
    /* target opcodes (the I bit is the initiator's): NOP-In, SCSI Response, Task Management
     * Response, Login Response, Text Response, Data-In, Logout Response, R2T, Async, Reject */
    case 0x20: case 0x21: case 0x22: case 0x23: case 0x24: case 0x25: case 0x26: case 0x31: case 0x32: case 0x3F:
        if ((b[0] & 0x40) && !h.draft_opcode)
            return false;
        break;
    default:
        return false;
    }
    if (len == vw_iscsi_pdu_len(&h))
        return true;
    return (h.opcode == VW_ISCSI_DATA_IN || h.opcode == VW_ISCSI_DATA_OUT) && h.data_len > 0 &&
           len == VW_ISCSI_BHS_LEN + (uint64_t)h.ahs_len;
}

const char *vw_iscsi_opcode_name(unsigned opcode)
{
    switch (opcode) {
    case VW_ISCSI_SCSI_CMD: return "SCSI Command";
    case VW_ISCSI_DATA_OUT: return "SCSI Data-Out";
    case VW_ISCSI_SCSI_RSP: return "SCSI Response";
    case VW_ISCSI_DATA_IN: return "SCSI Data-In";
    case VW_ISCSI_R2T: return "Ready To Transfer";
    default: return "iSCSI PDU";
    }
}

const char *vw_iscsi_hdr_name(const struct vw_iscsi_hdr *h)
{
    return h->draft_opcode ? "SCSI Data-In (the draft's opcode 0x45)" : vw_iscsi_opcode_name(h->opcode);
}

static void put_start(uint8_t *b, uint8_t opcode, uint8_t flags, uint32_t data_len, uint32_t itt)
{
    memset(b, 0, VW_ISCSI_BHS_LEN);
    b[0] = opcode;
    b[1] = flags;
    b[5] = (uint8_t)(data_len >> 16);
    b[6] = (uint8_t)(data_len >> 8);
    b[7] = (uint8_t)data_len;
    vw_put_be32(b + 16, itt);
}

void vw_iscsi_put_scsi_cmd(uint8_t *b, bool read, uint32_t itt, uint32_t edtl, uint32_t cmdsn,
                           uint32_t exp_statsn, uint32_t lba)
{
    /* F, R or W, ATTR 1 (Simple); no immediate data */
    put_start(b, VW_ISCSI_SCSI_CMD, (uint8_t)(0x80 | (read ? 0x40 : 0x20) | 0x01), 0, itt);
    vw_put_be32(b + 20, edtl);
    vw_put_be32(b + 24, cmdsn);
    vw_put_be32(b + 28, exp_statsn);
    uint32_t blocks = (edtl + VW_ISCSI_BLOCK - 1) / VW_ISCSI_BLOCK;
    b[32] = read ? 0x28 : 0x2A; /* READ(10) / WRITE(10) */
    vw_put_be32(b + 34, lba);
    b[39] = (uint8_t)(blocks >> 8);
    b[40] = (uint8_t)blocks;
}

void vw_iscsi_put_data_in(uint8_t *b, uint32_t itt, uint32_t data_len, uint32_t buffer_offset,
                          uint32_t datasn, uint32_t exp_cmdsn)
{
    put_start(b, VW_ISCSI_DATA_IN, 0x80, data_len, itt); /* F; status comes in a SCSI Response */
    vw_put_be32(b + 20, VW_ISCSI_TTT_NONE);
    vw_put_be32(b + 28, exp_cmdsn);
    vw_put_be32(b + 32, exp_cmdsn);
    vw_put_be32(b + 36, datasn);
    vw_put_be32(b + 40, buffer_offset);
}

void vw_iscsi_put_scsi_rsp(uint8_t *b, uint32_t itt, uint8_t status, uint32_t statsn,
                           uint32_t exp_cmdsn, uint32_t exp_datasn)
{
    put_start(b, VW_ISCSI_SCSI_RSP, 0x80, 0, itt);
    b[2] = 0x00; /* Command Completed at Target */
    b[3] = status;
    vw_put_be32(b + 24, statsn);
    vw_put_be32(b + 28, exp_cmdsn);
    vw_put_be32(b + 32, exp_cmdsn);
    vw_put_be32(b + 36, exp_datasn);
}

void vw_iscsi_put_r2t(uint8_t *b, uint32_t itt, uint32_t ttt, uint32_t buffer_offset,
                      uint32_t desired_len, uint32_t statsn, uint32_t exp_cmdsn)
{
    put_start(b, VW_ISCSI_R2T, 0x80, 0, itt);
    vw_put_be32(b + 20, ttt);
    vw_put_be32(b + 24, statsn);
    vw_put_be32(b + 28, exp_cmdsn);
    vw_put_be32(b + 32, exp_cmdsn);
    vw_put_be32(b + 40, buffer_offset);
    vw_put_be32(b + 44, desired_len);
}

void vw_iscsi_put_data_out(uint8_t *b, uint32_t itt, uint32_t ttt, uint32_t data_len,
                           uint32_t buffer_offset, uint32_t datasn, uint32_t exp_statsn)
{
    put_start(b, VW_ISCSI_DATA_OUT, 0x80, data_len, itt);
    vw_put_be32(b + 20, ttt);
    vw_put_be32(b + 28, exp_statsn);
    vw_put_be32(b + 36, datasn);
    vw_put_be32(b + 40, buffer_offset);
}
