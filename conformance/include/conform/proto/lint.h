/* The lint modules (conform/protocol.h "lint"), one beside each protocol's
 * conformance module, registered in cf_lint_modules[] (proto/registry.c). */
#ifndef CONFORM_PROTO_LINT_H
#define CONFORM_PROTO_LINT_H

#include "conform/protocol.h"

extern const struct cf_lint_module cf_lint_vitcp; /* proto/vitcp/lint.c */
extern const struct cf_lint_module cf_lint_ift;   /* proto/ift_lint.c */
extern const struct cf_lint_module cf_lint_warp;  /* proto/warp_lint.c */
extern const struct cf_lint_module cf_lint_eep;   /* proto/eep_lint.c */

#endif
