/* What the VI/TCP dissector (packet-vitcp.c) shares with its statistics
 * (packet-vitcp-stats.c): the record it queues on the "vitcp" tap for every
 * VI segment or unframed chunk it dissects. */
#ifndef VITCP_DISSECTOR_H
#define VITCP_DISSECTOR_H

#include <glib.h>

#define VITCP_TAP_NAME "vitcp"
#define VITCP_TAP_TYPE_UNFRAMED 0xFFu /* bytes that did not frame as a segment */

typedef struct {
    guint32 conv_index;        /* Wireshark conversation index of the TCP connection */
    guint8 type;               /* segment type, or VITCP_TAP_TYPE_UNFRAMED */
    gboolean eom;              /* End of Message: a message ended with this segment */
    guint32 seg_len;           /* bytes on the wire */
    guint32 payload_len;
    gboolean crc_bad;          /* trailer present and not the V3/V4 CRC */
    guint reads_outstanding;   /* RdmaReadRequests of both sides awaiting responses */
} vitcp_tap_info_t;

/* Registers "-z vitcp,stat" (called from proto_register_vitcp). */
void vitcp_register_stats(void);

#endif
