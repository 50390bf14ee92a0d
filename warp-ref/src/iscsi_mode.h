/*
 * The iSCSI mapping of Appendix B (spec-decisions W8): warp-peer --iscsi as
 * a target, answering READ(10) with the data in RDMA Writes to RID = the
 * command's Initiator Task Tag followed by the Send of the Data-In header,
 * then the SCSI Response; answering WRITE(10) with an R2T whose Target
 * Transfer Tag is the connection's RID, checking the data the initiator's
 * RDMA Writes placed when its Data-Out header arrives. With --connect it is
 * the initiator of the same exchanges. Every iSCSI PDU goes in its own Send.
 */
#ifndef WARP_PEER_ISCSI_MODE_H
#define WARP_PEER_ISCSI_MODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "conn.h"

/* Byte i of task itt's data, on both sides. */
static inline uint8_t iscsi_pattern(uint32_t itt, uint64_t i)
{
    return (uint8_t)(itt * 13u + i * 7u + (i >> 9));
}

/* The target's state of one connection (its region is the conn's region 0). */
struct iscsi_target {
    uint32_t statsn, exp_cmdsn;
    size_t max_read;
    bool write_open;
    uint32_t write_itt, write_len;
    bool draft_data_in;        /* choice data-in=0x45: the draft's Data-In opcode (W19) */
};
extern const struct conn_handlers iscsi_target_handlers;

/* One initiator task: a READ or WRITE of len bytes. */
struct iscsi_task {
    bool write;
    uint32_t len;
};

struct iscsi_initiator {
    const struct iscsi_task *tasks;
    size_t ntasks, next;       /* next task to start */
    bool busy;                 /* a task is running */
    bool got_data;
    uint32_t itt, cmdsn, exp_statsn;
    unsigned long ok, failed;
};
extern const struct conn_handlers iscsi_initiator_handlers;
/* Start the next task if none runs: its SCSI Command goes to c's queue, its
 * RID (= ITT) becomes region 0's. Returns 0, -1 without memory. */
int iscsi_initiator_next(struct conn *c);

#endif
