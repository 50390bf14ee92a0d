/* A capture case's metadata (NAME.meta beside NAME.pcapng or NAME.pcap):
 * the one line format and the keys every module's capture cases share,
 * read in one place; each module's own keys go to its callback
 * (docs/conformance-engine.md, "One capture-case format"). */
#ifndef CONFORM_META_H
#define CONFORM_META_H

#include <stdbool.h>
#include <stddef.h>

#include "conform/case.h"

/* How many 'frame N ID' lines a .meta may hold. */
enum { CF_META_FRAMES = 32 };

/* What a module made of a key that is not a shared one. */
enum cf_meta_key {
    CF_META_KEY_TAKEN,   /* read */
    CF_META_KEY_BAD,     /* the module's key with a wrong value: err says why */
    CF_META_KEY_UNKNOWN, /* not the module's either: the reader reports an unknown line */
};

/* A module's part of the reading. */
struct cf_meta_module {
    /* the module's catalog prefix ("NAME-"): 'require' takes only IDs with
     * it; the messages name the protocol by it ("a NAME requirement ID") */
    const char *req_prefix;
    /* 'frame' and 'nothing-else' take any catalog ID, not only the prefix's
     * (a module whose loader always did keeps it) */
    bool frame_any_prefix;
    /* a 'require' ID given twice is listed once (else the repeat is kept:
     * each module keeps what its loader always did) */
    bool require_once;
    /* every key the module's .meta takes, shared or its own, as the
     * unknown-line message lists them: "case, title, section, ..." */
    const char *keys_text;
    /* One line whose key is not shared. value has no leading blank, is
     * never empty, and may be cut up (strtok). Messages start "path:lineno: ". */
    enum cf_meta_key (*key)(void *ctx, const char *key, char *value, const char *path, unsigned lineno, char *err,
                            size_t errlen);
    void *ctx;
};

/* What the shared keys say that the case does not hold itself: the
 * module applies it to the steps the capture makes. */
struct cf_meta_frames {
    unsigned long frame_no[CF_META_FRAMES]; /* 'frame N ID': the step of frame N checks ID */
    enum vw_req frame_req[CF_META_FRAMES];
    unsigned nframe;
    enum vw_req last_req; /* 'nothing-else ID': the final silence checks ID (else VW_REQ_NONE) */
};

/* Read the .meta at path: blank lines and '#' comments skipped, "KEY VALUE"
 * lines; the shared keys (the docs named above) into out, but 'frame N ID'
 * and 'nothing-else ID' into frames; every other key to mod->key. A .meta
 * without 'case' and 'require' is refused.
 * Returns 0, or -1 with "path:line: reason" (or "path: reason") in err. */
int cf_meta_read(const char *path, const struct cf_meta_module *mod, struct cf_case *out,
                 struct cf_meta_frames *frames, char *err, size_t errlen);

/* The recording beside NAME.meta: NAME.pcapng if there is one, else
 * NAME.pcap (whose absence the pcap reader then reports). */
void cf_meta_capture_path(const char *meta_path, char *out, size_t outlen);

/* Building the steps of a capture case: what every module's loader does. */

/* The next step of c, zeroed, of kind and checking c's first requirement;
 * NULL when only reserve steps are left (the loader keeps them for its last
 * steps, which it then takes with reserve 0). */
struct cf_step *cf_capture_step(struct cf_case *c, enum cf_step_kind kind, unsigned reserve);
/* "field=value" in st (nothing when st holds CF_MAX_MATCHES already): the
 * match, or NULL. */
struct cf_match *cf_capture_match(struct cf_step *st, unsigned field, int64_t value);
/* The case needs a test convention (C60): hook, once (while there is room). */
void cf_capture_need(struct cf_case *c, const char *hook);
/* FNV-1a (32 bits) of n bytes, going on from h (CF_DIGEST_START for new
 * ones): a capture case compares the target's data with the recorded data
 * through it. */
#define CF_DIGEST_START 2166136261u
uint32_t cf_capture_digest(uint32_t h, const uint8_t *p, size_t n);
/* 'frame N ID': the steps made from frame N (their line; only the expects if
 * expects_only) check ID, a later line over an earlier. Returns the index of
 * the first line no such step is from, or frames->nframe. */
unsigned cf_capture_frame_rules(struct cf_case *c, const struct cf_meta_frames *frames, bool expects_only);

#endif
