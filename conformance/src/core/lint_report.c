/* The lint's report: its issues and summary as text or JSON. The default
 * protocol's module comes first and its issues carry no protocol name,
 * the other modules follow in the table's order. */
#include "conform/lint.h"

#include "conform/report.h"

/* The place in cf_lint_modules of the report's n-th module. */
static unsigned report_index(unsigned n)
{
    unsigned first = 0;
    while (cf_lint_modules[first] != cf_lint_module_default())
        first++;
    return n == 0 ? first : n <= first ? n - 1 : n;
}

static void write_counts(FILE *out, const struct cf_lint_result *res)
{
    bool any = false;
    for (unsigned n = 0; cf_lint_modules[n]; n++) {
        unsigned i = report_index(n);
        const struct cf_lint_module *m = cf_lint_modules[i];
        if (n > 0 && !res->counts[i][0])
            continue;
        for (unsigned k = 0; k < CF_LINT_COUNTERS_MAX && m->counters[k].key; k++) {
            fprintf(out, "%s%llu %s", any ? ", " : "", (unsigned long long)res->counts[i][k], m->counters[k].text);
            any = true;
        }
    }
}

void cf_lint_write_text(FILE *out, const char *path, const struct cf_lint_result *res)
{
    const struct cf_lint_module *first = cf_lint_module_default();
    for (size_t i = 0; i < res->count; i++) {
        const struct cf_lint_issue *is = &res->issues[i];
        fprintf(out, "%s: frame %llu: ", path, (unsigned long long)is->frame);
        if (is->module->protocol->transport == CF_TRANSPORT_DATAGRAM)
            fputs(is->module->title, out);
        else if (is->module == first)
            fprintf(out, "conn %u", is->conn);
        else
            fprintf(out, "conn %u (%s)", is->conn, is->module->title);
        fprintf(out, ": %s", vw_severity_name(is->severity));
        if (is->req != VW_REQ_NONE) {
            const struct vw_req_info *ri = vw_req_info(is->req);
            fprintf(out, " %s (%s %s)", ri->id, vw_level_name(ri->level), ri->section);
        }
        fprintf(out, ": %s\n", is->detail);
    }
    fprintf(out, "lint %s: %llu frames, ", path, (unsigned long long)res->frames);
    write_counts(out, res);
    fprintf(out, ": %u errors, %u warnings, %u notes (%.3f s)\n", res->errors, res->warnings, res->notes,
            res->seconds);
}

void cf_lint_write_json(FILE *out, const char *path, const struct cf_lint_result *res)
{
    fputs("{\"file\": ", out);
    cf_json_string(out, path);
    fputs(", \"issues\": [", out);
    for (size_t i = 0; i < res->count; i++) {
        const struct cf_lint_issue *is = &res->issues[i];
        fprintf(out, "%s\n  {\"frame\": %llu, \"protocol\": ", i ? "," : "", (unsigned long long)is->frame);
        cf_json_string(out, is->module->title);
        if (is->module->protocol->transport != CF_TRANSPORT_DATAGRAM)
            fprintf(out, ", \"connection\": %u", is->conn);
        fputs(", \"severity\": ", out);
        cf_json_string(out, vw_severity_name(is->severity));
        fputs(", \"requirement\": ", out);
        if (is->req != VW_REQ_NONE)
            cf_json_string(out, vw_req_id(is->req));
        else
            fputs("null", out);
        fputs(", \"message\": ", out);
        cf_json_string(out, is->detail);
        fputc('}', out);
    }
    fprintf(out, "\n], \"summary\": {\"frames\": %llu, ", (unsigned long long)res->frames);
    for (unsigned n = 0; cf_lint_modules[n]; n++) {
        unsigned i = report_index(n);
        for (unsigned k = 0; k < CF_LINT_COUNTERS_MAX && cf_lint_modules[i]->counters[k].key; k++)
            fprintf(out, "\"%s\": %llu, ", cf_lint_modules[i]->counters[k].key, (unsigned long long)res->counts[i][k]);
    }
    fprintf(out, "\"errors\": %u, \"warnings\": %u, \"notes\": %u, \"seconds\": %.3f}}\n", res->errors,
            res->warnings, res->notes, res->seconds);
}
