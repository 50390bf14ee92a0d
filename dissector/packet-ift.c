/* iWARP Framing for TCP: placeholder registration, replaced by the full dissector. */
#include <epan/packet.h>
#include "plugin_protos.h"

static int proto_ift = -1;

void proto_register_ift(void)
{
    proto_ift = proto_register_protocol("iWARP Framing for TCP", "IFT", "ift");
}

void proto_reg_handoff_ift(void) {}
