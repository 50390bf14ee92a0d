/* VI/TCP (Internet VI): placeholder registration, replaced by the full dissector. */
#include <epan/packet.h>
#include "plugin_protos.h"

static int proto_vitcp = -1;

void proto_register_vitcp(void)
{
    proto_vitcp = proto_register_protocol("VI/TCP (Internet VI)", "VITCP", "vitcp");
}

void proto_reg_handoff_vitcp(void) {}
