/* Plugin entry points. Wireshark 4.0 has no wsutil/plugins.h, so the symbols
 * it looks for are declared here. */
#include <epan/packet.h>
#include <epan/proto.h>
#include <ws_symbol_export.h>
#include <ws_version.h>
#include "plugin_protos.h"
#include "vitcp_dissector.h"

/* The project's version (CMake PROJECT_VERSION), set by dissector/CMakeLists.txt. */
#ifndef VITCP_PLUGIN_VERSION
#error "VITCP_PLUGIN_VERSION must be defined by the build"
#endif

WS_DLL_PUBLIC_DEF const gchar plugin_version[] = VITCP_PLUGIN_VERSION;
WS_DLL_PUBLIC_DEF const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
WS_DLL_PUBLIC_DEF const int plugin_want_minor = WIRESHARK_VERSION_MINOR;

WS_DLL_PUBLIC void plugin_register(void);

static void register_protocols(void)
{
    proto_register_vitcp();
    proto_register_ift();
    proto_register_pktway();
    proto_register_warp();
    plugin_register_stats();
}

static void register_handoffs(void)
{
    proto_reg_handoff_vitcp();
    proto_reg_handoff_ift();
    proto_reg_handoff_pktway();
    proto_reg_handoff_warp();
}

void plugin_register(void)
{
    static proto_plugin plugin;
    plugin.register_protoinfo = register_protocols;
    plugin.register_handoff = register_handoffs;
    proto_register_plugin(&plugin);
}
