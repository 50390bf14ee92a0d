/* Registration functions of the protocols in this plugin. */
#ifndef VITCP_PLUGIN_PROTOS_H
#define VITCP_PLUGIN_PROTOS_H

void proto_register_vitcp(void);
void proto_reg_handoff_vitcp(void);
void proto_register_ift(void);
void proto_reg_handoff_ift(void);
void proto_register_pktway(void);
void proto_reg_handoff_pktway(void);
void proto_register_warp(void);
void proto_reg_handoff_warp(void);

#endif
