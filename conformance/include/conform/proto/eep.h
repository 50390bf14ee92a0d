/*
 * The PacketWay EEP protocol module (conformance/src/proto/eep.c): EEP
 * messages over UDP or Ethernet (pktway-eep-draft-03, decisions P1-P12,
 * P17-P18), one message per datagram, on the core's generic step runner
 * with datagram links (C47). Its vocabulary, directives, node contract
 * (C60, C70) and capture cases: docs/conformance-engine.md, "The EEP
 * module"; its cases: docs/conformance.md, "The EEP cases".
 */
#ifndef CONFORM_PROTO_EEP_H
#define CONFORM_PROTO_EEP_H

#include "conform/protocol.h"

extern const struct conform_protocol cf_proto_eep;
extern const struct cf_lint_module cf_lint_eep; /* its lint module (proto/eep_lint.c) */

/* The node under test's EEP address when --eep-address is not given. */
#define CF_EEP_NODE_DEFAULT 0x000010u

#endif
