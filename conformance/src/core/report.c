/* The conformance report model and its three output formats. */
#include "conform/report.h"

#include "conform/protocol.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void cf_report_init(struct cf_report *r) { memset(r, 0, sizeof *r); }

void cf_report_free(struct cf_report *r)
{
    free(r->cases);
    memset(r, 0, sizeof *r);
}

int cf_report_add(struct cf_report *r, const struct cf_result *res)
{
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 32;
        struct cf_result *grown = realloc(r->cases, cap * sizeof *grown);
        if (!grown)
            return -1;
        r->cases = grown;
        r->cap = cap;
    }
    r->cases[r->count++] = *res;
    return 0;
}

/* Each verdict's name in the JSON report and in the text report's column. */
static const char *const verdict_names[][2] = {
    [CF_PASS] = {"pass", "PASS"},
    [CF_FAIL] = {"fail", "FAIL"},
    [CF_TIMEOUT] = {"timeout", "TIMEOUT"},
    [CF_SKIP] = {"skip", "SKIP"},
    [CF_NOT_APPLICABLE] = {"not-applicable", "N/A"},
    [CF_ADVISORY] = {"advisory", "ADVISE"},
    [CF_INCONCLUSIVE] = {"inconclusive", "INCONCL"},
};

static const char *verdict_name(enum cf_verdict v, bool upper)
{
    return (unsigned)v < sizeof verdict_names / sizeof *verdict_names ? verdict_names[v][upper] : "?";
}

const char *cf_verdict_name(enum cf_verdict v) { return verdict_name(v, false); }

static int level_rank(enum vw_level l)
{
    static const int rank[] = {
        [VW_LEVEL_MUST] = 6, [VW_LEVEL_MUST_NOT] = 5, [VW_LEVEL_DECISION] = 4, [VW_LEVEL_IMPLIED] = 3,
        [VW_LEVEL_SHOULD] = 2, [VW_LEVEL_SHOULD_NOT] = 1, [VW_LEVEL_MAY] = 0,
    };
    return (unsigned)l < sizeof rank / sizeof *rank ? rank[l] : 0;
}

enum vw_level cf_level_strongest(const enum vw_req *reqs, unsigned n)
{
    enum vw_level best = VW_LEVEL_MAY;
    for (unsigned i = 0; i < n; i++) {
        enum vw_level l = vw_req_info(reqs[i])->level;
        if (level_rank(l) > level_rank(best))
            best = l;
    }
    return best;
}

/* Implied format rules and project decisions are enforced like MUSTs: an
 * implementation that breaks them cannot interoperate. */
static bool cf_level_is_mandatory(enum vw_level level) { return level_rank(level) >= 3; }

void cf_result_add_frame(struct cf_result *res, unsigned frame)
{
    for (unsigned i = 0; i < res->nframes; i++)
        if (res->frames[i] == frame)
            return;
    if (res->nframes < CF_MAX_FRAMES)
        res->frames[res->nframes++] = frame;
}

void cf_result_set_message(struct cf_result *res, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->message, sizeof res->message, fmt, ap);
    va_end(ap);
}

static bool result_breaks_must(const struct cf_result *c)
{
    if (c->verdict != CF_FAIL && c->verdict != CF_TIMEOUT)
        return false;
    enum vw_level l = c->failed_req != VW_REQ_NONE ? vw_req_info(c->failed_req)->level : c->level;
    return cf_level_is_mandatory(l);
}

void cf_report_summary(const struct cf_report *r, struct cf_summary *s)
{
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < r->count; i++) {
        const struct cf_result *c = &r->cases[i];
        switch (c->verdict) {
        case CF_PASS: s->passed++; break;
        case CF_FAIL: s->failed++; break;
        case CF_TIMEOUT: s->timed_out++; break;
        case CF_SKIP: s->skipped++; break;
        case CF_NOT_APPLICABLE: s->not_applicable++; break;
        case CF_ADVISORY: s->advisory++; break;
        case CF_INCONCLUSIVE: s->inconclusive++; break;
        }
        if (c->verdict != CF_SKIP && c->verdict != CF_NOT_APPLICABLE)
            s->ran++;
        if (result_breaks_must(c))
            s->must_failed++;
    }
}

int cf_report_exit_code(const struct cf_report *r)
{
    struct cf_summary s;
    cf_report_summary(r, &s);
    return s.must_failed ? 1 : 0;
}

/* The test conventions the run settled (C60), one line each. */
static void write_hooks_text(FILE *out, const struct cf_report *r)
{
    for (unsigned i = 0; i < r->nhooks; i++)
        fprintf(out, "Test convention %s: %s (%s)\n", r->hooks[i].name,
                r->hooks[i].offered ? "offered" : "not offered", r->hooks[i].how);
}

void cf_report_write_closing(FILE *out, const struct cf_report *r)
{
    struct cf_summary s;
    cf_report_summary(r, &s);
    fprintf(out, "Ran %u: %u passing, %u failing, %u timed out", s.ran, s.passed, s.failed,
            s.timed_out);
    if (s.skipped)
        fprintf(out, ", %u skipped", s.skipped);
    if (s.not_applicable)
        fprintf(out, ", %u not applicable", s.not_applicable);
    if (s.advisory)
        fprintf(out, ", %u advisory", s.advisory);
    if (s.inconclusive)
        fprintf(out, ", %u inconclusive", s.inconclusive);
    fprintf(out, " (%.2f s)\n", r->seconds);
}

void cf_report_write_text(FILE *out, const struct cf_report *r)
{
    for (size_t i = 0; i < r->count; i++) {
        const struct cf_result *c = &r->cases[i];
        fprintf(out, "%3zu %-7s %-36s [%s] %s %s", i + 1, verdict_name(c->verdict, true), c->id,
                c->section, c->protocol, vw_level_name(c->level));
        for (unsigned k = 0; k < c->nreqs; k++)
            fprintf(out, "%s%s", k ? ", " : " ", vw_req_id(c->reqs[k]));
        fputc('\n', out);
        const struct vw_req_info *broke = c->failed_req != VW_REQ_NONE ? vw_req_info(c->failed_req) : NULL;
        if (broke && (c->verdict == CF_FAIL || c->verdict == CF_TIMEOUT))
            fprintf(out, "      broke %s (%s %s)\n", broke->id, vw_level_name(broke->level), broke->section);
        if (broke && c->verdict == CF_ADVISORY)
            fprintf(out, "      differs from %s (%s %s; the draft leaves this open, advisory only)\n", broke->id,
                    vw_level_name(broke->level), broke->section);
        if (c->message[0] && c->verdict != CF_PASS)
            fprintf(out, "      %s\n", c->message);
        if (c->impaired[0] && c->verdict != CF_PASS)
            fprintf(out, "      impaired: %s\n", c->impaired);
        if (c->nframes && c->verdict != CF_PASS) {
            fprintf(out, "      frames");
            for (unsigned k = 0; k < c->nframes; k++)
                fprintf(out, " %u", c->frames[k]);
            fprintf(out, "%s%s\n", r->capture[0] ? " in " : "", r->capture);
        }
    }
    write_hooks_text(out, r);
    if (r->impair[0])
        fprintf(out, "Network impaired (the packet relay, or the tester on datagram links): %s\n", r->impair);
    cf_report_write_closing(out, r);
}

void cf_json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*p < 0x20)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

void cf_json_member(FILE *out, const char *key, const char *s)
{
    fprintf(out, ", \"%s\": ", key);
    cf_json_string(out, s);
}

/* s with XML special characters escaped. */
static void cf_xml_text(FILE *out, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '&': fputs("&amp;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&apos;", out); break;
        default:
            /* XML 1.0 forbids most control characters even escaped. */
            if (*p < 0x20 && *p != '\n' && *p != '\t')
                fputc(' ', out);
            else
                fputc(*p, out);
        }
    }
}

void cf_report_write_json(FILE *out, const struct cf_report *r)
{
    fputs("{\"cases\": [", out);
    for (size_t i = 0; i < r->count; i++) {
        const struct cf_result *c = &r->cases[i];
        fprintf(out, "%s\n  {\"number\": %zu, \"id\": ", i ? "," : "", i + 1);
        cf_json_string(out, c->id);
        cf_json_member(out, "file", c->file);
        cf_json_member(out, "protocol", c->protocol);
        cf_json_member(out, "section", c->section);
        fputs(", \"requirements\": [", out);
        for (unsigned k = 0; k < c->nreqs; k++) {
            fputs(k ? ", " : "", out);
            cf_json_string(out, vw_req_id(c->reqs[k]));
        }
        fputs("], \"level\": ", out);
        cf_json_string(out, vw_level_name(c->level));
        cf_json_member(out, "verdict", cf_verdict_name(c->verdict));
        fputs(", \"failed_requirement\": ", out);
        if (c->failed_req != VW_REQ_NONE && c->verdict != CF_PASS)
            cf_json_string(out, vw_req_id(c->failed_req));
        else
            fputs("null", out);
        fputs(", \"frames\": [", out);
        for (unsigned k = 0; k < c->nframes; k++)
            fprintf(out, "%s%u", k ? ", " : "", c->frames[k]);
        fputs("], \"message\": ", out);
        cf_json_string(out, c->message);
        if (c->impaired[0])
            cf_json_member(out, "impaired", c->impaired);
        fprintf(out, ", \"seconds\": %.3f}", c->seconds);
    }
    struct cf_summary s;
    cf_report_summary(r, &s);
    fprintf(out,
            "\n], \"summary\": {\"ran\": %u, \"passed\": %u, \"failed\": %u, \"timed_out\": %u, "
            "\"skipped\": %u, \"not_applicable\": %u, \"advisory\": %u, \"inconclusive\": %u, \"must_failed\": %u, "
            "\"seconds\": %.3f, \"capture\": ",
            s.ran, s.passed, s.failed, s.timed_out, s.skipped, s.not_applicable, s.advisory, s.inconclusive,
            s.must_failed,
            r->seconds);
    cf_json_string(out, r->capture);
    cf_json_member(out, "target", r->target);
    cf_json_member(out, "protocol", r->protocol);
    if (r->impair[0])
        cf_json_member(out, "impair", r->impair);
    fputs(", \"hooks\": {", out);
    for (unsigned i = 0; i < r->nhooks; i++) {
        fputs(i ? ", " : "", out);
        cf_json_string(out, r->hooks[i].name);
        fprintf(out, ": {\"offered\": %s, \"how\": ", r->hooks[i].offered ? "true" : "false");
        cf_json_string(out, r->hooks[i].how);
        fputs("}", out);
    }
    fputs("}}}\n", out);
}

void cf_report_write_junit(FILE *out, const struct cf_report *r)
{
    struct cf_summary s;
    cf_report_summary(r, &s);
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(out,
            "<testsuites><testsuite name=\"vitcp-conform\" tests=\"%zu\" failures=\"%u\" "
            "errors=\"%u\" skipped=\"%u\" time=\"%.3f\">\n",
            r->count, s.failed, s.timed_out, s.skipped + s.not_applicable + s.inconclusive, r->seconds);
    for (size_t i = 0; i < r->count; i++) {
        const struct cf_result *c = &r->cases[i];
        /* classname PROTOCOL.SECTION (a module's name, the draft's section: "NAME.4.3") */
        fputs("  <testcase classname=\"", out);
        cf_xml_text(out, c->protocol[0] ? c->protocol : cf_protocol_default()->name);
        fputs(".", out);
        cf_xml_text(out, c->section);
        fputs("\" name=\"", out);
        cf_xml_text(out, c->id);
        fprintf(out, "\" time=\"%.3f\">", c->seconds);
        const char *req = c->failed_req != VW_REQ_NONE ? vw_req_id(c->failed_req) : "";
        switch (c->verdict) {
        case CF_FAIL:
        case CF_TIMEOUT:
            fprintf(out, "<%s message=\"", c->verdict == CF_FAIL ? "failure" : "error");
            cf_xml_text(out, req);
            fputs(": ", out);
            cf_xml_text(out, c->message);
            fprintf(out, "\" type=\"%s\"/>", cf_verdict_name(c->verdict));
            break;
        case CF_SKIP:
        case CF_NOT_APPLICABLE:
        case CF_INCONCLUSIVE:
            fputs("<skipped message=\"", out);
            cf_xml_text(out, c->message);
            fputs("\"/>", out);
            break;
        case CF_PASS:
        case CF_ADVISORY: /* not a failure: the report names it below */
            break;
        }
        fputs("<system-out>requirements:", out);
        if (c->verdict == CF_ADVISORY) {
            fputs("\nadvisory ", out);
            cf_xml_text(out, req);
            fputs(": ", out);
            cf_xml_text(out, c->message);
        }
        for (unsigned k = 0; k < c->nreqs; k++) {
            fputc(' ', out);
            cf_xml_text(out, vw_req_id(c->reqs[k]));
        }
        fputs("</system-out></testcase>\n", out);
    }
    fputs("</testsuite></testsuites>\n", out);
}
