/*
 * The few iSCSI PDUs the WARP mapping of Appendix B carries (RFC 3720
 * numbering, spec-decisions W8 in docs/decisions.md): 48-byte Basic Header
 * Segments written by hand, field by field, so that Wireshark's iSCSI
 * dissector decodes them, and the fields the WARP mapping checks read back.
 * No AHS and no digests are written.
 */
#ifndef VITCP_ISCSI_BHS_H
#define VITCP_ISCSI_BHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VW_ISCSI_BHS_LEN 48
#define VW_ISCSI_TTT_NONE 0xFFFFFFFFu /* a Data-Out not answering an R2T */
#define VW_ISCSI_BLOCK 512u           /* block size the CDBs count in */

enum vw_iscsi_opcode {
    VW_ISCSI_SCSI_CMD = 0x01,
    VW_ISCSI_DATA_OUT = 0x05, /* the draft's "initiator opcode 0x05" */
    VW_ISCSI_SCSI_RSP = 0x21,
    VW_ISCSI_DATA_IN = 0x25,  /* the draft's "0x45" (iSCSI drafts of 2001) */
    VW_ISCSI_R2T = 0x31,
};
/* Byte 0 of a SCSI Data-In as the WARP draft numbers it (lines 490, 497-498:
 * "target opcode 0x45"; W19): read as VW_ISCSI_DATA_IN with draft_opcode set.
 * RFC 3720 has no PDU with this byte (0x45 would be a Data-Out with the
 * initiator's I bit, which a Data-Out never carries). */
#define VW_ISCSI_DRAFT_DATA_IN 0x45

/* The fields a reader of the mapping needs; byte offsets of RFC 3720 10.2. */
struct vw_iscsi_hdr {
    uint8_t opcode;      /* low 6 bits of byte 0; VW_ISCSI_DATA_IN for the draft's 0x45 too */
    bool draft_opcode;   /* byte 0 was the draft's Data-In number 0x45 (W19), not RFC 3720's 0x25 */
    uint8_t flags;       /* byte 1: F 0x80, R 0x40 / W 0x20 on a command */
    uint8_t status;      /* byte 3 of a SCSI Response */
    unsigned ahs_len;    /* TotalAHSLength in bytes */
    uint32_t data_len;   /* DataSegmentLength */
    uint32_t itt;        /* Initiator Task Tag */
    uint32_t word20;     /* command: Expected Data Transfer Length; Data, R2T: Target Transfer Tag */
    uint32_t buffer_offset; /* Data-In, Data-Out, R2T (bytes 40-43) */
    uint32_t desired_len;   /* R2T (bytes 44-47) */
};

/* Reads the first 48 bytes of buf (len must be at least 48); false if shorter. */
bool vw_iscsi_hdr_read(const uint8_t *buf, size_t len, struct vw_iscsi_hdr *h);
/* Bytes of the whole PDU h heads: header, AHS and the data padded to 4. */
uint64_t vw_iscsi_pdu_len(const struct vw_iscsi_hdr *h);
/* W16: does a whole ULP PDU of len bytes look like one iSCSI PDU? Byte 0's
 * reserved bit clear, an opcode RFC 3720 10.2.1.2 defines (a target's with
 * the I bit clear), and len exactly the header, the AHS and the data segment
 * padded to 4 (no digests), or, for a Data-In or Data-Out whose data the
 * WARP mapping places by RDMA Write (B.4), the header and the AHS alone. A
 * conservative test for the dissector's automatic hand-off to iSCSI. */
bool vw_iscsi_looks_like_pdu(const uint8_t *buf, size_t len);
/* "SCSI Command", "SCSI Data-In", ... ("iSCSI PDU" for others). */
const char *vw_iscsi_opcode_name(unsigned opcode);
/* The same for a header read back, naming the reading of its opcode:
 * "SCSI Data-In (the draft's opcode 0x45)" for the draft's number. */
const char *vw_iscsi_hdr_name(const struct vw_iscsi_hdr *h);

/* Writers of one 48-byte header each (LUN 0, Simple task attribute). */
void vw_iscsi_put_scsi_cmd(uint8_t *bhs, bool read, uint32_t itt, uint32_t edtl, uint32_t cmdsn,
                           uint32_t exp_statsn, uint32_t lba);
void vw_iscsi_put_data_in(uint8_t *bhs, uint32_t itt, uint32_t data_len, uint32_t buffer_offset,
                          uint32_t datasn, uint32_t exp_cmdsn);
void vw_iscsi_put_scsi_rsp(uint8_t *bhs, uint32_t itt, uint8_t status, uint32_t statsn,
                           uint32_t exp_cmdsn, uint32_t exp_datasn);
void vw_iscsi_put_r2t(uint8_t *bhs, uint32_t itt, uint32_t ttt, uint32_t buffer_offset,
                      uint32_t desired_len, uint32_t statsn, uint32_t exp_cmdsn);
void vw_iscsi_put_data_out(uint8_t *bhs, uint32_t itt, uint32_t ttt, uint32_t data_len,
                           uint32_t buffer_offset, uint32_t datasn, uint32_t exp_statsn);

#endif
