/*
 * The skeleton of a protocol module (docs/conformance-engine.md, "Adding a
 * protocol"), for a toy protocol SKEL: each message is a 4-byte header
 * (type, flags, payload length big-endian) and its payload, over TCP port
 * 7999. It has the two parts every protocol has, each filling the members
 * conform/protocol.h asks for:
 *
 *   cf_proto_skeleton  the conformance module: the case language's words
 *                      for SKEL's messages, encode, a session that frames
 *                      and decodes what the target sends;
 *   cf_lint_skeleton   the lint module: which connections are SKEL's, and
 *                      the checks on their messages.
 *
 * It is compiled into test_conform_skeleton, which registers it in a
 * registry of its own (so it never rots), not in the shipped one.
 *
 * A real module keeps no rule of its own here: the draft's rules are
 * catalog entries (wire/catalog/NAME.def) checked by the wire library
 * (wire/), whose decoders fill a struct vw_findings with the catalog's
 * IDs; the module hands those on (cf_rx_verdict, cf_lint_findings). SKEL
 * has no draft and no catalog, so where a real module would call the wire
 * library's checks, the skeleton only frames and says so in a note.
 */
#include "skeleton_module.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform/case.h"
#include "conform/core.h"
#include "vitcp/pcap_reader.h"

/* ------------------------------------------------------------ the wire */

/* (A real module has these from the wire library: vitcp/NAME.h.) */
#define SKEL_HDR_LEN 4u
#define SKEL_MAX_PAYLOAD 1024u
#define SKEL_PORT 7999

static size_t skel_message_len(const uint8_t *hdr)
{
    return SKEL_HDR_LEN + ((size_t)hdr[2] << 8 | hdr[3]);
}

/* A direction's bytes cut into messages: what is held of the next one. */
struct skel_framer {
    uint8_t buf[SKEL_HDR_LEN + SKEL_MAX_PAYLOAD];
    size_t have;
    bool lost; /* a length past SKEL_MAX_PAYLOAD: framing lost */
};

/* Feeds bytes; calls each(ctx, message, len) for every whole message. */
static void skel_frame(struct skel_framer *f, const uint8_t *data, size_t len,
                       void (*each)(void *ctx, const uint8_t *msg, size_t len), void *ctx)
{
    while (len && !f->lost) {
        size_t want = f->have < SKEL_HDR_LEN ? SKEL_HDR_LEN : skel_message_len(f->buf);
        if (want > sizeof f->buf) {
            f->lost = true;
            return;
        }
        size_t take = want - f->have < len ? want - f->have : len;
        memcpy(f->buf + f->have, data, take);
        f->have += take;
        data += take;
        len -= take;
        if (f->have >= SKEL_HDR_LEN && f->have == skel_message_len(f->buf)) {
            each(ctx, f->buf, f->have);
            f->have = 0;
        }
    }
}

/* ------------------------------------------------ the conformance module */

enum { SKEL_TYPE_HELLO = 1, SKEL_TYPE_DATA = 2, SKEL_TYPES };
/* The vocabulary: tables of names by number, the core looks them up (type 0 has none). */
static const char *const type_names[SKEL_TYPES] = {[SKEL_TYPE_HELLO] = "Hello", [SKEL_TYPE_DATA] = "Data"};

enum { F_PAYLOAD, F_FLAGS, F_LENGTH, F_COUNT };
static const char *const field_names[F_COUNT] = {"payload", "flags", "length"};

static bool field_settable(unsigned field)
{
    return field == F_PAYLOAD || field == F_FLAGS; /* the length follows the payload */
}

static bool field_relative(unsigned field)
{
    (void)field;
    return false;
}

/* A send step's bytes: the header, then payload=N bytes of its fill pattern. */
static int encode(void *session, const struct cf_step *st, const int64_t *vals, struct cf_encoded *out, char *why,
                  size_t whylen)
{
    (void)session;
    size_t plen = st->set[F_PAYLOAD] ? (size_t)vals[F_PAYLOAD] : 0;
    if (!(out->bytes = malloc(SKEL_HDR_LEN + plen))) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    out->bytes[0] = (uint8_t)st->type;
    out->bytes[1] = st->set[F_FLAGS] ? (uint8_t)vals[F_FLAGS] : 0;
    out->bytes[2] = (uint8_t)(plen >> 8);
    out->bytes[3] = (uint8_t)plen;
    for (size_t i = 0; i < plen; i++)
        out->bytes[SKEL_HDR_LEN + i] = cf_pattern_byte(i, st->fill);
    out->len = SKEL_HDR_LEN + plen;
    out->payload_off = SKEL_HDR_LEN;
    out->payload_len = plen;
    out->msg_offset = 0;
    return 0;
}

/* A session: the target's bytes framed (a real one keeps the protocol's
 * negotiation and sequencing state here, in the wire library's structs). */
struct skel_session {
    struct skel_framer framer;
    cf_msg_sink sink;
    void *ctx;
};

struct skel_decoded {
    unsigned flags, length;
};

static void *session_new(const struct cf_case *c, struct cf_engine *e)
{
    (void)c, (void)e;
    return calloc(1, sizeof(struct skel_session));
}

static void session_free(void *session)
{
    free(session);
}

static void deliver(void *ctx, const uint8_t *raw, size_t len)
{
    struct skel_session *s = ctx;
    uint8_t *copy = malloc(len);
    struct skel_decoded *d = malloc(sizeof *d);
    if (!copy || !d) {
        free(copy);
        free(d);
        return;
    }
    memcpy(copy, raw, len);
    d->flags = raw[1];
    d->length = (unsigned)(len - SKEL_HDR_LEN);
    struct cf_msg m = {.type = raw[0], .raw = copy, .len = len, .payload = copy + SKEL_HDR_LEN,
                       .payload_len = len - SKEL_HDR_LEN, .decoded = d};
    s->sink(s->ctx, &m);
}

static void session_feed(void *session, const uint8_t *data, size_t len, cf_msg_sink sink, void *ctx,
                         struct cf_rx_verdict *v)
{
    (void)v; /* a real session hands each message's findings to cf_rx_findings(v, ...) */
    struct skel_session *s = session;
    s->sink = sink;
    s->ctx = ctx;
    skel_frame(&s->framer, data, len, deliver, s);
}

static void session_finish(void *session, struct cf_rx_verdict *v)
{
    (void)session;
    (void)v; /* a real session names the rule a message cut short breaks */
}

static void session_sent(void *session, const struct cf_encoded *enc)
{
    (void)session;
    (void)enc; /* a real session notes the tester's sequence numbers here */
}

static bool field_value(const struct cf_msg *m, unsigned field, int64_t *value)
{
    const struct skel_decoded *d = m->decoded;
    switch (field) {
    case F_PAYLOAD: *value = (int64_t)m->payload_len; return true;
    case F_FLAGS: *value = d->flags; return true;
    case F_LENGTH: *value = d->length; return true;
    }
    return false;
}

static void describe(const struct cf_msg *m, char *out, size_t n)
{
    const struct skel_decoded *d = m->decoded;
    snprintf(out, n, "%s flags=%u length=%u", cf_name_at(type_names, SKEL_TYPES, m->type), d->flags, d->length);
}

const struct conform_protocol cf_proto_skeleton = {
    .name = "skel",
    .title = "SKEL",
    .unit = "message",
    .req_prefix = "SKEL-",
    .default_port = SKEL_PORT,
    .cases_subdir = "skel",
    .type_names = type_names,
    .type_count = SKEL_TYPES,
    .field_names = field_names,
    .field_count = F_COUNT,
    .field_settable = field_settable,
    .field_relative = field_relative,
    .max_payload = SKEL_MAX_PAYLOAD,
    .encode = encode,
    .session_new = session_new,
    .session_free = session_free,
    .session_feed = session_feed,
    .session_finish = session_finish,
    .session_sent = session_sent,
    .msg_free = cf_msg_free, /* raw and decoded: a heap block each */
    .field_value = field_value,
    .describe = describe,
};

/* --------------------------------------------------------- the lint module */

enum { COUNT_CONNECTIONS, COUNT_MESSAGES };

static int conn_open(struct cf_lint *l, struct cf_lint_flow *f, const struct vn_tcp_event *ev)
{
    (void)f;
    (void)ev;
    cf_lint_counted(l, COUNT_CONNECTIONS);
    return 0; /* the state (two framers) is zeroed: ready */
}

static void conn_free(struct cf_lint_flow *f)
{
    (void)f; /* nothing allocated beyond the state itself */
}

static void lint_message(void *ctx, const uint8_t *msg, size_t len)
{
    (void)len;
    struct cf_lint *l = ctx;
    cf_lint_counted(l, COUNT_MESSAGES);
    /* A real module decodes the message with the wire library here and
     * reports its findings: cf_lint_findings(l, err, "NAME Type", "cannot
     * be parsed", &fs). SKEL has no rules: an unknown type is only noted. */
    if (msg[0] == 0 || msg[0] >= SKEL_TYPES)
        cf_lint_issue(l, cf_lint_frame(l), cf_lint_dir(l), VW_REQ_NONE, VW_SEV_NOTE, "SKEL message of type %u",
                      msg[0]);
}

static void data(struct cf_lint *l, struct cf_lint_flow *f, int dir, const struct vn_tcp_event *ev)
{
    struct skel_framer *framer = f->state;
    skel_frame(&framer[dir], ev->data, ev->len, lint_message, l);
    if (framer[dir].lost) {
        f->dead[dir] = true;
        cf_lint_issue(l, ev->frame, dir, VW_REQ_NONE, VW_SEV_NOTE,
                      "SKEL message longer than %u bytes: the rest of this direction is not checked",
                      SKEL_MAX_PAYLOAD);
    }
}

static void direction_end(struct cf_lint *l, struct cf_lint_flow *f, int dir, struct vw_findings *fs)
{
    (void)fs; /* a real module adds the rule a message cut short breaks */
    struct skel_framer *framer = f->state;
    if (!f->dead[dir] && framer[dir].have)
        cf_lint_issue(l, cf_lint_frame(l), dir, VW_REQ_NONE, VW_SEV_NOTE,
                      "%zu bytes of an unfinished SKEL message at the end of this direction", framer[dir].have);
}

const struct cf_lint_module cf_lint_skeleton = {
    .protocol = &cf_proto_skeleton,
    .title = "SKEL",
    .port_option = "--skel-port",
    .help = "  SKEL: TCP port --skel-port (7999).\n",
    .counters = {{"skel_connections", "SKEL connections"}, {"skel_messages", "messages"}},
    .conn_size = 2 * sizeof(struct skel_framer),
    .conn_open = conn_open,
    .conn_free = conn_free,
    .data = data,
    .direction_end = direction_end,
};
