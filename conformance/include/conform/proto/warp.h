/*
 * The WARP protocol module (conformance/src/proto/warp.c): Send and RDMA
 * (Write) chunks over TCP (warp-draft Appendix A, decisions W1-W4), on the
 * core's generic step runner. Its types, fields and send arguments:
 * docs/conformance-engine.md, "The WARP module".
 */
#ifndef CONFORM_PROTO_WARP_H
#define CONFORM_PROTO_WARP_H

#include "conform/protocol.h"

extern const struct conform_protocol cf_proto_warp;
extern const struct cf_lint_module cf_lint_warp; /* its lint module (proto/warp_lint.c) */

#endif
