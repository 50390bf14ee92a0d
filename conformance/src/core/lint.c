/* Offline lint of captures, the protocol-neutral part: the capture reader,
 * the TCP connections and datagrams handed to the lint modules
 * (conform/protocol.h), and the issues they find. */
#include "conform/lint.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "vitcp/pcap_reader.h"

/* One TCP connection: the module whose protocol it is (NULL: not known
 * yet, or none of ours) and what the core keeps for it. */
struct lint_conn {
    bool classified;          /* its first data was seen: module says whose (NULL: no protocol's) */
    const struct cf_lint_module *module;
    int first_dir;            /* TCP direction that sent the first bytes: direction 0 */
    bool over;                /* closed: never a module's again */
    struct cf_lint_flow flow;
};

struct cf_lint {
    const struct cf_lint_options *opt;
    struct cf_lint_result *res;
    struct lint_conn **conns;
    size_t nconns;
    /* the event being handled: the module whose hook runs (its counters,
     * settings and run state), and what the issues added are labelled with:
     * the connection and the module of the last event that had one (so
     * notes made while a connection is classified, and the reader's own
     * notices, carry the one before; a quirk of the output kept as it was) */
    const struct cf_lint_module *module;
    unsigned cur_conn;
    const struct cf_lint_module *cur_module;
    int cur_dir;
    uint64_t cur_frame;
    bool oom;
    unsigned open_heavy;      /* connections of heavy modules open now */
    bool heavy_limit_noted;
    void *run_state[CF_PROTOCOLS_MAX];
};

static unsigned module_index(const struct cf_lint_module *m)
{
    unsigned i = 0;
    while (cf_lint_modules[i] && cf_lint_modules[i] != m)
        i++;
    return i;
}

void cf_lint_options_init(struct cf_lint_options *o)
{
    memset(o, 0, sizeof *o);
    for (unsigned i = 0; cf_lint_modules[i]; i++)
        o->port[i] = cf_lint_modules[i]->protocol->default_port;
}

/* A port option's value: 1..65535. */
static int parse_port(const char *name, const char *value, uint16_t *port, char *why, size_t whylen)
{
    char *end = NULL;
    unsigned long p = 0;
    if (*value && *value != '-')
        p = strtoul(value, &end, 10);
    if (!end || *end || p == 0 || p > 65535) {
        snprintf(why, whylen, "bad %s '%s' (1..65535)", name, value);
        return -1;
    }
    *port = (uint16_t)p;
    return 0;
}

int cf_lint_set_option(struct cf_lint_options *o, const char *name, const char *value, bool *takes_value,
                       char *why, size_t whylen)
{
    for (unsigned i = 0; cf_lint_modules[i]; i++) {
        const struct cf_lint_module *m = cf_lint_modules[i];
        if (m->port_option && strcmp(m->port_option, name) == 0) {
            if (takes_value) {
                *takes_value = true;
                return 1;
            }
            return parse_port(name, value, &o->port[i], why, whylen) < 0 ? -1 : 1;
        }
        for (const struct cf_option *op = m->options; op && op->name; op++) {
            if (strcmp(op->name, name) != 0)
                continue;
            if (takes_value) {
                *takes_value = op->takes_value;
                return 1;
            }
            if (m->check_option(name, value, why, whylen) < 0)
                return -1;
            o->value[i][op - m->options] = value ? value : "";
            return 1;
        }
    }
    return 0;
}

/* ------------------------------------------------- what modules call */

void cf_lint_issue(struct cf_lint *l, uint64_t frame, int dir, enum vw_req req, enum vw_severity sev,
                   const char *fmt, ...)
{
    struct cf_lint_result *r = l->res;
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct cf_lint_issue *grown = realloc(r->issues, cap * sizeof *grown);
        if (!grown) {
            l->oom = true;
            return;
        }
        r->issues = grown;
        r->cap = cap;
    }
    struct cf_lint_issue *i = &r->issues[r->count++];
    i->frame = frame;
    i->conn = l->cur_conn;
    i->module = l->cur_module;
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

void cf_lint_findings(struct cf_lint *l, enum vw_req err, const char *what, const char *err_text,
                      const struct vw_findings *fs)
{
    /* the decoders usually say why in a finding of the same rule */
    if (err != VW_REQ_NONE && !vw_findings_has(fs, err))
        cf_lint_issue(l, l->cur_frame, l->cur_dir, err, VW_SEV_ERROR, "%s %s", what, err_text);
    for (unsigned i = 0; i < fs->count; i++)
        cf_lint_issue(l, l->cur_frame, l->cur_dir, fs->item[i].req, fs->item[i].severity, "%s: %s", what,
                      fs->item[i].detail);
    if (fs->dropped)
        cf_lint_issue(l, l->cur_frame, l->cur_dir, VW_REQ_NONE, VW_SEV_NOTE,
                      "%u more findings in this %s not shown", fs->dropped, what);
}

/* Each finding of fs at frame and dir as "PREFIXdetail". */
static void findings_at(struct cf_lint *l, uint64_t frame, int dir, const char *prefix, const struct vw_findings *fs)
{
    for (unsigned i = 0; i < fs->count; i++)
        cf_lint_issue(l, frame, dir, fs->item[i].req, fs->item[i].severity, "%s%s", prefix, fs->item[i].detail);
}

uint64_t cf_lint_frame(const struct cf_lint *l) { return l->cur_frame; }
void cf_lint_set_frame(struct cf_lint *l, uint64_t frame) { l->cur_frame = frame; }
int cf_lint_dir(const struct cf_lint *l) { return l->cur_dir; }
void cf_lint_set_dir(struct cf_lint *l, int dir) { l->cur_dir = dir; }

const char *cf_lint_option(const struct cf_lint *l, unsigned k)
{
    return l->opt->value[module_index(l->module)][k];
}

void **cf_lint_run_state(struct cf_lint *l)
{
    return &l->run_state[module_index(l->module)];
}

void cf_lint_counted(struct cf_lint *l, unsigned k)
{
    l->res->counts[module_index(l->module)][k]++;
}

void cf_lint_out_of_memory(struct cf_lint *l)
{
    l->oom = true;
}

/* ---------------------------------------------------------- connections */

static struct lint_conn *conn_get(struct cf_lint *l, unsigned id)
{
    if (id >= l->nconns) {
        size_t n = (size_t)id + 1 > l->nconns * 2 ? (size_t)id + 1 : l->nconns * 2;
        struct lint_conn **grown = realloc(l->conns, n * sizeof *grown);
        if (!grown)
            return NULL;
        memset(grown + l->nconns, 0, (n - l->nconns) * sizeof *grown);
        l->conns = grown;
        l->nconns = n;
    }
    if (!l->conns[id])
        l->conns[id] = calloc(1, sizeof **l->conns);
    return l->conns[id];
}

static void conn_end(struct cf_lint *l, struct lint_conn *lc)
{
    if (!lc->module)
        return;
    lc->module->conn_free(&lc->flow);
    free(lc->flow.state);
    lc->flow.state = NULL;
    if (lc->module->heavy)
        l->open_heavy--;
    lc->module = NULL;
}

/* The module lc becomes (its state made): false out of memory. */
static bool conn_begin(struct cf_lint *l, struct lint_conn *lc, const struct cf_lint_module *m,
                       const struct vn_tcp_event *ev)
{
    if (!(lc->flow.state = calloc(1, m->conn_size ? m->conn_size : 1))) {
        l->oom = true;
        return false;
    }
    l->module = lc->module = m;
    if (m->heavy)
        l->open_heavy++;
    if (m->conn_open(l, &lc->flow, ev) != 0) {
        conn_end(l, lc);
        l->oom = true;
        return false;
    }
    return true;
}

/* The module whose port this is, NULL for none. */
static const struct cf_lint_module *module_of_port(const struct cf_lint *l, uint16_t port)
{
    for (unsigned i = 0; cf_lint_modules[i]; i++)
        if (cf_lint_modules[i]->protocol->transport == CF_TRANSPORT_STREAM && l->opt->port[i] == port && port)
            return cf_lint_modules[i];
    return NULL;
}

static const struct cf_lint_module *module_of_content(const uint8_t *data, size_t len)
{
    for (unsigned i = 0; cf_lint_modules[i]; i++)
        if (cf_lint_modules[i]->looks_like && cf_lint_modules[i]->looks_like(data, len))
            return cf_lint_modules[i];
    return NULL;
}

/* The heavy modules' titles with '/' between, for the note of their limit. */
static void heavy_titles(char *out, size_t n)
{
    size_t o = 0;
    out[0] = 0;
    for (unsigned i = 0; cf_lint_modules[i] && o < n; i++)
        if (cf_lint_modules[i]->heavy)
            o += (size_t)snprintf(out + o, n - o, "%s%s", o ? "/" : "", cf_lint_modules[i]->title);
}

/*
 * Which protocol a connection speaks, from its first data: the port of the
 * side that listens (the SYN's destination), then the other port, then the
 * content (the modules' looks_like, in the table's order). Without the SYN
 * the lower port goes first. This is the order Wireshark's TCP tries port
 * dissectors in (server port remembered from the SYN, else the lower
 * port), so lint and the plugin agree.
 */
static void classify(struct cf_lint *l, struct lint_conn *lc, const struct vn_tcp_event *ev)
{
    bool start = ev->offset == 0;
    uint16_t client = ev->dir == VN_C2S ? ev->src->port : ev->dst->port;
    uint16_t server = ev->dir == VN_C2S ? ev->dst->port : ev->src->port;
    uint16_t first = lc->flow.syn_seen ? server : client < server ? client : server;
    uint16_t second = first == server ? client : server;
    const struct cf_lint_module *m = start ? module_of_port(l, first) : NULL;
    if (!m && start)
        m = module_of_port(l, second);
    if (!m)
        m = module_of_content(ev->data, ev->len);
    lc->first_dir = (int)ev->dir;
    lc->classified = true;
    if (!m)
        return;
    if (m->heavy && l->open_heavy >= CF_LINT_MAX_HEAVY) {
        if (!l->heavy_limit_noted) {
            char titles[64];
            heavy_titles(titles, sizeof titles);
            cf_lint_issue(l, ev->frame, -1, VW_REQ_NONE, VW_SEV_NOTE,
                          "more than %d %s connections open at once: connection %u and later ones "
                          "beyond the limit are not checked", CF_LINT_MAX_HEAVY, titles, ev->conn);
        }
        l->heavy_limit_noted = true;
        return;
    }
    if (!conn_begin(l, lc, m, ev))
        return;
    /* a module that frames from the first byte of each direction cannot
     * check a capture that starts mid-stream (no resynchronisation) */
    if (m->from_start && (!lc->flow.syn_seen || ev->offset != 0) &&
        !(m->looks_like && m->looks_like(ev->data, ev->len))) {
        cf_lint_issue(l, ev->frame, -1, VW_REQ_NONE, VW_SEV_NOTE,
                      "connection %u: %s capture starts mid-stream: not checked", ev->conn, m->title);
        lc->flow.dead[0] = lc->flow.dead[1] = true;
    }
}

/* A connection of no protocol of ours whose segment starts like a module
 * that takes_over connections: that module's from here. */
static void take_over(struct cf_lint *l, struct lint_conn *lc, const struct vn_tcp_event *ev)
{
    for (unsigned i = 0; cf_lint_modules[i]; i++) {
        const struct cf_lint_module *m = cf_lint_modules[i];
        if (!m->takes_over || !m->looks_like(ev->data, ev->len))
            continue;
        if (m->heavy && l->open_heavy >= CF_LINT_MAX_HEAVY)
            return;
        lc->flow.dead[0] = lc->flow.dead[1] = false;
        lc->flow.upgraded = true;
        l->cur_module = m;
        conn_begin(l, lc, m, ev);
        return;
    }
}

static void on_tcp(void *ctx, const struct vn_tcp_event *ev)
{
    struct cf_lint *l = ctx;
    struct lint_conn *lc = conn_get(l, ev->conn);
    if (!lc) {
        l->oom = true;
        return;
    }
    l->cur_conn = ev->conn;
    l->cur_frame = ev->frame;
    if (ev->kind == VN_TCP_OPEN)
        lc->flow.syn_seen = ev->syn_seen;
    if (!lc->classified && ev->kind == VN_TCP_DATA && ev->len)
        classify(l, lc, ev);
    if (lc->classified && !lc->module && !lc->over && ev->kind == VN_TCP_DATA && ev->len)
        take_over(l, lc, ev);
    const struct cf_lint_module *m = lc->module;
    if (!m)
        return;
    struct cf_lint_flow *f = &lc->flow;
    struct vw_findings fs; /* what a direction's or the connection's end left */
    l->module = l->cur_module = m;
    int sdir = (int)ev->dir == lc->first_dir ? 0 : 1;
    l->cur_dir = sdir;
    switch (ev->kind) {
    case VN_TCP_OPEN:
        break;
    case VN_TCP_DATA:
        if (!f->dead[sdir])
            m->data(l, f, sdir, ev);
        break;
    case VN_TCP_GAP:
        if (!f->dead[sdir])
            cf_lint_issue(l, ev->frame, sdir, VW_REQ_NONE, VW_SEV_NOTE,
                          "capture gap of %zu bytes: the rest of this direction is not checked", ev->len);
        f->dead[sdir] = true;
        break;
    case VN_TCP_URGENT:
        if (m->urgent && !f->dead[sdir])
            m->urgent(l, f, sdir, ev);
        break;
    case VN_TCP_RETX:
        if (ev->diff_bytes && m->retransmission_rule != VW_REQ_NONE)
            cf_lint_issue(l, ev->frame, sdir, m->retransmission_rule, VW_SEV_ERROR,
                          "retransmission differs from the original in %zu bytes (first at stream offset %llu)",
                          ev->diff_bytes, (unsigned long long)ev->diff_offset);
        else if (ev->diff_bytes)
            cf_lint_issue(l, ev->frame, sdir, VW_REQ_NONE, VW_SEV_NOTE,
                          "TCP retransmission differs from the original in %zu bytes (first at stream offset "
                          "%llu); the first copy was checked",
                          ev->diff_bytes, (unsigned long long)ev->diff_offset);
        break;
    case VN_TCP_DIR_END:
        /* A direction's FIN: what it left unfinished can never finish. */
        if (m->direction_end) {
            vw_findings_clear(&fs);
            m->direction_end(l, f, sdir, &fs);
            findings_at(l, ev->frame, sdir, "at the end of this direction: ", &fs);
        }
        break;
    case VN_TCP_CLOSE:
        /* The connection's end: both FINs or an RST. The capture's end (or
         * a new SYN on the same ports) is not the connection's: modules
         * judge nothing there. */
        if (m->closed) {
            vw_findings_clear(&fs);
            m->closed(l, f, ev->reason == VN_CLOSE_FIN || ev->reason == VN_CLOSE_RST, &fs);
            findings_at(l, ev->frame, -1, "at close: ", &fs);
        }
        conn_end(l, lc);
        lc->over = true; /* a reused connection number is no protocol's */
        break;
    }
}

static void on_datagram(void *ctx, const struct vn_datagram *dg)
{
    struct cf_lint *l = ctx;
    for (unsigned i = 0; cf_lint_modules[i]; i++) {
        const struct cf_lint_module *m = cf_lint_modules[i];
        const struct conform_protocol *p = m->protocol;
        uint16_t port = l->opt->port[i];
        /* a datagram module's: its protocol's Ethertype, or its UDP port either way */
        bool mine = dg->kind == VN_DGRAM_ETH ? p->ethertype && dg->ethertype == p->ethertype
                                             : dg->kind == VN_DGRAM_UDP && (dg->dst.port == port || dg->src.port == port);
        if (p->transport != CF_TRANSPORT_DATAGRAM || !mine)
            continue;
        l->cur_frame = dg->frame;
        l->cur_conn = 0;
        l->cur_dir = -1;
        l->module = l->cur_module = m;
        m->datagram(l, dg);
        return;
    }
}

static void on_ack(void *ctx, unsigned conn, enum vn_dir dir, uint64_t acked, uint64_t frame)
{
    (void)frame;
    struct cf_lint *l = ctx;
    struct lint_conn *lc = conn < l->nconns ? l->conns[conn] : NULL;
    if (lc && lc->module && lc->module->ack)
        lc->module->ack(&lc->flow, (int)dir == lc->first_dir ? 0 : 1, acked);
}

static void on_notice(void *ctx, uint64_t frame, const char *msg)
{
    cf_lint_issue(ctx, frame, -1, VW_REQ_NONE, VW_SEV_NOTE, "%s", msg);
}

/* -------------------------------------------------------------- a run */

struct memory_frames {
    int linktype;
    const struct cf_lint_frame *frame;
    size_t count;
};

static int frames_of_memory(const struct memory_frames *m, const struct vn_reader_callbacks *cb,
                            struct vn_reader_stats *st, char *err, size_t errlen)
{
    struct vn_reader *r = vn_reader_new(m->linktype, cb, NULL);
    if (!r) {
        snprintf(err, errlen, "cannot read link type %d (unsupported, or out of memory)", m->linktype);
        return -1;
    }
    for (size_t i = 0; i < m->count; i++)
        vn_reader_feed(r, m->frame[i].ts_usec, m->frame[i].data, m->frame[i].len, m->frame[i].len);
    vn_reader_finish(r);
    *st = *vn_reader_stats(r);
    vn_reader_free(r);
    return 0;
}

/* A lint of the capture file path, else of the frames in memory m. */
static int lint_run(const char *path, const struct memory_frames *m, const struct cf_lint_options *o,
                    struct cf_lint_result *res, char *err, size_t errlen)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(res, 0, sizeof *res);
    struct cf_lint_options defaults;
    if (!o) {
        cf_lint_options_init(&defaults);
        o = &defaults;
    }
    /* until a connection or datagram names one, issues are the default protocol's */
    struct cf_lint l = {.opt = o, .res = res, .module = cf_lint_module_default(),
                        .cur_module = cf_lint_module_default()};
    struct vn_reader_callbacks cb = {.tcp = on_tcp, .datagram = on_datagram, .notice = on_notice, .ctx = &l,
                                     .ack = on_ack};
    struct vn_reader_stats st = {0}; /* a file that cannot be read at all has no stats */
    int rc = path ? vn_pcap_read(path, &cb, NULL, &st, err, errlen) : frames_of_memory(m, &cb, &st, err, errlen);
    res->frames = st.frames;
    for (size_t i = 0; i < l.nconns; i++) {
        if (l.conns[i])
            conn_end(&l, l.conns[i]);
        free(l.conns[i]);
    }
    free(l.conns);
    for (unsigned i = 0; cf_lint_modules[i]; i++)
        if (cf_lint_modules[i]->run_free)
            cf_lint_modules[i]->run_free(l.run_state[i]);
    if (l.oom && rc == 0) {
        snprintf(err, errlen, "out of memory while linting %s", path ? path : "the frames");
        rc = -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return rc;
}

int cf_lint_file(const char *path, const struct cf_lint_options *o, struct cf_lint_result *res,
                 char *err, size_t errlen)
{
    return lint_run(path, NULL, o, res, err, errlen);
}

int cf_lint_frames(int linktype, const struct cf_lint_frame *frames, size_t count,
                   const struct cf_lint_options *o, struct cf_lint_result *res, char *err, size_t errlen)
{
    struct memory_frames m = {linktype, frames, count};
    return lint_run(NULL, &m, o, res, err, errlen);
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

uint64_t cf_lint_counter(const struct cf_lint_result *res, const char *key)
{
    for (unsigned i = 0; cf_lint_modules[i]; i++)
        for (unsigned k = 0; k < CF_LINT_COUNTERS_MAX && cf_lint_modules[i]->counters[k].key; k++)
            if (strcmp(cf_lint_modules[i]->counters[k].key, key) == 0)
                return res->counts[i][k];
    return 0;
}
