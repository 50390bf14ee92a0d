/* WARP: placeholder registration, replaced by the full dissector. */
#include <epan/packet.h>
#include "plugin_protos.h"

static int proto_warp = -1;

void proto_register_warp(void)
{
    proto_warp = proto_register_protocol("WARP", "WARP", "warp");
}

void proto_reg_handoff_warp(void) {}
