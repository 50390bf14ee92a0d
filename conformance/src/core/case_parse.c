/* The case script parser (format in conform/case.h). */
#include "conform/case.h"
#include "conform/protocol.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct parser {
    const struct conform_protocol *proto;
    bool stepped; /* a step was parsed: too late for 'protocol' */
    const char *file;
    unsigned line;
    char *err;
    size_t errlen;
};

static int fail(struct parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(struct parser *p, const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(p->err, p->errlen, "%s:%u: %s", p->file, p->line, msg);
    return -1;
}

/* The number of a decimal/hex/octal text (strtoll base 0); 0 or -1. */
static int cf_parse_number(const char *s, int64_t *out)
{
    if (!*s)
        return -1;
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || *end)
        return -1;
    *out = v;
    return 0;
}

static int field_by_name(const struct parser *p, const char *name, size_t len)
{
    char buf[64];
    if (len >= sizeof buf)
        return -1;
    memcpy(buf, name, len);
    buf[len] = 0;
    return cf_proto_field_by_name(p->proto, buf);
}

/* Symbolic values of a field ("attrs=RD|RWE"): 1, 0 (not symbolic), -1. */
static int symbol(struct parser *p, unsigned field, const char *v, int64_t *out)
{
    if (!p->proto->parse_symbol)
        return 0;
    char why[160] = "";
    int rc = p->proto->parse_symbol(field, v, out, why, sizeof why);
    if (rc < 0)
        return fail(p, "%s", why);
    return rc;
}

/* "name=value", "name<=value", "name>=value", "name!=value". */
static int split_assignment(struct parser *p, const char *tok, int *field, enum cf_op *op,
                            const char **value)
{
    size_t n = strcspn(tok, "=<>!&");
    if (tok[n] == '&') {
        /* "name&mask=value": the caller reads the mask; the field is the name */
        size_t m = n + 1 + strcspn(tok + n + 1, "=<>!");
        if (!tok[m])
            return fail(p, "expected name&mask=value, got '%s'", tok);
        const char *rest = tok + m;
        if (strncmp(rest, "<=", 2) == 0) { *op = CF_OP_LE; *value = rest + 2; }
        else if (strncmp(rest, ">=", 2) == 0) { *op = CF_OP_GE; *value = rest + 2; }
        else if (strncmp(rest, "!=", 2) == 0) { *op = CF_OP_NE; *value = rest + 2; }
        else { *op = CF_OP_EQ; *value = rest + 1; }
        *field = field_by_name(p, tok, n);
        return 0;
    }
    if (n == 0 || !tok[n])
        return fail(p, "expected name=value, got '%s'", tok);
    const char *rest = tok + n;
    if (strncmp(rest, "<=", 2) == 0) { *op = CF_OP_LE; *value = rest + 2; }
    else if (strncmp(rest, ">=", 2) == 0) { *op = CF_OP_GE; *value = rest + 2; }
    else if (strncmp(rest, "!=", 2) == 0) { *op = CF_OP_NE; *value = rest + 2; }
    else if (rest[0] == '=') { *op = CF_OP_EQ; *value = rest + 1; }
    else return fail(p, "bad operator in '%s'", tok);
    *field = field_by_name(p, tok, n);
    return 0;
}

static int parse_var(const struct parser *p, const char *v, unsigned *var, const char **rest)
{
    size_t n = 0;
    unsigned found = p->proto->var_by_name ? p->proto->var_by_name(v, &n) : 0;
    if (!found || !(v[n] == 0 || v[n] == '+' || v[n] == '-' || v[n] == '|'))
        return -1;
    *var = found;
    *rest = v + n;
    return 0;
}

/* "$var", "$var+N", "$var-N": 0 with var and offset, or -1. */
static int parse_var_value(struct parser *p, int field, const char *v, unsigned *var, int64_t *out)
{
    const char *rest;
    if (parse_var(p, v, var, &rest) < 0)
        return fail(p, "unknown variable in '%s' (%s)", v,
                    p->proto->var_names ? p->proto->var_names : "none in this protocol");
    *out = 0;
    if (p->proto->var_is_bits && p->proto->var_is_bits(*var)) {
        /* "$level|RWE|RRE": the other bits by name (the module's symbols) */
        if (*rest == '|') {
            int rc = field >= 0 ? symbol(p, (unsigned)field, rest + 1, out) : 0;
            if (rc < 0)
                return -1;
            if (rc == 0)
                return fail(p, "'%s': no names for these bits here", v);
            return 0;
        }
        if (*rest)
            return fail(p, "'%.*s' takes other bits by name as %.*s|NAME|..., got '%s'", (int)(rest - v), v,
                        (int)(rest - v), v, v);
        return 0;
    }
    if (*rest && cf_parse_number(rest, out) < 0) /* "+N" or "-N" */
        return fail(p, "bad offset in '%s'", v);
    return 0;
}

static int parse_value(struct parser *p, int field, const char *v, bool *rel, int64_t *out)
{
    *rel = false;
    if (isalpha((unsigned char)v[0])) {
        int rc = symbol(p, (unsigned)field, v, out);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
    }
    if (v[0] == '+' && p->proto->field_relative && p->proto->field_relative((unsigned)field)) {
        *rel = true;
        v++;
    }
    if (cf_parse_number(v, out) < 0)
        return fail(p, "'%s' is not a number", v);
    return 0;
}

/* link=N of a datagram protocol's step (C47): 1 taken, 0 not link=, -1 bad. */
static int parse_link_arg(struct parser *p, struct cf_step *st, const char *tok)
{
    if (strncmp(tok, "link=", 5) != 0)
        return 0;
    if (p->proto->transport != CF_TRANSPORT_DATAGRAM)
        return fail(p, "link= is for datagram protocols; %s runs over one TCP connection", p->proto->title);
    int64_t n;
    if (cf_parse_number(tok + 5, &n) < 0 || n < 0 || n >= CF_MAX_LINKS)
        return fail(p, "link= takes a tester link 0..%d", CF_MAX_LINKS - 1);
    st->link = (unsigned)n;
    st->link_set = true;
    return 1;
}

/* The module's own send arguments (a bare word, or name=value): 1 taken,
 * 0 not the module's, -1 bad. */
static int module_send_arg(struct parser *p, struct cf_step *st, const char *tok)
{
    if (!p->proto->parse_send_arg)
        return 0;
    char name[64], why[200] = "";
    size_t n = strcspn(tok, "=");
    if (n >= sizeof name)
        return 0;
    memcpy(name, tok, n);
    name[n] = 0;
    int rc = p->proto->parse_send_arg(st, name, tok[n] ? tok + n + 1 : NULL, why, sizeof why);
    return rc < 0 ? fail(p, "%s", why) : rc;
}

static int parse_send_arg(struct parser *p, struct cf_step *st, const char *tok)
{
    /* How the bytes go to the socket (the generic runner's, any protocol):
     * split=N cuts them into writes of N bytes, hold writes them together
     * with the next send's. */
    int linked = parse_link_arg(p, st, tok);
    if (linked != 0)
        return linked < 0 ? -1 : 0;
    if (strcmp(tok, "hold") == 0 || strncmp(tok, "split=", 6) == 0) {
        if (p->proto->transport == CF_TRANSPORT_DATAGRAM)
            return fail(p, "'%s': a datagram is sent whole, one message each", tok);
        if (tok[0] == 'h') {
            st->hold = true;
            return 0;
        }
        int64_t n;
        if (cf_parse_number(tok + 6, &n) < 0 || n < 1 || n > 65536)
            return fail(p, "split= takes the bytes per write, 1..65536");
        st->split = (unsigned)n;
        return 0;
    }
    int taken = module_send_arg(p, st, tok);
    if (taken != 0)
        return taken < 0 ? -1 : 0;
    int field;
    enum cf_op op;
    const char *v;
    if (split_assignment(p, tok, &field, &op, &v) < 0)
        return -1;
    if (op != CF_OP_EQ)
        return fail(p, "a send sets values: use '=' in '%s'", tok);
    const char *amp = strchr(tok, '&');
    if (amp && amp < v)
        return fail(p, "a send sets values: no mask in '%s'", tok);
    size_t name_len = (size_t)(v - tok) - 1;
    if (name_len == 4 && strncmp(tok, "fill", 4) == 0) {
        int64_t n;
        if (cf_parse_number(v, &n) < 0 || n < 0 || n > 255)
            return fail(p, "fill= takes a pattern number 0..255");
        st->fill = (unsigned)n;
        return 0;
    }
    if (name_len == 6 && strncmp(tok, "repeat", 6) == 0) {
        int64_t n;
        if (v[0] == '$') {
            if (parse_var_value(p, -1, v, &st->repeat_var, &n) < 0)
                return -1;
            if (n < -64 || n > 64)
                return fail(p, "repeat=$var+N takes N in -64..64");
            st->repeat_off = (int)n;
        } else if (cf_parse_number(v, &n) < 0 || n < 1 || n > 64) {
            return fail(p, "repeat= takes a count 1..64 (or $var+N)");
        } else {
            st->repeat = (unsigned)n;
        }
        return 0;
    }
    if (field < 0 || !p->proto->field_settable((unsigned)field))
        return fail(p, "a send cannot set '%.*s'", (int)name_len, tok);
    if (v[0] == '$') {
        if (parse_var_value(p, field, v, &st->var[field], &st->val[field]) < 0)
            return -1;
    } else if (parse_value(p, field, v, &st->rel[field], &st->val[field]) < 0) {
        return -1;
    } else if (field == cf_proto_field_by_name(p->proto, "payload") &&
               (st->val[field] < 0 || st->val[field] > (int64_t)p->proto->max_payload)) {
        /* a case author's error, said before anything is sent (not a
         * verdict against the target) */
        return fail(p, "payload=%lld is outside 0..%zu: a %s's payload (send a longer message as "
                    "several %ss)", (long long)st->val[field], p->proto->max_payload, p->proto->unit,
                    p->proto->unit);
    }
    st->set[field] = true;
    return 0;
}

static int parse_expect_arg(struct parser *p, struct cf_step *st, const char *tok)
{
    int linked = parse_link_arg(p, st, tok);
    if (linked != 0)
        return linked < 0 ? -1 : 0;
    if (strcmp(tok, "if-open") == 0) { /* C44: the target may close instead (its choice) */
        if (st->kind != CF_STEP_EXPECT)
            return fail(p, "'if-open' belongs to expect and await");
        st->na_if_closed = true;
        return 0;
    }
    int field;
    enum cf_op op;
    const char *v;
    if (split_assignment(p, tok, &field, &op, &v) < 0)
        return -1;
    size_t name_len = (size_t)(v - tok) - (op == CF_OP_EQ ? 1 : 2);
    if (name_len == 4 && strncmp(tok, "data", 4) == 0) {
        if (strcmp(v, "echo") == 0) st->data_echo = true;
        else if (strcmp(v, "written") == 0) st->data_written = true;
        else return fail(p, "data= takes 'echo' or 'written'");
        return 0;
    }
    if (field < 0)
        return fail(p, "unknown field '%.*s'", (int)name_len, tok);
    if (strcmp(v, "*") == 0)
        return 0; /* explicit wildcard */
    if (st->nmatch == CF_MAX_MATCHES)
        return fail(p, "too many fields (at most %d)", CF_MAX_MATCHES);
    struct cf_match *m = &st->match[st->nmatch];
    memset(m, 0, sizeof *m);
    m->field = (unsigned)field;
    m->op = op;
    const char *amp = strchr(tok, '&');
    if (amp && amp < v) {
        int64_t mask;
        char mtext[32];
        size_t ml = strcspn(amp + 1, "=<>!");
        if (ml == 0 || ml >= sizeof mtext)
            return fail(p, "bad mask in '%s'", tok);
        memcpy(mtext, amp + 1, ml);
        mtext[ml] = 0;
        if (cf_parse_number(mtext, &mask) < 0 || mask <= 0)
            return fail(p, "bad mask in '%s'", tok);
        m->mask = (uint64_t)mask;
    }
    if (v[0] == '$') {
        if (parse_var_value(p, field, v, &m->var, &m->value) < 0)
            return -1;
    } else if (parse_value(p, field, v, &m->relative, &m->value) < 0) {
        return -1;
    }
    st->nmatch++;
    return 0;
}

static int add_req(struct parser *p, enum vw_req *reqs, unsigned *n, const char *id)
{
    enum vw_req r = vw_req_by_id(id);
    if (r == VW_REQ_NONE)
        return fail(p, "unknown requirement ID '%s' (see vitcp-conform list)", id);
    if (*n == CF_MAX_REQS)
        return fail(p, "too many requirements (at most %d)", CF_MAX_REQS);
    reqs[(*n)++] = r;
    return 0;
}

int cf_case_add_packet(struct cf_case *c, char *const *tok, int ntok, char *why, size_t whylen)
{
    if (ntok != 4) {
        snprintf(why, whylen, "'packet' takes drop|duplicate, tester|target and N or N-M");
        return -1;
    }
    if (c->npacket == CF_MAX_PACKET_ACTIONS) {
        snprintf(why, whylen, "too many packet actions (at most %d)", CF_MAX_PACKET_ACTIONS);
        return -1;
    }
    if (cf_relay_action_parse(tok[1], tok[2], tok[3], &c->packet[c->npacket], why, whylen) < 0)
        return -1;
    c->npacket++;
    c->relay = true;
    return 0;
}

#define MAX_TOKENS 40

/* One word of 'needs' (C60): HOOK or A|B|C, checked against the module's
 * table when the case is complete (its protocol line may come later). */
static int add_need(struct parser *p, struct cf_case *c, const char *word)
{
    if (c->nneeds == CF_MAX_NEEDS)
        return fail(p, "a case needs at most %d test conventions", CF_MAX_NEEDS);
    struct cf_need *nd = &c->needs[c->nneeds];
    memset(nd, 0, sizeof *nd);
    nd->line = p->line;
    for (const char *at = word;;) {
        size_t len = strcspn(at, "|");
        if (len == 0 || len >= CF_HOOK_NAME_MAX || nd->n == CF_NEED_ALTS)
            return fail(p, "bad 'needs' word '%s' (HOOK, or up to %d alternatives A|B)", word, CF_NEED_ALTS);
        memcpy(nd->any[nd->n], at, len);
        nd->any[nd->n][len] = 0;
        if (strcmp(nd->any[nd->n], "region") == 0)
            return fail(p, "'region' has no alternatives: 'needs region' alone");
        nd->n++;
        if (!at[len])
            break;
        at += len + 1;
    }
    c->nneeds++;
    return 0;
}

/* Is name a test convention of the module (its hooks table)? */
static bool module_hook(const struct conform_protocol *pr, const char *name)
{
    for (const struct cf_hook_def *h = pr->hooks; h && h->name; h++)
        if (strcmp(h->name, name) == 0)
            return true;
    return false;
}

/* Every hook a case names is its module's: "" or the first unknown name. */
static const char *unknown_hook(const struct cf_case *c, unsigned *line)
{
    *line = 0;
    for (unsigned i = 0; i < c->nneeds; i++)
        for (unsigned k = 0; k < c->needs[i].n; k++)
            if (!module_hook(c->proto, c->needs[i].any[k])) {
                *line = c->needs[i].line;
                return c->needs[i].any[k];
            }
    if (c->provides[0] && !module_hook(c->proto, c->provides)) {
        *line = c->provides_line;
        return c->provides;
    }
    for (unsigned i = 0; i < c->nsteps; i++)
        if (c->steps[i].when[0] && !module_hook(c->proto, c->steps[i].when)) {
            *line = c->steps[i].line;
            return c->steps[i].when;
        }
    return "";
}

/* "echo, readback": the module's hook names, for messages. */
static void hook_names(const struct conform_protocol *pr, char *out, size_t n)
{
    out[0] = 0;
    for (const struct cf_hook_def *h = pr->hooks; h && h->name; h++) {
        size_t have = strlen(out);
        snprintf(out + have, n - have, "%s%s", have ? ", " : "", h->name);
    }
}

static int parse_line(struct parser *p, struct cf_case *c, char **tok, int ntok)
{
    const char *kw = tok[0];
    /* Header directives. */
    if (strcmp(kw, "case") == 0 || strcmp(kw, "section") == 0) {
        if (ntok != 2)
            return fail(p, "'%s' takes one word", kw);
        char *dst = kw[0] == 'c' ? c->id : c->section;
        size_t cap = kw[0] == 'c' ? sizeof c->id : sizeof c->section;
        if (strlen(tok[1]) >= cap)
            return fail(p, "'%s' value too long", kw);
        strcpy(dst, tok[1]);
        return 0;
    }
    if (strcmp(kw, "protocol") == 0) {
        if (ntok != 2)
            return fail(p, "'protocol' takes one name (%s)", cf_protocol_names());
        if (p->stepped)
            return fail(p, "'protocol' must come before the steps (and the protocol's own directives)");
        const struct conform_protocol *pr = cf_protocol_find(tok[1]);
        if (!pr)
            return fail(p, "unknown protocol '%s' (%s)", tok[1], cf_protocol_names());
        p->proto = pr;
        c->proto = pr;
        return 0;
    }
    if (strcmp(kw, "title") == 0) {
        c->title[0] = 0;
        for (int i = 1; i < ntok; i++) {
            size_t have = strlen(c->title);
            snprintf(c->title + have, sizeof c->title - have, "%s%s", i > 1 ? " " : "", tok[i]);
        }
        return 0;
    }
    if (strcmp(kw, "require") == 0) {
        if (ntok < 2)
            return fail(p, "'require' needs at least one requirement ID");
        for (int i = 1; i < ntok; i++)
            if (add_req(p, c->reqs, &c->nreqs, tok[i]) < 0)
                return -1;
        return 0;
    }
    if (strcmp(kw, "timeout") == 0) {
        int64_t v;
        if (ntok != 2 || cf_parse_number(tok[1], &v) < 0 || v <= 0 || v > 600000)
            return fail(p, "'timeout' takes milliseconds (1..600000)");
        c->timeout_ms = (unsigned)v;
        return 0;
    }
    if (strcmp(kw, "hostile") == 0) {
        c->hostile = true;
        return 0;
    }
    if (strcmp(kw, "role") == 0) {
        if (ntok != 2 || (strcmp(tok[1], "active") != 0 && strcmp(tok[1], "passive") != 0))
            return fail(p, "'role' takes active (the tester connects) or passive (the tester listens)");
        c->passive = tok[1][0] == 'p';
        return 0;
    }
    if (strcmp(kw, "relay") == 0 || strcmp(kw, "advisory") == 0) {
        if (ntok != 1)
            return fail(p, "'%s' takes nothing", kw);
        *(kw[0] == 'r' ? &c->relay : &c->advisory) = true;
        return 0;
    }
    if (strcmp(kw, "packet") == 0) {
        char why[160];
        return cf_case_add_packet(c, tok, ntok, why, sizeof why) < 0 ? fail(p, "%s", why) : 0;
    }
    if (strcmp(kw, "links") == 0) {
        int64_t n;
        if (p->proto->transport != CF_TRANSPORT_DATAGRAM)
            return fail(p, "'links' is for datagram protocols; %s runs over one TCP connection", p->proto->title);
        if (ntok != 2 || cf_parse_number(tok[1], &n) < 0 || n < 1 || n > CF_MAX_LINKS)
            return fail(p, "'links' takes the number of tester links, 1..%d", CF_MAX_LINKS);
        c->links = (unsigned)n;
        p->stepped = true; /* the protocol may no longer change */
        return 0;
    }
    if (strcmp(kw, "needs") == 0) {
        if (ntok < 2)
            return fail(p, "'needs' takes 'region' and the test conventions the case needs (HOOK or A|B)");
        for (int i = 1; i < ntok; i++)
            if (strcmp(tok[i], "region") == 0)
                c->needs_region = true;
            else if (add_need(p, c, tok[i]) < 0)
                return -1;
        return 0;
    }
    if (strcmp(kw, "provides") == 0) {
        if (ntok != 2 || strlen(tok[1]) >= sizeof c->provides)
            return fail(p, "'provides' takes the one test convention the case probes");
        if (c->provides[0])
            return fail(p, "a case probes one test convention ('provides' %s already)", c->provides);
        strcpy(c->provides, tok[1]);
        c->provides_line = p->line;
        return 0;
    }

    /* The protocol's own directives (protocol.h parse_directive). */
    if (p->proto->parse_directive) {
        char why[200] = "";
        int rc = p->proto->parse_directive(c, tok, ntok, why, sizeof why);
        if (rc < 0)
            return fail(p, "%s", why);
        if (rc > 0) {
            p->stepped = true; /* the protocol may no longer change */
            return 0;
        }
    }

    /* Steps. 'when [!]HOOK' before one makes it conditional (C60); a
     * trailing [ID] names the requirement the step checks. */
    const char *when = NULL;
    if (strcmp(kw, "when") == 0) {
        if (ntok < 3)
            return fail(p, "'when' takes a test convention ([!]HOOK) and a step");
        when = tok[1];
        tok += 2;
        ntok -= 2;
        kw = tok[0];
        if (strcmp(kw, "connect") == 0 || strcmp(kw, "accept") == 0 || strcmp(kw, "when") == 0)
            return fail(p, "'when' takes one step other than connect and accept");
    }
    p->stepped = true;
    if (c->nsteps == CF_MAX_STEPS)
        return fail(p, "too many steps (at most %d)", CF_MAX_STEPS);
    struct cf_step *st = &c->steps[c->nsteps];
    memset(st, 0, sizeof *st);
    st->line = p->line;
    if (when) {
        st->when_not = when[0] == '!';
        when += st->when_not;
        if (!*when || strlen(when) >= sizeof st->when)
            return fail(p, "'when' takes a test convention's name, or !NAME");
        strcpy(st->when, when);
    }
    if (ntok > 1 && tok[ntok - 1][0] == '[') {
        char *id = tok[ntok - 1] + 1;
        size_t n = strlen(id);
        if (n == 0 || id[n - 1] != ']')
            return fail(p, "requirement tag must look like [ID]");
        id[n - 1] = 0;
        st->req = vw_req_by_id(id);
        if (st->req == VW_REQ_NONE)
            return fail(p, "unknown requirement ID '%s'", id);
        ntok--;
    }
    if (strcmp(kw, "connect") == 0) st->kind = CF_STEP_CONNECT;
    else if (strcmp(kw, "accept") == 0) st->kind = CF_STEP_ACCEPT;
    else if (strcmp(kw, "close") == 0) st->kind = CF_STEP_CLOSE;
    else if (strcmp(kw, "expect-log") == 0 || strcmp(kw, "expect-no-log") == 0) {
        /* C90: the node under test's output, not its messages */
        st->kind = CF_STEP_EXPECT_NOTHING;
        st->node_log = kw[7] == 'l' ? CF_NODE_LOG_LINE : CF_NODE_LOG_NO_LINE;
        int64_t v;
        if (ntok > 2 || (ntok == 2 && (cf_parse_number(tok[1], &v) < 0 || v < 0 || v > 600000)))
            return fail(p, "'%s' takes at most a time in ms", kw);
        if (ntok == 2)
            st->wait_ms = (unsigned)v;
    } else if (strcmp(kw, "expect-nothing") == 0) {
        st->kind = CF_STEP_EXPECT_NOTHING;
        for (int i = 1; i < ntok; i++) {
            int64_t v;
            int linked = parse_link_arg(p, st, tok[i]);
            if (linked < 0)
                return -1;
            if (linked)
                continue;
            if (cf_parse_number(tok[i], &v) < 0 || v < 0 || v > 600000)
                return fail(p, "'expect-nothing' takes milliseconds and link=N");
            st->wait_ms = (unsigned)v;
        }
    } else if (strcmp(kw, "expect-close") == 0 || strcmp(kw, "expect-open") == 0 ||
             strcmp(kw, "wait") == 0) {
        st->kind = kw[0] == 'w' ? CF_STEP_WAIT
                   : kw[7] == 'c' ? CF_STEP_EXPECT_CLOSE : CF_STEP_EXPECT_OPEN;
        if (ntok > 2)
            return fail(p, "'%s' takes at most a time in ms", kw);
        if (ntok == 2) {
            int64_t v;
            if (cf_parse_number(tok[1], &v) < 0 || v < 0 || v > 600000)
                return fail(p, "'%s' takes milliseconds", kw);
            st->wait_ms = (unsigned)v;
        } else if (st->kind == CF_STEP_WAIT) {
            return fail(p, "'wait' needs milliseconds");
        }
    } else if (strcmp(kw, "send") == 0 || strcmp(kw, "expect") == 0 || strcmp(kw, "await") == 0 ||
               strcmp(kw, "check") == 0 || strcmp(kw, "only-if") == 0) {
        st->kind = kw[0] == 's' ? CF_STEP_SEND : kw[0] == 'c' ? CF_STEP_CHECK
                   : kw[0] == 'o' ? CF_STEP_ONLY_IF : CF_STEP_EXPECT;
        st->skip_other = kw[0] == 'a';
        if (ntok < 2)
            return fail(p, "'%s' needs a segment type", kw);
        char *alt = st->kind == CF_STEP_EXPECT ? strchr(tok[1], '|') : NULL;
        if (alt) {
            *alt++ = 0;
            int t2 = cf_proto_type_by_name(p->proto, alt);
            if (t2 < 0)
                return fail(p, "unknown %s type '%s'", p->proto->unit, alt);
            st->type_alt = (unsigned)t2;
            st->has_type_alt = true;
        }
        int type = strcmp(tok[1], "*") == 0 && st->kind != CF_STEP_SEND ? (int)CF_TYPE_ANY
                                                                         : cf_proto_type_by_name(p->proto, tok[1]);
        if (type < 0)
            return fail(p, "unknown %s type '%s'", p->proto->unit, tok[1]);
        st->type = (unsigned)type;
        for (int i = 2; i < ntok; i++)
            if ((st->kind == CF_STEP_SEND ? parse_send_arg : parse_expect_arg)(p, st, tok[i]) < 0)
                return -1;
    } else {
        return fail(p, "unknown directive '%s'", kw);
    }
    c->nsteps++;
    return 0;
}

int cf_case_parse(const char *text, const char *file, struct cf_case *out, char *err,
                  size_t errlen)
{
    struct parser p = {cf_protocol_default(), false, file ? file : "<case>", 0, err, errlen};
    memset(out, 0, sizeof *out);
    out->proto = p.proto;
    snprintf(out->file, sizeof out->file, "%s", p.file);
    out->timeout_ms = 5000;
    char line[1024];
    const char *s = text;
    while (*s) {
        p.line++;
        size_t n = strcspn(s, "\n");
        if (n >= sizeof line)
            return fail(&p, "line too long");
        memcpy(line, s, n);
        line[n] = 0;
        s += n + (s[n] == '\n');
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *tok[MAX_TOKENS];
        int ntok = 0;
        for (char *t = strtok(line, " \t\r"); t; t = strtok(NULL, " \t\r")) {
            if (ntok == MAX_TOKENS)
                return fail(&p, "too many words on one line");
            tok[ntok++] = t;
        }
        if (ntok && parse_line(&p, out, tok, ntok) < 0)
            return -1;
    }
    p.line = 0;
    if (!out->id[0])
        return fail(&p, "no 'case <id>' line");
    if (!out->nreqs)
        return fail(&p, "no 'require <ID>...' line: every case names the rules it tests");
    if (!out->nsteps)
        return fail(&p, "no steps");
    if (out->steps[0].kind != (out->passive ? CF_STEP_ACCEPT : CF_STEP_CONNECT)) {
        p.line = out->steps[0].line;
        return fail(&p, out->passive ? "the first step of a passive case must be 'accept'"
                                     : "the first step must be 'connect'");
    }
    for (unsigned i = 1; i < out->nsteps; i++)
        if ((out->steps[i].kind == CF_STEP_CONNECT || out->steps[i].kind == CF_STEP_ACCEPT) &&
            /* the generic runner (C44): a later connect (active) or accept
             * (passive) ends the connection so far and opens a new one */
            out->steps[i].kind != (out->passive ? CF_STEP_ACCEPT : CF_STEP_CONNECT)) {
            p.line = out->steps[i].line;
            return fail(&p, "a later step may be 'connect' in an active case, 'accept' in a passive one");
        }
    for (unsigned i = 0; i < out->nsteps; i++) {
        const struct cf_step *st = &out->steps[i];
        bool has_close = st->kind == CF_STEP_CLOSE || st->kind == CF_STEP_EXPECT_CLOSE ||
                         st->kind == CF_STEP_EXPECT_OPEN;
        p.line = st->line; /* for the messages below */
        if (out->proto->transport == CF_TRANSPORT_DATAGRAM && (st->kind == CF_STEP_ACCEPT || out->passive))
            return fail(&p, "a datagram protocol has no role passive (what the node sends comes in on the tester's "
                            "links)");
        if (out->proto->transport == CF_TRANSPORT_DATAGRAM && has_close)
            return fail(&p, "a datagram protocol has no connection to close (use expect-nothing)");
        unsigned links = out->links ? out->links : 1;
        if (st->link_set && st->link >= links)
            return fail(&p, "link=%u needs 'links %u' (or more) in the header", st->link, st->link + 1);
    }
    const char *unknown = unknown_hook(out, &p.line);
    if (*unknown) {
        char names[300];
        hook_names(out->proto, names, sizeof names);
        return fail(&p, "'%s' is no test convention of %s (%s)", unknown, out->proto->title,
                    names[0] ? names : "it has none");
    }
    for (unsigned i = 0; i < out->nsteps; i++)
        if (out->steps[i].req == VW_REQ_NONE)
            out->steps[i].req = out->reqs[0];
    return 0;
}

int cf_case_load(const char *path, struct cf_case *out, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    enum { CAP = 64 * 1024 };
    char *buf = malloc(CAP + 1);
    if (!buf) {
        fclose(f);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    size_t n = fread(buf, 1, CAP + 1, f);
    int rd_err = ferror(f);
    fclose(f);
    if (rd_err || n > CAP || memchr(buf, 0, n)) {
        snprintf(err, errlen, "%s: %s", path,
                 rd_err ? "read error" : n > CAP ? "larger than 64 KiB" : "contains NUL bytes");
        free(buf);
        return -1;
    }
    buf[n] = 0;
    int rc = cf_case_parse(buf, path, out, err, errlen);
    free(buf);
    return rc;
}

static int by_file(const void *a, const void *b)
{
    return strcmp(((const struct cf_case *)a)->file, ((const struct cf_case *)b)->file);
}

bool cf_is_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool cf_is_directory(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Cases of one folder; folder is the protocol whose folder it is (NULL:
 * the top folder, where a case names its protocol or is the default
 * protocol's). At
 * the top, subfolders named after a protocol are loaded too. */
static int load_folder(const char *dir, const struct conform_protocol *folder, struct cf_case_set *set,
                       size_t *cap, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "cases directory %s: %s", dir, strerror(errno));
        return -1;
    }
    const struct conform_protocol *files_proto = folder ? folder : cf_protocol_default();
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        size_t n = strlen(e->d_name);
        char path[4096];
        int w = snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (w < 0 || (size_t)w >= sizeof path || e->d_name[0] == '.')
            continue;
        if (!folder && cf_is_directory(path)) {
            const struct conform_protocol *sub = cf_protocol_find(e->d_name);
            if (!sub || sub == cf_protocol_default()) {
                snprintf(err, errlen, "cases directory %s: subfolder '%s' is no protocol's (%s; %s's "
                         "cases are the top folder's)", dir, e->d_name, cf_protocol_names(),
                         cf_protocol_default()->title);
                rc = -1;
                break;
            }
            rc = load_folder(path, sub, set, cap, err, errlen);
            continue;
        }
        bool script = n >= 6 && strcmp(e->d_name + n - 5, ".case") == 0;
        bool meta = n >= 6 && strcmp(e->d_name + n - 5, ".meta") == 0 && files_proto->load_capture_case &&
                    (!files_proto->is_capture_meta || files_proto->is_capture_meta(e->d_name));
        if ((!script && !meta) || !cf_is_regular_file(path))
            continue;
        if (set->count == *cap) {
            size_t grown_cap = *cap ? *cap * 2 : 32;
            struct cf_case *grown = realloc(set->cases, grown_cap * sizeof *grown);
            if (!grown) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
                break;
            }
            set->cases = grown;
            *cap = grown_cap;
        }
        struct cf_case *c = &set->cases[set->count];
        if ((script ? cf_case_load(path, c, err, errlen) : files_proto->load_capture_case(path, c, err, errlen)) < 0) {
            rc = -1;
            break;
        }
        if (!c->proto)
            c->proto = files_proto;
        set->count++;
        if (folder && c->proto != folder) {
            snprintf(err, errlen, "%s: a case in %s's folder names protocol %s (add 'protocol %s')", path,
                     folder->title, c->proto->name, folder->name);
            rc = -1;
        }
    }
    closedir(d);
    return rc;
}

int cf_case_set_load_dir(const char *dir, struct cf_case_set *set, char *err, size_t errlen)
{
    set->cases = NULL;
    set->count = 0;
    size_t cap = 0;
    if (load_folder(dir, NULL, set, &cap, err, errlen) < 0) {
        cf_case_set_free(set);
        return -1;
    }
    qsort(set->cases, set->count, sizeof *set->cases, by_file);
    for (size_t i = 0; i < set->count; i++)
        for (size_t j = i + 1; j < set->count; j++)
            if (strcmp(set->cases[i].id, set->cases[j].id) == 0) {
                snprintf(err, errlen, "%s: case id '%s' already used by %s", set->cases[j].file,
                         set->cases[j].id, set->cases[i].file);
                cf_case_set_free(set);
                return -1;
            }
    return 0;
}

void cf_case_free(struct cf_case *c)
{
    free(c->blob);
    c->blob = NULL;
    c->blob_len = 0;
}

void cf_case_set_free(struct cf_case_set *set)
{
    for (size_t i = 0; i < set->count; i++)
        cf_case_free(&set->cases[i]);
    free(set->cases);
    set->cases = NULL;
    set->count = 0;
}

bool cf_case_has_req(const struct cf_case *c, enum vw_req r)
{
    for (unsigned i = 0; i < c->nreqs; i++)
        if (c->reqs[i] == r)
            return true;
    return false;
}

void cf_case_add_req(struct cf_case *c, enum vw_req r)
{
    if (!cf_case_has_req(c, r) && c->nreqs < CF_MAX_REQS)
        c->reqs[c->nreqs++] = r;
}

bool cf_case_matches(const struct cf_case *c, const char *sel)
{
    if (strcmp(c->id, sel) == 0)
        return true;
    size_t n = strlen(sel);
    bool prefix = n && sel[n - 1] == '*';
    for (unsigned i = 0; i < c->nreqs; i++) {
        const char *id = vw_req_id(c->reqs[i]);
        if (prefix ? strncmp(id, sel, n - 1) == 0 : strcmp(id, sel) == 0)
            return true;
    }
    if (n && strncmp(c->section, sel, n) == 0 && (c->section[n] == 0 || c->section[n] == '.'))
        return true;
    return false;
}
