/*
 * Deliberate protocol faults of the reference provider, for conformance
 * testing: each breaks exactly one VI/TCP rule on the wire and is named by
 * that rule's requirement ID (wire/catalog/vitcp.def). Test-only: a NIC
 * with a fault set is not a conforming implementation.
 */
#ifndef VIPL_FAULT_H
#define VIPL_FAULT_H

#include "vipl.h"

#define VIPL_FAULTS(X) \
    X(BAD_CRC, "bad-crc", "VITCP-3.6-CRC-VALID", "data segments carry a wrong CRC") \
    X(OMIT_CRC, "omit-crc", "VITCP-3.6-CRC-ONLY-IF-NEGOTIATED", "no CRC trailer after negotiating it") \
    X(ACCEPT_CRC_UNREQUESTED, "accept-crc-unrequested", "VITCP-3.6-ACCEPT-CRC-ONLY-IF-REQUEST", "ConnectAccept offers CRC when the request did not") \
    X(CE_TRAILER_NO_OPTION, "ce-trailer-no-option", "VITCP-3.5-CE-TRAILER-IFF-OPT", "CE segment with a trailer but no CRC option") \
    X(FIRST_OFFSET_NONZERO, "first-offset-nonzero", "VITCP-3.2-DATA-OFFSET-FIRST", "first segment of a message has Data Offset 1") \
    X(WRONG_DATA_OFFSET, "wrong-data-offset", "VITCP-3.2-DATA-OFFSET-NEXT", "later segments carry Data Offset + 1") \
    X(IGNORE_MTU, "ignore-mtu", "VITCP-3.3-MTU-RESPECTED", "sends a message one byte larger than the agreed MTU") \
    X(ACCEPT_LARGER_MTU, "accept-larger-mtu", "VITCP-3.3-MTU-LESSER", "ConnectAccept carries an MTU above the request's") \
    X(ACCEPT_WRONG_DISC, "accept-wrong-disc", "VITCP-3.3-ACCEPT-DISC-COPY", "ConnectAccept does not copy the discriminators") \
    X(NO_READ_RESPONSE, "no-read-response", "VITCP-2.2.2.2.6-READ-ANSWERED", "never answers an RDMA Read") \
    X(EXCEED_READ_WINDOW, "exceed-read-window", "VITCP-2.2.2.2.6-READ-WINDOW", "issues more RDMA Reads than the peer's window") \
    X(DATA_AFTER_REJECT, "data-after-reject", "VITCP-4-CLOSE-AFTER-REFUSE", "sends a NOP after ConnectReject/NoMatch and keeps TCP open") \
    X(SILENT_NOMATCH, "silent-nomatch", "VITCP-4.3-NOMATCH", "closes without ConnectNoMatch on an unknown discriminator") \
    X(NO_EOM, "no-eom", "VITCP-3.2-EOM-LAST", "last segment of a message lacks EOM") \
    X(SKIP_MSG_NUM, "skip-msg-num", "VITCP-3.2-MSG-NUM-SEQ", "message numbers advance by two") \
    X(NOP_MSG_NUM, "nop-msg-num", "VITCP-3.2-NOP-MSG-NUM", "NOPs carry a wrong message number") \
    X(IMM_WITHOUT_IDV, "imm-without-idv", "VITCP-3.2-IMM-ZERO-NO-IDV", "non-zero Immediate Data with IDV clear") \
    X(IDV_FIRST_ONLY, "idv-first-only", "VITCP-3.2-IDV-EACH-SEGMENT", "immediate data (IDV) only on the first segment of a message") \
    X(IMM_ON_NA_TYPE, "imm-on-na-type", "VITCP-3.2-IMM-ZERO-NA", "non-zero Immediate Data on NOP and read segments") \
    X(BAD_VERSION, "bad-version", "VITCP-3.2-VERSION", "every segment carries Version 2") \
    X(IGNORE_DFC, "ignore-dfc", "VITCP-3.2-DFC-DELAY", "sets DFC but sends without receive credits") \
    X(ACK_AHEAD, "ack-ahead", "VITCP-3.2-ACK-VALID-RR", "Reliable Reception ACKs a message not yet received") \
    X(BAD_CRC_ACCEPTED, "bad-crc-accepted", "VITCP-3.6-BAD-CRC-REACTION", "treats a segment with a bad CRC as good") \
    X(NO_CLOSE_ON_DISCONNECT, "no-close-on-disconnect", "VITCP-2.2.2.2.2-CLOSE-TCP-ON-VI-CLOSE", "VipDisconnect leaves the TCP connection open") \
    X(URGENT_BSD, "urgent-bsd", "VITCP-3.7-URGENT-RFC1122", "designates each segment's first byte as urgent the BSD way (pointer one past it)") \
    X(URGENT_MID, "urgent-mid", "VITCP-3.7-URGENT-FIRST-BYTE", "designates a byte inside each segment as urgent") \
    X(URGENT_UNOFFERED, "urgent-unoffered", "VITCP-3.7-URGENT-ONLY-IF-OFFERED", "designates urgent data although the peer never sent the Urgent Marker option") \
    X(KEEP_MALFORMED_OPEN, "keep-malformed-open", "VITCP-4-MALFORMED-CLOSE", "ignores a malformed or unexpected first segment and keeps TCP open") \
    X(NO_CREDIT_NOP, "no-credit-nop", "VITCP-3.2-NOP-SUFFICIENT", "when idle, never sends a NOP to tell a flow-controlled peer of reposted receives")

enum vipl_fault {
    VIPL_FAULT_NONE = 0,
#define VIPL_FAULT_ENUM(sym, name, id, what) VIPL_FAULT_##sym,
    VIPL_FAULTS(VIPL_FAULT_ENUM)
#undef VIPL_FAULT_ENUM
    VIPL_FAULT_COUNT
};

/* Name ("bad-crc") or requirement ID ("VITCP-3.6-CRC-VALID") to fault;
 * VIPL_FAULT_NONE if unknown. */
enum vipl_fault ViplFaultByName(const char *name);
const char *ViplFaultName(enum vipl_fault f);
const char *ViplFaultReqId(enum vipl_fault f);
const char *ViplFaultWhat(enum vipl_fault f);
/* Make a NIC misbehave (VIPL_FAULT_NONE restores conforming behaviour). */
VIP_RETURN ViplNicSetFault(VIP_NIC_HANDLE NicHandle, enum vipl_fault f);

#endif
