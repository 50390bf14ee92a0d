/* Catalog coverage and `vitcp-conform list`. */
#include "conform/coverage.h"

#include "conform/protocol.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* "active", "passive", "api" or "untestable": the primary way a rule is checked. */
static const char *cf_check_primary(unsigned check)
{
    if (check & VW_CHECK_ACTIVE) return "active";
    if (check & VW_CHECK_PASSIVE) return "passive";
    if (check & VW_CHECK_API) return "api";
    return "untestable";
}

/* The protocol prefix of an ID (what comes before its first '-'). */
static void cf_req_protocol(const char *id, char *out, size_t n)
{
    size_t k = strcspn(id, "-");
    if (k >= n)
        k = n - 1;
    memcpy(out, id, k);
    out[k] = 0;
}

static bool cf_filter_accepts(const struct cf_list_filter *f, enum vw_req req)
{
    if (!f)
        return true;
    const struct vw_req_info *ri = vw_req_info(req);
    if (f->protocol) {
        char proto[16];
        cf_req_protocol(ri->id, proto, sizeof proto);
        if (strcasecmp(proto, f->protocol) != 0)
            return false;
    }
    return f->level < 0 || (int)ri->level == f->level;
}

/* Is name one of the comma-separated names in list? */
static bool listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p; p += strcspn(p, ",") + (p[strcspn(p, ",")] ? 2 : 0))
        if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == 0))
            return true;
    return false;
}

bool cf_req_protocol_known(const char *prefix, char *known, size_t n)
{
    bool found = false;
    size_t o = 0;
    known[0] = 0;
    for (unsigned r = VW_REQ_NONE + 1; r < VW_REQ_COUNT; r++) {
        char proto[16];
        cf_req_protocol(vw_req_id((enum vw_req)r), proto, sizeof proto);
        found |= strcasecmp(proto, prefix) == 0;
        if (o < n && !listed(known, proto))
            o += (size_t)snprintf(known + o, n - o, "%s%s", o ? ", " : "", proto);
    }
    return found;
}

int cf_level_parse(const char *s)
{
    char norm[16];
    size_t n = strlen(s);
    if (n >= sizeof norm)
        return -1;
    for (size_t i = 0; i <= n; i++)
        norm[i] = s[i] == '_' || s[i] == '-' ? ' ' : (char)toupper((unsigned char)s[i]);
    for (int l = VW_LEVEL_MUST; l <= VW_LEVEL_DECISION; l++)
        if (strcmp(vw_level_name((enum vw_level)l), norm) == 0)
            return l;
    return -1;
}

static unsigned cases_naming(enum vw_req req, const struct cf_case_set *cases)
{
    unsigned n = 0;
    for (size_t i = 0; cases && i < cases->count; i++) {
        const struct cf_case *c = &cases->cases[i];
        bool named = cf_case_has_req(c, req);
        for (unsigned s = 0; s < c->nsteps && !named; s++)
            named |= c->steps[s].req == req;
        n += named;
    }
    return n;
}

/* A rule of a protocol with a lint module: lint runs its wire library
 * checks on captures, the same the dissector runs. */
static bool lint_covers(enum vw_req req)
{
    const char *id = vw_req_id(req);
    for (const struct cf_lint_module *const *m = cf_lint_modules; *m; m++)
        if (strncmp(id, (*m)->protocol->req_prefix, strlen((*m)->protocol->req_prefix)) == 0)
            return true;
    return false;
}

/* Status of one entry given the loaded cases: "active (N cases)",
 * "passive (lint)", "api (vipl tests)", "untestable", or "NOT COVERED". */
static void cf_coverage_status(enum vw_req req, const struct cf_case_set *cases, char *out, size_t n)
{
    const struct vw_req_info *ri = vw_req_info(req);
    unsigned active = cases_naming(req, cases);
    char buf[160] = "";
    size_t w = 0;
#define ADD(...) w += (size_t)snprintf(buf + w, w < sizeof buf ? sizeof buf - w : 0, __VA_ARGS__)
    if (active)
        ADD("active (%u case%s)", active, active == 1 ? "" : "s");
    if ((ri->check & VW_CHECK_PASSIVE) && lint_covers(req))
        ADD("%spassive (lint)", w ? ", " : "");
    else if (ri->check & VW_CHECK_PASSIVE)
        ADD("%spassive (dissector)", w ? ", " : "");
    if (ri->check & VW_CHECK_API)
        ADD("%sapi (vipl tests)", w ? ", " : "");
    if (!w && (ri->check & VW_CHECK_UNTESTABLE))
        ADD("untestable");
    if (!w)
        ADD("NOT COVERED");
#undef ADD
    snprintf(out, n, "%s", buf);
}

void cf_list_write_text(FILE *out, const struct cf_case_set *cases, const struct cf_list_filter *f)
{
    size_t shown = 0, uncovered = 0;
    for (unsigned i = 1; i <= vw_req_count(); i++) {
        if (!cf_filter_accepts(f, (enum vw_req)i))
            continue;
        const struct vw_req_info *ri = vw_req_info((enum vw_req)i);
        char status[160];
        cf_coverage_status((enum vw_req)i, cases, status, sizeof status);
        char proto[16];
        cf_req_protocol(ri->id, proto, sizeof proto);
        fprintf(out, "%-44s %-6s %-9s %-10s %s\n    \"%s\"\n    %s\n", ri->id, proto, vw_level_name(ri->level),
                ri->section, status, ri->text, ri->reason);
        shown++;
        uncovered += strcmp(status, "NOT COVERED") == 0;
    }
    fprintf(out, "%zu requirements, %zu not covered\n", shown, uncovered);
}

void cf_list_write_json(FILE *out, const struct cf_case_set *cases, const struct cf_list_filter *f)
{
    fputs("{\"requirements\": [", out);
    bool first = true;
    for (unsigned i = 1; i <= vw_req_count(); i++) {
        if (!cf_filter_accepts(f, (enum vw_req)i))
            continue;
        const struct vw_req_info *ri = vw_req_info((enum vw_req)i);
        char status[160], proto[16];
        cf_coverage_status((enum vw_req)i, cases, status, sizeof status);
        cf_req_protocol(ri->id, proto, sizeof proto);
        fprintf(out, "%s\n  {\"id\": ", first ? "" : ",");
        first = false;
        cf_json_string(out, ri->id);
        cf_json_member(out, "protocol", proto);
        cf_json_member(out, "level", vw_level_name(ri->level));
        cf_json_member(out, "section", ri->section);
        cf_json_member(out, "text", ri->text);
        cf_json_member(out, "check", cf_check_primary(ri->check));
        fputs(", \"checks\": [", out);
        static const char *const names[] = {"active", "passive", "api", "untestable"};
        bool k1 = true;
        for (unsigned b = 0; b < 4; b++)
            if (ri->check & (1u << b)) {
                fprintf(out, "%s\"%s\"", k1 ? "" : ", ", names[b]);
                k1 = false;
            }
        fputs("], \"reason\": ", out);
        cf_json_string(out, ri->reason);
        cf_json_member(out, "status", status);
        fputs(", \"cases\": [", out);
        bool k2 = true;
        for (size_t c = 0; cases && c < cases->count; c++)
            if (cf_case_has_req(&cases->cases[c], (enum vw_req)i)) {
                fprintf(out, "%s", k2 ? "" : ", ");
                cf_json_string(out, cases->cases[c].id);
                k2 = false;
            }
        fputs("]}", out);
    }
    fputs("\n]}\n", out);
}
