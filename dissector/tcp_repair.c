/* Did TCP repair the stream here? (tcp_repair.h) */
#include "tcp_repair.h"

#include <epan/dissectors/packet-tcp.h>

/* Wireshark's TCP_A_* analysis flags (packet-tcp.c; not in its header). */
#define TCP_A_RETRANSMISSION 0x0001
#define TCP_A_LOST_PACKET 0x0002
#define TCP_A_OUT_OF_ORDER 0x0200
#define TCP_A_FAST_RETRANSMISSION 0x0400
#define TCP_A_SPURIOUS_RETRANSMISSION 0x4000
#define TCP_REPAIR_FLAGS                                                                                  \
    (TCP_A_RETRANSMISSION | TCP_A_LOST_PACKET | TCP_A_OUT_OF_ORDER | TCP_A_FAST_RETRANSMISSION |         \
     TCP_A_SPURIOUS_RETRANSMISSION)

gboolean tcp_repair_in_frame(packet_info *pinfo)
{
    if (pinfo->ptype != PT_TCP)
        return FALSE;
    /* TCP points ta at this frame's analysis before it hands on the payload */
    struct tcp_analysis *tcpd = get_tcp_conversation_data(NULL, pinfo);
    return tcpd && tcpd->ta && (tcpd->ta->flags & TCP_REPAIR_FLAGS) != 0;
}
