/* The WARP module: the case vocabulary, the encoder (vw_warp_encode) and a
 * session on the wire library's framer (vw_warp_framer: chunk decoding, the
 * Adler-32, the W4 sequencing rules) that reassembles the target's ULP PDUs
 * (C63) and watches that nothing of an invalid chunk is delivered (C62).
 * See conform/proto/warp.h. */
#include "conform/proto/warp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform/case.h"
#include "conform/core.h"
#include "conform/engine.h"
#include "conform/report.h"
#include "vitcp/iscsi_bhs.h"
#include "vitcp/warp.h"
#include "vitcp/warp_iscsi.h"
#include "vitcp/warp_stream.h"

/* The i-fields are the iSCSI Basic Header Segment at the start of a Send
 * ULP PDU (at least 48 bytes): read from what the target sends, written by
 * a send with iscsi=read|write|data-out|r2t|response (Appendix B, W8). r2t
 * writes the RID the target's last R2T announced; chunks (read only) is how
 * many chunks carried a ULP PDU. */
enum warp_field {
    WF_E, WF_C, WF_L, WF_RSVD, WF_LEN, WF_SSN, WF_OFFSET, WF_RID, WF_PAYLOAD, WF_ADLER,
    WF_IOP, WF_IITT, WF_ITTT, WF_IOFFSET, WF_ILEN, WF_ISTATUS, WF_ROFF, WF_RRID, WF_RTAIL, WF_R2T, WF_CHUNKS,
    WF_COUNT
};
_Static_assert(WF_COUNT <= CF_MAX_FIELDS, "WARP fields fit a step");

static const char *const field_names[WF_COUNT] = {
    [WF_E] = "e", [WF_C] = "c", [WF_L] = "l", [WF_RSVD] = "rsvd", [WF_LEN] = "len", [WF_SSN] = "ssn",
    [WF_OFFSET] = "offset", [WF_RID] = "rid", [WF_PAYLOAD] = "payload", [WF_ADLER] = "adler",
    [WF_IOP] = "iop", [WF_IITT] = "iitt", [WF_ITTT] = "ittt", [WF_IOFFSET] = "ioffset", [WF_ILEN] = "ilen",
    [WF_ISTATUS] = "istatus", [WF_ROFF] = "roff", [WF_RRID] = "rrid", [WF_RTAIL] = "rtail",
    [WF_R2T] = "r2t", [WF_CHUNKS] = "chunks",
};

/* The target's region and what roff=, rtail=, rrid= say of it (C50, and
 * docs/conformance-engine.md "The WARP module"): --region ADDR:HANDLE:LEN,
 * else what `warp-peer --zero-based` announces (C42). Set by run_case for
 * the case that runs. */
static struct {
    uint64_t base;
    uint32_t rid, len;
} region = {0, 1, 1u << 20};

/* The echo cases write at region offsets up to 41000: a smaller region is
 * not one they can test (C50). */
#define WARP_REGION_MIN 65536u

/* A case's 'iscsi' directive (c->flags): it needs a target in iSCSI mode
 * (warp-peer --iscsi), selected by `run --protocol warp --iscsi`. */
#define WARP_CASE_ISCSI 0x1u
/* A send's iscsi= (st->opts) and pattern= (st->str[0]) arguments. */
enum { WARP_ISCSI_NONE, WARP_ISCSI_READ, WARP_ISCSI_WRITE, WARP_ISCSI_DATA_OUT, WARP_ISCSI_R2T, WARP_ISCSI_RESPONSE };
/* answer=not-good (a bit of st->opts): the iSCSI PDU breaks a rule, so the
 * target must not take it: a SCSI Response GOOD for its task fails the case
 * under the case's first requirement; any other answer, silence or a close
 * is the target's choice (C62). */
#define WARP_ANSWER_NOT_GOOD 0x100u
/* invalid (a bit of st->opts): the chunk breaks a rule, so nothing of it may
 * be placed or delivered (line 218): a ULP PDU of the target's that holds
 * its payload fails the case under the case's first requirement; how the
 * target reacts (a close, discarding it, a message of its own) is its
 * choice (C62). */
#define WARP_INVALID 0x200u
#define WARP_INVALID_MAX 4      /* invalid chunks remembered per connection */
#define WARP_INVALID_MIN_LEN 8  /* shorter payloads could turn up by chance */
#define WARP_ISCSI_KIND(opts) ((opts) & 0xFFu)

struct warp_settings {
    bool iscsi; /* --iscsi: the target is an iSCSI target; run the iscsi cases only */
};
_Static_assert(sizeof(struct warp_settings) <= CF_PROTO_STATE_MAX, "WARP settings fit the engine");

/* A case names RDMA Writes "RDMA": no table of vw_warp_type_name's names. */
static int type_by_name(const char *name)
{
    if (strcmp(name, "Send") == 0)
        return VW_WARP_SEND;
    if (strcmp(name, "RDMA") == 0)
        return VW_WARP_RDMA;
    return -1;
}

static bool field_settable(unsigned f)
{
    /* the trailer: adler=good|bad; the opcode and status: iscsi=; chunks: what the target cut */
    return f < WF_COUNT && f != WF_ADLER && f != WF_IOP && f != WF_ISTATUS && f != WF_CHUNKS;
}

static int parse_send_arg(struct cf_step *st, const char *name, const char *v, char *why, size_t whylen)
{
    if (v && strcmp(name, "iscsi") == 0) {
        st->opts &= ~0xFFu;
        if (strcmp(v, "read") == 0) st->opts |= WARP_ISCSI_READ;
        else if (strcmp(v, "write") == 0) st->opts |= WARP_ISCSI_WRITE;
        else if (strcmp(v, "data-out") == 0) st->opts |= WARP_ISCSI_DATA_OUT;
        else if (strcmp(v, "r2t") == 0) st->opts |= WARP_ISCSI_R2T;           /* the tester as target (C64) */
        else if (strcmp(v, "response") == 0) st->opts |= WARP_ISCSI_RESPONSE; /* a SCSI Response GOOD */
        else {
            snprintf(why, whylen, "iscsi= takes read, write, data-out, r2t or response");
            return -1;
        }
        return 1;
    }
    if (!v && strcmp(name, "invalid") == 0) {
        st->opts |= WARP_INVALID;
        return 1;
    }
    if (v && strcmp(name, "answer") == 0) {
        if (strcmp(v, "not-good") != 0) {
            snprintf(why, whylen, "answer= takes not-good");
            return -1;
        }
        st->opts |= WARP_ANSWER_NOT_GOOD;
        return 1;
    }
    if (v && strcmp(name, "pattern") == 0) {
        char *end;
        unsigned long itt = strtoul(v, &end, 0);
        if (!*v || *end || itt > 0xFFFFFFFFul) {
            snprintf(why, whylen, "pattern= takes the iSCSI task's Initiator Task Tag");
            return -1;
        }
        snprintf(st->str[0], sizeof st->str[0], "%lu", itt);
        return 1;
    }
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

/* The tester's open RDMA Write ULP PDU (C51): its chunks share the RID and
 * continue each other's offsets (W4), so a chunk's offset in its ULP PDU,
 * which data=echo compares at, is its offset less the first chunk's. */
struct rdma_pdu {
    bool open;       /* a chunk without L came last */
    uint32_t rid;
    uint64_t start, next;
};

/* The chunk's offset in its RDMA ULP PDU; the PDU follows it. */
static uint64_t rdma_pdu_offset(struct rdma_pdu *p, uint32_t rid, uint64_t offset, size_t len, bool last)
{
    if (!p->open || p->rid != rid || p->next != offset) {
        p->rid = rid;
        p->start = offset;
    }
    uint64_t at = offset - p->start;
    p->next = offset + len;
    p->open = !last;
    return at;
}

/* One ULP PDU of the target's being reassembled (C63): an expect sees the
 * whole ULP PDU, however the target cut it into chunks (lines 182-183,
 * 361). Its header fields are the first chunk's; L and C the last one's,
 * E and the reserved bits any chunk's, adler 1 when every chunk's was right. */
struct pdu_acc {
    bool open;
    struct vw_warp_chunk first;
    uint16_t flags, rsvd;
    bool adler_ok;
    unsigned chunks;
    uint8_t *buf;
    size_t len, cap;
};

/* The largest ULP PDU of the target's reassembled (the echo cases send at
 * most 41000 bytes; an iSCSI READ's Data-In is 4096). */
#define WARP_PDU_MAX (16u << 20)

struct warp_session {
    struct vw_warp_framer framer;
    bool iscsi;                /* the case's 'iscsi': Appendix B checks on what the target sends */
    struct vw_warp_iscsi iscsi_state;
    struct rdma_pdu tx;        /* the tester's open RDMA Write */
    struct pdu_acc acc[2];     /* the target's open Send (0) and RDMA Write (1) ULP PDUs */
    bool have_r2t;             /* an R2T came: its Target Transfer Tag is the RID to write (B.4.1) */
    uint32_t r2t_ttt;
    uint8_t *invalid[WARP_INVALID_MAX]; /* payloads of the tester's invalid chunks, which no ULP PDU */
    size_t invalid_len[WARP_INVALID_MAX]; /* of the target's may hold */
    unsigned ninvalid;
    bool have_cmd;             /* the implementation sent a SCSI Command (listen mode): its task */
    uint32_t cmd_itt;
    bool refuse;               /* answer=not-good was sent: a GOOD SCSI Response for refuse_itt breaks */
    uint32_t refuse_itt;
    enum vw_req case_rule;     /* the rule of the case's invalid chunks (its first requirement, C62) */
    cf_msg_sink sink;
    void *ctx;
    struct cf_rx_verdict *v;
};

static int encode(void *session, const struct cf_step *st, const int64_t *vals, struct cf_encoded *out,
                  char *why, size_t whylen)
{
    struct warp_session *s = session;
    unsigned kind = WARP_ISCSI_KIND(st->opts);
    size_t plen = kind != WARP_ISCSI_NONE ? VW_ISCSI_BHS_LEN
                  : st->set[WF_PAYLOAD] ? (size_t)vals[WF_PAYLOAD] : 0;
    uint8_t *payload = malloc(plen ? plen : 1);
    if (!payload) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    /* pattern=ITT: the iSCSI task's data as warp-peer --iscsi expects it
     * (byte i of the task: ITT * 13 + i * 7 + i / 512, mod 256; i counts
     * from the chunk's offset in the zero-based task buffer) */
    uint32_t itt = st->str[0][0] ? (uint32_t)strtoul(st->str[0], NULL, 10) : 0;
    bool rdma = st->type == VW_WARP_RDMA;
    uint64_t offset = st->set[WF_OFFSET]              ? (uint64_t)vals[WF_OFFSET]
                      : rdma && st->set[WF_ROFF]      ? region.base + (uint64_t)vals[WF_ROFF]
                      : rdma && st->set[WF_RTAIL]     ? region.base + region.len - (uint64_t)vals[WF_RTAIL]
                      : rdma                          ? region.base
                                                      : 0;
    /* r2t=1: the Target Transfer Tag the target's last R2T announced (B.4.1:
     * the RID it allocated), r2t=2: one more (a tag it never announced) */
    if (st->set[WF_R2T] && (!s || !s->have_r2t)) {
        snprintf(why, whylen, "r2t= before the target sent an R2T");
        free(payload);
        return -1;
    }
    uint32_t r2t = st->set[WF_R2T] ? s->r2t_ttt + (vals[WF_R2T] == 2 ? 1u : 0u) : 0;
    uint32_t rid = st->set[WF_RID]                    ? (uint32_t)vals[WF_RID]
                   : st->set[WF_R2T] && rdma          ? r2t
                   : st->set[WF_RRID] && !vals[WF_RRID] ? region.rid + 8u /* a RID not the region's */
                   : rdma                             ? region.rid
                                                      : 0;
    uint64_t at = offset;
    for (size_t i = 0; i < plen; i++)
        payload[i] = st->str[0][0] ? (uint8_t)(itt * 13u + (at + i) * 7u + ((at + i) >> 9))
                                   : cf_pattern_byte(i, st->fill);
    if ((st->opts & WARP_INVALID) && s && s->ninvalid < WARP_INVALID_MAX && plen >= WARP_INVALID_MIN_LEN) {
        uint8_t *copy = malloc(plen);
        if (copy) {
            memcpy(copy, payload, plen);
            s->invalid[s->ninvalid] = copy;
            s->invalid_len[s->ninvalid++] = plen;
        }
    }
    /* the tester as an iSCSI target (listen mode, C64) answers the task of
     * the implementation's last SCSI Command unless iitt= says otherwise */
    bool answer = kind == WARP_ISCSI_R2T || kind == WARP_ISCSI_RESPONSE;
    uint32_t iitt = st->set[WF_IITT]               ? (uint32_t)vals[WF_IITT]
                    : answer && s && s->have_cmd ? s->cmd_itt
                                                 : 1;
    if ((st->opts & WARP_ANSWER_NOT_GOOD) && s) {
        s->refuse = true;
        s->refuse_itt = iitt;
    }
    uint32_t ilen = st->set[WF_ILEN] ? (uint32_t)vals[WF_ILEN] : 0;
    uint32_t ioff = st->set[WF_IOFFSET] ? (uint32_t)vals[WF_IOFFSET] : 0;
    uint32_t cmdsn = st->set[WF_SSN] ? (uint32_t)vals[WF_SSN] : 1;
    if (kind == WARP_ISCSI_READ || kind == WARP_ISCSI_WRITE)
        vw_iscsi_put_scsi_cmd(payload, kind == WARP_ISCSI_READ, iitt, ilen, cmdsn, 0, 0);
    else if (kind == WARP_ISCSI_R2T) /* the RID for the data in its Target Transfer Tag (B.4.1) */
        vw_iscsi_put_r2t(payload, iitt, st->set[WF_ITTT] ? (uint32_t)vals[WF_ITTT] : 1, ioff, ilen, 1, 2);
    else if (kind == WARP_ISCSI_RESPONSE)
        vw_iscsi_put_scsi_rsp(payload, iitt, 0, 2, 2, 0);
    else if (kind == WARP_ISCSI_DATA_OUT) /* the header only: the data went by RDMA Write */
        vw_iscsi_put_data_out(payload, iitt, st->set[WF_ITTT] ? (uint32_t)vals[WF_ITTT]
                                             : st->set[WF_R2T]  ? r2t
                                                                : VW_ISCSI_TTT_NONE,
                              ilen, ioff, 0, 0);
    struct vw_warp_enc enc;
    vw_warp_enc_init(&enc, st->type, payload, plen);
    uint16_t flags = (uint16_t)((st->set[WF_E] && vals[WF_E] ? VW_WARP_FLAG_E : 0) |
                                (st->set[WF_C] && vals[WF_C] ? VW_WARP_FLAG_C : 0) |
                                /* a chunk ends its ULP PDU unless the case says l=0 */
                                (!st->set[WF_L] || vals[WF_L] ? VW_WARP_FLAG_L : 0));
    enc.flags = flags;
    enc.rsvd = st->set[WF_RSVD] ? (uint16_t)vals[WF_RSVD] : 0;
    enc.ssn = st->set[WF_SSN] ? (uint32_t)vals[WF_SSN] : 0;
    enc.offset = offset;
    enc.rid = rid;
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
    out->msg_offset = st->type == VW_WARP_SEND ? (uint32_t)enc.offset
                      : rdma && s ? rdma_pdu_offset(&s->tx, rid, offset, plen, (flags & VW_WARP_FLAG_L) != 0)
                             : 0;
    return 0;
}

static void *session_new(const struct cf_case *c, struct cf_engine *e)
{
    (void)e;
    struct warp_session *s = calloc(1, sizeof *s);
    if (!s || vw_warp_framer_init(&s->framer) < 0) {
        free(s);
        return NULL;
    }
    s->iscsi = (c->flags & WARP_CASE_ISCSI) != 0;
    /* the rule an invalid chunk breaks: the first requirement, or the
     * second of an advisory case (its first is the reaction, C62) */
    s->case_rule = c->advisory && c->nreqs > 1 ? c->reqs[1] : c->nreqs ? c->reqs[0] : VW_REQ_NONE;
    vw_warp_iscsi_init(&s->iscsi_state);
    return s;
}

static void session_free(void *session)
{
    struct warp_session *s = session;
    vw_warp_framer_free(&s->framer);
    free(s->acc[0].buf);
    free(s->acc[1].buf);
    for (unsigned i = 0; i < s->ninvalid; i++)
        free(s->invalid[i]);
    free(s);
}

/* A received message's decoded form: a whole ULP PDU (or a chunk of an
 * unknown type) and how many chunks carried it. */
struct warp_pdu {
    struct vw_warp_chunk c;
    unsigned chunks;
};

/* Hand one message over to the core: dec and its payload (len bytes at
 * data) are copied. */
static void emit(struct warp_session *s, const struct vw_warp_chunk *dec, unsigned chunks, const uint8_t *data,
                 size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    struct warp_pdu *d = malloc(sizeof *d);
    if (!copy || !d) {
        free(copy);
        free(d);
        cf_rx_broke(s->v, VW_REQ_WARP_A_TRUNCATED, "no memory to keep a ULP PDU of %zu bytes", len);
        return;
    }
    if (len)
        memcpy(copy, data, len);
    d->c = *dec;
    d->c.payload = copy;
    d->c.payload_len = len;
    d->chunks = chunks;
    /* a whole ULP PDU: its payload at offset 0 */
    struct cf_msg m = {.type = d->c.type, .raw = copy, .len = len, .payload = copy, .payload_len = len, .decoded = d};
    s->sink(s->ctx, &m);
}

/* Does a ULP PDU of the target's hold the payload of an invalid chunk of
 * the tester's (line 218: it must not have been placed nor delivered)? */
static void check_not_delivered(struct warp_session *s, const struct vw_warp_chunk *pdu, const uint8_t *data,
                                size_t len, uint64_t off)
{
    for (unsigned i = 0; i < s->ninvalid && s->v->req == VW_REQ_NONE && s->case_rule != VW_REQ_NONE; i++) {
        size_t n = s->invalid_len[i];
        for (size_t at = 0; n <= len && at <= len - n; at++)
            if (memcmp(data + at, s->invalid[i], n) == 0) {
                cf_rx_broke(s->v, s->case_rule, "the %s ending at stream offset %llu holds, at its byte %zu, the %zu "
                            "bytes of an invalid chunk the tester sent: the target took that chunk and delivered its "
                            "data (line 218)", vw_warp_type_name(pdu->type), (unsigned long long)off, at, n);
                return;
            }
    }
}

/* An iSCSI PDU of the target's: an R2T gives the RID it allocated for the
 * WRITE's data (B.4.1), which r2t= writes to; a SCSI Response GOOD for a
 * task whose PDU it must not take (answer=not-good) breaks the case's rule. */
static void note_iscsi(struct warp_session *s, const uint8_t *pdu, size_t len, uint64_t off)
{
    struct vw_iscsi_hdr h;
    if (!vw_iscsi_hdr_read(pdu, len, &h))
        return;
    if (h.opcode == VW_ISCSI_R2T) {
        s->have_r2t = true;
        s->r2t_ttt = h.word20;
    }
    if (h.opcode == VW_ISCSI_SCSI_CMD) {
        s->have_cmd = true;
        s->cmd_itt = h.itt;
    }
    if (h.opcode == VW_ISCSI_SCSI_RSP && s->refuse && h.itt == s->refuse_itt && h.status == 0 &&
        s->case_rule != VW_REQ_NONE)
        cf_rx_broke(s->v, s->case_rule, "the Send ending at stream offset %llu is a SCSI Response GOOD for task "
                    "0x%x: the target took the PDU that broke %s", (unsigned long long)off, h.itt,
                    vw_req_id(s->case_rule));
}

static void on_chunk(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_warp_chunk *chunk,
                     enum vw_req err, const struct vw_findings *fs)
{
    struct warp_session *s = ctx;
    (void)raw, (void)len;
    cf_rx_findings(s->v, fs, "chunk at stream offset %llu", (unsigned long long)off);
    if (s->iscsi && err == VW_REQ_NONE) {
        struct vw_findings is;
        vw_findings_clear(&is);
        vw_warp_iscsi_check(&s->iscsi_state, chunk, &is);
        cf_rx_findings(s->v, &is, "chunk at stream offset %llu", (unsigned long long)off);
    }
    if (err != VW_REQ_NONE) {
        cf_rx_broke(s->v, err, "chunk at stream offset %llu cannot be decoded", (unsigned long long)off);
        return;
    }
    /* line 324 "Transmit as zeros": on every chunk of every case (C63) */
    if (chunk->rsvd)
        cf_rx_broke(s->v, VW_REQ_WARP_A_RSVD_ZERO, "chunk at stream offset %llu: reserved bits 0x%03x set (transmit "
                    "as zeros)", (unsigned long long)off, chunk->rsvd);
    if (chunk->type != VW_WARP_SEND && chunk->type != VW_WARP_RDMA) {
        emit(s, chunk, 1, chunk->payload, chunk->payload ? chunk->payload_len : 0);
        return;
    }
    struct pdu_acc *a = &s->acc[chunk->type == VW_WARP_RDMA];
    if (!a->open) {
        a->open = true;
        a->first = *chunk;
        a->flags = a->rsvd = 0;
        a->adler_ok = true;
        a->chunks = 0;
        a->len = 0;
    }
    if (a->len + chunk->payload_len > WARP_PDU_MAX) {
        cf_rx_broke(s->v, VW_REQ_WARP_SUMMARY_L_LAST, "chunk at stream offset %llu: a ULP PDU over %u bytes without "
                    "a chunk with the Last bit", (unsigned long long)off, WARP_PDU_MAX);
        return;
    }
    if (!cf_bytes_append(&a->buf, &a->len, &a->cap, chunk->payload, chunk->payload_len))
        return;
    a->flags |= chunk->flags;
    a->rsvd |= chunk->rsvd;
    a->adler_ok = a->adler_ok && chunk->adler_ok;
    a->chunks++;
    if (!(chunk->flags & VW_WARP_FLAG_L))
        return;
    a->open = false;
    struct vw_warp_chunk pdu = a->first;
    pdu.flags = (uint16_t)((a->flags & VW_WARP_FLAG_E) | (chunk->flags & (VW_WARP_FLAG_C | VW_WARP_FLAG_L)));
    pdu.rsvd = a->rsvd;
    pdu.adler_ok = a->adler_ok;
    if (chunk->type == VW_WARP_SEND)
        note_iscsi(s, a->buf, a->len, off);
    check_not_delivered(s, &pdu, a->buf, a->len, off);
    emit(s, &pdu, a->chunks, a->buf, a->len);
}

static void session_feed(void *session, const uint8_t *data, size_t len, cf_msg_sink sink, void *ctx,
                         struct cf_rx_verdict *v)
{
    struct warp_session *s = session;
    s->sink = sink;
    s->ctx = ctx;
    s->v = v;
    enum vw_req e = vw_warp_framer_feed(&s->framer, data, len, on_chunk, s);
    if (e != VW_REQ_NONE)
        cf_rx_broke(v, e, "the stream cannot be framed at offset %llu", (unsigned long long)s->framer.stream_off);
    else if (s->framer.oom)
        cf_rx_broke(v, VW_REQ_WARP_A_TRUNCATED, "no memory to gather a chunk");
}

static void session_finish(void *session, struct cf_rx_verdict *v)
{
    struct warp_session *s = session;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    vw_warp_framer_finish(&s->framer, &fs);
    if (s->iscsi)
        vw_warp_iscsi_finish(&s->iscsi_state, &fs);
    cf_rx_findings(v, &fs, "chunk at stream offset %llu", (unsigned long long)s->framer.stream_off);
}

/* C45: an expect waits in vain and the target is silent: a ULP PDU it
 * began and never ended lacks the Last bit (line 238), which is the rule
 * to name rather than the waiting step's. */
static void session_stalled(void *session, struct cf_rx_verdict *v)
{
    struct warp_session *s = session;
    for (int i = 0; i < 2; i++)
        if (s->acc[i].open)
            cf_rx_broke(v, VW_REQ_WARP_SUMMARY_L_LAST, "the target's %s ULP PDU (%u chunks, %zu bytes) has no chunk "
                        "with the Last bit, and the target went silent", i ? "RDMA Write" : "Send", s->acc[i].chunks,
                        s->acc[i].len);
}

static bool field_value(const struct cf_msg *m, unsigned field, int64_t *v)
{
    const struct warp_pdu *pdu = m->decoded;
    const struct vw_warp_chunk *c = &pdu->c;
    bool send = c->type == VW_WARP_SEND, rdma = c->type == VW_WARP_RDMA;
    struct vw_iscsi_hdr h;
    if (field >= WF_IOP && field <= WF_ISTATUS) {
        /* the iSCSI header at the start of a Send ULP PDU */
        if (!send || c->offset != 0 || !c->payload || !vw_iscsi_hdr_read(c->payload, c->payload_len, &h))
            return false;
        switch (field) {
        case WF_IOP: *v = h.opcode; return true;
        case WF_IITT: *v = h.itt; return true;
        case WF_ITTT: *v = h.word20; return true;
        case WF_IOFFSET: *v = h.buffer_offset; return true;
        case WF_ILEN: *v = h.data_len; return true;
        case WF_ISTATUS: *v = h.status; return true;
        default: return false;
        }
    }
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
    case WF_ROFF: *v = (int64_t)(c->offset - region.base); return rdma;
    case WF_RTAIL: *v = (int64_t)(region.base + region.len - c->offset); return rdma;
    case WF_RRID: *v = c->rid == region.rid; return rdma;
    case WF_CHUNKS: *v = pdu->chunks; return true;
    default: return false;
    }
}

static void describe(const struct cf_msg *m, char *out, size_t n)
{
    const struct warp_pdu *pdu = m->decoded;
    const struct vw_warp_chunk *c = &pdu->c;
    char where[64];
    if (c->type == VW_WARP_RDMA)
        snprintf(where, sizeof where, "rid=%u offset=%llu", c->rid, (unsigned long long)c->offset);
    else
        snprintf(where, sizeof where, "ssn=%u", c->ssn);
    snprintf(out, n, "%s%s%s%s %s payload=%zu in %u chunk%s", vw_warp_type_name(c->type),
             (c->flags & VW_WARP_FLAG_E) ? " E" : "", (c->flags & VW_WARP_FLAG_C) ? " C" : "",
             (c->flags & VW_WARP_FLAG_L) ? " L" : "", where, c->payload_len, pdu->chunks, pdu->chunks == 1 ? "" : "s");
}

static int parse_directive(struct cf_case *c, char *const *tok, int ntok, char *why, size_t whylen)
{
    if (strcmp(tok[0], "iscsi") != 0)
        return 0;
    if (ntok != 1) {
        snprintf(why, whylen, "'iscsi' takes nothing");
        return -1;
    }
    c->flags |= WARP_CASE_ISCSI;
    return 1;
}

static const struct cf_option run_options[] = {
    {"--iscsi", false},
    {NULL, false},
};

static int set_option(void *state, const char *name, const char *value, char *why, size_t whylen)
{
    (void)value, (void)why, (void)whylen;
    struct warp_settings *s = state;
    if (strcmp(name, "--iscsi") == 0)
        s->iscsi = true;
    return 0;
}

/* `run --iscsi`: the target is an iSCSI target, which offers none of the
 * echo conventions (its cases need none); otherwise no opinion (probe). */
static int hook_offered(const void *state, const char *hook)
{
    (void)hook;
    const struct warp_settings *s = state;
    return s && s->iscsi ? 0 : -1;
}

/* The iscsi cases need a target in iSCSI mode, the others an echo target:
 * `run --protocol warp --iscsi` runs the first, without it the others. */
static void run_case(struct cf_engine *e, const struct cf_case *c, struct cf_result *res)
{
    const struct warp_settings *s = cf_engine_state(e, c->proto);
    bool iscsi_case = (c->flags & WARP_CASE_ISCSI) != 0;
    if (e->region_set) {
        region.base = e->region_addr;
        region.rid = e->region_handle;
        region.len = e->region_len;
    }
    if (s && s->iscsi != iscsi_case) {
        res->verdict = CF_SKIP;
        cf_result_set_message(res, "%s: %s", c->file,
                              iscsi_case ? "an iSCSI case: it needs a target in iSCSI mode (run --iscsi)"
                                         : "an echo case: --iscsi runs the iSCSI cases only");
        return;
    }
    if (!iscsi_case && region.len < WARP_REGION_MIN) {
        res->verdict = CF_SKIP;
        cf_result_set_message(res, "%s: the target's region (--region) holds %u bytes; the echo cases need at "
                              "least %u (C50)", c->file, region.len, WARP_REGION_MIN);
        return;
    }
    cf_generic_run_case(e, c, res);
}

/* Test conventions its cases may need (C60, docs/conformance.md "Test conventions"). */
static const struct cf_hook_def warp_hooks[] = {
    {"echo", "the target sends each Send ULP PDU it delivered back as a Send ULP PDU of its own"},
    {"rdma-echo", "the target sends the bytes an RDMA Write placed back to the tester as an RDMA Write (warp-peer's W6)"},
    {"readback", "the target sends the bytes an RDMA Write placed back to the tester in a Send ULP PDU (warp-peer --choice readback)"},
    {NULL, NULL},
};

const struct conform_protocol cf_proto_warp = {
    .name = "warp",
    .title = "WARP",
    .unit = "chunk",
    .req_prefix = "WARP-",
    .default_port = VW_WARP_DEFAULT_PORT,
    .cases_subdir = "warp",
    .type_by_name = type_by_name,
    .type_name = vw_warp_type_name,
    .field_names = field_names,
    .field_count = WF_COUNT,
    .field_settable = field_settable,
    .max_payload = VW_WARP_CHUNK_MAX - VW_WARP_RDMA_HDR_LEN - VW_WARP_ADLER_LEN,
    .parse_directive = parse_directive,
    .parse_send_arg = parse_send_arg,
    .run_options = run_options,
    .run_usage = "[--iscsi]",
    .run_help = "  --iscsi: the target is in iSCSI mode (warp-peer --iscsi); run the WARP iSCSI cases only\n"
                "  (without it, the echo cases only).\n",
    .set_option = set_option,
    .run_case = run_case,
    .encode = encode,
    .session_new = session_new,
    .session_free = session_free,
    .session_feed = session_feed,
    .session_finish = session_finish,
    .session_stalled = session_stalled,
    .msg_free = cf_msg_free,
    .field_value = field_value,
    .describe = describe,
    .hooks = warp_hooks,
    .hook_offered = hook_offered,
};
