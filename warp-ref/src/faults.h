/*
 * Deliberate faults of warp-peer, for conformance testing: each breaks one
 * WARP rule in what this peer sends and is named by that rule's requirement
 * ID (wire/catalog/warp.def). A peer with a fault set is not conforming.
 * The place- and keep- faults break the receiving side instead: the rule a
 * received chunk breaks is not acted on (tested by the hostile WARP cases
 * of vitcp-conform, which expect the connection to close).
 */
#ifndef WARP_PEER_FAULTS_H
#define WARP_PEER_FAULTS_H

#include "vitcp/fault_table.h"

#define WARP_FAULTS(X) \
    X(BAD_ADLER, "bad-adler", "WARP-A-ADLER-VALID", "every chunk's Adler-32 has every bit inverted") \
    X(SHORT_CHUNK_LEN, "short-chunk-len", "WARP-A-CHUNK-LEN", "Chunk length under the type's header plus Adler-32") \
    X(UNKNOWN_TYPE, "unknown-type", "WARP-A-TYPE-KNOWN", "a chunk of type 2 before every ULP PDU") \
    X(RESERVED_BITS, "reserved-bits", "WARP-A-RSVD-ZERO", "the 9 reserved bits set in every chunk") \
    X(C_WITHOUT_L, "c-without-l", "WARP-SUMMARY-C-ONLY-WITH-L", "the Completion bit on every chunk, Last or not") \
    X(TX_ERROR, "tx-error", "WARP-SUMMARY-E-TXERR", "the Transmit Error bit on every ULP PDU's last chunk") \
    X(NO_LAST, "no-last", "WARP-SUMMARY-L-LAST", "Sends never carry the Last bit") \
    X(SKIP_SSN, "skip-ssn", "WARP-A.1.2-SSN-NEXT", "the Send Sequence Number advances by two") \
    X(SEND_OFFSET, "send-offset", "WARP-A.1.2-SEND-OFFSET", "Send fragments after the first carry offset + 1") \
    X(RDMA_GAP, "rdma-gap", "WARP-A.1.1-RDMA-CONTIGUOUS", "RDMA fragments after the first carry offset + 1") \
    X(RDMA_RID_CHANGE, "rdma-rid-change", "WARP-A.1.1-RDMA-CONTIGUOUS", "RDMA fragments after the first carry RID + 1 (the RID changes mid-PDU)") \
    X(RDMA_NO_LAST, "rdma-no-last", "WARP-SUMMARY-L-LAST", "RDMA Writes never carry the Last bit") \
    X(CLOSE_MID_PDU, "close-mid-pdu", "WARP-SUMMARY-L-LAST", "the connection closes after the first chunk of a ULP PDU of two or more chunks") \
    X(RETRANSMIT, "retransmit", "WARP-A.1.2-SSN-NEXT", "every Send goes out twice with one SSN (SSN-NEXT, then NO-WARP-RETRANSMIT, W21)") \
    X(RID_UNKNOWN, "rid-unknown", "WARP-INTRO-RDMA-RID-ALLOCATED", "RDMA Writes to the RID after the announced one") \
    X(OUT_OF_REGION, "out-of-region", "WARP-INTRO-REGION-BOUNDS", "RDMA Writes one region length past the announced offset") \
    X(ISCSI_DATA_IN_SEND, "iscsi-data-in-send", "WARP-B.4-DATA-BY-RDMA", "--iscsi: Data-In carries its data in the Send, no RDMA Write") \
    X(ISCSI_RDMA_COMPLETION, "iscsi-rdma-completion", "WARP-B.4-RDMA-NO-COMPLETION", "--iscsi: Completion bit on the Data-In's RDMA Writes") \
    X(ISCSI_OFFSET_ORDER, "iscsi-offset-order", "WARP-B.4-RDMA-OFFSET-NEXT", "--iscsi: Data-In data in three RDMA PDUs, the last part before the middle") \
    X(ISCSI_FIRST_OFFSET, "iscsi-first-offset", "WARP-B.4-RDMA-FIRST-OFFSET", "--iscsi: Data-In's Buffer Offset one block past its first RDMA Write") \
    X(ISCSI_RID_NOT_ITT, "iscsi-rid-not-itt", "WARP-B.4.2-RID-IS-ITT", "--iscsi: Data-In header names another task than its RDMA Writes' RID") \
    X(ISCSI_HEADER_NO_C, "iscsi-header-no-c", "WARP-B.4-NOTIFY-BY-HEADER", "--iscsi: the Data-In header's Send without the Completion bit") \
    X(ISCSI_STATUS_BY_RDMA, "iscsi-status-by-rdma", "WARP-B.3-ISCSI-SEND", "--iscsi: the SCSI Response goes as an RDMA Write") \
    X(ISCSI_WRITE_TTT, "iscsi-write-ttt", "WARP-B.4.1-RID-IS-TTT", "--iscsi --connect: Data-Out header names another Target Transfer Tag than its RDMA Writes' RID") \
    X(PLACE_BAD_ADLER, "place-bad-adler", "WARP-INTRO-NO-PLACE-INVALID", "receiving: a chunk with a bad Adler-32 is placed and delivered") \
    X(KEEP_UNFRAMED, "keep-unframed", "WARP-A-CHUNK-LEN", "receiving: a stream that cannot be framed is not closed") \
    X(KEEP_C_WITHOUT_L, "keep-c-without-l", "WARP-SUMMARY-C-ONLY-WITH-L", "receiving: a chunk with C and without L is taken") \
    X(KEEP_SEND_OFFSET, "keep-send-offset", "WARP-A.1.2-SEND-OFFSET", "receiving: a Send chunk at the wrong offset is taken") \
    X(KEEP_NO_LAST, "keep-no-last", "WARP-SUMMARY-L-LAST", "receiving: a Send that starts before the previous one's Last chunk is taken") \
    X(KEEP_RDMA_GAP, "keep-rdma-gap", "WARP-A.1.1-RDMA-CONTIGUOUS", "receiving: an RDMA Write chunk that leaves a gap is placed") \
    X(KEEP_RID_UNKNOWN, "keep-rid-unknown", "WARP-INTRO-RDMA-RID-ALLOCATED", "receiving: an RDMA Write to an unknown RID is dropped, the connection kept") \
    X(KEEP_OUT_OF_REGION, "keep-out-of-region", "WARP-INTRO-REGION-BOUNDS", "receiving: an RDMA Write outside the region is dropped, the connection kept") \
    X(KEEP_ISCSI_IMMEDIATE, "keep-iscsi-immediate", "WARP-B.3-IMMEDIATE-DATA-SEND", "--iscsi, receiving: an unsolicited Data-Out after RDMA Writes is taken") \
    X(KEEP_ISCSI_TTT, "keep-iscsi-ttt", "WARP-B.4.1-RID-IS-TTT", "--iscsi, receiving: a Data-Out whose TTT is not its RDMA Writes' RID is taken")

enum warp_fault {
    FAULT_NONE = 0,
#define WARP_FAULT_ENUM(sym, name, id, what) FAULT_##sym,
    WARP_FAULTS(WARP_FAULT_ENUM)
#undef WARP_FAULT_ENUM
    FAULT_COUNT
};

/* By name ("bad-adler") or requirement ID (FAULT_NONE if unknown), the accessors
 * and the --list-faults printer, over the rows above (vitcp/fault_table.h). */
FAULT_TABLE_DECLARE(warp, enum warp_fault);

#endif
