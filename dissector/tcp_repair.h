/*
 * Did TCP repair the stream here? Wireshark 4.0 hands a subdissector the
 * bytes around a TCP repair (a retransmission, an out-of-order segment, a
 * segment missing before this one) in ways that can lose a protocol's
 * framing even with tcp.reassemble_out_of_order, and a protocol claimed by
 * its heuristic part-way through a connection gets, on a second pass, bytes
 * it never saw on the first. Neither is the protocol's fault: TCP's own
 * analysis (or the late claim) is reported, not a protocol rule (issue 33,
 * V38).
 */
#ifndef VITCP_TCP_REPAIR_H
#define VITCP_TCP_REPAIR_H

#include <epan/packet.h>

/* TCP's analysis flags this frame as a retransmission (any kind), an
 * out-of-order segment, or one after a segment it did not see. First pass. */
gboolean tcp_repair_in_frame(packet_info *pinfo);

#endif
