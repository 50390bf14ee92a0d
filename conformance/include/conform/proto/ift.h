/*
 * The IFT protocol module (conformance/src/proto/ift.c): the adaption
 * indication and frames of draft-williams-iwarp-ift-01 (decisions I1-I18)
 * carrying RFC 5041 DDP segments and a minimal RDMAP (RFC 5040), on the
 * core's generic step runner. Its types, fields and send arguments:
 * docs/conformance-engine.md, "The IFT module".
 */
#ifndef CONFORM_PROTO_IFT_H
#define CONFORM_PROTO_IFT_H

#include "conform/protocol.h"

extern const struct conform_protocol cf_proto_ift;
extern const struct cf_lint_module cf_lint_ift; /* its lint module (proto/ift_lint.c) */

#endif
