/* packet-vitcp-stats.c
 * "tshark -z vitcp,stat[,filter]": per VI/TCP connection, messages and
 * segments per type, bytes, CRC errors, unframed chunks and the RDMA reads
 * still outstanding at the end, from the records packet-vitcp.c queues on
 * the "vitcp" tap.
 */
#include <stdio.h>
#include <string.h>

#include <epan/address.h>
#include <epan/packet.h>
#include <epan/stat_tap_ui.h>
#include <epan/tap.h>
#include <epan/to_str.h>

#include "vitcp/vitcp.h"
#include "vitcp_dissector.h"

typedef struct {
    guint32 conv_index;
    gchar *endpoints; /* "a:port <-> b:port" of the first segment seen */
    guint64 segments[VW_VITCP_TYPE_COUNT + 1]; /* last slot: unknown types */
    guint64 messages[VW_VITCP_TYPE_COUNT + 1];
    guint64 bytes;
    guint64 payload_bytes;
    guint64 crc_errors;
    guint64 unframed;
    guint reads_outstanding;
} vitcp_conn_stats_t;

typedef struct {
    gchar *filter;
    GHashTable *conns; /* conv_index -> vitcp_conn_stats_t */
    GPtrArray *order;  /* connections in order of first appearance */
} vitcp_stats_t;

static void stats_free_conn(gpointer p)
{
    vitcp_conn_stats_t *c = (vitcp_conn_stats_t *)p;
    g_free(c->endpoints);
    g_free(c);
}

static void stats_reset(void *tapdata)
{
    vitcp_stats_t *st = (vitcp_stats_t *)tapdata;
    g_ptr_array_set_size(st->order, 0);
    g_hash_table_remove_all(st->conns);
}

static tap_packet_status stats_packet(void *tapdata, packet_info *pinfo, epan_dissect_t *edt _U_,
                                      const void *data, tap_flags_t flags _U_)
{
    vitcp_stats_t *st = (vitcp_stats_t *)tapdata;
    const vitcp_tap_info_t *info = (const vitcp_tap_info_t *)data;
    vitcp_conn_stats_t *c = (vitcp_conn_stats_t *)g_hash_table_lookup(st->conns, GUINT_TO_POINTER(info->conv_index));
    if (!c) {
        c = g_new0(vitcp_conn_stats_t, 1);
        c->conv_index = info->conv_index;
        gchar *src = address_to_str(NULL, &pinfo->src), *dst = address_to_str(NULL, &pinfo->dst);
        c->endpoints = g_strdup_printf("%s:%u <-> %s:%u", src, pinfo->srcport, dst, pinfo->destport);
        wmem_free(NULL, src);
        wmem_free(NULL, dst);
        g_hash_table_insert(st->conns, GUINT_TO_POINTER(info->conv_index), c);
        g_ptr_array_add(st->order, c);
    }
    c->bytes += info->seg_len;
    c->reads_outstanding = info->reads_outstanding;
    if (info->type == VITCP_TAP_TYPE_UNFRAMED) {
        c->unframed++;
        return TAP_PACKET_REDRAW;
    }
    unsigned slot = info->type < VW_VITCP_TYPE_COUNT ? info->type : VW_VITCP_TYPE_COUNT;
    c->segments[slot]++;
    if (info->eom)
        c->messages[slot]++;
    c->payload_bytes += info->payload_len;
    if (info->crc_bad)
        c->crc_errors++;
    return TAP_PACKET_REDRAW;
}

static void stats_draw(void *tapdata)
{
    vitcp_stats_t *st = (vitcp_stats_t *)tapdata;
    printf("\n===================================================================\n");
    printf("VI/TCP Statistics%s%s\n", st->filter ? " with filter: " : "", st->filter ? st->filter : "");
    for (guint i = 0; i < st->order->len; i++) {
        const vitcp_conn_stats_t *c = (const vitcp_conn_stats_t *)g_ptr_array_index(st->order, i);
        printf("Connection %s\n", c->endpoints);
        printf("  %-18s %10s %10s\n", "Type", "Messages", "Segments");
        for (unsigned t = 0; t <= VW_VITCP_TYPE_COUNT; t++)
            if (c->segments[t])
                printf("  %-18s %10" G_GUINT64_FORMAT " %10" G_GUINT64_FORMAT "\n",
                       t < VW_VITCP_TYPE_COUNT ? vw_vitcp_type_name(t) : "Unknown", c->messages[t], c->segments[t]);
        printf("  Bytes: %" G_GUINT64_FORMAT "\n", c->bytes);
        printf("  Payload bytes: %" G_GUINT64_FORMAT "\n", c->payload_bytes);
        printf("  CRC errors: %" G_GUINT64_FORMAT "\n", c->crc_errors);
        printf("  Unframed chunks: %" G_GUINT64_FORMAT "\n", c->unframed);
        printf("  RDMA reads outstanding: %u\n", c->reads_outstanding);
    }
    printf("===================================================================\n");
}

static void stats_finish(void *tapdata)
{
    vitcp_stats_t *st = (vitcp_stats_t *)tapdata;
    g_ptr_array_free(st->order, TRUE);
    g_hash_table_destroy(st->conns);
    g_free(st->filter);
    g_free(st);
}

static void stats_init(const char *opt_arg, void *userdata _U_)
{
    const char *prefix = "vitcp,stat,";
    const char *filter = NULL;
    if (opt_arg && strncmp(opt_arg, prefix, strlen(prefix)) == 0)
        filter = opt_arg + strlen(prefix);
    vitcp_stats_t *st = g_new0(vitcp_stats_t, 1);
    st->filter = g_strdup(filter);
    st->conns = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, stats_free_conn);
    st->order = g_ptr_array_new();
    GString *error = register_tap_listener(VITCP_TAP_NAME, st, filter, 0, stats_reset, stats_packet, stats_draw,
                                           stats_finish);
    if (error) {
        fprintf(stderr, "tshark: couldn't register vitcp,stat tap: %s\n", error->str);
        g_string_free(error, TRUE);
        stats_finish(st);
    }
}

static stat_tap_ui vitcp_stat_ui = {REGISTER_STAT_GROUP_GENERIC, NULL, "vitcp,stat", stats_init, 0, NULL};

void vitcp_register_stats(void)
{
    register_stat_tap_ui(&vitcp_stat_ui, NULL);
}
