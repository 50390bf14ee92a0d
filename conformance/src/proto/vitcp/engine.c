/* The active engine (see conform/engine.h). */
#include "conform/engine.h"
#include "conform/core.h"
#include "conform/proto/vitcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "conform/lint.h"
#include "conform/relay.h"
#include "vitcp/bytes.h"
#include "vitcp/pcap_writer.h"
#include "vitcp/tcp_flow.h"
#include "vitcp/vitcp_stream.h"

/* Session directions: the side that sends the first segment (the
 * ConnectRequest) is 0: the tester in active cases, the implementation in
 * passive ones. */
#define TESTER_DIR (r->tdir)
#define TARGET_DIR (1 - r->tdir)
/* Capture directions: the TCP client is the tester in active cases. */
#define CAP_TX (r->c->passive ? VN_S2C : VN_C2S)
#define CAP_RX (r->c->passive ? VN_C2S : VN_S2C)
#define ANNOUNCE_LEN 16 /* vipl-peer: address (8), handle (4), length (4) */
#define QUEUE_MAX 256
#define ECHO_MAX (256u * 1024u)
#define DEFAULT_RX_POSTED 1024 /* what the tester advertises (V17) */

/* A segment received from the target, kept until an expect consumes it. */
struct rx_seg {
    uint8_t *raw;
    size_t len;
    struct vw_vitcp_seg seg; /* pointers rebased into raw */
    unsigned frame;
    unsigned index;          /* its number among the target's segments (PDU #) */
    bool gathered;           /* a message gathered from its segments: raw is its payload */
};

/* A message of the target still arriving segment by segment (reassembled
 * unless the case compares segments, case.h). */
#define PARTIAL_MAX 4
#define MESSAGE_MAX (1u << 20)
#define PARTIAL_QUIET_MS 300 /* no next segment for this long: the message is compared as it is */
struct partial {
    bool used;
    struct vw_vitcp_seg first; /* its first segment's fields (payload not kept) */
    uint8_t *data;
    size_t len, cap;
    unsigned index;
    uint8_t flags;             /* TXERR of any segment */
};

struct run {
    struct cf_engine *e;
    const struct cf_case *c;
    struct cf_result *res;
    int fd;
    bool closed;        /* the target closed (FIN or RST) */
    bool reset;
    bool failed;        /* verdict decided */
    struct timespec deadline;
    struct vw_vitcp_session session;
    struct rx_seg queue[QUEUE_MAX];
    unsigned qhead, qcount;
    struct partial partial[PARTIAL_MAX];
    unsigned rx_index;  /* segments received so far (PDU index in messages) */
    /* relative numbering */
    bool tester_init_known, target_init_known;
    uint32_t tester_init, target_init;
    uint32_t tester_last_msg;
    /* capture */
    bool flow_on;
    struct vn_tcp_flow flow;
    /* the tester's last Send payload, for data=echo */
    uint8_t *echo;
    size_t echo_len;
    const struct cf_step *step; /* step being run (for failure lines) */
    bool liveness_only; /* survival probe: only "does it still accept" counts */
    pid_t child;        /* role passive: the --connect-cmd process */
    int tdir;           /* session direction of the tester's segments */
    struct rx_seg last; /* the segment the last expect/await matched (for 'check') */
    bool have_last;
    /* the target's RDMA region ($addr $handle $len) and CE values ($window $rx) */
    bool region_known, announce_done, target_ce_known;
    uint64_t region_addr;
    uint32_t region_handle, region_len;
    uint16_t target_window, target_rx;
    long tester_first_send_len; /* -1 until the tester sent a Send (announcement detection) */
    uint16_t tester_consumed;   /* the tester's descriptor-consuming messages (V17) */
    /* the tester's last RdmaWrite, for data=written */
    uint8_t *written;
    size_t written_len;
    uint64_t rx_bytes;  /* bytes received from the target */
    unsigned unframed_first_frame; /* capture frame where bytes no segment took began (0: none) */
    /* a 'relay' case: the relay records real packets instead of the flow */
    bool via_relay;
    unsigned relay_base; /* frames in the run's capture before the case */
};


/* ------------------------------------------------------------ verdicts */

static void decide(struct run *r, enum cf_verdict v, enum vw_req req, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void decide(struct run *r, enum cf_verdict v, enum vw_req req, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = true;
    r->res->verdict = v;
    r->res->failed_req = req;
    char msg[CF_MESSAGE_MAX - 300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->step && r->step->cap_pdu)
        snprintf(r->res->message, sizeof r->res->message, "%s: capture PDU %u (frame %u): %s", r->c->file,
                 r->step->cap_pdu, r->step->line, msg);
    else if (r->step && r->c->from_capture)
        snprintf(r->res->message, sizeof r->res->message, "%s: %s", r->c->file, msg);
    else if (r->step)
        snprintf(r->res->message, sizeof r->res->message, "%s:%u: %s", r->c->file, r->step->line, msg);
    else
        snprintf(r->res->message, sizeof r->res->message, "%s: %s", r->c->file, msg);
}

/* The target's allowed choice makes the case inapplicable. */
static void not_applicable(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void not_applicable(struct run *r, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = true;
    r->res->verdict = CF_NOT_APPLICABLE;
    r->res->failed_req = VW_REQ_NONE;
    char msg[CF_MESSAGE_MAX - 300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->res->message, sizeof r->res->message, "%s:%u: %s", r->c->file, r->step ? r->step->line : 0, msg);
}

static unsigned last_frame(const struct run *r)
{
    if (r->via_relay)
        return r->e->capture ? r->relay_base + (unsigned)cf_relay_count(r->e->relay) : 0;
    return r->e->capture ? (unsigned)vn_pcap_frames(r->e->capture) : 0;
}

/* ------------------------------------------------------------ network */

/* Start the recorded TCP flow for a new connection. */
static void capture_open(struct run *r)
{
    r->flow_on = cf_capture_flow_open(r->e, r->fd, r->c->passive, &r->flow);
}

static void capture_data(struct run *r, enum vn_dir dir, const uint8_t *data, size_t len)
{
    if (r->flow_on && len)
        vn_tcp_send_segment(&r->flow, dir, data, len);
}

/* ------------------------------------------------------------ receive path */

/* Keep a segment (or a reassembled message: raw is then its payload) for
 * the expects. */
static void enqueue(struct run *r, const uint8_t *raw, size_t len, const struct vw_vitcp_seg *seg, unsigned frame,
                    unsigned index, bool gathered)
{
    if (r->qcount == QUEUE_MAX)
        return; /* a flooding target: further segments are checked, not kept */
    struct rx_seg *q = &r->queue[(r->qhead + r->qcount) % QUEUE_MAX];
    q->raw = malloc(len ? len : 1);
    if (!q->raw)
        return;
    memcpy(q->raw, raw, len);
    q->len = len;
    q->seg = *seg;
    if (gathered) {
        q->seg.payload = q->raw;
        q->seg.payload_len = len;
    } else {
        if (seg->payload)
            q->seg.payload = q->raw + (seg->payload - raw);
        if (seg->ce.options)
            q->seg.ce.options = q->raw + (seg->ce.options - raw);
    }
    q->frame = frame;
    q->index = index;
    q->gathered = gathered;
    r->qcount++;
}

static bool is_data_message(unsigned type)
{
    return type == VW_VITCP_SEND || type == VW_VITCP_RDMA_WRITE || type == VW_VITCP_RDMA_READ_RESP;
}

/* Received messages are compared as messages, however the target divided
 * them (3.2 "may be divided into multiple VI segments"): the segments of a
 * Send, RdmaWrite or RdmaReadResponse are gathered until EOM and queued as
 * one (its first segment's header, EOM, every payload byte; the session has
 * checked each segment's offsets, IDV and CRC already). True when the
 * segment was taken (the message is not complete, or it was queued whole). */
/* Queue a gathered message as it is (without EOM, when it never ended):
 * the expect that meets it names the rule (EOM-LAST). */
static void flush_partial(struct run *r, struct partial *p, unsigned frame)
{
    struct vw_vitcp_seg whole = p->first;
    whole.hdr.flags |= p->flags;
    enqueue(r, p->data ? p->data : (const uint8_t *)"", p->len, &whole, frame, p->index, true);
    free(p->data);
    p->data = NULL;
    p->used = false;
}

static bool partials_pending(const struct run *r)
{
    for (unsigned i = 0; i < PARTIAL_MAX; i++)
        if (r->partial[i].used)
            return true;
    return false;
}

/* Flush every message still gathering (an expect found nothing else). */
static bool flush_partials(struct run *r)
{
    bool any = false;
    for (unsigned i = 0; i < PARTIAL_MAX; i++)
        if (r->partial[i].used) {
            flush_partial(r, &r->partial[i], last_frame(r));
            any = true;
        }
    return any;
}

static bool reassemble(struct run *r, const struct vw_vitcp_seg *seg, unsigned frame, unsigned index)
{
    if (!is_data_message(seg->hdr.type))
        return false;
    /* A new message of the same type ends the one before it, EOM or not. */
    for (unsigned i = 0; i < PARTIAL_MAX; i++)
        if (r->partial[i].used && r->partial[i].first.hdr.type == seg->hdr.type &&
            r->partial[i].first.hdr.msg_num != seg->hdr.msg_num)
            flush_partial(r, &r->partial[i], frame);
    struct partial *p = NULL, *free_slot = NULL;
    for (unsigned i = 0; i < PARTIAL_MAX; i++) {
        struct partial *c = &r->partial[i];
        if (c->used && c->first.hdr.type == seg->hdr.type && c->first.hdr.msg_num == seg->hdr.msg_num)
            p = c;
        else if (!c->used && !free_slot)
            free_slot = c;
    }
    bool eom = (seg->hdr.flags & VW_VITCP_FLAG_EOM) != 0;
    if (!p && (eom || !free_slot || seg->hdr.data_offset != 0))
        return false; /* one segment, or nothing to gather into: as it is */
    if (!p) {
        p = free_slot;
        memset(p, 0, sizeof *p);
        p->used = true;
        p->first = *seg;
        p->first.payload = NULL;
        p->first.ce.options = NULL;
        p->index = index;
    }
    if (p->len + seg->payload_len > MESSAGE_MAX) {
        free(p->data);
        p->data = NULL;
        p->used = false; /* an endless message: its segments are checked, not kept */
        return true;
    }
    if (p->len + seg->payload_len > p->cap) {
        size_t cap = p->cap ? p->cap : 4096;
        while (cap < p->len + seg->payload_len)
            cap *= 2;
        uint8_t *grown = realloc(p->data, cap);
        if (!grown)
            return true;
        p->data = grown;
        p->cap = cap;
    }
    if (seg->payload_len)
        memcpy(p->data + p->len, seg->payload, seg->payload_len);
    p->len += seg->payload_len;
    p->flags |= seg->hdr.flags & VW_VITCP_FLAG_TXERR;
    if (!eom)
        return true;
    p->flags |= VW_VITCP_FLAG_EOM;
    flush_partial(r, p, frame);
    return true;
}

static void on_target_segment(void *ctx, const uint8_t *raw, size_t len, uint64_t off,
                              const struct vw_vitcp_seg *seg, enum vw_req err,
                              const struct vw_findings *fs)
{
    (void)off;
    struct run *r = ctx;
    unsigned index = ++r->rx_index;
    unsigned frame = last_frame(r);
    /* Every rule the target breaks fails the case, whatever step runs. */
    if (err != VW_REQ_NONE) {
        if (r->liveness_only)
            return;
        cf_result_add_frame(r->res, frame);
        r->res->rule_broken |= !r->failed; /* the target's bytes broke it, as the generic runner says */
        decide(r, CF_FAIL, err, "target segment #%u (%s) cannot be parsed: %s", index,
               vw_vitcp_type_name(len >= 2 ? raw[1] & VW_VITCP_TYPE_MASK : 99), vw_req_id(err));
        return;
    }
    for (unsigned i = 0; i < fs->count && !r->liveness_only; i++) {
        const struct vw_finding *f = &fs->item[i];
        if (f->severity == VW_SEV_ERROR) {
            cf_result_add_frame(r->res, frame);
            r->res->rule_broken |= !r->failed;
            decide(r, CF_FAIL, f->req, "target segment #%u (%s): %s [%s]", index,
                   vw_vitcp_type_name(seg->hdr.type), f->detail, vw_req_id(f->req));
        } else if (f->severity == VW_SEV_WARN) {
            size_t have = strlen(r->res->message);
            if (have + 8 < sizeof r->res->message && !r->failed)
                snprintf(r->res->message + have, sizeof r->res->message - have,
                         "%sadvisory %s: %s", have ? "; " : "", vw_req_id(f->req), f->detail);
        }
    }
    if ((seg->hdr.type == VW_VITCP_CONNECT_ACCEPT || seg->hdr.type == VW_VITCP_CONNECT_REQUEST) &&
        !r->target_init_known) {
        r->target_init_known = true;
        r->target_init = seg->hdr.msg_num;
    }
    if (seg->has_ce && !r->target_ce_known) {
        r->target_ce_known = true;
        r->target_window = seg->ce.rdma_read_window;
        r->target_rx = seg->hdr.rx_desc_posted;
    }
    /* The vipl-peer convention (C8): the target's first Send, unsolicited
     * and 16 bytes long, announces its RDMA region; it is not an answer. */
    if (seg->hdr.type == VW_VITCP_SEND && !r->announce_done) {
        r->announce_done = true;
        bool echo = r->tester_first_send_len == ANNOUNCE_LEN && r->echo && seg->payload &&
                    memcmp(seg->payload, r->echo, ANNOUNCE_LEN) == 0;
        if (cf_vitcp_settings(r->e)->announce && !echo && seg->payload_len == ANNOUNCE_LEN &&
            seg->hdr.data_offset == 0 && (seg->hdr.flags & VW_VITCP_FLAG_EOM)) {
            r->region_known = true;
            r->region_addr = vw_get_be64(seg->payload);
            r->region_handle = vw_get_be32(seg->payload + 8);
            r->region_len = vw_get_be32(seg->payload + 12);
            r->target_init++; /* msg=+N counts the messages after it */
            return;
        }
    }
    if (!(r->c->flags & CF_VITCP_CASE_SEGMENTS) && reassemble(r, seg, frame, index))
        return;
    enqueue(r, raw, len, seg, frame, index, false);
}

/* Wait up to ms for bytes; feed them to the session. 1: data, 0: timeout,
 * -1: the target closed. */
static int pump(struct run *r, int ms)
{
    if (r->closed)
        return -1;
    struct pollfd p = {r->fd, POLLIN, 0};
    int n = poll(&p, 1, ms);
    if (n <= 0)
        return 0;
    uint8_t buf[32768];
    /* Urgent data (3.7): with SO_OOBINLINE the urgent byte stays in the
     * stream and recv stops at the mark. */
    if (sockatmark(r->fd) == 1 && !r->liveness_only) {
        const struct vw_vitcp_dir *mine = &r->session.conn.dir[TESTER_DIR];
        if (!mine->ce_urgent_opt) {
            cf_result_add_frame(r->res, last_frame(r));
            r->res->rule_broken |= !r->failed;
            decide(r, CF_FAIL, VW_REQ_VITCP_3_7_URGENT_ONLY_IF_OFFERED,
                   "the target designated urgent data (stream byte %llu) although the tester never "
                   "sent the Urgent Marker option", (unsigned long long)r->rx_bytes);
        }
    }
    ssize_t got = recv(r->fd, buf, sizeof buf, 0);
    if (got > 0) {
        r->rx_bytes += (uint64_t)got;
        capture_data(r, CAP_RX, buf, (size_t)got);
        vw_vitcp_session_feed(&r->session, TARGET_DIR, buf, (size_t)got, on_target_segment, r);
        if (r->session.framer[TARGET_DIR].have == 0)
            r->unframed_first_frame = 0;
        else if (r->unframed_first_frame == 0)
            r->unframed_first_frame = last_frame(r);
        return 1;
    }
    if (got < 0 && (errno == EAGAIN || errno == EINTR))
        return 0;
    r->closed = true;
    r->reset = got < 0;
    if (r->flow_on) {
        if (r->reset)
            vn_tcp_rst(&r->flow, CAP_RX);
        else
            vn_tcp_fin(&r->flow, CAP_RX);
    }
    return -1;
}

/* Bytes the target sent that no whole segment took: what they are and why
 * they could not be framed, with their frames in the result (a target that
 * answers garbage must not read as one that answered nothing). false when
 * there are none. */
static bool describe_unframed(struct run *r, char *out, size_t n)
{
    const struct vw_vitcp_framer *f = &r->session.framer[TARGET_DIR];
    if (f->have == 0 || !f->buf)
        return false;
    const uint8_t *b = f->buf;
    char head[3 * 8 + 1] = "";
    for (size_t i = 0; i < f->have && i < 8; i++)
        snprintf(head + 3 * i, sizeof head - 3 * i, "%02x ", b[i]);
    unsigned seg_len = vw_vitcp_peek_seg_len(b, f->have);
    bool plausible = f->have < VW_VITCP_SEG_HDR_LEN || vw_vitcp_plausible_header(b, f->have);
    snprintf(out, n, "%llu bytes arrived but no whole VI/TCP segment: the last %zu (starting %s) %s%s",
             (unsigned long long)r->rx_bytes, f->have, head,
             f->have < 4 ? "are too few for a Segment Length"
                         : plausible ? "wait for the rest of the Segment Length they announce, "
                                     : "are no plausible VI/TCP header (version, type, reserved bits), "
                                       "so they cannot be framed; they announce ",
             "");
    size_t used = strlen(out);
    if (f->have >= 4 && used < n)
        snprintf(out + used, n - used, "a Segment Length of %u", seg_len);
    if (r->unframed_first_frame)
        cf_result_add_frame(r->res, r->unframed_first_frame);
    unsigned last = last_frame(r);
    if (last && last != r->unframed_first_frame)
        cf_result_add_frame(r->res, last);
    return true;
}

/* Remove queue entry k (0: the head), keeping it as the last matched
 * segment for 'check' steps. */
static void take(struct run *r, unsigned k)
{
    free(r->last.raw);
    r->last = r->queue[(r->qhead + k) % QUEUE_MAX];
    r->have_last = true;
    for (unsigned j = k; j + 1 < r->qcount; j++)
        r->queue[(r->qhead + j) % QUEUE_MAX] = r->queue[(r->qhead + j + 1) % QUEUE_MAX];
    r->queue[(r->qhead + r->qcount - 1) % QUEUE_MAX].raw = NULL;
    r->qcount--;
}

static void drop_head(struct run *r)
{
    free(r->queue[r->qhead].raw);
    r->queue[r->qhead].raw = NULL;
    r->qhead = (r->qhead + 1) % QUEUE_MAX;
    r->qcount--;
}

/* ------------------------------------------------------------ send path */

static uint32_t pattern_byte(size_t i, unsigned fill)
{
    return (uint32_t)((i * 7u + 3u + fill * 101u) & 0xFFu);
}

/* Wait (pumping) until the target's region is known: 0, or -1 when it is
 * not (the case is then not applicable). */
static int need_region(struct run *r)
{
    if (r->region_known)
        return 0;
    if (cf_vitcp_settings(r->e)->announce && r->fd >= 0) {
        struct timespec until = cf_after_ms(r->e->slack_ms);
        while (!r->region_known && !r->announce_done && !r->failed && cf_ms_until(until) > 0)
            if (pump(r, cf_ms_until(until)) < 0)
                break;
    }
    if (r->region_known)
        return 0;
    if (r->e->region_set) {
        r->region_known = true;
        r->region_addr = r->e->region_addr;
        r->region_handle = r->e->region_handle;
        r->region_len = r->e->region_len;
        return 0;
    }
    if (!r->failed) {
        r->failed = true;
        r->res->verdict = CF_NOT_APPLICABLE;
        r->res->failed_req = VW_REQ_NONE;
        snprintf(r->res->message, sizeof r->res->message,
                 "%s:%u: the target announced no RDMA region (vipl-peer convention) and no --region was given",
                 r->c->file, r->step ? r->step->line : 0);
    }
    return -1;
}

static int run_case_raw(struct cf_engine *e, const struct cf_case *c, struct cf_result *res, bool liveness_only);

/* Does the target accept a ConnectRequest at level (RD, RR, U)? A question
 * outside the evidence: no capture, no verdict. 0 yes, -1 no (why: the
 * probe's result, "got ConnectReject" for a refused level). Asked for
 * $level and by the survival probe. */
static int accepts_level(struct cf_engine *e, const char *level, char *why, size_t whylen)
{
    char script[256];
    snprintf(script, sizeof script,
             "case survival\nrequire VITCP-4.3-ACCEPT-ON-MATCH\nconnect\n"
             "send ConnectRequest attrs=%s|RWE|RRE mtu=65536 window=4\nexpect ConnectAccept\n", level);
    struct cf_case c;
    if (cf_case_parse(script, "survival", &c, why, whylen) < 0)
        return -1;
    struct cf_result res;
    cf_result_init(&res, &c);
    struct vn_pcap_writer *saved = e->capture;
    e->capture = NULL;
    int rc = run_case_raw(e, &c, &res, true);
    e->capture = saved;
    if (rc < 0)
        snprintf(why, whylen, "%s", res.message);
    return rc;
}

/* The level found for the current target (0: not asked yet; another
 * target is asked again). */
static uint16_t known_level(struct cf_engine *e)
{
    const struct cf_vitcp_settings *s = cf_vitcp_settings(e);
    char target[sizeof s->level_target];
    snprintf(target, sizeof target, "%s:%s", e->host, e->port);
    return strcmp(s->level_target, target) == 0 ? s->level_bits : 0;
}

/* $level: the first of RD, RR, U the target accepts (RD when none is:
 * the cases then fail on their own requests). */
static uint16_t target_level(struct cf_engine *e)
{
    uint16_t known = known_level(e);
    if (known)
        return known;
    static const struct { const char *name; uint16_t bits; } levels[] = {
        {"RD", VW_VITCP_ATTR_RELIABLE_DELIVERY}, {"RR", VW_VITCP_ATTR_RELIABLE_RECEPTION},
        {"U", VW_VITCP_ATTR_UNRELIABLE}};
    struct cf_vitcp_settings *s = cf_vitcp_settings(e);
    snprintf(s->level_target, sizeof s->level_target, "%s:%s", e->host, e->port);
    s->level_bits = VW_VITCP_ATTR_RELIABLE_DELIVERY;
    char why[CF_MESSAGE_MAX];
    for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
        if (accepts_level(e, levels[i].name, why, sizeof why) == 0) {
            s->level_bits = levels[i].bits;
            break;
        }
    return s->level_bits;
}

/* Value of a run-time variable: 0, or -1 (verdict decided). */
static int var_value(struct run *r, unsigned var, int64_t *out)
{
    switch (var) {
    case CF_VAR_NONE: *out = 0; return 0;
    case CF_VAR_ADDR: case CF_VAR_HANDLE: case CF_VAR_LEN:
        if (need_region(r) < 0)
            return -1;
        *out = var == CF_VAR_ADDR ? (int64_t)r->region_addr
               : var == CF_VAR_HANDLE ? (int64_t)r->region_handle : (int64_t)r->region_len;
        return 0;
    case CF_VAR_LEVEL:
        *out = target_level(r->e);
        return 0;
    case CF_VAR_WINDOW: case CF_VAR_RX:
        if (!r->target_ce_known) {
            decide(r, CF_FAIL, r->step ? r->step->req : r->c->reqs[0],
                   "case error: $window/$rx before the target's CE segment");
            return -1;
        }
        *out = var == CF_VAR_WINDOW ? r->target_window : r->target_rx;
        return 0;
    }
    return -1;
}

/* The value a send writes for field f: 0, or -1 (verdict decided). */
static int send_value(struct run *r, const struct cf_step *st, enum cf_field f, int64_t *out)
{
    int64_t base = 0;
    if (st->var[f] != CF_VAR_NONE && var_value(r, st->var[f], &base) < 0)
        return -1;
    *out = base + st->val[f];
    return 0;
}

/* Remember a message the tester sends, for data=echo and data=written. */
static void keep_sent(struct run *r, unsigned type, uint32_t offset, const uint8_t *payload, size_t plen)
{
    if (type != VW_VITCP_SEND && type != VW_VITCP_RDMA_WRITE)
        return;
    if (type == VW_VITCP_SEND && r->tester_first_send_len < 0)
        r->tester_first_send_len = (long)plen;
    uint8_t *keep = type == VW_VITCP_SEND ? r->echo : r->written;
    size_t *keep_len = type == VW_VITCP_SEND ? &r->echo_len : &r->written_len;
    if (offset == 0)
        *keep_len = 0;
    if (keep && offset == *keep_len && *keep_len + plen <= ECHO_MAX) {
        if (plen)
            memcpy(keep + *keep_len, payload, plen);
        *keep_len += plen;
    }
}

/* Role passive: a replayed ConnectAccept answers the live request as the
 * captured one answered the captured request (st->replay_answer, capcase.c). */
static void answer_live_request(const struct run *r, const struct cf_step *st, struct vw_vitcp_enc *enc,
                                uint8_t *opts, size_t opts_cap)
{
    const struct vw_vitcp_ce *req = &r->session.conn.request_ce;
    if (!r->c->passive || !r->target_ce_known || enc->hdr.type != VW_VITCP_CONNECT_ACCEPT)
        return;
    if (st->replay_answer & CF_ANSWER_DISC) {
        memcpy(enc->ce.calling_disc, req->calling_disc, VW_VITCP_DISC_MAX);
        memcpy(enc->ce.called_disc, req->called_disc, VW_VITCP_DISC_MAX);
        enc->ce.calling_disc_len = req->calling_disc_len > VW_VITCP_DISC_MAX ? VW_VITCP_DISC_MAX : req->calling_disc_len;
        enc->ce.called_disc_len = req->called_disc_len > VW_VITCP_DISC_MAX ? VW_VITCP_DISC_MAX : req->called_disc_len;
        enc->keep_seg_len = false;
    }
    if (st->replay_answer & CF_ANSWER_LEVEL)
        enc->ce.attrs = (uint16_t)((enc->ce.attrs & ~VW_VITCP_ATTR_RELIABILITY_MASK) |
                                   (req->attrs & VW_VITCP_ATTR_RELIABILITY_MASK));
    if ((st->replay_answer & CF_ANSWER_MTU) && req->mtu < enc->ce.mtu)
        enc->ce.mtu = req->mtu;
    if ((st->replay_answer & CF_ANSWER_CRC) && enc->ce.opt_crc && !req->opt_crc) {
        /* the live request declined the CRC option (3.6 MAY): so does the accept, and its trailer goes */
        enc->ce.opt_crc = false;
        enc->ce.options_len = vw_vitcp_opts_build(opts, opts_cap, false, enc->ce.opt_urgent, false);
        enc->ce.options = enc->ce.options_len ? opts : NULL;
        if (enc->trailer == VW_VITCP_TRAILER_CRC)
            enc->trailer = VW_VITCP_TRAILER_NONE;
        enc->keep_seg_len = false;
    }
}

/*
 * A capture case's PDU of the tester's side, re-encoded by the wire library
 * with the capture's fields, payload and options. Its own message numbers
 * stay as captured (the tester chooses them); numbers that refer to the
 * target's messages (Message ACK, an RdmaReadResponse's number) are mapped
 * from the capture's initial number of the other side to the live one. A
 * trailer that was right stays right after the mapping, a wrong one stays
 * wrong.
 */
static uint8_t *build_replay(struct run *r, const struct cf_step *st, size_t *out_len)
{
    const struct cf_case *c = r->c;
    if (st->pdu_off > c->blob_len || st->pdu_len > c->blob_len - st->pdu_off) {
        decide(r, CF_FAIL, st->req, "case error: capture PDU %u is outside the capture", st->cap_pdu);
        return NULL;
    }
    const uint8_t *raw = c->blob + st->pdu_off;
    struct vw_vitcp_seg seg;
    enum vw_req e = vw_vitcp_decode(raw, st->pdu_len, st->replay_crc ? VW_VITCP_CRC_ON : VW_VITCP_CRC_OFF, &seg, NULL);
    if (e != VW_REQ_NONE) {
        decide(r, CF_FAIL, st->req, "case error: capture PDU %u cannot be decoded (%s)", st->cap_pdu, vw_req_id(e));
        return NULL;
    }
    struct vw_vitcp_enc enc;
    vw_vitcp_enc_init(&enc, seg.hdr.type, seg.has_crc);
    enc.hdr = seg.hdr;
    enc.with_rdma = seg.has_rdma;
    enc.rdma = seg.rdma;
    enc.with_ce = seg.has_ce;
    enc.ce = seg.ce;
    enc.payload = seg.payload;
    enc.payload_len = seg.payload_len;
    enc.trailer = !seg.has_crc ? VW_VITCP_TRAILER_NONE : seg.crc_ok ? VW_VITCP_TRAILER_CRC : VW_VITCP_TRAILER_BAD_CRC;
    /* a Segment Length that does not describe the segment is kept as captured */
    size_t natural = vw_vitcp_encoded_len(&enc);
    if (natural != seg.hdr.seg_len)
        enc.keep_seg_len = true;
    unsigned t = seg.hdr.type;
    bool is_init = t == VW_VITCP_CONNECT_REQUEST || t == VW_VITCP_CONNECT_ACCEPT;
    if ((c->flags & CF_VITCP_CASE_RUN_DISC) && t == VW_VITCP_CONNECT_REQUEST) {
        size_t dl = strlen(cf_vitcp_settings(r->e)->discriminator);
        if (dl > VW_VITCP_DISC_MAX)
            dl = VW_VITCP_DISC_MAX;
        memset(enc.ce.called_disc, 0, sizeof enc.ce.called_disc);
        memcpy(enc.ce.called_disc, cf_vitcp_settings(r->e)->discriminator, dl);
        enc.ce.called_disc_len = (uint16_t)dl;
        enc.keep_seg_len = false; /* the segment's length is the encoder's */
    }
    if (!c->passive && t == VW_VITCP_CONNECT_REQUEST && known_level(r->e))
        enc.ce.attrs = (uint16_t)((enc.ce.attrs & ~VW_VITCP_ATTR_RELIABILITY_MASK) | known_level(r->e));
    uint8_t opts[16];
    if (st->replay_answer)
        answer_live_request(r, st, &enc, opts, sizeof opts);
    /* A data segment's good trailer follows the live negotiation: the
     * target may have declined the CRC option the capture's peer took. */
    const struct vw_vitcp_conn *conn = &r->session.conn;
    if (!seg.has_ce && t != VW_VITCP_CONNECT_REJECT && t != VW_VITCP_CONNECT_NOMATCH && conn->crc_known &&
        !conn->crc_negotiated && enc.trailer == VW_VITCP_TRAILER_CRC) {
        enc.trailer = VW_VITCP_TRAILER_NONE;
        enc.keep_seg_len = false;
    }
    if (c->cap_target_init_known && r->target_init_known && t != VW_VITCP_CONNECT_REQUEST) {
        enc.hdr.msg_ack = seg.hdr.msg_ack - c->cap_target_init + r->target_init;
        if (t == VW_VITCP_RDMA_READ_RESP)
            enc.hdr.msg_num = seg.hdr.msg_num - c->cap_target_init + r->target_init;
    }
    if (is_init) {
        r->tester_init_known = true;
        r->tester_init = seg.hdr.msg_num;
        r->tester_last_msg = seg.hdr.msg_num;
    } else if (t != VW_VITCP_NOP && t != VW_VITCP_RDMA_READ_RESP && t != VW_VITCP_CONNECT_REJECT &&
               t != VW_VITCP_CONNECT_NOMATCH) {
        r->tester_last_msg = seg.hdr.msg_num;
    }
    keep_sent(r, t, seg.hdr.data_offset, seg.payload, seg.payload_len);
    size_t cap = (enc.keep_seg_len ? natural : vw_vitcp_encoded_len(&enc)) + 8;
    uint8_t *buf = malloc(cap);
    size_t n = buf ? vw_vitcp_encode(&enc, buf, cap) : 0;
    if (!n) {
        free(buf);
        decide(r, CF_FAIL, st->req, "case error: capture PDU %u cannot be re-encoded", st->cap_pdu);
        return NULL;
    }
    *out_len = n;
    return buf;
}

/* Encode one segment of a send step into a fresh buffer; *n its length.
 * NULL with the verdict decided on a case error. */
static uint8_t *build_segment(struct run *r, const struct cf_step *st, size_t *out_len)
{
    if (st->cap_pdu)
        return build_replay(r, st, out_len);
    struct vw_vitcp_enc enc;
    const struct vw_vitcp_conn *conn = &r->session.conn;
    bool crc_on = conn->crc_known && conn->crc_negotiated;
    vw_vitcp_enc_init(&enc, st->type, crc_on);
    bool is_ce = vw_vitcp_type_has_ce(st->type);
    bool is_init = st->type == VW_VITCP_CONNECT_REQUEST || st->type == VW_VITCP_CONNECT_ACCEPT;
    int64_t v;

    /* Message numbers: explicit, relative, or the next one in sequence. */
    uint32_t msg;
    if (st->set[CF_F_MSG]) {
        if (send_value(r, st, CF_F_MSG, &v) < 0)
            return NULL;
        msg = (uint32_t)v + (st->rel[CF_F_MSG] ? r->tester_init : 0);
    } else if (is_init)
        msg = 1000;
    else if (st->type == VW_VITCP_NOP)
        msg = r->tester_last_msg;
    else if (st->type == VW_VITCP_CONNECT_REJECT || st->type == VW_VITCP_CONNECT_NOMATCH ||
             st->type == VW_VITCP_RDMA_READ_RESP)
        msg = 0;
    else
        msg = r->tester_last_msg + 1;
    if (is_init) {
        r->tester_init_known = true;
        r->tester_init = msg;
        r->tester_last_msg = msg;
    } else if (st->type != VW_VITCP_NOP && st->type != VW_VITCP_RDMA_READ_RESP &&
               st->type != VW_VITCP_CONNECT_REJECT && st->type != VW_VITCP_CONNECT_NOMATCH) {
        r->tester_last_msg = msg;
    }
    enc.hdr.msg_num = msg;
    if (st->set[CF_F_ACK]) {
        if (send_value(r, st, CF_F_ACK, &v) < 0)
            return NULL;
        enc.hdr.msg_ack = (uint32_t)v + (st->rel[CF_F_ACK] ? r->target_init : 0);
    } else if (st->type != VW_VITCP_CONNECT_REQUEST && conn->dir[TARGET_DIR].have_msg_num)
        enc.hdr.msg_ack = conn->dir[TARGET_DIR].last_msg_num;
    enc.hdr.rx_desc_posted = DEFAULT_RX_POSTED;
    static const enum cf_field simple[] = {CF_F_RXPOSTED, CF_F_VERSION, CF_F_OFFSET, CF_F_IMM, CF_F_ERR};
    for (size_t k = 0; k < sizeof simple / sizeof simple[0]; k++) {
        enum cf_field f = simple[k];
        if (!st->set[f])
            continue;
        if (send_value(r, st, f, &v) < 0)
            return NULL;
        switch (f) {
        case CF_F_RXPOSTED: enc.hdr.rx_desc_posted = (uint16_t)v; break;
        case CF_F_VERSION: enc.hdr.version = (uint8_t)v; break;
        case CF_F_OFFSET: enc.hdr.data_offset = (uint32_t)v; break;
        case CF_F_IMM: enc.hdr.imm_data = (uint32_t)v; break;
        default: enc.hdr.remote_err = (uint16_t)v; break;
        }
    }
    if (st->noeom || (st->set[CF_F_EOM] && !st->val[CF_F_EOM]))
        enc.hdr.flags &= (uint8_t)~VW_VITCP_FLAG_EOM;
    if (st->set[CF_F_IDV] && st->val[CF_F_IDV]) enc.hdr.flags |= VW_VITCP_FLAG_IDV;
    if (st->set[CF_F_TXERR] && st->val[CF_F_TXERR]) enc.hdr.flags |= VW_VITCP_FLAG_TXERR;
    if (st->set[CF_F_SEGLEN]) {
        enc.keep_seg_len = true;
        enc.hdr.seg_len = (uint16_t)st->val[CF_F_SEGLEN];
    }

    /* CE header. An accept (role passive) answers the implementation's
     * request: its level, the lesser MTU, its discriminators (V9). */
    uint8_t opts[64];
    if (is_ce) {
        const struct vw_vitcp_ce *req = &conn->request_ce;
        bool answer = st->type == VW_VITCP_CONNECT_ACCEPT && conn->phase == VW_VITCP_PHASE_REQUESTED;
        uint16_t attrs = (uint16_t)(VW_VITCP_ATTR_RELIABLE_DELIVERY | VW_VITCP_ATTR_RDMA_WRITE | VW_VITCP_ATTR_RDMA_READ);
        uint32_t mtu = 65536u;
        if (answer) {
            attrs = (uint16_t)((req->attrs & VW_VITCP_ATTR_RELIABILITY_MASK) | VW_VITCP_ATTR_RDMA_WRITE |
                               VW_VITCP_ATTR_RDMA_READ);
            if (req->mtu && req->mtu < mtu)
                mtu = req->mtu;
        }
        if (st->set[CF_F_ATTRS] && send_value(r, st, CF_F_ATTRS, &v) < 0) /* $level|RWE|RRE */
            return NULL;
        enc.ce.attrs = st->set[CF_F_ATTRS] ? (uint16_t)v : attrs;
        enc.ce.mtu = st->set[CF_F_MTU] ? (uint32_t)st->val[CF_F_MTU] : mtu;
        /* V18: a read window only with RDMA Read Enable */
        enc.ce.rdma_read_window = st->set[CF_F_WINDOW] ? (uint16_t)st->val[CF_F_WINDOW]
                                  : (enc.ce.attrs & VW_VITCP_ATTR_RDMA_READ) ? 4 : 0;
        if (answer && !st->str[CF_VITCP_STR_CALLING][0] && !st->str[CF_VITCP_STR_CALLED][0]) {
            memcpy(enc.ce.calling_disc, req->calling_disc, VW_VITCP_DISC_MAX);
            memcpy(enc.ce.called_disc, req->called_disc, VW_VITCP_DISC_MAX);
            enc.ce.calling_disc_len = req->calling_disc_len > VW_VITCP_DISC_MAX ? VW_VITCP_DISC_MAX : req->calling_disc_len;
            enc.ce.called_disc_len = req->called_disc_len > VW_VITCP_DISC_MAX ? VW_VITCP_DISC_MAX : req->called_disc_len;
        } else {
            const char *calling = st->str[CF_VITCP_STR_CALLING][0] ? st->str[CF_VITCP_STR_CALLING] : "vitcp-conform-tester";
            const char *called = st->str[CF_VITCP_STR_CALLED][0] ? st->str[CF_VITCP_STR_CALLED] : cf_vitcp_settings(r->e)->discriminator;
            size_t cl = strlen(calling) > VW_VITCP_DISC_MAX ? VW_VITCP_DISC_MAX : strlen(calling);
            size_t dl = strlen(called) > VW_VITCP_DISC_MAX ? VW_VITCP_DISC_MAX : strlen(called);
            memcpy(enc.ce.calling_disc, calling, cl);
            memcpy(enc.ce.called_disc, called, dl);
            enc.ce.calling_disc_len = (uint16_t)cl;
            enc.ce.called_disc_len = (uint16_t)dl;
        }
        if (st->set[CF_F_CALLING_LEN]) enc.ce.calling_disc_len = (uint16_t)st->val[CF_F_CALLING_LEN];
        if (st->set[CF_F_CALLED_LEN]) enc.ce.called_disc_len = (uint16_t)st->val[CF_F_CALLED_LEN];
        size_t n = 0;
        if ((st->opts & CF_VITCP_OPT_UNKNOWN)) {
            /* An option of a type no draft defines, with 4 data bytes (V5). */
            vw_put_be16(opts, 0x7A7A);
            vw_put_be16(opts + 2, 8);
            vw_put_be32(opts + 4, 0xC0FFEE00u);
            n = 8;
        }
        if ((st->opts & CF_VITCP_OPT_BAD_LEN)) {
            vw_put_be16(opts + n, 0x7A7B);
            vw_put_be16(opts + n + 2, 2); /* under 4: malformed (V5) */
            n += 4;
        }
        n += vw_vitcp_opts_build(opts + n, sizeof opts - n, (st->opts & CF_VITCP_OPT_CRC), (st->opts & CF_VITCP_OPT_URGENT),
                                 (st->opts & CF_VITCP_OPT_EOL) || (st->opts & CF_VITCP_OPT_CRC) || n > 0);
        enc.ce.options = opts;
        enc.ce.options_len = n;
        enc.trailer = (st->opts & CF_VITCP_OPT_CRC) ? VW_VITCP_TRAILER_CRC : VW_VITCP_TRAILER_NONE;
    }

    /* Payload and RDMA header. */
    size_t plen = 0;
    if (st->set[CF_F_PAYLOAD]) {
        if (send_value(r, st, CF_F_PAYLOAD, &v) < 0)
            return NULL;
        plen = v < 0 ? 0 : (size_t)v;
    }
    if (plen > VW_VITCP_SEG_MAX) {
        decide(r, CF_FAIL, st->req, "case error: payload %zu is larger than a segment", plen);
        return NULL;
    }
    uint8_t *payload = NULL;
    if (plen) {
        payload = malloc(plen);
        if (!payload) {
            decide(r, CF_FAIL, st->req, "out of memory");
            return NULL;
        }
        for (size_t i = 0; i < plen; i++)
            payload[i] = (uint8_t)pattern_byte(i + enc.hdr.data_offset, st->fill);
        enc.payload = payload;
        enc.payload_len = plen;
    }
    if (enc.with_rdma) {
        int64_t addr = 0, handle = 0, len = (int64_t)plen;
        if ((st->set[CF_F_RDMA_ADDR] && send_value(r, st, CF_F_RDMA_ADDR, &addr) < 0) ||
            (st->set[CF_F_RDMA_HANDLE] && send_value(r, st, CF_F_RDMA_HANDLE, &handle) < 0) ||
            (st->set[CF_F_RDMA_LEN] && send_value(r, st, CF_F_RDMA_LEN, &len) < 0)) {
            free(payload);
            return NULL;
        }
        enc.rdma.addr = (uint64_t)addr;
        enc.rdma.handle = (uint32_t)handle;
        enc.rdma.length = (uint32_t)len;
    }
    switch (st->trailer) {
    case CF_TRAILER_AUTO: break;
    case CF_TRAILER_NONE: enc.trailer = VW_VITCP_TRAILER_NONE; break;
    case CF_TRAILER_GOOD: enc.trailer = VW_VITCP_TRAILER_CRC; break;
    case CF_TRAILER_BAD: enc.trailer = VW_VITCP_TRAILER_BAD_CRC; break;
    }

    /* Remember the message for data=echo and data=written. */
    keep_sent(r, st->type, enc.hdr.data_offset, payload, plen);

    size_t cap = vw_vitcp_encoded_len(&enc) + 8;
    uint8_t *buf = malloc(cap);
    size_t n = buf ? vw_vitcp_encode(&enc, buf, cap) : 0;
    free(payload);
    if (!n) {
        free(buf);
        decide(r, CF_FAIL, st->req, "case error: the encoder cannot build this %s",
               vw_vitcp_type_name(st->type));
        return NULL;
    }
    *out_len = n;
    return buf;
}

/* The tester's own segments, before they leave: a message above the MTU
 * the target agreed would break the rule on the tester's side, so the case
 * cannot apply to a target that chose that MTU (V11 allows it). */
static void on_tester_segment(void *ctx, const uint8_t *raw, size_t len, uint64_t off,
                              const struct vw_vitcp_seg *seg, enum vw_req err, const struct vw_findings *fs)
{
    (void)raw, (void)len, (void)off, (void)err;
    struct run *r = ctx;
    for (unsigned i = 0; i < fs->count; i++)
        if (fs->item[i].req == VW_REQ_VITCP_3_3_MTU_RESPECTED && fs->item[i].severity == VW_SEV_ERROR)
            not_applicable(r, "the case's %s would exceed the MTU the target agreed (%u bytes, a choice V11 "
                           "allows): %s", vw_vitcp_type_name(seg->hdr.type), r->session.conn.mtu,
                           fs->item[i].detail);
}

static void acknowledge_at_rr(struct run *r);

/* Does the step start a message that takes a receive descriptor of the
 * target (a Send, an RdmaWrite with immediate data; V17)? */
static bool consumes_descriptor(const struct cf_step *st)
{
    bool first = !st->set[CF_F_OFFSET] || (st->val[CF_F_OFFSET] == 0 && st->var[CF_F_OFFSET] == CF_VAR_NONE);
    return first && !st->cap_pdu &&
           (st->type == VW_VITCP_SEND || (st->type == VW_VITCP_RDMA_WRITE && st->set[CF_F_IDV] && st->val[CF_F_IDV]));
}

/* A tester never sends a message the target has no receive descriptor for:
 * the target may advertise few (Rx Descriptors Posted, V17) and post more
 * later, and a message without a descriptor is an error at its end even
 * without DFC (VIA). Wait (pumping) for its next advertisement; 0, or -1
 * when it never comes (the case is then not applicable). */
static int wait_for_descriptor(struct run *r)
{
    const struct vw_vitcp_conn *conn = &r->session.conn;
    const struct vw_vitcp_dir *target = &conn->dir[TARGET_DIR];
    struct timespec until = cf_after_ms(r->e->slack_ms);
    while (conn->phase == VW_VITCP_PHASE_CONNECTED && target->have_rx_posted && !r->failed &&
           (int16_t)(uint16_t)(target->rx_posted - r->tester_consumed) <= 0) {
        int left = cf_ms_until(until);
        if (left == 0 || r->closed) {
            not_applicable(r, "the target advertised %u receive descriptor(s) (Rx Descriptors Posted) and "
                           "posted no more for the case's next message within %u ms",
                           target->rx_posted, r->e->slack_ms);
            return -1;
        }
        acknowledge_at_rr(r);
        pump(r, left);
    }
    return r->failed ? -1 : 0;
}

static void do_send(struct run *r, const struct cf_step *st)
{
    unsigned count = st->repeat ? st->repeat : 1;
    if (st->repeat_var != CF_VAR_NONE) {
        int64_t base;
        if (var_value(r, st->repeat_var, &base) < 0)
            return;
        base += st->repeat_off;
        if (base < 1 || base > 64) {
            decide(r, CF_FAIL, st->req, "case error: repeat count %lld is outside 1..64", (long long)base);
            return;
        }
        count = (unsigned)base;
    }
    bool consumes = consumes_descriptor(st) && !r->liveness_only;
    if (consumes && wait_for_descriptor(r) < 0)
        return;
    /* All segments go out in one write, so the target sees them at once. */
    uint8_t *all = NULL;
    size_t total = 0;
    for (unsigned k = 0; k < count && !r->failed; k++) {
        size_t n;
        uint8_t *seg = build_segment(r, st, &n);
        if (!seg)
            break;
        uint8_t *grown = realloc(all, total + n);
        if (!grown) {
            free(seg);
            decide(r, CF_FAIL, st->req, "out of memory");
            break;
        }
        all = grown;
        memcpy(all + total, seg, n);
        total += n;
        free(seg);
    }
    if (r->failed || !total || r->fd < 0) {
        free(all);
        return;
    }
    vw_vitcp_session_feed(&r->session, TESTER_DIR, all, total, on_tester_segment, r);
    if (r->failed) {
        free(all);
        return;
    }
    capture_data(r, CAP_TX, all, total);
    if (consumes)
        r->tester_consumed = (uint16_t)(r->tester_consumed + count);
    size_t sent = 0;
    while (sent < total && !r->closed) {
        ssize_t w = send(r->fd, all + sent, total - sent, MSG_NOSIGNAL);
        if (w > 0) {
            sent += (size_t)w;
        } else if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
            struct pollfd p = {r->fd, POLLOUT, 0};
            if (poll(&p, 1, cf_ms_until(r->deadline)) <= 0) {
                decide(r, CF_TIMEOUT, st->req, "the target stopped reading (send blocked)");
                break;
            }
        } else {
            /* The target closed on us; the next expect judges whether that was right. */
            r->closed = true;
            r->reset = true;
        }
    }
    free(all);
}

/* At Reliable Reception the target completes a message only when the
 * tester acknowledges it (V15), and may hold its next one until then: while
 * the tester waits for something and has data messages of the target it has
 * not acknowledged yet, it sends a NOP whose Message ACK names the last one,
 * as a conforming peer would. (Its next message would carry the ACK too; a
 * waiting tester has none.) */
static void acknowledge_at_rr(struct run *r)
{
    const struct vw_vitcp_conn *conn = &r->session.conn;
    const struct vw_vitcp_dir *target = &conn->dir[TARGET_DIR], *tester = &conn->dir[TESTER_DIR];
    if (r->liveness_only || r->failed || r->closed || r->fd < 0 || conn->phase != VW_VITCP_PHASE_CONNECTED ||
        conn->level != VW_VITCP_ATTR_RELIABLE_RECEPTION || !target->have_msg_num ||
        (tester->have_ack && tester->last_ack == target->last_msg_num) ||
        (r->target_init_known && target->last_msg_num == r->target_init))
        return;
    struct cf_step nop;
    memset(&nop, 0, sizeof nop);
    nop.kind = CF_STEP_SEND;
    nop.type = VW_VITCP_NOP;
    nop.req = r->step ? r->step->req : r->c->reqs[0];
    nop.line = r->step ? r->step->line : 0;
    const struct cf_step *was = r->step;
    do_send(r, &nop);
    r->step = was;
}

/* ------------------------------------------------------------ expects */

static bool field_value(const struct vw_vitcp_seg *s, enum cf_field f, int64_t *v)
{
    switch (f) {
    case CF_F_VERSION: *v = s->hdr.version; return true;
    case CF_F_EOM: *v = !!(s->hdr.flags & VW_VITCP_FLAG_EOM); return true;
    case CF_F_IDV: *v = !!(s->hdr.flags & VW_VITCP_FLAG_IDV); return true;
    case CF_F_TXERR: *v = !!(s->hdr.flags & VW_VITCP_FLAG_TXERR); return true;
    case CF_F_SEGLEN: *v = s->hdr.seg_len; return true;
    case CF_F_OFFSET: *v = s->hdr.data_offset; return true;
    case CF_F_IMM: *v = s->hdr.imm_data; return true;
    case CF_F_MSG: *v = s->hdr.msg_num; return true;
    case CF_F_ACK: *v = s->hdr.msg_ack; return true;
    case CF_F_RXPOSTED: *v = s->hdr.rx_desc_posted; return true;
    case CF_F_ERR: *v = s->hdr.remote_err; return true;
    case CF_F_ATTRS: *v = s->ce.attrs; return s->has_ce;
    case CF_F_LEVEL: *v = s->ce.attrs & VW_VITCP_ATTR_RELIABILITY_MASK; return s->has_ce;
    case CF_F_MTU: *v = s->ce.mtu; return s->has_ce;
    case CF_F_WINDOW: *v = s->ce.rdma_read_window; return s->has_ce;
    case CF_F_CALLING_LEN: *v = s->ce.calling_disc_len; return s->has_ce;
    case CF_F_CALLED_LEN: *v = s->ce.called_disc_len; return s->has_ce;
    case CF_F_RDMA_ADDR: *v = (int64_t)s->rdma.addr; return s->has_rdma;
    case CF_F_RDMA_HANDLE: *v = s->rdma.handle; return s->has_rdma;
    case CF_F_RDMA_LEN: *v = s->rdma.length; return s->has_rdma;
    case CF_F_OPT_CRC: *v = s->ce.opt_crc; return s->has_ce;
    case CF_F_OPT_URGENT: *v = s->ce.opt_urgent; return s->has_ce;
    case CF_F_OPT_UNKNOWN: *v = s->ce.opt_unknown; return s->has_ce;
    case CF_F_PAYLOAD: *v = (int64_t)s->payload_len; return true;
    case CF_F_CRC: *v = s->has_crc; return true;
    case CF_F_COUNT: break;
    }
    return false;
}

static const char *op_text(enum cf_op op)
{
    return op == CF_OP_EQ ? "=" : op == CF_OP_NE ? "!=" : op == CF_OP_LE ? "<=" : ">=";
}

/* Describe a segment in the case language, for "expected ... got ..." lines. */
static void describe(const struct vw_vitcp_seg *s, char *out, size_t n)
{
    int w = snprintf(out, n, "%s%s msg=%u ack=%u offset=%u payload=%zu crc=%d idv=%d imm=0x%x",
                     vw_vitcp_type_name(s->hdr.type), (s->hdr.flags & VW_VITCP_FLAG_EOM) ? " eom" : "",
                     s->hdr.msg_num, s->hdr.msg_ack, s->hdr.data_offset, s->payload_len, s->has_crc,
                     !!(s->hdr.flags & VW_VITCP_FLAG_IDV), s->hdr.imm_data);
    if (s->has_ce && w > 0 && (size_t)w < n)
        snprintf(out + w, n - (size_t)w, " attrs=0x%x mtu=%u window=%u opt.crc=%d opt.urgent=%d", s->ce.attrs,
                 s->ce.mtu, s->ce.rdma_read_window, s->ce.opt_crc, s->ce.opt_urgent);
}

static const char *type_text(unsigned type)
{
    return type == CF_TYPE_ANY ? "any segment" : vw_vitcp_type_name(type);
}

/* Does the queued segment q match the step? 1 yes, 0 no (why in msg, the
 * broken requirement is the step's), -1 verdict decided (case error, N/A). */
static int segment_matches(struct run *r, const struct cf_step *st, const struct rx_seg *q, char *msg,
                           size_t msglen)
{
    const struct vw_vitcp_seg *s = &q->seg;
    unsigned pdu = q->index;
    char got[256];
    describe(s, got, sizeof got);
    if (st->type != CF_TYPE_ANY && s->hdr.type != st->type && !(st->has_type_alt && s->hdr.type == st->type_alt)) {
        snprintf(msg, msglen, "PDU #%u: expected %s, got %s", pdu, vw_vitcp_type_name(st->type), got);
        return 0;
    }
    for (unsigned i = 0; i < st->nmatch; i++) {
        const struct cf_match *m = &st->match[i];
        int64_t v;
        if (m->field == CF_F_SEGLEN && q->gathered)
            continue; /* a reassembled message has no one Segment Length */
        if (!field_value(s, m->field, &v)) {
            snprintf(msg, msglen, "PDU #%u: expected field %s, the segment has no such header; got %s", pdu,
                     cf_field_name(m->field), got);
            return 0;
        }
        if (m->mask)
            v = (int64_t)((uint64_t)v & m->mask);
        int64_t want = m->value;
        if (m->var != CF_VAR_NONE) {
            int64_t base;
            if (var_value(r, m->var, &base) < 0)
                return -1;
            want += base;
        }
        if (m->relative) {
            /* msg=+N counts from the sender's initial number, except in an
             * RdmaReadResponse, which carries the tester's request number. */
            bool tester_base = m->field != CF_F_MSG || s->hdr.type == VW_VITCP_RDMA_READ_RESP;
            bool known = tester_base ? r->tester_init_known : r->target_init_known;
            want = (int64_t)(uint32_t)(want + (tester_base ? r->tester_init : r->target_init));
            if (!known) {
                decide(r, CF_FAIL, st->req, "case error: %s=+N before the initial number is known",
                       cf_field_name(m->field));
                return -1;
            }
        }
        bool ok = m->op == CF_OP_EQ ? v == want : m->op == CF_OP_NE ? v != want
                  : m->op == CF_OP_LE ? v <= want : v >= want;
        if (!ok) {
            char masked[32] = "";
            if (m->mask)
                snprintf(masked, sizeof masked, "&%llu", (unsigned long long)m->mask);
            snprintf(msg, msglen, "PDU #%u: expected %s %s%s%s%lld, got %s%s=%lld (%s)", pdu, type_text(st->type),
                     cf_field_name(m->field), masked, op_text(m->op), (long long)want, cf_field_name(m->field),
                     masked, (long long)v, got);
            return 0;
        }
    }
    if (st->data_capture) {
        const struct cf_case *c = r->c;
        size_t want = 0;
        for (unsigned i = 0; i < st->nmatch; i++)
            if (st->match[i].field == CF_F_PAYLOAD)
                want = (size_t)st->match[i].value;
        bool inside = st->cap_data_off <= c->blob_len && want <= c->blob_len - st->cap_data_off;
        if (!inside || s->payload_len != want ||
            (want && memcmp(s->payload, c->blob + st->cap_data_off, want) != 0)) {
            size_t at = 0;
            while (inside && at < want && at < s->payload_len && s->payload[at] == c->blob[st->cap_data_off + at])
                at++;
            snprintf(msg, msglen, "PDU #%u: payload differs from the capture's at byte %zu (expected 0x%02x, got "
                     "0x%02x; %zu bytes expected, %zu received) (%s)", pdu, at,
                     inside && at < want ? c->blob[st->cap_data_off + at] : 0,
                     at < s->payload_len ? s->payload[at] : 0, want, s->payload_len, got);
            return 0;
        }
    }
    if (st->data_echo || st->data_written) {
        const uint8_t *ref = st->data_echo ? r->echo : r->written;
        size_t ref_len = st->data_echo ? r->echo_len : r->written_len;
        size_t off = s->hdr.data_offset;
        if (off > ref_len || s->payload_len > ref_len - off ||
            (s->payload_len && memcmp(s->payload, ref + off, s->payload_len) != 0)) {
            snprintf(msg, msglen, "PDU #%u: payload at offset %zu differs from the data %s", pdu, off,
                     st->data_echo ? "sent" : "written");
            return 0;
        }
    }
    return 1;
}

/* A capture case's difference from the capture waits for the bytes already
 * in flight (until 20 ms pass without any): a rule the target broke in them
 * (the rest of an oversized message, C27) explains the difference and is
 * reported instead. */
static void settle_capture_difference(struct run *r)
{
    if (r->c->from_capture)
        while (!r->failed && cf_ms_until(r->deadline) > 0 && pump(r, 20) > 0) {
        }
}

static void do_expect(struct run *r, const struct cf_step *st)
{
    struct timespec until = cf_after_ms(st->wait_ms ? st->wait_ms : r->e->slack_ms);
    char why[512] = "";
    unsigned skipped = 0;
    for (;;) {
        /* NOPs carry only ACKs and credits: skip them unless one is expected. */
        while (!st->skip_other && r->qcount && r->queue[r->qhead].seg.hdr.type == VW_VITCP_NOP &&
               st->type != VW_VITCP_NOP && st->type != CF_TYPE_ANY)
            drop_head(r);
        if (r->failed)
            return;
        /* expect: the head must match; await: the first that matches
         * anywhere in the queue (the others stay for later steps). */
        skipped = 0;
        for (unsigned k = 0; k < r->qcount; k++) {
            struct rx_seg *q = &r->queue[(r->qhead + k) % QUEUE_MAX];
            int m = segment_matches(r, st, q, why, sizeof why);
            if (m < 0)
                return;
            if (m == 1) {
                take(r, k);
                return;
            }
            if (!st->skip_other) {
                if ((r->c->flags & CF_VITCP_CASE_LEVEL_OPTIONAL) && st->type == VW_VITCP_CONNECT_ACCEPT &&
                    q->seg.hdr.type == VW_VITCP_CONNECT_REJECT) {
                    not_applicable(r, "the target refused the request's reliability level with ConnectReject: "
                                   "a provider need not offer every level (VIA 2.5, V19)");
                    return;
                }
                cf_result_add_frame(r->res, q->frame);
                settle_capture_difference(r);
                decide(r, CF_FAIL, st->req, "%s", why);
                return;
            }
            skipped++;
        }
        int left = cf_ms_until(until);
        int dl = cf_ms_until(r->deadline);
        if ((left == 0 || dl == 0) && flush_partials(r))
            continue; /* a message that never ended is compared as it is */
        if (left == 0 || dl == 0) {
            if (skipped)
                decide(r, CF_TIMEOUT, st->req, "expected %s within %u ms; %u other segment(s) arrived, the last: %s",
                       type_text(st->type), st->wait_ms ? st->wait_ms : r->e->slack_ms, skipped, why);
            else if (describe_unframed(r, why, sizeof why))
                decide(r, CF_TIMEOUT, st->req, "expected %s within %u ms; %s", type_text(st->type),
                       st->wait_ms ? st->wait_ms : r->e->slack_ms, why);
            else
                decide(r, CF_TIMEOUT, st->req, "expected %s, nothing arrived within %u ms", type_text(st->type),
                       st->wait_ms ? st->wait_ms : r->e->slack_ms);
            return;
        }
        acknowledge_at_rr(r);
        /* A message whose next segment does not come for a while is
         * compared as it is (it never ended: EOM-LAST), without waiting
         * for the whole slack. */
        int wait = left < dl ? left : dl;
        bool gathering = partials_pending(r);
        int got = pump(r, gathering && wait > PARTIAL_QUIET_MS ? PARTIAL_QUIET_MS : wait);
        if (got == 0 && gathering) {
            flush_partials(r);
            continue;
        }
        if (got < 0) {
            cf_result_add_frame(r->res, last_frame(r));
            decide(r, CF_FAIL, st->req, "expected %s, the target closed the connection%s%s%s", type_text(st->type),
                   r->reset ? " (RST)" : "", skipped ? "; skipped before: " : "", skipped ? why : "");
            return;
        }
    }
}

static void do_expect_close(struct run *r, const struct cf_step *st)
{
    struct timespec until = cf_after_ms(st->wait_ms ? st->wait_ms : r->e->slack_ms);
    while (!r->closed && !r->failed) {
        int left = cf_ms_until(until), dl = cf_ms_until(r->deadline);
        if (left == 0 || dl == 0) {
            cf_result_add_frame(r->res, last_frame(r));
            decide(r, CF_FAIL, st->req, "the target kept the connection open for %u ms",
                   st->wait_ms ? st->wait_ms : r->e->slack_ms);
            return;
        }
        acknowledge_at_rr(r);
        pump(r, left < dl ? left : dl);
    }
    if (r->closed)
        cf_result_add_frame(r->res, last_frame(r));
}

static void do_expect_open(struct run *r, const struct cf_step *st)
{
    struct timespec until = cf_after_ms(st->wait_ms ? st->wait_ms : r->e->slack_ms);
    while (!r->failed) {
        int left = cf_ms_until(until);
        if (left == 0)
            return;
        if (pump(r, left) < 0) {
            cf_result_add_frame(r->res, last_frame(r));
            decide(r, CF_FAIL, st->req, "the target closed the connection%s", r->reset ? " (RST)" : "");
            return;
        }
    }
}

/* ------------------------------------------------------------ listen mode */

static void do_accept(struct run *r, const struct cf_step *st)
{
    char why[300];
    r->fd = cf_accept_implementation(r->e, r->via_relay, st->wait_ms ? st->wait_ms : r->e->accept_ms, r->deadline,
                                     &r->child, why, sizeof why);
    if (r->fd < 0) {
        int rc = r->fd;
        r->fd = -1;
        if (rc == CF_ACCEPT_NO_LISTEN)
            decide(r, CF_SKIP, VW_REQ_NONE, "%s", why);
        else
            decide(r, rc == CF_ACCEPT_TIMEOUT ? CF_TIMEOUT : CF_FAIL, st->req, "%s", why);
        return;
    }
    if (!r->via_relay)
        capture_open(r);
}

/* ------------------------------------------------------------ cases */

static void run_steps(struct run *r)
{
    for (unsigned i = 0; i < r->c->nsteps && !r->failed; i++) {
        const struct cf_step *st = &r->c->steps[i];
        r->step = st;
        if (cf_ms_until(r->deadline) == 0) {
            decide(r, CF_TIMEOUT, st->req, "case timeout (%u ms) reached", r->c->timeout_ms);
            break;
        }
        switch (st->kind) {
        case CF_STEP_CONNECT: {
            char why[300];
            if (r->fd >= 0) {
                decide(r, CF_FAIL, st->req, "case error: a second 'connect'");
                break;
            }
            r->fd = r->via_relay ? cf_connect_relayed(r->e, r->e->slack_ms, why, sizeof why)
                                 : cf_connect_target(r->e, r->e->slack_ms, why, sizeof why);
            if (r->fd < 0)
                decide(r, CF_FAIL, st->req, "%s", why);
            else if (!r->via_relay)
                capture_open(r);
            break;
        }
        case CF_STEP_ACCEPT: do_accept(r, st); break;
        case CF_STEP_SEND: do_send(r, st); break;
        case CF_STEP_EXPECT: do_expect(r, st); break;
        case CF_STEP_CHECK:
        case CF_STEP_ONLY_IF: {
            char why[512];
            if (!r->have_last) {
                decide(r, CF_FAIL, st->req, "case error: '%s' before any expect matched",
                       st->kind == CF_STEP_CHECK ? "check" : "only-if");
                break;
            }
            int m = segment_matches(r, st, &r->last, why, sizeof why);
            if (m == 0 && st->kind == CF_STEP_ONLY_IF) {
                char *seg_text = strrchr(why, '(');
                if (seg_text && seg_text > why)
                    seg_text[-1] = 0; /* the fields are the reason, not the whole segment */
                not_applicable(r, "the target made a choice the draft allows, and the case needs another: %s", why);
            } else if (m == 0) {
                cf_result_add_frame(r->res, r->last.frame);
                settle_capture_difference(r);
                decide(r, CF_FAIL, st->req, "%s", why);
            }
            break;
        }
        case CF_STEP_EXPECT_CLOSE: do_expect_close(r, st); break;
        case CF_STEP_EXPECT_OPEN: do_expect_open(r, st); break;
        case CF_STEP_EXPECT_NOTHING:
            /* the generic runner's step (datagram protocols' drops, C47) */
            decide(r, CF_SKIP, VW_REQ_NONE, "'expect-nothing' is the generic runner's; VI/TCP's runner "
                   "has expect-open");
            break;
        case CF_STEP_CLOSE:
            shutdown(r->fd, SHUT_WR);
            if (r->flow_on)
                vn_tcp_fin(&r->flow, CAP_TX);
            break;
        case CF_STEP_WAIT: {
            struct timespec until = cf_after_ms(st->wait_ms);
            int left;
            while ((left = cf_ms_until(until)) > 0 && !r->failed)
                if (pump(r, left) < 0)
                    break;
            break;
        }
        }
    }
    r->step = NULL;
    /* Segments still in flight are checked too (a rule broken after the last expect). */
    if (!r->failed && r->fd >= 0)
        while (pump(r, 20) > 0 && !r->failed) {
        }
}

static void run_init(struct run *r, struct cf_engine *e, const struct cf_case *c, struct cf_result *res)
{
    memset(r, 0, sizeof *r);
    r->e = e;
    r->c = c;
    r->res = res;
    r->fd = -1;
    r->deadline = cf_after_ms(c->timeout_ms);
    r->tdir = c->passive ? 1 : 0;
    r->tester_first_send_len = -1;
}

static void run_free(struct run *r)
{
    if (r->fd >= 0) {
        if (r->flow_on && !r->closed)
            vn_tcp_fin(&r->flow, CAP_TX);
        close(r->fd);
    }
    while (r->qcount)
        drop_head(r);
    for (unsigned i = 0; i < PARTIAL_MAX; i++)
        free(r->partial[i].data);
    free(r->echo);
    free(r->written);
    free(r->last.raw);
    vw_vitcp_session_free(&r->session);
    cf_stop_connector(r->child);
}

static int run_case_raw(struct cf_engine *e, const struct cf_case *c, struct cf_result *res,
                        bool liveness_only)
{
    struct run r;
    run_init(&r, e, c, res);
    r.liveness_only = liveness_only;
    if ((c->relay || e->relay_all) && !liveness_only) {
        if (!(c->passive ? cf_relay_ready_passive(e) : cf_relay_ready_active(e))) {
            res->verdict = CF_SKIP;
            snprintf(res->message, sizeof res->message, "%s: needs the packet relay: %s", c->file,
                     c->passive ? e->relay_why_passive : e->relay_why_active);
            return 0;
        }
        r.via_relay = true;
        r.deadline = cf_after_ms(c->timeout_ms); /* setting up the relay is not the case's time */
        r.relay_base = e->capture ? (unsigned)vn_pcap_frames(e->capture) : 0;
        cf_engine_relay_begin(e, c);
    }
    if (vw_vitcp_session_init(&r.session) != 0 || !(r.echo = malloc(ECHO_MAX)) ||
        !(r.written = malloc(ECHO_MAX))) {
        decide(&r, CF_FAIL, c->reqs[0], "out of memory");
        run_free(&r);
        return -1;
    }
    run_steps(&r);
    run_free(&r);
    if (r.via_relay)
        cf_relay_case_finish(e, c, res, r.failed);
    return r.failed ? -1 : 0;
}

/* A fresh connection must be accepted at some level: a target may offer
 * fewer levels than three (VIA 2.5), so a ConnectReject tries the next. */
int cf_vitcp_check_alive(struct cf_engine *e, char *why, size_t whylen)
{
    static const char *const levels[] = {"RD", "RR", "U"};
    int rc = -1;
    for (size_t i = 0; i < sizeof levels / sizeof levels[0] && rc < 0; i++) {
        rc = accepts_level(e, levels[i], why, whylen);
        if (rc < 0 && !strstr(why, "got ConnectReject"))
            break; /* not a refused level: the target is gone */
    }
    return rc;
}

/* Does the case use $level (so the target's level is asked before it, not
 * in the middle of its connection)? */
static bool case_uses_level(const struct cf_case *c)
{
    for (unsigned i = 0; i < c->nsteps; i++) {
        const struct cf_step *st = &c->steps[i];
        for (unsigned f = 0; f < CF_F_COUNT; f++)
            if (st->var[f] == CF_VAR_LEVEL)
                return true;
        for (unsigned k = 0; k < st->nmatch; k++)
            if (st->match[k].var == CF_VAR_LEVEL)
                return true;
    }
    return false;
}

/* The module's run_case: the core (core/engine.c) has filled res in and
 * judges the verdict afterwards (verdict fail, advisory, survival). */
void cf_vitcp_run_case(struct cf_engine *e, const struct cf_case *c, struct cf_result *res)
{
    if (!c->passive && case_uses_level(c))
        target_level(e);
    run_case_raw(e, c, res, false);
}
