/*
 * The PacketWay EEP protocol module (conformance/src/proto/eep.c): EEP
 * messages over UDP (pktway-eep-draft-03, decisions P1-P12, P17-P18), one
 * message per datagram, on the core's generic step runner with datagram
 * links (C47). Types RRP ERR IPv4 IPv6 Other (by PT, P8); fields v p dt te
 * pt e pl dl h rz sa ei payload routes l2rh symbols oh ohm ot len dtkind
 * digest; a send also takes route=l2rh:HEX|l2rh:@LINK|sym:TYPE[:HEX],
 * oh=m|oTYPE:LEN (TYPE U: the node's unknown one), padfill=N, cut=N,
 * extra=N, and dt=node / sa=node name the node under test (--eep-address).
 * The node contract: --eep-l2rh LINK=HEX, --eep-unknown-oh T, and the hooks
 * echo, hey-you-answer, l2rh-route, unknown-oh, error-lsbit (C60, C70).
 * Directives router, chain, udp-only; capture cases NAME.meta +
 * NAME.pcapng. docs/conformance.md, "The EEP cases".
 */
#ifndef CONFORM_PROTO_EEP_H
#define CONFORM_PROTO_EEP_H

#include "conform/protocol.h"

extern const struct conform_protocol cf_proto_eep;
extern const struct cf_lint_module cf_lint_eep; /* its lint module (proto/eep_lint.c) */

/* The node under test's EEP address when --eep-address is not given. */
#define CF_EEP_NODE_DEFAULT 0x000010u

#endif
