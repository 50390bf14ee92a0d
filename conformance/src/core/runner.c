/*
 * The generic step runner: a case of any protocol module without a
 * run_case of its own runs here, on the module's hooks (protocol.h). The
 * tester connects, every send is the module's encoding of the step's
 * fields, every byte of the target goes through the module's session
 * (framing, decoding, the rules on what was received: a rule broken
 * anywhere fails the case with its ID), and expects compare the decoded
 * messages field by field through the module's accessor.
 *
 * A datagram module (C47) runs here too, over the tester's links:
 * docs/conformance-engine.md, "Datagram protocols".
 */
#include "conform/core.h"
#include "conform/relay.h"

#include <errno.h>
#include <poll.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vitcp/pcap_writer.h"
#include "vitcp/tcp_flow.h"

#define GQUEUE_MAX 128
#define GECHO_MAX (4u << 20)

struct gmsg {
    struct cf_msg m;
    unsigned frame;
    unsigned link; /* datagram protocols: the tester link it came in on */
    bool before_write; /* it was in before the tester's last write: no reaction to it */
};

struct grun {
    struct cf_engine *e;
    off_t log_mark;             /* expect-log: the node's output read so far (C90) */
    const struct cf_case *c;
    const struct conform_protocol *p;
    struct cf_result *res;
    const struct cf_step *step;
    void *session;
    int fd;
    bool closed, decided;
    struct timespec deadline;
    struct gmsg queue[GQUEUE_MAX]; /* in arrival order */
    unsigned qcount;
    /* datagram protocols: the tester's links */
    bool dgram;
    int lfd[CF_MAX_LINKS];
    struct sockaddr_storage lto[CF_MAX_LINKS];
    socklen_t lto_len[CF_MAX_LINKS];
    unsigned cur_link;
    struct gmsg last; /* the message the last expect/await matched */
    bool have_last;
    uint8_t *held;    /* bytes of sends with 'hold', written with the next send's */
    size_t held_len, held_cap;
    uint8_t *echo;    /* the tester's last message's payload, for data=echo */
    size_t echo_len;
    bool flow_on;
    struct vn_tcp_flow flow;
    struct cf_rx_verdict rx;
    pid_t child;      /* role passive: the --connect-cmd started for this case */
    bool via_relay;   /* a 'relay' case (C46): connections through the packet relay */
    unsigned relay_base; /* frames in the run's capture before a relay case */
    bool probe;       /* cf_generic_probe: the target's rules do not count */
    unsigned flags;   /* the module's runner_flags */
    unsigned unframed_frame; /* where bytes no whole message took began (0: none) */
    unsigned feed_frame; /* while bytes of a read are fed: the capture's frame then (C93) */
    /* datagram links under run --impair (C61): the tester impairs what it
     * sends and what it receives, from a PRNG per direction seeded with the
     * case's id; held datagrams go (out) or are read (in) when due */
    bool impair;
    uint64_t rng[2];  /* [0] what the tester sends, [1] what it receives */
    struct cf_impair_counts imp;
    struct dheld *held_dgrams;
};

/* A datagram an impairment holds back (datagram links, C61). */
struct dheld {
    uint64_t due_usec;       /* CLOCK_MONOTONIC */
    bool out;                /* the tester's, to send on link; else the target's, to read */
    unsigned link;
    struct sockaddr_storage peer;
    socklen_t peer_len;
    struct dheld *next;
    size_t len;
    uint8_t data[];
};

static void gdecide(struct grun *r, enum cf_verdict v, enum vw_req req, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void gdecide(struct grun *r, enum cf_verdict v, enum vw_req req, const char *fmt, ...)
{
    if (r->decided)
        return;
    r->decided = true;
    r->res->verdict = v;
    r->res->failed_req = v == CF_NOT_APPLICABLE ? VW_REQ_NONE : req;
    char msg[CF_MESSAGE_MAX - 300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->step && r->step->cap_pdu) /* a capture case's step: its line is the capture's frame */
        snprintf(r->res->message, sizeof r->res->message, "%s: capture PDU %u (frame %u): %s", r->c->file,
                 r->step->cap_pdu, r->step->line, msg);
    else if (r->c->from_capture)
        snprintf(r->res->message, sizeof r->res->message, "%s: %s", r->c->file, msg);
    else
        snprintf(r->res->message, sizeof r->res->message, "%s:%u: %s", r->c->file, r->step ? r->step->line : 0,
                 msg);
    if (r->e->capture && !(r->flags & CF_RUNNER_FRAMES_AT_VERDICT))
        cf_result_add_frame(r->res, (unsigned)vn_pcap_frames(r->e->capture));
}

/* The capture's last frame so far (a relay case's: counting what the
 * relay recorded, which goes into the capture after the case). */
static unsigned last_frame(const struct grun *r)
{
    if (!r->e->capture)
        return 0;
    if (r->via_relay && (r->flags & CF_RUNNER_FRAMES_AT_VERDICT))
        return r->relay_base + (unsigned)cf_relay_count(r->e->relay);
    return (unsigned)vn_pcap_frames(r->e->capture);
}

/* C93: a frame a verdict comes from. */
static void verdict_frame(struct grun *r, unsigned frame)
{
    if ((r->flags & CF_RUNNER_FRAMES_AT_VERDICT) && r->e->capture && frame)
        cf_result_add_frame(r->res, frame);
}

static void msg_release(struct grun *r, struct gmsg *g)
{
    if (r->p->msg_free)
        r->p->msg_free(&g->m);
    memset(g, 0, sizeof *g);
}

static void on_message(void *ctx, const struct cf_msg *m)
{
    struct grun *r = ctx;
    struct gmsg g = {*m, r->feed_frame ? r->feed_frame : last_frame(r), r->cur_link, false};
    if (r->qcount == GQUEUE_MAX) {
        msg_release(r, &g);
        gdecide(r, CF_FAIL, r->c->reqs[0], "more than %d %ss of the target not expected by the case",
                GQUEUE_MAX, r->p->unit);
        return;
    }
    r->queue[r->qcount++] = g;
}

/* Take the queued message i out of the queue into *out (NULL: it is released). */
static void queue_take(struct grun *r, unsigned i, struct gmsg *out)
{
    if (out)
        *out = r->queue[i];
    else
        msg_release(r, &r->queue[i]);
    memmove(&r->queue[i], &r->queue[i + 1], (r->qcount - i - 1) * sizeof r->queue[0]);
    r->qcount--;
}

/* The first queued message an expect on st may take (its link, if it
 * names one), or -1. */
static int queue_first(const struct grun *r, const struct cf_step *st)
{
    for (unsigned i = 0; i < r->qcount; i++)
        if (!st->link_set || r->queue[i].link == st->link)
            return (int)i;
    return -1;
}

/* A rule the target broke in what the session saw fails the case. */
static void judge_rx(struct grun *r)
{
    if (r->rx.advisories[0] && !r->decided && !r->probe) {
        size_t have = strlen(r->res->message);
        if (have + 8 < sizeof r->res->message)
            snprintf(r->res->message + have, sizeof r->res->message - have, "%sadvisory %s", have ? "; " : "",
                     r->rx.advisories);
    }
    r->rx.advisories[0] = 0;
    if (r->rx.req == VW_REQ_NONE || r->decided || r->probe)
        return;
    verdict_frame(r, r->feed_frame ? r->feed_frame : last_frame(r));
    gdecide(r, CF_FAIL, r->rx.req, "the target broke %s: %s", vw_req_id(r->rx.req), r->rx.detail);
    r->res->rule_broken = true;
}

/* ------------------------------------------------ datagram impairment (C61) */

static uint64_t mono_usec(void)
{
    struct timespec t = cf_now();
    return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_nsec / 1000u;
}

static void impair_comment(struct grun *r, const char *what)
{
    if (r->e->capture) {
        char note[160];
        snprintf(note, sizeof note, "impairment (seed %llu): %s",
                 (unsigned long long)cf_impair_case_seed(&r->e->impair, r->c->id), what);
        vn_pcap_comment_next(r->e->capture, note);
    }
}

/* Hold a copy of a datagram for delay_us; false when it cannot be held. */
static bool dgram_hold(struct grun *r, bool out, unsigned link, const struct sockaddr *peer, socklen_t peer_len,
                       const uint8_t *data, size_t len, unsigned delay_us)
{
    struct dheld *h = peer_len <= sizeof h->peer ? calloc(1, sizeof *h + len) : NULL;
    if (!h)
        return false;
    memcpy(h->data, data, len);
    h->due_usec = mono_usec() + delay_us;
    h->out = out;
    h->link = link;
    memcpy(&h->peer, peer, peer_len);
    h->peer_len = peer_len;
    h->len = len;
    struct dheld **at = &r->held_dgrams;
    while (*at && (*at)->due_usec <= h->due_usec)
        at = &(*at)->next;
    h->next = *at;
    *at = h;
    return true;
}

/* The fate of one datagram (dir 0: the tester's, 1: the target's): how
 * many copies go on (0: lost) and the delay of each. */
static unsigned dgram_fate(struct grun *r, int dir, unsigned delay_us[2])
{
    const struct cf_impair *imp = &r->e->impair;
    uint64_t *rng = &r->rng[dir];
    if (cf_impair_chance(rng, imp->loss_ppm)) {
        r->imp.lost++;
        return 0;
    }
    unsigned copies = 1u + cf_impair_chance(rng, imp->dup_ppm);
    r->imp.copied += copies - 1;
    for (unsigned c = 0; c < copies; c++) {
        delay_us[c] = cf_impair_between(rng, imp->delay_min_us, imp->delay_max_us);
        if (cf_impair_chance(rng, imp->reorder_ppm)) {
            delay_us[c] += imp->reorder_hold_us;
            r->imp.reordered++;
        } else if (delay_us[c]) {
            r->imp.delayed++;
        }
    }
    return copies;
}

/* One datagram of the target's that came in on link into the session. */
static void feed_datagram(struct grun *r, unsigned link, const uint8_t *buf, size_t len)
{
    r->cur_link = link;
    if (r->p->session_carrier)
        r->p->session_carrier(r->session, r->e->links[link].eth_if[0] != 0);
    r->p->session_feed(r->session, buf, len, on_message, r, &r->rx);
    judge_rx(r);
}

/* A send on fd that would block waits until fd takes more (within the
 * case's time): 0, or -1. */
static int wait_writable(const struct grun *r, int fd)
{
    struct pollfd pf = {fd, POLLOUT, 0};
    return poll(&pf, 1, cf_ms_until(r->deadline)) > 0 ? 0 : -1;
}

/* Datagram protocols: the message as one datagram out of the step's link. */
static int send_datagram(struct grun *r, unsigned k, const uint8_t *data, size_t len)
{
    for (;;) {
        ssize_t w = sendto(r->lfd[k], data, len, 0, (struct sockaddr *)&r->lto[k], r->lto_len[k]);
        if (w < 0 && (errno == EINTR || errno == ECONNREFUSED))
            continue; /* ECONNREFUSED: an ICMP error of an earlier send, reported now */
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_writable(r, r->lfd[k]) == 0)
            continue;
        return w < 0 ? -1 : 0;
    }
}

/* A datagram of the tester's to send on link (out) or of the target's
 * that came in on it, through the impairment (C61) when it is on: lost
 * (only recorded), held for its delay, or sent or fed now, once or twice.
 * 0, or -1 when a send failed. */
static int dgram_pass(struct grun *r, bool out, unsigned link, const struct sockaddr *peer, socklen_t peer_len,
                      const uint8_t *data, size_t len)
{
    unsigned delay[2] = {0, 0}, copies = r->impair ? dgram_fate(r, out ? 0 : 1, delay) : 1;
    if (copies == 0) {
        impair_comment(r, out ? "lost: the node never got it" : "lost: the tester ignores it");
        cf_capture_datagram(r->e, r->lfd[link], peer, peer_len, out, data, len);
    }
    for (unsigned c = 0; c < copies; c++) {
        if (delay[c] && dgram_hold(r, out, link, peer, peer_len, data, len, delay[c]))
            continue;
        if (out && send_datagram(r, link, data, len) < 0)
            return -1;
        if (c)
            impair_comment(r, "a second copy");
        cf_capture_datagram(r->e, r->lfd[link], peer, peer_len, out, data, len);
        if (!out)
            feed_datagram(r, link, data, len);
    }
    return 0;
}

/* What is due of the held datagrams goes now; the microseconds until the
 * next is due (UINT64_MAX: none held). */
static uint64_t dgram_release(struct grun *r)
{
    while (r->held_dgrams && r->held_dgrams->due_usec <= mono_usec() && !r->decided) {
        struct dheld *h = r->held_dgrams;
        r->held_dgrams = h->next;
        if (h->out) {
            if (send_datagram(r, h->link, h->data, h->len) == 0)
                cf_capture_datagram(r->e, r->lfd[h->link], (struct sockaddr *)&r->lto[h->link], r->lto_len[h->link],
                                    true, h->data, h->len);
        } else {
            cf_capture_datagram(r->e, r->lfd[h->link], (struct sockaddr *)&h->peer, h->peer_len, false, h->data,
                                h->len);
            feed_datagram(r, h->link, h->data, h->len);
        }
        free(h);
    }
    if (!r->held_dgrams)
        return UINT64_MAX;
    uint64_t now = mono_usec();
    return r->held_dgrams->due_usec > now ? r->held_dgrams->due_usec - now : 0;
}

static void dgram_held_free(struct grun *r)
{
    while (r->held_dgrams) {
        struct dheld *h = r->held_dgrams;
        r->held_dgrams = h->next;
        free(h);
    }
}

/* Datagram protocols: read every link for up to ms (or until a message
 * arrives when stop_on_message); each datagram is one call of the session. */
static void pump_dgram(struct grun *r, int ms, bool stop_on_message)
{
    struct timespec until = cf_after_ms((unsigned)ms);
    while (!r->decided) {
        int left = cf_ms_until(until), dl = cf_ms_until(r->deadline);
        if (dl < left)
            left = dl;
        struct pollfd pf[CF_MAX_LINKS];
        unsigned which[CF_MAX_LINKS], n = 0;
        for (unsigned k = 0; k < CF_MAX_LINKS; k++)
            if (r->lfd[k] >= 0) {
                pf[n] = (struct pollfd){r->lfd[k], POLLIN, 0};
                which[n++] = k;
            }
        if (n == 0)
            return;
        unsigned before = r->qcount;
        uint64_t next = r->impair ? dgram_release(r) : UINT64_MAX;
        if (stop_on_message && r->qcount > before)
            return;
        bool held_first = next != UINT64_MAX && (uint64_t)left * 1000u > next;
        if (held_first)
            left = (int)((next + 999u) / 1000u);
        int got_n = poll(pf, n, left);
        if (got_n < 0 && errno == EINTR)
            continue;
        if (got_n == 0 && held_first)
            continue; /* a held datagram is due */
        if (got_n <= 0)
            return;
        for (unsigned i = 0; i < n && !r->decided; i++) {
            if (!(pf[i].revents & (POLLIN | POLLERR)))
                continue;
            static uint8_t buf[65536];
            struct sockaddr_storage from;
            socklen_t fl = sizeof from;
            ssize_t got = recvfrom(pf[i].fd, buf, sizeof buf, MSG_TRUNC, (struct sockaddr *)&from, &fl);
            if (got < 0)
                continue; /* EAGAIN, or an ICMP error of an earlier send (port unreachable) */
            size_t len = (size_t)got > sizeof buf ? sizeof buf : (size_t)got;
            dgram_pass(r, false, which[i], (struct sockaddr *)&from, fl, buf, len);
        }
        if (stop_on_message && r->qcount > before)
            return;
        if (cf_ms_until(until) == 0)
            return;
    }
}

/* How long pump reads: for the whole time, until a message is queued, or
 * until one read brought bytes (a module that acts after every read). */
enum pump_mode { PUMP_FOR, PUMP_UNTIL_MESSAGE, PUMP_ONE_READ };

/* Read what the target sends for up to ms. 1: bytes came, 0: none, -1:
 * the target closed (now or before). */
static int pump(struct grun *r, int ms, enum pump_mode mode)
{
    if (r->dgram) {
        unsigned before = r->qcount;
        pump_dgram(r, ms, mode != PUMP_FOR);
        return r->qcount > before;
    }
    struct timespec until = cf_after_ms((unsigned)ms);
    int any = 0;
    while (!r->closed && !r->decided) {
        int left = cf_ms_until(until), dl = cf_ms_until(r->deadline);
        if (dl < left)
            left = dl;
        struct pollfd pf = {r->fd, POLLIN, 0};
        int n = poll(&pf, 1, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return any;
        /* TCP urgent data stays in the stream and the read stops at its mark */
        if (r->p->session_urgent && !r->probe && sockatmark(r->fd) == 1) {
            r->p->session_urgent(r->session, &r->rx);
            judge_rx(r);
        }
        uint8_t buf[32768];
        ssize_t got = recv(r->fd, buf, sizeof buf, 0);
        if (got < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (got <= 0) {
            r->closed = true;
            if (r->flow_on)
                got < 0 ? vn_tcp_rst(&r->flow, r->c->passive ? VN_C2S : VN_S2C)
                        : vn_tcp_fin(&r->flow, r->c->passive ? VN_C2S : VN_S2C);
            if (r->p->session_finish)
                r->p->session_finish(r->session, &r->rx);
            judge_rx(r);
            return -1;
        }
        any = 1;
        if (r->flow_on)
            vn_tcp_send_segment(&r->flow, r->c->passive ? VN_C2S : VN_S2C, buf, (size_t)got);
        unsigned before = r->qcount;
        r->feed_frame = last_frame(r); /* the read's, not a later packet's the relay recorded meanwhile */
        r->p->session_feed(r->session, buf, (size_t)got, on_message, r, &r->rx);
        judge_rx(r);
        r->feed_frame = 0;
        if (r->p->session_unframed) {
            if (r->p->session_unframed(r->session, NULL, 0) == 0)
                r->unframed_frame = 0;
            else if (r->unframed_frame == 0)
                r->unframed_frame = last_frame(r);
        }
        if (mode == PUMP_ONE_READ || (mode == PUMP_UNTIL_MESSAGE && r->qcount > before))
            return 1;
        if (cf_ms_until(until) == 0)
            return 1;
    }
    return r->closed ? -1 : any;
}

static int write_all(struct grun *r, const uint8_t *b, size_t n)
{
    while (n) {
        ssize_t w = send(r->fd, b, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && wait_writable(r, r->fd) == 0)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

static void keep_echo(struct grun *r, const struct cf_encoded *enc)
{
    if (enc->msg_offset == CF_MSG_NO_ECHO)
        return;
    if (enc->msg_offset == 0)
        r->echo_len = 0;
    size_t end = (size_t)enc->msg_offset + enc->payload_len;
    if (enc->msg_offset > GECHO_MAX || end > GECHO_MAX)
        return;
    uint8_t *grown = realloc(r->echo, end ? end : 1);
    if (!grown)
        return;
    r->echo = grown;
    memcpy(r->echo + enc->msg_offset, enc->bytes + enc->payload_off, enc->payload_len);
    if (end > r->echo_len)
        r->echo_len = end;
}

/* What the target had sent before the tester's write is no reaction to it
 * (expect-close, issue 29: a greeting sent before an error reached it). */
static void mark_before_write(struct grun *r)
{
    for (unsigned i = 0; i < r->qcount; i++)
        r->queue[i].before_write = true;
}

/* Write one encoded message the way the step says: after the held bytes,
 * in writes of st->split bytes (each its own TCP segment: TCP_NODELAY, and
 * a pause of 2 ms between them), or held for the next write (hold); a
 * datagram protocol's as one datagram out of the step's link. */
static int put_bytes(struct grun *r, const struct cf_step *st, const struct cf_encoded *enc, bool hold)
{
    unsigned k = st->link;
    if (r->dgram && (r->lfd[k] < 0 || r->lto_len[k] == 0)) {
        errno = EDESTADDRREQ;
        return -1;
    }
    if (r->dgram)
        return dgram_pass(r, true, k, (struct sockaddr *)&r->lto[k], r->lto_len[k], enc->bytes, enc->len);
    if (!hold)
        mark_before_write(r);
    if (!cf_bytes_append(&r->held, &r->held_len, &r->held_cap, enc->bytes, enc->len)) {
        errno = ENOMEM;
        return -1;
    }
    if (hold)
        return 0;
    size_t n = r->held_len, piece = st->split ? st->split : n;
    r->held_len = 0;
    for (size_t at = 0; at < n; at += piece) {
        size_t k = n - at < piece ? n - at : piece;
        if (at) {
            struct timespec pause = {0, 2000000};
            nanosleep(&pause, NULL);
        }
        if (r->flow_on)
            vn_tcp_send_segment(&r->flow, r->c->passive ? VN_S2C : VN_C2S, r->held + at, k);
        if (write_all(r, r->held + at, k) < 0)
            return -1;
    }
    return 0;
}

/* A value only the module knows at run time ($var, +N): waits (reading the
 * target) while the module has it not yet. 0, or -1 with the verdict decided. */
static int resolve(struct grun *r, const struct cf_step *st, unsigned field, unsigned var, bool relative,
                   int64_t value, const struct cf_msg *m, int64_t *out)
{
    if (!r->p->resolve) {
        gdecide(r, CF_SKIP, VW_REQ_NONE, "%s: %s=%s is not supported by the generic runner", r->p->title,
                field < CF_MAX_FIELDS ? cf_proto_field_name(r->p, field) : "repeat", relative ? "+N" : "$var");
        return -1;
    }
    struct timespec until = cf_after_ms(r->e->slack_ms);
    char why[300] = "";
    int rc;
    for (bool final = false;; final = final || cf_ms_until(until) == 0 || r->closed || r->decided) {
        rc = r->p->resolve(r->session, field, var, relative, value, m, final, out, why, sizeof why);
        if (rc != CF_RESOLVE_WAIT || final)
            break;
        if (!(cf_ms_until(until) == 0 || r->closed || r->decided))
            pump(r, cf_ms_until(until), PUMP_ONE_READ);
    }
    if (r->decided)
        return -1;
    if (rc == CF_RESOLVED)
        return 0;
    if (rc == CF_RESOLVE_WAIT || rc == CF_RESOLVE_NA)
        gdecide(r, CF_NOT_APPLICABLE, VW_REQ_NONE, "%s", why);
    else
        gdecide(r, CF_FAIL, st->req, "case error: %s", why);
    return -1;
}

/* The tester's encoded messages go out in one write (a step's repeats
 * together; a datagram protocol's one datagram each): the session sees
 * each first (C97). 0, or -1 (decided, or the target closed: no verdict of
 * its own). */
static int send_encoded(struct grun *r, const struct cf_step *st, struct cf_encoded *enc, unsigned n)
{
    for (unsigned i = 0; i < n && r->p->session_sending; i++) {
        char why[300] = "";
        if (r->p->session_sending(r->session, &enc[i], why, sizeof why) != 0) {
            gdecide(r, CF_NOT_APPLICABLE, VW_REQ_NONE, "%s", why);
            return -1;
        }
    }
    int rc = 0;
    for (unsigned i = 0; i < n && rc == 0; i++) /* the repeats are held and go with the last */
        rc = put_bytes(r, st, &enc[i], st->hold || i + 1 < n);
    if (rc == 0) {
        for (unsigned i = 0; i < n; i++) {
            keep_echo(r, &enc[i]);
            if (r->p->session_sent)
                r->p->session_sent(r->session, &enc[i]);
        }
        return 0;
    }
    if (r->dgram && errno == EDESTADDRREQ) {
        /* the case's or the command line's mistake, not the target's */
        gdecide(r, CF_SKIP, VW_REQ_NONE, "link %u has nowhere to send (run --link %u=[ADDR:]PORT,HOST:PORT)",
                st->link, st->link);
        return -1;
    }
    if (!r->dgram && (errno == EPIPE || errno == ECONNRESET)) {
        /* the target closed first: the tester's own failed write is no
         * verdict (issue 29); the steps that follow judge the close
         * (expect-close passes, an if-open expect is not applicable) */
        pump(r, 0, PUMP_FOR);
        if (!r->closed) {
            r->closed = true;
            if (r->p->session_finish)
                r->p->session_finish(r->session, &r->rx);
            judge_rx(r);
        }
        return -1;
    }
    gdecide(r, CF_FAIL, st->req, "sending the %s %s failed: %s (%s)", cf_proto_type_name(r->p, st->type), r->p->unit,
            strerror(errno), r->dgram ? "the link's interface is down?" : "the target closed?");
    return -1;
}

/* While the tester waits: what it owes the target goes now (idle_send). */
static void send_idle(struct grun *r)
{
    if (!r->p->idle_send || r->probe || r->decided || r->closed || r->fd < 0 || !r->session)
        return;
    struct cf_encoded enc = {0};
    if (r->p->idle_send(r->session, &enc) == 1) {
        static const struct cf_step idle_step; /* no split, no hold */
        send_encoded(r, &idle_step, &enc, 1);
    }
    free(enc.bytes);
}

/* send_ready: wait until the target lets the step's message go. 0, or -1 decided. */
static int wait_send_ready(struct grun *r, const struct cf_step *st)
{
    if (!r->p->send_ready || r->probe || !r->session)
        return 0;
    struct timespec until = cf_after_ms(r->e->slack_ms);
    char why[300] = "";
    while (!r->decided && r->p->send_ready(r->session, st, why, sizeof why) == 0) {
        int left = cf_ms_until(until);
        if (left == 0 || r->closed) {
            gdecide(r, CF_NOT_APPLICABLE, VW_REQ_NONE, "%s", why);
            return -1;
        }
        send_idle(r);
        pump(r, left, PUMP_ONE_READ);
    }
    return r->decided ? -1 : 0;
}

#define GREPEAT_MAX 64

static void do_send(struct grun *r, const struct cf_step *st)
{
    unsigned times = st->repeat ? st->repeat : 1;
    if (st->repeat_var != CF_VAR_NONE) {
        int64_t n;
        if (resolve(r, st, CF_MAX_FIELDS, st->repeat_var, false, st->repeat_off, NULL, &n) < 0)
            return;
        if (n < 1 || n > GREPEAT_MAX) {
            gdecide(r, CF_FAIL, st->req, "case error: repeat count %lld is outside 1..%d", (long long)n, GREPEAT_MAX);
            return;
        }
        times = (unsigned)n;
    }
    if (times > GREPEAT_MAX)
        times = GREPEAT_MAX;
    if (wait_send_ready(r, st) < 0)
        return;
    /* every repeat is encoded before the session sees any (the same state for each) */
    struct cf_encoded enc[GREPEAT_MAX] = {{0}};
    unsigned n = 0;
    for (unsigned i = 0; i < times && !r->decided; i++) {
        int64_t vals[CF_MAX_FIELDS] = {0};
        for (unsigned f = 0; f < CF_MAX_FIELDS && !r->decided; f++) {
            if (!st->set[f])
                continue;
            vals[f] = st->val[f];
            if (st->var[f] != CF_VAR_NONE && resolve(r, st, f, st->var[f], false, vals[f], NULL, &vals[f]) < 0)
                break;
            if (st->rel[f] && resolve(r, st, f, CF_VAR_NONE, true, vals[f], NULL, &vals[f]) < 0)
                break;
        }
        if (r->decided)
            break;
        char why[200] = "";
        if (r->p->encode(r->session, st, vals, &enc[n], why, sizeof why) < 0) {
            /* the case asks for what the encoder cannot write: the case's error */
            gdecide(r, CF_SKIP, VW_REQ_NONE, "cannot encode the %s: %s", r->p->unit, why);
            free(enc[n].bytes);
            break;
        }
        n++;
    }
    if (!r->decided && n)
        send_encoded(r, st, enc, n);
    for (unsigned i = 0; i < n; i++)
        free(enc[i].bytes);
}

static const char *op_text(enum cf_op op)
{
    return op == CF_OP_EQ ? "=" : op == CF_OP_NE ? "!=" : op == CF_OP_LE ? "<=" : ">=";
}

/* The values an expect compares with, its $variables resolved (relative
 * values are the message's: resolved in matches). 0, or -1 decided. */
static int expected_values(struct grun *r, const struct cf_step *st, int64_t *want)
{
    for (unsigned k = 0; k < st->nmatch; k++) {
        const struct cf_match *mt = &st->match[k];
        want[k] = mt->value;
        if (mt->var != CF_VAR_NONE && resolve(r, st, mt->field, mt->var, false, mt->value, NULL, &want[k]) < 0)
            return -1;
    }
    return 0;
}

/* Does m match the step's fields? 0 yes, -1 no (why in msg), -2 decided
 * (a relative value the module cannot resolve: the case's error). */
static int matches(struct grun *r, const struct cf_step *st, const int64_t *want, const struct cf_msg *m, char *msg,
                   size_t n)
{
    if (st->type != CF_TYPE_ANY && m->type != st->type && !(st->has_type_alt && m->type == st->type_alt)) {
        char got[200];
        r->p->describe(m, got, sizeof got);
        snprintf(msg, n, "expected %s, got %s", cf_proto_type_name(r->p, st->type), got);
        return -1;
    }
    for (unsigned k = 0; k < st->nmatch; k++) {
        const struct cf_match *mt = &st->match[k];
        int64_t v, expected = want[k];
        if (r->p->field_ignored && r->p->field_ignored(m, mt->field))
            continue;
        if (!r->p->field_value(m, mt->field, &v)) {
            char got[200];
            r->p->describe(m, got, sizeof got);
            snprintf(msg, n, "%s %s has no field %s (%s)", cf_proto_type_name(r->p, m->type), r->p->unit,
                     cf_proto_field_name(r->p, mt->field), got);
            return -1;
        }
        if (mt->relative && resolve(r, st, mt->field, CF_VAR_NONE, true, expected, m, &expected) < 0)
            return -2;
        int64_t got = mt->mask ? (int64_t)((uint64_t)v & mt->mask) : v;
        bool ok = mt->op == CF_OP_EQ ? got == expected : mt->op == CF_OP_NE ? got != expected
                  : mt->op == CF_OP_LE ? got <= expected : got >= expected;
        if (!ok) {
            char whole[200], masked[32] = "";
            r->p->describe(m, whole, sizeof whole);
            if (mt->mask)
                snprintf(masked, sizeof masked, "&%llu", (unsigned long long)mt->mask);
            const char *f = cf_proto_field_name(r->p, mt->field);
            snprintf(msg, n, "expected %s %s%s%s%lld, got %s%s=%lld (%s)",
                     st->type == CF_TYPE_ANY ? "any" : cf_proto_type_name(r->p, st->type), f, masked, op_text(mt->op),
                     (long long)expected, f, masked, (long long)got, whole);
            return -1;
        }
    }
    if (r->p->match_more && (st->data_written || st->data_capture) &&
        r->p->match_more(r->session, r->c, st, m, msg, n) < 0)
        return -1;
    if (st->data_echo) {
        bool ok = m->msg_offset <= r->echo_len && m->payload_len <= r->echo_len - m->msg_offset &&
                  (m->payload_len == 0 || memcmp(m->payload, r->echo + m->msg_offset, m->payload_len) == 0);
        if (!ok) {
            snprintf(msg, n, "%s payload (%zu bytes at %llu) is not the tester's last message (%zu bytes)",
                     cf_proto_type_name(r->p, m->type), m->payload_len, (unsigned long long)m->msg_offset, r->echo_len);
            return -1;
        }
    }
    if ((st->data_written || st->data_capture) && !r->p->match_more) {
        snprintf(msg, n, "data=written is not supported for %s", r->p->title);
        return -1;
    }
    return 0;
}

static void take_last(struct grun *r, struct gmsg *g)
{
    if (r->have_last)
        msg_release(r, &r->last);
    r->last = *g;
    r->have_last = true;
    memset(g, 0, sizeof *g);
}

/* C96: a capture case's difference waits for the bytes already in flight
 * (until 20 ms pass without any): a rule the target broke in them explains
 * the difference and is reported instead. */
static void settle_difference(struct grun *r)
{
    if (r->c->from_capture && (r->flags & CF_RUNNER_DRAIN))
        while (!r->decided && cf_ms_until(r->deadline) > 0 && pump(r, 20, PUMP_ONE_READ) > 0) {
        }
}

/* A message gathered in pieces is compared as it is. */
static bool flush_gathered(struct grun *r)
{
    return r->p->session_flush && r->session && r->p->session_flush(r->session, on_message, r);
}

static void do_expect(struct grun *r, const struct cf_step *st)
{
    unsigned wait_ms = st->wait_ms ? st->wait_ms : r->e->slack_ms;
    struct timespec until = cf_after_ms(wait_ms);
    int64_t want[CF_MAX_MATCHES];
    if (expected_values(r, st, want) < 0)
        return;
    bool keep = (r->flags & CF_RUNNER_AWAIT_KEEPS) != 0;
    char why[400] = "";
    unsigned passed = 0;
    for (;;) {
        passed = 0;
        for (unsigned i = 0; i < r->qcount && !r->decided;) {
            if (st->link_set && r->queue[i].link != st->link) {
                i++;
                continue;
            }
            int rc = matches(r, st, want, &r->queue[i].m, why, sizeof why);
            if (rc == -2)
                return;
            struct gmsg got;
            if (rc == 0) {
                queue_take(r, i, &got);
                if (r->e->capture && !(r->flags & CF_RUNNER_FRAMES_AT_VERDICT))
                    cf_result_add_frame(r->res, got.frame);
                take_last(r, &got);
                return;
            }
            if (!st->skip_other) {
                char na[300];
                int other = r->p->unmatched ? r->p->unmatched(r->c, st, &r->queue[i].m, na, sizeof na) : 0;
                if (other == CF_UNMATCHED_PASS_OVER) {
                    queue_take(r, i, NULL);
                    continue;
                }
                if (other == CF_UNMATCHED_REFUSED) {
                    gdecide(r, CF_NOT_APPLICABLE, VW_REQ_NONE, "%s", na);
                    return;
                }
                verdict_frame(r, r->queue[i].frame);
                queue_take(r, i, NULL);
                settle_difference(r);
                if (r->dgram && st->link_set)
                    gdecide(r, CF_FAIL, st->req, "on link %u: %s", st->link, why);
                else
                    gdecide(r, CF_FAIL, st->req, "%s", why);
                return;
            }
            passed++;
            if (keep)
                i++; /* C94: it stays for a later step */
            else
                queue_take(r, i, NULL);
        }
        if (r->decided)
            return;
        const char *what = st->type == CF_TYPE_ANY ? "anything" : cf_proto_type_name(r->p, st->type);
        if (r->closed && st->na_if_closed) {
            gdecide(r, CF_NOT_APPLICABLE, VW_REQ_NONE, "the target closed the connection instead of sending %s "
                    "(if-open: its choice, the case does not apply)", what);
            return;
        }
        if (r->closed) {
            verdict_frame(r, last_frame(r));
            gdecide(r, CF_FAIL, st->req, "the target closed the connection instead of sending %s%s%s", what,
                    passed ? "; passed over before: " : "", passed ? why : "");
            return;
        }
        int left = cf_ms_until(until), dl = cf_ms_until(r->deadline);
        if ((left == 0 || dl == 0) && flush_gathered(r))
            continue; /* a message that never ended is compared as it is */
        if (left == 0 || dl == 0) {
            if (r->p->session_stalled && r->session) { /* C45: what the silence settles */
                r->p->session_stalled(r->session, &r->rx);
                judge_rx(r);
                if (r->decided)
                    return;
            }
            char where[32] = "", unframed[300] = "";
            if (r->dgram && st->link_set)
                snprintf(where, sizeof where, " on link %u", st->link);
            if (passed) {
                gdecide(r, CF_TIMEOUT, st->req, "no %s%s within %u ms; %u other %s(s) arrived, the last: %s", what,
                        where, wait_ms, passed, r->p->unit, why);
            } else if (r->p->session_unframed && r->session &&
                       r->p->session_unframed(r->session, unframed, sizeof unframed) > 0) {
                /* a target that answers garbage must not read as one that answered nothing */
                verdict_frame(r, r->unframed_frame);
                verdict_frame(r, last_frame(r));
                gdecide(r, CF_TIMEOUT, st->req, "no %s within %u ms; %s", what, wait_ms, unframed);
            } else {
                gdecide(r, CF_TIMEOUT, st->req, "no %s%s%s%s within %u ms",
                        st->type == CF_TYPE_ANY ? "" : cf_proto_type_name(r->p, st->type),
                        st->type == CF_TYPE_ANY ? "" : " ",
                        r->p->unit, where, wait_ms);
            }
            return;
        }
        send_idle(r);
        /* a message whose next piece does not come for a while is compared
         * as it is, without waiting for the whole wait */
        int ms = left < dl ? left : dl;
        if (r->p->session_flush && r->p->flush_quiet_ms && ms > (int)r->p->flush_quiet_ms)
            ms = (int)r->p->flush_quiet_ms;
        if (pump(r, ms, r->p->idle_send || r->p->session_flush ? PUMP_ONE_READ : PUMP_UNTIL_MESSAGE) == 0)
            flush_gathered(r);
    }
}

static void do_check(struct grun *r, const struct cf_step *st)
{
    if (!r->have_last) {
        gdecide(r, CF_FAIL, st->req, "'check'/'only-if' without a matched %s before it", r->p->unit);
        return;
    }
    char why[400];
    int64_t want[CF_MAX_MATCHES];
    if (expected_values(r, st, want) < 0)
        return;
    int rc = matches(r, st, want, &r->last.m, why, sizeof why);
    if (rc != -1)
        return;
    if (st->kind == CF_STEP_ONLY_IF) {
        gdecide(r, CF_NOT_APPLICABLE, st->req, "the target made a choice the draft allows, and the case needs "
                "another: %s", why);
        return;
    }
    verdict_frame(r, r->last.frame);
    settle_difference(r);
    gdecide(r, CF_FAIL, st->req, "%s", why);
}

/* expect-nothing: no message (on the step's link) is queued or arrives
 * within the wait (a drop). */
static void expect_nothing(struct grun *r, const struct cf_step *st)
{
    unsigned ms = st->wait_ms ? st->wait_ms : r->e->slack_ms;
    struct timespec until = cf_after_ms(ms);
    for (;;) {
        int at = queue_first(r, st);
        if (at >= 0) {
            char got[200], where[32] = "";
            r->p->describe(&r->queue[at].m, got, sizeof got);
            if (r->dgram)
                snprintf(where, sizeof where, " on link %u", r->queue[at].link);
            if (r->e->capture)
                cf_result_add_frame(r->res, r->queue[at].frame);
            gdecide(r, CF_FAIL, st->req, "the target sent %s%s where nothing was expected within %u ms", got, where,
                    ms);
            return;
        }
        if (r->decided || r->closed || cf_ms_until(until) == 0 || cf_ms_until(r->deadline) == 0)
            return;
        pump(r, cf_ms_until(until), PUMP_UNTIL_MESSAGE);
    }
}

/* ------------------------------------------- the node's output (C90) */

static off_t node_log_size(const struct cf_engine *e)
{
    struct stat sb;
    return e->node_log_fd >= 0 && fstat(e->node_log_fd, &sb) == 0 ? sb.st_size : 0;
}

/* The next whole line of the node's output after r->log_mark that matches
 * re: 1 (the line, shortened, in line; its first subexpression as a
 * number in *sub, -1 without one), 0 none yet. The mark passes every
 * whole line read. */
static int node_log_next(struct grun *r, const regex_t *re, char *line, size_t linelen, long long *sub)
{
    char buf[2048];
    for (;;) {
        ssize_t n = pread(r->e->node_log_fd, buf, sizeof buf - 1, r->log_mark);
        if (n <= 0)
            return 0;
        buf[n] = 0;
        char *nl = memchr(buf, '\n', (size_t)n);
        if (!nl) {
            if ((size_t)n < sizeof buf - 1)
                return 0; /* not whole yet */
            r->log_mark += n; /* an overlong line: passed over */
            continue;
        }
        *nl = 0;
        r->log_mark += nl - buf + 1;
        regmatch_t m[2];
        if (regexec(re, buf, 2, m, 0) != 0)
            continue;
        size_t keep = strlen(buf) < linelen ? strlen(buf) : linelen - 1; /* shortened for messages */
        memcpy(line, buf, keep);
        line[keep] = 0;
        *sub = -1;
        if (re->re_nsub >= 1 && m[1].rm_so >= 0) {
            buf[m[1].rm_eo] = 0;
            char *end;
            long long v = strtoll(buf + m[1].rm_so, &end, 10);
            *sub = *end || end == buf + m[1].rm_so || v < 0 ? -2 : v;
        }
        return 1;
    }
}

/* expect-log / expect-no-log: a line of the node's output that matches the
 * run's pattern (a module sets it: a delivery log) comes within the
 * wait, or none does; the links are read meanwhile (the session judges
 * what the node sends). With a subexpression, the line's number is the
 * data length of the tester's last message. */
static void expect_node_log(struct grun *r, const struct cf_step *st)
{
    const char *pattern = r->e->node_log_regex;
    bool want = st->node_log == CF_NODE_LOG_LINE;
    unsigned ms = st->wait_ms ? st->wait_ms : r->e->slack_ms;
    if (!pattern || r->e->node_log_fd < 0) {
        gdecide(r, CF_NOT_APPLICABLE, VW_REQ_NONE, "%s needs %s", want ? "expect-log" : "expect-no-log",
                !pattern ? "the pattern of the node's lines (a run option of the module's)"
                         : "the node's output: the tester reads that of a node it starts (run --topology, "
                           "--node-cmd) or a file a run option of the module's names");
        return;
    }
    regex_t re;
    if (regcomp(&re, pattern, REG_EXTENDED) != 0) {
        gdecide(r, CF_SKIP, VW_REQ_NONE, "bad pattern of the node's lines '%s' (a POSIX extended regex)", pattern);
        return;
    }
    struct timespec until = cf_after_ms(ms);
    for (;;) {
        char line[200];
        long long sub;
        int got = node_log_next(r, &re, line, sizeof line, &sub);
        if (got && want && sub != -1 && (sub < 0 || (size_t)sub != r->echo_len))
            gdecide(r, CF_FAIL, st->req, "the node's line says %lld data bytes, the tester's last message had %zu: %s",
                    sub, r->echo_len, line);
        else if (got && !want)
            gdecide(r, CF_FAIL, st->req, "the node's output has a line matching '%s' where none was expected "
                    "within %u ms: %s", pattern, ms, line);
        if (got || r->decided)
            break;
        int left = cf_ms_until(until);
        if (left == 0 || cf_ms_until(r->deadline) == 0) {
            if (want)
                gdecide(r, CF_TIMEOUT, st->req, "no line of the node's output matched '%s' within %u ms", pattern,
                        ms);
            break;
        }
        pump(r, left < 20 ? left : 20, PUMP_FOR);
    }
    regfree(&re);
}

/* A second 'connect' (or 'accept') in one case (C44): the connection so
 * far ends (FIN; a datagram protocol's links close), what it left unread
 * is dropped, and the new connection gets a new session; a rule the old
 * one broke has decided already. */
static void end_connection(struct grun *r)
{
    if (r->fd >= 0) {
        if (r->flow_on && !r->closed)
            vn_tcp_fin(&r->flow, r->c->passive ? VN_S2C : VN_C2S);
        close(r->fd);
        r->fd = -1;
    }
    r->flow_on = false;
    for (unsigned k = 0; k < CF_MAX_LINKS; k++)
        if (r->lfd[k] >= 0) {
            close(r->lfd[k]);
            r->lfd[k] = -1;
        }
    for (unsigned i = 0; i < r->qcount; i++)
        msg_release(r, &r->queue[i]);
    r->qcount = 0;
    if (r->have_last)
        msg_release(r, &r->last);
    r->have_last = false;
    if (r->session)
        r->p->session_free(r->session);
    r->session = NULL;
    r->closed = false;
    r->held_len = 0;
    r->echo_len = 0;
}

/* A new session for the connection (or the links). */
static void start_session(struct grun *r)
{
    r->session = r->p->session_new(r->c, r->e);
    if (!r->session)
        gdecide(r, CF_SKIP, VW_REQ_NONE, "out of memory for the %s session", r->p->title);
}

/* Datagram protocols: open the tester's links (the case's 'links N'; one
 * not configured skips the case) and the session. */
static void open_links(struct grun *r)
{
    /* a later 'connect' starts over: new sockets, a new session */
    end_connection(r);
    r->log_mark = node_log_size(r->e); /* the node's output from here on is the case's */
    unsigned need = r->c->links ? r->c->links : 1;
    for (unsigned k = 0; k < need && !r->decided; k++) {
        char why[300];
        if (k > 0 && !r->e->links[k].set) {
            gdecide(r, CF_SKIP, VW_REQ_NONE, "the case needs tester link %u (run --link %u=[ADDR:]PORT[,HOST:PORT])",
                    k, k);
            return;
        }
        r->lfd[k] = cf_dgram_open(r->e, k, &r->lto[k], &r->lto_len[k], why, sizeof why);
        if (r->lfd[k] < 0) {
            gdecide(r, CF_SKIP, VW_REQ_NONE, "%s", why);
            return;
        }
    }
    start_session(r);
}

/* Role passive (C44): the implementation's connection on the listen socket
 * (through the relay, the tester's in its namespace), stale ones dropped,
 * after starting --connect-cmd for the case unless it runs already, with
 * a new session. */
static void do_accept(struct grun *r, const struct cf_step *st)
{
    struct cf_engine *e = r->e;
    if (e->listen_fd < 0) {
        gdecide(r, CF_SKIP, VW_REQ_NONE, "a passive case needs listen mode (run --listen PORT)");
        return;
    }
    end_connection(r);
    /* through the relay the tester listens in its namespace (C53) */
    int lfd = r->via_relay ? e->relay_listen_fd : e->listen_fd;
    for (;;) { /* anything left from an earlier case's implementation is stale */
        struct pollfd p = {lfd, POLLIN, 0};
        if (poll(&p, 1, 0) <= 0)
            break;
        int stale = accept(lfd, NULL, NULL);
        if (stale < 0)
            break;
        close(stale);
    }
    if (e->connect_cmd[0] && !r->child) {
        char why[300];
        r->child = cf_spawn_connector(e, r->via_relay ? cf_relay_tester_addr(e->relay) : "127.0.0.1", why, sizeof why);
        if (r->child < 0) {
            r->child = 0;
            gdecide(r, CF_FAIL, st->req, "%s", why);
            return;
        }
    }
    unsigned wait_ms = st->wait_ms ? st->wait_ms : e->accept_ms;
    int left = cf_ms_until(r->deadline);
    struct pollfd p = {lfd, POLLIN, 0};
    if (poll(&p, 1, (int)wait_ms < left ? (int)wait_ms : left) <= 0) {
        gdecide(r, CF_TIMEOUT, st->req, "the implementation did not connect to port %u within %u ms", e->listen_port,
                wait_ms);
        return;
    }
    r->fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (r->fd < 0) {
        gdecide(r, CF_FAIL, st->req, "accept: %s", strerror(errno));
        return;
    }
    cf_tune_socket(r->fd);
    /* through the relay, the capture gets the real packets afterwards */
    r->flow_on = !r->via_relay && cf_capture_flow_open(e, r->fd, true, &r->flow);
    start_session(r);
}

/* C95: expect-close waits for the close alone; what the target sends
 * before it was judged by the session and is no answer. */
static void expect_close_any(struct grun *r, const struct cf_step *st, unsigned ms)
{
    struct timespec until = cf_after_ms(ms);
    while (!r->closed && !r->decided) {
        int left = cf_ms_until(until), dl = cf_ms_until(r->deadline);
        if (left == 0 || dl == 0) {
            verdict_frame(r, last_frame(r));
            gdecide(r, CF_FAIL, st->req, "the target kept the connection open for %u ms", ms);
            return;
        }
        send_idle(r);
        pump(r, left < dl ? left : dl, PUMP_ONE_READ);
    }
    if (r->closed)
        verdict_frame(r, last_frame(r));
}

static void run_steps(struct grun *r)
{
    for (unsigned i = 0; i < r->c->nsteps && !r->decided; i++) {
        const struct cf_step *st = &r->c->steps[i];
        r->step = st;
        if (st->when[0] && (cf_engine_hook_offered(r->e, st->when) == 1) == st->when_not)
            continue; /* 'when [!]HOOK' (C60): for a target that does (not) offer it */
        if (cf_ms_until(r->deadline) == 0) {
            gdecide(r, CF_TIMEOUT, st->req, "the case's timeout (%u ms) ran out", r->c->timeout_ms);
            return;
        }
        switch (st->kind) {
        case CF_STEP_CONNECT: {
            char why[300];
            if (r->dgram) {
                open_links(r);
                break;
            }
            end_connection(r);
            r->fd = r->via_relay ? cf_connect_relayed(r->e, r->e->slack_ms, why, sizeof why)
                                 : cf_connect_target(r->e, r->e->slack_ms, why, sizeof why);
            if (r->fd < 0) {
                gdecide(r, CF_FAIL, st->req, "%s", why);
                return;
            }
            /* through the relay, the capture gets the real packets afterwards */
            r->flow_on = !r->via_relay && cf_capture_flow_open(r->e, r->fd, false, &r->flow);
            start_session(r);
            break;
        }
        case CF_STEP_SEND:
            do_send(r, st);
            break;
        case CF_STEP_EXPECT:
            do_expect(r, st);
            break;
        case CF_STEP_CHECK:
        case CF_STEP_ONLY_IF:
            do_check(r, st);
            break;
        case CF_STEP_EXPECT_CLOSE: {
            unsigned ms = st->wait_ms ? st->wait_ms : r->e->slack_ms;
            if (r->flags & CF_RUNNER_CLOSE_ANY) {
                expect_close_any(r, st, ms);
                break;
            }
            struct timespec until = cf_after_ms(ms);
            /* what the target sent before the tester's last write was no
             * reaction to it: the session judged it, the close is still due */
            while (r->qcount && r->queue[0].before_write)
                queue_take(r, 0, NULL);
            while (!r->closed && !r->decided && !r->qcount && cf_ms_until(until) > 0 &&
                   cf_ms_until(r->deadline) > 0)
                pump(r, cf_ms_until(until), PUMP_UNTIL_MESSAGE);
            if (r->qcount && !r->decided) {
                /* what an expect did not take: the target answered instead of closing */
                char got[200];
                r->p->describe(&r->queue[0].m, got, sizeof got);
                gdecide(r, CF_FAIL, st->req, "the target sent %s instead of closing the connection", got);
            } else if (!r->closed)
                gdecide(r, CF_FAIL, st->req, "the target did not close the connection within %u ms", ms);
            break;
        }
        case CF_STEP_EXPECT_OPEN: {
            unsigned ms = st->wait_ms ? st->wait_ms : r->e->slack_ms;
            pump(r, (int)ms, PUMP_FOR);
            if (r->closed)
                verdict_frame(r, last_frame(r));
            if (r->closed)
                gdecide(r, CF_FAIL, st->req, "the target closed the connection (expected it open for %u ms)", ms);
            break;
        }
        case CF_STEP_CLOSE:
            mark_before_write(r);
            shutdown(r->fd, SHUT_WR);
            if (r->flow_on)
                vn_tcp_fin(&r->flow, r->c->passive ? VN_S2C : VN_C2S);
            break;
        case CF_STEP_WAIT:
            pump(r, (int)st->wait_ms, PUMP_FOR);
            break;
        case CF_STEP_ACCEPT:
            do_accept(r, st);
            break;
        case CF_STEP_EXPECT_NOTHING:
            if (st->node_log)
                expect_node_log(r, st);
            else
                expect_nothing(r, st);
            break;
        }
    }
    r->step = NULL;
    /* C96: what is still in flight is checked too (a rule broken after the last expect) */
    if ((r->flags & CF_RUNNER_DRAIN) && !r->decided && r->fd >= 0)
        while (pump(r, 20, PUMP_ONE_READ) > 0 && !r->decided) {
        }
}

/* Datagram protocols: the links stay open a moment after the case and what
 * still comes in is read and left unjudged, so that a late datagram of
 * this case (a router's second piece of a message) is not taken for the
 * next case's on the same port (C47). */
#define GDRAIN_MS 150
static void drain_links(struct grun *r)
{
    struct timespec until = cf_after_ms(GDRAIN_MS);
    for (;;) {
        struct pollfd pf[CF_MAX_LINKS];
        nfds_t n = 0;
        for (unsigned k = 0; k < CF_MAX_LINKS; k++)
            if (r->lfd[k] >= 0)
                pf[n++] = (struct pollfd){r->lfd[k], POLLIN, 0};
        int left = cf_ms_until(until);
        if (n == 0 || left == 0 || poll(pf, n, left) <= 0)
            return;
        for (nfds_t i = 0; i < n; i++)
            if (pf[i].revents & (POLLIN | POLLERR)) {
                uint8_t byte;
                (void)recv(pf[i].fd, &byte, sizeof byte, MSG_TRUNC);
            }
    }
}

/* After a relay case (C46): the relay's real packets go into the run's
 * capture, the module judges them (judge_recording), and every packet
 * action must have happened (else the case did not test what it says: a
 * failure under its first requirement). decided: the case has its verdict
 * already, which stands. */
static void relay_case_finish(struct cf_engine *e, const struct cf_case *c, struct cf_result *res, bool decided)
{
    struct timespec pause = {0, 50L * 1000000L}; /* the last FIN and ACK cross the relay */
    nanosleep(&pause, NULL);
    unsigned done[CF_MAX_PACKET_ACTIONS];
    size_t n;
    struct cf_relay_packet *pk = cf_relay_take(e->relay, &n, done, CF_MAX_PACKET_ACTIONS);
    unsigned first_frame = e->capture ? (unsigned)vn_pcap_frames(e->capture) : 0;
    if (e->capture && pk)
        cf_relay_write(e->capture, pk, n); /* a write error shows when the run closes the file */
    if (e->impair.on) { /* what the impairment did (C61) */
        char what[160];
        cf_impair_summary(pk, n, what, sizeof what);
        snprintf(res->impaired, sizeof res->impaired, "%s (seed %llu)", what[0] ? what : "nothing impaired",
                 (unsigned long long)(n ? pk[0].seed : cf_impair_case_seed(&e->impair, res->id)));
    }
    if (c->proto->judge_recording)
        c->proto->judge_recording(e, c, pk, n, first_frame, res, &decided);
    for (unsigned i = 0; i < c->npacket && !decided; i++) {
        const struct cf_relay_action *a = &c->packet[i];
        unsigned want = a->last - a->first + 1;
        if (done[i] == want)
            continue;
        char text[64];
        cf_relay_action_text(a, text, sizeof text);
        decided = true;
        res->verdict = CF_FAIL;
        res->failed_req = c->reqs[0];
        cf_result_set_message(res, "%s: the relay applied 'packet %s' to %u of its %u segments: the %s sent fewer "
                              "data segments", c->file, text, done[i], want,
                              a->side == CF_RELAY_TESTER ? "tester" : "target");
        if (e->capture)
            cf_result_add_frame(res, (unsigned)vn_pcap_frames(e->capture));
    }
    cf_relay_packets_free(pk, n);
}

/* Datagram links under impairment (C61): the draft's rules apply (a
 * datagram protocol has no retransmission), so a case the impairment touched and that did not
 * pass lost its evidence to the impairment, not to the node: inconclusive,
 * never a failure under a protocol rule. */
static void impair_verdict(struct grun *r)
{
    struct cf_result *res = r->res;
    char what[160];
    cf_impair_counts_text(&r->imp, what, sizeof what);
    snprintf(res->impaired, sizeof res->impaired, "datagrams: %s (seed %llu)", what[0] ? what : "none impaired",
             (unsigned long long)cf_impair_case_seed(&r->e->impair, r->c->id));
    /* a fixed delay keeps the order and arrives within the slack: the evidence stands */
    const struct cf_impair *imp = &r->e->impair;
    bool destroyed = r->imp.lost || r->imp.copied || r->imp.reordered ||
                     (r->imp.delayed && imp->delay_min_us != imp->delay_max_us);
    if (!destroyed || (res->verdict != CF_FAIL && res->verdict != CF_TIMEOUT))
        return;
    char was[CF_MESSAGE_MAX];
    snprintf(was, sizeof was, "%s", res->message);
    res->verdict = CF_INCONCLUSIVE;
    res->failed_req = VW_REQ_NONE;
    snprintf(res->message, sizeof res->message, "inconclusive: the impairment destroyed the evidence (datagrams: "
             "%s; a datagram link has no retransmission): %.*s", what, (int)(sizeof res->message - 360), was);
}

static void run_case(struct cf_engine *e, const struct cf_case *c, struct cf_result *res, bool probe)
{
    struct grun *r = calloc(1, sizeof *r);
    if (!r) {
        res->verdict = CF_SKIP;
        cf_result_set_message(res, "%s: out of memory", c->file);
        return;
    }
    r->e = e;
    r->c = c;
    r->p = c->proto;
    r->res = res;
    r->fd = -1;
    r->probe = probe;
    r->flags = c->proto->runner_flags;
    r->dgram = c->proto->transport == CF_TRANSPORT_DATAGRAM;
    for (unsigned k = 0; k < CF_MAX_LINKS; k++)
        r->lfd[k] = -1;
    r->deadline = cf_after_ms(c->timeout_ms);
    if (r->dgram && e->impair.on) {
        uint64_t seed = cf_impair_case_seed(&e->impair, c->id);
        r->impair = true;
        r->rng[0] = seed ^ 0x7465737465720000ull;
        r->rng[1] = seed ^ 0x7461726765740000ull;
    }
    if ((c->from_capture && !c->proto->load_capture_case) || (c->needs_region && !c->proto->resolve) ||
        (c->relay && r->dgram))
        gdecide(r, CF_SKIP, VW_REQ_NONE, "%s cases run only scripted (or from a capture the module loads as "
                "steps), without a region, and through the relay only over TCP (the generic runner)",
                c->proto->title);
    else if (probe)
        run_steps(r);
    else if ((c->relay || e->relay_all) && !r->dgram &&
             !(c->passive ? cf_relay_ready_passive(e) : cf_relay_ready_active(e)))
        gdecide(r, CF_SKIP, VW_REQ_NONE, "needs the packet relay: %s",
                c->passive ? e->relay_why_passive : e->relay_why_active);
    else {
        if ((c->relay || e->relay_all) && !r->dgram) {
            r->via_relay = true;
            r->deadline = cf_after_ms(c->timeout_ms); /* setting up the relay is not the case's time */
            r->relay_base = e->capture ? (unsigned)vn_pcap_frames(e->capture) : 0;
            /* its packet actions, and the run's impairment (C61) seeded with the case's id */
            cf_relay_begin(e->relay, c->packet, c->npacket);
            cf_relay_impair(e->relay, &e->impair, e->impair.on ? cf_impair_case_seed(&e->impair, c->id) : 0);
        }
        run_steps(r);
    }
    if (r->dgram) {
        drain_links(r);
        dgram_held_free(r);
    }
    if (r->impair)
        impair_verdict(r);
    end_connection(r);
    if (r->child)
        cf_stop_connector(r->child);
    if (r->via_relay)
        relay_case_finish(e, c, res, r->decided);
    free(r->echo);
    free(r->held);
    free(r);
}

void cf_generic_run_case(struct cf_engine *e, const struct cf_case *c, struct cf_result *res)
{
    run_case(e, c, res, false);
}

int cf_generic_probe(struct cf_engine *e, const struct cf_case *c, char *why, size_t whylen)
{
    struct cf_result res;
    cf_result_init(&res, c);
    struct vn_pcap_writer *saved = e->capture;
    e->capture = NULL;
    run_case(e, c, &res, true);
    e->capture = saved;
    if (res.verdict == CF_PASS)
        return 0;
    snprintf(why, whylen, "%s", res.message);
    return -1;
}

int cf_generic_check_alive(struct cf_engine *e, char *why, size_t whylen)
{
    if (e->protocol->transport == CF_TRANSPORT_DATAGRAM)
        return 0; /* no connection to try; a datagram module probes with a message of its own */
    int fd = cf_connect_target(e, e->slack_ms, why, whylen);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}
