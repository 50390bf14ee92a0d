/* The generator core: PDU emission with the targeted mutation, coalescing
 * and segmentation over TCP, runs and case numbering. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"


void tg_rng_fill(struct tg_rng *r, uint8_t *buf, size_t len)
{
    size_t i = 0;
    while (i < len) {
        uint64_t v = tg_rng_next(r);
        for (int k = 0; k < 8 && i < len; k++, v >>= 8)
            buf[i++] = (uint8_t)v;
    }
}

void tg_params_default(struct tg_params *p)
{
    memset(p, 0, sizeof *p);
    p->seed = 1;
    p->msg_size = 3000;
    p->seg_payload = 1024;
    p->count = 1;
}

void tg_fail(struct tg_gen *g, const char *fmt, ...)
{
    if (g->failed)
        return;
    g->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g->res->error, sizeof g->res->error, fmt, ap);
    va_end(ap);
}

/* Rotating buffers: a few messages (e.g. a read response and an
 * interleaved Send) can be in flight at once. */
const uint8_t *tg_payload(struct tg_gen *g, size_t len)
{
    unsigned slot = g->payload_next++ % TG_PAYLOAD_SLOTS;
    if (g->payload_cap[slot] < len || g->payload_slot[slot] == NULL) {
        uint8_t *n = realloc(g->payload_slot[slot], len ? len : 1);
        if (n == NULL) {
            tg_fail(g, "out of memory for a %zu-byte payload", len);
            return g->payload_slot[slot];
        }
        g->payload_slot[slot] = n;
        g->payload_cap[slot] = len;
    }
    tg_rng_fill(&g->rng, g->payload_slot[slot], len);
    return g->payload_slot[slot];
}

static int out_ok(struct tg_gen *g, int rc)
{
    if (rc != 0)
        tg_fail(g, "%s", g->out->err[0] ? g->out->err : "output failed");
    return rc == 0;
}

static void flush_dir(struct tg_gen *g, int dir)
{
    if (g->pend_len[dir] == 0 || g->failed)
        return;
    out_ok(g, tg_out_tcp_write(g->out, dir, g->pend[dir], g->pend_len[dir], g->p->tcp_segment));
    g->stream_off[dir] += g->pend_len[dir];
    g->pend_len[dir] = 0;
}

void tg_flush(struct tg_gen *g)
{
    flush_dir(g, 0);
    flush_dir(g, 1);
}

static void hold_bytes(struct tg_gen *g, int dir, const uint8_t *b, size_t n)
{
    if (g->pend_len[dir] + n > g->pend_cap[dir]) {
        size_t cap = (g->pend_len[dir] + n) * 2;
        uint8_t *p = realloc(g->pend[dir], cap);
        if (p == NULL) {
            tg_fail(g, "out of memory");
            return;
        }
        g->pend[dir] = p;
        g->pend_cap[dir] = cap;
    }
    memcpy(g->pend[dir] + g->pend_len[dir], b, n);
    g->pend_len[dir] += n;
}

static size_t encode(struct tg_gen *g, struct tg_pdu *pdu)
{
    switch (pdu->proto) {
    case TG_VITCP:
        return vw_vitcp_encode(&pdu->vitcp, g->buf, g->buf_cap);
    case TG_IFT:
        if (pdu->ift_ind)
            return vw_ift_ind_encode(&pdu->ift_ind_enc, g->buf, g->buf_cap);
        {
            uint8_t ddp[VW_DDP_UNTAGGED_HDR_LEN];
            size_t dl = vw_ddp_encode(&pdu->ddp, ddp, sizeof ddp);
            pdu->ift.ddp = pdu->ift_no_ddp ? NULL : ddp;
            pdu->ift.ddp_len = pdu->ift_no_ddp ? 0 : dl;
            return vw_ift_frame_encode(&pdu->ift, g->buf, g->buf_cap);
        }
    case TG_EEP:
        return vw_eep_encode(&pdu->eep, g->buf, g->buf_cap);
    case TG_WARP:
        return vw_warp_encode(&pdu->warp, g->buf, g->buf_cap);
    }
    return 0;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Rate limit (live outputs only: files carry synthetic timestamps) and the
 * once-a-second progress line. */
static void pace(struct tg_gen *g)
{
    bool live = g->out->kind == TG_OUT_CONNECT || g->out->kind == TG_OUT_LIBNET;
    if (!(live && g->p->rate_pdus) && !g->p->progress)
        return;
    uint64_t now = now_ns();
    if (g->start_ns == 0)
        g->start_ns = now;
    if (live && g->p->rate_pdus) {
        uint64_t due = g->start_ns + (uint64_t)g->res->pdus * 1000000000u / g->p->rate_pdus;
        if (due > now) {
            struct timespec ts = {.tv_sec = (time_t)(due / 1000000000u), .tv_nsec = (long)(due % 1000000000u)};
            clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
        }
    }
    if (g->p->progress && now - g->last_progress_ns >= 1000000000u) {
        g->last_progress_ns = now;
        fprintf(stderr, "\r%u PDUs, %llu bytes, %u mutated", g->res->pdus,
                (unsigned long long)g->res->bytes, g->res->mutated);
    }
}

void tg_emit(struct tg_gen *g, struct tg_pdu *pdu)
{
    if (g->failed)
        return;
    pdu->post_truncate = -1;
    unsigned index = g->res->pdus++;
    char comment[256] = "";
    if (g->mut && g->mut->proto == pdu->proto && g->mut->eligible(pdu)) {
        long k = (long)g->res->eligible++;
        bool hit = g->target == TG_TARGET_ALL || g->target == k ||
                   (g->target == TG_TARGET_RATE && tg_rng_below(&g->mut_rng, 1000000u) < g->p->mutate_ppm);
        if (hit) {
            g->mut->apply(pdu, &g->mut_rng);
            if (g->res->mutated++ == 0)
                g->res->first_mutated_pdu = (long)index;
            snprintf(comment, sizeof comment, "%s: %s (PDU %u, eligible PDU %ld)",
                     tg_mutation_name(g->mut), g->mut->what, index, k);
        }
    }
    pace(g);
    size_t n = encode(g, pdu);
    if (n == 0) {
        tg_fail(g, "PDU %u (%s type %u) could not be encoded (too large for its length field?)",
                index, tg_proto_name(pdu->proto), pdu->type);
        return;
    }
    if (pdu->post_truncate >= 0 && (size_t)pdu->post_truncate < n)
        n = (size_t)pdu->post_truncate;
    if (pdu->proto == TG_EEP && pdu->eep_cut_len && pdu->eep_cut_at + pdu->eep_cut_len <= n) {
        memmove(g->buf + pdu->eep_cut_at, g->buf + pdu->eep_cut_at + pdu->eep_cut_len,
                n - pdu->eep_cut_at - pdu->eep_cut_len);
        n -= pdu->eep_cut_len;
    }
    if (pdu->proto == TG_EEP && pdu->eep_grow_len && pdu->eep_grow_at <= n && n + pdu->eep_grow_len <= g->buf_cap) {
        memmove(g->buf + pdu->eep_grow_at + pdu->eep_grow_len, g->buf + pdu->eep_grow_at, n - pdu->eep_grow_at);
        memset(g->buf + pdu->eep_grow_at, 0, pdu->eep_grow_len);
        n += pdu->eep_grow_len;
    }
    /* Random bit flips (fuzzing): not a rule's mutation; whatever rule
     * covers the flipped byte breaks (a CRC, Adler-32 or a field rule). */
    if (g->p->flip_ppm && tg_rng_below(&g->flip_rng, 1000000u) < g->p->flip_ppm) {
        uint32_t at = tg_rng_below(&g->flip_rng, (uint32_t)n);
        unsigned bit = tg_rng_below(&g->flip_rng, 8u);
        uint8_t was = g->buf[at];
        g->buf[at] ^= (uint8_t)(1u << bit);
        if (g->res->flipped++ == 0)
            g->res->first_flipped_pdu = (long)index;
        size_t used = strlen(comment);
        snprintf(comment + used, sizeof comment - used, "%sbit flip: PDU %u byte %u 0x%02x -> 0x%02x",
                 used ? "; " : "", index, at, was, g->buf[at]);
    }
    g->res->bytes += n;
    if (g->out->kind == TG_OUT_NULL)
        return;
    if (pdu->proto == TG_EEP) {
        uint16_t port = g->p->port ? g->p->port : VW_EEP_UDP_PORT;
        if (comment[0])
            tg_out_comment(g->out, comment);
        out_ok(g, tg_out_datagram(g->out, g->p->eep_udp, port, g->p->ipv6, pdu->eep_hop, g->buf, n));
        return;
    }
    int dir = pdu->dir;
    flush_dir(g, !dir); /* the other side's bytes go first */
    if (comment[0])
        tg_out_comment(g->out, comment); /* on the first frame carrying this PDU */
    uint64_t off = g->stream_off[dir] + g->pend_len[dir];
    hold_bytes(g, dir, g->buf, n);
    if (!g->p->coalesce || pdu->post_retx_differs)
        flush_dir(g, dir);
    if (pdu->post_retx_differs && !g->failed) {
        g->buf[n / 2] ^= 0xFF; /* V25: a retransmission with different bytes */
        out_ok(g, tg_out_tcp_write_at(g->out, dir, off, g->buf, n));
    }
}


void tg_tcp_open(struct tg_gen *g, uint16_t default_port)
{
    if (g->failed || g->out->kind == TG_OUT_NULL)
        return;
    out_ok(g, tg_out_tcp_open(g->out, g->p->ipv6, g->p->client_port, g->p->port ? g->p->port : default_port,
                                 g->p->tcp_timestamps));
}

void tg_tcp_close(struct tg_gen *g)
{
    tg_flush(g);
    if (g->failed || g->out->kind == TG_OUT_NULL)
        return;
    out_ok(g, tg_out_tcp_close(g->out));
}

int tg_run(const struct tg_scenario *sc, const struct tg_mutation *mut, long target,
           const struct tg_params *p, struct tg_output *out, struct tg_result *res)
{
    memset(res, 0, sizeof *res);
    res->first_mutated_pdu = -1;
    res->first_flipped_pdu = -1;
    if (mut && mut->proto != sc->proto) {
        snprintf(res->error, sizeof res->error, "mutation %s is for %s; scenario %s is %s",
                 tg_mutation_name(mut), tg_proto_name(mut->proto), sc->name, tg_proto_name(sc->proto));
        return -1;
    }
    struct tg_gen g = {.p = p, .out = out, .mut = mut, .target = target, .res = res};
    g.rng.s = p->seed;
    g.mut_rng.s = p->seed ^ 0x6D75746174696F6Eull; /* "mutation" */
    g.flip_rng.s = p->seed ^ 0x62797465666C6970ull; /* "byteflip" */
    if (mut && target == TG_TARGET_SEEDED) {
        /* Count the eligible PDUs first, then pick one from the seed. */
        struct tg_output *null_out = tg_output_null();
        struct tg_result count;
        int rc = tg_run(sc, mut, TG_TARGET_ALL, p, null_out, &count);
        tg_output_close(null_out, NULL, 0);
        if (rc != 0) {
            *res = count;
            return -1;
        }
        if (count.eligible == 0) {
            snprintf(res->error, sizeof res->error, "mutation %s has no target in scenario %s",
                     tg_mutation_name(mut), sc->name);
            return -1;
        }
        g.target = (long)tg_rng_below(&g.mut_rng, count.eligible);
        res->chosen_target = g.target;
    }
    g.buf_cap = VW_IFT_FRAME_MAX + 64;
    g.buf = malloc(g.buf_cap);
    if (g.buf == NULL) {
        snprintf(res->error, sizeof res->error, "out of memory");
        return -1;
    }
    sc->run(&g);
    tg_flush(&g);
    if (p->progress && out->kind != TG_OUT_NULL)
        fprintf(stderr, "\r%u PDUs, %llu bytes, %u mutated\n", res->pdus,
                (unsigned long long)res->bytes, res->mutated);
    for (int i = 0; i < TG_PAYLOAD_SLOTS; i++)
        free(g.payload_slot[i]);
    free(g.buf);
    free(g.pend[0]);
    free(g.pend[1]);
    if (!g.failed && out->failed)
        tg_fail(&g, "%s", out->err);
    if (!g.failed && mut && res->mutated == 0 && target != TG_TARGET_RATE) {
        if (res->eligible == 0)
            tg_fail(&g, "mutation %s has no target in scenario %s", tg_mutation_name(mut), sc->name);
        else
            tg_fail(&g, "target %ld out of range: scenario %s has %u PDUs for mutation %s", target,
                    sc->name, res->eligible, tg_mutation_name(mut));
    }
    return g.failed ? -1 : 0;
}

size_t tg_case_count(const struct tg_scenario *sc, const struct tg_params *p)
{
    size_t nm, total = 0;
    const struct tg_mutation *ms = tg_mutations(&nm);
    for (size_t i = 0; i < nm; i++) {
        if (ms[i].proto != sc->proto)
            continue;
        struct tg_output *o = tg_output_null();
        struct tg_result r;
        tg_run(sc, &ms[i], TG_TARGET_ALL, p, o, &r);
        tg_output_close(o, NULL, 0);
        total += r.eligible;
    }
    return total;
}

int tg_case_get(const struct tg_scenario *sc, const struct tg_params *p, size_t n,
                const struct tg_mutation **mut, long *target)
{
    if (n == 0)
        return 0;
    size_t nm, seen = 0;
    const struct tg_mutation *ms = tg_mutations(&nm);
    for (size_t i = 0; i < nm; i++) {
        if (ms[i].proto != sc->proto)
            continue;
        struct tg_output *o = tg_output_null();
        struct tg_result r;
        tg_run(sc, &ms[i], TG_TARGET_ALL, p, o, &r);
        tg_output_close(o, NULL, 0);
        if (n <= seen + r.eligible) {
            *mut = &ms[i];
            *target = (long)(n - seen - 1);
            return 1;
        }
        seen += r.eligible;
    }
    return 0;
}
