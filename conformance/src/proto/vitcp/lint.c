/* VI/TCP's lint module (conform/protocol.h): a connection's segments
 * through the wire library's VI/TCP session (as the active engine), its
 * urgent pointers (3.7), and the reaction to a bad CRC (V26, V29). */
#include "conform/proto/vitcp.h"

#include "vitcp/pcap_reader.h"
#include "vitcp/vitcp_stream.h"

#define URGENT_MAX 16

struct vitcp_conn {
    struct vw_vitcp_session session;
    /* Urgent data (3.7): where each side's stream started (the framer
     * counts from there), and the bytes urgent pointers designated,
     * judged when the segment holding them is framed. */
    bool started[2];
    uint64_t base[2];
    uint64_t urgent[2][URGENT_MAX];
    uint64_t urgent_frame[2][URGENT_MAX];
    unsigned nurgent[2];
    struct vw_vitcp_badcrc_watch badcrc; /* V26: the reaction to a bad CRC at RD/RR */
};

enum { COUNT_CONNECTIONS, COUNT_SEGMENTS };

static int conn_open(struct cf_lint *l, struct cf_lint_flow *f, const struct vn_tcp_event *ev)
{
    struct vitcp_conn *vc = f->state;
    if (vw_vitcp_session_init(&vc->session) != 0)
        return -1;
    if (f->syn_seen && ev->offset == 0)
        vw_vitcp_conn_saw_start(&vc->session.conn);
    cf_lint_counted(l, COUNT_CONNECTIONS);
    if (ev->offset != 0)
        cf_lint_issue(l, ev->frame, 0, VW_REQ_NONE, VW_SEV_NOTE,
                      "connection %u: capture starts mid-stream; connection state rules are relaxed", ev->conn);
    return 0;
}

static void conn_free(struct cf_lint_flow *f)
{
    struct vitcp_conn *vc = f->state;
    vw_vitcp_session_free(&vc->session);
}

/* Urgent pointers whose byte lies in the segment at off (stream offsets
 * of the framer, from the side's first byte): judged, and forgotten. */
static void judge_urgent(struct cf_lint *l, struct vitcp_conn *vc, int dir, uint64_t off, size_t len)
{
    unsigned keep = 0;
    for (unsigned i = 0; i < vc->nurgent[dir]; i++) {
        uint64_t d = vc->urgent[dir][i];
        enum vw_req v = d < vc->base[dir] ? VW_REQ_VITCP_3_7_URGENT_FIRST_BYTE
                                          : vw_vitcp_urgent_verdict(d - vc->base[dir], off, len);
        if (v == VW_REQ_COUNT) {
            vc->urgent[dir][keep] = d;
            vc->urgent_frame[dir][keep++] = vc->urgent_frame[dir][i];
            continue;
        }
        if (v == VW_REQ_VITCP_3_7_URGENT_RFC1122)
            cf_lint_issue(l, vc->urgent_frame[dir][i], dir, v, VW_SEV_ERROR,
                          "urgent pointer points at the byte after a VI segment's first byte (stream byte %llu; "
                          "BSD reading, not RFC 1122)", (unsigned long long)d);
        else if (v != VW_REQ_NONE)
            cf_lint_issue(l, vc->urgent_frame[dir][i], dir, v, VW_SEV_ERROR,
                          "urgent pointer designates stream byte %llu, not the first byte of a VI segment",
                          (unsigned long long)d);
    }
    vc->nurgent[dir] = keep;
}

struct segment_call {
    struct cf_lint *l;
    struct vitcp_conn *vc;
};

static void on_segment(void *ctx, const uint8_t *raw, size_t len, uint64_t off,
                       const struct vw_vitcp_seg *seg, enum vw_req err, const struct vw_findings *fs)
{
    (void)raw;
    struct segment_call *call = ctx;
    struct cf_lint *l = call->l;
    struct vitcp_conn *vc = call->vc;
    int dir = cf_lint_dir(l);
    cf_lint_counted(l, COUNT_SEGMENTS);
    /* V26, V29: a bad CRC the receiver ACKed and sent on after (stream offsets) */
    struct vw_findings all = *fs;
    vw_vitcp_badcrc_segment(&vc->badcrc, &vc->session.conn, dir, vc->base[dir] + off + len, cf_lint_frame(l),
                            &all);
    cf_lint_findings(l, err, vw_vitcp_type_name(seg->hdr.type), "segment cannot be parsed", &all);
    if (vc->nurgent[dir])
        judge_urgent(l, vc, dir, off, len);
}

static void data(struct cf_lint *l, struct cf_lint_flow *f, int dir, const struct vn_tcp_event *ev)
{
    struct vitcp_conn *vc = f->state;
    if (!vc->started[dir]) {
        vc->started[dir] = true;
        vc->base[dir] = ev->offset;
    }
    struct segment_call call = {l, vc};
    enum vw_req e = vw_vitcp_session_feed(&vc->session, dir, ev->data, ev->len, on_segment, &call);
    if (e != VW_REQ_NONE) {
        f->dead[dir] = true;
        cf_lint_issue(l, ev->frame, dir, e, VW_SEV_ERROR, "framing lost: the rest of this direction is not checked");
    }
}

/* A TCP segment with URG (3.7). */
static void urgent(struct cf_lint *l, struct cf_lint_flow *f, int dir, const struct vn_tcp_event *ev)
{
    struct vitcp_conn *vc = f->state;
    const struct vw_vitcp_conn *conn = &vc->session.conn;
    if (!conn->dir[1 - dir].ce_urgent_opt && conn->phase != VW_VITCP_PHASE_MIDSTREAM)
        cf_lint_issue(l, ev->frame, dir, VW_REQ_VITCP_3_7_URGENT_ONLY_IF_OFFERED, VW_SEV_ERROR,
                      "urgent data sent but the peer did not offer the Urgent Marker option");
    if (vc->nurgent[dir] == URGENT_MAX) {
        cf_lint_issue(l, ev->frame, dir, VW_REQ_NONE, VW_SEV_NOTE,
                      "more than %d urgent pointers ahead of the framed data: this one is not checked", URGENT_MAX);
        return;
    }
    vc->urgent[dir][vc->nurgent[dir]] = ev->offset + ev->urgent; /* RFC 1122: the urgent byte itself */
    vc->urgent_frame[dir][vc->nurgent[dir]++] = ev->frame;
}

/* V26, V29: did the receiver of a bad segment acknowledge it? */
static void ack(struct cf_lint_flow *f, int dir, uint64_t acked)
{
    struct vitcp_conn *vc = f->state;
    vw_vitcp_badcrc_ack(&vc->badcrc, dir, acked);
}

/* A direction's FIN (V28): judged with the wire library's direction-end
 * rules, which the plugin applies at the same FIN. */
static void direction_end(struct cf_lint *l, struct cf_lint_flow *f, int dir, struct vw_findings *fs)
{
    (void)l;
    struct vitcp_conn *vc = f->state;
    vw_vitcp_badcrc_close(&vc->badcrc, dir); /* V29: this side's close is its reaction */
    if (f->dead[dir])
        return;
    const struct vw_vitcp_framer *fr = &vc->session.framer[dir];
    vw_vitcp_direction_end(&vc->session.conn, dir, fr->error == VW_REQ_NONE && !fr->oom ? fr->have : 0, fs);
}

static void closed(struct cf_lint *l, struct cf_lint_flow *f, bool real_end, struct vw_findings *fs)
{
    (void)l;
    if (!real_end)
        return; /* V28: the capture's end is not the connection's */
    struct vitcp_conn *vc = f->state;
    vw_vitcp_conn_finish(&vc->session.conn, fs);
}

const struct cf_lint_module cf_lint_vitcp = {
    .protocol = &cf_proto_vitcp,
    .title = "VI/TCP",
    .port_option = "--port",
    .help = "  VI/TCP: TCP port --port (5995), else a segment header that fits.\n",
    .counters = {{"vitcp_connections", "VI/TCP connections"}, {"segments", "segments"}},
    .looks_like = vw_vitcp_plausible_header,
    .conn_size = sizeof(struct vitcp_conn),
    .conn_open = conn_open,
    .conn_free = conn_free,
    .data = data,
    .urgent = urgent,
    .ack = ack,
    .retransmission_rule = VW_REQ_VITCP_2_2_RETX_SAME_DATA, /* V25 */
    .direction_end = direction_end,
    .closed = closed,
};
