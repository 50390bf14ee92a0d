/* The PacketWay EEP module: the case vocabulary, the encoder
 * (vw_eep_encode) and a session on the wire library's decoder
 * (vw_eep_decode_on over a datagram, the rules lint applies) and router
 * check (vw_eep_forward_check). EEP is message-based: the module runs over
 * the core's datagram links (C47), one message per UDP datagram (P1). See
 * conform/proto/eep.h and docs/conformance.md ("The EEP cases", C48). */
#include "conform/proto/eep.h"

#include <ctype.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conform/case.h"
#include "conform/core.h"
#include "conform/engine.h"
#include "conform/meta.h"
#include "conform/report.h"
#include "vitcp/frame.h"
#include "vitcp/pcap_reader.h"
#include "vitcp/pktway.h"

/* Message types a case names: by PT, the P8 defaults (Other: any other PT;
 * a send of Other needs pt=). */
enum eep_type { ET_RRP, ET_ERR, ET_IPV4, ET_IPV6, ET_OTHER, ET_COUNT };
static const char *const type_names[ET_COUNT] = {"RRP", "ERR", "IPv4", "IPv6", "Other"};

enum eep_field {
    EF_V, EF_P, EF_DT, EF_TE, EF_PT, EF_E, EF_PL, EF_DL, EF_H, EF_RZ, EF_SA, EF_EI, EF_PAYLOAD,
    EF_ROUTES, EF_L2RH, EF_SYMBOLS, EF_OH, EF_OHM, EF_OT, EF_LEN, EF_DTKIND,
    EF_PADFILL, EF_CUT, EF_EXTRA, EF_DIGEST, EF_COUNT
};
_Static_assert(EF_COUNT <= CF_MAX_FIELDS, "EEP fields fit a step");

static const char *const field_names[EF_COUNT] = {
    [EF_V] = "v", [EF_P] = "p", [EF_DT] = "dt", [EF_TE] = "te", [EF_PT] = "pt", [EF_E] = "e", [EF_PL] = "pl",
    [EF_DL] = "dl", [EF_H] = "h", [EF_RZ] = "rz", [EF_SA] = "sa", [EF_EI] = "ei", [EF_PAYLOAD] = "payload",
    [EF_ROUTES] = "routes", [EF_L2RH] = "l2rh", [EF_SYMBOLS] = "symbols", [EF_OH] = "oh", [EF_OHM] = "ohm",
    [EF_OT] = "ot", [EF_LEN] = "len", [EF_DTKIND] = "dtkind", [EF_PADFILL] = "padfill", [EF_CUT] = "cut",
    [EF_EXTRA] = "extra", [EF_DIGEST] = "digest",
};

/* dt=node / sa=node: the node under test's address (--eep-address),
 * resolved when the message is built or compared. */
#define EEP_SYM_NODE 0x1000000
/* A case's 'router' directive (c->flags): it needs a node under test that
 * routes (run --eep-router); its session judges every message that comes
 * out as a router's copy of the tester's last one (vw_eep_forward_check). */
#define EEP_CASE_ROUTER 0x1u
/* 'chain': two routers in a row between the tester's links (run
 * --eep-chain): what comes out has passed two routers; it is judged as the
 * second router's copy of what the first one should have sent (C48). */
#define EEP_CASE_CHAIN 0x2u
/* 'udp-only': the case needs a datagram carrier (over Ethernet, bytes after
 * a message without OH fields are link padding, P11); skipped on an
 * Ethernet link 0. */
#define EEP_CASE_UDP_ONLY 0x4u
/* 'any-node': a case about the node itself (a message for its own
 * address) that an end node and a router take alike (the probe of
 * err-report, P38); not run through a chain. */
#define EEP_CASE_ANY_NODE 0x8u
/* A capture case keeps the recorded node's address in c->flags' upper 24
 * bits: a replayed message to it goes to the node under test instead. */
#define EEP_CASE_REC_NODE_SHIFT 8
/* A send's route= (st->str[0]) and oh= (st->str[1]) lists. */

#define EEP_L2RH_MAX 32 /* routing bytes of a contract's L2RH (--eep-l2rh) */

/* The node under test's contract (docs/conformance.md, "The node under
 * test"): what the tester must be told because the draft leaves it to the
 * node. */
struct eep_contract {
    uint8_t l2rh[2][EEP_L2RH_MAX]; /* --eep-l2rh LINK=HEX: the L2RH's routing bytes toward tester link LINK */
    size_t l2rh_len[2];
    bool have_l2rh[2];
    int unknown_oh;                /* --eep-unknown-oh T: an OH type the node does not know; -1 none */
    /* --eep-delivery-log REGEX: the line the node prints for each message it
     * delivered (P40), read from its output: that of a node the tester
     * started (--topology), else the file --eep-node-log names (-1 none) */
    const char *delivery_regex;
    int node_log_fd;
};

struct eep_settings {
    uint32_t node;  /* --eep-address */
    bool router;    /* --eep-router */
    bool chain;     /* --eep-chain: two routers in a row */
    struct eep_contract contract;
};
_Static_assert(sizeof(struct eep_settings) <= CF_PROTO_STATE_MAX, "EEP settings fit the engine");

/* The node's address for the run's sessions (set with the engine's state;
 * one run at a time per process). */
static uint32_t node_address = CF_EEP_NODE_DEFAULT;
/* The run's node contract and whether the router declared that it counts
 * a malformed message (PL not 0 with DL 0) as a detected error (the hook
 * error-lsbit), for the encoder and the sessions, likewise. */
static struct eep_contract contract = {.unknown_oh = -1};
static bool router_detects_format_errors;
/* Whether the node reports errors with ERR messages (hook err-report,
 * P38): 0 when it was found not to; its ERRs are then still judged as a
 * source's messages, but no step waits for one or is disturbed by one
 * (an ERR is "usually sent", line 729: never required). 1 or -1 (not
 * settled): ERRs are messages like any other. */
static int node_reports_errors = -1;

/* The PT of a type but Other (P8's defaults; Other: 0, a send says pt=). */
static uint16_t pt_of_type(unsigned type)
{
    const struct vw_eep_types *t = &vw_eep_types_default;
    const uint16_t pt[ET_OTHER] = {[ET_RRP] = t->pt_rrp, [ET_ERR] = t->pt_err, [ET_IPV4] = t->pt_ipv4,
                                   [ET_IPV6] = t->pt_ipv6};
    return type < ET_OTHER ? pt[type] : 0;
}

static unsigned type_of_pt(uint16_t pt)
{
    unsigned type = 0;
    while (type < ET_OTHER && pt_of_type(type) != pt)
        type++;
    return type;
}

static bool field_settable(unsigned f)
{
    return f < EF_COUNT && f != EF_ROUTES && f != EF_L2RH && f != EF_SYMBOLS && f != EF_OH && f != EF_OHM &&
           f != EF_LEN && f != EF_DTKIND && f != EF_DIGEST;
}

static int parse_symbol(unsigned field, const char *text, int64_t *out, char *why, size_t whylen)
{
    if (field != EF_DT && field != EF_SA)
        return 0;
    if (strcmp(text, "node") == 0) *out = EEP_SYM_NODE;
    else if (strcmp(text, "hey-you") == 0) *out = VW_EEP_ADDR_HEY_YOU;
    else if (strcmp(text, "broadcast") == 0) *out = VW_EEP_ADDR_BROADCAST;
    else {
        snprintf(why, whylen, "%s= takes a number, node, hey-you or broadcast", field_names[field]);
        return -1;
    }
    return 1;
}

static uint32_t resolve_addr(int64_t v)
{
    return v == EEP_SYM_NODE ? node_address : (uint32_t)v & 0xFFFFFFu;
}

/* "0a0b..." into bytes: count, or -1. */
static int hex_bytes(const char *s, size_t n, uint8_t *out, size_t cap)
{
    if (n % 2 || n / 2 > cap)
        return -1;
    for (size_t i = 0; i < n; i += 2) {
        if (!isxdigit((unsigned char)s[i]) || !isxdigit((unsigned char)s[i + 1]))
            return -1;
        char b[3] = {s[i], s[i + 1], 0};
        out[i / 2] = (uint8_t)strtoul(b, NULL, 16);
    }
    return (int)(n / 2);
}

#define EEP_MAX_RECORDS 8
#define EEP_RECORD_DATA 32

struct route_list {
    struct vw_eep_route_enc r[EEP_MAX_RECORDS];
    uint8_t data[EEP_MAX_RECORDS][EEP_RECORD_DATA];
    size_t n;
};

struct oh_list {
    struct vw_eep_oh_enc o[EEP_MAX_RECORDS];
    uint8_t data[EEP_MAX_RECORDS][EEP_RECORD_DATA];
    size_t n;
};

/* One route= item: "l2rh:HEX" or "sym:TYPE[:HEX]". 0 or -1. */
static int parse_route(char *item, void *list)
{
    struct route_list *l = list;
    if (l->n == EEP_MAX_RECORDS)
        return -1;
    struct vw_eep_route_enc *r = &l->r[l->n];
    memset(r, 0, sizeof *r);
    int len;
    if (strncmp(item, "l2rh:@", 6) == 0) {
        /* the node contract's L2RH toward tester link N (--eep-l2rh) */
        r->kind = VW_EEP_ROUTE_L2RH;
        if ((item[6] != '0' && item[6] != '1') || item[7])
            return -1;
        unsigned link = (unsigned)(item[6] - '0');
        len = (int)contract.l2rh_len[link];
        memcpy(l->data[l->n], contract.l2rh[link], contract.l2rh_len[link]);
    } else if (strncmp(item, "l2rh:", 5) == 0) {
        r->kind = VW_EEP_ROUTE_L2RH;
        len = hex_bytes(item + 5, strlen(item + 5), l->data[l->n], EEP_RECORD_DATA);
    } else if (strncmp(item, "sym:", 4) == 0) {
        r->kind = VW_EEP_ROUTE_SYMBOL;
        char *end;
        unsigned long t = strtoul(item + 4, &end, 0);
        if (end == item + 4 || t > 0xFFFFFu || (*end && *end != ':'))
            return -1;
        r->symbol_type = (uint32_t)t;
        len = *end ? hex_bytes(end + 1, strlen(end + 1), l->data[l->n], EEP_RECORD_DATA) : 0;
    } else {
        return -1;
    }
    if (len < 0)
        return -1;
    r->data = l->data[l->n];
    r->data_len = (size_t)len;
    l->n++;
    return 0;
}

/* One oh= item: "mTYPE:LEN" (mandatory) or "oTYPE:LEN" (optional), LEN
 * pattern bytes. 0 or -1. */
static int parse_oh(char *item, void *list)
{
    struct oh_list *l = list;
    size_t n = strlen(item);
    if (l->n == EEP_MAX_RECORDS || n < 4 || n >= 40 || (item[0] != 'm' && item[0] != 'o'))
        return -1;
    char *end;
    unsigned long type, len;
    if (item[1] == 'U') {
        /* the OH type the node under test declares unknown (--eep-unknown-oh) */
        type = contract.unknown_oh >= 0 ? (unsigned long)contract.unknown_oh : 0;
        end = item + 2;
    } else {
        type = strtoul(item + 1, &end, 0);
        if (end == item + 1)
            return -1;
    }
    if (*end != ':' || type > VW_EEP_OH_TYPE_MASK)
        return -1;
    char *end2;
    len = strtoul(end + 1, &end2, 0);
    if (end2 == end + 1 || *end2 || len > EEP_RECORD_DATA)
        return -1;
    struct vw_eep_oh_enc *o = &l->o[l->n];
    memset(o, 0, sizeof *o);
    o->mandatory = item[0] == 'm';
    o->type = (uint8_t)type;
    for (size_t i = 0; i < len; i++)
        l->data[l->n][i] = (uint8_t)(0xA0u + i);
    o->data = l->data[l->n];
    o->data_len = len;
    l->n++;
    return 0;
}

/* Parse a comma list with fn, item by item, into a scratch list: 0 or -1. */
static int parse_list(const char *s, int (*fn)(char *item, void *list), void *list)
{
    while (*s) {
        size_t n = strcspn(s, ",");
        char item[80];
        if (n == 0 || n >= sizeof item)
            return -1;
        memcpy(item, s, n);
        item[n] = 0;
        if (fn(item, list) < 0)
            return -1;
        s += n + (s[n] == ',');
    }
    return 0;
}

/* route= and oh= append to the send's lists (one per argument). */
static int append_arg(char *dst, size_t cap, const char *v)
{
    size_t have = strlen(dst), n = strlen(v);
    if (have + (have ? 1 : 0) + n + 1 > cap)
        return -1;
    if (have)
        dst[have++] = ',';
    memcpy(dst + have, v, n + 1);
    return 0;
}

static int parse_send_arg(struct cf_step *st, const char *name, const char *v, char *why, size_t whylen)
{
    bool route = strcmp(name, "route") == 0, oh = strcmp(name, "oh") == 0;
    if (!route && !oh)
        return 0;
    if (!v) {
        snprintf(why, whylen, "%s= needs a value", name);
        return -1;
    }
    char *dst = st->str[route ? 0 : 1];
    if (append_arg(dst, sizeof st->str[0], v) < 0) {
        snprintf(why, whylen, "too many %s= values (at most %zu characters)", name, sizeof st->str[0] - 1);
        return -1;
    }
    /* check the syntax now: a case author's error, not a verdict */
    struct route_list rl = {.n = 0};
    struct oh_list ol = {.n = 0};
    if (route ? parse_list(dst, parse_route, &rl) < 0 : parse_list(dst, parse_oh, &ol) < 0) {
        snprintf(why, whylen,
                 route ? "route= takes l2rh:HEX, l2rh:@LINK (the node's, --eep-l2rh) or sym:TYPE[:HEX] (at most %d "
                        "records of %d bytes)"
                      : "oh= takes mTYPE:LEN or oTYPE:LEN (T=1 mandatory / optional; TYPE U: the node's unknown one, "
                        "--eep-unknown-oh; at most %d fields of %d bytes)",
                 EEP_MAX_RECORDS, EEP_RECORD_DATA);
        return -1;
    }
    return 1;
}

/* Fill the padding bytes of a built message with b (padfill=N): the data
 * block's last PL bytes and each record's and OH field's bytes after its
 * data. */
static void fill_padding(uint8_t *buf, size_t len, uint8_t b)
{
    struct vw_eep_msg m;
    if (vw_eep_decode_on(buf, len, VW_EEP_CARRIER_DATAGRAM, &m, NULL) != VW_REQ_NONE)
        return;
    size_t pos = 0;
    struct vw_eep_route r;
    while (vw_eep_route_next(m.routes, m.routes_len, &pos, &r) == 1) {
        size_t used = (r.data - buf) + r.data_len;
        for (size_t i = used; i < r.offset + r.record_len && i < len; i++)
            buf[i] = b;
    }
    pos = 0;
    struct vw_eep_oh o;
    while (m.oh && vw_eep_oh_next(m.oh, m.oh_len, &pos, &o) == 1) {
        size_t used = (size_t)(o.data - buf) + o.data_len, start = (size_t)(o.data - buf) - 2;
        for (size_t i = used; i < start + o.field_len && i < len; i++) /* o.offset is the OH area's */
            buf[i] = b;
    }
    for (size_t i = m.db_offset + m.data_len; i < m.db_offset + m.db_len && i < len; i++)
        buf[i] = b;
}

struct eep_session {
    const struct cf_case *c; /* its case (a capture case's recorded messages) */
    bool router;       /* the case's 'router': judge what comes out as copies */
    bool chain;        /* the case's 'chain': through two routers */
    enum vw_eep_carrier carrier; /* of the next datagram fed (UDP unless an Ethernet link) */
    uint8_t *sent;     /* the tester's last message */
    size_t sent_len;
    struct vw_eep_msg sent_msg;
    bool sent_ok;
    /* the rules the tester's last message itself breaks (a router's copy
     * inherits them: not the router's fault), and whether the router can
     * see an error in it (its copy's LSbit, P17) */
    enum vw_req sent_errs[VW_FINDINGS_MAX];
    unsigned n_sent_errs;
    unsigned datagrams;
};

static int encode(void *session, const struct cf_step *st, const int64_t *vals, struct cf_encoded *out,
                  char *why, size_t whylen)
{
    const struct eep_session *ses = session;
    if (st->cap_pdu) {
        /* a capture case: the recorded message, byte for byte */
        const struct cf_case *c = ses ? ses->c : NULL;
        if (!c || !c->blob || st->pdu_off > c->blob_len || st->pdu_len > c->blob_len - st->pdu_off) {
            snprintf(why, whylen, "the captured message is not in the case");
            return -1;
        }
        out->bytes = malloc(st->pdu_len ? st->pdu_len : 1);
        if (!out->bytes) {
            snprintf(why, whylen, "out of memory");
            return -1;
        }
        memcpy(out->bytes, c->blob + st->pdu_off, st->pdu_len);
        out->len = st->pdu_len;
        /* addressed to the recorded node: to the node under test now */
        uint32_t rec = c->flags >> EEP_CASE_REC_NODE_SHIFT;
        struct vw_eep_msg m;
        bool decoded = vw_eep_decode_on(out->bytes, out->len, VW_EEP_CARRIER_DATAGRAM, &m, NULL) == VW_REQ_NONE;
        if (decoded && rec && m.hdr.dt == rec) {
            out->bytes[m.hdr_offset + 1] = (uint8_t)(node_address >> 16);
            out->bytes[m.hdr_offset + 2] = (uint8_t)(node_address >> 8);
            out->bytes[m.hdr_offset + 3] = (uint8_t)node_address;
        }
        /* a mandatory OH field: of the type the node under test does not
         * know (--eep-unknown-oh), as the recorded node did not know its */
        size_t pos = 0;
        struct vw_eep_oh oh;
        if (decoded && contract.unknown_oh >= 0)
            while (m.oh && vw_eep_oh_next(m.oh, m.oh_len, &pos, &oh) == 1)
                if (oh.mandatory) {
                    size_t at = (size_t)(oh.data - out->bytes) - 2; /* oh.offset is the OH area's */
                    out->bytes[at] = (uint8_t)((out->bytes[at] & 0xC0u) | (unsigned)contract.unknown_oh);
                }
        out->payload_off = out->payload_len = 0;
        out->msg_offset = 0;
        return 0;
    }
#define VAL(f, d) (st->set[f] ? vals[f] : (int64_t)(d))
    if (st->type == ET_OTHER && !st->set[EF_PT]) {
        snprintf(why, whylen, "a send of Other needs pt=");
        return -1;
    }
    size_t plen = (size_t)VAL(EF_PAYLOAD, 0), otlen = (size_t)VAL(EF_OT, 0);
    size_t cut = (size_t)VAL(EF_CUT, 0), extra = (size_t)VAL(EF_EXTRA, 0);
    if (otlen > 4096 || extra > 4096 || cut > 65536) {
        snprintf(why, whylen, "ot=, extra= take 0..4096 bytes, cut= 0..65536");
        return -1;
    }
    uint8_t *payload = malloc(plen + otlen + 1);
    if (!payload) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < plen; i++)
        payload[i] = cf_pattern_byte(i, st->fill);
    for (size_t i = 0; i < otlen; i++)
        payload[plen + i] = (uint8_t)(0x50u + i);
    struct route_list rl = {.n = 0};
    struct oh_list ol = {.n = 0};
    parse_list(st->str[0], parse_route, &rl); /* checked when parsed */
    parse_list(st->str[1], parse_oh, &ol);
    uint32_t sa_default = st->link + 1u; /* the tester's address on its link: 1, 2, ... */
    struct vw_eep_enc enc;
    vw_eep_enc_init(&enc, resolve_addr(VAL(EF_DT, EEP_SYM_NODE)), resolve_addr(VAL(EF_SA, sa_default)),
                    st->set[EF_PT] ? (uint16_t)vals[EF_PT] : pt_of_type(st->type), payload, plen);
    enc.hdr.version = (uint8_t)(VAL(EF_V, 0) & 3);
    enc.hdr.priority = (uint8_t)(VAL(EF_P, 0) & 0x3F);
    enc.hdr.te = (uint16_t)VAL(EF_TE, 0);
    enc.hdr.endian = (uint8_t)(VAL(EF_E, 0) & 0xF);
    enc.hdr.rz = (uint8_t)(VAL(EF_RZ, 0) & 0x7F);
    if (st->set[EF_DL] || st->set[EF_PL]) {
        enc.keep_lengths = true;
        enc.hdr.dl = (uint32_t)VAL(EF_DL, (plen + 7) / 8) & VW_EEP_DL_MAX;
        enc.hdr.pl = (uint8_t)(VAL(EF_PL, (8 - plen % 8) % 8) & 7);
    }
    if (st->set[EF_H]) {
        enc.keep_h = true;
        enc.hdr.h = vals[EF_H] != 0;
    }
    enc.routes = rl.r;
    enc.n_routes = rl.n;
    enc.oh = ol.o;
    enc.n_oh = ol.n;
    enc.ot = otlen ? payload + plen : NULL;
    enc.ot_len = otlen;
    enc.ei = (uint64_t)VAL(EF_EI, 0);
    size_t n = vw_eep_encoded_len(&enc);
    out->bytes = malloc(n + extra + 1);
    if (!out->bytes || vw_eep_encode(&enc, out->bytes, n) != n) {
        snprintf(why, whylen, "the EEP encoder cannot write this message (%zu data bytes)", plen);
        free(payload);
        return -1;
    }
    free(payload);
    if (st->set[EF_PADFILL])
        fill_padding(out->bytes, n, (uint8_t)vals[EF_PADFILL]);
    memset(out->bytes + n, 0, extra);
    n += extra;
    n = cut < n ? n - cut : 0;
    out->len = n;
    /* the data block's bytes, for data=echo */
    size_t db = vw_eep_encoded_len(&(struct vw_eep_enc){.routes = rl.r, .n_routes = rl.n, .oh = ol.o,
                                                         .n_oh = ol.n}) - VW_EEP_TAIL_LEN;
    out->payload_off = db <= n ? db : n;
    out->payload_len = plen <= n - out->payload_off ? plen : n - out->payload_off;
    out->msg_offset = 0;
    return 0;
#undef VAL
}

/* ------------------------------------------------------------ session */

static void *session_new(const struct cf_case *c, struct cf_engine *e)
{
    (void)e;
    struct eep_session *s = calloc(1, sizeof *s);
    if (s) {
        s->c = c;
        s->router = (c->flags & (EEP_CASE_ROUTER | EEP_CASE_CHAIN)) != 0;
        s->chain = (c->flags & EEP_CASE_CHAIN) != 0;
        s->carrier = VW_EEP_CARRIER_DATAGRAM;
    }
    return s;
}

static void session_free(void *session)
{
    struct eep_session *s = session;
    free(s->sent);
    free(s);
}

static void session_sent(void *session, const struct cf_encoded *enc)
{
    struct eep_session *s = session;
    free(s->sent);
    s->sent_ok = false;
    s->sent = malloc(enc->len ? enc->len : 1);
    if (!s->sent)
        return;
    memcpy(s->sent, enc->bytes, enc->len);
    s->sent_len = enc->len;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    s->sent_ok = vw_eep_decode_on(s->sent, s->sent_len, VW_EEP_CARRIER_DATAGRAM, &s->sent_msg, &fs) ==
                 VW_REQ_NONE;
    s->n_sent_errs = 0;
    for (unsigned i = 0; i < fs.count && s->n_sent_errs < VW_FINDINGS_MAX; i++)
        if (fs.item[i].severity == VW_SEV_ERROR)
            s->sent_errs[s->n_sent_errs++] = fs.item[i].req;
}

static bool sent_breaks(const struct eep_session *s, enum vw_req req)
{
    for (unsigned i = 0; i < s->n_sent_errs; i++)
        if (s->sent_errs[i] == req)
            return true;
    return false;
}

/* A router's copy of the tester's last message: same DT, SA and PT (what
 * a router must not change; a copy changed there is a message of its
 * own, judged as such). */
static bool is_copy(const struct eep_session *s, const struct vw_eep_msg *m)
{
    return s->sent_ok && m->hdr.dt == s->sent_msg.hdr.dt && m->hdr.sa == s->sent_msg.hdr.sa &&
           m->hdr.pt == s->sent_msg.hdr.pt;
}

/* A copy that carries only part of the tester's data block: the router
 * split the message (P17). */
static bool is_piece(const struct eep_session *s, const struct vw_eep_msg *m)
{
    const struct vw_eep_msg *o = &s->sent_msg;
    if (m->data_len == 0 || m->data_len >= o->data_len)
        return false;
    for (size_t at = 0; at + m->data_len <= o->data_len; at += 8)
        if (memcmp(o->data + at, m->data, m->data_len) == 0)
            return true;
    return false;
}

/* A message the node under test originated (an answer, an echo, an ERR:
 * anything but a router's copy of the tester's message) is judged as its
 * source's: V is 0b00 for the working version (6a; a router may pass on
 * another, so lint only warns) and no bytes lie between the data block and
 * the TAIL without OH fields announcing them (9: an OH written without h,
 * or a DL too small for the data block); lint, which cannot tell a source
 * from a router's copy, warns. */
static void judge_as_source(struct vw_findings *fs)
{
    for (unsigned i = 0; i < fs->count; i++)
        if (fs->item[i].severity == VW_SEV_WARN &&
            (fs->item[i].req == VW_REQ_EEP_6A_VERSION || fs->item[i].req == VW_REQ_EEP_9_OT_NEEDS_OH))
            fs->item[i].severity = VW_SEV_ERROR;
}

static void session_feed(void *session, const uint8_t *data, size_t len, cf_msg_sink sink, void *ctx,
                         struct cf_rx_verdict *v)
{
    struct eep_session *s = session;
    unsigned nth = ++s->datagrams;
    uint8_t *copy = malloc(len ? len : 1);
    struct vw_eep_msg *dec = malloc(sizeof *dec);
    if (!copy || !dec) {
        free(copy);
        free(dec);
        return;
    }
    memcpy(copy, data, len);
    struct vw_findings fs;
    vw_findings_clear(&fs);
    enum vw_req err = vw_eep_decode_on(copy, len, s->carrier, dec, &fs);
    bool copy_of_sent = s->router && err == VW_REQ_NONE && is_copy(s, dec);
    if (copy_of_sent) {
        /* what the tester's message itself broke is no rule of the router's */
        struct vw_findings own;
        vw_findings_clear(&own);
        for (unsigned i = 0; i < fs.count; i++)
            if (!sent_breaks(s, fs.item[i].req))
                vw_findings_add(&own, fs.item[i].req, fs.item[i].severity, fs.item[i].offset, fs.item[i].length,
                                "%s", fs.item[i].detail);
        fs = own;
    }
    if (!copy_of_sent)
        judge_as_source(&fs);
    cf_rx_findings(v, &fs, "datagram %u", nth);
    if (err != VW_REQ_NONE) {
        cf_rx_broke(v, err, "datagram %u (%zu bytes) cannot be decoded as an EEP message", nth, len);
        free(copy);
        free(dec);
        return;
    }
    if (copy_of_sent && is_piece(s, dec))
        cf_rx_broke(v, VW_REQ_EEP_1B_NO_SAR, "datagram %u: a copy carries %zu of the tester's %zu data bytes: the "
                    "router split the message", nth, dec->data_len, s->sent_msg.data_len);
    /* a router may or may not see an error in the tester's malformed
     * message (how it checks is the SAN's, lines 160-161): its LSbit is
     * judged only where the router declared it does (hook error-lsbit) */
    enum vw_eep_link_state link = !s->n_sent_errs ? VW_EEP_LINK_CLEAN
                                  : router_detects_format_errors ? VW_EEP_LINK_DAMAGED : VW_EEP_LINK_UNKNOWN;
    if (copy_of_sent && !s->chain) {
        struct vw_findings fw;
        vw_findings_clear(&fw);
        vw_eep_forward_check(s->sent, &s->sent_msg, copy, dec, link, &fw);
        cf_rx_findings(v, &fw, "datagram %u (the router's copy of the tester's last message)", nth);
    } else if (copy_of_sent && s->sent_msg.routes_len == 0) {
        /* two routers: what the first should have sent (its TAIL
         * forwarded), against what the second sent */
        uint8_t *mid = malloc(s->sent_len);
        struct vw_eep_msg mid_msg;
        /* the first router's LSbit unknown: either first copy may be right */
        for (int first_set = link == VW_EEP_LINK_DAMAGED; mid && first_set < (link == VW_EEP_LINK_CLEAN ? 1 : 2);
             first_set++) {
            memcpy(mid, s->sent, s->sent_len);
            uint64_t ei = vw_eep_tail_forward(s->sent_msg.ei, first_set);
            for (int i = 7; i >= 0; i--, ei >>= 8)
                mid[s->sent_msg.tail_offset + (size_t)i] = (uint8_t)ei;
            if (vw_eep_decode_on(mid, s->sent_len, VW_EEP_CARRIER_DATAGRAM, &mid_msg, NULL) != VW_REQ_NONE)
                break;
            struct vw_findings fw;
            vw_findings_clear(&fw);
            bool again = link == VW_EEP_LINK_UNKNOWN && !first_set;
            vw_eep_forward_check(mid, &mid_msg, copy, dec, link, &fw);
            bool errors = false;
            for (unsigned i = 0; i < fw.count; i++)
                errors |= fw.item[i].severity == VW_SEV_ERROR;
            if (errors && again)
                continue; /* perhaps the first router set it */
            cf_rx_findings(v, &fw, "datagram %u (the second router's copy of the tester's last message)", nth);
            break;
        }
        free(mid);
    }
    if (node_reports_errors == 0 && !copy_of_sent && dec->hdr.pt == vw_eep_types_default.pt_err) {
        /* judged above; no answer a step of this run takes (P38) */
        free(copy);
        free(dec);
        return;
    }
    struct cf_msg m = {.type = type_of_pt(dec->hdr.pt), .raw = copy, .len = len, .payload = dec->data,
                       .payload_len = dec->data_len, .decoded = dec};
    sink(ctx, &m);
}

static void session_carrier(void *session, bool ethernet)
{
    struct eep_session *s = session;
    s->carrier = ethernet ? VW_EEP_CARRIER_LINK : VW_EEP_CARRIER_DATAGRAM;
}

static bool field_value(const struct cf_msg *m, unsigned field, int64_t *v)
{
    const struct vw_eep_msg *d = m->decoded;
    switch (field) {
    case EF_V: *v = d->hdr.version; return true;
    case EF_P: *v = d->hdr.priority; return true;
    case EF_DT: *v = d->hdr.dt == node_address ? EEP_SYM_NODE : d->hdr.dt; return true;
    case EF_TE: *v = d->hdr.te; return true;
    case EF_PT: *v = d->hdr.pt; return true;
    case EF_E: *v = d->hdr.endian; return true;
    case EF_PL: *v = d->hdr.pl; return true;
    case EF_DL: *v = d->hdr.dl; return true;
    case EF_H: *v = d->hdr.h; return true;
    case EF_RZ: *v = d->hdr.rz; return true;
    case EF_SA: *v = d->hdr.sa == node_address ? EEP_SYM_NODE : d->hdr.sa; return true;
    case EF_EI: *v = (int64_t)d->ei; return true;
    case EF_PAYLOAD: *v = (int64_t)d->data_len; return true;
    case EF_ROUTES: *v = d->n_l2rh + d->n_symbols; return true;
    case EF_L2RH: *v = d->n_l2rh; return true;
    case EF_SYMBOLS: *v = d->n_symbols; return true;
    case EF_OH: *v = d->n_oh; return true;
    case EF_OHM: *v = d->n_oh_mandatory; return true;
    case EF_OT: *v = (int64_t)d->ot_len; return true;
    case EF_LEN: *v = (int64_t)m->len; return true;
    case EF_DTKIND: *v = vw_eep_dt_kind(d->hdr.dt); return true;
    case EF_DIGEST: *v = cf_capture_digest(CF_DIGEST_START, d->data, d->data_len); return true;
    default: return false;
    }
}

static void describe(const struct cf_msg *m, char *out, size_t n)
{
    const struct vw_eep_msg *d = m->decoded;
    snprintf(out, n, "%s pt=0x%04x te=0x%04x dt=0x%06x sa=0x%06x v=%u routes=%u payload=%zu ei=0x%llx (%zu bytes)",
             cf_name_at(type_names, ET_COUNT, m->type), d->hdr.pt, d->hdr.te, d->hdr.dt, d->hdr.sa, d->hdr.version,
             d->n_l2rh + d->n_symbols, d->data_len, (unsigned long long)d->ei, m->len);
}

static int parse_directive(struct cf_case *c, char *const *tok, int ntok, char *why, size_t whylen)
{
    bool chain = strcmp(tok[0], "chain") == 0, udp = strcmp(tok[0], "udp-only") == 0;
    bool any = strcmp(tok[0], "any-node") == 0;
    if (!chain && !udp && !any && strcmp(tok[0], "router") != 0)
        return 0;
    if (ntok != 1) {
        snprintf(why, whylen, "'%s' takes nothing", tok[0]);
        return -1;
    }
    c->flags |= chain ? EEP_CASE_CHAIN : udp ? EEP_CASE_UDP_ONLY : any ? EEP_CASE_ANY_NODE : EEP_CASE_ROUTER;
    return 1;
}

static void state_init(void *state)
{
    struct eep_settings *s = state; /* zeroed by the engine */
    s->node = CF_EEP_NODE_DEFAULT;
    s->contract.unknown_oh = -1;
    s->contract.node_log_fd = -1;
    node_address = s->node;
    contract = s->contract;
    router_detects_format_errors = false;
    node_reports_errors = -1;
}

static const struct cf_option run_options[] = {
    {"--eep-address", true},
    {"--eep-router", false},
    {"--eep-chain", false},
    {"--eep-l2rh", true},
    {"--eep-unknown-oh", true},
    {"--eep-delivery-log", true},
    {"--eep-node-log", true},
    {NULL, false},
};

static int set_option(void *state, const char *name, const char *value, char *why, size_t whylen)
{
    struct eep_settings *s = state;
    if (strcmp(name, "--eep-router") == 0 || strcmp(name, "--eep-chain") == 0) {
        s->router = true;
        s->chain |= name[6] == 'c';
    } else if (strcmp(name, "--eep-l2rh") == 0) {
        /* LINK=HEX: the routing bytes of the L2RH that sends a message out
         * of the router under test toward tester link LINK */
        const char *hex = value && (value[0] == '0' || value[0] == '1') && value[1] == '=' ? value + 2 : NULL;
        unsigned link = hex ? (unsigned)(value[0] - '0') : 0;
        int n = hex ? hex_bytes(hex, strlen(hex), s->contract.l2rh[link], EEP_L2RH_MAX) : -1;
        if (n < 0) {
            snprintf(why, whylen, "bad --eep-l2rh '%s' (LINK=HEX: link 0 or 1, at most %d routing bytes in hex)",
                     value ? value : "", EEP_L2RH_MAX);
            return -1;
        }
        s->contract.l2rh_len[link] = (size_t)n;
        s->contract.have_l2rh[link] = true;
    } else if (strcmp(name, "--eep-delivery-log") == 0) {
        regex_t re;
        if (!value || !*value || regcomp(&re, value, REG_EXTENDED) != 0) {
            snprintf(why, whylen, "bad --eep-delivery-log '%s' (a POSIX extended regex matching the line the node "
                     "prints for a delivered message; a subexpression, if any, its data length)", value ? value : "");
            return -1;
        }
        regfree(&re);
        s->contract.delivery_regex = value;
    } else if (strcmp(name, "--eep-node-log") == 0) {
        int fd = value && *value ? open(value, O_RDONLY | O_CLOEXEC) : -1;
        if (fd < 0) {
            snprintf(why, whylen, "--eep-node-log '%s': cannot read it (the file a running node writes its output to)",
                     value ? value : "");
            return -1;
        }
        if (s->contract.node_log_fd >= 0)
            close(s->contract.node_log_fd);
        s->contract.node_log_fd = fd; /* read until the process ends */
    } else if (strcmp(name, "--eep-unknown-oh") == 0) {
        char *e2;
        unsigned long t = value ? strtoul(value, &e2, 0) : 99;
        if (!value || !*value || *e2 || t > VW_EEP_OH_TYPE_MASK) {
            snprintf(why, whylen, "bad --eep-unknown-oh '%s' (an OH type 0..63 the node does not know)",
                     value ? value : "");
            return -1;
        }
        s->contract.unknown_oh = (int)t;
    } else {
        char *end;
        unsigned long a = value ? strtoul(value, &end, 0) : 0;
        if (!value || !*value || *end || a == 0 || a >= 0x800000ul || a >= VW_EEP_ADDR_HEY_YOU) {
            snprintf(why, whylen, "bad --eep-address '%s' (a physical address 1..0x7FFFFD)", value ? value : "");
            return -1;
        }
        if (a == 1 || a == 2) {
            snprintf(why, whylen, "--eep-address %s: 1 and 2 are the tester's addresses on links 0 and 1 (C48)",
                     value);
            return -1;
        }
        s->node = (uint32_t)a;
    }
    node_address = s->node;
    contract = s->contract;
    return 0;
}

/* The router cases need a node that routes between the tester's links,
 * the others an end node: `run --protocol eep --eep-router` runs the
 * first, without it the others. */
static bool case_skipped(struct cf_engine *e, const struct cf_case *c, char *why, size_t whylen)
{
    const struct eep_settings *s = cf_engine_state(e, c->proto);
    bool chain_case = (c->flags & EEP_CASE_CHAIN) != 0;
    bool router_case = (c->flags & EEP_CASE_ROUTER) != 0 || chain_case;
    bool any_node = (c->flags & EEP_CASE_ANY_NODE) != 0;
    if (s && any_node && s->chain) {
        snprintf(why, whylen, "an end-node case (a router takes it too): --eep-chain runs the chain cases only");
        return true;
    }
    if (s && !any_node && (s->router != router_case || s->chain != chain_case)) {
        snprintf(why, whylen, "%s",
                 chain_case ? "a case for two routers in a row (run --eep-chain)"
                 : router_case ? "a router case: it needs one router under test (run --eep-router)"
                 : "an end-node case: --eep-router and --eep-chain run the router cases only");
        return true;
    }
    if ((c->flags & EEP_CASE_UDP_ONLY) && e->links[0].eth_if[0]) {
        snprintf(why, whylen, "a UDP case: over Ethernet bytes after the message are link padding (P11)");
        return true;
    }
    return false;
}

static void run_case(struct cf_engine *e, const struct cf_case *c, struct cf_result *res)
{
    /* (another topology's case never comes here: the engine skipped it by case_skipped) */
    const struct eep_settings *s = cf_engine_state(e, c->proto);
    if (s) {
        node_address = s->node;
        contract = s->contract;
    }
    /* the core's data=echo compares a prefix (for protocols that segment
     * a message): an EEP message is whole, so an EEP case says how long
     * the echo is, or an empty answer would match any data (P39) */
    for (unsigned i = 0; i < c->nsteps; i++) {
        const struct cf_step *st = &c->steps[i];
        bool sized = false;
        for (unsigned k = 0; k < st->nmatch && !sized; k++)
            sized = st->match[k].field == EF_PAYLOAD && st->match[k].op == CF_OP_EQ;
        if (st->data_echo && !sized) {
            res->verdict = CF_SKIP;
            cf_result_set_message(res, "%s:%u: data=echo without payload=N (an EEP message is compared whole: "
                                  "an empty answer would match)", c->file, st->line);
            return;
        }
    }
    router_detects_format_errors = cf_engine_hook_offered(e, "error-lsbit") == 1;
    node_reports_errors = cf_engine_hook_offered(e, "err-report");
    /* delivery seen in the node's own output (P40, the core's expect-log) */
    if (s) {
        e->node_log_regex = s->contract.delivery_regex;
        if (e->node_log_fd < 0)
            e->node_log_fd = s->contract.node_log_fd;
    }
    if (c->provides[0] && strcmp(c->provides, "err-report") == 0)
        node_reports_errors = 1; /* its own probe sees every ERR */
    cf_generic_run_case(e, c, res);
}

/* The node contract settles the hooks it describes: an L2RH toward tester
 * link 1 (--eep-l2rh 1=HEX), an OH type the node does not know
 * (--eep-unknown-oh). */
static int hook_offered(const void *state, const char *hook)
{
    const struct eep_settings *s = state;
    if (strcmp(hook, "l2rh-route") == 0)
        return s->contract.have_l2rh[1];
    if (strcmp(hook, "unknown-oh") == 0)
        return s->contract.unknown_oh >= 0;
    if (strcmp(hook, "delivery-log") == 0)
        return s->contract.delivery_regex != NULL;
    return -1;
}

/* After a hostile case: the node still does what it offers on link 0 (an
 * end node; a router is probed by its own cases): echoes a message for it
 * (hook echo), else answers a Hey-You! (hook hey-you-answer). An end node
 * that offers neither shows nothing a tester can see, so no survival
 * probe is possible: the next cases show whether it still runs. */
static int check_alive(struct cf_engine *e, char *why, size_t whylen)
{
    const struct eep_settings *s = cf_engine_state(e, &cf_proto_eep);
    if (s && s->router)
        return 0;
    const char *script;
    if (cf_engine_hook_offered(e, "echo") == 1)
        script = "protocol eep\ncase eep-alive\nrequire EEP-4B-BIG-ENDIAN\ntimeout 5000\n"
                 "connect\nsend RRP dt=node payload=8 fill=9\nexpect *\n";
    else if (cf_engine_hook_offered(e, "hey-you-answer") == 1)
        script = "protocol eep\ncase eep-alive\nrequire EEP-6C-LOCAL-ONLY\ntimeout 5000\n"
                 "connect\nsend RRP dt=hey-you payload=8\nexpect *\n";
    else if (cf_engine_hook_offered(e, "delivery-log") == 1 && s && s->contract.delivery_regex)
        script = "protocol eep\ncase eep-alive\nrequire EEP-4B-BIG-ENDIAN\ntimeout 5000\n"
                 "connect\nsend RRP dt=node payload=8 fill=9\nexpect-log\n";
    else
        return 0;
    struct cf_case *c = calloc(1, sizeof *c);
    if (!c)
        return 0;
    char err[300];
    int rc = cf_case_parse(script, "<survival probe>", c, err, sizeof err);
    struct cf_result res;
    if (rc == 0) {
        /* alive when it answers at all: what the answer breaks is the
         * cases' business, not the survival's */
        cf_result_init(&res, c);
        cf_generic_run_case(e, c, &res);
        rc = res.verdict == CF_TIMEOUT || res.verdict == CF_SKIP ? -1 : 0;
        if (rc < 0)
            snprintf(why, whylen, "%s: %.200s",
                     strstr(script, "hey-you") ? "a Hey-You! was not answered"
                     : strstr(script, "expect-log") ? "no line of its output said it delivered a message"
                                                   : "a message was not echoed",
                     res.message);
    }
    free(c);
    return rc == 0 ? 0 : -1;
}

/* ------------------------------------------------------- capture cases */

/* NAME.meta beside NAME.pcapng (or .pcap): a recorded EEP exchange (UDP or
 * Ethernet) replayed against the node under test; what goes out again and
 * what is expected: docs/conformance.md C49 (through a router: C55). */
struct cap_load {
    struct cf_case *c;
    size_t cap;
    uint32_t rec_node;
    bool paced;       /* 'paced': the recording waited for each answer */
    bool have_tester;
    uint8_t tester_key[24];
    /* 'topology router': the tester's link 1 (where the router's copies
     * go, 'link1 ADDR:PORT|MAC'); sends and expects name their link */
    bool router;
    bool have_link1;
    uint8_t link1_key[24];
    bool full;
    char err[160];
    /* what the recording shows of the recorded node's conventions (C70):
     * the case needs them of the node under test */
    bool last_sent_hey_you;  /* the tester's last message was a Hey-You! */
    bool shows_answer, shows_echo, shows_unknown_oh;
};

static void cap_key(const struct vn_datagram *dg, bool src, uint8_t key[24])
{
    memset(key, 0, 24);
    if (dg->kind == VN_DGRAM_ETH) {
        const uint8_t *mac = src ? dg->src_mac : dg->dst_mac;
        if (mac)
            memcpy(key, mac, 6);
        return;
    }
    const struct vn_endpoint *ep = src ? &dg->src : &dg->dst;
    memcpy(key, &ep->ip, sizeof ep->ip < 20 ? sizeof ep->ip : 20);
    key[22] = (uint8_t)(ep->port >> 8);
    key[23] = (uint8_t)ep->port;
}

/* A 'link1' value: "IPv4:PORT" or a MAC, as cap_key makes it. 0 or -1. */
static int cap_parse_key(const char *text, uint8_t key[24])
{
    memset(key, 0, 24);
    unsigned m[6];
    char tail;
    if (sscanf(text, "%x:%x:%x:%x:%x:%x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &tail) == 6) {
        for (int i = 0; i < 6; i++) {
            if (m[i] > 255)
                return -1;
            key[i] = (uint8_t)m[i];
        }
        return 0;
    }
    char host[64];
    unsigned long port;
    const char *colon = strrchr(text, ':');
    if (!colon || (size_t)(colon - text) >= sizeof host)
        return -1;
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = 0;
    char *end;
    port = strtoul(colon + 1, &end, 10);
    struct vn_endpoint ep;
    if (*end || end == colon + 1 || port == 0 || port > 65535 || vn_endpoint_set(&ep, host, (uint16_t)port) < 0)
        return -1;
    memcpy(key, &ep.ip, sizeof ep.ip < 20 ? sizeof ep.ip : 20);
    key[22] = (uint8_t)(ep.port >> 8);
    key[23] = (uint8_t)ep.port;
    return 0;
}

static void cap_datagram(void *ctx, const struct vn_datagram *dg)
{
    struct cap_load *L = ctx;
    struct cf_case *c = L->c;
    uint8_t key[24], peer[24];
    cap_key(dg, true, key);
    cap_key(dg, false, peer);
    /* EEP by its Ethertype or port, and once the tester is known only what
     * it sent or was sent (other traffic in the capture is not the case's) */
    bool from_link1 = L->have_link1 && memcmp(key, L->link1_key, sizeof key) == 0;
    bool to_link1 = L->have_link1 && memcmp(peer, L->link1_key, sizeof peer) == 0;
    bool on_link1 = from_link1 || to_link1;
    bool eep = dg->kind == VN_DGRAM_ETH ? dg->ethertype == VW_EEP_ETHERTYPE
               : L->have_tester ? memcmp(key, L->tester_key, sizeof key) == 0 ||
                                      memcmp(peer, L->tester_key, sizeof peer) == 0 || on_link1
                                : dg->src.port == VW_EEP_UDP_PORT || dg->dst.port == VW_EEP_UDP_PORT || on_link1;
    if (!eep || L->full || L->err[0] || dg->truncated)
        return;
    struct vw_eep_msg m;
    enum vw_eep_carrier carrier = dg->kind == VN_DGRAM_ETH ? VW_EEP_CARRIER_LINK : VW_EEP_CARRIER_DATAGRAM;
    bool decoded = vw_eep_decode_on(dg->data, dg->len, carrier, &m, NULL) == VW_REQ_NONE;
    if (!L->have_tester) {
        memcpy(L->tester_key, key, sizeof key);
        L->have_tester = true;
    }
    bool from_tester = memcmp(key, L->tester_key, sizeof key) == 0 || from_link1;
    if (L->router && !from_tester && memcmp(peer, L->tester_key, sizeof peer) != 0 && !to_link1)
        return; /* between others: not the tester's */
    if (c->nsteps + 2 >= CF_MAX_STEPS) {
        L->full = true;
        return;
    }
    if (!from_tester && !decoded)
        return; /* what the recorded node sent broken is not the target's to repeat */
    if (from_tester && L->paced && c->nsteps > 1 && (c->steps[c->nsteps - 1].kind == CF_STEP_SEND || L->router)) {
        /* a paced recording shows the last message unanswered: so it
         * stays (under the rule of that message's frame); through a
         * router, what it shows after the last message is all there was,
         * on either link (under the rule of the last frame) */
        struct cf_step *quiet = cf_capture_step(c, CF_STEP_EXPECT_NOTHING, 0);
        quiet->wait_ms = 300;
        quiet->line = c->steps[c->nsteps - 2].line;
    }
    struct cf_step *st = cf_capture_step(c, from_tester ? CF_STEP_SEND : CF_STEP_EXPECT, 0);
    st->line = (unsigned)dg->frame;
    st->cap_pdu = c->nsteps - 1;
    if (L->router) {
        /* the link it was sent from, or came in on */
        st->link_set = true;
        st->link = from_tester ? from_link1 : to_link1;
    }
    if (from_tester) {
        /* the recorded bytes, appended to the blob */
        st->pdu_off = c->blob_len;
        if (!cf_bytes_append(&c->blob, &c->blob_len, &L->cap, dg->data, dg->len)) {
            snprintf(L->err, sizeof L->err, "out of memory");
            return;
        }
        L->last_sent_hey_you = decoded && m.hdr.dt == VW_EEP_ADDR_HEY_YOU;
        L->shows_unknown_oh |= decoded && m.n_oh_mandatory > 0;
        st->type = decoded ? type_of_pt(m.hdr.pt) : ET_OTHER;
        st->pdu_len = dg->len;
    } else {
        st->type = type_of_pt(m.hdr.pt);
        bool err_msg = m.hdr.pt == vw_eep_types_default.pt_err;
        bool copy = L->router && st->link == 1;
        if (err_msg) /* an ERR is the node's choice (line 729, P38): expected where it reports errors */
            snprintf(st->when, sizeof st->when, "err-report");
        bool answer = !copy && !err_msg && L->last_sent_hey_you;
        cf_capture_match(st, EF_DT, m.hdr.dt == L->rec_node ? EEP_SYM_NODE : (int64_t)m.hdr.dt);
        cf_capture_match(st, EF_SA, m.hdr.sa == L->rec_node ? EEP_SYM_NODE : (int64_t)m.hdr.sa);
        if (answer) {
            /* what a Hey-You! answer carries is the node's (hook hey-you-answer) */
            st->type = CF_TYPE_ANY;
            L->shows_answer = true;
        } else {
            cf_capture_match(st, EF_TE, m.hdr.te);
            cf_capture_match(st, EF_ROUTES, m.n_l2rh + m.n_symbols);
            /* an ERR quotes what the node chooses of the message it answers
             * (nothing of it is a rule): its TE only */
            if (!err_msg) {
                cf_capture_match(st, EF_PAYLOAD, (int64_t)m.data_len);
                cf_capture_match(st, EF_DIGEST, cf_capture_digest(CF_DIGEST_START, m.data, m.data_len));
            }
            L->shows_echo |= !copy && !err_msg;
        }
    }
}

/* The .meta keys of EEP's own (the shared ones: cf_meta_read). */
static enum cf_meta_key capture_meta_key(void *ctx, const char *key, char *value, const char *path,
                                         unsigned lineno, char *err, size_t errlen)
{
    struct cap_load *L = ctx;
    if (strcmp(key, "node") == 0) {
        char *end;
        unsigned long a = strtoul(value, &end, 0);
        if (*end || a == 0 || a >= VW_EEP_ADDR_HEY_YOU) {
            snprintf(err, errlen, "%s:%u: node takes the recorded node's physical address", path, lineno);
            return CF_META_KEY_BAD;
        }
        L->rec_node = (uint32_t)a;
    } else if (strcmp(key, "topology") == 0 && strcmp(value, "router") == 0) {
        L->router = true;
    } else if (strcmp(key, "link1") == 0) {
        if (cap_parse_key(value, L->link1_key) < 0) {
            snprintf(err, errlen, "%s:%u: link1 takes the recorded tester's link 1: IPv4:PORT or a MAC", path,
                     lineno);
            return CF_META_KEY_BAD;
        }
        L->have_link1 = true;
    } else if (strcmp(key, "paced") == 0 && strcmp(value, "yes") == 0) {
        L->paced = true;
    } else {
        return CF_META_KEY_UNKNOWN;
    }
    return CF_META_KEY_TAKEN;
}

static int load_capture_case(const char *meta_path, struct cf_case *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    out->proto = &cf_proto_eep;
    out->from_capture = true;
    snprintf(out->file, sizeof out->file, "%s", meta_path);
    struct cap_load L;
    memset(&L, 0, sizeof L);
    L.c = out;
    L.rec_node = CF_EEP_NODE_DEFAULT;
    const struct cf_meta_module meta = {
        .req_prefix = "EEP-",
        .frame_any_prefix = true,
        .keys_text = "case, title, section, require, node, frame, nothing-else, paced yes, verdict fail, "
                     "topology router, link1",
        .key = capture_meta_key,
        .ctx = &L,
    };
    struct cf_meta_frames frames;
    int rc = cf_meta_read(meta_path, &meta, out, &frames, err, errlen);
    if (rc == 0 && L.router != L.have_link1) {
        snprintf(err, errlen, "%s: 'topology router' and 'link1' go together", meta_path);
        rc = -1;
    }
    if (L.router) {
        out->flags |= EEP_CASE_ROUTER;
        out->links = 2;
    }
    char pcap[sizeof out->file + 8];
    if (rc == 0) {
        cf_meta_capture_path(meta_path, pcap, sizeof pcap);
        cf_capture_step(out, CF_STEP_CONNECT, 0);
        struct vn_reader_callbacks cb = {.datagram = cap_datagram, .ctx = &L};
        char rerr[200];
        if (vn_pcap_read(pcap, &cb, NULL, NULL, rerr, sizeof rerr) < 0) {
            snprintf(err, errlen, "%s: %s", pcap, rerr);
            rc = -1;
        } else if (L.err[0] || L.full) {
            snprintf(err, errlen, "%s: %s", pcap, L.err[0] ? L.err : "more messages than a case holds");
            rc = -1;
        } else if (out->nsteps == 1) {
            snprintf(err, errlen, "%s: no EEP message (UDP port %u or Ethertype 0x%04X)", pcap, VW_EEP_UDP_PORT,
                     VW_EEP_ETHERTYPE);
            rc = -1;
        }
    }
    if (rc == 0) {
        out->flags |= L.rec_node << EEP_CASE_REC_NODE_SHIFT;
        /* the recorded node's conventions, needed of the node under test */
        if (L.shows_echo)
            cf_capture_need(out, "echo");
        if (L.shows_answer)
            cf_capture_need(out, "hey-you-answer");
        if (L.shows_unknown_oh)
            cf_capture_need(out, "unknown-oh");
        cf_capture_frame_rules(out, &frames, false);
        /* nothing the recording does not show: a dropped message stays unanswered
         * (in the room cap_datagram kept) */
        struct cf_step *st = cf_capture_step(out, CF_STEP_EXPECT_NOTHING, 0);
        st->wait_ms = 500;
        st->req = frames.last_req != VW_REQ_NONE ? frames.last_req : out->reqs[0];
        out->timeout_ms = 2000u * out->nsteps + 2000u;
    } else {
        cf_case_free(out);
    }
    return rc;
}

/* Test conventions its cases may need (C60, docs/conformance.md "Test conventions"). */
static const struct cf_hook_def eep_hooks[] = {
    {"echo", "the node sends each message it delivered back to its SA with the same PT and data block"},
    {"hey-you-answer", "the node answers a Hey-You! message addressed to it with a message of its own to the SA"},
    {"l2rh-route", "the node contract gives the L2RH (its routing bytes, --eep-l2rh 1=HEX) that makes the router "
                   "send a message out toward tester link 1"},
    {"unknown-oh", "the node contract names an OH type the node does not know (--eep-unknown-oh T)"},
    {"delivery-log", "the node prints a line for each message it delivered (run --eep-delivery-log REGEX; read from "
                     "the output of a node the tester started, run --topology, or from --eep-node-log FILE)"},
    {"err-report", "the node answers a message it could not handle (an unknown mandatory OH field, a destination "
                   "it cannot reach, one over the path MTU) with an ERR to its SA (lines 729-731: \"usually sent\"; "
                   "probe case eep-probe-err)"},
    {"error-lsbit", "the router counts a message whose PL is not 0 with DL 0 as a detected error and sets the "
                    "LSbit (declared: run --offers error-lsbit)"},
    {NULL, NULL},
};

const struct conform_protocol cf_proto_eep = {
    .name = "eep",
    .title = "PacketWay EEP",
    .unit = "message",
    .req_prefix = "EEP-",
    .default_port = VW_EEP_UDP_PORT,
    .cases_subdir = "eep",
    .transport = CF_TRANSPORT_DATAGRAM,
    .ethertype = VW_EEP_ETHERTYPE,
    .topology_options = {NULL, "--eep-router", "--eep-chain"},
    .type_names = type_names,
    .type_count = ET_COUNT,
    .field_names = field_names,
    .field_count = EF_COUNT,
    .field_settable = field_settable,
    .max_payload = 60000,
    .parse_symbol = parse_symbol,
    .parse_directive = parse_directive,
    .parse_send_arg = parse_send_arg,
    .state_init = state_init,
    .run_options = run_options,
    .run_usage = "[--eep-address A] [--eep-router] [--eep-chain] [--eep-l2rh LINK=HEX] [--eep-unknown-oh T] "
                 "[--eep-delivery-log REGEX] [--eep-node-log FILE]",
    .run_help = "  UDP, one message per datagram, or Ethernet (--link N=eth:IF). --eep-address A: the EEP address\n"
                "  of the node under test (default 0x000010); --eep-router: it is a router, run the router\n"
                "  cases; --eep-chain: two routers in a row, run the chain cases (without either, the end-node\n"
                "  cases). The node contract (docs/conformance.md): --eep-l2rh 1=HEX the routing bytes of the L2RH\n"
                "  that sends a message out of the router toward link 1 (L2RHs are SAN dependent); --eep-unknown-oh T\n"
                "  an OH type the node does not know; --offers echo,hey-you-answer,error-lsbit,err-report what it\n"
                "  offers. --eep-delivery-log REGEX: the line the node prints per delivered message (a\n"
                "  subexpression: its data length), read from the node --topology starts, or from --eep-node-log\n"
                "  FILE (a running node's output).\n",
    .set_option = set_option,
    .run_case = run_case,
    .check_alive = check_alive,
    .encode = encode,
    .session_new = session_new,
    .session_free = session_free,
    .session_feed = session_feed,
    .session_sent = session_sent,
    .session_carrier = session_carrier,
    .load_capture_case = load_capture_case,
    .msg_free = cf_msg_free,
    .field_value = field_value,
    .describe = describe,
    .hooks = eep_hooks,
    .hook_offered = hook_offered,
    .case_skipped = case_skipped,
};
