/*
 * Deliberate faults of pktway-node, for conformance testing: each breaks one
 * EEP rule on the wire and is named by that rule's requirement ID
 * (wire/catalog/eep.def). A node with a fault set is not conforming. The
 * "accept-"/"drop-" faults break the receiving side (what the node
 * delivers, drops or answers); the others change what it sends or forwards.
 */
#ifndef PKTWAY_NODE_FAULTS_H
#define PKTWAY_NODE_FAULTS_H

#include "vitcp/fault_table.h"

#define PN_FAULTS(X) \
    X(EI_NONZERO, "ei-nonzero", "EEP-10-EI-SOURCE-ZERO", "messages this node originates carry EI 1") \
    X(RZ_NONZERO, "rz-nonzero", "EEP-6J-RZ-ZERO", "messages this node originates carry RZ 0x7F") \
    X(PL_NO_DATA, "pl-no-data", "EEP-6G-PL-ZERO-NO-DATA", "messages without data this node originates carry PL 7") \
    X(ODD_LENGTH, "odd-length", "EEP-1B-8B-WORDS", "the last 4 bytes of every message this node sends are left off") \
    X(OT_WITHOUT_OH, "ot-without-oh", "EEP-9-OT-NEEDS-OH", "two trailer words before the TAIL of every message this node originates, without OH fields") \
    X(SA_LOGICAL, "sa-logical", "EEP-6K-SA-PHYSICAL", "messages this node originates carry a logical SA (0xE00000 | own address)") \
    X(NO_SHIFT, "no-shift", "EEP-10-EI-SHIFT", "router: the TAIL is forwarded without the shift") \
    X(NO_ERROR_BIT, "no-error-bit", "EEP-10-EI-ERROR-LSBIT", "router: the LSbit is not set on a detected error") \
    X(MODIFY_DB, "modify-db", "EEP-8-DB-UNMODIFIED", "router: the first data byte of every forwarded message is inverted") \
    X(MODIFY_HEADER, "modify-header", "EEP-4B-ONLY-TAIL-MODIFIED", "router: the priority of every forwarded message is raised by one") \
    X(KEEP_L2RH, "keep-l2rh", "EEP-5-HR-CONSUMES-L2RH", "router: the leading L2RH is forwarded, not consumed") \
    X(KEEP_SYMBOL, "keep-symbol", "EEP-5-SYMBOL-CONSUMED", "router: leading symbols are forwarded, not consumed") \
    X(ROUTE_BY_DT, "route-by-dt", "EEP-1C-LEADING-L2RH", "router: a leading L2RH is consumed but the message goes where its DT says") \
    X(FORWARD_LOCAL, "forward-local", "EEP-6C-LOCAL-ONLY", "router: Hey-You!/Broadcast are also forwarded out of every other interface") \
    X(IGNORE_MTU, "ignore-mtu", "EEP-1B-PATH-MTU", "router: a message over the out interface's MTU is forwarded anyway") \
    X(SEGMENT, "segment", "EEP-1B-NO-SAR", "router: a message over the MTU is split into two messages") \
    X(NO_FORWARD, "no-forward", "EEP-1A-HR-FORWARDS", "router: messages for a known destination are dropped, not forwarded") \
    X(NO_ERR, "no-err", "EEP-6E-ERR-TO-SA", "no ERR is ever sent") \
    X(WRONG_TE, "wrong-te", "EEP-6E-ERR-TE", "every ERR carries TE 0x00FF, whatever its cause") \
    X(ACCEPT_VERSION, "accept-version", "EEP-6A-VERSION", "receiving: a message with V not 0 is delivered") \
    X(ACCEPT_RESERVED, "accept-reserved", "EEP-6C-DT-KIND", "receiving: a message to a reserved (110x) destination type is delivered") \
    X(ACCEPT_LOGICAL, "accept-logical", "EEP-6C-LOGICAL", "receiving: a message to any logical address is delivered") \
    X(ACCEPT_MANDATORY, "accept-mandatory", "EEP-7-MANDATORY-UNKNOWN", "receiving: a message with an unknown mandatory OH is delivered, no ERR") \
    X(DROP_OPTIONAL, "drop-optional", "EEP-7-OPTIONAL-MAY-DROP", "receiving: a message with an unknown optional OH is dropped") \
    X(DROP_RZ, "drop-rz", "EEP-6J-RZ-IGNORED", "receiving: a message with RZ not 0 is dropped") \
    X(ERR_TO_SA_ZERO, "err-to-sa-zero", "EEP-6C-DT-UNDEFINED", "an ERR also goes to a message with SA 0 (back where it came from), addressed to the undefined address 0") \
    X(DROP_MIXED, "drop-mixed", "EEP-5B-SYMBOLS-MIXED", "receiving: a message whose records mix symbols and L2RHs is dropped") \
    X(ANSWER_CUT, "answer-cut", "EEP-4A-TRUNCATED", "receiving: a Hey-You! cut short in its data block is answered with the data there is")

enum pn_fault {
    PN_FAULT_NONE = 0,
#define PN_FAULT_ENUM(sym, name, id, what) PN_FAULT_##sym,
    PN_FAULTS(PN_FAULT_ENUM)
#undef PN_FAULT_ENUM
    PN_FAULT_COUNT
};

/* By name ("no-shift") or requirement ID (PN_FAULT_NONE if unknown), the
 * accessors and the --list-faults printer, over the rows above
 * (vitcp/fault_table.h). */
FAULT_TABLE_DECLARE(pn, enum pn_fault);

#endif
