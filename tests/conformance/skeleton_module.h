/* The skeleton protocol module (skeleton_module.c): SKEL's conformance and
 * lint modules, registered by test_conform_skeleton only. */
#ifndef SKELETON_MODULE_H
#define SKELETON_MODULE_H

#include "conform/protocol.h"

extern const struct conform_protocol cf_proto_skeleton;
extern const struct cf_lint_module cf_lint_skeleton;

#endif
