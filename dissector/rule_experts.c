/*
 * Findings to expert items for every dissector of the plugin (see
 * rule_experts.h). Registration walks the wire library's catalog, so a rule
 * added there gets its expert field without touching a dissector.
 */
#include <string.h>
#include <epan/proto.h>
#include <vitcp/catalog.h>
#include "rule_experts.h"

static const struct {
    const char *suffix;
    int severity;
} severities[RULE_EXPERT_SEVERITIES] = {
    [VW_SEV_ERROR] = {"error", PI_ERROR},
    [VW_SEV_WARN] = {"warning", PI_WARN},
    [VW_SEV_NOTE] = {"note", PI_NOTE},
};

/* Expert group from the ID's wording: checksums, sequencing, lengths. */
static int group_of(const char *id)
{
    if (strstr(id, "CRC") || strstr(id, "ADLER"))
        return PI_CHECKSUM;
    if (strstr(id, "SSN") || strstr(id, "OFFSET") || strstr(id, "CONTIGUOUS") || strstr(id, "PHASE") ||
        strstr(id, "FIRST") || strstr(id, "MSG-NUM") || strstr(id, "READ-"))
        return PI_SEQUENCE;
    if (strstr(id, "LEN") || strstr(id, "TRUNCATED") || strstr(id, "FORMAT") || strstr(id, "FITS") ||
        strstr(id, "SEG-CHAIN") || strstr(id, "RDMA-HDR-PRESENT") || strstr(id, "CE-HDR-PRESENT"))
        return PI_MALFORMED;
    return PI_PROTOCOL;
}

static gboolean has_prefix(const char *id, const char *const *prefixes)
{
    for (; *prefixes; prefixes++)
        if (g_str_has_prefix(id, *prefixes))
            return TRUE;
    return FALSE;
}

static void fill_ei(ei_register_info *ei, expert_field *field, char *name, int group, int sev, char *summary)
{
    field->ei = EI_INIT_EI;
    field->hf = EI_INIT_HF;
    ei->ids = field;
    ei->eiinfo.name = name;
    ei->eiinfo.group = group;
    ei->eiinfo.severity = sev;
    ei->eiinfo.summary = summary;
}

/* Leading tags that point into the project's decision list ("W4: ",
 * "P1/P2: ", "decoder: ", "active: ") mean nothing to a user. */
static const char *skip_tag(const char *t)
{
    const char *p = t;
    if (g_str_has_prefix(p, "decoder: ") || g_str_has_prefix(p, "active: "))
        return strchr(p, ' ') + 1;
    while (g_ascii_isupper(*p) && g_ascii_isdigit(p[1])) {
        p++;
        while (g_ascii_isdigit(*p))
            p++;
        if (*p == '/' || *p == '-')
            p++;
        else
            break;
    }
    return (p != t && p[0] == ':' && p[1] == ' ') ? p + 2 : t;
}

/* The catalog's statement of how a rule is checked as one sentence: tags
 * and "(P7)"-style references dropped, and the active suite's cases that
 * check it ("; vitcp-conform case(s) ...", not the packet's concern),
 * capital first, full stop last. */
static gchar *sentence_of(const char *reason)
{
    GString *g = g_string_new(skip_tag(reason));
    const char *cases = strstr(g->str, "; vitcp-conform case");
    if (cases)
        g_string_truncate(g, (gsize)(cases - g->str));
    /* " (P7)", " (I9)", ", P6)" references to the decision list */
    for (gsize i = 0; i + 3 < g->len; i++) {
        const char *c = g->str + i;
        if ((c[0] == '(' || c[0] == ',') && (c[0] == '(' ? 1 : c[1] == ' ')) {
            gsize k = c[0] == '(' ? 1 : 2;
            if (g_ascii_isupper(c[k]) && g_ascii_isdigit(c[k + 1])) {
                gsize e = k + 2;
                while (g_ascii_isdigit(c[e]))
                    e++;
                if (c[e] == ')') {
                    gsize start = i, end = i + e + (c[0] == '(' ? 1 : 0);
                    if (c[0] == '(' && start > 0 && g->str[start - 1] == ' ')
                        start--;
                    g_string_erase(g, (gssize)start, (gssize)(end - start));
                    i = start ? start - 1 : 0;
                }
            }
        }
    }
    if (g->len && g_ascii_islower(g->str[0]))
        g->str[0] = g_ascii_toupper(g->str[0]);
    if (g->len && g->str[g->len - 1] != '.')
        g_string_append_c(g, '.');
    return g_string_free(g, FALSE);
}

void rule_experts_register(rule_experts_t *re, int proto, const char *filter_name,
                           const char *const *id_prefixes, const char *strip_prefix, gboolean sentences)
{
    re->hf_rule = -1;
    re->ett_rule = -1;
    re->ei = (expert_field(*)[RULE_EXPERT_SEVERITIES])g_malloc0(sizeof re->ei[0] * VW_REQ_COUNT);
    re->registered = g_new0(gboolean, VW_REQ_COUNT);
    re->ei_other = g_new0(expert_field, RULE_EXPERT_SEVERITIES);

    /* Registration data must outlive this call: allocated once, never freed. */
    hf_register_info *hf = g_new0(hf_register_info, 1);
    hf->p_id = &re->hf_rule;
    hf->hfinfo.name = "Rule";
    hf->hfinfo.abbrev = g_strdup_printf("%s.rule", filter_name);
    hf->hfinfo.type = FT_STRING;
    hf->hfinfo.display = BASE_NONE;
    hf->hfinfo.blurb = "Requirement ID of the rule this finding checks: the same ID in Wireshark, the lint "
                       "and conformance reports";
    hf->hfinfo.id = -1;
    hf->hfinfo.parent = -1;
    hf->hfinfo.same_name_next = NULL;
    hf->hfinfo.same_name_prev_id = -1;
    proto_register_field_array(proto, hf, 1);
    gint *ett[] = {&re->ett_rule};
    proto_register_subtree_array(ett, 1);

    size_t n = 0;
    for (int r = 1; r < VW_REQ_COUNT; r++)
        if (has_prefix(vw_req_id((enum vw_req)r), id_prefixes))
            n++;
    size_t total = (n + 1) * RULE_EXPERT_SEVERITIES;
    ei_register_info *ei = g_new0(ei_register_info, total);
    size_t k = 0;
    for (int r = 1; r < VW_REQ_COUNT; r++) {
        const struct vw_req_info *info = vw_req_info((enum vw_req)r);
        if (!has_prefix(info->id, id_prefixes))
            continue;
        const char *name = info->id;
        if (strip_prefix && g_str_has_prefix(name, strip_prefix))
            name += strlen(strip_prefix);
        gchar *slug = g_ascii_strdown(name, -1);
        gchar *summary = sentence_of(info->reason);
        g_strdelimit(slug, ".-", '_');
        for (int s = 0; s < RULE_EXPERT_SEVERITIES; s++, k++)
            fill_ei(&ei[k], &re->ei[r][s], g_strdup_printf("%s.expert.%s.%s", filter_name, slug, severities[s].suffix),
                    group_of(info->id), severities[s].severity,
                    sentences ? g_strdup_printf("[%s] %s", info->id, summary)
                              : g_strdup_printf("[%s] %s", info->id, info->text));
        g_free(summary);
        re->registered[r] = TRUE;
        g_free(slug);
    }
    for (int s = 0; s < RULE_EXPERT_SEVERITIES; s++, k++)
        fill_ei(&ei[k], &re->ei_other[s], g_strdup_printf("%s.expert.other.%s", filter_name, severities[s].suffix),
                PI_PROTOCOL, severities[s].severity, g_strdup("Rule of another protocol"));
    expert_module_t *module = expert_register_protocol(proto);
    expert_register_field_array(module, ei, (int)total);
}

proto_item *rule_expert_add(const rule_experts_t *re, proto_tree *tree, packet_info *pinfo,
                            tvbuff_t *tvb, const struct vw_finding *f)
{
    unsigned s = f->severity < RULE_EXPERT_SEVERITIES ? (unsigned)f->severity : (unsigned)VW_SEV_ERROR;
    gboolean known = f->req > VW_REQ_NONE && f->req < VW_REQ_COUNT && re->registered[f->req];
    expert_field *ei = known ? &re->ei[f->req][s] : &re->ei_other[s];
    guint cap = tvb_captured_length(tvb);
    guint32 offset = f->offset, length = f->length;
    if (offset > cap)
        offset = 0, length = 0;
    if (length > cap - offset)
        length = cap - offset;
    const char *id = vw_req_id(f->req);
    proto_item *ti = proto_tree_add_expert_format(tree, pinfo, ei, tvb, (gint)offset, (gint)length, "[%s] %s",
                                                  id, f->detail);
    proto_tree *sub = proto_item_add_subtree(ti, re->ett_rule);
    proto_item_set_generated(proto_tree_add_string(sub, re->hf_rule, tvb, (gint)offset, (gint)length, id));
    return ti;
}

void rule_experts_add_all(const rule_experts_t *re, proto_tree *tree, packet_info *pinfo,
                          tvbuff_t *tvb, const struct vw_finding *findings, guint count)
{
    for (guint i = 0; i < count; i++)
        rule_expert_add(re, tree, pinfo, tvb, &findings[i]);
}

void rule_findings_keep(rule_findings_t *dst, const struct vw_findings *src)
{
    dst->count = src->count;
    dst->items = src->count ? (struct vw_finding *)wmem_memdup(wmem_file_scope(), src->item,
                                                               src->count * sizeof src->item[0])
                            : NULL;
}
