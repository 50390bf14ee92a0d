/* Offline lint of captures: VI/TCP, IFT and WARP connections and PacketWay
 * EEP frames, checked by the wire library's session, stream and message
 * rules (the same rule code the dissector and the active engine use). */
#include "conform/lint.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conform/report.h"
#include "vitcp/ift_stream.h"
#include "vitcp/pcap_reader.h"
#include "vitcp/pktway.h"
#include "vitcp/vitcp_stream.h"
#include "vitcp/warp_stream.h"

enum conn_kind { KIND_UNKNOWN, KIND_VITCP, KIND_IFT, KIND_WARP, KIND_OTHER };

#define LINT_URGENT_MAX 16

/* The capture frames of an IFT side's last segments (by the reader's
 * stream offset of their first byte), to name the frame that completed
 * each PDU: the reader settles a frame whose sender broke its CRC
 * announcement only when bytes after it arrive, at most a frame header and
 * two CRCs later, so the last 16 non-empty segments always hold its end. */
#define IFT_SEGMENTS_KEPT 16
struct ift_segments {
    uint64_t start[IFT_SEGMENTS_KEPT];
    uint64_t frame[IFT_SEGMENTS_KEPT];
    unsigned count;  /* segments recorded, the last IFT_SEGMENTS_KEPT of them kept */
};

struct lint_conn {
    enum conn_kind kind;
    int first_dir;            /* TCP direction that sent the first bytes: session dir 0 */
    bool syn_seen;
    bool dead[2];             /* framing lost in this direction (error or gap) */
    struct vw_vitcp_session session;
    /* VI/TCP urgent data (3.7): where each side's stream started (the
     * framer counts from there), and the bytes urgent pointers designated,
     * judged when the segment holding them is framed. */
    bool started[2];
    uint64_t base[2];
    uint64_t urgent[2][LINT_URGENT_MAX];
    uint64_t urgent_frame[2][LINT_URGENT_MAX];
    unsigned nurgent[2];
    struct vw_ift_nego ift;
    struct vw_ift_reader ift_reader[2];
    struct ift_segments ift_segments[2];
    bool ift_based[2];        /* ift_base is known: the capture offset of the reader's first byte */
    uint64_t ift_base[2];
    struct vw_warp_framer warp[2];
    struct vw_vitcp_badcrc_watch badcrc; /* V26: the reaction to a bad CRC at RD/RR */
    /* A ULP that upgrades its connection to IFT mid-stream (section 4,
     * found by the magic per I1): each direction is read from the segment
     * that starts with its indication; bytes before it are the ULP's. */
    bool upgraded;
    bool ift_started[2];
    bool over;                /* closed: no upgrade any more */
};

struct lint_ctx {
    const struct cf_lint_options *opt;
    struct cf_lint_result *res;
    struct lint_conn **conns;
    size_t nconns;
    /* the event being handled, for the segment callback */
    unsigned cur_conn;
    enum cf_lint_proto cur_proto;
    int cur_dir;
    uint64_t cur_frame;
    bool oom;
    unsigned open_framed;     /* IFT and WARP connections open now (each holds buffers) */
    struct vw_eep_pairer *eep_pairs; /* EEP messages kept to pair a router's copy with (P11) */
    bool framed_limit_noted;
};

/* IFT and WARP connections checked at the same time: each holds up to
 * 128 KiB of framing buffers, so a capture with tens of thousands of open
 * connections would take gigabytes. Later ones are noted, not checked. */
#define LINT_MAX_OPEN_FRAMED 1024

const char *cf_lint_proto_name(enum cf_lint_proto p)
{
    switch (p) {
    case CF_LINT_VITCP: return "VI/TCP";
    case CF_LINT_IFT: return "IFT";
    case CF_LINT_WARP: return "WARP";
    case CF_LINT_EEP: return "EEP";
    }
    return "?";
}

void cf_lint_options_init(struct cf_lint_options *o)
{
    o->vitcp_port = VW_VITCP_DEFAULT_PORT;
    o->ift_port = VW_IFT_DEFAULT_PORT;
    o->warp_port = VW_WARP_DEFAULT_PORT;
    o->eep_udp_port = VW_EEP_UDP_PORT;
    o->eep_routers = NULL;
}

static void add_issue(struct lint_ctx *c, uint64_t frame, int dir, enum vw_req req,
                      enum vw_severity sev, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add_issue(struct lint_ctx *c, uint64_t frame, int dir, enum vw_req req,
                      enum vw_severity sev, const char *fmt, ...)
{
    struct cf_lint_result *r = c->res;
    if (r->count == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        struct cf_lint_issue *grown = realloc(r->issues, cap * sizeof *grown);
        if (!grown) {
            c->oom = true;
            return;
        }
        r->issues = grown;
        r->cap = cap;
    }
    struct cf_lint_issue *i = &r->issues[r->count++];
    i->frame = frame;
    i->conn = c->cur_conn;
    i->proto = c->cur_proto;
    i->dir = dir;
    i->req = req;
    i->severity = sev;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(i->detail, sizeof i->detail, fmt, ap);
    va_end(ap);
    if (sev == VW_SEV_ERROR) r->errors++;
    else if (sev == VW_SEV_WARN) r->warnings++;
    else r->notes++;
}

static struct lint_conn *conn_get(struct lint_ctx *c, unsigned id)
{
    if (id >= c->nconns) {
        size_t n = (size_t)id + 1 > c->nconns * 2 ? (size_t)id + 1 : c->nconns * 2;
        struct lint_conn **grown = realloc(c->conns, n * sizeof *grown);
        if (!grown)
            return NULL;
        memset(grown + c->nconns, 0, (n - c->nconns) * sizeof *grown);
        c->conns = grown;
        c->nconns = n;
    }
    if (!c->conns[id]) {
        c->conns[id] = calloc(1, sizeof **c->conns);
        if (c->conns[id])
            c->res->connections++;
    }
    return c->conns[id];
}

/* Every finding of one PDU (any protocol), with the PDU's name. */
static void add_findings(struct lint_ctx *c, enum vw_req err, const char *what, const char *err_text,
                         const struct vw_findings *fs)
{
    /* the decoders usually say why in a finding of the same rule */
    if (err != VW_REQ_NONE && !vw_findings_has(fs, err))
        add_issue(c, c->cur_frame, c->cur_dir, err, VW_SEV_ERROR, "%s %s", what, err_text);
    for (unsigned i = 0; i < fs->count; i++)
        add_issue(c, c->cur_frame, c->cur_dir, fs->item[i].req, fs->item[i].severity, "%s: %s", what,
                  fs->item[i].detail);
    if (fs->dropped)
        add_issue(c, c->cur_frame, c->cur_dir, VW_REQ_NONE, VW_SEV_NOTE,
                  "%u more findings in this %s not shown", fs->dropped, what);
}

/* Urgent pointers whose byte lies in the segment at off (stream offsets
 * of the framer, from the side's first byte): judged, and forgotten. */
static void judge_urgent(struct lint_ctx *c, struct lint_conn *lc, int dir, uint64_t off, size_t len)
{
    unsigned keep = 0;
    for (unsigned i = 0; i < lc->nurgent[dir]; i++) {
        uint64_t d = lc->urgent[dir][i];
        enum vw_req v = d < lc->base[dir] ? VW_REQ_VITCP_3_7_URGENT_FIRST_BYTE
                                          : vw_vitcp_urgent_verdict(d - lc->base[dir], off, len);
        if (v == VW_REQ_COUNT) {
            lc->urgent[dir][keep] = d;
            lc->urgent_frame[dir][keep++] = lc->urgent_frame[dir][i];
            continue;
        }
        if (v == VW_REQ_VITCP_3_7_URGENT_RFC1122)
            add_issue(c, lc->urgent_frame[dir][i], dir, v, VW_SEV_ERROR,
                      "urgent pointer points at the byte after a VI segment's first byte (stream byte %llu; "
                      "BSD reading, not RFC 1122)", (unsigned long long)d);
        else if (v != VW_REQ_NONE)
            add_issue(c, lc->urgent_frame[dir][i], dir, v, VW_SEV_ERROR,
                      "urgent pointer designates stream byte %llu, not the first byte of a VI segment",
                      (unsigned long long)d);
    }
    lc->nurgent[dir] = keep;
}

static void on_segment(void *ctx, const uint8_t *raw, size_t len, uint64_t off,
                       const struct vw_vitcp_seg *seg, enum vw_req err, const struct vw_findings *fs)
{
    (void)raw;
    struct lint_ctx *c = ctx;
    c->res->segments++;
    c->res->bytes += len;
    struct lint_conn *lc = c->conns[c->cur_conn];
    /* V26, V29: a bad CRC the receiver ACKed and sent on after (stream offsets) */
    struct vw_findings all = *fs;
    vw_vitcp_badcrc_segment(&lc->badcrc, &lc->session.conn, c->cur_dir, lc->base[c->cur_dir] + off + len,
                            c->cur_frame, &all);
    add_findings(c, err, vw_vitcp_type_name(seg->hdr.type), "segment cannot be parsed", &all);
    if (lc->nurgent[c->cur_dir])
        judge_urgent(c, lc, c->cur_dir, off, len);
}

/* A TCP segment with URG on a VI/TCP connection (3.7). */
static void on_urgent(struct lint_ctx *c, struct lint_conn *lc, int dir, const struct vn_tcp_event *ev)
{
    const struct vw_vitcp_conn *vc = &lc->session.conn;
    if (!vc->dir[1 - dir].ce_urgent_opt && vc->phase != VW_VITCP_PHASE_MIDSTREAM)
        add_issue(c, ev->frame, dir, VW_REQ_VITCP_3_7_URGENT_ONLY_IF_OFFERED, VW_SEV_ERROR,
                  "urgent data sent but the peer did not offer the Urgent Marker option");
    if (lc->nurgent[dir] == LINT_URGENT_MAX) {
        add_issue(c, ev->frame, dir, VW_REQ_NONE, VW_SEV_NOTE,
                  "more than %d urgent pointers ahead of the framed data: this one is not checked",
                  LINT_URGENT_MAX);
        return;
    }
    lc->urgent[dir][lc->nurgent[dir]] = ev->offset + ev->urgent; /* RFC 1122: the urgent byte itself */
    lc->urgent_frame[dir][lc->nurgent[dir]++] = ev->frame;
}

static void on_warp(void *ctx, const uint8_t *raw, size_t len, uint64_t off,
                    const struct vw_warp_chunk *ch, enum vw_req err, const struct vw_findings *fs)
{
    (void)raw;
    (void)off;
    struct lint_ctx *c = ctx;
    c->res->warp_chunks++;
    c->res->bytes += len;
    char what[48];
    snprintf(what, sizeof what, "WARP %s chunk", vw_warp_type_name(ch->type));
    add_findings(c, err, what, "cannot be parsed", fs);
}

/* ---------------------------------------------------------------- IFT */

/*
 * IFT is framed by the wire library's reader (vw_ift_reader): each side's
 * first bytes are its adaption indication (I7), then frames sized by the
 * sender's HC/PC; when the sender broke its own announcement, the frame
 * ends where the next frame with the receiver's VTag starts (or the
 * stream ends), so the stream stays in step and
 * vw_ift_frame_decode_as_sent names the rule (IFT-5.1-CRC-AS-NEGOTIATED).
 * The wire library's vw_ift_conn framer would lose framing on such a frame.
 */

/* One whole PDU of side dir; false when the rest of the side cannot be framed. */
static bool ift_pdu(struct lint_ctx *c, struct lint_conn *lc, int dir, const uint8_t *raw, size_t len,
                    bool is_indication, uint64_t end)
{
    struct vw_findings fs;
    vw_findings_clear(&fs);
    c->res->ift_pdus++;
    c->res->bytes += len;
    if (!lc->ift.ind_seen[dir]) {
        struct vw_ift_ind ind;
        enum vw_req err = vw_ift_ind_decode(raw, len, &ind, &fs);
        if (err == VW_REQ_NONE) {
            vw_ift_nego_indication(&lc->ift, dir, &ind, &fs);
            vw_ift_ind_notes(&ind, &fs);
        }
        add_findings(c, err, "IFT adaption indication", "cannot be parsed", &fs);
        if (err != VW_REQ_NONE || !lc->ift.ind_seen[dir])
            return false;
        if (ind.bc_version > VW_IFT_BC_VERSION) {
            add_issue(c, c->cur_frame, dir, VW_REQ_NONE, VW_SEV_NOTE,
                      "frames after an incompatible indication cannot be framed: the rest of this "
                      "direction is not checked");
            return false;
        }
        return true;
    }
    if (is_indication) {
        /* a later indication: the phase rules name it */
        struct vw_ift_ind ind;
        enum vw_req err = vw_ift_ind_decode(raw, len, &ind, &fs);
        if (err == VW_REQ_NONE)
            vw_ift_nego_indication(&lc->ift, dir, &ind, &fs);
        add_findings(c, err, "IFT adaption indication", "cannot be parsed", &fs);
        return true;
    }
    vw_ift_nego_frame(&lc->ift, dir, &fs);
    vw_ift_nego_after_error(&lc->ift, dir, &fs); /* I12: the receiver of an error frame carries on */
    struct vw_ift_frame_mode announced = {0}, carried;
    vw_ift_nego_mode(&lc->ift, dir, &announced);
    struct vw_ift_frame fr;
    enum vw_req err = vw_ift_frame_decode_as_sent(raw, len, &announced, &fr, &carried, &fs);
    if (err == VW_REQ_NONE) /* what the negotiated mode asks of a frame (IFT-4.2-R-MODE) */
        vw_ift_nego_frame_rules(&lc->ift, dir, &fr, &fs);
    vw_ift_nego_frame_done(&lc->ift, dir, &fs);
    vw_ift_nego_frame_end(&lc->ift, dir, end); /* V29: for the receiver's TCP ACK */
    add_findings(c, err, "IFT frame", "cannot be framed", &fs);
    return err == VW_REQ_NONE;
}

struct ift_read_call {
    struct lint_ctx *c;
    struct lint_conn *lc;
    int dir;
};

/* The frame of the segment that holds stream byte off (else the frame at hand). */
static uint64_t ift_frame_of(const struct lint_ctx *c, const struct ift_segments *segs, uint64_t off)
{
    unsigned kept = segs->count < IFT_SEGMENTS_KEPT ? segs->count : IFT_SEGMENTS_KEPT;
    for (unsigned i = 1; i <= kept; i++) {
        unsigned slot = (segs->count - i) % IFT_SEGMENTS_KEPT;
        if (segs->start[slot] <= off)
            return segs->frame[slot];
    }
    return c->cur_frame;
}

static bool on_ift_pdu(void *ctx, const uint8_t *raw, size_t len, uint64_t stream_off, bool is_indication)
{
    struct ift_read_call *call = ctx;
    struct lint_ctx *c = call->c;
    uint64_t now = c->cur_frame;
    c->cur_frame = ift_frame_of(c, &call->lc->ift_segments[call->dir], stream_off + len - 1);
    bool go_on = ift_pdu(c, call->lc, call->dir, raw, len, is_indication,
                         call->lc->ift_base[call->dir] + stream_off + len);
    c->cur_frame = now;
    return go_on;
}

/* Side dir stops being checked when its reader stopped: say why. */
static void ift_read_status(struct lint_ctx *c, struct lint_conn *lc, int dir, enum vw_ift_read_status st)
{
    switch (st) {
    case VW_IFT_READ_OK:
        return;
    case VW_IFT_READ_NOT_INDICATION:
        /* I35: one ID with the plugin: a bad magic where the indication is
         * due, or a frame before it */
        if (lc->ift_reader[dir].not_indication_rule == VW_REQ_IFT_4_1_MAGIC)
            add_issue(c, c->cur_frame, dir, VW_REQ_IFT_4_1_MAGIC, VW_SEV_ERROR,
                      "the first bytes of this direction are an adaption indication with a bad magic (not "
                      "0x52444450): the rest of this direction is not checked");
        else
            add_issue(c, c->cur_frame, dir, VW_REQ_IFT_4_INDICATION_FIRST, VW_SEV_ERROR,
                      "the first bytes of this direction are a frame, not its adaption indication (no magic "
                      "0x52444450): the rest of this direction is not checked");
        break;
    case VW_IFT_READ_STOPPED:
        add_issue(c, c->cur_frame, dir, VW_REQ_NONE, VW_SEV_NOTE,
                  "IFT framing lost: the rest of this direction is not checked");
        break;
    case VW_IFT_READ_TOO_LARGE:
        add_issue(c, c->cur_frame, dir, VW_REQ_NONE, VW_SEV_NOTE,
                  "IFT PDU longer than any frame can be: the rest of this direction is not checked");
        break;
    case VW_IFT_READ_FRAMING_LOST:
        add_issue(c, c->cur_frame, dir, VW_REQ_IFT_5_1_FRAME_LEN, VW_SEV_ERROR,
                  "bytes at stream offset %llu cannot start a frame (header_size %u, VTag 0x%04x): the sizes "
                  "of the frame before them do not fit; IFT framing lost, the rest of this direction is not "
                  "checked", (unsigned long long)lc->ift_reader[dir].lost_off, lc->ift_reader[dir].lost_hs,
                  lc->ift_reader[dir].lost_vtag);
        break;
    case VW_IFT_READ_NO_MEMORY:
        c->oom = true;
        break;
    }
    lc->dead[dir] = true;
}

static void ift_feed(struct lint_ctx *c, struct lint_conn *lc, int dir, const uint8_t *data, size_t len)
{
    struct vw_ift_reader *r = &lc->ift_reader[dir];
    struct ift_segments *segs = &lc->ift_segments[dir];
    if (len == 0)
        return;
    segs->start[segs->count % IFT_SEGMENTS_KEPT] = r->stream_off + r->have;
    segs->frame[segs->count % IFT_SEGMENTS_KEPT] = c->cur_frame;
    segs->count++;
    struct ift_read_call call = {c, lc, dir};
    ift_read_status(c, lc, dir, vw_ift_reader_feed(r, data, len, on_ift_pdu, &call));
}

/* The connection closed: frames only its end settles, then what is left. */
static void ift_finish(struct lint_ctx *c, struct lint_conn *lc, uint64_t frame)
{
    for (int d = 0; d < 2; d++) {
        if (lc->dead[d])
            continue;
        c->cur_dir = d;
        struct ift_read_call call = {c, lc, d};
        ift_read_status(c, lc, d, vw_ift_reader_finish(&lc->ift_reader[d], on_ift_pdu, &call));
        if (!lc->dead[d] && lc->ift_reader[d].have)
            add_issue(c, frame, d, VW_REQ_NONE, VW_SEV_NOTE,
                      "%zu bytes of an unfinished IFT PDU at the end of the connection",
                      lc->ift_reader[d].have);
    }
}

/* ---------------------------------------------------------- connections */

static void conn_free(struct lint_conn *lc)
{
    switch (lc->kind) {
    case KIND_VITCP:
        vw_vitcp_session_free(&lc->session);
        break;
    case KIND_IFT:
        vw_ift_reader_free(&lc->ift_reader[0]);
        vw_ift_reader_free(&lc->ift_reader[1]);
        break;
    case KIND_WARP:
        vw_warp_framer_free(&lc->warp[0]);
        vw_warp_framer_free(&lc->warp[1]);
        break;
    default:
        break;
    }
}

/* The protocol a configured port stands for, KIND_OTHER for none. */
static enum conn_kind kind_of_port(const struct cf_lint_options *o, uint16_t port)
{
    return port == o->ift_port ? KIND_IFT : port == o->warp_port ? KIND_WARP
         : port == o->vitcp_port ? KIND_VITCP : KIND_OTHER;
}

/*
 * Which protocol a connection speaks, from its first data: the port of the
 * side that listens (the SYN's destination), then the other port, then the
 * content (an IFT adaption indication with its magic and CRC, a plausible
 * VI/TCP header). Without the SYN the lower port goes first. This is the
 * order Wireshark's TCP tries port dissectors in (server port remembered
 * from the SYN, else the lower port), so lint and the plugin agree: a
 * VI/TCP client that happens to use source port 5996 is still VI/TCP. WARP
 * has no magic and its header is too weak a sign: only its port selects it.
 */
static void classify(struct lint_ctx *c, struct lint_conn *lc, const struct vn_tcp_event *ev)
{
    const struct cf_lint_options *o = c->opt;
    bool start = ev->offset == 0;
    uint16_t client = ev->dir == VN_C2S ? ev->src->port : ev->dst->port;
    uint16_t server = ev->dir == VN_C2S ? ev->dst->port : ev->src->port;
    uint16_t first = lc->syn_seen ? server : client < server ? client : server;
    uint16_t second = first == server ? client : server;
    enum conn_kind k = KIND_OTHER;
    if (start && kind_of_port(o, first) != KIND_OTHER)
        k = kind_of_port(o, first);
    else if (start && kind_of_port(o, second) != KIND_OTHER)
        k = kind_of_port(o, second);
    else if (vw_ift_plausible_indication(ev->data, ev->len))
        k = KIND_IFT;
    else if (ev->len >= VW_VITCP_SEG_HDR_LEN && vw_vitcp_plausible_header(ev->data, ev->len))
        k = KIND_VITCP;
    lc->first_dir = (int)ev->dir;
    lc->kind = KIND_OTHER;
    if ((k == KIND_IFT || k == KIND_WARP) && c->open_framed >= LINT_MAX_OPEN_FRAMED) {
        if (!c->framed_limit_noted)
            add_issue(c, ev->frame, -1, VW_REQ_NONE, VW_SEV_NOTE,
                      "more than %d IFT/WARP connections open at once: connection %u and later ones "
                      "beyond the limit are not checked", LINT_MAX_OPEN_FRAMED, ev->conn);
        c->framed_limit_noted = true;
        return;
    }
    if (k == KIND_VITCP) {
        if (vw_vitcp_session_init(&lc->session) != 0) {
            c->oom = true;
            return;
        }
        if (lc->syn_seen && start)
            vw_vitcp_conn_saw_start(&lc->session.conn);
        c->res->vitcp_connections++;
        if (ev->offset != 0)
            add_issue(c, ev->frame, 0, VW_REQ_NONE, VW_SEV_NOTE,
                      "connection %u: capture starts mid-stream; connection state rules are relaxed", ev->conn);
    } else if (k == KIND_IFT) {
        vw_ift_nego_init(&lc->ift);
        vw_ift_reader_init(&lc->ift_reader[0], &lc->ift, 0, VW_IFT_READ_LIMIT_MAX);
        vw_ift_reader_init(&lc->ift_reader[1], &lc->ift, 1, VW_IFT_READ_LIMIT_MAX);
        memset(lc->ift_segments, 0, sizeof lc->ift_segments);
        lc->ift_based[0] = lc->ift_based[1] = false;
        c->res->ift_connections++;
    } else if (k == KIND_WARP) {
        if (vw_warp_framer_init(&lc->warp[0]) != 0) {
            c->oom = true;
            return;
        }
        if (vw_warp_framer_init(&lc->warp[1]) != 0) {
            vw_warp_framer_free(&lc->warp[0]);
            c->oom = true;
            return;
        }
        c->res->warp_connections++;
    }
    lc->kind = k;
    if (k == KIND_IFT || k == KIND_WARP)
        c->open_framed++;
    /* IFT and WARP frame from the first byte of each direction: a capture
     * that starts mid-stream cannot be framed (no resynchronisation). */
    if ((k == KIND_IFT || k == KIND_WARP) && (!lc->syn_seen || ev->offset != 0) &&
        !(k == KIND_IFT && vw_ift_plausible_indication(ev->data, ev->len))) {
        add_issue(c, ev->frame, -1, VW_REQ_NONE, VW_SEV_NOTE,
                  "connection %u: %s capture starts mid-stream: not checked", ev->conn,
                  k == KIND_IFT ? "IFT" : "WARP");
        lc->dead[0] = lc->dead[1] = true;
    }
}

/* A connection of no protocol of ours whose segment starts with an
 * adaption indication: the ULP upgraded it to IFT (section 4, lines 69-72;
 * I1: found by its magic), as the plugin's heuristic finds it. */
static void ift_upgrade(struct lint_ctx *c, struct lint_conn *lc, const struct vn_tcp_event *ev)
{
    if (c->open_framed >= LINT_MAX_OPEN_FRAMED)
        return;
    vw_ift_nego_init(&lc->ift);
    vw_ift_reader_init(&lc->ift_reader[0], &lc->ift, 0, VW_IFT_READ_LIMIT_MAX);
    vw_ift_reader_init(&lc->ift_reader[1], &lc->ift, 1, VW_IFT_READ_LIMIT_MAX);
    memset(lc->ift_segments, 0, sizeof lc->ift_segments);
    lc->ift_based[0] = lc->ift_based[1] = false;
    lc->dead[0] = lc->dead[1] = false;
    lc->upgraded = true;
    lc->ift_started[0] = lc->ift_started[1] = false;
    lc->kind = KIND_IFT;
    c->open_framed++;
    c->res->ift_connections++;
    c->cur_proto = CF_LINT_IFT;
    add_issue(c, ev->frame, -1, VW_REQ_NONE, VW_SEV_NOTE,
              "connection %u: upgraded to IFT at stream offset %llu (an adaption indication)", ev->conn,
              (unsigned long long)ev->offset);
}

/* A direction's FIN (V28, I22, W18): what it left unfinished can never
 * finish. Judged with the wire library's direction-end rules, which the
 * plugin applies at the same FIN. */
static void direction_end(struct lint_ctx *c, struct lint_conn *lc, int d, uint64_t frame)
{
    struct vw_findings fs;
    vw_findings_clear(&fs);
    switch (lc->kind) {
    case KIND_VITCP: {
        const struct vw_vitcp_framer *f = &lc->session.framer[d];
        vw_vitcp_direction_end(&lc->session.conn, d, f->error == VW_REQ_NONE && !f->oom ? f->have : 0, &fs);
        break;
    }
    case KIND_IFT: {
        if (lc->upgraded && !lc->ift_started[d])
            return;
        struct ift_read_call call = {c, lc, d};
        ift_read_status(c, lc, d, vw_ift_reader_finish(&lc->ift_reader[d], on_ift_pdu, &call));
        if (lc->dead[d])
            return;
        vw_ift_direction_end(lc->ift_reader[d].have, &fs);
        lc->dead[d] = true; /* judged: the close adds nothing for it */
        break;
    }
    case KIND_WARP:
        vw_warp_framer_finish(&lc->warp[d], &fs);
        lc->dead[d] = true;
        break;
    default:
        return;
    }
    for (unsigned i = 0; i < fs.count; i++)
        add_issue(c, frame, d, fs.item[i].req, fs.item[i].severity, "at the end of this direction: %s",
                  fs.item[i].detail);
}

static void on_tcp(void *ctx, const struct vn_tcp_event *ev)
{
    struct lint_ctx *c = ctx;
    struct lint_conn *lc = conn_get(c, ev->conn);
    if (!lc) {
        c->oom = true;
        return;
    }
    c->cur_conn = ev->conn;
    c->cur_frame = ev->frame;
    if (ev->kind == VN_TCP_OPEN)
        lc->syn_seen = ev->syn_seen;
    if (lc->kind == KIND_UNKNOWN && ev->kind == VN_TCP_DATA && ev->len)
        classify(c, lc, ev);
    if (lc->kind == KIND_OTHER && !lc->over && ev->kind == VN_TCP_DATA && ev->len &&
        vw_ift_plausible_indication(ev->data, ev->len))
        ift_upgrade(c, lc, ev);
    if (lc->kind == KIND_UNKNOWN || lc->kind == KIND_OTHER)
        return;
    c->cur_proto = lc->kind == KIND_IFT ? CF_LINT_IFT : lc->kind == KIND_WARP ? CF_LINT_WARP : CF_LINT_VITCP;
    int sdir = (int)ev->dir == lc->first_dir ? 0 : 1;
    c->cur_dir = sdir;
    switch (ev->kind) {
    case VN_TCP_OPEN:
        break;
    case VN_TCP_DATA:
        if (lc->dead[sdir])
            break;
        if (lc->kind == KIND_IFT) {
            if (lc->upgraded && !lc->ift_started[sdir]) {
                if (!vw_ift_plausible_indication(ev->data, ev->len))
                    break; /* the ULP's bytes before this side's indication */
                lc->ift_started[sdir] = true;
            }
            if (!lc->ift_based[sdir]) {
                lc->ift_based[sdir] = true;
                lc->ift_base[sdir] = ev->offset;
            }
            ift_feed(c, lc, sdir, ev->data, ev->len);
            break;
        }
        if (lc->kind == KIND_WARP) {
            enum vw_req e = vw_warp_framer_feed(&lc->warp[sdir], ev->data, ev->len, on_warp, c);
            if (e != VW_REQ_NONE) {
                lc->dead[sdir] = true;
                const char *why = lc->warp[sdir].no_adler_reading ? VW_WARP_NO_ADLER_TEXT
                                  : vw_warp_payload_only_text(lc->warp[sdir].payload_only);
                add_issue(c, ev->frame, sdir, e, VW_SEV_ERROR, "WARP framing lost%s%s: the rest of this direction is not checked",
                          why ? ": " : "", why ? why : "");
            }
            break;
        }
        {
            if (!lc->started[sdir]) {
                lc->started[sdir] = true;
                lc->base[sdir] = ev->offset;
            }
            enum vw_req e = vw_vitcp_session_feed(&lc->session, sdir, ev->data, ev->len, on_segment, c);
            if (e != VW_REQ_NONE) {
                lc->dead[sdir] = true;
                add_issue(c, ev->frame, sdir, e, VW_SEV_ERROR,
                          "framing lost: the rest of this direction is not checked");
            }
        }
        break;
    case VN_TCP_GAP:
        if (!lc->dead[sdir])
            add_issue(c, ev->frame, sdir, VW_REQ_NONE, VW_SEV_NOTE,
                      "capture gap of %zu bytes: the rest of this direction is not checked", ev->len);
        lc->dead[sdir] = true;
        break;
    case VN_TCP_URGENT:
        if (lc->kind == KIND_VITCP && !lc->dead[sdir])
            on_urgent(c, lc, sdir, ev);
        break;
    case VN_TCP_RETX:
        /* V25 is a VI/TCP rule; IFT and WARP name no such rule */
        if (ev->diff_bytes && lc->kind == KIND_VITCP)
            add_issue(c, ev->frame, sdir, VW_REQ_VITCP_2_2_RETX_SAME_DATA, VW_SEV_ERROR,
                      "retransmission differs from the original in %zu bytes (first at stream offset %llu)",
                      ev->diff_bytes, (unsigned long long)ev->diff_offset);
        else if (ev->diff_bytes)
            add_issue(c, ev->frame, sdir, VW_REQ_NONE, VW_SEV_NOTE,
                      "TCP retransmission differs from the original in %zu bytes (first at stream offset "
                      "%llu); the first copy was checked",
                      ev->diff_bytes, (unsigned long long)ev->diff_offset);
        break;
    case VN_TCP_DIR_END:
        if (lc->kind == KIND_VITCP)
            vw_vitcp_badcrc_close(&lc->badcrc, sdir); /* V29: this side's close is its reaction */
        if (!lc->dead[sdir])
            direction_end(c, lc, sdir, ev->frame);
        break;
    case VN_TCP_CLOSE: {
        /* The connection's end: both FINs or an RST. The capture's end (or
         * a new SYN on the same ports) is not the connection's: nothing is
         * judged there (V28, I22, W18). */
        bool real_end = ev->reason == VN_CLOSE_FIN || ev->reason == VN_CLOSE_RST;
        if (lc->kind == KIND_VITCP && real_end) {
            struct vw_findings fs;
            vw_findings_clear(&fs);
            vw_vitcp_conn_finish(&lc->session.conn, &fs);
            for (unsigned i = 0; i < fs.count; i++)
                add_issue(c, ev->frame, -1, fs.item[i].req, fs.item[i].severity, "at close: %s",
                          fs.item[i].detail);
        }
        if (lc->kind == KIND_IFT)
            ift_finish(c, lc, ev->frame);
        if (lc->kind == KIND_IFT || lc->kind == KIND_WARP)
            c->open_framed--;
        conn_free(lc);
        lc->kind = KIND_OTHER; /* a reused connection number starts over */
        lc->over = true;
        break;
    }
    }
}

/* PacketWay EEP over Ethernet (Ethertype) or UDP (port): one message per
 * frame, decoded as its carrier delivers it (P1). */
static void on_datagram(void *ctx, const struct vn_datagram *dg)
{
    struct lint_ctx *c = ctx;
    enum vw_eep_carrier carrier;
    if (dg->kind == VN_DGRAM_ETH && dg->ethertype == VW_EEP_ETHERTYPE)
        carrier = VW_EEP_CARRIER_LINK;
    else if (dg->kind == VN_DGRAM_UDP &&
             (dg->dst.port == c->opt->eep_udp_port || dg->src.port == c->opt->eep_udp_port))
        carrier = VW_EEP_CARRIER_DATAGRAM;
    else
        return;
    c->cur_frame = dg->frame;
    c->cur_conn = 0;
    c->cur_dir = -1;
    c->cur_proto = CF_LINT_EEP;
    if (dg->truncated) {
        add_issue(c, dg->frame, -1, VW_REQ_NONE, VW_SEV_NOTE,
                  "EEP message cut by the capture's snap length: not checked");
        return;
    }
    c->res->eep_messages++;
    c->res->bytes += dg->len;
    struct vw_eep_msg msg;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    enum vw_req err = vw_eep_decode_on(dg->data, dg->len, carrier, &msg, &fs);
    if (err == VW_REQ_NONE)
        vw_eep_notes(dg->data, &msg, NULL, &fs);
    const char *what = carrier == VW_EEP_CARRIER_LINK ? "EEP message (Ethernet)" : "EEP message (UDP)";
    add_findings(c, err, what, "cannot be parsed", &fs);
    if (err != VW_REQ_NONE)
        return;
    /* Both hops of a message through a router (P11, P31): the wire library
     * pairs the copies by what a router may not change, as the dissector
     * does; --eep-router names router addresses. */
    if (!c->eep_pairs) {
        if (!(c->eep_pairs = vw_eep_pairer_new())) {
            c->oom = true;
            return;
        }
        vw_eep_pairer_add_routers(c->eep_pairs, c->opt->eep_routers, NULL, 0); /* checked by the CLI */
    }
    struct vw_eep_hop hop;
    if (carrier == VW_EEP_CARRIER_LINK)
        vw_eep_hop_set(&hop, dg->src_mac, dg->dst_mac, 6);
    else
        vw_eep_hop_set(&hop, dg->src.ip.addr, dg->dst.ip.addr, dg->src.ip.family == 4 ? 4 : 16);
    vw_eep_hop_set_time(&hop, dg->ts_usec);
    uint64_t first = 0;
    vw_findings_clear(&fs);
    if (vw_eep_pairer_add(c->eep_pairs, dg->frame, &hop, carrier, dg->data, &msg, &first, &fs)) {
        char hop_what[80];
        snprintf(hop_what, sizeof hop_what, "%s, router's copy of frame %llu", what, (unsigned long long)first);
        add_findings(c, VW_REQ_NONE, hop_what, "", &fs);
    }
}

/* A TCP ACK (V26, V29: did the receiver of a bad VI segment or IFT frame acknowledge it?). */
static void on_ack(void *ctx, unsigned conn, enum vn_dir dir, uint64_t acked, uint64_t frame)
{
    (void)frame;
    struct lint_ctx *c = ctx;
    struct lint_conn *lc = conn < c->nconns ? c->conns[conn] : NULL;
    if (lc && lc->kind == KIND_VITCP)
        vw_vitcp_badcrc_ack(&lc->badcrc, (int)dir == lc->first_dir ? 0 : 1, acked);
    if (lc && lc->kind == KIND_IFT) /* V29: the receiver's reaction counts from its ACK */
        vw_ift_nego_ack(&lc->ift, (int)dir == lc->first_dir ? 0 : 1, acked);
}

static void on_notice(void *ctx, uint64_t frame, const char *msg)
{
    struct lint_ctx *c = ctx;
    add_issue(c, frame, -1, VW_REQ_NONE, VW_SEV_NOTE, "%s", msg);
}

/* Where a lint's frames come from: a capture file, or frames in memory. */
typedef int (*frame_source)(const void *src, const struct vn_reader_callbacks *cb, struct vn_reader_stats *st,
                            char *err, size_t errlen);

static int frames_of_file(const void *src, const struct vn_reader_callbacks *cb, struct vn_reader_stats *st,
                          char *err, size_t errlen)
{
    return vn_pcap_read(src, cb, NULL, st, err, errlen);
}

struct memory_frames {
    int linktype;
    const struct cf_lint_frame *frame;
    size_t count;
};

static int frames_of_memory(const void *src, const struct vn_reader_callbacks *cb, struct vn_reader_stats *st,
                            char *err, size_t errlen)
{
    const struct memory_frames *m = src;
    memset(st, 0, sizeof *st);
    struct vn_reader *r = vn_reader_new(m->linktype, cb, NULL);
    if (!r) {
        snprintf(err, errlen, "cannot read link type %d (unsupported, or out of memory)", m->linktype);
        return -1;
    }
    for (size_t i = 0; i < m->count; i++)
        vn_reader_feed(r, m->frame[i].ts_usec, m->frame[i].data, m->frame[i].len, m->frame[i].len);
    vn_reader_finish(r);
    *st = *vn_reader_stats(r);
    vn_reader_free(r);
    return 0;
}

static int lint_run(frame_source read, const void *src, const char *what, const struct cf_lint_options *o,
                    struct cf_lint_result *res, char *err, size_t errlen)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    memset(res, 0, sizeof *res);
    struct cf_lint_options defaults;
    if (!o) {
        cf_lint_options_init(&defaults);
        o = &defaults;
    }
    struct lint_ctx c = {.opt = o, .res = res};
    struct vn_reader_callbacks cb = {.tcp = on_tcp, .datagram = on_datagram, .notice = on_notice, .ctx = &c,
                                     .ack = on_ack};
    struct vn_reader_stats st;
    int rc = read(src, &cb, &st, err, errlen);
    res->frames = st.frames;
    for (size_t i = 0; i < c.nconns; i++) {
        if (c.conns[i])
            conn_free(c.conns[i]);
        free(c.conns[i]);
    }
    free(c.conns);
    vw_eep_pairer_free(c.eep_pairs);
    if (c.oom && rc == 0) {
        snprintf(err, errlen, "out of memory while linting %s", what);
        rc = -1;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    res->seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
    return rc;
}

int cf_lint_file(const char *path, const struct cf_lint_options *o, struct cf_lint_result *res,
                 char *err, size_t errlen)
{
    return lint_run(frames_of_file, path, path, o, res, err, errlen);
}

int cf_lint_frames(int linktype, const struct cf_lint_frame *frames, size_t count,
                   const struct cf_lint_options *o, struct cf_lint_result *res, char *err, size_t errlen)
{
    struct memory_frames m = {linktype, frames, count};
    return lint_run(frames_of_memory, &m, "the frames", o, res, err, errlen);
}

void cf_lint_result_free(struct cf_lint_result *res)
{
    free(res->issues);
    memset(res, 0, sizeof *res);
}

size_t cf_lint_count(const struct cf_lint_result *res, enum vw_req req, enum vw_severity sev)
{
    size_t n = 0;
    for (size_t i = 0; i < res->count; i++)
        if (res->issues[i].req == req && res->issues[i].severity >= sev)
            n++;
    return n;
}

static void write_counts(FILE *out, const struct cf_lint_result *res)
{
    fprintf(out, "%llu VI/TCP connections, %llu segments", (unsigned long long)res->vitcp_connections,
            (unsigned long long)res->segments);
    if (res->ift_connections)
        fprintf(out, ", %llu IFT connections, %llu PDUs", (unsigned long long)res->ift_connections,
                (unsigned long long)res->ift_pdus);
    if (res->warp_connections)
        fprintf(out, ", %llu WARP connections, %llu chunks", (unsigned long long)res->warp_connections,
                (unsigned long long)res->warp_chunks);
    if (res->eep_messages)
        fprintf(out, ", %llu EEP messages", (unsigned long long)res->eep_messages);
}

void cf_lint_write_text(FILE *out, const char *path, const struct cf_lint_result *res)
{
    for (size_t i = 0; i < res->count; i++) {
        const struct cf_lint_issue *is = &res->issues[i];
        fprintf(out, "%s: frame %llu: ", path, (unsigned long long)is->frame);
        if (is->proto == CF_LINT_EEP)
            fputs("EEP", out);
        else if (is->proto == CF_LINT_VITCP)
            fprintf(out, "conn %u", is->conn);
        else
            fprintf(out, "conn %u (%s)", is->conn, cf_lint_proto_name(is->proto));
        fprintf(out, ": %s", vw_severity_name(is->severity));
        if (is->req != VW_REQ_NONE) {
            const struct vw_req_info *ri = vw_req_info(is->req);
            fprintf(out, " %s (%s %s)", ri->id, vw_level_name(ri->level), ri->section);
        }
        fprintf(out, ": %s\n", is->detail);
    }
    fprintf(out, "lint %s: %llu frames, ", path, (unsigned long long)res->frames);
    write_counts(out, res);
    fprintf(out, ": %u errors, %u warnings, %u notes (%.3f s)\n", res->errors, res->warnings, res->notes,
            res->seconds);
}

void cf_lint_write_json(FILE *out, const char *path, const struct cf_lint_result *res)
{
    fputs("{\"file\": ", out);
    cf_json_string(out, path);
    fputs(", \"issues\": [", out);
    for (size_t i = 0; i < res->count; i++) {
        const struct cf_lint_issue *is = &res->issues[i];
        fprintf(out, "%s\n  {\"frame\": %llu, \"protocol\": ", i ? "," : "", (unsigned long long)is->frame);
        cf_json_string(out, cf_lint_proto_name(is->proto));
        if (is->proto != CF_LINT_EEP)
            fprintf(out, ", \"connection\": %u", is->conn);
        fputs(", \"severity\": ", out);
        cf_json_string(out, vw_severity_name(is->severity));
        fputs(", \"requirement\": ", out);
        if (is->req != VW_REQ_NONE)
            cf_json_string(out, vw_req_id(is->req));
        else
            fputs("null", out);
        fputs(", \"message\": ", out);
        cf_json_string(out, is->detail);
        fputc('}', out);
    }
    fprintf(out,
            "\n], \"summary\": {\"frames\": %llu, \"vitcp_connections\": %llu, \"segments\": %llu, "
            "\"ift_connections\": %llu, \"ift_pdus\": %llu, \"warp_connections\": %llu, "
            "\"warp_chunks\": %llu, \"eep_messages\": %llu, "
            "\"errors\": %u, \"warnings\": %u, \"notes\": %u, \"seconds\": %.3f}}\n",
            (unsigned long long)res->frames, (unsigned long long)res->vitcp_connections,
            (unsigned long long)res->segments, (unsigned long long)res->ift_connections,
            (unsigned long long)res->ift_pdus, (unsigned long long)res->warp_connections,
            (unsigned long long)res->warp_chunks, (unsigned long long)res->eep_messages, res->errors,
            res->warnings, res->notes, res->seconds);
}

bool cf_lint_routers_valid(const char *list, char *bad, size_t badlen)
{
    struct vw_eep_pairer *probe = vw_eep_pairer_new();
    bool ok = probe && vw_eep_pairer_add_routers(probe, list, bad, badlen) && *list;
    vw_eep_pairer_free(probe);
    return ok;
}
