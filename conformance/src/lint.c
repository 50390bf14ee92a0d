/* Offline lint of captures over the wire library's VI/TCP session. */
#include "conform/lint.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conform/report.h"
#include "vitcp/pcap_reader.h"
#include "vitcp/vitcp_stream.h"

enum conn_kind { KIND_UNKNOWN, KIND_VITCP, KIND_OTHER };

struct lint_conn {
    enum conn_kind kind;
    int first_dir;            /* TCP direction that sent the first VI/TCP bytes: session dir 0 */
    bool dead[2];             /* framing lost in this direction (error or gap) */
    struct vw_vitcp_session session;
};

struct lint_ctx {
    const struct cf_lint_options *opt;
    struct cf_lint_result *res;
    struct lint_conn **conns;
    size_t nconns;
    /* the event being handled, for the segment callback */
    unsigned cur_conn;
    int cur_dir;
    uint64_t cur_frame;
    bool oom;
};

void cf_lint_options_init(struct cf_lint_options *o) { o->vitcp_port = VW_VITCP_DEFAULT_PORT; }

static void add_issue(struct lint_ctx *c, uint64_t frame, int dir, enum vw_req req,
                      enum vw_severity sev, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add_issue(struct lint_ctx *c, uint64_t frame, int dir, enum vw_req req,
                      enum vw_severity sev, const char *fmt, ...)
{
    struct cf_lint_result *r = c->res;
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct cf_lint_issue *grown = realloc(r->issues, cap * sizeof *grown);
        if (!grown) {
            c->oom = true;
            return;
        }
        r->issues = grown;
        r->cap = cap;
    }
    struct cf_lint_issue *i = &r->issues[r->count++];
    i->frame = frame;
    i->conn = c->cur_conn;
    i->dir = dir;
    i->req = req;
    i->severity = sev;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(i->detail, sizeof i->detail, fmt, ap);
    va_end(ap);
    if (sev == VW_SEV_ERROR) r->errors++;
    else if (sev == VW_SEV_WARN) r->warnings++;
    else r->notes++;
}

static struct lint_conn *conn_get(struct lint_ctx *c, unsigned id)
{
    if (id >= c->nconns) {
        size_t n = (size_t)id + 1 > c->nconns * 2 ? (size_t)id + 1 : c->nconns * 2;
        struct lint_conn **grown = realloc(c->conns, n * sizeof *grown);
        if (!grown)
            return NULL;
        memset(grown + c->nconns, 0, (n - c->nconns) * sizeof *grown);
        c->conns = grown;
        c->nconns = n;
    }
    if (!c->conns[id]) {
        c->conns[id] = calloc(1, sizeof **c->conns);
        if (c->conns[id])
            c->res->connections++;
    }
    return c->conns[id];
}

static void on_segment(void *ctx, const uint8_t *raw, size_t len, uint64_t off,
                       const struct vw_vitcp_seg *seg, enum vw_req err, const struct vw_findings *fs)
{
    (void)raw;
    (void)off;
    struct lint_ctx *c = ctx;
    c->res->segments++;
    c->res->bytes += len;
    if (err != VW_REQ_NONE)
        add_issue(c, c->cur_frame, c->cur_dir, err, VW_SEV_ERROR, "%s segment cannot be parsed",
                  vw_vitcp_type_name(seg->hdr.type));
    for (unsigned i = 0; i < fs->count; i++)
        add_issue(c, c->cur_frame, c->cur_dir, fs->item[i].req, fs->item[i].severity, "%s: %s",
                  vw_vitcp_type_name(seg->hdr.type), fs->item[i].detail);
    if (fs->dropped)
        add_issue(c, c->cur_frame, c->cur_dir, VW_REQ_NONE, VW_SEV_NOTE,
                  "%u more findings in this segment not shown", fs->dropped);
}

static void classify(struct lint_ctx *c, struct lint_conn *lc, const struct vn_tcp_event *ev)
{
    bool port = ev->src->port == c->opt->vitcp_port || ev->dst->port == c->opt->vitcp_port;
    bool plausible = ev->len >= VW_VITCP_SEG_HDR_LEN && vw_vitcp_plausible_header(ev->data, ev->len);
    if ((port && ev->offset == 0) || plausible) {
        if (vw_vitcp_session_init(&lc->session) != 0) {
            c->oom = true;
            lc->kind = KIND_OTHER;
            return;
        }
        lc->kind = KIND_VITCP;
        lc->first_dir = (int)ev->dir;
        c->res->vitcp_connections++;
        if (ev->offset != 0)
            add_issue(c, ev->frame, 0, VW_REQ_NONE, VW_SEV_NOTE,
                      "connection %u: capture starts mid-stream; connection state rules are relaxed", ev->conn);
    } else {
        lc->kind = KIND_OTHER;
    }
}

static void on_tcp(void *ctx, const struct vn_tcp_event *ev)
{
    struct lint_ctx *c = ctx;
    struct lint_conn *lc = conn_get(c, ev->conn);
    if (!lc) {
        c->oom = true;
        return;
    }
    c->cur_conn = ev->conn;
    c->cur_frame = ev->frame;
    if (lc->kind == KIND_UNKNOWN && ev->kind == VN_TCP_DATA && ev->len)
        classify(c, lc, ev);
    if (lc->kind != KIND_VITCP)
        return;
    int sdir = (int)ev->dir == lc->first_dir ? 0 : 1;
    c->cur_dir = sdir;
    switch (ev->kind) {
    case VN_TCP_OPEN:
        break;
    case VN_TCP_DATA:
        if (!lc->dead[sdir]) {
            enum vw_req e = vw_vitcp_session_feed(&lc->session, sdir, ev->data, ev->len, on_segment, c);
            if (e != VW_REQ_NONE) {
                lc->dead[sdir] = true;
                add_issue(c, ev->frame, sdir, e, VW_SEV_ERROR,
                          "framing lost: the rest of this direction is not checked");
            }
        }
        break;
    case VN_TCP_GAP:
        if (!lc->dead[sdir])
            add_issue(c, ev->frame, sdir, VW_REQ_NONE, VW_SEV_NOTE,
                      "capture gap of %zu bytes: the rest of this direction is not checked", ev->len);
        lc->dead[sdir] = true;
        break;
    case VN_TCP_RETX:
        if (ev->diff_bytes)
            add_issue(c, ev->frame, sdir, VW_REQ_VITCP_2_2_RETX_SAME_DATA, VW_SEV_ERROR,
                      "retransmission differs from the original in %zu bytes (first at stream offset %llu)",
                      ev->diff_bytes, (unsigned long long)ev->diff_offset);
        break;
    case VN_TCP_CLOSE: {
        struct vw_findings fs;
        vw_findings_clear(&fs);
        vw_vitcp_conn_finish(&lc->session.conn, &fs);
        for (unsigned i = 0; i < fs.count; i++)
            add_issue(c, ev->frame, -1, fs.item[i].req, fs.item[i].severity, "at close: %s",
                      fs.item[i].detail);
        vw_vitcp_session_free(&lc->session);
        lc->kind = KIND_OTHER; /* a reused connection number starts over */
        break;
    }
    }
}

static void on_notice(void *ctx, uint64_t frame, const char *msg)
{
    struct lint_ctx *c = ctx;
    add_issue(c, frame, -1, VW_REQ_NONE, VW_SEV_NOTE, "%s", msg);
}

int cf_lint_file(const char *path, const struct cf_lint_options *o, struct cf_lint_result *res,
                 char *err, size_t errlen)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(res, 0, sizeof *res);
    struct cf_lint_options defaults;
    if (!o) {
        cf_lint_options_init(&defaults);
        o = &defaults;
    }
    struct lint_ctx c = {.opt = o, .res = res};
    struct vn_reader_callbacks cb = {.tcp = on_tcp, .datagram = NULL, .notice = on_notice, .ctx = &c};
    struct vn_reader_stats st;
    int rc = vn_pcap_read(path, &cb, NULL, &st, err, errlen);
    res->frames = st.frames;
    for (size_t i = 0; i < c.nconns; i++) {
        if (c.conns[i] && c.conns[i]->kind == KIND_VITCP)
            vw_vitcp_session_free(&c.conns[i]->session);
        free(c.conns[i]);
    }
    free(c.conns);
    if (c.oom && rc == 0) {
        snprintf(err, errlen, "out of memory while linting %s", path);
        rc = -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return rc;
}

void cf_lint_result_free(struct cf_lint_result *res)
{
    free(res->issues);
    memset(res, 0, sizeof *res);
}

size_t cf_lint_count(const struct cf_lint_result *res, enum vw_req req, enum vw_severity sev)
{
    size_t n = 0;
    for (size_t i = 0; i < res->count; i++)
        if (res->issues[i].req == req && res->issues[i].severity >= sev)
            n++;
    return n;
}

void cf_lint_write_text(FILE *out, const char *path, const struct cf_lint_result *res)
{
    for (size_t i = 0; i < res->count; i++) {
        const struct cf_lint_issue *is = &res->issues[i];
        fprintf(out, "%s: frame %llu: conn %u: %s", path, (unsigned long long)is->frame, is->conn,
                vw_severity_name(is->severity));
        if (is->req != VW_REQ_NONE) {
            const struct vw_req_info *ri = vw_req_info(is->req);
            fprintf(out, " %s (%s %s)", ri->id, vw_level_name(ri->level), ri->section);
        }
        fprintf(out, ": %s\n", is->detail);
    }
    fprintf(out,
            "lint %s: %llu frames, %llu VI/TCP connections, %llu segments: %u errors, %u warnings, "
            "%u notes (%.3f s)\n",
            path, (unsigned long long)res->frames, (unsigned long long)res->vitcp_connections,
            (unsigned long long)res->segments, res->errors, res->warnings, res->notes, res->seconds);
}

void cf_lint_write_json(FILE *out, const char *path, const struct cf_lint_result *res)
{
    fputs("{\"file\": ", out);
    cf_json_string(out, path);
    fputs(", \"issues\": [", out);
    for (size_t i = 0; i < res->count; i++) {
        const struct cf_lint_issue *is = &res->issues[i];
        fprintf(out, "%s\n  {\"frame\": %llu, \"connection\": %u, \"severity\": ", i ? "," : "",
                (unsigned long long)is->frame, is->conn);
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
    fprintf(out,
            "\n], \"summary\": {\"frames\": %llu, \"vitcp_connections\": %llu, \"segments\": %llu, "
            "\"errors\": %u, \"warnings\": %u, \"notes\": %u, \"seconds\": %.3f}}\n",
            (unsigned long long)res->frames, (unsigned long long)res->vitcp_connections,
            (unsigned long long)res->segments, res->errors, res->warnings, res->notes, res->seconds);
}
