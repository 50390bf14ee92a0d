/* Receiving and sending on one WARP connection (conn.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include "conn.h"

void peer_event(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    putchar('\n');
    fflush(stdout);
}

double peer_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void peer_conn_init(struct conn *c, int fd, unsigned id, const struct conn_handlers *h, void *owner,
               struct peer_region *regions, size_t nregions, size_t max_pdu, bool iscsi_checks)
{
    memset(c, 0, sizeof *c);
    c->fd = fd;
    c->id = id;
    c->h = h;
    c->owner = owner;
    c->regions = regions;
    c->nregions = nregions;
    c->max_pdu = max_pdu;
    c->iscsi_checks = iscsi_checks;
    vw_warp_framer_init(&c->framer);
    vw_warp_iscsi_init(&c->iscsi);
    c->tx.next_ssn = 1;
    c->last_io_ms = peer_now_ms();
}

void peer_tx_choices(struct conn *c, const struct peer_choices *ch, bool iscsi)
{
    c->tx.header_chunk = ch->header_chunk;
    c->tx.last_byte = ch->last_byte;
    c->tx.completion = ch->completion;
    c->tx.iscsi = iscsi;
    c->tx.next_ssn = peer_choices_first_ssn(ch);
    c->no_close = ch->no_close;
}

static void fail(struct conn *c, const char *rule, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void fail(struct conn *c, const char *rule, const char *fmt, ...)
{
    char detail[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    if (rule)
        peer_event("event=error conn=%u rule=%s detail=%s", c->id, rule, detail);
    else
        peer_event("event=error conn=%u reason=limit detail=%s", c->id, detail);
    c->errors++;
    c->failed = true;
}

/* The receiving faults (place-, keep-): the rule a received chunk breaks
 * that this peer does not act on; VW_REQ_NONE for the other faults. */
static enum vw_req lax_rule(const struct conn *c)
{
    switch (c->tx.fault) {
    case FAULT_PLACE_BAD_ADLER: return VW_REQ_WARP_A_ADLER_VALID;
    case FAULT_KEEP_UNFRAMED: return VW_REQ_WARP_A_CHUNK_LEN;
    case FAULT_KEEP_C_WITHOUT_L: return VW_REQ_WARP_C_ONLY_WITH_L;
    case FAULT_KEEP_SEND_OFFSET: return VW_REQ_WARP_W4_SEND_OFFSET;
    case FAULT_KEEP_NO_LAST: return VW_REQ_WARP_SUMMARY_L_LAST;
    case FAULT_KEEP_RDMA_GAP: return VW_REQ_WARP_W4_RDMA_CONTIGUOUS;
    case FAULT_KEEP_RID_UNKNOWN: return VW_REQ_WARP_INTRO_RDMA_RID_ALLOCATED;
    case FAULT_KEEP_OUT_OF_REGION: return VW_REQ_WARP_INTRO_REGION_BOUNDS;
    case FAULT_KEEP_ISCSI_IMMEDIATE: return VW_REQ_WARP_B3_IMMEDIATE_SEND;
    case FAULT_KEEP_ISCSI_TTT: return VW_REQ_WARP_B41_RID_IS_TTT;
    default: return VW_REQ_NONE;
    }
}

/* A receiving fault's rule not acted on where no finding says so: one line
 * per connection. */
static void lax_note(struct conn *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void lax_note(struct conn *c, const char *fmt, ...)
{
    if (c->lax_noted)
        return;
    c->lax_noted = true;
    char detail[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    peer_event("event=finding conn=%u rule=%s severity=ignored detail=%s (--fault %s)", c->id,
               vw_req_id(lax_rule(c)), detail, warp_fault_name(c->tx.fault));
}

/* Every finding as a line; true if one is an error (the connection fails,
 * or with the choice no-close the chunk is discarded: discard says so).
 * The rule of a receiving fault is a note instead. */
static bool report(struct conn *c, const struct vw_findings *fs, bool discard)
{
    bool error = false;
    enum vw_req lax = lax_rule(c);
    for (unsigned i = 0; i < fs->count; i++) {
        const struct vw_finding *f = &fs->item[i];
        if (f->severity == VW_SEV_ERROR && lax != VW_REQ_NONE && f->req == lax) {
            peer_event("event=finding conn=%u rule=%s severity=ignored detail=%s (--fault %s)", c->id,
                       vw_req_id(f->req), f->detail, warp_fault_name(c->tx.fault));
            continue;
        }
        if (f->severity == VW_SEV_ERROR && discard) {
            if (!error) /* the first rule names it; nothing of the chunk is placed */
                peer_event("event=discarded conn=%u rule=%s detail=%s", c->id, vw_req_id(f->req), f->detail);
            c->errors++;
            error = true;
        } else if (f->severity == VW_SEV_ERROR) {
            fail(c, vw_req_id(f->req), "%s", f->detail);
            error = true;
        } else {
            peer_event("event=finding conn=%u rule=%s severity=%s detail=%s", c->id, vw_req_id(f->req),
                       vw_severity_name(f->severity), f->detail);
            c->warnings += f->severity == VW_SEV_WARN;
        }
    }
    return error;
}

static void completion(struct conn *c, const char *what)
{
    c->completions++;
    peer_event("event=completion conn=%u %s", c->id, what);
}

static void on_send_chunk(struct conn *c, const struct vw_warp_chunk *ch)
{
    if (!c->send_open) {
        c->send_open = true;
        c->pdu_len = 0;
        c->pdu_ssn = ch->ssn;
        c->pdu_flags = 0;
    }
    if (c->pdu_len + ch->payload_len > c->max_pdu) {
        fail(c, NULL, "Send %u exceeds --max-pdu %zu bytes", ch->ssn, c->max_pdu);
        return;
    }
    if (c->pdu_len + ch->payload_len > c->pdu_cap) {
        size_t cap = c->pdu_cap ? c->pdu_cap : 4096;
        while (cap < c->pdu_len + ch->payload_len)
            cap *= 2;
        uint8_t *p = realloc(c->pdu, cap);
        if (!p) {
            fail(c, NULL, "no memory for Send %u", ch->ssn);
            return;
        }
        c->pdu = p;
        c->pdu_cap = cap;
    }
    if (ch->payload_len)
        memcpy(c->pdu + c->pdu_len, ch->payload, ch->payload_len);
    c->pdu_len += ch->payload_len;
    c->pdu_flags |= ch->flags;
    if (!(ch->flags & VW_WARP_FLAG_L))
        return;
    c->send_open = false;
    uint16_t fl = c->pdu_flags;
    peer_event("event=send conn=%u ssn=%u len=%zu c=%d e=%d", c->id, c->pdu_ssn, c->pdu_len,
               !!(ch->flags & VW_WARP_FLAG_C), !!(fl & VW_WARP_FLAG_E));
    if (fl & VW_WARP_FLAG_E) { /* the sender gave up on this PDU: nothing to deliver */
        peer_event("event=discarded conn=%u ssn=%u", c->id, c->pdu_ssn);
        return;
    }
    if (ch->flags & VW_WARP_FLAG_C) {
        char what[80];
        snprintf(what, sizeof what, "type=send ssn=%u len=%zu", c->pdu_ssn, c->pdu_len);
        completion(c, what);
    }
    if (c->h->on_send && c->h->on_send(c, c->pdu, c->pdu_len, c->pdu_ssn, ch->flags))
        c->failed = true;
}

static void on_rdma_chunk(struct conn *c, const struct vw_warp_chunk *ch, size_t ri, uint64_t at)
{
    struct peer_region *r = &c->regions[ri];
    if (ch->payload_len)
        memcpy(r->mem + at, ch->payload, ch->payload_len);
    if (!c->rdma_open) {
        c->rdma_open = true;
        c->rdma_region = ri;
        c->rdma_at = at;
        c->rdma_offset = ch->offset;
        c->rdma_len = 0;
        c->rdma_flags = 0;
    }
    c->rdma_len += ch->payload_len;
    c->rdma_flags |= ch->flags;
    if (!(ch->flags & VW_WARP_FLAG_L))
        return;
    c->rdma_open = false;
    peer_event("event=rdma conn=%u rid=0x%x offset=0x%llx len=%zu c=%d e=%d", c->id, r->r.rid,
               (unsigned long long)c->rdma_offset, c->rdma_len, !!(ch->flags & VW_WARP_FLAG_C),
               !!(c->rdma_flags & VW_WARP_FLAG_E));
    if (c->rdma_flags & VW_WARP_FLAG_E)
        return;
    if (ch->flags & VW_WARP_FLAG_C) {
        char what[96];
        snprintf(what, sizeof what, "type=rdma rid=0x%x offset=0x%llx len=%zu", r->r.rid,
                 (unsigned long long)c->rdma_offset, c->rdma_len);
        completion(c, what);
    }
    if (c->h->on_rdma &&
        c->h->on_rdma(c, &c->regions[c->rdma_region], c->rdma_at, c->rdma_offset, c->rdma_len, ch->flags))
        c->failed = true;
}

/* The region an RDMA Write chunk lands in (the wire library decides). */
static enum vw_req find_region(const struct conn *c, const struct vw_warp_chunk *ch, size_t *ri, uint64_t *at,
                               struct vw_findings *fs)
{
    struct vw_warp_region r[CONN_REGIONS_MAX];
    size_t n = c->nregions < CONN_REGIONS_MAX ? c->nregions : CONN_REGIONS_MAX;
    for (size_t i = 0; i < n; i++)
        r[i] = c->regions[i].r;
    return vw_warp_region_find(r, n, ch, ri, at, fs);
}

/* One whole chunk from the framer: every check first, then placement. */
static void on_chunk(void *ctx, const uint8_t *raw, size_t len, uint64_t off,
                     const struct vw_warp_chunk *ch, enum vw_req err, const struct vw_findings *fs)
{
    (void)raw, (void)len, (void)off;
    struct conn *c = ctx;
    if (c->failed)
        return;
    struct vw_findings all = *fs;
    size_t ri = 0;
    uint64_t at = 0;
    if (err == VW_REQ_NONE && c->iscsi_checks)
        vw_warp_iscsi_check(&c->iscsi, ch, &all);
    if (err == VW_REQ_NONE && ch->type == VW_WARP_RDMA)
        err = find_region(c, ch, &ri, &at, &all);
    if (report(c, &all, c->no_close)) {
        if (c->no_close) /* discarded: the sequence stands as if the chunk never came */
            c->framer.seq = c->framer.seq_before;
        return;
    }
    if (err != VW_REQ_NONE && err == lax_rule(c)) {
        /* keep-rid-unknown, keep-out-of-region, keep-unframed: nowhere to place it; dropped */
        lax_note(c, "chunk at stream offset %llu dropped", (unsigned long long)off);
        return;
    }
    if (err != VW_REQ_NONE && c->no_close) {
        peer_event("event=discarded conn=%u rule=%s detail=chunk at stream offset %llu cannot be parsed", c->id,
                   vw_req_id(err), (unsigned long long)off);
        c->framer.seq = c->framer.seq_before;
        return;
    }
    if (err != VW_REQ_NONE) {
        if (!c->failed) /* a fatal rule without a finding of its own */
            fail(c, vw_req_id(err), "chunk at stream offset %llu cannot be parsed", (unsigned long long)off);
        return;
    }
    if (ch->type == VW_WARP_SEND)
        on_send_chunk(c, ch);
    else
        on_rdma_chunk(c, ch, ri, at);
}

int peer_conn_feed(struct conn *c, const uint8_t *data, size_t len)
{
    c->last_io_ms = peer_now_ms();
    if (c->failed)
        return -1;
    if (c->unframed) /* no-close after a framing loss: nothing more is a chunk */
        return 0;
    enum vw_req e = vw_warp_framer_feed(&c->framer, data, len, on_chunk, c);
    if (!c->failed && c->framer.oom)
        fail(c, NULL, "no memory to gather a chunk");
    else if (!c->failed && e != VW_REQ_NONE && c->no_close) {
        c->unframed = true;
        peer_event("event=discarded conn=%u rule=%s detail=the stream cannot be framed at offset %llu; the rest "
                   "is dropped", c->id, vw_req_id(e), (unsigned long long)c->framer.stream_off);
    } else if (!c->failed && e != VW_REQ_NONE && e == lax_rule(c))
        lax_note(c, "the stream cannot be framed at offset %llu; the rest is dropped",
                 (unsigned long long)c->framer.stream_off);
    else if (!c->failed && e != VW_REQ_NONE)
        fail(c, vw_req_id(e), "Chunk length under the type's header plus Adler-32 at stream offset %llu: "
             "the stream cannot be framed", (unsigned long long)c->framer.stream_off);
    return c->failed ? -1 : 0;
}

int peer_conn_finish(struct conn *c)
{
    c->eof = true;
    if (c->failed)
        return -1;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    vw_warp_framer_finish(&c->framer, &fs);
    if (c->iscsi_checks)
        vw_warp_iscsi_finish(&c->iscsi, &fs);
    if (!c->unframed)
        report(c, &fs, false);
    return c->failed ? -1 : 0;
}

int peer_conn_flush(struct conn *c, size_t max_write)
{
    while (c->out.len) {
        size_t n = max_write && max_write < c->out.len ? max_write : c->out.len;
        ssize_t w = send(c->fd, c->out.buf + c->out.head, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        }
        outq_consume(&c->out, (size_t)w);
        c->last_io_ms = peer_now_ms();
        if (max_write) /* one write per call: separate segments */
            return 0;
    }
    return 0;
}

void peer_conn_free(struct conn *c)
{
    vw_warp_framer_free(&c->framer);
    free(c->pdu);
    c->pdu = NULL;
    outq_free(&c->out);
}
