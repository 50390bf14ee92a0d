/*
 * Deliberate faults of ift-peer, for conformance testing: each breaks one
 * IFT rule on the wire and is named by that rule's requirement ID
 * (wire/catalog/ift.def). "sends" faults change what this peer sends;
 * "reacts" faults change how it answers what a peer sent (they show only
 * when the peer provokes them). A peer with a fault set is not conforming.
 */
#ifndef IFT_PEER_FAULTS_H
#define IFT_PEER_FAULTS_H

#include "vitcp/fault_table.h"

#define IFT_FAULTS(X) \
    X(BAD_MAGIC, "bad-magic", "IFT-4.1-MAGIC", "the indication's magic is 0x52444451 (its CRC right): an indication with a wrong magic number") \
    X(VERSION_0, "version-0", "IFT-4.2-VERSION", "the indication carries Version 0") \
    X(BC_VERSION, "bc-version-0", "IFT-4.2-BC-VERSION-SET", "a Version 1 indication with BC Version 0") \
    X(BAD_IND_CRC, "bad-ind-crc", "IFT-4.2-IND-CRC", "the indication's CRC has every bit inverted") \
    X(WRONG_PHASE, "wrong-phase", "IFT-4.2-PHASE", "A sends phase 1, B answers with phase 0") \
    X(RESERVED_BITS, "reserved-bits", "IFT-4.2-RESERVED-ZERO", "reserved flag bits and reserved bytes of the indication set") \
    X(FIXED_VTAG, "fixed-vtag", "IFT-4.2-VTAG-RANDOM", "the VTag is 0x5644 at every connection, whatever --vtag says") \
    X(WRONG_VTAG, "wrong-vtag", "IFT-4.2-VTAG-MATCH", "frames carry the peer's VTag plus one") \
    X(BAD_HDR_CRC, "bad-hdr-crc", "IFT-5.1-HDR-CRC", "every header CRC has every bit inverted (needs HC)") \
    X(BAD_PAYLOAD_CRC, "bad-payload-crc", "IFT-5.1-PAYLOAD-CRC", "every payload CRC has every bit inverted (needs PC)") \
    X(OMIT_CRC, "omit-crc", "IFT-5.1-CRC-AS-NEGOTIATED", "frames leave out the header CRC (or, without HC, the payload CRC) announced") \
    X(RDMAP_VERSION, "rdmap-version", "IFT-4.2-R-MODE", "RDMAP version 0 in every DDP header although both ends set R") \
    X(RDMA_HDR_IN_HDR, "rdma-hdr-in-header", "IFT-5.1-RDMA-HDR-IN-PAYLOAD", "--connect: Read Requests count their RDMAP header in header_size (46)") \
    X(EARLY_FRAMES, "early-frames", "IFT-4.2-FRAMES-AFTER-PHASE1", "--connect: frames right after phase 0, before phase 1 arrived (VTag 0)") \
    X(ANSWER_INCOMPATIBLE, "answer-incompatible", "IFT-4.2-BC-VERSION-REJECT", "reacts: B answers an indication with BC Version above 1 instead of closing") \
    X(IGNORE_R_DISAGREE, "ignore-r-disagree", "IFT-4.2-R-AGREE", "reacts: the connection goes on when the R bits disagree") \
    X(PLACE_BAD_FRAMES, "place-bad-frames", "IFT-5.1-NO-DATA-AFTER-ERROR", "reacts: frames with a wrong VTag or a bad CRC are placed, echoed or answered") \
    X(ANSWER_VERSION_0, "answer-version-0", "IFT-4.2-VERSION", "reacts: B answers a Version 0 indication instead of closing") \
    X(ANSWER_BAD_IND_CRC, "answer-bad-ind-crc", "IFT-4.2-IND-CRC", "reacts: B does not check the indication's CRC (a bad one, or CRC-32, is answered)") \
    X(ANSWER_PHASE_1, "answer-phase-1", "IFT-4.2-PHASE", "reacts: B answers a phase 1 indication where phase 0 is due")

enum ift_fault {
    FAULT_NONE = 0,
#define IFT_FAULT_ENUM(sym, name, id, what) FAULT_##sym,
    IFT_FAULTS(IFT_FAULT_ENUM)
#undef IFT_FAULT_ENUM
    FAULT_COUNT
};

/* By name ("bad-magic") or requirement ID (FAULT_NONE if unknown), the accessors
 * and the --list-faults printer, over the rows above (vitcp/fault_table.h). */
FAULT_TABLE_DECLARE(ift, enum ift_fault);

#endif
