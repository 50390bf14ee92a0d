/* The IFT module: the case vocabulary, the encoder (the wire library's
 * indication, DDP and frame encoders) and a session on its reader and
 * negotiation (vw_ift_reader, vw_ift_nego, vw_ift_frame_decode_as_sent: the
 * lint's reading of a direction). See conform/proto/ift.h and
 * docs/conformance-engine.md ("The IFT module"); decisions I16-I18, C44. */
#include "conform/proto/ift.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform/case.h"
#include "conform/core.h"
#include "conform/engine.h"
#include "conform/meta.h"
#include "conform/report.h"
#include "vitcp/checksum.h"
#include "vitcp/ift.h"
#include "vitcp/ift_stream.h"
#include "vitcp/pcap_reader.h"

/* Message types: RDMAP opcodes in RDMA mode (both R set), then the
 * indication and the DDP mode's segments (the second DDP byte the ULP's). */
enum { IT_IND = 8, IT_TAGGED = 9, IT_UNTAGGED = 10, IT_ULP = 11, IT_COUNT };

/* The suite's demonstration ULP for a mid-stream upgrade (I32): the tester
 * asks with these 16 bytes before any indication, a target offering
 * 'ulp-upgrade' answers with the 16 of ULP_AGREED, then IFT starts. */
#define ULP_REQUEST "ULP RDDP UPGRADE"
#define ULP_LEN 16u

enum ift_field {
    F_MAGIC, F_VERSION, F_BC, F_PH, F_R, F_HC, F_PC, F_IH, F_IP, F_SP, F_SM, F_RM, F_RSVD, F_VTAG, F_CRC,
    F_VTAGDUP,
    F_HSIZE, F_PSIZE, F_T, F_L, F_RV, F_OP, F_STAG, F_TO, F_ROFF, F_QN, F_MSN, F_MO, F_PAYLOAD, F_FILL,
    F_SIZE, F_SSTAG, F_DIGEST, F_COUNT
};
_Static_assert(F_COUNT <= CF_MAX_FIELDS, "IFT fields fit a step");

static const char *const field_names[F_COUNT] = {
    [F_MAGIC] = "magic", [F_VERSION] = "version", [F_BC] = "bc", [F_PH] = "ph", [F_R] = "r", [F_HC] = "hc",
    [F_PC] = "pc", [F_IH] = "ih", [F_IP] = "ip", [F_SP] = "sp", [F_SM] = "sm", [F_RM] = "rm",
    [F_RSVD] = "rsvd", [F_VTAG] = "vtag", [F_CRC] = "crc", [F_VTAGDUP] = "vtagdup", [F_HSIZE] = "hsize",
    [F_PSIZE] = "psize", [F_T] = "t", [F_L] = "l", [F_RV] = "rv", [F_OP] = "op", [F_STAG] = "stag",
    [F_TO] = "to", [F_ROFF] = "roff", [F_QN] = "qn", [F_MSN] = "msn", [F_MO] = "mo", [F_PAYLOAD] = "payload",
    [F_FILL] = "fill", [F_SIZE] = "size", [F_SSTAG] = "sstag", [F_DIGEST] = "digest",
};

static const char *const type_names[IT_COUNT] = {
    [VW_RDMAP_WRITE] = "Write", [VW_RDMAP_READ_REQUEST] = "ReadReq", [VW_RDMAP_READ_RESPONSE] = "ReadResp",
    [VW_RDMAP_SEND] = "Send", [VW_RDMAP_SEND_INVALIDATE] = "SendInv", [VW_RDMAP_SEND_SE] = "SendSE",
    [VW_RDMAP_SEND_SE_INVALIDATE] = "SendSEInv", [VW_RDMAP_TERMINATE] = "Term", [IT_IND] = "Ind",
    [IT_TAGGED] = "Tagged", [IT_UNTAGGED] = "Untagged", [IT_ULP] = "Ulp",
};

/* A send's CRC and VTag arguments (st->opts). */
#define O_IND_CRC_BAD 0x001u  /* crc=bad: the indication's CRC inverted */
#define O_IND_CRC_BE 0x002u   /* crc=be: written MSB first */
#define O_IND_CRC_32 0x004u   /* crc=crc32: CRC-32 (IEEE) instead of CRC-32C */
#define O_HCRC_SHIFT 4        /* hcrc=: bits 4-7, pcrc=: bits 8-11 */
#define O_PCRC_SHIFT 8
enum { CW_GOOD = 0, CW_BAD = 1, CW_OMIT = 2, CW_BE = 3, CW_32 = 4, CW_ADD = 5 };
#define O_BADVTAG 0x1000u     /* badvtag: the target's VTag with its low bit flipped */

/* The target's region (I16): --region, else what ift-peer announces by
 * default (event=region addr=0x10000000 handle=1 len=65536; no case needs
 * its length). Set by session_new for the case that runs. */
static struct {
    uint64_t addr;
    uint32_t stag;
} region = {0x10000000u, 1};

/* The VTags of the target's previous two first indications in this run
 * (vtagdup, I17). */
static unsigned vtags_known;
static uint16_t last_vtag[2];

/* ------------------------------------------------------- vocabulary */

static bool field_settable(unsigned f)
{
    return f < F_COUNT && f != F_CRC && f != F_VTAGDUP && f != F_FILL && f != F_DIGEST;
}

static int crc_word(const char *v)
{
    return strcmp(v, "good") == 0 ? CW_GOOD : strcmp(v, "bad") == 0 ? CW_BAD : strcmp(v, "omit") == 0 ? CW_OMIT
           : strcmp(v, "be") == 0 ? CW_BE : strcmp(v, "crc32") == 0 ? CW_32 : strcmp(v, "add") == 0 ? CW_ADD
           : -1;
}

static int parse_send_arg(struct cf_step *st, const char *name, const char *v, char *why, size_t whylen)
{
    if (!v && strcmp(name, "badvtag") == 0) {
        st->opts |= O_BADVTAG;
        return 1;
    }
    if (!v)
        return 0;
    if (strcmp(name, "false") == 0) {
        /* false=AT,ROFF,FILL[,BROKEN]: a false frame inside the payload (I11) */
        unsigned long at, fill;
        unsigned long long roff;
        char broken[16] = "ok";
        int n = sscanf(v, "%lu,%lli,%lu,%15s", &at, (long long *)&roff, &fill, broken);
        if (n < 3 || at > 65535 || fill > 255 ||
            (strcmp(broken, "ok") && strcmp(broken, "hcrc") && strcmp(broken, "pcrc") && strcmp(broken, "vtag") &&
             strcmp(broken, "hsize"))) {
            snprintf(why, whylen, "false= takes AT,ROFF,FILL[,ok|hcrc|pcrc|vtag|hsize]: a Write of 32 bytes of "
                     "pattern FILL to the region's offset ROFF, at payload offset AT");
            return -1;
        }
        snprintf(st->str[0], sizeof st->str[0], "%s", v);
        return 1;
    }
    if (strcmp(name, "crc") == 0) {
        int w = crc_word(v);
        if (w != CW_GOOD && w != CW_BAD && w != CW_BE && w != CW_32) {
            snprintf(why, whylen, "crc= (the indication's) takes good, bad, be or crc32");
            return -1;
        }
        st->opts |= w == CW_BAD ? O_IND_CRC_BAD : w == CW_BE ? O_IND_CRC_BE : w == CW_32 ? O_IND_CRC_32 : 0;
        return 1;
    }
    if (strcmp(name, "hcrc") == 0 || strcmp(name, "pcrc") == 0) {
        int w = crc_word(v);
        if (w < 0) {
            snprintf(why, whylen, "%s= takes good, bad, omit, add, be or crc32", name);
            return -1;
        }
        st->opts |= (uint32_t)w << (name[0] == 'h' ? O_HCRC_SHIFT : O_PCRC_SHIFT);
        return 1;
    }
    return 0;
}

/* ----------------------------------------------------------- session */

/* A received message: an indication, or a DDP message reassembled from its
 * segments (untagged: one queue's MSN up to L; tagged: consecutive tagged
 * offsets of one STag up to L). raw holds the first PDU, then the payload. */
struct ift_rx {
    bool is_ind;
    bool is_ulp;               /* ULP bytes before the target's indication (I32) */
    struct vw_ift_ind ind;
    bool vtagdup;
    uint16_t header_size, payload_size, vtag;
    bool crc_ok;
    struct vw_ddp_hdr ddp;     /* the first segment's header; ddp.last: the last one's L */
    bool rdma;                 /* RDMA mode when it arrived */
    bool has_rr;
    struct vw_rdmap_read_req rr;
    uint8_t *payload;          /* the reassembled payload (inside raw's block) */
    size_t payload_len;
    unsigned segments;
};

#define IFT_REASM_MAX (1u << 20)

struct reasm {
    bool on;
    struct ift_rx rx;
    uint8_t *first;            /* the first PDU's bytes */
    size_t first_len;
    uint8_t *data;
    size_t len, cap;
};

struct ift_session {
    const struct cf_case *c;   /* its case (a capture case's recorded PDUs) */
    struct vw_ift_nego nego;   /* side 0 the tester, side 1 the target */
    struct vw_ift_reader reader;
    bool dead;                 /* the target's direction cannot be framed any more */
    /* the tester's side */
    bool tx_hc, tx_pc;         /* its indication's HC/PC (before one: both) */
    uint32_t next_msn[3];      /* per queue: the MSN of its next message */
    uint32_t next_mo[3];       /* per queue: where the message in progress goes on */
    /* what encode wrote, taken by session_sent when it went out */
    bool pend_ind, pend_frame, pend_untagged, pend_last, pend_ulp;
    /* a mid-stream upgrade (I32): ULP bytes of the target's still due
     * before its indication, and those gathered so far */
    size_t ulp_due, ulp_have;
    uint8_t ulp[ULP_LEN];
    unsigned pend_qn;
    size_t pend_len;
    struct reasm untagged, tagged;
    /* a capture case (I19): the target's last Read Request, whose sink a
     * replayed Read Response goes to, and the recorded TO of that
     * response's first segment */
    bool have_rr;
    struct vw_rdmap_read_req rr;
    bool rr_base_set;
    uint64_t rr_base;
    cf_msg_sink sink;
    void *ctx;
    struct cf_rx_verdict *v;
};

static void *session_new(const struct cf_case *c, struct cf_engine *e)
{
    if (e && e->region_set) { /* the region of the case that runs */
        region.addr = e->region_addr;
        region.stag = e->region_handle;
    }
    struct ift_session *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->c = c;
    vw_ift_nego_init(&s->nego);
    vw_ift_reader_init(&s->reader, &s->nego, 1, VW_IFT_READ_LIMIT_MAX);
    s->tx_hc = s->tx_pc = true;
    for (int q = 0; q < 3; q++)
        s->next_msn[q] = 1;
    return s;
}

static void reasm_drop(struct reasm *a)
{
    free(a->first);
    free(a->data);
    memset(a, 0, sizeof *a);
}

static void session_free(void *session)
{
    struct ift_session *s = session;
    vw_ift_reader_free(&s->reader);
    reasm_drop(&s->untagged);
    reasm_drop(&s->tagged);
    free(s);
}

/* Hand a message to the core: raw = the first PDU then the payload. */
static void deliver_msg(struct ift_session *s, unsigned type, const struct ift_rx *rx, const uint8_t *first,
                        size_t first_len, const uint8_t *data, size_t len)
{
    uint8_t *raw = malloc(first_len + len + 1);
    struct ift_rx *dec = malloc(sizeof *dec);
    if (!raw || !dec) {
        free(raw);
        free(dec);
        cf_rx_broke(s->v, VW_REQ_IFT_5_1_FRAME_LEN, "a message: no memory at 0");
        return;
    }
    memcpy(raw, first, first_len);
    if (len)
        memcpy(raw + first_len, data, len);
    *dec = *rx;
    dec->ind.reserved = NULL;
    dec->payload = raw + first_len;
    dec->payload_len = len;
    struct cf_msg m = {.type = type, .raw = raw, .len = first_len + len, .payload = dec->payload,
                       .payload_len = len, .decoded = dec};
    s->sink(s->ctx, &m);
}

/* A DDP message's type: its RDMAP opcode in RDMA mode, else tagged or untagged. */
static unsigned msg_type(bool rdma, const struct vw_ddp_hdr *h)
{
    if (rdma && h->rdmap_opcode < IT_IND)
        return h->rdmap_opcode;
    return h->tagged ? IT_TAGGED : IT_UNTAGGED;
}

/* A Read Request of the target's, its RDMAP header from payload p: where a
 * replayed Read Response goes (I19). */
static void note_read_request(struct ift_session *s, struct ift_rx *rx, const uint8_t *p, size_t n)
{
    if (!rx->rdma || rx->ddp.tagged || rx->ddp.rdmap_opcode != VW_RDMAP_READ_REQUEST || rx->has_rr ||
        !(rx->has_rr = vw_rdmap_read_req_decode(p, n, &rx->rr)))
        return;
    s->have_rr = true;
    s->rr = rx->rr;
    s->rr_base_set = false;
}

static void reasm_flush(struct ift_session *s, struct reasm *a)
{
    if (!a->on)
        return;
    note_read_request(s, &a->rx, a->data, a->len); /* one in segments (frag): from the whole payload */
    deliver_msg(s, msg_type(a->rx.rdma, &a->rx.ddp), &a->rx, a->first, a->first_len, a->data, a->len);
    reasm_drop(a);
}

/* One decoded frame of the target's: start, continue or end its message. */
static void on_frame(struct ift_session *s, const uint8_t *raw, size_t len, const struct vw_ift_frame *fr)
{
    struct ift_rx rx = {.header_size = fr->header_size, .payload_size = fr->payload_size, .vtag = fr->vtag,
                        .crc_ok = (!fr->has_hdr_crc || fr->hdr_crc_ok) && (!fr->has_payload_crc || fr->payload_crc_ok),
                        .rdma = vw_ift_nego_rdma(&s->nego), .segments = 1};
    if (fr->ddp_decoded)
        rx.ddp = fr->ddp_hdr;
    const uint8_t *pl = fr->payload;
    size_t pn = fr->payload_size;
    if (!fr->ddp_decoded) { /* no RFC 5041 header (noted): a message of its own */
        rx.ddp.last = true;
        deliver_msg(s, IT_UNTAGGED, &rx, raw, len, pl, pn);
        return;
    }
    note_read_request(s, &rx, pl, pn);
    struct reasm *a = rx.ddp.tagged ? &s->tagged : &s->untagged;
    bool continues = a->on && (rx.ddp.tagged ? a->rx.ddp.stag == rx.ddp.stag && a->rx.ddp.to + a->len == rx.ddp.to
                                             : a->rx.ddp.qn == rx.ddp.qn && a->rx.ddp.msn == rx.ddp.msn &&
                                                   a->rx.ddp.mo + a->len == rx.ddp.mo);
    if (a->on && !continues)
        reasm_flush(s, a); /* the message ended without L: delivered as it is (l=0) */
    if (!a->on) {
        a->first = malloc(len ? len : 1);
        if (!a->first) {
            cf_rx_broke(s->v, VW_REQ_IFT_5_1_FRAME_LEN, "a frame: no memory at 0");
            return;
        }
        memcpy(a->first, raw, len);
        a->rx = rx;
        a->first_len = len;
        a->rx.ddp.last = false;
        a->rx.segments = 0;
        a->on = true;
    }
    if (a->len + pn > IFT_REASM_MAX || !cf_bytes_append(&a->data, &a->len, &a->cap, pl, pn)) {
        reasm_flush(s, a);
        return;
    }
    a->rx.segments++;
    if (rx.ddp.last) {
        a->rx.ddp.last = true;
        reasm_flush(s, a);
    }
}

static bool on_pdu(void *ctx, const uint8_t *raw, size_t len, uint64_t off, bool is_indication)
{
    struct ift_session *s = ctx;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    if (!s->nego.ind_seen[1] || is_indication) {
        bool first = !s->nego.ind_seen[1];
        struct ift_rx rx = {.is_ind = true};
        enum vw_req err = vw_ift_ind_decode(raw, len, &rx.ind, &fs);
        if (err == VW_REQ_NONE)
            vw_ift_nego_indication(&s->nego, 1, &rx.ind, &fs);
        cf_rx_findings(s->v, &fs, "the target's adaption indication at stream offset %llu", (unsigned long long)off);
        if (err != VW_REQ_NONE) {
            cf_rx_broke(s->v, err, "the target's adaption indication cannot be parsed (stream offset %llu)",
                        (unsigned long long)off);
            s->dead = true;
            return false;
        }
        /* the same VTag three connections in a row: by chance 1 in 2^32 */
        rx.vtagdup = vtags_known >= 2 && last_vtag[0] == rx.ind.vtag && last_vtag[1] == rx.ind.vtag;
        if (first) {
            last_vtag[1] = last_vtag[0];
            last_vtag[0] = rx.ind.vtag;
            if (vtags_known < 2)
                vtags_known++;
        }
        deliver_msg(s, IT_IND, &rx, raw, len, NULL, 0);
        if (first && rx.ind.bc_version > VW_IFT_BC_VERSION) {
            s->dead = true; /* what follows an incompatible indication has no known layout */
            return false;
        }
        return true;
    }
    vw_ift_nego_frame(&s->nego, 1, &fs);
    struct vw_ift_frame_mode announced = {0}, carried;
    vw_ift_nego_mode(&s->nego, 1, &announced);
    struct vw_ift_frame fr;
    enum vw_req err = vw_ift_frame_decode_as_sent(raw, len, &announced, &fr, &carried, &fs);
    if (err == VW_REQ_NONE)
        vw_ift_nego_frame_rules(&s->nego, 1, &fr, &fs);
    cf_rx_findings(s->v, &fs, "the target's frame at stream offset %llu", (unsigned long long)off);
    if (err != VW_REQ_NONE) {
        cf_rx_broke(s->v, err, "the target's frame cannot be framed (stream offset %llu)", (unsigned long long)off);
        s->dead = true;
        return false;
    }
    on_frame(s, raw, len, &fr);
    return true;
}

static void read_status(struct ift_session *s, enum vw_ift_read_status st)
{
    if (st == VW_IFT_READ_OK)
        return;
    s->dead = true;
    if (st == VW_IFT_READ_NOT_INDICATION) /* I35: a bad magic, or a frame before the indication */
        cf_rx_broke(s->v, s->reader.not_indication_rule, "%s (no magic 0x52444450 at stream offset 0)",
                    s->reader.not_indication_rule == VW_REQ_IFT_4_1_MAGIC
                        ? "the target's first bytes are an adaption indication with a bad magic"
                        : "the target's first bytes are a frame, not an adaption indication");
    else if (st == VW_IFT_READ_FRAMING_LOST) /* I13: a frame's sizes did not fit */
        cf_rx_broke(s->v, VW_REQ_IFT_5_1_FRAME_LEN, "bytes of the target's where a frame should start cannot "
                    "start one: the sizes of the frame before them do not fit (stream offset %llu)",
                    (unsigned long long)s->reader.lost_off);
    else if (st == VW_IFT_READ_TOO_LARGE || st == VW_IFT_READ_NO_MEMORY)
        cf_rx_broke(s->v, VW_REQ_IFT_5_1_FRAME_LEN, "a PDU of the target's cannot be gathered (stream offset %llu)",
                    (unsigned long long)s->reader.stream_off);
}

static void session_feed(void *session, const uint8_t *data, size_t len, cf_msg_sink sink, void *ctx,
                         struct cf_rx_verdict *v)
{
    struct ift_session *s = session;
    s->sink = sink;
    s->ctx = ctx;
    s->v = v;
    if (s->dead)
        return;
    if (s->ulp_due && !s->nego.ind_seen[1]) { /* the ULP's answer, before any IFT byte (I32) */
        size_t n = len < s->ulp_due ? len : s->ulp_due;
        memcpy(s->ulp + s->ulp_have, data, n);
        s->ulp_have += n;
        s->ulp_due -= n;
        data += n;
        len -= n;
        if (!s->ulp_due) {
            struct ift_rx rx = {.is_ulp = true};
            deliver_msg(s, IT_ULP, &rx, s->ulp, 0, s->ulp, s->ulp_have);
            s->ulp_have = 0;
        }
        if (!len)
            return;
    }
    read_status(s, vw_ift_reader_feed(&s->reader, data, len, on_pdu, s));
}

static void session_finish(void *session, struct cf_rx_verdict *v)
{
    struct ift_session *s = session;
    s->v = v;
    if (s->dead || !s->sink)
        return;
    read_status(s, vw_ift_reader_finish(&s->reader, on_pdu, s));
    if (!s->dead && s->reader.have)
        cf_rx_broke(v, VW_REQ_IFT_5_1_FRAME_LEN, "the target closed inside a PDU (stream offset %llu)",
                    (unsigned long long)s->reader.stream_off);
    reasm_flush(s, &s->untagged);
    reasm_flush(s, &s->tagged);
}

/* The target fell silent while the reader holds a frame whose CRC layout
 * only the next bytes would settle (a sender that left out or added a CRC
 * it announced): the silence settles it, as the end of the stream would. */
static void session_stalled(void *session, struct cf_rx_verdict *v)
{
    struct ift_session *s = session;
    s->v = v;
    if (s->dead || !s->sink || !s->reader.have)
        return;
    read_status(s, vw_ift_reader_finish(&s->reader, on_pdu, s));
    s->dead = true;
}

/* ----------------------------------------------------------- encoder */

static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    }
    return ~c;
}

/* The indication's flags by field, and what a send writes unless told (I16). */
static const struct {
    unsigned f;
    uint32_t bit;
    int dflt;
} ind_flags[] = {{F_R, VW_IFT_FLAG_R, 1}, {F_HC, VW_IFT_FLAG_HC, 1}, {F_PC, VW_IFT_FLAG_PC, 1},
                 {F_IH, VW_IFT_FLAG_IH, 0}, {F_IP, VW_IFT_FLAG_IP, 0}, {F_SP, VW_IFT_FLAG_SP, 0},
                 {F_SM, VW_IFT_FLAG_SM, 0}, {F_RM, VW_IFT_FLAG_RM, 0}};

static int64_t val(const struct cf_step *st, const int64_t *vals, unsigned f, int64_t dflt)
{
    return st->set[f] ? vals[f] : dflt;
}

static int encode_ind(struct ift_session *s, const struct cf_step *st, const int64_t *vals, struct cf_encoded *out,
                      char *why, size_t whylen)
{
    struct vw_ift_ind_enc e;
    unsigned ph = (unsigned)val(st, vals, F_PH, 0) & 1u;
    vw_ift_ind_enc_init(&e, ph, (uint16_t)val(st, vals, F_VTAG, 0x7A31), true, true);
    e.magic = (uint32_t)val(st, vals, F_MAGIC, VW_IFT_MAGIC);
    e.version = (uint16_t)val(st, vals, F_VERSION, VW_IFT_VERSION);
    e.bc_version = (uint16_t)val(st, vals, F_BC, VW_IFT_BC_VERSION);
    uint32_t flags = ph ? VW_IFT_FLAG_PH : 0;
    for (size_t i = 0; i < sizeof ind_flags / sizeof ind_flags[0]; i++)
        if (val(st, vals, ind_flags[i].f, ind_flags[i].dflt))
            flags |= ind_flags[i].bit;
    flags |= (uint32_t)val(st, vals, F_RSVD, 0) & VW_IFT_FLAG_RESERVED;
    e.flags = flags;
    e.crc = (st->opts & O_IND_CRC_BAD) ? VW_IFT_CRC_BAD : (st->opts & O_IND_CRC_BE) ? VW_IFT_CRC_BE : VW_IFT_CRC_GOOD;
    out->bytes = malloc(VW_IFT_IND_LEN);
    if (!out->bytes || vw_ift_ind_encode(&e, out->bytes, VW_IFT_IND_LEN) != VW_IFT_IND_LEN) {
        snprintf(why, whylen, "the IFT indication encoder failed");
        return -1;
    }
    if (st->opts & O_IND_CRC_32)
        vw_put_le32(out->bytes + VW_IFT_IND_CRC_OFF, crc32_ieee(out->bytes, VW_IFT_IND_CRC_OFF));
    out->len = VW_IFT_IND_LEN;
    out->payload_off = VW_IFT_IND_LEN;
    out->payload_len = 0;
    out->msg_offset = 0;
    s->pend_ind = true;
    return 0;
}

/* A false frame (I11): frame-shaped bytes inside a true frame's payload,
 * where a later TCP segment starts. A tagged RDMA Write of 32 bytes of
 * pattern FILL to the region's offset ROFF under the tester's CRCs and the
 * target's VTag, with one check broken or none. */
static int embed_false_frame(struct ift_session *s, const char *spec, uint16_t peer_vtag, uint8_t *payload,
                             size_t plen, char *why, size_t whylen)
{
    unsigned long at = 0, fill = 0;
    long long roff = 0;
    char broken[16] = "ok";
    sscanf(spec, "%lu,%lli,%lu,%15s", &at, &roff, &fill, broken);
    uint8_t data[32];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = cf_pattern_byte(i, (unsigned)fill);
    struct vw_ddp_hdr h = {.tagged = true, .last = true, .dv = VW_DDP_VERSION, .rdmap_rv = VW_RDMAP_VERSION,
                           .rdmap_opcode = VW_RDMAP_WRITE, .stag = region.stag, .to = region.addr + (uint64_t)roff};
    uint8_t ddp[VW_DDP_TAGGED_HDR_LEN];
    size_t dlen = vw_ddp_encode(&h, ddp, sizeof ddp);
    struct vw_ift_frame_enc fe;
    vw_ift_frame_enc_init(&fe, strcmp(broken, "vtag") == 0 ? (uint16_t)(peer_vtag ^ 1u) : peer_vtag, s->tx_hc,
                          s->tx_pc, ddp, dlen, data, sizeof data);
    if (strcmp(broken, "hcrc") == 0)
        fe.hdr_crc = VW_IFT_CRC_BAD;
    if (strcmp(broken, "pcrc") == 0)
        fe.payload_crc = VW_IFT_CRC_BAD;
    if (strcmp(broken, "hsize") == 0) {
        fe.keep_sizes = true;
        fe.header_size = 15;
        fe.payload_size = (uint16_t)(sizeof data - 1);
    }
    size_t n = vw_ift_frame_encoded_len(&fe);
    if (at > plen || n > plen - at || vw_ift_frame_encode(&fe, payload + at, plen - at) != n) {
        snprintf(why, whylen, "the false frame (%zu bytes) does not fit the payload at offset %lu", n, at);
        return -1;
    }
    return 0;
}

static enum vw_ift_crc_write crc_write(unsigned w)
{
    return w == CW_BAD ? VW_IFT_CRC_BAD : w == CW_OMIT ? VW_IFT_CRC_OMIT : w == CW_BE ? VW_IFT_CRC_BE
                                                                                    : VW_IFT_CRC_GOOD;
}

static int encode_frame(struct ift_session *s, const struct cf_step *st, const int64_t *vals,
                        struct cf_encoded *out, char *why, size_t whylen)
{
    unsigned type = st->type;
    bool rdma = type < IT_IND;
    bool tagged = st->set[F_T] ? vals[F_T] != 0
                               : type == VW_RDMAP_WRITE || type == VW_RDMAP_READ_RESPONSE || type == IT_TAGGED;
    struct vw_ddp_hdr h = {.tagged = tagged, .last = val(st, vals, F_L, 1) != 0, .dv = VW_DDP_VERSION,
                           .rdmap_rv = (uint8_t)val(st, vals, F_RV, rdma ? VW_RDMAP_VERSION : 0),
                           .rdmap_opcode = (uint8_t)val(st, vals, F_OP, rdma ? type : 0)};
    unsigned qn = (unsigned)val(st, vals, F_QN, type == VW_RDMAP_READ_REQUEST ? 1 : type == VW_RDMAP_TERMINATE ? 2 : 0);
    uint8_t rrbuf[VW_RDMAP_READ_REQ_HDR_LEN];
    uint8_t *payload = NULL;
    size_t plen;
    uint64_t roff = (uint64_t)val(st, vals, F_ROFF, 0);
    if (tagged) {
        h.stag = (uint32_t)val(st, vals, F_STAG, region.stag);
        h.to = (uint64_t)val(st, vals, F_TO, (int64_t)(region.addr + roff));
    } else {
        h.qn = qn;
        h.msn = (uint32_t)val(st, vals, F_MSN, qn < 3 ? s->next_msn[qn] : 1);
        h.mo = (uint32_t)val(st, vals, F_MO, qn < 3 ? s->next_mo[qn] : 0);
    }
    if (type == VW_RDMAP_READ_REQUEST && !st->set[F_PAYLOAD]) {
        struct vw_rdmap_read_req rr = {
            .sink_stag = (uint32_t)val(st, vals, F_STAG, 0x100),
            .sink_to = (uint64_t)val(st, vals, F_TO, 0),
            .size = (uint32_t)val(st, vals, F_SIZE, 0),
            .src_stag = (uint32_t)val(st, vals, F_SSTAG, region.stag),
            .src_to = region.addr + roff,
        };
        vw_rdmap_read_req_encode(&rr, rrbuf, sizeof rrbuf);
        plen = sizeof rrbuf;
    } else {
        plen = (size_t)val(st, vals, F_PAYLOAD, 0);
    }
    payload = malloc(plen ? plen : 1);
    if (!payload) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    if (type == VW_RDMAP_READ_REQUEST && !st->set[F_PAYLOAD])
        memcpy(payload, rrbuf, plen);
    else
        for (size_t i = 0; i < plen; i++)
            payload[i] = cf_pattern_byte(i, st->fill);
    uint8_t ddp[VW_DDP_UNTAGGED_HDR_LEN];
    size_t dlen = vw_ddp_encode(&h, ddp, sizeof ddp);
    uint16_t peer_vtag = s->nego.ind_seen[1] ? s->nego.ind[1].vtag : 0;
    if (st->str[0][0] && embed_false_frame(s, st->str[0], peer_vtag, payload, plen, why, whylen) < 0) {
        free(payload);
        return -1;
    }
    uint16_t vtag = (uint16_t)val(st, vals, F_VTAG, (st->opts & O_BADVTAG) ? peer_vtag ^ 1u : peer_vtag);
    unsigned hw = (st->opts >> O_HCRC_SHIFT) & 0xFu, pw = (st->opts >> O_PCRC_SHIFT) & 0xFu;
    struct vw_ift_frame_enc fe;
    /* hcrc=add / pcrc=add: a CRC although this side announced none */
    vw_ift_frame_enc_init(&fe, vtag, s->tx_hc || hw == CW_ADD, s->tx_pc || pw == CW_ADD, ddp, dlen, payload, plen);
    fe.hdr_crc = crc_write(hw);
    fe.payload_crc = crc_write(pw);
    if (st->set[F_HSIZE] || st->set[F_PSIZE]) {
        fe.keep_sizes = true;
        fe.header_size = (uint16_t)val(st, vals, F_HSIZE, (int64_t)dlen);
        fe.payload_size = (uint16_t)val(st, vals, F_PSIZE, (int64_t)plen);
    }
    size_t n = vw_ift_frame_encoded_len(&fe);
    out->bytes = malloc(n ? n : 1);
    if (!out->bytes || !n || vw_ift_frame_encode(&fe, out->bytes, n) != n) {
        snprintf(why, whylen, "the IFT frame encoder cannot write this frame (payload %zu bytes: at most 65535)", plen);
        free(payload);
        return -1;
    }
    free(payload);
    size_t hcrc_off = VW_IFT_FRAME_HDR_LEN + dlen;
    bool has_h = fe.hc && hw != CW_OMIT;
    if (hw == CW_32 && has_h)
        vw_put_le32(out->bytes + hcrc_off, crc32_ieee(out->bytes, hcrc_off));
    size_t pay_off = hcrc_off + (has_h ? VW_IFT_CRC_LEN : 0);
    if (pw == CW_32 && fe.pc && n >= pay_off + plen + VW_IFT_CRC_LEN)
        vw_put_le32(out->bytes + pay_off + plen, crc32_ieee(out->bytes + pay_off, plen));
    out->len = n;
    out->payload_off = pay_off <= n ? pay_off : n;
    out->payload_len = out->payload_off + plen <= n ? plen : 0;
    /* a Read Request's payload is its RDMAP header, no data: data=echo keeps
     * comparing with what the tester wrote before (a Read Response) */
    out->msg_offset = type == VW_RDMAP_READ_REQUEST ? CF_MSG_NO_ECHO : tagged ? 0 : h.mo;
    s->pend_frame = true;
    s->pend_untagged = !tagged;
    s->pend_last = h.last;
    s->pend_qn = qn;
    s->pend_len = plen;
    return 0;
}

static int encode_captured(struct ift_session *s, const struct cf_step *st, struct cf_encoded *out, char *why,
                           size_t whylen);

static int encode(void *session, const struct cf_step *st, const int64_t *vals, struct cf_encoded *out, char *why,
                  size_t whylen)
{
    struct ift_session *s = session;
    s->pend_ind = s->pend_frame = s->pend_ulp = false;
    if (st->type == IT_ULP) { /* the upgrade request, or payload=N bytes of pattern fill (I32) */
        size_t n = st->set[F_PAYLOAD] ? (size_t)vals[F_PAYLOAD] : ULP_LEN;
        out->bytes = malloc(n ? n : 1);
        if (!out->bytes) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        for (size_t i = 0; i < n; i++)
            out->bytes[i] = st->set[F_PAYLOAD] ? cf_pattern_byte(i, st->fill) : (uint8_t)ULP_REQUEST[i];
        out->len = n;
        out->payload_off = 0;
        out->payload_len = n;
        out->msg_offset = CF_MSG_NO_ECHO;
        s->pend_ulp = true;
        return 0;
    }
    if (st->cap_pdu)
        return encode_captured(s, st, out, why, whylen);
    if (st->type == IT_IND)
        return encode_ind(s, st, vals, out, why, whylen);
    return encode_frame(s, st, vals, out, why, whylen);
}

/* The tester's message went out: its indication is in force (the first
 * one: the negotiation's side 0), its frames move its MSN and MO on. */
static void session_sent(void *session, const struct cf_encoded *enc)
{
    struct ift_session *s = session;
    if (s->pend_ind) {
        struct vw_ift_ind ind;
        if (!s->nego.ind_seen[0] && vw_ift_ind_decode(enc->bytes, enc->len, &ind, NULL) == VW_REQ_NONE) {
            vw_ift_nego_indication(&s->nego, 0, &ind, NULL);
            s->tx_hc = (ind.flags & VW_IFT_FLAG_HC) != 0;
            s->tx_pc = (ind.flags & VW_IFT_FLAG_PC) != 0;
        }
    } else if (s->pend_ulp && !s->nego.ind_seen[1]) {
        s->ulp_due = ULP_LEN; /* the convention's answer: 16 bytes of the ULP's */
    } else if (s->pend_frame && s->pend_untagged && s->pend_qn < 3) {
        if (s->pend_last) {
            s->next_msn[s->pend_qn]++;
            s->next_mo[s->pend_qn] = 0;
        } else {
            s->next_mo[s->pend_qn] += (uint32_t)s->pend_len;
        }
    }
    s->pend_ind = s->pend_frame = s->pend_ulp = false;
}

/* ------------------------------------------------------ the accessor */

/* The pattern a payload is (cf_pattern_byte with fill F, from byte 0), or -1. */
static int64_t payload_fill(const struct ift_rx *rx)
{
    if (!rx->payload_len)
        return -1;
    /* byte 0 is 3 + 101 F (mod 256), and 109 * 101 = 1 (mod 256) */
    unsigned f = ((unsigned)(rx->payload[0] - 3u) * 109u) & 0xFFu;
    for (size_t i = 0; i < rx->payload_len; i++)
        if (rx->payload[i] != cf_pattern_byte(i, f))
            return -1;
    return f;
}

static bool field_value(const struct cf_msg *m, unsigned field, int64_t *v)
{
    const struct ift_rx *rx = m->decoded;
    if (rx->is_ind) {
        const struct vw_ift_ind *in = &rx->ind;
        for (size_t i = 0; i < sizeof ind_flags / sizeof ind_flags[0]; i++)
            if (ind_flags[i].f == field) {
                *v = !!(in->flags & ind_flags[i].bit);
                return true;
            }
        switch (field) {
        case F_MAGIC: *v = in->magic; return true;
        case F_VERSION: *v = in->version; return true;
        case F_BC: *v = in->bc_version; return true;
        case F_PH: *v = vw_ift_ind_phase(in); return true;
        case F_RSVD: *v = !in->reserved_zero; return true;
        case F_VTAG: *v = in->vtag; return true;
        case F_CRC: *v = in->crc_ok; return true;
        case F_VTAGDUP: *v = rx->vtagdup; return true;
        default: return false;
        }
    }
    const struct vw_ddp_hdr *h = &rx->ddp;
    switch (field) {
    case F_HSIZE: *v = rx->header_size; return true;
    case F_PSIZE: *v = rx->payload_size; return true;
    case F_VTAG: *v = rx->vtag; return true;
    case F_CRC: *v = rx->crc_ok; return true;
    case F_T: *v = h->tagged; return true;
    case F_L: *v = h->last; return true;
    case F_RV: *v = h->rdmap_rv; return true;
    case F_OP: *v = h->rdmap_opcode; return true;
    case F_STAG: *v = h->stag; return h->tagged;
    case F_TO: *v = (int64_t)h->to; return h->tagged;
    case F_ROFF: *v = (int64_t)(h->to - region.addr); return h->tagged;
    case F_QN: *v = h->qn; return !h->tagged;
    case F_MSN: *v = h->msn; return !h->tagged;
    case F_MO: *v = h->mo; return !h->tagged;
    case F_PAYLOAD: *v = (int64_t)rx->payload_len; return true;
    case F_FILL: *v = payload_fill(rx); return true;
    case F_SIZE: *v = rx->rr.size; return rx->has_rr;
    case F_SSTAG: *v = rx->rr.src_stag; return rx->has_rr;
    case F_DIGEST: *v = cf_capture_digest(CF_DIGEST_START, rx->payload, rx->payload_len); return true;
    default: return false;
    }
}

static void describe(const struct cf_msg *m, char *out, size_t n)
{
    const struct ift_rx *rx = m->decoded;
    if (rx->is_ulp) {
        snprintf(out, n, "Ulp %zu bytes of the ULP's (before any indication)", rx->payload_len);
        return;
    }
    if (rx->is_ind) {
        char fl[80];
        snprintf(out, n, "Ind phase %u version %u bc %u flags %s vtag 0x%04x", vw_ift_ind_phase(&rx->ind),
                 rx->ind.version, rx->ind.bc_version, vw_ift_flags_str(rx->ind.flags, fl, sizeof fl), rx->ind.vtag);
        return;
    }
    const struct vw_ddp_hdr *h = &rx->ddp;
    const char *type = cf_name_at(type_names, IT_COUNT, m->type);
    if (h->tagged)
        snprintf(out, n, "%s stag=%u to=0x%llx%s payload=%zu (%u segments)", type, h->stag,
                 (unsigned long long)h->to, h->last ? " L" : "", rx->payload_len, rx->segments);
    else
        snprintf(out, n, "%s qn=%u msn=%u mo=%u%s payload=%zu (%u segments)", type, h->qn, h->msn,
                 h->mo, h->last ? " L" : "", rx->payload_len, rx->segments);
}

/* ------------------------------------------------------- capture cases */

/* NAME.meta beside NAME.pcapng (or .pcap): a recorded IFT connection
 * replayed against the target, the tester as node A or ('role passive')
 * node B. What goes out again and what is expected: docs/decisions.md I19,
 * docs/conformance.md C52. */

/* The blob starts with the recorded target's region, then the replayed PDUs. */
struct rec_region {
    uint64_t addr;
    uint32_t stag;
};

struct cap_acc {        /* a target's message in progress (per tagged/untagged) */
    bool on;
    struct vw_ddp_hdr first;
    bool is_rr;                 /* a Read Request: its header from the first bytes */
    uint8_t head[VW_RDMAP_READ_REQ_HDR_LEN];
    uint32_t digest;
    size_t len;
};

struct cap_load {
    struct cf_case *c;
    size_t cap;
    bool passive;
    struct vw_ift_nego nego;    /* side 0: the side that opened the connection */
    struct vw_ift_reader reader[2];
    struct cap_acc acc[2];      /* [tagged] */
    bool choice[F_COUNT];       /* indication flags the target may choose */
    struct rec_region rec;      /* 'region' */
    bool conn_seen;
    unsigned conn;
    uint64_t frame;             /* the frame that carried the bytes being read */
    bool after_tester_ind;      /* the next expect follows the tester's indication */
    bool ends_close;            /* 'ends close': the target closes after the last PDU */
    bool full;
    char err[200];
};

struct cap_side {
    struct cap_load *L;
    int side;
};

static struct cf_step *cap_step(struct cap_load *L, enum cf_step_kind kind, enum vw_req req)
{
    struct cf_step *st = cf_capture_step(L->c, kind, 2);
    if (!st) {
        L->full = true;
        return NULL;
    }
    st->line = (unsigned)L->frame;
    st->req = req;
    return st;
}

static bool cap_blob(struct cap_load *L, const void *p, size_t n)
{
    if (cf_bytes_append(&L->c->blob, &L->c->blob_len, &L->cap, p, n))
        return true;
    snprintf(L->err, sizeof L->err, "out of memory");
    return false;
}

/* A whole message of the target's: one expect. */
static void cap_expect_msg(struct cap_load *L, struct cap_acc *a, bool rdma)
{
    const struct vw_ddp_hdr *h = &a->first;
    unsigned type = msg_type(rdma, h);
    struct cf_step *st = cap_step(L, CF_STEP_EXPECT, L->c->reqs[0]);
    if (!st)
        return;
    /* a target whose policy refuses the tester's recorded offer may close
     * instead (the scripted cases' if-open, C44) */
    st->na_if_closed = L->after_tester_ind;
    L->after_tester_ind = false;
    /* awaited (issue 29): a message of the target's own (a greeting, a
     * pipelined one) is no answer of the recording's; the session still
     * judges it */
    st->skip_other = true;
    st->type = type;
    if (!L->passive && !h->tagged && type == VW_RDMAP_SEND)
        cf_capture_need(L->c, "echo");
    if (!L->passive && h->tagged && type == VW_RDMAP_READ_RESPONSE)
        cf_capture_need(L->c, "readback");
    st->cap_pdu = L->c->nsteps;
    cf_capture_match(st, F_T, h->tagged);
    if (h->tagged) {
        cf_capture_match(st, F_STAG, h->stag);
        cf_capture_match(st, F_TO, (int64_t)h->to);
    } else {
        /* not its MSN: the target numbers its own messages (a greeting first
         * moves the echoes' MSNs on); their order is the expects' order */
        cf_capture_match(st, F_QN, h->qn);
    }
    cf_capture_match(st, F_PAYLOAD, (int64_t)a->len);
    struct vw_rdmap_read_req rr;
    /* a Read Request's sink is the target's business, its source the tester's region */
    if (a->is_rr && vw_rdmap_read_req_decode(a->head, a->len < sizeof a->head ? a->len : sizeof a->head, &rr)) {
        cf_capture_match(st, F_SIZE, rr.size);
        cf_capture_match(st, F_SSTAG, rr.src_stag);
    } else {
        cf_capture_match(st, F_DIGEST, a->digest);
    }
    memset(a, 0, sizeof *a);
}

static bool cap_pdu(void *ctx, const uint8_t *raw, size_t len, uint64_t off, bool is_ind)
{
    struct cap_side *sd = ctx;
    struct cap_load *L = sd->L;
    struct cf_case *c = L->c;
    int side = sd->side;
    bool tester = side == (L->passive ? 1 : 0); /* nego side 0: A, the connecting side */
    if (L->full || L->err[0])
        return false;
    if (!L->nego.ind_seen[side] || is_ind) {
        struct vw_ift_ind ind;
        if (vw_ift_ind_decode(raw, len, &ind, NULL) != VW_REQ_NONE) {
            snprintf(L->err, sizeof L->err, "frame %llu: an indication that cannot be parsed at stream offset %llu",
                     (unsigned long long)L->frame, (unsigned long long)off);
            return false;
        }
        vw_ift_nego_indication(&L->nego, side, &ind, NULL);
        if (tester) {
            struct cf_step *st = cap_step(L, CF_STEP_SEND, c->reqs[0]);
            if (!st)
                return false;
            st->type = IT_IND;
            st->cap_pdu = c->nsteps;
            st->pdu_off = c->blob_len;
            st->pdu_len = len;
            L->after_tester_ind = true;
            return cap_blob(L, raw, len);
        }
        /* the answer as recorded: each field under its own rule */
        struct cf_step *st = cap_step(L, CF_STEP_EXPECT, VW_REQ_IFT_4_2_PHASE);
        if (!st)
            return false;
        st->type = IT_IND;
        st->cap_pdu = c->nsteps;
        st->na_if_closed = true; /* a target whose policy refuses the offer may close */
        L->after_tester_ind = false;
        cf_capture_match(st, F_PH, vw_ift_ind_phase(&ind));
        cf_case_add_req(c, VW_REQ_IFT_4_2_PHASE);
        static const struct {
            unsigned f;
            enum vw_req req;
        } checks[] = {{F_VERSION, VW_REQ_IFT_4_2_VERSION}, {F_BC, VW_REQ_IFT_4_2_BC_VERSION_SET},
                      {F_CRC, VW_REQ_IFT_4_2_IND_CRC}, {F_MAGIC, VW_REQ_IFT_4_1_MAGIC},
                      {F_RSVD, VW_REQ_IFT_4_2_RESERVED_ZERO}};
        int64_t vals[] = {ind.version, ind.bc_version, ind.crc_ok, ind.magic, !ind.reserved_zero};
        for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
            struct cf_step *ck = cap_step(L, CF_STEP_CHECK, checks[i].req);
            if (!ck)
                return false;
            ck->type = IT_IND;
            cf_capture_match(ck, checks[i].f, vals[i]);
            if (checks[i].f == F_VERSION) /* a later Version, BC Version 1 (lines 109-116) */
                ck->match[ck->nmatch - 1].op = CF_OP_GE;
            if (checks[i].f != F_MAGIC) /* the case names it as IFT-4-INDICATION-FIRST (its meta), at most 12 IDs */
                cf_case_add_req(c, checks[i].req);
        }
        struct cf_step *strict = NULL, *chosen = NULL;
        for (size_t i = 0; i < sizeof ind_flags / sizeof ind_flags[0]; i++) {
            struct cf_step **into = L->choice[ind_flags[i].f] ? &chosen : &strict;
            if (!*into && !(*into = cap_step(L, L->choice[ind_flags[i].f] ? CF_STEP_ONLY_IF : CF_STEP_CHECK,
                                             VW_REQ_IFT_4_2_PHASE)))
                return false;
            (*into)->type = IT_IND;
            cf_capture_match(*into, ind_flags[i].f, (ind.flags & ind_flags[i].bit) != 0);
        }
        if (L->ends_close && !L->passive) {
            /* a recorded error follows: what B sends right after its phase 1
             * (a greeting, I23) comes in before the tester's next write, so
             * that expect-close does not take it for data after the error
             * (I24, C66) */
            struct cf_step *w = cap_step(L, CF_STEP_WAIT, c->reqs[0]);
            if (!w)
                return false;
            w->wait_ms = 100;
        }
        return true;
    }
    struct vw_ift_frame_mode announced = {0}, carried;
    vw_ift_nego_mode(&L->nego, side, &announced);
    struct vw_ift_frame fr;
    if (vw_ift_frame_decode_as_sent(raw, len, &announced, &fr, &carried, NULL) != VW_REQ_NONE) {
        snprintf(L->err, sizeof L->err, "frame %llu: a frame that cannot be framed at stream offset %llu",
                 (unsigned long long)L->frame, (unsigned long long)off);
        return false;
    }
    bool rdma = vw_ift_nego_rdma(&L->nego);
    if (tester) {
        struct cf_step *st = cap_step(L, CF_STEP_SEND, c->reqs[0]);
        if (!st)
            return false;
        st->type = fr.ddp_decoded ? msg_type(rdma, &fr.ddp_hdr) : IT_UNTAGGED;
        st->cap_pdu = c->nsteps;
        st->pdu_off = c->blob_len;
        st->pdu_len = len;
        if (announced.check_vtag && fr.vtag != announced.vtag)
            st->opts |= O_BADVTAG; /* recorded wrong: replayed wrong */
        return cap_blob(L, raw, len);
    }
    if (!fr.ddp_decoded) { /* no RFC 5041 header: a message of its own */
        struct cap_acc a = {.on = true, .digest = cf_capture_digest(CF_DIGEST_START, fr.payload, fr.payload_size),
                            .len = fr.payload_size};
        cap_expect_msg(L, &a, false);
        return !L->full;
    }
    struct cap_acc *a = &L->acc[fr.ddp_hdr.tagged];
    if (!a->on) {
        a->on = true;
        a->first = fr.ddp_hdr;
        a->digest = CF_DIGEST_START;
        a->is_rr = rdma && !fr.ddp_hdr.tagged && fr.ddp_hdr.rdmap_opcode == VW_RDMAP_READ_REQUEST;
    }
    for (size_t i = 0; a->len + i < sizeof a->head && i < fr.payload_size; i++)
        a->head[a->len + i] = fr.payload[i];
    a->digest = cf_capture_digest(a->digest, fr.payload, fr.payload_size);
    a->len += fr.payload_size;
    if (fr.ddp_hdr.last)
        cap_expect_msg(L, a, rdma);
    return !L->full;
}

static void cap_tcp(void *ctx, const struct vn_tcp_event *ev)
{
    struct cap_load *L = ctx;
    if (!L->conn_seen) {
        L->conn_seen = true;
        L->conn = ev->conn;
    }
    if (ev->conn != L->conn || L->full || L->err[0])
        return; /* the first connection is the case's */
    if (ev->kind == VN_TCP_GAP) {
        snprintf(L->err, sizeof L->err, "frame %llu: %zu bytes the capture missed", (unsigned long long)ev->frame,
                 ev->len);
        return;
    }
    if (ev->kind != VN_TCP_DATA)
        return;
    int side = ev->dir == VN_C2S ? 0 : 1;
    struct cap_side sd = {L, side};
    L->frame = ev->frame;
    enum vw_ift_read_status rs = vw_ift_reader_feed(&L->reader[side], ev->data, ev->len, cap_pdu, &sd);
    if (rs != VW_IFT_READ_OK && rs != VW_IFT_READ_STOPPED && !L->err[0])
        snprintf(L->err, sizeof L->err, "frame %llu: the %s side's bytes cannot be read as IFT (status %d)",
                 (unsigned long long)ev->frame, side == 0 ? "connecting" : "accepting", (int)rs);
}

/* The .meta keys of IFT's own (the shared ones: cf_meta_read). */
static enum cf_meta_key capture_meta_key(void *ctx, const char *key, char *value, const char *path,
                                         unsigned lineno, char *err, size_t errlen)
{
    struct cap_load *L = ctx;
    if (strcmp(key, "role") == 0 && (strcmp(value, "passive") == 0 || strcmp(value, "active") == 0)) {
        L->passive = value[0] == 'p';
    } else if (strcmp(key, "ends") == 0 && (strcmp(value, "close") == 0 || strcmp(value, "open") == 0)) {
        L->ends_close = value[0] == 'c';
    } else if (strcmp(key, "region") == 0) {
        unsigned long long a;
        unsigned long s;
        char tail;
        if (sscanf(value, "%lli %li %c", (long long *)&a, (long *)&s, &tail) != 2 || s > 0xFFFFFFFFul) {
            snprintf(err, errlen, "%s:%u: region takes the recorded target's region address and STag", path,
                     lineno);
            return CF_META_KEY_BAD;
        }
        L->rec.addr = a;
        L->rec.stag = (uint32_t)s;
    } else if (strcmp(key, "choice") == 0) {
        for (char *fl = strtok(value, " \t"); fl; fl = strtok(NULL, " \t")) {
            int fi = cf_proto_field_by_name(&cf_proto_ift, fl);
            if (fi < F_R || fi > F_RM) { /* the fields F_R..F_RM are the flags */
                snprintf(err, errlen, "%s:%u: choice takes indication flags (r hc pc ih ip sp sm rm), not '%s'",
                         path, lineno, fl);
                return CF_META_KEY_BAD;
            }
            L->choice[fi] = true;
        }
    } else {
        return CF_META_KEY_UNKNOWN;
    }
    return CF_META_KEY_TAKEN;
}

static int load_capture_case(const char *meta_path, struct cf_case *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->proto = &cf_proto_ift;
    out->from_capture = true;
    snprintf(out->file, sizeof out->file, "%s", meta_path);
    struct cap_load *L = calloc(1, sizeof *L);
    if (!L) {
        snprintf(err, errlen, "%s: out of memory", meta_path);
        return -1;
    }
    L->c = out;
    L->rec.addr = 0x10000000u; /* I16: ift-peer's default region */
    L->rec.stag = 1;
    const struct cf_meta_module meta = {
        .req_prefix = "IFT-",
        .require_once = true,
        .keys_text = "case, title, section, require, role, choice, region, frame, nothing-else, ends, verdict fail",
        .key = capture_meta_key,
        .ctx = L,
    };
    struct cf_meta_frames frames;
    int rc = cf_meta_read(meta_path, &meta, out, &frames, err, errlen);
    if (rc == 0) {
        char pcap[sizeof out->file + 8];
        cf_meta_capture_path(meta_path, pcap, sizeof pcap);
        out->passive = L->passive;
        /* the recorded tester's offer, answered; a connecting node A (C60, I30, I31) */
        cf_capture_need(out, L->passive ? "connects-as-a" : "offer");
        vw_ift_nego_init(&L->nego);
        vw_ift_reader_init(&L->reader[0], &L->nego, 0, VW_IFT_READ_LIMIT_MAX);
        vw_ift_reader_init(&L->reader[1], &L->nego, 1, VW_IFT_READ_LIMIT_MAX);
        enum cf_step_kind first = L->passive ? CF_STEP_ACCEPT : CF_STEP_CONNECT;
        struct cf_step *st = cap_blob(L, &L->rec, sizeof L->rec) ? cap_step(L, first, out->reqs[0]) : NULL;
        struct vn_reader_callbacks cb = {.tcp = cap_tcp, .ctx = L};
        char rerr[200];
        if (!st) {
            snprintf(err, errlen, "%s: out of memory", meta_path);
            rc = -1;
        } else if (vn_pcap_read(pcap, &cb, NULL, NULL, rerr, sizeof rerr) < 0) {
            snprintf(err, errlen, "%s: %s", pcap, rerr);
            rc = -1;
        } else {
            for (int side = 0; side < 2 && !L->err[0] && !L->full; side++) {
                struct cap_side sd = {L, side};
                vw_ift_reader_finish(&L->reader[side], cap_pdu, &sd);
            }
            if (L->err[0] || L->full) {
                snprintf(err, errlen, "%s: %s", pcap, L->err[0] ? L->err : "more PDUs than a case holds");
                rc = -1;
            } else if (!L->nego.ind_seen[0] || !L->nego.ind_seen[1]) {
                snprintf(err, errlen, "%s: no IFT connection with both indications", pcap);
                rc = -1;
            }
        }
        vw_ift_reader_free(&L->reader[0]);
        vw_ift_reader_free(&L->reader[1]);
    }
    if (rc == 0) {
        cf_capture_frame_rules(out, &frames, true);
        for (unsigned k = 0; k < frames.nframe; k++)
            cf_case_add_req(out, frames.frame_req[k]);
        /* the end as recorded (in the room cap_step kept): the target closes, or sends nothing more */
        struct cf_step *st = cf_capture_step(out, L->ends_close ? CF_STEP_EXPECT_CLOSE : CF_STEP_EXPECT_NOTHING, 0);
        st->wait_ms = L->ends_close ? 0 : 500;
        st->req = frames.last_req != VW_REQ_NONE ? frames.last_req : out->reqs[0];
        st->line = out->steps[out->nsteps - 2].line;
        if (frames.last_req != VW_REQ_NONE)
            cf_case_add_req(out, frames.last_req);
        out->timeout_ms = 1000u * out->nsteps + 4000u;
    } else {
        cf_case_free(out);
    }
    free(L);
    return rc;
}

static const char *recorded_send_note(const struct cf_step *st)
{
    return (st->opts & O_BADVTAG) ? ", wrong VTag" : "";
}

/* A recorded PDU of the tester's, replayed (I19): an indication byte for
 * byte; a frame rebuilt for this connection. */
static int encode_captured(struct ift_session *s, const struct cf_step *st, struct cf_encoded *out, char *why,
                           size_t whylen)
{
    const struct cf_case *c = s->c;
    if (!c || !c->blob || c->blob_len < sizeof(struct rec_region) || st->pdu_off > c->blob_len ||
        st->pdu_len > c->blob_len - st->pdu_off) {
        snprintf(why, whylen, "the captured PDU is not in the case");
        return -1;
    }
    const uint8_t *raw = c->blob + st->pdu_off;
    size_t len = st->pdu_len;
    struct vw_ift_frame_mode announced = {.hc = s->tx_hc, .pc = s->tx_pc}, carried;
    struct vw_ift_frame fr;
    if (st->type == IT_IND || vw_ift_frame_decode_as_sent(raw, len, &announced, &fr, &carried, NULL) != VW_REQ_NONE) {
        out->bytes = malloc(len ? len : 1);
        if (!out->bytes) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        memcpy(out->bytes, raw, len);
        out->len = len;
        out->payload_off = out->payload_len = 0;
        out->msg_offset = CF_MSG_NO_ECHO;
        s->pend_ind = st->type == IT_IND;
        return 0;
    }
    struct rec_region rec;
    memcpy(&rec, c->blob, sizeof rec);
    bool rdma = vw_ift_nego_rdma(&s->nego);
    uint8_t *payload = malloc(fr.payload_size + 1u);
    if (!payload) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    memcpy(payload, fr.payload, fr.payload_size);
    const uint8_t *hdr = fr.ddp;
    size_t hlen = fr.header_size;
    uint8_t ddp[VW_DDP_UNTAGGED_HDR_LEN];
    struct vw_ddp_hdr h = fr.ddp_hdr;
    if (fr.ddp_decoded) {
        if (h.tagged && rdma && h.rdmap_opcode == VW_RDMAP_READ_RESPONSE && s->have_rr) {
            /* to the sink of the target's own Read Request */
            if (!s->rr_base_set) {
                s->rr_base = h.to;
                s->rr_base_set = true;
            }
            h.to = s->rr.sink_to + (h.to - s->rr_base);
            h.stag = s->rr.sink_stag;
        } else if (h.tagged && h.stag == rec.stag) {
            h.to = region.addr + (h.to - rec.addr);
            h.stag = region.stag;
        }
        struct vw_rdmap_read_req rr;
        if (!h.tagged && rdma && h.rdmap_opcode == VW_RDMAP_READ_REQUEST &&
            vw_rdmap_read_req_decode(payload, fr.payload_size, &rr) && rr.src_stag == rec.stag) {
            rr.src_to = region.addr + (rr.src_to - rec.addr);
            rr.src_stag = region.stag;
            vw_rdmap_read_req_encode(&rr, payload, fr.payload_size);
        }
        if (vw_ddp_encode(&h, ddp, sizeof ddp) == hlen)
            hdr = ddp;
    }
    uint16_t peer_vtag = s->nego.ind_seen[1] ? s->nego.ind[1].vtag : 0;
    struct vw_ift_frame_enc fe;
    vw_ift_frame_enc_init(&fe, (st->opts & O_BADVTAG) ? (uint16_t)(peer_vtag ^ 1u) : peer_vtag, carried.hc,
                          carried.pc, hdr, hlen, payload, fr.payload_size);
    fe.hdr_crc = fr.has_hdr_crc && !fr.hdr_crc_ok ? VW_IFT_CRC_BAD : VW_IFT_CRC_GOOD;
    fe.payload_crc = fr.has_payload_crc && !fr.payload_crc_ok ? VW_IFT_CRC_BAD : VW_IFT_CRC_GOOD;
    size_t n = vw_ift_frame_encoded_len(&fe);
    out->bytes = malloc(n ? n : 1);
    if (!out->bytes || !n || vw_ift_frame_encode(&fe, out->bytes, n) != n) {
        free(payload);
        snprintf(why, whylen, "the recorded frame cannot be rebuilt");
        return -1;
    }
    free(payload);
    out->len = n;
    out->payload_off = VW_IFT_FRAME_HDR_LEN + hlen + (carried.hc ? VW_IFT_CRC_LEN : 0u);
    out->payload_len = fr.payload_size;
    out->msg_offset = !fr.ddp_decoded || h.tagged ? 0 : h.mo;
    s->pend_frame = fr.ddp_decoded;
    s->pend_untagged = !h.tagged;
    s->pend_last = h.last;
    s->pend_qn = h.qn;
    s->pend_len = fr.payload_size;
    return 0;
}

/* Test conventions its cases may need (C60, docs/conformance.md "Test conventions"). */
static const struct cf_hook_def ift_hooks[] = {
    {"echo", "the target, as node B, sends each untagged RDMAP Send it delivered back as a Send of its own"},
    {"offer", "the target, as node B, accepts the tester's usual offer (Version 1, R, HC, PC) and answers it with a "
              "phase 1 this tester can work with (BC Version 1): which offers it accepts is its policy"},
    {"ulp-upgrade", "the target, as node B, takes a ULP's upgrade request (the 16 bytes \"" ULP_REQUEST "\") before "
                    "the indication and answers it with 16 bytes of its own (I32)"},
    {"connects-as-a", "the target, connecting (listen mode), is node A: its phase 0 comes first"},
    {"connects-as-b", "the target, connecting (listen mode), is node B: it waits for the tester's phase 0"},
    {"readback", "the target places RDMA Writes into its region (run --region, default ift-peer's: STag 1, TO "
                 "0x10000000) and answers RDMA Read Requests from it"},
    {NULL, NULL},
};

const struct conform_protocol cf_proto_ift = {
    .name = "ift",
    .title = "IFT",
    .unit = "message",
    .req_prefix = "IFT-",
    .default_port = VW_IFT_DEFAULT_PORT,
    .cases_subdir = "ift",
    .type_names = type_names,
    .type_count = IT_COUNT,
    .field_names = field_names,
    .field_count = F_COUNT,
    .field_settable = field_settable,
    .max_payload = 65535,
    .parse_send_arg = parse_send_arg,
    .encode = encode,
    .session_new = session_new,
    .session_free = session_free,
    .session_feed = session_feed,
    .session_finish = session_finish,
    .session_sent = session_sent,
    .session_stalled = session_stalled,
    .msg_free = cf_msg_free,
    .field_value = field_value,
    .describe = describe,
    .load_capture_case = load_capture_case,
    .capture_send_note = recorded_send_note,
    .hooks = ift_hooks,
};
