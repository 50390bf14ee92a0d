/*
 * The Info column around a hand-off, shared by the plugin's dissectors: our
 * summary stays, the next dissector writes after " | ". The plugin's Info
 * style is: the PDU type, Key=Value pairs, [FLAGS] and [findings]; several
 * PDUs of one frame separated by " | " (docs/dissector-vitcp.md).
 */
#ifndef VITCP_INFO_COLUMN_H
#define VITCP_INFO_COLUMN_H

#include <epan/packet.h>

/* At the start of each PDU of protocol proto: the frame's first PDU clears
 * the Info column (TCP's text stays on frames that only carry a part). */
void info_pdu_begin(packet_info *pinfo, int proto);

/* Before calling the next dissector: " | " and a fence after our text. */
void info_handoff_begin(packet_info *pinfo);
/* After it: if it wrote nothing, the separator is taken back. */
void info_handoff_end(packet_info *pinfo);

#endif
