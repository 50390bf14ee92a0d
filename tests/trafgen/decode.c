/* See decode.h. */
#include "decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vitcp/ift_stream.h"
#include "vitcp/pcap_reader.h"
#include "vitcp/pktway.h"
#include "vitcp/vitcp_stream.h"
#include "vitcp/warp_stream.h"

struct ctx {
    struct decoded *d;
    enum tg_proto proto;
    bool ready;
    struct vw_vitcp_session vitcp;
    /* IFT is read as the lint reads it (vw_ift_reader): a frame whose
     * sender broke its CRC announcement keeps the stream in step and
     * vw_ift_frame_decode_as_sent names the rule; the stock framer
     * (vw_ift_conn) would lose framing on it. */
    struct vw_ift_nego ift;
    struct vw_ift_reader ift_reader[2];
    struct vw_warp_framer warp[2];
    struct vw_eep_pairer *eep_pairs; /* both hops of a message through a router, as lint pairs them */
};

static void add(struct decoded *d, enum vw_req req, enum vw_severity sev)
{
    if (d->count < DECODED_MAX) {
        d->req[d->count] = req;
        d->sev[d->count] = sev;
        d->count++;
    }
}

static void add_all(struct decoded *d, enum vw_req err, const struct vw_findings *f)
{
    d->pdus++;
    if (err != VW_REQ_NONE) {
        add(d, err, VW_SEV_ERROR);
        if (d->fatal == VW_REQ_NONE)
            d->fatal = err;
    }
    for (unsigned i = 0; f && i < f->count; i++)
        add(d, f->item[i].req, f->item[i].severity);
}

static void on_vitcp(void *c, const uint8_t *raw, size_t len, uint64_t off,
                     const struct vw_vitcp_seg *seg, enum vw_req err, const struct vw_findings *f)
{
    (void)raw, (void)len, (void)off, (void)seg;
    add_all(((struct ctx *)c)->d, err, f);
}

static void feed_error(struct ctx *x, enum vw_req e)
{
    if (e != VW_REQ_NONE && x->d->fatal == VW_REQ_NONE) {
        x->d->fatal = e;
        add(x->d, e, VW_SEV_ERROR);
    }
}

static void ift_pdu(struct ctx *x, int dir, const uint8_t *raw, size_t len, bool is_indication)
{
    struct vw_findings f;
    vw_findings_clear(&f);
    enum vw_req err;
    if (is_indication) {
        struct vw_ift_ind ind;
        err = vw_ift_ind_decode(raw, len, &ind, &f);
        if (err == VW_REQ_NONE)
            vw_ift_nego_indication(&x->ift, dir, &ind, &f);
    } else {
        vw_ift_nego_frame(&x->ift, dir, &f);
        struct vw_ift_frame_mode announced = {0}, carried;
        vw_ift_nego_mode(&x->ift, dir, &announced);
        struct vw_ift_frame fr;
        err = vw_ift_frame_decode_as_sent(raw, len, &announced, &fr, &carried, &f);
    }
    add_all(x->d, err, &f);
}

struct ift_read_call {
    struct ctx *x;
    int dir;
};

static bool on_ift_pdu(void *ctx, const uint8_t *raw, size_t len, uint64_t stream_off, bool is_indication)
{
    (void)stream_off;
    struct ift_read_call *call = ctx;
    ift_pdu(call->x, call->dir, raw, len, is_indication);
    return true;
}

static void ift_read_error(struct ctx *x, const struct vw_ift_reader *r, enum vw_ift_read_status st)
{
    if (st == VW_IFT_READ_NOT_INDICATION)
        feed_error(x, r->not_indication_rule); /* as the wire framer: fatal (I35) */
    else if (st != VW_IFT_READ_OK)
        feed_error(x, VW_REQ_IFT_5_1_FRAME_TRUNCATED);
}

static void ift_feed(struct ctx *x, int dir, const uint8_t *data, size_t len)
{
    struct ift_read_call call = {x, dir};
    struct vw_ift_reader *r = &x->ift_reader[dir];
    if (r->status == VW_IFT_READ_OK)
        ift_read_error(x, r, vw_ift_reader_feed(r, data, len, on_ift_pdu, &call));
}

static void on_warp(void *c, const uint8_t *raw, size_t len, uint64_t off,
                    const struct vw_warp_chunk *ch, enum vw_req err, const struct vw_findings *f)
{
    (void)raw, (void)len, (void)off, (void)ch;
    add_all(((struct ctx *)c)->d, err, f);
}

static void on_tcp(void *c, const struct vn_tcp_event *ev)
{
    struct ctx *x = c;
    int dir = (int)ev->dir;
    switch (ev->kind) {
    case VN_TCP_OPEN:
        if (x->ready)
            break;
        if (x->proto == TG_VITCP)
            x->ready = vw_vitcp_session_init(&x->vitcp) == 0;
        else if (x->proto == TG_IFT)
        {
            vw_ift_nego_init(&x->ift);
            vw_ift_reader_init(&x->ift_reader[0], &x->ift, 0, VW_IFT_READ_LIMIT_MAX);
            vw_ift_reader_init(&x->ift_reader[1], &x->ift, 1, VW_IFT_READ_LIMIT_MAX);
            x->ready = true;
        }
        else if (x->proto == TG_WARP)
            x->ready = vw_warp_framer_init(&x->warp[0]) == 0 && vw_warp_framer_init(&x->warp[1]) == 0;
        break;
    case VN_TCP_DATA:
        if (!x->ready)
            break;
        x->d->tcp_bytes[dir] += ev->len;
        if (x->proto == TG_VITCP)
            feed_error(x, vw_vitcp_session_feed(&x->vitcp, dir, ev->data, ev->len, on_vitcp, x));
        else if (x->proto == TG_IFT)
            ift_feed(x, dir, ev->data, ev->len);
        else if (x->proto == TG_WARP)
            feed_error(x, vw_warp_framer_feed(&x->warp[dir], ev->data, ev->len, on_warp, x));
        break;
    case VN_TCP_RETX:
        /* V25: differing retransmitted bytes (trafgen never sets Transmit Error). */
        if (ev->diff_bytes) {
            x->d->retx_differing++;
            add(x->d, VW_REQ_VITCP_2_2_RETX_SAME_DATA, VW_SEV_ERROR);
        }
        break;
    case VN_TCP_GAP:
        x->d->gaps++;
        break;
    case VN_TCP_CLOSE:
        for (int d = 0; x->ready && x->proto == TG_IFT && d < 2; d++) {
            struct ift_read_call call = {x, d};
            if (x->ift_reader[d].status == VW_IFT_READ_OK)
                ift_read_error(x, &x->ift_reader[d], vw_ift_reader_finish(&x->ift_reader[d], on_ift_pdu, &call));
        }
        if (x->ready && x->proto == TG_VITCP) {
            struct vw_findings f;
            vw_findings_clear(&f);
            vw_vitcp_conn_finish(&x->vitcp.conn, &f);
            for (unsigned i = 0; i < f.count; i++)
                add(x->d, f.item[i].req, f.item[i].severity);
        }
        break;
    case VN_TCP_URGENT: /* trafgen marks no urgent data */
    case VN_TCP_DIR_END:    /* what a direction leaves unfinished: lint's, not the generator's test */
        break;
    }
}

static void on_dgram(void *c, const struct vn_datagram *dg)
{
    struct ctx *x = c;
    bool eep = (dg->kind == VN_DGRAM_ETH && dg->ethertype == VW_EEP_ETHERTYPE) ||
               (dg->kind == VN_DGRAM_UDP && dg->dst.port == VW_EEP_UDP_PORT);
    if (!eep || x->proto != TG_EEP)
        return;
    struct vw_eep_msg msg;
    struct vw_findings f;
    vw_findings_clear(&f);
    enum vw_eep_carrier carrier = dg->kind == VN_DGRAM_UDP ? VW_EEP_CARRIER_DATAGRAM : VW_EEP_CARRIER_LINK;
    enum vw_req err = vw_eep_decode_on(dg->data, dg->len, carrier, &msg, &f);
    if (err == VW_REQ_NONE)
        vw_eep_notes(dg->data, &msg, NULL, &f); /* what a display adds: EEP-6E-PT-KNOWN */
    add_all(x->d, err, &f);
    if (err != VW_REQ_NONE)
        return;
    if (!x->eep_pairs)
        x->eep_pairs = vw_eep_pairer_new();
    struct vw_eep_hop hop;
    if (carrier == VW_EEP_CARRIER_LINK)
        vw_eep_hop_set(&hop, dg->src_mac, dg->dst_mac, 6);
    else
        vw_eep_hop_set(&hop, dg->src.ip.addr, dg->dst.ip.addr, dg->src.ip.family == 4 ? 4 : 16);
    vw_findings_clear(&f);
    uint64_t first;
    if (vw_eep_pairer_add(x->eep_pairs, dg->frame, &hop, carrier, dg->data, &msg, &first, &f))
        for (unsigned i = 0; i < f.count; i++)
            add(x->d, f.item[i].req, f.item[i].severity);
}

int decode_capture(const char *path, enum tg_proto proto, struct decoded *d)
{
    memset(d, 0, sizeof *d);
    struct ctx x = {.d = d, .proto = proto};
    struct vn_reader_callbacks cb = {on_tcp, on_dgram, NULL, &x, NULL};
    char err[256];
    int rc = vn_pcap_read(path, &cb, NULL, NULL, err, sizeof err);
    if (x.ready) {
        if (proto == TG_VITCP)
            vw_vitcp_session_free(&x.vitcp);
        else if (proto == TG_IFT) {
            vw_ift_reader_free(&x.ift_reader[0]);
            vw_ift_reader_free(&x.ift_reader[1]);
        } else if (proto == TG_WARP) {
            vw_warp_framer_free(&x.warp[0]);
            vw_warp_framer_free(&x.warp[1]);
        }
    }
    vw_eep_pairer_free(x.eep_pairs);
    if (rc != 0)
        fprintf(stderr, "%s\n", err);
    return rc;
}

bool decoded_has(const struct decoded *d, enum vw_req req)
{
    for (unsigned i = 0; i < d->count; i++)
        if (d->req[i] == req)
            return true;
    return false;
}

unsigned decoded_others(const struct decoded *d, const enum vw_req *allowed, unsigned n_allowed)
{
    unsigned n = 0;
    for (unsigned i = 0; i < d->count; i++) {
        if (d->sev[i] == VW_SEV_NOTE)
            continue;
        bool ok = false;
        for (unsigned k = 0; k < n_allowed; k++)
            ok = ok || d->req[i] == allowed[k];
        n += !ok;
    }
    return n;
}

void decoded_print(const struct decoded *d)
{
    for (unsigned i = 0; i < d->count; i++)
        fprintf(stderr, "    %s %s\n", vw_severity_name(d->sev[i]), vw_req_id(d->req[i]));
}
