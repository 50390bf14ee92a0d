/* plugin_stats.c
 * Statistics the Wireshark GUI lists for the four protocols, from the
 * records the dissectors queue on their taps (vitcp_dissector.h):
 *
 * - Statistics > VI/TCP, IFT, WARP, PacketWay EEP (stats_tree; tshark
 *   "-z vitcp,tree", "-z ift,tree", "-z warp,tree", "-z pktway,tree"): per
 *   connection (EEP: per source and destination address) PDU counts by type,
 *   message counts by type, bytes and checksum errors;
 * - Statistics > Service Response Time > VI/TCP (tshark "-z vitcp,srt"):
 *   RDMA Read response times, the vitcp.rdma.time of each read's completing
 *   RdmaReadResponse segment, like scsi,srt and rpc,srt.
 */
#include <stdio.h>

#include <epan/address.h>
#include <epan/packet.h>
#include <epan/srt_table.h>
#include <epan/stats_tree.h>
#include <epan/tap.h>
#include <epan/to_str.h>

#include "vitcp/ift.h"
#include "vitcp/vitcp.h"
#include "vitcp/warp.h"
#include "vitcp_dissector.h"

#define ST_SEGMENTS "Segments by type"
#define ST_MESSAGES "Messages by type"
#define ST_BYTES "Bytes"
#define ST_CRC "Checksum errors"

/* One node per connection, named "a:port <-> b:port" with the lower
 * endpoint first, so both directions count in the same node. */
static int conn_node(stats_tree *st, packet_info *pinfo, const char *root)
{
    int c = cmp_address(&pinfo->src, &pinfo->dst);
    gboolean src_first = c < 0 || (c == 0 && pinfo->srcport <= pinfo->destport);
    const address *a = src_first ? &pinfo->src : &pinfo->dst, *b = src_first ? &pinfo->dst : &pinfo->src;
    guint32 pa = src_first ? pinfo->srcport : pinfo->destport, pb = src_first ? pinfo->destport : pinfo->srcport;
    gchar *as = address_to_str(pinfo->pool, a), *bs = address_to_str(pinfo->pool, b);
    gchar *name = wmem_strdup_printf(pinfo->pool, "%s:%u <-> %s:%u", as, pa, bs, pb);
    int parent = tick_stat_node(st, root, 0, TRUE);
    return tick_stat_node(st, name, parent, TRUE);
}

/* A count under node: tick the group node and the named child. */
static void count(stats_tree *st, int node, const char *group, const char *name)
{
    int g = tick_stat_node(st, group, node, TRUE);
    tick_stat_node(st, name, g, FALSE);
}

static void add_bytes(stats_tree *st, int node, guint32 bytes)
{
    increase_stat_node(st, ST_BYTES, node, FALSE, (gint)bytes);
}

static void add_crc_error(stats_tree *st, int node)
{
    tick_stat_node(st, ST_CRC, node, FALSE);
}

/* ------------------------------------------------------------ VI/TCP */

#define VITCP_ROOT "Connections"

static void vitcp_tree_init(stats_tree *st)
{
    stats_tree_create_node(st, VITCP_ROOT, 0, STAT_DT_INT, TRUE);
}

static tap_packet_status vitcp_tree_packet(stats_tree *st, packet_info *pinfo, epan_dissect_t *edt _U_,
                                           const void *p, tap_flags_t flags _U_)
{
    const vitcp_tap_info_t *t = (const vitcp_tap_info_t *)p;
    int node = conn_node(st, pinfo, VITCP_ROOT);
    const char *type = t->type == VITCP_TAP_TYPE_UNFRAMED ? "Unframed bytes"
                       : t->type < VW_VITCP_TYPE_COUNT   ? vw_vitcp_type_name(t->type)
                                                         : "Unknown type";
    count(st, node, ST_SEGMENTS, type);
    if (t->eom)
        count(st, node, ST_MESSAGES, type);
    add_bytes(st, node, t->seg_len);
    if (t->crc_bad)
        add_crc_error(st, node);
    return TAP_PACKET_REDRAW;
}

/* --------------------------------------------------------------- IFT */

#define IFT_ROOT "IFT connections"

static void ift_tree_init(stats_tree *st)
{
    stats_tree_create_node(st, IFT_ROOT, 0, STAT_DT_INT, TRUE);
}

static tap_packet_status ift_tree_packet(stats_tree *st, packet_info *pinfo, epan_dissect_t *edt _U_,
                                         const void *p, tap_flags_t flags _U_)
{
    const ift_tap_info_t *t = (const ift_tap_info_t *)p;
    int node = conn_node(st, pinfo, IFT_ROOT);
    const char *type = t->indication     ? "Adaption indication"
                       : t->ddp_opcode < 0 ? "Frame without a DDP header"
                                           : vw_rdmap_opcode_name((unsigned)t->ddp_opcode);
    count(st, node, "Frames by type", type);
    if (!t->indication && t->ddp_opcode >= 0 && t->ddp_last)
        count(st, node, ST_MESSAGES, type);
    add_bytes(st, node, t->len);
    if (t->crc_bad)
        add_crc_error(st, node);
    return TAP_PACKET_REDRAW;
}

/* -------------------------------------------------------------- WARP */

#define WARP_ROOT "WARP connections"

static void warp_tree_init(stats_tree *st)
{
    stats_tree_create_node(st, WARP_ROOT, 0, STAT_DT_INT, TRUE);
}

static tap_packet_status warp_tree_packet(stats_tree *st, packet_info *pinfo, epan_dissect_t *edt _U_,
                                          const void *p, tap_flags_t flags _U_)
{
    const warp_tap_info_t *t = (const warp_tap_info_t *)p;
    int node = conn_node(st, pinfo, WARP_ROOT);
    const char *type = t->type < 0 ? "Undecodable chunk" : vw_warp_type_name((unsigned)t->type);
    count(st, node, "Chunks by type", type);
    if (t->last)
        count(st, node, "ULP PDUs by type", type);
    add_bytes(st, node, t->len);
    if (t->adler_bad)
        add_crc_error(st, node);
    return TAP_PACKET_REDRAW;
}

/* ---------------------------------------------------------- PacketWay */

#define PKTWAY_ROOT "PacketWay EEP messages"

static void pktway_tree_init(stats_tree *st)
{
    stats_tree_create_node(st, PKTWAY_ROOT, 0, STAT_DT_INT, TRUE);
}

static tap_packet_status pktway_tree_packet(stats_tree *st, packet_info *pinfo, epan_dissect_t *edt _U_,
                                            const void *p, tap_flags_t flags _U_)
{
    const pktway_tap_info_t *t = (const pktway_tap_info_t *)p;
    int root = tick_stat_node(st, PKTWAY_ROOT, 0, TRUE);
    gchar *name = t->decoded ? wmem_strdup_printf(pinfo->pool, "SA 0x%06x -> DT 0x%06x", t->sa, t->dt)
                             : wmem_strdup(pinfo->pool, "Messages without a decodable header");
    int node = tick_stat_node(st, name, root, TRUE);
    if (t->decoded)
        count(st, node, "Messages by packet type", wmem_strdup_printf(pinfo->pool, "0x%04x", t->pt));
    add_bytes(st, node, t->len);
    if (t->error)
        tick_stat_node(st, "Messages with errors", node, FALSE);
    if (t->ei)
        tick_stat_node(st, "Error indication set", node, FALSE);
    return TAP_PACKET_REDRAW;
}

/* ------------------------------------------------ VI/TCP RDMA read SRT */

#define SRT_RDMA_READ 0

static void vitcp_srt_init(struct register_srt *srt _U_, GArray *srt_array)
{
    srt_stat_table *t = init_srt_table("VI/TCP RDMA Read response time", NULL, srt_array, 1, "Operation",
                                       NULL, NULL);
    init_srt_table_row(t, SRT_RDMA_READ, "RDMA Read");
}

static tap_packet_status vitcp_srt_packet(void *pss, packet_info *pinfo, epan_dissect_t *edt _U_, const void *p,
                                          tap_flags_t flags _U_)
{
    const vitcp_tap_info_t *t = (const vitcp_tap_info_t *)p;
    if (!t->read_done)
        return TAP_PACKET_DONT_REDRAW;
    srt_data_t *data = (srt_data_t *)pss;
    srt_stat_table *table = g_array_index(data->srt_array, srt_stat_table *, 0);
    add_srt_table_data(table, SRT_RDMA_READ, &t->read_req_time, pinfo);
    return TAP_PACKET_REDRAW;
}

void plugin_register_stats(void)
{
    stats_tree_register_plugin(VITCP_TAP_NAME, "vitcp", "VI/TCP/Connections, Segments and Messages", 0,
                               vitcp_tree_packet, vitcp_tree_init, NULL);
    stats_tree_register_plugin(IFT_TAP_NAME, "ift", "IFT/Connections and Frames", 0, ift_tree_packet,
                               ift_tree_init, NULL);
    stats_tree_register_plugin(WARP_TAP_NAME, "warp", "WARP/Connections, Chunks and ULP PDUs", 0,
                               warp_tree_packet, warp_tree_init, NULL);
    stats_tree_register_plugin(PKTWAY_TAP_NAME, "pktway", "PacketWay EEP/Messages by Address and Type", 0,
                               pktway_tree_packet, pktway_tree_init, NULL);
    int proto_vitcp = proto_get_id_by_filter_name("vitcp");
    if (proto_vitcp >= 0)
        register_srt_table(proto_vitcp, VITCP_TAP_NAME, 1, vitcp_srt_packet, vitcp_srt_init, NULL);
}
