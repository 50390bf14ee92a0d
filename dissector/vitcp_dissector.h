/* What the dissectors share with their statistics (packet-vitcp-stats.c,
 * plugin_stats.c): the records they queue on the "vitcp", "ift", "warp" and
 * "pktway" taps, one per PDU (VI segment or unframed chunk, IFT indication
 * or frame, WARP chunk, EEP message). */
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
    gboolean read_done;        /* this RdmaReadResponse segment completes a read ... */
    nstime_t read_req_time;    /* ... requested at this time (vitcp.rdma.time is the difference) */
} vitcp_tap_info_t;

#define IFT_TAP_NAME "ift"
typedef struct {
    gboolean indication;       /* adaption indication, else a frame */
    gint ddp_opcode;           /* frame: RDMAP opcode of its DDP header, -1 if none decoded */
    gboolean ddp_last;         /* frame: DDP L bit (last segment of a DDP message) */
    guint32 len;               /* bytes on the wire */
    gboolean crc_bad;          /* a CRC present and wrong (indication, header or payload) */
} ift_tap_info_t;

#define WARP_TAP_NAME "warp"
typedef struct {
    gint type;                 /* chunk type; -1 when the chunk could not be decoded */
    gboolean last;             /* L: the last chunk of a ULP PDU */
    guint32 len;               /* bytes on the wire */
    guint32 payload_len;
    gboolean adler_bad;
} warp_tap_info_t;

#define PKTWAY_TAP_NAME "pktway"
typedef struct {
    gboolean decoded;          /* the header was decoded (else only the error counts) */
    guint32 sa, dt;            /* source address, destination type */
    guint16 pt;                /* packet type */
    guint32 len;               /* message bytes */
    gboolean error;            /* the message broke a rule at error severity */
    gboolean ei;               /* the TAIL flags an error */
} pktway_tap_info_t;

/* Registers "-z vitcp,stat" (called from proto_register_vitcp). */
void vitcp_register_stats(void);
/* Registers the statistics the GUI lists (Statistics menu: one tree per
 * protocol; Service Response Time: VI/TCP RDMA reads). Called once every
 * protocol of the plugin is registered. */
void plugin_register_stats(void);

#endif
