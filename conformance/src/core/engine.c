/* The engine's protocol-neutral part: its settings, one case (the
 * module's run_case or the generic step runner, then the verdict rules that
 * hold for every protocol: metadata 'verdict fail', advisory cases, the
 * survival check after hostile ones) and a suite with its progress. */
#include "conform/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cf_engine_init(struct cf_engine *e)
{
    memset(e, 0, sizeof *e);
    snprintf(e->host, sizeof e->host, "127.0.0.1");
    e->protocol = cf_protocol_default();
    snprintf(e->port, sizeof e->port, "%u", e->protocol->default_port);
    e->slack_ms = CF_DEFAULT_SLACK_MS;
    e->check_survival = true;
    e->listen_fd = -1;
    e->accept_ms = 5000;
    e->use_relay = true;
    e->relay_listen_fd = -1;
    e->node_log_fd = -1;
    for (size_t i = 0; cf_protocols[i] && i < CF_PROTOCOLS_MAX; i++)
        if (cf_protocols[i]->state_init)
            cf_protocols[i]->state_init(e->proto_state[i]);
}

void *cf_engine_state(struct cf_engine *e, const struct conform_protocol *p)
{
    for (size_t i = 0; cf_protocols[i] && i < CF_PROTOCOLS_MAX; i++)
        if (cf_protocols[i] == p)
            return e->proto_state[i];
    return NULL;
}

int cf_engine_set_option(struct cf_engine *e, const char *name, const char *value, bool *takes_value, char *why,
                         size_t whylen)
{
    for (size_t i = 0; cf_protocols[i] && i < CF_PROTOCOLS_MAX; i++) {
        const struct conform_protocol *p = cf_protocols[i];
        for (const struct cf_option *o = p->run_options; o && o->name; o++) {
            if (strcmp(o->name, name) != 0)
                continue;
            if (takes_value) {
                *takes_value = o->takes_value;
                if (!value && o->takes_value)
                    return 1; /* only asked */
            }
            return p->set_option(e->proto_state[i], name, value, why, whylen) < 0 ? -1 : 1;
        }
    }
    return 0;
}

/* Split "HOST:PORT" / "[V6]:PORT" / "PORT" (host_ok: a bare port is
 * allowed, the host left empty). 0 or -1. */
static int split_host_port(const char *hp, bool bare_port_ok, char *host, size_t hostcap, char *port, size_t portcap)
{
    const char *colon, *h = hp;
    size_t hl;
    if (hp[0] == '[') {
        const char *close = strchr(hp, ']');
        if (!close || close[1] != ':')
            return -1;
        h = hp + 1;
        hl = (size_t)(close - h);
        colon = close + 1;
    } else if ((colon = strrchr(hp, ':')) != NULL) {
        hl = (size_t)(colon - hp);
    } else if (bare_port_ok) {
        hl = 0;
        colon = hp - 1;
    } else {
        return -1;
    }
    if ((hl == 0 && !bare_port_ok) || hl >= hostcap)
        return -1;
    char *end;
    long port_n = strtol(colon + 1, &end, 10);
    if (!colon[1] || *end || port_n < (bare_port_ok ? 0 : 1) || port_n > 65535)
        return -1;
    memcpy(host, h, hl);
    host[hl] = 0;
    snprintf(port, portcap, "%ld", port_n);
    return 0;
}

int cf_engine_set_target(struct cf_engine *e, const char *hp)
{
    if (split_host_port(hp, false, e->host, sizeof e->host, e->port, sizeof e->port) < 0)
        return -1;
    e->have_target = true;
    return 0;
}

int cf_engine_set_link(struct cf_engine *e, const char *spec, char *why, size_t whylen)
{
    char *end;
    long n = strtol(spec, &end, 10);
    if (end == spec || *end != '=' || n < 0 || n >= CF_MAX_LINKS) {
        snprintf(why, whylen, "bad --link '%s' (N=[ADDR:]PORT[,HOST:PORT], N 0..%d)", spec, CF_MAX_LINKS - 1);
        return -1;
    }
    struct cf_link l = {.set = true};
    if (strncmp(end + 1, "eth:", 4) == 0) {
        /* an Ethernet link: interface, optional destination MAC */
        const char *ifn = end + 5, *comma = strchr(ifn, ',');
        size_t il = comma ? (size_t)(comma - ifn) : strlen(ifn);
        unsigned m[6];
        char tail;
        memset(l.eth_dst, 0xFF, sizeof l.eth_dst);
        if (il == 0 || il >= sizeof l.eth_if ||
            (comma && (sscanf(comma + 1, "%x:%x:%x:%x:%x:%x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &tail) != 6 ||
                       m[0] > 255 || m[1] > 255 || m[2] > 255 || m[3] > 255 || m[4] > 255 || m[5] > 255))) {
            snprintf(why, whylen, "bad --link '%s' (N=eth:IF[,MAC])", spec);
            return -1;
        }
        memcpy(l.eth_if, ifn, il);
        l.eth_if[il] = 0;
        for (int i = 0; comma && i < 6; i++)
            l.eth_dst[i] = (uint8_t)m[i];
        e->links[n] = l;
        if (n == 0)
            e->have_target = true; /* the interface is where the target is */
        return 0;
    }
    const char *bind = end + 1, *comma = strchr(bind, ',');
    char part[300];
    size_t bl = comma ? (size_t)(comma - bind) : strlen(bind);
    if (bl >= sizeof part || (bl == 0 && !comma) ||
        (bl && (memcpy(part, bind, bl), part[bl] = 0,
                split_host_port(part, true, l.bind_host, sizeof l.bind_host, l.bind_port, sizeof l.bind_port) < 0)) ||
        (comma && split_host_port(comma + 1, false, l.host, sizeof l.host, l.port, sizeof l.port) < 0)) {
        snprintf(why, whylen, "bad --link '%s' (N=[ADDR:]PORT[,HOST:PORT], N 0..%d)", spec, CF_MAX_LINKS - 1);
        return -1;
    }
    e->links[n] = l;
    return 0;
}

void cf_result_init(struct cf_result *res, const struct cf_case *c)
{
    memset(res, 0, sizeof *res);
    snprintf(res->id, sizeof res->id, "%s", c->id);
    snprintf(res->file, sizeof res->file, "%s", c->file);
    snprintf(res->section, sizeof res->section, "%s", c->section);
    snprintf(res->protocol, sizeof res->protocol, "%s", c->proto ? c->proto->name : cf_protocol_default()->name);
    memcpy(res->reqs, c->reqs, sizeof res->reqs);
    res->nreqs = c->nreqs;
    res->level = cf_level_strongest(c->reqs, c->nreqs);
    res->verdict = CF_PASS;
}

void cf_engine_run_case(struct cf_engine *e, const struct cf_case *c, struct cf_result *res)
{
    struct timespec start = cf_now();
    const struct conform_protocol *p = c->proto ? c->proto : cf_protocol_default();
    cf_result_init(res, c);
    if (e->skip_all[0]) {
        res->verdict = CF_SKIP;
        snprintf(res->message, sizeof res->message, "%s", e->skip_all);
        res->seconds = cf_seconds_since(start);
        return;
    }
    /* C61, C89: under --impair a stream protocol's case runs only through the relay; without one (not
     * root) it is skipped with the reason before its conventions are settled, since a probe that could
     * not run settles nothing: the cases needing it are skipped for the same reason, not "not offered" */
    if (e->impair.on && p->transport != CF_TRANSPORT_DATAGRAM &&
        !(c->passive ? cf_relay_ready_passive(e) : cf_relay_ready_active(e))) {
        res->verdict = CF_SKIP;
        snprintf(res->message, sizeof res->message, "%s: needs the packet relay: %.*s", c->file,
                 (int)(sizeof res->message - 300), c->passive ? e->relay_why_passive : e->relay_why_active);
        res->seconds = cf_seconds_since(start);
        return;
    }
    /* test conventions (C60): settled before the case, a missing one makes it not applicable */
    char why_na[CF_MESSAGE_MAX - 300];
    if (p->case_skipped && p->case_skipped(e, c, why_na, sizeof why_na)) {
        res->verdict = CF_SKIP;
        snprintf(res->message, sizeof res->message, "%s: %s", c->file, why_na);
        cf_engine_probe_done(e, c, res); /* a probe the run cannot take: not offered */
        res->seconds = cf_seconds_since(start);
        return;
    }
    cf_engine_settle_hooks(e, c);
    bool unknown = false;
    if (cf_engine_hooks_missing(e, c, why_na, sizeof why_na, &unknown) ||
        (c->provides[0] && cf_engine_probe_settled(e, c, why_na, sizeof why_na))) {
        res->verdict = unknown ? CF_INCONCLUSIVE : CF_NOT_APPLICABLE;
        snprintf(res->message, sizeof res->message, "%s: %s", c->file, why_na);
        cf_engine_probe_done(e, c, res);
        res->seconds = cf_seconds_since(start);
        return;
    }
    (p->run_case ? p->run_case : cf_generic_run_case)(e, c, res);
    cf_engine_probe_done(e, c, res);
    if (c->expect_fail) {
        /* meta 'verdict fail': the replay must find the difference */
        if (res->verdict == CF_FAIL) {
            char was[CF_MESSAGE_MAX];
            snprintf(was, sizeof was, "%s", res->message);
            res->verdict = CF_PASS;
            res->failed_req = VW_REQ_NONE;
            snprintf(res->message, sizeof res->message, "failed as its metadata expects: %.*s",
                     (int)(sizeof res->message - 40), was);
        } else if (res->verdict == CF_PASS) {
            res->verdict = CF_FAIL;
            res->failed_req = c->reqs[0];
            snprintf(res->message, sizeof res->message,
                     "%s: the metadata expects verdict fail, but the target matched the capture", c->file);
        }
    }
    if (c->advisory && (res->verdict == CF_FAIL || res->verdict == CF_TIMEOUT) && res->failed_req == c->reqs[0]) {
        /* a project decision where the draft leaves the reaction open */
        res->verdict = CF_ADVISORY;
    }
    if (c->hostile && !c->passive && e->check_survival && res->verdict == CF_PASS) {
        char why[CF_MESSAGE_MAX / 2];
        if ((p->check_alive ? p->check_alive : cf_generic_check_alive)(e, why, sizeof why) < 0) {
            res->verdict = CF_FAIL;
            res->failed_req = c->reqs[0];
            snprintf(res->message, sizeof res->message,
                     "%s: the target did not survive the case: a fresh connection failed: %s", c->file, why);
        }
    }
    res->seconds = cf_seconds_since(start);
}

/* ------------------------------------------------------------ suites */

bool cf_engine_selected(const struct cf_engine *e, const struct cf_case *c)
{
    if (c->passive ? e->listen_fd < 0 : !e->have_target)
        return false; /* the mode this run is not in */
    if (c->proto != e->protocol)
        return false; /* another protocol's case (run --protocol) */
    if (e->suite_skip)
        for (const char *const *s = e->suite_skip; *s; s++)
            if (cf_case_matches(c, *s))
                return false;
    if (!e->suite_only || !*e->suite_only)
        return true;
    for (const char *const *s = e->suite_only; *s; s++)
        if (cf_case_matches(c, *s))
            return true;
    return false;
}

static void progress_line(FILE *out, bool tty, size_t done, size_t total, const struct cf_result *res)
{
    if (!out)
        return;
    if (tty) {
        enum { WIDTH = 30 };
        size_t filled = total ? done * WIDTH / total : WIDTH;
        fprintf(out, "\r[");
        for (size_t i = 0; i < WIDTH; i++)
            fputc(i < filled ? '#' : '.', out);
        fprintf(out, "] %zu/%zu %-40.40s", done, total, res ? res->id : "");
        if (done == total)
            fputc('\n', out);
    } else if (res) {
        fprintf(out, "[%zu/%zu] %-7s %s\n", done, total, cf_verdict_name(res->verdict), res->id);
    }
    fflush(out);
}

void cf_engine_run_suite(struct cf_engine *e, const struct cf_case_set *set,
                         const char *const *only, const char *const *skip,
                         struct cf_report *report, FILE *progress)
{
    struct timespec start = cf_now();
    bool tty = progress && isatty(fileno(progress));
    size_t total = 0, done = 0;
    e->suite_only = only;
    e->suite_skip = skip;
    for (size_t i = 0; i < set->count; i++)
        total += cf_engine_selected(e, &set->cases[i]);
    if (e->have_target)
        snprintf(report->target, sizeof report->target, "%s:%s", e->host, e->port);
    else
        snprintf(report->target, sizeof report->target, "listen:%u", e->listen_port);
    e->suite = set;
    e->report = report;
    for (size_t i = 0; i < set->count; i++) {
        const struct cf_case *c = &set->cases[i];
        if (!cf_engine_selected(e, c))
            continue;
        int h = c->provides[0] ? cf_engine_hook_index(e, c->provides) : -1;
        if (h >= 0 && e->hooks[h].probe_done) {
            /* a probe that ran before the first case needing it (C60) is in the report */
            const struct cf_result *was = NULL;
            for (size_t k = 0; k < report->count && !was; k++)
                if (strcmp(report->cases[k].id, c->id) == 0)
                    was = &report->cases[k];
            progress_line(progress, tty, ++done, total, was);
            continue;
        }
        struct cf_result res;
        cf_engine_run_case(e, c, &res);
        cf_report_add(report, &res);
        progress_line(progress, tty, ++done, total, &res);
    }
    /* what the run learnt of the target's test conventions, for the report */
    for (unsigned i = 0; i < e->nhooks && report->nhooks < sizeof report->hooks / sizeof report->hooks[0]; i++) {
        if (e->hooks[i].offered < 0)
            continue;
        struct cf_report_hook *h = &report->hooks[report->nhooks++];
        snprintf(h->name, sizeof h->name, "%s", e->hooks[i].name);
        h->offered = e->hooks[i].offered == 1;
        snprintf(h->how, sizeof h->how, "%s", e->hooks[i].how);
    }
    e->suite = NULL;
    e->report = NULL;
    e->suite_only = e->suite_skip = NULL;
    report->seconds = cf_seconds_since(start);
}
