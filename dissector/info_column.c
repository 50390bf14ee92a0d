/* The Info column around a hand-off (see info_column.h). */
#include <string.h>
#include <epan/column-utils.h>
#include <epan/proto_data.h>
#include "info_column.h"

#define INFO_SEP " | "
/* Packet-scope key of the "Info cleared" mark (apart from file-scope keys). */
#define INFO_KEY_CLEARED 0x7FFFFFFF

void info_pdu_begin(packet_info *pinfo, int proto)
{
    if (p_get_proto_data(pinfo->pool, pinfo, proto, INFO_KEY_CLEARED))
        return;
    p_add_proto_data(pinfo->pool, pinfo, proto, INFO_KEY_CLEARED, GUINT_TO_POINTER(1));
    col_clear(pinfo->cinfo, COL_INFO);
}

void info_handoff_begin(packet_info *pinfo)
{
    col_append_str(pinfo->cinfo, COL_INFO, INFO_SEP);
    col_set_fence(pinfo->cinfo, COL_INFO);
}

void info_handoff_end(packet_info *pinfo)
{
    const gchar *text = col_get_text(pinfo->cinfo, COL_INFO);
    size_t len = text ? strlen(text) : 0, sep = strlen(INFO_SEP);
    if (len < sep || strcmp(text + len - sep, INFO_SEP) != 0)
        return;
    gchar *kept = wmem_strndup(pinfo->pool, text, len - sep);
    col_clear_fence(pinfo->cinfo, COL_INFO);
    col_add_str(pinfo->cinfo, COL_INFO, kept);
}
