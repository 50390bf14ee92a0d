/* Capture-case metadata (NAME.meta): one reader for the line format and the
 * shared keys, and the pieces every loader builds its steps with, so that
 * the modules' loaders cannot drift apart. */
#include "conform/meta.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The protocol's name in messages: the prefix "NAME-" is said "NAME". */
static int prefix_label(const char *prefix)
{
    size_t n = strlen(prefix);
    return (int)(n && prefix[n - 1] == '-' ? n - 1 : n);
}

/* 'require ID...': every ID a known one of the module's protocol. 0 or -1. */
static int read_require(const struct cf_meta_module *mod, char *value, struct cf_case *out, const char *path,
                        unsigned lineno, char *err, size_t errlen)
{
    size_t plen = strlen(mod->req_prefix);
    for (char *id = strtok(value, " \t"); id; id = strtok(NULL, " \t")) {
        enum vw_req r = vw_req_by_id(id);
        if (r == VW_REQ_NONE || strncmp(id, mod->req_prefix, plen) != 0 || out->nreqs == CF_MAX_REQS) {
            snprintf(err, errlen, "%s:%u: '%s' is not an %.*s requirement ID (or too many)", path, lineno, id,
                     prefix_label(mod->req_prefix), mod->req_prefix);
            return -1;
        }
        if (!mod->require_once || !cf_case_has_req(out, r))
            out->reqs[out->nreqs++] = r;
    }
    return 0;
}

/* 'frame N ID' (the step of frame N checks ID) and 'nothing-else ID' (the
 * final silence does). 0 or -1. */
static int read_frame(const struct cf_meta_module *mod, const char *key, char *value, struct cf_meta_frames *frames,
                      const char *path, unsigned lineno, char *err, size_t errlen)
{
    bool numbered = key[0] == 'f';
    char *end = value;
    unsigned long fno = numbered ? strtoul(value, &end, 10) : 0;
    while (*end == ' ' || *end == '\t')
        end++;
    enum vw_req r = vw_req_by_id(end);
    if (r == VW_REQ_NONE || (!mod->frame_any_prefix && strncmp(end, mod->req_prefix, strlen(mod->req_prefix)) != 0) ||
        (numbered && (fno == 0 || end == value || frames->nframe == CF_META_FRAMES))) {
        snprintf(err, errlen, "%s:%u: '%s' takes %san %.*s requirement ID", path, lineno, key,
                 numbered ? "a frame number and " : "", prefix_label(mod->req_prefix), mod->req_prefix);
        return -1;
    }
    if (numbered) {
        frames->frame_no[frames->nframe] = fno;
        frames->frame_req[frames->nframe++] = r;
    } else {
        frames->last_req = r;
    }
    return 0;
}

/* 'packet ACTION SIDE N[-M]': a packet action of the relay, as in a case
 * script (case.h). 0 or -1. */
static int read_packet(char *value, struct cf_case *out, const char *path, unsigned lineno, char *err,
                       size_t errlen)
{
    char *tok[8] = {"packet"};
    int n = 1;
    for (char *w = strtok(value, " \t"); w && n < 8; w = strtok(NULL, " \t"))
        tok[n++] = w;
    char why[160];
    if (cf_case_add_packet(out, tok, n, why, sizeof why) == 0)
        return 0;
    snprintf(err, errlen, "%s:%u: %s", path, lineno, why);
    return -1;
}

int cf_meta_read(const char *path, const struct cf_meta_module *mod, struct cf_case *out,
                 struct cf_meta_frames *frames, char *err, size_t errlen)
{
    memset(frames, 0, sizeof *frames);
    frames->last_req = VW_REQ_NONE;
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open", path);
        return -1;
    }
    char line[512];
    unsigned lineno = 0;
    int rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = 0;
        char *key = strtok(line, " \t\r\n");
        if (!key)
            continue;
        char *value = strtok(NULL, "\r\n");
        while (value && (*value == ' ' || *value == '\t'))
            value++;
        if (!value || !*value) {
            snprintf(err, errlen, "%s:%u: '%s' needs a value", path, lineno, key);
            rc = -1;
        } else if (strcmp(key, "case") == 0) {
            snprintf(out->id, sizeof out->id, "%s", value);
        } else if (strcmp(key, "title") == 0) {
            snprintf(out->title, sizeof out->title, "%s", value);
        } else if (strcmp(key, "section") == 0) {
            snprintf(out->section, sizeof out->section, "%s", value);
        } else if (strcmp(key, "require") == 0) {
            rc = read_require(mod, value, out, path, lineno, err, errlen);
        } else if (strcmp(key, "frame") == 0 || strcmp(key, "nothing-else") == 0) {
            rc = read_frame(mod, key, value, frames, path, lineno, err, errlen);
        } else if (strcmp(key, "verdict") == 0 && strcmp(value, "fail") == 0) {
            out->expect_fail = true;
        } else if (strcmp(key, "verdict") == 0 && strcmp(value, "advisory") == 0) {
            out->advisory = true; /* C35: the first requirement is a reaction the draft leaves open */
        } else if (strcmp(key, "relay") == 0 || strcmp(key, "hostile") == 0) {
            /* as a case script's directives */
            if (strcmp(value, "yes") == 0) {
                *(key[0] == 'r' ? &out->relay : &out->hostile) = true;
            } else {
                snprintf(err, errlen, "%s:%u: '%s' takes yes", path, lineno, key);
                rc = -1;
            }
        } else if (strcmp(key, "packet") == 0) {
            rc = read_packet(value, out, path, lineno, err, errlen);
        } else {
            /* 'verdict pass' too: the module does not know it either, and
             * the unknown-line message lists 'verdict fail' */
            enum cf_meta_key said = mod->key(mod->ctx, key, value, path, lineno, err, errlen);
            if (said == CF_META_KEY_UNKNOWN)
                snprintf(err, errlen, "%s:%u: unknown line '%s' (%s)", path, lineno, key, mod->keys_text);
            rc = said == CF_META_KEY_TAKEN ? 0 : -1;
        }
    }
    fclose(f);
    if (rc == 0 && (!out->id[0] || !out->nreqs)) {
        snprintf(err, errlen, "%s: needs 'case ID' and 'require ID...'", path);
        rc = -1;
    }
    return rc;
}

void cf_meta_capture_path(const char *meta_path, char *out, size_t outlen)
{
    size_t n = strlen(meta_path);
    int stem = (int)(n >= 5 ? n - 5 : n); /* without ".meta" */
    snprintf(out, outlen, "%.*s.pcapng", stem, meta_path);
    if (!cf_is_regular_file(out))
        snprintf(out, outlen, "%.*s.pcap", stem, meta_path);
}

struct cf_step *cf_capture_step(struct cf_case *c, enum cf_step_kind kind, unsigned reserve)
{
    if (CF_MAX_STEPS - c->nsteps <= reserve)
        return NULL;
    struct cf_step *st = &c->steps[c->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = kind;
    st->req = c->reqs[0];
    return st;
}

struct cf_match *cf_capture_match(struct cf_step *st, unsigned field, int64_t value)
{
    if (st->nmatch == CF_MAX_MATCHES)
        return NULL;
    struct cf_match *m = &st->match[st->nmatch++];
    memset(m, 0, sizeof *m);
    m->field = field;
    m->op = CF_OP_EQ;
    m->value = value;
    return m;
}

void cf_capture_need(struct cf_case *c, const char *hook)
{
    for (unsigned i = 0; i < c->nneeds; i++)
        if (strcmp(c->needs[i].any[0], hook) == 0)
            return;
    if (c->nneeds == CF_MAX_NEEDS)
        return;
    struct cf_need *nd = &c->needs[c->nneeds++];
    memset(nd, 0, sizeof *nd);
    snprintf(nd->any[0], sizeof nd->any[0], "%s", hook);
    nd->n = 1;
}

uint32_t cf_capture_digest(uint32_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

unsigned cf_capture_frame_rules(struct cf_case *c, const struct cf_meta_frames *frames, bool expects_only)
{
    unsigned unfound = frames->nframe;
    for (unsigned k = 0; k < frames->nframe; k++) {
        bool found = false;
        for (unsigned i = 0; i < c->nsteps; i++)
            if (c->steps[i].line == frames->frame_no[k] && (!expects_only || c->steps[i].kind == CF_STEP_EXPECT)) {
                c->steps[i].req = frames->frame_req[k];
                found = true;
            }
        if (!found && unfound == frames->nframe)
            unfound = k;
    }
    return unfound;
}
