/* IFT's lint module (conform/protocol.h).
 *
 * IFT is framed by the wire library's reader (vw_ift_reader): each side's
 * first bytes are its adaption indication (I7), then frames sized by the
 * sender's HC/PC; when the sender broke its own announcement, the frame
 * ends where the next frame with the receiver's VTag starts (or the
 * stream ends), so the stream stays in step and
 * vw_ift_frame_decode_as_sent names the rule (IFT-5.1-CRC-AS-NEGOTIATED).
 * The wire library's vw_ift_conn framer would lose framing on such a frame.
 */
#include "conform/proto/ift.h"

#include "vitcp/ift_stream.h"
#include "vitcp/pcap_reader.h"

/* The capture frames of a side's last segments (by the reader's stream
 * offset of their first byte), to name the frame that completed each PDU:
 * the reader settles a frame whose sender broke its CRC announcement only
 * when bytes after it arrive, at most a frame header and two CRCs later,
 * so the last 16 non-empty segments always hold its end. */
#define SEGMENTS_KEPT 16
struct ift_segments {
    uint64_t start[SEGMENTS_KEPT];
    uint64_t frame[SEGMENTS_KEPT];
    unsigned count;  /* segments recorded, the last SEGMENTS_KEPT of them kept */
};

struct ift_conn {
    struct vw_ift_nego nego;
    struct vw_ift_reader reader[2];
    struct ift_segments segments[2];
    /* Each direction is read from its first data, or on a connection a
     * ULP upgrades to IFT mid-stream (section 4, found by the magic per
     * I1), from the segment that starts with its indication: the bytes
     * before it are the ULP's. base: the capture offset of its first byte. */
    bool started[2];
    uint64_t base[2];
};

enum { COUNT_CONNECTIONS, COUNT_PDUS };

static int conn_open(struct cf_lint *l, struct cf_lint_flow *f, const struct vn_tcp_event *ev)
{
    struct ift_conn *ic = f->state;
    vw_ift_nego_init(&ic->nego);
    vw_ift_reader_init(&ic->reader[0], &ic->nego, 0, VW_IFT_READ_LIMIT_MAX);
    vw_ift_reader_init(&ic->reader[1], &ic->nego, 1, VW_IFT_READ_LIMIT_MAX);
    cf_lint_counted(l, COUNT_CONNECTIONS);
    /* section 4, lines 69-72; I1: found by its magic, as the plugin's heuristic finds it */
    if (f->upgraded)
        cf_lint_issue(l, ev->frame, -1, VW_REQ_NONE, VW_SEV_NOTE,
                      "connection %u: upgraded to IFT at stream offset %llu (an adaption indication)", ev->conn,
                      (unsigned long long)ev->offset);
    return 0;
}

static void conn_free(struct cf_lint_flow *f)
{
    struct ift_conn *ic = f->state;
    vw_ift_reader_free(&ic->reader[0]);
    vw_ift_reader_free(&ic->reader[1]);
}

/* One whole PDU of side dir; false when the rest of the side cannot be framed. */
static bool pdu(struct cf_lint *l, struct ift_conn *ic, int dir, const uint8_t *raw, size_t len,
                bool is_indication, uint64_t end)
{
    struct vw_findings fs;
    vw_findings_clear(&fs);
    cf_lint_counted(l, COUNT_PDUS);
    bool first = !ic->nego.ind_seen[dir];
    if (first || is_indication) {
        struct vw_ift_ind ind;
        enum vw_req err = vw_ift_ind_decode(raw, len, &ind, &fs);
        if (err == VW_REQ_NONE)
            vw_ift_nego_indication(&ic->nego, dir, &ind, &fs);
        if (err == VW_REQ_NONE && first)
            vw_ift_ind_notes(&ind, &fs);
        cf_lint_findings(l, err, "IFT adaption indication", "cannot be parsed", &fs);
        if (!first)
            return true; /* a later indication: the phase rules name it */
        if (err != VW_REQ_NONE || !ic->nego.ind_seen[dir])
            return false;
        if (ind.bc_version > VW_IFT_BC_VERSION) {
            cf_lint_issue(l, cf_lint_frame(l), dir, VW_REQ_NONE, VW_SEV_NOTE,
                          "frames after an incompatible indication cannot be framed: the rest of this "
                          "direction is not checked");
            return false;
        }
        return true;
    }
    vw_ift_nego_frame(&ic->nego, dir, &fs);
    vw_ift_nego_after_error(&ic->nego, dir, &fs); /* I12: the receiver of an error frame carries on */
    struct vw_ift_frame_mode announced = {0}, carried;
    vw_ift_nego_mode(&ic->nego, dir, &announced);
    struct vw_ift_frame fr;
    enum vw_req err = vw_ift_frame_decode_as_sent(raw, len, &announced, &fr, &carried, &fs);
    if (err == VW_REQ_NONE) /* what the negotiated mode asks of a frame (IFT-4.2-R-MODE) */
        vw_ift_nego_frame_rules(&ic->nego, dir, &fr, &fs);
    vw_ift_nego_frame_done(&ic->nego, dir, &fs);
    vw_ift_nego_frame_end(&ic->nego, dir, end); /* V29: for the receiver's TCP ACK */
    cf_lint_findings(l, err, "IFT frame", "cannot be framed", &fs);
    return err == VW_REQ_NONE;
}

struct read_call {
    struct cf_lint *l;
    struct ift_conn *ic;
    int dir;
};

/* The frame of the segment that holds stream byte off (else the frame at hand). */
static uint64_t frame_of(const struct cf_lint *l, const struct ift_segments *segs, uint64_t off)
{
    unsigned kept = segs->count < SEGMENTS_KEPT ? segs->count : SEGMENTS_KEPT;
    for (unsigned i = 1; i <= kept; i++) {
        unsigned slot = (segs->count - i) % SEGMENTS_KEPT;
        if (segs->start[slot] <= off)
            return segs->frame[slot];
    }
    return cf_lint_frame(l);
}

static bool on_pdu(void *ctx, const uint8_t *raw, size_t len, uint64_t stream_off, bool is_indication)
{
    struct read_call *call = ctx;
    struct cf_lint *l = call->l;
    uint64_t now = cf_lint_frame(l);
    cf_lint_set_frame(l, frame_of(l, &call->ic->segments[call->dir], stream_off + len - 1));
    bool go_on = pdu(l, call->ic, call->dir, raw, len, is_indication, call->ic->base[call->dir] + stream_off + len);
    cf_lint_set_frame(l, now);
    return go_on;
}

/* Side dir stops being checked when its reader stopped: say why. */
static void read_status(struct cf_lint *l, struct cf_lint_flow *f, int dir, enum vw_ift_read_status st)
{
    struct ift_conn *ic = f->state;
    uint64_t frame = cf_lint_frame(l);
    switch (st) {
    case VW_IFT_READ_OK:
        return;
    case VW_IFT_READ_NOT_INDICATION:
        /* I35: one ID with the plugin: a bad magic where the indication is
         * due, or a frame before it */
        if (ic->reader[dir].not_indication_rule == VW_REQ_IFT_4_1_MAGIC)
            cf_lint_issue(l, frame, dir, VW_REQ_IFT_4_1_MAGIC, VW_SEV_ERROR,
                          "the first bytes of this direction are an adaption indication with a bad magic (not "
                          "0x52444450): the rest of this direction is not checked");
        else
            cf_lint_issue(l, frame, dir, VW_REQ_IFT_4_INDICATION_FIRST, VW_SEV_ERROR,
                          "the first bytes of this direction are a frame, not its adaption indication (no magic "
                          "0x52444450): the rest of this direction is not checked");
        break;
    case VW_IFT_READ_STOPPED:
        cf_lint_issue(l, frame, dir, VW_REQ_NONE, VW_SEV_NOTE,
                      "IFT framing lost: the rest of this direction is not checked");
        break;
    case VW_IFT_READ_TOO_LARGE:
        cf_lint_issue(l, frame, dir, VW_REQ_NONE, VW_SEV_NOTE,
                      "IFT PDU longer than any frame can be: the rest of this direction is not checked");
        break;
    case VW_IFT_READ_FRAMING_LOST:
        cf_lint_issue(l, frame, dir, VW_REQ_IFT_5_1_FRAME_LEN, VW_SEV_ERROR,
                      "bytes at stream offset %llu cannot start a frame (header_size %u, VTag 0x%04x): the sizes "
                      "of the frame before them do not fit; IFT framing lost, the rest of this direction is not "
                      "checked", (unsigned long long)ic->reader[dir].lost_off, ic->reader[dir].lost_hs,
                      ic->reader[dir].lost_vtag);
        break;
    case VW_IFT_READ_NO_MEMORY:
        cf_lint_out_of_memory(l);
        break;
    }
    f->dead[dir] = true;
}

static void data(struct cf_lint *l, struct cf_lint_flow *f, int dir, const struct vn_tcp_event *ev)
{
    struct ift_conn *ic = f->state;
    if (!ic->started[dir]) {
        if (f->upgraded && !vw_ift_plausible_indication(ev->data, ev->len))
            return; /* the ULP's bytes before this side's indication */
        ic->started[dir] = true;
        ic->base[dir] = ev->offset;
    }
    struct vw_ift_reader *r = &ic->reader[dir];
    struct ift_segments *segs = &ic->segments[dir];
    if (ev->len == 0)
        return;
    segs->start[segs->count % SEGMENTS_KEPT] = r->stream_off + r->have;
    segs->frame[segs->count % SEGMENTS_KEPT] = cf_lint_frame(l);
    segs->count++;
    struct read_call call = {l, ic, dir};
    read_status(l, f, dir, vw_ift_reader_feed(r, ev->data, ev->len, on_pdu, &call));
}

/* V29: the receiver's reaction counts from its ACK. */
static void ack(struct cf_lint_flow *f, int dir, uint64_t acked)
{
    struct ift_conn *ic = f->state;
    vw_ift_nego_ack(&ic->nego, dir, acked);
}

/* A direction's FIN (I22): frames only its end settles, then what it left. */
static void direction_end(struct cf_lint *l, struct cf_lint_flow *f, int dir, struct vw_findings *fs)
{
    struct ift_conn *ic = f->state;
    if (f->dead[dir] || (f->upgraded && !ic->started[dir]))
        return;
    struct read_call call = {l, ic, dir};
    read_status(l, f, dir, vw_ift_reader_finish(&ic->reader[dir], on_pdu, &call));
    if (f->dead[dir])
        return;
    vw_ift_direction_end(ic->reader[dir].have, fs);
    f->dead[dir] = true; /* judged: the close adds nothing for it */
}

/* The connection closed (or the capture ended): frames only its end
 * settles, then what is left. */
static void closed(struct cf_lint *l, struct cf_lint_flow *f, bool real_end, struct vw_findings *fs)
{
    (void)real_end;
    (void)fs;
    struct ift_conn *ic = f->state;
    for (int d = 0; d < 2; d++) {
        if (f->dead[d])
            continue;
        cf_lint_set_dir(l, d);
        struct read_call call = {l, ic, d};
        read_status(l, f, d, vw_ift_reader_finish(&ic->reader[d], on_pdu, &call));
        if (!f->dead[d] && ic->reader[d].have)
            cf_lint_issue(l, cf_lint_frame(l), d, VW_REQ_NONE, VW_SEV_NOTE,
                          "%zu bytes of an unfinished IFT PDU at the end of the connection", ic->reader[d].have);
    }
}

const struct cf_lint_module cf_lint_ift = {
    .protocol = &cf_proto_ift,
    .title = "IFT",
    .port_option = "--ift-port",
    .help = "  IFT: TCP port --ift-port (5996), else an adaption indication (also one that upgrades a\n"
            "  connection mid-stream).\n",
    .counters = {{"ift_connections", "IFT connections"}, {"ift_pdus", "PDUs"}},
    .looks_like = vw_ift_plausible_indication,
    .takes_over = true,
    .from_start = true,
    .heavy = true,
    .conn_size = sizeof(struct ift_conn),
    .conn_open = conn_open,
    .conn_free = conn_free,
    .data = data,
    .ack = ack,
    .direction_end = direction_end,
    .closed = closed,
};
