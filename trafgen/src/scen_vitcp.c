/* VI/TCP scenarios: a connection as a socket-based provider would run it
 * (CE exchange, messages in VI segments, RDMA, NOPs, close), numbering and
 * acknowledging as spec-decisions V14/V15/V17 say. */
#include <string.h>

#include "internal.h"
#include "script.h"

#define RX_DESCRIPTORS 64
#define READ_WINDOW 4

struct vi {
    struct tg_gen *g;
    bool crc;
    uint16_t attrs;
    uint32_t mtu;
    uint32_t next_msg[2];  /* next message number each side uses */
    uint32_t last_sent[2]; /* last non-RdmaReadResponse number (NOP, V14) */
    uint32_t last_rx[2];   /* last message each side received (Message ACK, V15) */
    uint16_t rx_posted[2]; /* Rx Descriptors Posted each side announces */
};

static void vi_init(struct vi *v, struct tg_gen *g, bool crc, uint16_t attrs)
{
    memset(v, 0, sizeof *v);
    v->g = g;
    v->crc = crc;
    v->attrs = attrs;
    v->mtu = 65536;
    /* Initial message numbers from the seed (V14: the first data message is I+1). */
    v->next_msg[0] = (uint32_t)tg_rng_next(&g->rng);
    v->next_msg[1] = (uint32_t)tg_rng_next(&g->rng);
    v->rx_posted[0] = v->rx_posted[1] = RX_DESCRIPTORS;
}

static void enc_for(struct vi *v, int dir, unsigned type, struct vw_vitcp_enc *e)
{
    vw_vitcp_enc_init(e, type, v->crc);
    e->hdr.msg_ack = v->last_rx[dir];
    e->hdr.rx_desc_posted = v->rx_posted[dir];
}

static void emit(struct vi *v, int dir, const struct vw_vitcp_enc *e, bool first, bool last)
{
    struct tg_pdu pdu;
    memset(&pdu, 0, sizeof pdu);
    pdu.proto = TG_VITCP;
    pdu.dir = dir;
    pdu.type = e->hdr.type;
    pdu.first_seg = first;
    pdu.last_seg = last;
    pdu.crc = v->crc;
    pdu.dfc = (v->attrs & VW_VITCP_ATTR_DFC) != 0;
    pdu.vitcp = *e;
    tg_emit(v->g, &pdu);
}

static void set_disc(struct vw_vitcp_ce *ce)
{
    static const char calling[] = "client-vi-0";
    static const char called[] = "storage-vi-7";
    ce->calling_disc_len = sizeof calling - 1;
    memcpy(ce->calling_disc, calling, sizeof calling - 1);
    ce->called_disc_len = sizeof called - 1;
    memcpy(ce->called_disc, called, sizeof called - 1);
}

static void vi_request(struct vi *v)
{
    struct vw_vitcp_enc e;
    enc_for(v, 0, VW_VITCP_CONNECT_REQUEST, &e);
    e.hdr.msg_num = v->next_msg[0];
    e.hdr.msg_ack = 0;
    e.ce.attrs = v->attrs;
    e.ce.mtu = v->mtu;
    e.ce.rdma_read_window = (v->attrs & VW_VITCP_ATTR_RDMA_READ) ? READ_WINDOW : 0;
    set_disc(&e.ce);
    emit(v, 0, &e, true, true);
}

/* ConnectAccept (answer 0), ConnectReject or ConnectNoMatch. */
static void vi_answer(struct vi *v, unsigned type)
{
    struct vw_vitcp_enc e;
    if (type != VW_VITCP_CONNECT_ACCEPT) {
        /* V6/V14: header only, numbers 0; no trailer unless CRC was offered. */
        enc_for(v, 1, type, &e);
        e.hdr.msg_num = 0;
        e.hdr.msg_ack = 0;
        e.hdr.rx_desc_posted = 0;
        emit(v, 1, &e, true, true);
        return;
    }
    enc_for(v, 1, type, &e);
    e.hdr.msg_num = v->next_msg[1];
    e.hdr.msg_ack = v->next_msg[0];
    e.ce.attrs = v->attrs;
    e.ce.mtu = v->mtu;
    e.ce.rdma_read_window = (v->attrs & VW_VITCP_ATTR_RDMA_READ) ? READ_WINDOW : 0;
    set_disc(&e.ce);
    emit(v, 1, &e, true, true);
    for (int d = 0; d < 2; d++) {
        v->last_sent[d] = v->next_msg[d];
        v->last_rx[!d] = v->next_msg[d];
        v->next_msg[d]++;
    }
}

static void vi_connect(struct vi *v)
{
    tg_tcp_open(v->g, VW_VITCP_DEFAULT_PORT);
    vi_request(v);
    vi_answer(v, VW_VITCP_CONNECT_ACCEPT);
}

/* One Send or RdmaWrite message in segments of at most seg_payload bytes. */
static void vi_message(struct vi *v, int dir, unsigned type, size_t len, bool imm, uint64_t addr)
{
    struct tg_gen *g = v->g;
    const uint8_t *data = tg_payload(g, len);
    uint32_t num = v->next_msg[dir]++;
    uint32_t imm_value = imm ? (uint32_t)tg_rng_next(&g->rng) | 1u : 0;
    size_t step = g->p->seg_payload ? g->p->seg_payload : len;
    size_t off = 0;
    do {
        size_t n = len - off < step ? len - off : step;
        struct vw_vitcp_enc e;
        enc_for(v, dir, type, &e);
        e.hdr.msg_num = num;
        e.hdr.data_offset = (uint32_t)off;
        e.hdr.flags = (off + n == len ? VW_VITCP_FLAG_EOM : 0) | (imm ? VW_VITCP_FLAG_IDV : 0);
        e.hdr.imm_data = imm_value;
        if (type == VW_VITCP_RDMA_WRITE) {
            e.rdma.addr = addr;
            e.rdma.handle = 0x5eed0001u;
            e.rdma.length = (uint32_t)len;
        }
        e.payload = data + off;
        e.payload_len = n;
        emit(v, dir, &e, off == 0, off + n == len);
        off += n;
    } while (off < len);
    v->last_sent[dir] = num;
    v->last_rx[!dir] = num;
    if (type == VW_VITCP_SEND || imm)
        v->rx_posted[!dir]++; /* the receiver re-posts the descriptor it used (V17) */
}

static uint32_t vi_read_request(struct vi *v, int dir, uint32_t len, uint64_t addr)
{
    struct vw_vitcp_enc e;
    enc_for(v, dir, VW_VITCP_RDMA_READ_REQ, &e);
    uint32_t num = v->next_msg[dir]++;
    e.hdr.msg_num = num;
    e.rdma.addr = addr;
    e.rdma.handle = 0x5eed0002u;
    e.rdma.length = len;
    emit(v, dir, &e, true, true);
    v->last_sent[dir] = num;
    v->last_rx[!dir] = num;
    return num;
}

/* Segments [from, to) of a read response of len bytes (the caller interleaves). */
static void vi_read_response_part(struct vi *v, int dir, uint32_t num, const uint8_t *data,
                                  size_t len, size_t from, size_t to)
{
    size_t step = v->g->p->seg_payload ? v->g->p->seg_payload : len;
    for (size_t off = from; off < to;) {
        size_t n = to - off < step ? to - off : step;
        struct vw_vitcp_enc e;
        enc_for(v, dir, VW_VITCP_RDMA_READ_RESP, &e);
        e.hdr.msg_num = num;
        e.hdr.data_offset = (uint32_t)off;
        e.hdr.flags = off + n == len ? VW_VITCP_FLAG_EOM : 0;
        e.payload = data + off;
        e.payload_len = n;
        emit(v, dir, &e, off == 0, off + n == len);
        off += n;
    }
}

static void vi_nop(struct vi *v, int dir)
{
    struct vw_vitcp_enc e;
    enc_for(v, dir, VW_VITCP_NOP, &e);
    e.hdr.msg_num = v->last_sent[dir];
    emit(v, dir, &e, true, true);
}

static size_t msg_size(const struct tg_gen *g) { return g->p->msg_size; }

/* Two reads outstanding; the first response has a Send between its
 * segments (allowed: only responses must not interleave with each other). */
static void vi_reads(struct vi *v)
{
    struct tg_gen *g = v->g;
    uint32_t len1 = (uint32_t)msg_size(g), len2 = 500;
    uint32_t r1 = vi_read_request(v, 0, len1, 0x10000000u);
    uint32_t r2 = vi_read_request(v, 0, len2, 0x20000000u);
    const uint8_t *d1 = tg_payload(g, len1);
    size_t half = len1 / 2;
    vi_read_response_part(v, 1, r1, d1, len1, 0, half);
    vi_message(v, 1, VW_VITCP_SEND, 64, false, 0);
    vi_read_response_part(v, 1, r1, d1, len1, half, len1);
    const uint8_t *d2 = tg_payload(g, len2);
    vi_read_response_part(v, 1, r2, d2, len2, 0, len2);
}

#define ATTR_BASE VW_VITCP_ATTR_RELIABLE_DELIVERY
#define ATTR_RDMA (VW_VITCP_ATTR_RDMA_WRITE | VW_VITCP_ATTR_RDMA_READ)

static void run_connect_common(struct tg_gen *g, bool crc)
{
    struct vi v;
    vi_init(&v, g, crc, ATTR_BASE);
    vi_connect(&v);
    vi_nop(&v, 0);
    vi_nop(&v, 1);
    tg_tcp_close(g);
}
static void run_connect(struct tg_gen *g) { run_connect_common(g, false); }
static void run_connect_crc(struct tg_gen *g) { run_connect_common(g, true); }

static void run_refused(struct tg_gen *g, unsigned type)
{
    struct vi v;
    vi_init(&v, g, false, ATTR_BASE);
    tg_tcp_open(g, VW_VITCP_DEFAULT_PORT);
    vi_request(&v);
    vi_answer(&v, type);
    tg_tcp_close(g);
}
static void run_reject(struct tg_gen *g) { run_refused(g, VW_VITCP_CONNECT_REJECT); }
static void run_nomatch(struct tg_gen *g) { run_refused(g, VW_VITCP_CONNECT_NOMATCH); }

static void run_send(struct tg_gen *g)
{
    struct vi v;
    vi_init(&v, g, false, ATTR_BASE);
    vi_connect(&v);
    for (unsigned i = 0; i < g->p->count; i++) {
        vi_message(&v, 0, VW_VITCP_SEND, msg_size(g), false, 0); /* multi-segment */
        vi_message(&v, 1, VW_VITCP_SEND, 100, false, 0);          /* single segment */
        vi_message(&v, 0, VW_VITCP_SEND, 200, true, 0);           /* immediate data */
    }
    tg_tcp_close(g);
}

static void run_rdma_write(struct tg_gen *g)
{
    struct vi v;
    vi_init(&v, g, false, ATTR_BASE | VW_VITCP_ATTR_RDMA_WRITE);
    vi_connect(&v);
    for (unsigned i = 0; i < g->p->count; i++) {
        vi_message(&v, 0, VW_VITCP_RDMA_WRITE, msg_size(g), false, 0x10000000u);
        vi_message(&v, 0, VW_VITCP_RDMA_WRITE, 256, true, 0x10010000u);
    }
    tg_tcp_close(g);
}

static void run_rdma_read(struct tg_gen *g)
{
    struct vi v;
    vi_init(&v, g, false, ATTR_BASE | VW_VITCP_ATTR_RDMA_READ);
    vi_connect(&v);
    for (unsigned i = 0; i < g->p->count; i++)
        vi_reads(&v);
    tg_tcp_close(g);
}

static void run_nop(struct tg_gen *g)
{
    struct vi v;
    vi_init(&v, g, false, ATTR_BASE);
    vi_connect(&v);
    vi_nop(&v, 0);
    vi_message(&v, 0, VW_VITCP_SEND, 100, false, 0);
    vi_nop(&v, 0);
    vi_nop(&v, 1);
    tg_tcp_close(g);
}

static void run_dfc(struct tg_gen *g)
{
    struct vi v;
    vi_init(&v, g, false, ATTR_BASE | VW_VITCP_ATTR_DFC);
    vi_connect(&v);
    for (unsigned i = 0; i < 3 * g->p->count; i++) {
        vi_message(&v, 0, VW_VITCP_SEND, 300, false, 0);
        vi_nop(&v, 1); /* carries the re-posted descriptor count */
    }
    tg_tcp_close(g);
}

static void run_disconnect(struct tg_gen *g)
{
    struct vi v;
    vi_init(&v, g, false, ATTR_BASE);
    vi_connect(&v);
    vi_message(&v, 0, VW_VITCP_SEND, 100, false, 0);
    tg_tcp_close(g); /* closing TCP closes the VI (2.2.2.2.2) */
}

/* Every feature in one CRC-protected connection: the default for mutations. */
static void run_full(struct tg_gen *g)
{
    struct vi v;
    vi_init(&v, g, true, ATTR_BASE | ATTR_RDMA | VW_VITCP_ATTR_DFC);
    vi_connect(&v);
    for (unsigned i = 0; i < g->p->count; i++) {
        vi_message(&v, 0, VW_VITCP_SEND, msg_size(g), false, 0);
        vi_message(&v, 1, VW_VITCP_SEND, 100, true, 0);
        vi_message(&v, 0, VW_VITCP_SEND, 80, false, 0);
        vi_message(&v, 0, VW_VITCP_RDMA_WRITE, msg_size(g), false, 0x10000000u);
        vi_message(&v, 0, VW_VITCP_RDMA_WRITE, 256, true, 0x10010000u);
        vi_reads(&v);
        vi_nop(&v, 0);
        vi_nop(&v, 1);
    }
    tg_tcp_close(g);
}

static void run_full_nocrc(struct tg_gen *g)
{
    struct vi v;
    vi_init(&v, g, false, ATTR_BASE | ATTR_RDMA | VW_VITCP_ATTR_DFC);
    vi_connect(&v);
    for (unsigned i = 0; i < g->p->count; i++) {
        vi_message(&v, 0, VW_VITCP_SEND, msg_size(g), false, 0);
        vi_message(&v, 1, VW_VITCP_SEND, 100, true, 0);
        vi_message(&v, 0, VW_VITCP_RDMA_WRITE, 256, true, 0x10010000u);
        vi_reads(&v);
        vi_nop(&v, 0);
    }
    tg_tcp_close(g);
}

/* Steps from a scenario file (--scenario-file). */
static void run_script(struct tg_gen *g)
{
    const struct tg_script *s = g->p->script;
    if (s == NULL) {
        tg_fail(g, "scenario vitcp-script needs --scenario-file");
        return;
    }
    struct vi v;
    bool open = false;
    for (size_t i = 0; i < s->n && !g->failed; i++) {
        const struct tg_step *st = &s->step[i];
        switch (st->kind) {
        case TG_STEP_CONNECT:
            vi_init(&v, g, st->crc, (uint16_t)(ATTR_BASE | st->attrs));
            vi_connect(&v);
            open = true;
            break;
        case TG_STEP_SEND:
            vi_message(&v, st->dir, VW_VITCP_SEND, st->bytes, st->imm, 0);
            break;
        case TG_STEP_WRITE:
            vi_message(&v, st->dir, VW_VITCP_RDMA_WRITE, st->bytes, st->imm, 0x10000000u);
            break;
        case TG_STEP_READ: {
            uint32_t num = vi_read_request(&v, st->dir, st->bytes, 0x20000000u);
            const uint8_t *d = tg_payload(g, st->bytes);
            vi_read_response_part(&v, !st->dir, num, d, st->bytes, 0, st->bytes);
            break;
        }
        case TG_STEP_NOP:
            vi_nop(&v, st->dir);
            break;
        case TG_STEP_CLOSE:
            tg_tcp_close(g);
            open = false;
            break;
        }
    }
    if (open)
        tg_tcp_close(g);
}

const struct tg_scenario tg_vitcp_scenarios[] = {
    {"vitcp-full", TG_VITCP, "every feature, CRC on: sends, immediate data, RDMA writes and reads, NOPs, DFC", run_full},
    {"vitcp-full-nocrc", TG_VITCP, "every feature without CRC", run_full_nocrc},
    {"vitcp-connect", TG_VITCP, "CE exchange without CRC, a NOP each way, close", run_connect},
    {"vitcp-connect-crc", TG_VITCP, "CE exchange negotiating the CRC, a NOP each way, close", run_connect_crc},
    {"vitcp-reject", TG_VITCP, "ConnectRequest answered by ConnectReject, TCP closes", run_reject},
    {"vitcp-nomatch", TG_VITCP, "ConnectRequest answered by ConnectNoMatch, TCP closes", run_nomatch},
    {"vitcp-send", TG_VITCP, "multi-segment and single-segment Sends, immediate data", run_send},
    {"vitcp-rdma-write", TG_VITCP, "multi-segment RDMA write, RDMA write with immediate data", run_rdma_write},
    {"vitcp-rdma-read", TG_VITCP, "two RDMA reads outstanding, a Send between response segments", run_rdma_read},
    {"vitcp-nop", TG_VITCP, "NOPs before and after a message", run_nop},
    {"vitcp-dfc", TG_VITCP, "descriptor flow control: Sends and re-posted descriptors", run_dfc},
    {"vitcp-disconnect", TG_VITCP, "a message, then the TCP close that closes the VI", run_disconnect},
    {"vitcp-script", TG_VITCP, "the steps of a scenario file (--scenario-file)", run_script},
};
const size_t tg_vitcp_scenario_count = sizeof tg_vitcp_scenarios / sizeof tg_vitcp_scenarios[0];
