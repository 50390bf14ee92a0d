/* Capture-based cases: NAME.meta + NAME.pcap[ng] compiled to case steps
 * (format in conform/proto/vitcp_capcase.h). */
#include "conform/proto/vitcp_capcase.h"
#include "conform/proto/vitcp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conform/meta.h"
#include "vitcp/pcap_reader.h"
#include "vitcp/vitcp_stream.h"

#define CAP_PDUS_MAX 4096

/* What a wildcard or rule without "TYPE:" applies to. */
enum { ANY_TYPE = VW_VITCP_TYPE_COUNT };

struct meta {
    struct cf_case *c; /* the case being loaded */
    char file[256];
    unsigned line;
    char *err;
    size_t errlen;
    /* directives */
    char capture[512];
    bool passive;        /* role passive: the implementation connects */
    bool tester_server;
    unsigned tester_line; /* line of an explicit 'tester' (0: none) */
    enum { DISC_DEFAULT, DISC_RUN, DISC_CAPTURE } disc;
    /* by segment type, [ANY_TYPE] for every type */
    bool wild[ANY_TYPE + 1][CF_F_COUNT];
    bool wild_data[ANY_TYPE + 1];
    /* 'rule ID FIELD...': the requirement a difference in the field breaks
     * (VW_REQ_NONE: the case's first one) */
    enum vw_req rule[ANY_TYPE + 1][CF_F_COUNT];
    unsigned rule_line;
    bool echo;
    /* 'only-if TYPE:FIELD=VALUE...': after the target's first segment of
     * TYPE, a mismatch makes the case not applicable (case.h) */
    struct {
        unsigned type;
        enum cf_field field;
        int64_t value;
    } only_if[8];
    unsigned nonly_if;
    bool compare_nops;
    unsigned timing_ms;
    enum { END_CLOSE, END_EXPECT_CLOSE, END_NONE } end;
};

static int meta_fail(struct meta *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int meta_fail(struct meta *m, const char *fmt, ...)
{
    char msg[384];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(m->err, m->errlen, "%s:%u: %s", m->file, m->line, msg);
    return -1;
}

bool cf_capcase_is_meta_name(const char *name)
{
    size_t n = strlen(name);
    if (n < 6 || strcmp(name + n - 5, ".meta") != 0)
        return false;
    static const char *const records[] = {".pcap.meta", ".pcapng.meta"};
    for (size_t k = 0; k < 2; k++) {
        size_t r = strlen(records[k]);
        if (n >= r && strcmp(name + n - r, records[k]) == 0)
            return false;
    }
    return true;
}

/* "TYPE:FIELD" or "FIELD": the type (or ANY_TYPE) and the field's name. */
static int split_type(struct meta *m, const char **w, int *type)
{
    *type = ANY_TYPE;
    const char *colon = strchr(*w, ':');
    if (!colon)
        return 0;
    char name[32]; /* longer than any type's name */
    snprintf(name, sizeof name, "%.*s", (int)(colon - *w), *w);
    *type = cf_proto_vitcp.type_by_name(name);
    if (*type < 0)
        return meta_fail(m, "unknown segment type in '%s'", *w);
    *w = colon + 1;
    return 0;
}

static int wildcard(struct meta *m, const char *w)
{
    int type;
    if (split_type(m, &w, &type) < 0)
        return -1;
    if (strcmp(w, "data") == 0) {
        m->wild_data[type] = true;
        return 0;
    }
    int f = cf_field_by_name(w);
    if (f < 0)
        return meta_fail(m, "unknown field '%s' (msg, ack, rxposted, imm, mtu, window, payload, crc, data, ...)", w);
    m->wild[type][f] = true;
    return 0;
}

/* 'rule ID FIELD...' (FIELD or TYPE:FIELD, as in 'wildcard'). */
static int rule_line(struct meta *m, char **tok, int n)
{
    if (n < 3)
        return meta_fail(m, "'rule' needs a requirement ID and field names");
    enum vw_req r = vw_req_by_id(tok[1]);
    if (r == VW_REQ_NONE)
        return meta_fail(m, "unknown requirement ID '%s'", tok[1]);
    for (int i = 2; i < n; i++) {
        const char *w = tok[i];
        int type;
        if (split_type(m, &w, &type) < 0)
            return -1;
        int f = cf_field_by_name(w);
        if (f < 0)
            return meta_fail(m, "unknown field '%s' (a rule names header fields: msg, eom, imm, payload, ...)", w);
        m->rule[type][f] = r;
    }
    if (!m->rule_line)
        m->rule_line = m->line;
    return 0;
}

/* 'only-if TYPE:FIELD=VALUE...': what the case needs of the target's
 * choices (3.6: the CRC option in its accept); 0, or -1. */
static int only_if_line(struct meta *m, char **tok, int n)
{
    if (n < 2)
        return meta_fail(m, "'only-if' needs TYPE:FIELD=VALUE");
    for (int i = 1; i < n; i++) {
        const char *w = tok[i];
        int type;
        if (split_type(m, &w, &type) < 0)
            return -1;
        const char *eq = strchr(w, '=');
        char name[32];
        if (type == ANY_TYPE || !eq || (size_t)(eq - w) >= sizeof name)
            return meta_fail(m, "'only-if' takes TYPE:FIELD=VALUE, got '%s'", tok[i]);
        memcpy(name, w, (size_t)(eq - w));
        name[eq - w] = 0;
        int f = cf_field_by_name(name);
        char *end;
        long long v = strtoll(eq + 1, &end, 0);
        if (f < 0 || !eq[1] || *end)
            return meta_fail(m, "'only-if': unknown field or bad number in '%s'", tok[i]);
        if (m->nonly_if == sizeof m->only_if / sizeof m->only_if[0])
            return meta_fail(m, "too many 'only-if' conditions");
        m->only_if[m->nonly_if].type = (unsigned)type;
        m->only_if[m->nonly_if].field = (enum cf_field)f;
        m->only_if[m->nonly_if].value = v;
        m->nonly_if++;
    }
    return 0;
}

/* One line of the module's own keys (the shared ones: cf_meta_read):
 * 0 taken, -1 bad (m->err says why), 1 not the module's. */
static int meta_line(struct meta *m, struct cf_case *c, char **tok, int n)
{
    const char *k = tok[0];
    if (strcmp(k, "capture") == 0) {
        if (n > 2)
            return meta_fail(m, "'%s' takes one value", k);
        if (strlen(tok[1]) >= sizeof m->capture)
            return meta_fail(m, "capture name too long");
        snprintf(m->capture, sizeof m->capture, "%s", tok[1]);
        return 0;
    }
    if (strcmp(k, "role") == 0) {
        if (n != 2 || (strcmp(tok[1], "active") != 0 && strcmp(tok[1], "passive") != 0))
            return meta_fail(m, "'role' is active or passive");
        m->passive = c->passive = tok[1][0] == 'p';
        return 0;
    }
    if (strcmp(k, "tester") == 0) {
        if (n != 2 || (strcmp(tok[1], "client") != 0 && strcmp(tok[1], "server") != 0))
            return meta_fail(m, "'tester' is client or server");
        m->tester_server = tok[1][0] == 's';
        m->tester_line = m->line;
        return 0;
    }
    if (strcmp(k, "wildcard") == 0) {
        for (int i = 1; i < n; i++)
            if (wildcard(m, tok[i]) < 0)
                return -1;
        return 0;
    }
    if (strcmp(k, "rule") == 0)
        return rule_line(m, tok, n);
    if (strcmp(k, "only-if") == 0)
        return only_if_line(m, tok, n);
    if (strcmp(k, "echo") == 0) {
        if (n != 2 || strcmp(tok[1], "yes") != 0)
            return meta_fail(m, "'echo' takes yes");
        m->echo = true;
        return 0;
    }
    if (strcmp(k, "discriminator") == 0) {
        if (n != 2 || (strcmp(tok[1], "capture") != 0 && strcmp(tok[1], "run") != 0))
            return meta_fail(m, "'discriminator' is capture or run");
        m->disc = tok[1][0] == 'r' ? DISC_RUN : DISC_CAPTURE;
        return 0;
    }
    if (strcmp(k, "nops") == 0) {
        if (n != 2 || (strcmp(tok[1], "skip") != 0 && strcmp(tok[1], "compare") != 0))
            return meta_fail(m, "'nops' is skip or compare");
        m->compare_nops = tok[1][0] == 'c';
        return 0;
    }
    if (strcmp(k, "timing") == 0 || strcmp(k, "timeout") == 0) {
        if (n != 2)
            return meta_fail(m, "'%s' takes milliseconds", k);
        char *end;
        errno = 0;
        unsigned long v = strtoul(tok[1], &end, 10);
        if (tok[1][0] == '-' || *end || errno || v > 600000)
            return meta_fail(m, "'%s' is not a number in 1..%u", tok[1], 600000);
        if (v == 0)
            return meta_fail(m, "'%s' must be at least 1 ms", k);
        if (k[3] == 'i')
            m->timing_ms = (unsigned)v;
        else
            c->timeout_ms = (unsigned)v;
        return 0;
    }
    if (strcmp(k, "end") == 0) {
        if (n == 2 && strcmp(tok[1], "close") == 0)
            m->end = END_CLOSE;
        else if (n == 2 && strcmp(tok[1], "expect-close") == 0)
            m->end = END_EXPECT_CLOSE;
        else if (n == 2 && strcmp(tok[1], "none") == 0)
            m->end = END_NONE;
        else
            return meta_fail(m, "'end' is close, expect-close or none");
        return 0;
    }
    return 1;
}

static enum cf_meta_key meta_key(void *ctx, const char *key, char *value, const char *path, unsigned lineno,
                                 char *err, size_t errlen)
{
    (void)path, (void)err, (void)errlen; /* m->err is err, m->file path */
    struct meta *m = ctx;
    m->line = lineno;
    char *tok[32] = {(char *)key};
    int n = 1;
    char *save = NULL;
    for (char *t = strtok_r(value, " \t\r", &save); t; t = strtok_r(NULL, " \t\r", &save)) {
        if (n == 32) {
            meta_fail(m, "too many words on one line");
            return CF_META_KEY_BAD;
        }
        tok[n++] = t;
    }
    int rc = meta_line(m, m->c, tok, n);
    return rc == 0 ? CF_META_KEY_TAKEN : rc < 0 ? CF_META_KEY_BAD : CF_META_KEY_UNKNOWN;
}

/* Every 'rule' names one of the case's requirements. */
static int check_rules(struct meta *m, const struct cf_case *c)
{
    for (unsigned t = 0; t <= ANY_TYPE; t++)
        for (unsigned f = 0; f < CF_F_COUNT; f++) {
            enum vw_req r = m->rule[t][f];
            if (r != VW_REQ_NONE && !cf_case_has_req(c, r)) {
                m->line = m->rule_line;
                return meta_fail(m, "'rule %s': the case's 'require' lines must name it", vw_req_id(r));
            }
        }
    return 0;
}

/* What the role implies, once every line is read: role passive makes the
 * tester the capture's server, and the implementation's discriminators (its
 * own configuration, not the capture's) wildcards unless 'discriminator
 * capture' asks for them. */
static int settle_role(struct meta *m, struct cf_case *c)
{
    if (m->passive) {
        if (m->tester_line && !m->tester_server) {
            m->line = m->tester_line;
            return meta_fail(m, "'tester client' needs role active: with role passive the implementation "
                                "connects to the tester, which plays the capture's server");
        }
        m->tester_server = true;
        if (m->disc != DISC_CAPTURE) {
            m->wild[VW_VITCP_CONNECT_REQUEST][CF_F_CALLING_LEN] = true;
            m->wild[VW_VITCP_CONNECT_REQUEST][CF_F_CALLED_LEN] = true;
        }
    } else if (m->disc == DISC_RUN) {
        c->flags |= CF_VITCP_CASE_RUN_DISC;
        m->wild[ANY_TYPE][CF_F_CALLED_LEN] = true; /* the accept copies what the tester sent */
    }
    return 0;
}

/* ------------------------------------------------------------ capture */

struct cap_pdu {
    int side;          /* 0: the TCP client, 1: the server */
    uint64_t frame;
    size_t off, len;   /* in the blob */
    struct vw_vitcp_seg seg; /* pointers are not kept (the blob may move) */
    size_t payload_off; /* payload offset inside the PDU */
};

struct cap_read {
    struct vw_vitcp_session session;
    bool session_ok;
    bool have_conn;
    unsigned conn;
    int first_dir;     /* TCP direction of the first bytes: session direction 0 */
    int cur_side;
    uint64_t cur_frame;
    struct cf_case *c;  /* the PDUs go to its blob */
    size_t blob_cap;
    struct cap_pdu *pdus;
    size_t npdus, pdus_cap;
    bool other_conn;   /* bytes of a second connection were seen */
    char problem[256];
};

static void cap_problem(struct cap_read *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cap_problem(struct cap_read *x, const char *fmt, ...)
{
    if (x->problem[0])
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->problem, sizeof x->problem, fmt, ap);
    va_end(ap);
}

static void on_seg(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_vitcp_seg *seg,
                   enum vw_req err, const struct vw_findings *fs)
{
    (void)off;
    (void)fs;
    struct cap_read *x = ctx;
    if (err != VW_REQ_NONE) {
        cap_problem(x, "frame %llu: a segment cannot be parsed (%s)", (unsigned long long)x->cur_frame,
                    vw_req_id(err));
        return;
    }
    if (x->npdus == CAP_PDUS_MAX) {
        cap_problem(x, "more than %d PDUs", CAP_PDUS_MAX);
        return;
    }
    if (x->npdus == x->pdus_cap) {
        size_t cap = x->pdus_cap ? x->pdus_cap * 2 : 32;
        struct cap_pdu *g = realloc(x->pdus, cap * sizeof *g);
        if (!g) {
            cap_problem(x, "out of memory");
            return;
        }
        x->pdus = g;
        x->pdus_cap = cap;
    }
    size_t blob_off = x->c->blob_len;
    if (!cf_capture_blob(x->c, &x->blob_cap, raw, len)) {
        cap_problem(x, "out of memory");
        return;
    }
    struct cap_pdu *p = &x->pdus[x->npdus++];
    p->side = x->cur_side;
    p->frame = x->cur_frame;
    p->off = blob_off;
    p->len = len;
    p->seg = *seg;
    p->payload_off = seg->payload ? (size_t)(seg->payload - raw) : 0;
    p->seg.payload = NULL;
    p->seg.ce.options = NULL;
}

static void on_tcp(void *ctx, const struct vn_tcp_event *ev)
{
    struct cap_read *x = ctx;
    if (ev->kind != VN_TCP_DATA && ev->kind != VN_TCP_GAP)
        return;
    if (!x->have_conn && ev->kind == VN_TCP_DATA && ev->len) {
        x->have_conn = true;
        x->conn = ev->conn;
        x->first_dir = (int)ev->dir;
        x->session_ok = vw_vitcp_session_init(&x->session) == 0;
        if (!x->session_ok)
            cap_problem(x, "out of memory");
    }
    if (!x->have_conn)
        return;
    if (ev->conn != x->conn) {
        x->other_conn = true;
        return;
    }
    if (ev->kind == VN_TCP_GAP) {
        cap_problem(x, "frame %llu: %zu bytes were not captured", (unsigned long long)ev->frame, ev->len);
        return;
    }
    if (!x->session_ok || x->problem[0])
        return;
    x->cur_side = ev->dir == VN_C2S ? 0 : 1;
    x->cur_frame = ev->frame;
    int sdir = (int)ev->dir == x->first_dir ? 0 : 1;
    enum vw_req e = vw_vitcp_session_feed(&x->session, sdir, ev->data, ev->len, on_seg, x);
    if (e != VW_REQ_NONE)
        cap_problem(x, "frame %llu: VI/TCP framing lost (%s)", (unsigned long long)ev->frame, vw_req_id(e));
}

/* ------------------------------------------------------------ steps */

/* The next step, of kind; NULL (m->err says why) when the case is full. */
static struct cf_step *add_step(struct meta *m, struct cf_case *c, enum cf_step_kind kind)
{
    struct cf_step *st = cf_capture_step(c, kind, 0);
    if (!st)
        meta_fail(m, "the capture needs more than %d steps (PDUs to send and expect); cut it down", CF_MAX_STEPS);
    return st;
}

static enum vw_req rule_of(const struct meta *m, unsigned type, enum cf_field f);
static bool target_choice(const struct meta *m, unsigned type, enum cf_field f);

/* Not compared: a wildcard, or the target's own choice. */
static bool is_wild(const struct meta *m, unsigned type, enum cf_field f)
{
    return m->wild[ANY_TYPE][f] || (type < ANY_TYPE && m->wild[type][f]) || target_choice(m, type, f);
}

/* Fields whose value is the target's own choice, not the draft's, compared
 * only when a 'rule' line names them (which, and why: docs/conformance.md
 * C32); the session judges them all the same. */
static bool target_choice(const struct meta *m, unsigned type, enum cf_field f)
{
    if (rule_of(m, type, f) != VW_REQ_NONE)
        return false;
    bool ce = type == VW_VITCP_CONNECT_REQUEST || type == VW_VITCP_CONNECT_ACCEPT;
    switch (f) {
    case CF_F_RXPOSTED: case CF_F_CRC: return true;
    case CF_F_ATTRS: case CF_F_WINDOW: case CF_F_MTU: case CF_F_OPT_CRC: case CF_F_OPT_URGENT: return ce;
    case CF_F_LEVEL: return ce && m->passive;
    default: return false;
    }
}

/* f=v in st, unless f is not compared in a segment of st's type. */
static void add_match(const struct meta *m, struct cf_step *st, enum cf_field f, int64_t v, bool relative)
{
    struct cf_match *mt = is_wild(m, st->type, f) ? NULL : cf_capture_match(st, f, v);
    if (mt)
        mt->relative = relative;
}

static bool data_wild(const struct meta *m, unsigned type)
{
    return m->wild_data[ANY_TYPE] || (type < ANY_TYPE && m->wild_data[type]);
}

/* Expect step for a PDU of the target's side: every field of its type, the
 * message numbers relative, the payload bytes exact, minus wildcards. */
static void expect_from(const struct meta *m, const struct cf_case *c, struct cf_step *st, const struct cap_pdu *p)
{
    const struct vw_vitcp_seg *s = &p->seg;
    unsigned type = s->hdr.type;
    st->type = type;
    st->wait_ms = m->timing_ms;
    /* a CE segment's length also follows its discriminators */
    bool len_wild = is_wild(m, type, CF_F_PAYLOAD) || is_wild(m, type, CF_F_CRC) || is_wild(m, type, CF_F_SEGLEN) ||
                    (s->has_ce && (is_wild(m, type, CF_F_CALLING_LEN) || is_wild(m, type, CF_F_CALLED_LEN)));
    struct {
        enum cf_field f;
        int64_t v;
        bool present;
    } fields[] = {
        {CF_F_VERSION, s->hdr.version, true},
        {CF_F_EOM, !!(s->hdr.flags & VW_VITCP_FLAG_EOM), true},
        {CF_F_IDV, !!(s->hdr.flags & VW_VITCP_FLAG_IDV), true},
        {CF_F_TXERR, !!(s->hdr.flags & VW_VITCP_FLAG_TXERR), true},
        {CF_F_SEGLEN, s->hdr.seg_len, !len_wild},
        {CF_F_OFFSET, s->hdr.data_offset, true},
        {CF_F_IMM, s->hdr.imm_data, true},
        {CF_F_RXPOSTED, s->hdr.rx_desc_posted, true},
        {CF_F_ERR, s->hdr.remote_err, true},
        {CF_F_ATTRS, s->ce.attrs, s->has_ce},
        {CF_F_LEVEL, s->ce.attrs & VW_VITCP_ATTR_RELIABILITY_MASK, s->has_ce},
        {CF_F_MTU, s->ce.mtu, s->has_ce},
        {CF_F_WINDOW, s->ce.rdma_read_window, s->has_ce},
        {CF_F_CALLING_LEN, s->ce.calling_disc_len, s->has_ce},
        {CF_F_CALLED_LEN, s->ce.called_disc_len, s->has_ce},
        {CF_F_RDMA_ADDR, (int64_t)s->rdma.addr, s->has_rdma},
        {CF_F_RDMA_HANDLE, s->rdma.handle, s->has_rdma},
        {CF_F_RDMA_LEN, s->rdma.length, s->has_rdma},
        {CF_F_OPT_CRC, s->ce.opt_crc, s->has_ce},
        {CF_F_OPT_URGENT, s->ce.opt_urgent, s->has_ce},
        {CF_F_OPT_UNKNOWN, s->ce.opt_unknown, s->has_ce},
        {CF_F_PAYLOAD, (int64_t)s->payload_len, true},
        {CF_F_CRC, s->has_crc, true},
    };
    for (size_t i = 0; i < sizeof fields / sizeof *fields; i++)
        if (fields[i].present)
            add_match(m, st, fields[i].f, fields[i].v, false);
    /* Message numbers, packetdrill style: relative to the initial number of
     * the sender (an RdmaReadResponse carries the tester's request number;
     * a ConnectReject/NoMatch carries none worth comparing). */
    bool refuse = type == VW_VITCP_CONNECT_REJECT || type == VW_VITCP_CONNECT_NOMATCH;
    /* (a CE segment's number is the initial number itself: +0 by definition) */
    if (!refuse && !s->has_ce) {
        bool tester_base = type == VW_VITCP_RDMA_READ_RESP;
        bool known = tester_base ? c->cap_tester_init_known : c->cap_target_init_known;
        uint32_t base = tester_base ? c->cap_tester_init : c->cap_target_init;
        if (known)
            add_match(m, st, CF_F_MSG, (int64_t)(int32_t)(s->hdr.msg_num - base), true);
    }
    if (c->cap_tester_init_known && type != VW_VITCP_CONNECT_REQUEST && !refuse)
        add_match(m, st, CF_F_ACK, (int64_t)(int32_t)(s->hdr.msg_ack - c->cap_tester_init), true);
    if (s->payload_len && !data_wild(m, type) && !is_wild(m, type, CF_F_PAYLOAD))
        st->data_capture = true;
}

static void set_pdu(struct cf_step *st, size_t i, const struct cap_pdu *p)
{
    st->cap_pdu = (unsigned)i + 1;
    st->line = (unsigned)p->frame;
    st->pdu_off = p->off;
    st->pdu_len = p->len;
    st->cap_data_off = p->off + p->payload_off;
}

static enum vw_req rule_of(const struct meta *m, unsigned type, enum cf_field f)
{
    if (type < ANY_TYPE && m->rule[type][f] != VW_REQ_NONE)
        return m->rule[type][f];
    return m->rule[ANY_TYPE][f];
}

/* The fields of expect step idx that have a 'rule' move into check steps
 * right after it, one per requirement: the expect compares the rest first,
 * and a difference in a ruled field names its rule (as C24's checks). */
static int split_rules(struct meta *m, struct cf_case *c, unsigned idx)
{
    for (;;) {
        const struct cf_step *ex = &c->steps[idx];
        enum vw_req req = VW_REQ_NONE;
        for (unsigned k = 0; k < ex->nmatch && req == VW_REQ_NONE; k++)
            req = rule_of(m, ex->type, ex->match[k].field);
        if (req == VW_REQ_NONE)
            return 0;
        struct cf_step *chk = add_step(m, c, CF_STEP_CHECK);
        if (!chk)
            return -1;
        struct cf_step *e = &c->steps[idx];
        chk->type = e->type;
        chk->req = req;
        chk->cap_pdu = e->cap_pdu;
        chk->line = e->line;
        chk->pdu_off = e->pdu_off;
        chk->pdu_len = e->pdu_len;
        chk->cap_data_off = e->cap_data_off;
        unsigned keep = 0;
        for (unsigned k = 0; k < e->nmatch; k++) {
            if (rule_of(m, e->type, e->match[k].field) == req)
                chk->match[chk->nmatch++] = e->match[k];
            else
                e->match[keep++] = e->match[k];
        }
        e->nmatch = keep;
    }
}

static bool same_disc(const uint8_t *a, unsigned alen, const uint8_t *b, unsigned blen)
{
    return alen == blen && memcmp(a, b, alen < VW_VITCP_DISC_MAX ? alen : VW_VITCP_DISC_MAX) == 0;
}

/* Role passive: what the captured ConnectAccept derived from the captured
 * request (copied discriminators, the same level, an MTU not above the
 * request's), the replayed one derives from the live request. An accept that
 * broke a rule in the capture is replayed breaking it. */
static unsigned answer_derivation(const struct vw_vitcp_ce *req, const struct vw_vitcp_ce *acc)
{
    unsigned how = 0;
    if (same_disc(req->calling_disc, req->calling_disc_len, acc->calling_disc, acc->calling_disc_len) &&
        same_disc(req->called_disc, req->called_disc_len, acc->called_disc, acc->called_disc_len))
        how |= CF_ANSWER_DISC;
    if ((req->attrs & VW_VITCP_ATTR_RELIABILITY_MASK) == (acc->attrs & VW_VITCP_ATTR_RELIABILITY_MASK))
        how |= CF_ANSWER_LEVEL;
    if (acc->mtu <= req->mtu)
        how |= CF_ANSWER_MTU;
    if (!acc->opt_crc || req->opt_crc)
        how |= CF_ANSWER_CRC;
    return how;
}

/* Role active: the replayed request asks for the level the target offers
 * ($level, engine.h), so an accept that had the captured request's level
 * must have the run's. */
static void level_of_run(struct cf_step *st, const struct vw_vitcp_ce *req, const struct vw_vitcp_ce *acc)
{
    if ((req->attrs & VW_VITCP_ATTR_RELIABILITY_MASK) != (acc->attrs & VW_VITCP_ATTR_RELIABILITY_MASK))
        return; /* a faulty capture stays faulty */
    for (unsigned k = 0; k < st->nmatch; k++)
        if (st->match[k].field == CF_F_LEVEL) {
            st->match[k].var = CF_VAR_LEVEL;
            st->match[k].value = 0;
        }
}

/* Role passive with 'echo': the implementation's own messages before the
 * tester's first Send carry whatever immediate data its driver gives them
 * (vipl-peer --connect: IDV with 0; another: none), so IDV and the value
 * are not compared unless a 'rule' names them. */
static void drop_own_immediate(struct cf_step *st)
{
    unsigned keep = 0;
    for (unsigned k = 0; k < st->nmatch; k++)
        if (st->match[k].field != CF_F_IDV && st->match[k].field != CF_F_IMM)
            st->match[keep++] = st->match[k];
    st->nmatch = keep;
}

static int compile(struct meta *m, struct cf_case *c, const struct cap_read *x)
{
    int tester_side = m->tester_server ? 1 : 0;
    /* Initial message numbers of both sides as the capture shows them. */
    for (size_t i = 0; i < x->npdus; i++) {
        const struct cap_pdu *p = &x->pdus[i];
        unsigned t = p->seg.hdr.type;
        if (t != VW_VITCP_CONNECT_REQUEST && t != VW_VITCP_CONNECT_ACCEPT)
            continue;
        if (p->side == tester_side && !c->cap_tester_init_known) {
            c->cap_tester_init_known = true;
            c->cap_tester_init = p->seg.hdr.msg_num;
        } else if (p->side != tester_side && !c->cap_target_init_known) {
            c->cap_target_init_known = true;
            c->cap_target_init = p->seg.hdr.msg_num;
        }
    }
    /* role active: the tester's side opens with its ConnectRequest; role
     * passive: the implementation's side does, and the tester answers */
    int opener = m->passive ? 1 - tester_side : tester_side;
    if (!x->npdus || x->pdus[0].side != opener || x->pdus[0].seg.hdr.type != VW_VITCP_CONNECT_REQUEST)
        return meta_fail(m, "%s: the %s side (%s) must send the first PDU, a ConnectRequest (role %s)", c->file,
                         m->passive ? "implementation's" : "tester's",
                         (opener == 1) ? "server" : "client", m->passive ? "passive" : "active");
    struct cf_step *st = NULL;
    unsigned echoes = 0;
    bool tester_sent = false; /* the tester has sent a Send (role passive, 'echo') */
    bool only_if_done[sizeof m->only_if / sizeof m->only_if[0]] = {false};
    if (!add_step(m, c, m->passive ? CF_STEP_ACCEPT : CF_STEP_CONNECT))
        return -1;
    for (size_t i = 0; i < x->npdus; i++) {
        const struct cap_pdu *p = &x->pdus[i];
        unsigned t = p->seg.hdr.type;
        if (p->side == tester_side) {
            st = add_step(m, c, CF_STEP_SEND);
            if (!st)
                return -1;
            st->type = t;
            st->replay_crc = p->seg.has_crc;
            st->noeom = !(p->seg.hdr.flags & VW_VITCP_FLAG_EOM);
            set_pdu(st, i, p);
            if (m->passive && t == VW_VITCP_CONNECT_ACCEPT)
                st->replay_answer = answer_derivation(&x->pdus[0].seg.ce, &p->seg.ce);
            tester_sent |= t == VW_VITCP_SEND;
            if (m->echo && t == VW_VITCP_SEND && (p->seg.hdr.flags & VW_VITCP_FLAG_EOM)) {
                /* vipl-peer echoes each Send: one echo segment of the
                 * whole message, its own next number */
                st = add_step(m, c, CF_STEP_EXPECT);
                if (!st)
                    return -1;
                st->type = VW_VITCP_SEND;
                st->wait_ms = m->timing_ms;
                st->data_echo = true;
                set_pdu(st, i, p);
                add_match(m, st, CF_F_TXERR, 0, false);
                /* the echo carries a trailer iff the tester's Send did (3.5) */
                add_match(m, st, CF_F_CRC, p->seg.has_crc, false);
                /* and the message's immediate data */
                bool idv = p->seg.hdr.flags & VW_VITCP_FLAG_IDV;
                add_match(m, st, CF_F_IDV, idv, false);
                if (idv)
                    add_match(m, st, CF_F_IMM, p->seg.hdr.imm_data, false);
                /* the target's next message (V14); its Message ACK is not
                 * compared: below Reliable Reception it need not name the
                 * message (vipl-peer sends 0) */
                echoes++;
                add_match(m, st, CF_F_MSG, echoes, true);
                if (split_rules(m, c, c->nsteps - 1) < 0)
                    return -1;
            }
        } else {
            if (t == VW_VITCP_NOP && !m->compare_nops)
                continue;
            /* replaced by the echoes; with role passive the implementation's
             * own Sends before the tester's first one are compared as captured */
            if (m->echo && t == VW_VITCP_SEND && (tester_sent || !m->passive))
                continue;
            st = add_step(m, c, CF_STEP_EXPECT);
            if (!st)
                return -1;
            expect_from(m, c, st, p);
            set_pdu(st, i, p);
            if (!m->passive && t == VW_VITCP_CONNECT_ACCEPT)
                level_of_run(st, &x->pdus[0].seg.ce, &p->seg.ce);
            if (m->echo && m->passive && t == VW_VITCP_SEND)
                drop_own_immediate(st); /* its own message's immediate data is its driver's */
            if (split_rules(m, c, c->nsteps - 1) < 0)
                return -1;
            for (unsigned k = 0; k < m->nonly_if; k++) {
                if (m->only_if[k].type != t || only_if_done[k])
                    continue;
                only_if_done[k] = true;
                struct cf_step *oi = add_step(m, c, CF_STEP_ONLY_IF);
                if (!oi)
                    return -1;
                oi->type = t;
                set_pdu(oi, i, p);
                cf_capture_match(oi, m->only_if[k].field, m->only_if[k].value); /* compared even where wild */
            }
            if (m->echo && t == VW_VITCP_SEND && (p->seg.hdr.flags & VW_VITCP_FLAG_EOM))
                echoes++; /* the echoes number on after it */
        }
    }
    if (m->end != END_NONE) {
        st = add_step(m, c, m->end == END_CLOSE ? CF_STEP_CLOSE : CF_STEP_EXPECT_CLOSE);
        if (!st)
            return -1;
        st->wait_ms = m->timing_ms;
    }
    return 0;
}

/* 'frame N ID' (the shared key): the steps compiled from capture frame N
 * check ID (a requirement of the case). 0, or -1. */
static int frame_rules(struct meta *m, struct cf_case *c, const struct cf_meta_frames *frames)
{
    unsigned unfound = cf_capture_frame_rules(c, frames, false);
    for (unsigned i = 0; i < frames->nframe; i++) {
        bool listed = cf_case_has_req(c, frames->frame_req[i]);
        if (!listed || i == unfound) {
            snprintf(m->err, m->errlen, "%s: 'frame %lu %s': %s", m->file, frames->frame_no[i],
                     vw_req_id(frames->frame_req[i]),
                     !listed ? "the case's 'require' lines must name it" : "no PDU of the capture is in that frame");
            return -1;
        }
    }
    return 0;
}

static int read_capture(struct meta *m, struct cap_read *x)
{
    struct vn_reader_callbacks cb = {.tcp = on_tcp, .datagram = NULL, .notice = NULL, .ctx = x};
    char why[256] = "";
    int rc = vn_pcap_read(x->c->file, &cb, NULL, NULL, why, sizeof why);
    if (x->session_ok)
        vw_vitcp_session_free(&x->session);
    const char *problem = rc < 0 ? why
                          : x->problem[0] ? x->problem
                          : !x->npdus ? "no VI/TCP segments"
                          : x->other_conn ? "more than one TCP connection (a capture case replays one)"
                                          : NULL;
    if (!problem)
        return 0;
    snprintf(m->err, m->errlen, "%s: %s", x->c->file, problem);
    return -1;
}

int cf_capcase_load(const char *meta_path, struct cf_case *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->proto = &cf_proto_vitcp;
    struct meta *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "%s: out of memory", meta_path);
        return -1;
    }
    m->c = out;
    snprintf(m->file, sizeof m->file, "%s", meta_path);
    m->err = err;
    m->errlen = errlen;
    out->timeout_ms = 10000;
    out->from_capture = true;
    int rc = -1;
    struct cap_read x = {.c = out};
    const struct cf_meta_module mod = {
        .req_prefix = "VITCP-",
        .keys_text = "case, title, section, require, role, tester, capture, frame, verdict fail, verdict advisory, "
                     "wildcard, rule, only-if, echo yes, discriminator, nops, timing, timeout, end, hostile yes, "
                     "relay yes, packet",
        .key = meta_key,
        .ctx = m,
    };
    struct cf_meta_frames frames;
    if (cf_meta_read(meta_path, &mod, out, &frames, err, errlen) < 0)
        goto done;
    if (frames.last_req != VW_REQ_NONE) {
        snprintf(err, errlen, "%s: 'nothing-else' is not for VI/TCP capture cases ('end' says what follows the "
                 "last PDU)", meta_path);
        goto done;
    }
    m->line = 0;
    if (settle_role(m, out) < 0)
        goto done;
    if (check_rules(m, out) < 0)
        goto done;
    /* The capture: 'capture NAME' (relative to the meta file's folder),
     * else NAME.pcapng, else NAME.pcap. */
    const char *slash = strrchr(meta_path, '/');
    int dirlen = slash && m->capture[0] != '/' ? (int)(slash - meta_path) + 1 : 0;
    size_t mlen = strlen(meta_path);
    int stem = (int)(mlen >= 5 ? mlen - 5 : mlen); /* without ".meta" */
    int n = m->capture[0] ? snprintf(out->file, sizeof out->file, "%.*s%s", dirlen, meta_path, m->capture)
                          : snprintf(out->file, sizeof out->file, "%.*s.pcapng", stem, meta_path);
    if (n < 0 || (size_t)n >= sizeof out->file) {
        snprintf(err, errlen, "%s: the capture's path is too long", meta_path);
        goto done;
    }
    if (!m->capture[0] && access(out->file, F_OK) != 0) /* not fopen: a named pipe would block */
        out->file[n - 2] = 0; /* NAME.pcap */
    if (!cf_is_regular_file(out->file)) {
        snprintf(err, errlen, "%s: its capture %s is missing or not a regular file", meta_path, out->file);
        goto done;
    }
    if (read_capture(m, &x) < 0)
        goto done;
    if (compile(m, out, &x) < 0 || frame_rules(m, out, &frames) < 0)
        goto done;
    rc = 0;
done:
    free(x.pdus);
    free(m);
    if (rc < 0) {
        cf_case_free(out);
        out->nsteps = 0;
    }
    return rc;
}

const char *cf_capcase_send_note(const struct cf_step *st)
{
    static char note[64];
    if (!st->replay_answer)
        return "";
    snprintf(note, sizeof note, "; answers the live request:%s%s%s%s",
             (st->replay_answer & CF_ANSWER_DISC) ? " disc" : "", (st->replay_answer & CF_ANSWER_LEVEL) ? " level" : "",
             (st->replay_answer & CF_ANSWER_MTU) ? " mtu" : "", (st->replay_answer & CF_ANSWER_CRC) ? " crc" : "");
    return note;
}
