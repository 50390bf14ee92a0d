/* The WARP module: the case vocabulary, the encoder (vw_warp_encode) and a
 * session on the wire library's framer (vw_warp_framer: chunk decoding, the
 * Adler-32, the W4 sequencing rules). See conform/proto/warp.h. */
#include "conform/proto/warp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform/case.h"
#include "conform/core.h"
#include "vitcp/warp.h"
#include "vitcp/warp_stream.h"

enum warp_field { WF_E, WF_C, WF_L, WF_RSVD, WF_LEN, WF_SSN, WF_OFFSET, WF_RID, WF_PAYLOAD, WF_ADLER, WF_COUNT };
_Static_assert(WF_COUNT <= CF_MAX_FIELDS, "WARP fields fit a step");

static const char *const field_names[WF_COUNT] = {
    [WF_E] = "e", [WF_C] = "c", [WF_L] = "l", [WF_RSVD] = "rsvd", [WF_LEN] = "len", [WF_SSN] = "ssn",
    [WF_OFFSET] = "offset", [WF_RID] = "rid", [WF_PAYLOAD] = "payload", [WF_ADLER] = "adler",
};

static int field_by_name(const char *name)
{
    for (int i = 0; i < WF_COUNT; i++)
        if (strcmp(field_names[i], name) == 0)
            return i;
    return -1;
}

static const char *field_name(unsigned f)
{
    return f < WF_COUNT ? field_names[f] : "?";
}

static int type_by_name(const char *name)
{
    if (strcmp(name, "Send") == 0)
        return VW_WARP_SEND;
    if (strcmp(name, "RDMA") == 0)
        return VW_WARP_RDMA;
    return -1;
}

static const char *type_name(unsigned type)
{
    return vw_warp_type_name(type);
}

static bool field_settable(unsigned f)
{
    return f < WF_COUNT && f != WF_ADLER; /* the trailer: adler=good|bad|le */
}

static int parse_send_arg(struct cf_step *st, const char *name, const char *v, char *why, size_t whylen)
{
    if (!v || strcmp(name, "adler") != 0)
        return 0;
    if (strcmp(v, "good") == 0) st->trailer = CF_TRAILER_GOOD;
    else if (strcmp(v, "bad") == 0) st->trailer = CF_TRAILER_BAD;
    else {
        snprintf(why, whylen, "adler= takes good or bad");
        return -1;
    }
    return 1;
}

static int encode(void *session, const struct cf_step *st, const int64_t *vals, struct cf_encoded *out,
                  char *why, size_t whylen)
{
    (void)session;
    size_t plen = st->set[WF_PAYLOAD] ? (size_t)vals[WF_PAYLOAD] : 0;
    uint8_t *payload = malloc(plen ? plen : 1);
    if (!payload) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < plen; i++)
        payload[i] = cf_pattern_byte(i, st->fill);
    struct vw_warp_enc enc;
    vw_warp_enc_init(&enc, st->type, payload, plen);
    uint16_t flags = (uint16_t)((st->set[WF_E] && vals[WF_E] ? VW_WARP_FLAG_E : 0) |
                                (st->set[WF_C] && vals[WF_C] ? VW_WARP_FLAG_C : 0) |
                                /* a chunk ends its ULP PDU unless the case says l=0 */
                                (!st->set[WF_L] || vals[WF_L] ? VW_WARP_FLAG_L : 0));
    enc.flags = flags;
    enc.rsvd = st->set[WF_RSVD] ? (uint16_t)vals[WF_RSVD] : 0;
    enc.ssn = st->set[WF_SSN] ? (uint32_t)vals[WF_SSN] : 0;
    enc.offset = st->set[WF_OFFSET] ? (uint64_t)vals[WF_OFFSET] : 0;
    enc.rid = st->set[WF_RID] ? (uint32_t)vals[WF_RID] : 0;
    if (st->set[WF_LEN]) {
        enc.keep_chunk_len = true;
        enc.chunk_len = (uint16_t)vals[WF_LEN];
    }
    enc.adler = st->trailer == CF_TRAILER_BAD ? VW_WARP_ADLER_BAD : VW_WARP_ADLER_GOOD;
    size_t n = vw_warp_encoded_len(&enc);
    out->bytes = malloc(n ? n : 1);
    if (!out->bytes || (n && vw_warp_encode(&enc, out->bytes, n) != n)) {
        snprintf(why, whylen, "the WARP encoder cannot write this chunk (payload %zu bytes: a chunk holds at "
                 "most %u)", plen, VW_WARP_CHUNK_MAX);
        free(payload);
        return -1;
    }
    free(payload);
    out->len = n;
    out->payload_off = vw_warp_type_hdr_len(st->type);
    if (out->payload_off > n)
        out->payload_off = n;
    out->payload_len = plen <= n - out->payload_off ? plen : 0;
    out->msg_offset = st->type == VW_WARP_SEND ? (uint32_t)enc.offset : 0;
    return 0;
}

struct warp_session {
    struct vw_warp_framer framer;
    cf_msg_sink sink;
    void *ctx;
    struct cf_rx_verdict *v;
};

static void *session_new(const struct cf_case *c)
{
    (void)c;
    struct warp_session *s = calloc(1, sizeof *s);
    if (s && vw_warp_framer_init(&s->framer) < 0) {
        free(s);
        return NULL;
    }
    return s;
}

static void session_free(void *session)
{
    struct warp_session *s = session;
    vw_warp_framer_free(&s->framer);
    free(s);
}

/* The first error finding names the rule (warnings and notes do not fail). */
static void take_findings(struct cf_rx_verdict *v, const struct vw_findings *fs, uint64_t off)
{
    for (unsigned i = 0; i < fs->count && v->req == VW_REQ_NONE; i++)
        if (fs->item[i].severity == VW_SEV_ERROR) {
            v->req = fs->item[i].req;
            snprintf(v->detail, sizeof v->detail, "chunk at stream offset %llu: %s",
                     (unsigned long long)off, fs->item[i].detail);
        }
}

static void on_chunk(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_warp_chunk *chunk,
                     enum vw_req err, const struct vw_findings *fs)
{
    struct warp_session *s = ctx;
    take_findings(s->v, fs, off);
    if (err != VW_REQ_NONE) {
        if (s->v->req == VW_REQ_NONE) {
            s->v->req = err;
            snprintf(s->v->detail, sizeof s->v->detail, "chunk at stream offset %llu cannot be decoded",
                     (unsigned long long)off);
        }
        return;
    }
    struct cf_msg m = {0};
    uint8_t *copy = malloc(len ? len : 1);
    struct vw_warp_chunk *dec = malloc(sizeof *dec);
    if (!copy || !dec) {
        free(copy);
        free(dec);
        return;
    }
    memcpy(copy, raw, len);
    *dec = *chunk;
    dec->payload = chunk->payload ? copy + (chunk->payload - raw) : NULL;
    m.type = chunk->type;
    m.raw = copy;
    m.len = len;
    m.payload = dec->payload;
    m.payload_len = dec->payload_len;
    m.msg_offset = chunk->type == VW_WARP_SEND ? chunk->offset : 0;
    m.decoded = dec;
    s->sink(s->ctx, &m);
}

static void session_feed(void *session, const uint8_t *data, size_t len, cf_msg_sink sink, void *ctx,
                         struct cf_rx_verdict *v)
{
    struct warp_session *s = session;
    s->sink = sink;
    s->ctx = ctx;
    s->v = v;
    enum vw_req e = vw_warp_framer_feed(&s->framer, data, len, on_chunk, s);
    if (e != VW_REQ_NONE && v->req == VW_REQ_NONE) {
        v->req = e;
        snprintf(v->detail, sizeof v->detail, "the stream cannot be framed at offset %llu",
                 (unsigned long long)s->framer.stream_off);
    } else if (s->framer.oom && v->req == VW_REQ_NONE) {
        v->req = VW_REQ_WARP_A_TRUNCATED;
        snprintf(v->detail, sizeof v->detail, "no memory to gather a chunk");
    }
}

static void session_finish(void *session, struct cf_rx_verdict *v)
{
    struct warp_session *s = session;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    vw_warp_framer_finish(&s->framer, &fs);
    take_findings(v, &fs, s->framer.stream_off);
}

static void msg_free(struct cf_msg *m)
{
    free((void *)m->raw);
    free(m->decoded);
    m->raw = NULL;
    m->decoded = NULL;
}

static bool field_value(const struct cf_msg *m, unsigned field, int64_t *v)
{
    const struct vw_warp_chunk *c = m->decoded;
    bool send = c->type == VW_WARP_SEND, rdma = c->type == VW_WARP_RDMA;
    switch (field) {
    case WF_E: *v = !!(c->flags & VW_WARP_FLAG_E); return true;
    case WF_C: *v = !!(c->flags & VW_WARP_FLAG_C); return true;
    case WF_L: *v = !!(c->flags & VW_WARP_FLAG_L); return true;
    case WF_RSVD: *v = c->rsvd; return true;
    case WF_LEN: *v = c->chunk_len; return true;
    case WF_SSN: *v = c->ssn; return send;
    case WF_OFFSET: *v = (int64_t)c->offset; return send || rdma;
    case WF_RID: *v = c->rid; return rdma;
    case WF_PAYLOAD: *v = (int64_t)c->payload_len; return true;
    case WF_ADLER: *v = c->adler_ok; return true;
    default: return false;
    }
}

static void describe(const struct cf_msg *m, char *out, size_t n)
{
    const struct vw_warp_chunk *c = m->decoded;
    snprintf(out, n, "%s%s%s%s ssn=%u offset=%llu payload=%zu", vw_warp_type_name(c->type),
             (c->flags & VW_WARP_FLAG_E) ? " E" : "", (c->flags & VW_WARP_FLAG_C) ? " C" : "",
             (c->flags & VW_WARP_FLAG_L) ? " L" : "", c->ssn, (unsigned long long)c->offset, c->payload_len);
}

const struct conform_protocol cf_proto_warp = {
    .name = "warp",
    .title = "WARP",
    .unit = "chunk",
    .req_prefix = "WARP-",
    .default_port = VW_WARP_DEFAULT_PORT,
    .cases_subdir = "warp",
    .type_by_name = type_by_name,
    .type_name = type_name,
    .field_by_name = field_by_name,
    .field_name = field_name,
    .field_settable = field_settable,
    .max_payload = VW_WARP_CHUNK_MAX - VW_WARP_RDMA_HDR_LEN - VW_WARP_ADLER_LEN,
    .parse_send_arg = parse_send_arg,
    .encode = encode,
    .session_new = session_new,
    .session_free = session_free,
    .session_feed = session_feed,
    .session_finish = session_finish,
    .msg_free = msg_free,
    .field_value = field_value,
    .describe = describe,
};
