/* PacketWay End-to-End Protocol: placeholder registration, replaced by the full dissector. */
#include <epan/packet.h>
#include "plugin_protos.h"

static int proto_pktway = -1;

void proto_register_pktway(void)
{
    proto_pktway = proto_register_protocol("PacketWay End-to-End Protocol", "PKTWAY", "pktway");
}

void proto_reg_handoff_pktway(void) {}
