/* Where a TCP direction ends (stream_end.h). */
#include "stream_end.h"
#include <epan/proto_data.h>

static int hf_tcp_fin = -1, hf_tcp_rst = -1, hf_tcp_lost = -1;

void stream_end_after_pdus(stream_end_t *se, int dir, tvbuff_t *tvb, packet_info *pinfo)
{
    if (PINFO_FD_VISITED(pinfo) || dir < 0 || dir > 1)
        return;
    /* tcp_dissect_pdus asks TCP for more bytes exactly when the last PDU
     * it met is unfinished; desegment_offset is where that PDU starts. */
    guint len = tvb_reported_length(tvb);
    se->pending[dir] = pinfo->desegment_len && (guint)pinfo->desegment_offset < len
                           ? len - (guint)pinfo->desegment_offset
                           : 0;
}

static gboolean present(proto_tree *tree, int hf)
{
    GPtrArray *a = hf >= 0 && tree ? proto_get_finfo_ptr_array(tree, hf) : NULL;
    return a && a->len;
}

static gboolean flag_set(proto_tree *tree, int hf)
{
    GPtrArray *a = hf >= 0 && tree ? proto_get_finfo_ptr_array(tree, hf) : NULL;
    return a && a->len && fvalue_get_uinteger64(&((field_info *)g_ptr_array_index(a, 0))->value) != 0;
}

stream_end_step_t stream_end_frame(stream_end_t *se, int dir, proto_tree *tree)
{
    stream_end_step_t step = {FALSE, FALSE};
    if (dir < 0 || dir > 1 || se->closed)
        return step;
    if (present(tree, hf_tcp_lost))
        se->gap[dir] = TRUE;
    if (flag_set(tree, hf_tcp_rst)) {
        se->closed = step.conn_closed = TRUE;
        return step;
    }
    if (!flag_set(tree, hf_tcp_fin) || se->ended[dir])
        return step;
    se->ended[dir] = TRUE;
    step.dir_ended = !se->gap[dir];
    se->closed = step.conn_closed = se->ended[1 - dir];
    return step;
}

#define KEY_STREAM_END 0x7FFFFFF0 /* file-scope key of a frame's end verdict, per protocol */

int stream_end_dissect(const stream_end_dissector_t *d, tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree)
{
    if (pinfo->ptype != PT_TCP)
        return 0;
    int proto = *d->proto;
    rule_findings_t *v = (rule_findings_t *)p_get_proto_data(wmem_file_scope(), pinfo, proto, KEY_STREAM_END);
    if (!v && !PINFO_FD_VISITED(pinfo)) {
        struct vw_findings fs;
        vw_findings_clear(&fs);
        d->judge(pinfo, tree, &fs);
        if (!fs.count)
            return 0;
        v = wmem_new0(wmem_file_scope(), rule_findings_t);
        rule_findings_keep(v, &fs);
        p_add_proto_data(wmem_file_scope(), pinfo, proto, KEY_STREAM_END, v);
    }
    if (!v)
        return 0;
    proto_item *ti = proto_tree_add_item(tree, proto, tvb, 0, 0, ENC_NA);
    proto_item_append_text(ti, "%s", d->item_text);
    proto_tree *pt = proto_item_add_subtree(ti, *d->ett);
    rule_experts_add_all(d->rules, pt, pinfo, tvb, v->items, v->count);
    col_append_str(pinfo->cinfo, COL_INFO, d->info_text);
    return (int)tvb_captured_length(tvb);
}

void stream_end_want_flags(dissector_handle_t postdissector)
{
    hf_tcp_fin = proto_registrar_get_id_byname("tcp.flags.fin");
    hf_tcp_rst = proto_registrar_get_id_byname("tcp.flags.reset");
    hf_tcp_lost = proto_registrar_get_id_byname("tcp.analysis.lost_segment");
    GArray *wanted = g_array_new(FALSE, FALSE, (guint)sizeof(int));
    if (hf_tcp_fin >= 0)
        g_array_append_val(wanted, hf_tcp_fin);
    if (hf_tcp_rst >= 0)
        g_array_append_val(wanted, hf_tcp_rst);
    if (hf_tcp_lost >= 0)
        g_array_append_val(wanted, hf_tcp_lost);
    set_postdissector_wanted_hfids(postdissector, wanted);
}
