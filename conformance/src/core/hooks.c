/*
 * Test conventions (C60): what a tester needs of the target to observe a
 * rule, never a rule of the draft itself (an echo of delivered data, a
 * read-back of placed bytes, an answer to a probe). A module names its
 * conventions (protocol.h hooks); a case says which it needs ('needs
 * echo', 'needs readback|rdma-echo'), a probe case finds out whether the
 * target offers one ('provides echo'), `run --offers` declares them. A
 * case needing a convention the target does not offer is not applicable,
 * with the reason: its rule cannot be observed that way, and the target
 * broke nothing by not offering it.
 */
#include "conform/core.h"

#include <stdio.h>
#include <string.h>

int cf_engine_hook_index(const struct cf_engine *e, const char *name)
{
    for (unsigned i = 0; i < e->nhooks; i++)
        if (strcmp(e->hooks[i].name, name) == 0)
            return (int)i;
    return -1;
}

static struct cf_hook_state *find(struct cf_engine *e, const char *name, bool add)
{
    int i = cf_engine_hook_index(e, name);
    if (i >= 0)
        return &e->hooks[i];
    if (!add || e->nhooks == CF_HOOKS_MAX || strlen(name) >= CF_HOOK_NAME_MAX)
        return NULL;
    struct cf_hook_state *h = &e->hooks[e->nhooks++];
    memset(h, 0, sizeof *h);
    strcpy(h->name, name);
    h->declared = -1;
    h->offered = -1;
    return h;
}

int cf_engine_set_offers(struct cf_engine *e, const char *list, char *why, size_t whylen)
{
    char buf[512];
    if (!*list || strlen(list) >= sizeof buf) {
        snprintf(why, whylen, "bad --offers '%s' (HOOK,-HOOK,... or none)", list);
        return -1;
    }
    strcpy(buf, list);
    for (char *save = NULL, *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
        if (strcmp(w, "none") == 0) {
            e->offers_none = true;
            continue;
        }
        bool off = w[0] == '-';
        w += off;
        struct cf_hook_state *h = *w ? find(e, w, true) : NULL;
        if (!h) {
            snprintf(why, whylen, "bad --offers word '%s%s' (a test convention's name; at most %d)", off ? "-" : "",
                     w, CF_HOOKS_MAX);
            return -1;
        }
        h->declared = !off;
    }
    return 0;
}

static bool module_hook(const struct conform_protocol *p, const char *name)
{
    for (const struct cf_hook_def *d = p->hooks; d && d->name; d++)
        if (strcmp(d->name, name) == 0)
            return true;
    return false;
}

int cf_engine_check_offers(const struct cf_engine *e, char *why, size_t whylen)
{
    for (unsigned i = 0; i < e->nhooks; i++) {
        if (e->hooks[i].declared < 0 || module_hook(e->protocol, e->hooks[i].name))
            continue;
        char names[300] = "";
        for (const struct cf_hook_def *d = e->protocol->hooks; d && d->name; d++) {
            size_t have = strlen(names);
            snprintf(names + have, sizeof names - have, "%s%s", have ? ", " : "", d->name);
        }
        snprintf(why, whylen, "--offers: '%s' is no test convention of %s (%s)", e->hooks[i].name,
                 e->protocol->title, names[0] ? names : "it has none");
        return -1;
    }
    return 0;
}

int cf_engine_hook_offered(const struct cf_engine *e, const char *name)
{
    int i = cf_engine_hook_index(e, name);
    return i < 0 ? -1 : e->hooks[i].offered;
}

/* The run's probe case of a hook of protocol p (one whose role the run
 * can take), or NULL. */
static const struct cf_case *probe_of(const struct cf_engine *e, const struct conform_protocol *p, const char *name)
{
    for (size_t i = 0; e->suite && i < e->suite->count; i++) {
        const struct cf_case *c = &e->suite->cases[i];
        if (c->proto == p && strcmp(c->provides, name) == 0 && (c->passive ? e->listen_fd >= 0 : e->have_target))
            return c;
    }
    return NULL;
}

static void settle(struct cf_engine *e, const struct conform_protocol *p, const char *name)
{
    struct cf_hook_state *h = find(e, name, true);
    if (!h || h->offered >= 0 || h->probing)
        return;
    int by_module = p->hook_offered ? p->hook_offered(cf_engine_state(e, p), name) : -1;
    const struct cf_case *probe = NULL;
    if (h->declared >= 0) {
        /* a probe of a hook declared offered still runs, as an ordinary case in its turn */
        h->offered = h->declared;
        snprintf(h->how, sizeof h->how, "declared %s (run --offers)", h->declared ? "offered" : "not offered");
    } else if (by_module >= 0) {
        h->offered = by_module;
        snprintf(h->how, sizeof h->how, "%s by the run's %s options", by_module ? "offered" : "not offered",
                 p->title);
    } else if (e->offers_none) {
        h->offered = 0;
        snprintf(h->how, sizeof h->how, "declared not offered (run --offers none)");
    } else if (!(probe = probe_of(e, p, name))) {
        h->offered = 0;
        snprintf(h->how, sizeof h->how, "no probe case finds it out; run --offers %s if the target offers it", name);
    }
    if (!probe)
        return;
    /* the probe runs now, before the case that needs the hook */
    h->probing = true;
    struct cf_result res; /* cf_engine_run_case settles the hook (cf_engine_probe_done) */
    cf_engine_run_case(e, probe, &res);
    h->probing = false;
    h->probe_done = true;
    if (e->report && cf_engine_selected(e, probe))
        cf_report_add(e->report, &res);
}

void cf_engine_settle_hooks(struct cf_engine *e, const struct cf_case *c)
{
    for (unsigned i = 0; i < c->nneeds; i++)
        for (unsigned k = 0; k < c->needs[i].n; k++) {
            settle(e, c->proto, c->needs[i].any[k]);
            if (cf_engine_hook_offered(e, c->needs[i].any[k]) == 1)
                break; /* one alternative is enough */
        }
    for (unsigned i = 0; i < c->nsteps; i++)
        if (c->steps[i].when[0])
            settle(e, c->proto, c->steps[i].when);
}

bool cf_engine_hooks_missing(const struct cf_engine *e, const struct cf_case *c, char *why, size_t whylen,
                             bool *inconclusive)
{
    *inconclusive = false;
    for (unsigned i = 0; i < c->nneeds; i++) {
        const struct cf_need *nd = &c->needs[i];
        bool any = false;
        for (unsigned k = 0; k < nd->n && !any; k++)
            any = cf_engine_hook_offered(e, nd->any[k]) == 1;
        if (any)
            continue;
        int w = snprintf(why, whylen, "needs the target's %s", nd->any[0]);
        for (unsigned k = 1; k < nd->n && w >= 0 && (size_t)w < whylen; k++)
            w += snprintf(why + w, whylen - (size_t)w, "%s%s", k + 1 == nd->n ? " or " : ", ", nd->any[k]);
        for (unsigned k = 0; k < nd->n && w >= 0 && (size_t)w < whylen; k++) {
            int j = cf_engine_hook_index(e, nd->any[k]);
            const char *how = j >= 0 && e->hooks[j].how[0] ? e->hooks[j].how : "not settled";
            if (j >= 0 && e->hooks[j].inconclusive)
                *inconclusive = true;
            w += snprintf(why + w, whylen - (size_t)w, "%s%s: %s", k ? "; " : " (a test convention, not a rule of the "
                          "draft; docs/conformance.md, \"Test conventions\"): ", nd->any[k], how);
        }
        return true;
    }
    return false;
}

void cf_engine_probe_done(struct cf_engine *e, const struct cf_case *c, struct cf_result *res)
{
    struct cf_hook_state *h = c->provides[0] ? find(e, c->provides, true) : NULL;
    if (!h)
        return;
    h->probe_done = true;
    if (h->declared == 1) {
        /* declared: the probe is an ordinary case, its failure the run's */
        h->offered = 1;
        if (res->verdict != CF_PASS)
            snprintf(h->how, sizeof h->how, "declared offered (run --offers), but its probe %s: %s", c->id,
                     cf_verdict_name(res->verdict));
        return;
    }
    if (res->verdict == CF_PASS) {
        h->offered = 1;
        snprintf(h->how, sizeof h->how, "offered: probe %s passed", c->id);
        return;
    }
    h->offered = 0;
    char was[CF_MESSAGE_MAX];
    snprintf(was, sizeof was, "%s", res->message);
    snprintf(h->how, sizeof h->how, "probe %s: %.*s", c->id, (int)(sizeof h->how - 80), was);
    if (res->verdict == CF_INCONCLUSIVE) {
        h->inconclusive = true; /* not known: the cases needing it are inconclusive too */
        return;
    }
    if ((res->verdict == CF_FAIL && res->rule_broken) || res->verdict == CF_SKIP)
        return; /* a rule of the draft broken on the way stays a failure */
    res->verdict = CF_NOT_APPLICABLE;
    res->failed_req = VW_REQ_NONE;
    snprintf(res->message, sizeof res->message,
             "the target does not offer %s (a test convention, not a rule of the draft; run --offers %s to "
             "require it): %.*s", c->provides, c->provides, (int)(sizeof res->message - 200), was);
}

bool cf_engine_probe_settled(struct cf_engine *e, const struct cf_case *c, char *why, size_t whylen)
{
    struct cf_hook_state *h = find(e, c->provides, false);
    const struct conform_protocol *p = c->proto;
    int by_module = p->hook_offered ? p->hook_offered(cf_engine_state(e, p), c->provides) : -1;
    if (h && h->declared == 1)
        return false; /* an ordinary case: it runs */
    if ((h && h->declared == 0) || by_module == 0 || e->offers_none) {
        snprintf(why, whylen, "the target does not offer %s: %s", c->provides,
                 h && h->declared == 0 ? "declared (run --offers)" : by_module == 0 ? "its run options say so"
                                                                               : "declared (run --offers none)");
        return true;
    }
    return false;
}
