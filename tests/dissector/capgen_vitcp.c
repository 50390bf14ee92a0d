/*
 * Test captures for the VI/TCP dissector (tests/dissector/test_vitcp*.py),
 * built with the wire library's encoder and the netio pcap writer:
 * every type and field, CRC on/off/bad/other readings, mid-stream starts,
 * split/coalesced/byte-by-byte segments, bad lengths and resync, message
 * reassembly with interleaved read responses and a retransmission, RDMA read
 * tracking, and one capture per group of broken rules.
 *
 * Usage: capgen_vitcp DIR   (writes DIR/vitcp-*.pcap)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vitcp/pcap_writer.h"
#include "vitcp/vitcp.h"

#define CLIENT_IP "10.0.0.1"
#define SERVER_IP "10.0.0.2"
#define CLIENT_INIT_MSG 100u /* the client's initial message number I (V14) */
#define SERVER_INIT_MSG 500u

struct cap {
    struct vn_pcap_writer *w;
    struct vn_tcp_flow f;
    bool crc; /* trailers on data segments */
};

static const char *out_dir;
static int failures;

static void die(const char *what)
{
    fprintf(stderr, "capgen_vitcp: %s\n", what);
    exit(1);
}

static void cap_open(struct cap *c, const char *name, uint16_t client_port, uint16_t server_port, bool handshake)
{
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    c->w = vn_pcap_open(path, err, sizeof err);
    if (!c->w)
        die(err);
    if (vn_tcp_flow_init(&c->f, vn_pcap_sink(c->w), CLIENT_IP, client_port, SERVER_IP, server_port) != 0)
        die("flow init");
    if (handshake && vn_tcp_handshake(&c->f) != 0)
        die("handshake");
    c->crc = false;
}

static void cap_close(struct cap *c)
{
    vn_tcp_close(&c->f);
    if (vn_pcap_close(c->w) != 0)
        failures++;
}

/* Encode into buf; exits on a builder error (a bug in this file). */
static size_t encode(const struct vw_vitcp_enc *e, uint8_t *buf, size_t cap)
{
    size_t n = vw_vitcp_encode(e, buf, cap);
    if (!n)
        die("encode");
    return n;
}

static void send_enc(struct cap *c, enum vn_dir dir, const struct vw_vitcp_enc *e)
{
    uint8_t buf[70000];
    size_t n = encode(e, buf, sizeof buf);
    if (vn_tcp_send_segment(&c->f, dir, buf, n) != 0)
        die("send");
}

struct ce_args {
    bool crc_opt, urgent_opt;
    uint16_t attrs;
    uint32_t mtu;
    uint16_t window;
    const char *calling, *called;
    uint32_t msg_num, msg_ack;
};

static void ce_enc(struct vw_vitcp_enc *e, unsigned type, const struct ce_args *a, uint8_t *opts)
{
    vw_vitcp_enc_init(e, type, a->crc_opt);
    e->ce.attrs = a->attrs;
    e->ce.mtu = a->mtu;
    e->ce.rdma_read_window = a->window;
    e->ce.calling_disc_len = (uint16_t)strlen(a->calling);
    memcpy(e->ce.calling_disc, a->calling, strlen(a->calling));
    e->ce.called_disc_len = (uint16_t)strlen(a->called);
    memcpy(e->ce.called_disc, a->called, strlen(a->called));
    e->ce.options = opts;
    e->ce.options_len = vw_vitcp_opts_build(opts, 16, a->crc_opt, a->urgent_opt, a->crc_opt);
    e->hdr.msg_num = a->msg_num;
    e->hdr.msg_ack = a->msg_ack;
    e->hdr.rx_desc_posted = 8;
}

#define ATTRS_RD_RW (VW_VITCP_ATTR_RELIABLE_DELIVERY | VW_VITCP_ATTR_RDMA_WRITE | VW_VITCP_ATTR_RDMA_READ)

/* ConnectRequest then ConnectAccept, as V9/V14/V15 describe. */
static void connect(struct cap *c, bool crc, uint16_t client_window, uint16_t server_window)
{
    uint8_t opts[16];
    struct vw_vitcp_enc e;
    struct ce_args req = {crc, false, ATTRS_RD_RW, 65536, client_window, "client-1", "server-A", CLIENT_INIT_MSG, 0};
    ce_enc(&e, VW_VITCP_CONNECT_REQUEST, &req, opts);
    send_enc(c, VN_C2S, &e);
    struct ce_args acc = {crc, false, ATTRS_RD_RW, 32768, server_window, "client-1", "server-A", SERVER_INIT_MSG,
                          CLIENT_INIT_MSG};
    ce_enc(&e, VW_VITCP_CONNECT_ACCEPT, &acc, opts);
    send_enc(c, VN_S2C, &e);
    c->crc = crc;
}

static void data_enc(struct vw_vitcp_enc *e, const struct cap *c, unsigned type, uint32_t msg_num, uint32_t off,
                     const uint8_t *payload, size_t len, bool eom)
{
    vw_vitcp_enc_init(e, type, c->crc);
    e->hdr.msg_num = msg_num;
    e->hdr.data_offset = off;
    e->hdr.flags = eom ? VW_VITCP_FLAG_EOM : 0;
    e->payload = payload;
    e->payload_len = len;
    e->hdr.rx_desc_posted = 8;
}

static void send_data(struct cap *c, enum vn_dir dir, unsigned type, uint32_t msg_num, uint32_t off,
                      const uint8_t *payload, size_t len, bool eom)
{
    struct vw_vitcp_enc e;
    data_enc(&e, c, type, msg_num, off, payload, len, eom);
    send_enc(c, dir, &e);
}

static void send_nop(struct cap *c, enum vn_dir dir, uint32_t msg_num)
{
    send_data(c, dir, VW_VITCP_NOP, msg_num, 0, NULL, 0, true);
}

static void send_read_req(struct cap *c, enum vn_dir dir, uint32_t msg_num, uint64_t addr, uint32_t handle,
                          uint32_t length)
{
    struct vw_vitcp_enc e;
    data_enc(&e, c, VW_VITCP_RDMA_READ_REQ, msg_num, 0, NULL, 0, true);
    e.rdma.addr = addr;
    e.rdma.handle = handle;
    e.rdma.length = length;
    send_enc(c, dir, &e);
}

static uint8_t pattern[65536];

/* Every type and field, CRC negotiated (or not). */
static void gen_basic(const char *name, bool crc)
{
    struct cap c;
    cap_open(&c, name, 40000, VW_VITCP_DEFAULT_PORT, true);
    connect(&c, crc, 4, 8);
    /* Send 101 with immediate data */
    struct vw_vitcp_enc e;
    data_enc(&e, &c, VW_VITCP_SEND, CLIENT_INIT_MSG + 1, 0, pattern, 100, true);
    e.hdr.flags |= VW_VITCP_FLAG_IDV;
    e.hdr.imm_data = 0xCAFEF00Du;
    e.hdr.msg_ack = SERVER_INIT_MSG;
    send_enc(&c, VN_C2S, &e);
    /* RdmaWrite 102 */
    data_enc(&e, &c, VW_VITCP_RDMA_WRITE, CLIENT_INIT_MSG + 2, 0, pattern, 64, true);
    e.rdma.addr = 0x1122334455667788ull;
    e.rdma.handle = 0xABCD0001u;
    e.rdma.length = 64;
    send_enc(&c, VN_C2S, &e);
    /* RdmaReadRequest 103 and its response */
    send_read_req(&c, VN_C2S, CLIENT_INIT_MSG + 3, 0x2000, 0xABCD0002u, 48);
    send_data(&c, VN_S2C, VW_VITCP_RDMA_READ_RESP, CLIENT_INIT_MSG + 3, 0, pattern, 48, true);
    /* NOP from the server: last message it sent is its initial number */
    data_enc(&e, &c, VW_VITCP_NOP, SERVER_INIT_MSG, 0, NULL, 0, true);
    e.hdr.rx_desc_posted = 12;
    e.hdr.msg_ack = CLIENT_INIT_MSG + 3;
    send_enc(&c, VN_S2C, &e);
    /* A three-segment Send 104, one VI segment per TCP segment */
    send_data(&c, VN_C2S, VW_VITCP_SEND, CLIENT_INIT_MSG + 4, 0, pattern, 1000, false);
    send_data(&c, VN_C2S, VW_VITCP_SEND, CLIENT_INIT_MSG + 4, 1000, pattern + 1000, 1000, false);
    send_data(&c, VN_C2S, VW_VITCP_SEND, CLIENT_INIT_MSG + 4, 2000, pattern + 2000, 500, true);
    cap_close(&c);
}

/* Trailers written wrong: inverted, big-endian placement, MSB-first CRC. */
static void gen_badcrc(void)
{
    struct cap c;
    cap_open(&c, "vitcp-badcrc.pcap", 40001, VW_VITCP_DEFAULT_PORT, true);
    connect(&c, true, 4, 4);
    static const enum vw_vitcp_trailer kinds[] = {VW_VITCP_TRAILER_BAD_CRC, VW_VITCP_TRAILER_CRC_BE,
                                                  VW_VITCP_TRAILER_CRC_MSB_FIRST, VW_VITCP_TRAILER_CRC};
    for (unsigned i = 0; i < 4; i++) {
        struct vw_vitcp_enc e;
        data_enc(&e, &c, VW_VITCP_SEND, CLIENT_INIT_MSG + 1 + i, 0, pattern + 7, 40, true);
        e.trailer = kinds[i];
        send_enc(&c, VN_C2S, &e);
    }
    cap_close(&c);
}

/* The capture starts after the CE exchange (no SYN, no CE segments). */
static void gen_midstream(const char *name, bool crc)
{
    struct cap c;
    cap_open(&c, name, 40002, VW_VITCP_DEFAULT_PORT, false);
    c.crc = crc;
    for (unsigned i = 0; i < 3; i++)
        send_data(&c, VN_C2S, VW_VITCP_SEND, 700 + i, 0, pattern + i, 60, true);
    send_nop(&c, VN_S2C, 900);
    send_data(&c, VN_S2C, VW_VITCP_SEND, 901, 0, pattern, 80, true);
    cap_close(&c);
}

/* Split and coalesced VI segments. */
static void gen_split(void)
{
    struct cap c;
    uint8_t buf[8192];
    struct vw_vitcp_enc e;
    cap_open(&c, "vitcp-split.pcap", 40003, VW_VITCP_DEFAULT_PORT, true);
    connect(&c, true, 4, 4);
    /* One 1000-byte Send segment over three TCP segments */
    data_enc(&e, &c, VW_VITCP_SEND, CLIENT_INIT_MSG + 1, 0, pattern, 1000, true);
    size_t n = encode(&e, buf, sizeof buf);
    vn_tcp_send_segment(&c.f, VN_C2S, buf, 10);
    vn_tcp_send_segment(&c.f, VN_C2S, buf + 10, 500);
    vn_tcp_send_segment(&c.f, VN_C2S, buf + 510, n - 510);
    /* Three Sends coalesced in one TCP segment */
    size_t at = 0;
    for (unsigned i = 0; i < 3; i++) {
        data_enc(&e, &c, VW_VITCP_SEND, CLIENT_INIT_MSG + 2 + i, 0, pattern + i, 30 + i, true);
        at += encode(&e, buf + at, sizeof buf - at);
    }
    vn_tcp_send_segment(&c.f, VN_C2S, buf, at);
    /* A NOP byte by byte */
    data_enc(&e, &c, VW_VITCP_NOP, SERVER_INIT_MSG, 0, NULL, 0, true);
    n = encode(&e, buf, sizeof buf);
    for (size_t i = 0; i < n; i++)
        vn_tcp_send_segment(&c.f, VN_S2C, buf + i, 1);
    /* A Send whose segment ends together with the start of a NOP split in two */
    at = 0;
    data_enc(&e, &c, VW_VITCP_SEND, CLIENT_INIT_MSG + 5, 0, pattern, 20, true);
    at += encode(&e, buf, sizeof buf);
    data_enc(&e, &c, VW_VITCP_NOP, CLIENT_INIT_MSG + 5, 0, NULL, 0, true);
    at += encode(&e, buf + at, sizeof buf - at);
    vn_tcp_send_segment(&c.f, VN_C2S, buf, at - 9);
    vn_tcp_send_segment(&c.f, VN_C2S, buf + at - 9, 9);
    cap_close(&c);
}

/* Bad Segment Length, then a capture that starts inside a segment. */
static void gen_resync(void)
{
    struct cap c;
    uint8_t buf[4096];
    struct vw_vitcp_enc e;
    cap_open(&c, "vitcp-resync.pcap", 40004, VW_VITCP_DEFAULT_PORT, true);
    connect(&c, false, 4, 4);
    /* A header with Segment Length 10, 30 bytes of junk, then a good Send */
    size_t at = 0;
    data_enc(&e, &c, VW_VITCP_NOP, CLIENT_INIT_MSG, 0, NULL, 0, true);
    e.keep_seg_len = true;
    e.hdr.seg_len = 10;
    at += encode(&e, buf, sizeof buf);
    memset(buf + at, 0xEE, 30);
    at += 30;
    data_enc(&e, &c, VW_VITCP_SEND, CLIENT_INIT_MSG + 1, 0, pattern, 50, true);
    at += encode(&e, buf + at, sizeof buf - at);
    vn_tcp_send_segment(&c.f, VN_C2S, buf, at);
    /* A following NOP in its own TCP segment frames again */
    send_nop(&c, VN_C2S, CLIENT_INIT_MSG + 1);
    cap_close(&c);

    /* Capture gap: the first TCP segment seen starts in the middle of a
     * Send (its last 37 bytes), followed by a NOP in the same TCP segment. */
    cap_open(&c, "vitcp-gap.pcap", 40005, VW_VITCP_DEFAULT_PORT, false);
    uint8_t tail[64];
    memset(tail, 0xAA, sizeof tail);
    data_enc(&e, &c, VW_VITCP_NOP, 41, 0, NULL, 0, true);
    at = 0;
    memcpy(buf, tail, 37);
    at = 37 + encode(&e, buf + 37, sizeof buf - 37);
    vn_tcp_send_segment(&c.f, VN_C2S, buf, at);
    send_data(&c, VN_C2S, VW_VITCP_SEND, 42, 0, pattern, 16, true);
    cap_close(&c);
}

/* Reassembly: a Send interleaved with RdmaReadResponse segments (2.2.2.2.3),
 * an RdmaWrite in two segments, and a retransmitted TCP segment. */
static void gen_reassembly(void)
{
    struct cap c;
    uint8_t buf[4096];
    struct vw_vitcp_enc e;
    cap_open(&c, "vitcp-reasm.pcap", 40006, VW_VITCP_DEFAULT_PORT, true);
    connect(&c, true, 4, 4);
    send_read_req(&c, VN_C2S, CLIENT_INIT_MSG + 1, 0x9000, 0x77, 3000); /* read of 3000 bytes */
    /* Server: Send 501 (3 x 1000) interleaved with the response (3 x 1000) */
    for (unsigned i = 0; i < 3; i++) {
        send_data(&c, VN_S2C, VW_VITCP_SEND, SERVER_INIT_MSG + 1, 1000 * i, pattern + 1000 * i, 1000, i == 2);
        send_data(&c, VN_S2C, VW_VITCP_RDMA_READ_RESP, CLIENT_INIT_MSG + 1, 1000 * i, pattern + 5000 + 1000 * i,
                  1000, i == 2);
    }
    /* RdmaWrite 102 in two segments, the first retransmitted */
    data_enc(&e, &c, VW_VITCP_RDMA_WRITE, CLIENT_INIT_MSG + 2, 0, pattern, 700, false);
    e.rdma.addr = 0x5000;
    e.rdma.handle = 0x42;
    e.rdma.length = 1200;
    size_t n = encode(&e, buf, sizeof buf);
    uint64_t first_off = c.f.next_off[VN_C2S];
    vn_tcp_send_segment(&c.f, VN_C2S, buf, n);
    vn_tcp_send_at(&c.f, VN_C2S, first_off, buf, n); /* retransmission, same bytes */
    data_enc(&e, &c, VW_VITCP_RDMA_WRITE, CLIENT_INIT_MSG + 2, 700, pattern + 700, 500, true);
    e.rdma.addr = 0x5000;
    e.rdma.handle = 0x42;
    e.rdma.length = 1200;
    send_enc(&c, VN_C2S, &e);
    cap_close(&c);
}

/* RDMA read tracking: window overrun, unknown response, unanswered read. */
static void gen_reads(void)
{
    struct cap c;
    cap_open(&c, "vitcp-reads.pcap", 40007, VW_VITCP_DEFAULT_PORT, true);
    connect(&c, false, 4, 2); /* the server holds at most 2 inbound reads */
    send_read_req(&c, VN_C2S, CLIENT_INIT_MSG + 1, 0x1000, 1, 200);
    send_read_req(&c, VN_C2S, CLIENT_INIT_MSG + 2, 0x2000, 1, 100);
    send_read_req(&c, VN_C2S, CLIENT_INIT_MSG + 3, 0x3000, 1, 100); /* third: beyond the window */
    vn_pcap_pause(c.w, 5000);
    send_data(&c, VN_S2C, VW_VITCP_RDMA_READ_RESP, CLIENT_INIT_MSG + 1, 0, pattern, 120, false);
    send_data(&c, VN_S2C, VW_VITCP_RDMA_READ_RESP, CLIENT_INIT_MSG + 1, 120, pattern + 120, 80, true);
    send_data(&c, VN_S2C, VW_VITCP_RDMA_READ_RESP, CLIENT_INIT_MSG + 3, 0, pattern, 100, true);
    send_data(&c, VN_S2C, VW_VITCP_RDMA_READ_RESP, 9999, 0, pattern, 10, true); /* no such request */
    cap_close(&c);
}

/* One connection per group of broken rules. */
static void gen_experts(void)
{
    struct cap c;
    struct vw_vitcp_enc e;
    uint8_t opts[16];
    cap_open(&c, "vitcp-experts.pcap", 40008, VW_VITCP_DEFAULT_PORT, true);
    connect(&c, false, 4, 4);
    /* frame 6: NOP with IDV, immediate data, Data Offset and reserved error bits */
    data_enc(&e, &c, VW_VITCP_NOP, CLIENT_INIT_MSG, 0, NULL, 0, true);
    e.hdr.flags |= VW_VITCP_FLAG_IDV;
    e.hdr.imm_data = 5;
    e.hdr.data_offset = 4;
    e.hdr.remote_err = 0x0010;
    send_enc(&c, VN_C2S, &e);
    /* frame 7: Send 105 skips message numbers; Transmit Error set */
    data_enc(&e, &c, VW_VITCP_SEND, CLIENT_INIT_MSG + 5, 0, pattern, 10, true);
    e.hdr.flags |= VW_VITCP_FLAG_TXERR;
    send_enc(&c, VN_C2S, &e);
    /* frames 8-9: Send 106 whose second segment has the wrong Data Offset */
    send_data(&c, VN_C2S, VW_VITCP_SEND, CLIENT_INIT_MSG + 6, 0, pattern, 10, false);
    send_data(&c, VN_C2S, VW_VITCP_SEND, CLIENT_INIT_MSG + 6, 99, pattern, 10, true);
    /* frame 10: NOP with the wrong message number */
    send_nop(&c, VN_C2S, 7);
    /* frame 11: unknown type 12 */
    data_enc(&e, &c, VW_VITCP_NOP, CLIENT_INIT_MSG + 6, 0, NULL, 0, true);
    e.hdr.type = 12;
    send_enc(&c, VN_C2S, &e);
    /* frame 12: a whole segment of version 2 */
    data_enc(&e, &c, VW_VITCP_NOP, CLIENT_INIT_MSG + 6, 0, NULL, 0, true);
    e.hdr.version = 2;
    send_enc(&c, VN_C2S, &e);
    /* frame 13: RdmaWrite too short for its RDMA header */
    data_enc(&e, &c, VW_VITCP_NOP, CLIENT_INIT_MSG + 6, 0, NULL, 8, true);
    e.hdr.type = VW_VITCP_RDMA_WRITE;
    e.payload = pattern;
    send_enc(&c, VN_C2S, &e);
    /* frame 14: urgent pointer one past the first byte of a NOP (BSD) */
    data_enc(&e, &c, VW_VITCP_NOP, CLIENT_INIT_MSG + 6, 0, NULL, 0, true);
    uint8_t nop[64];
    size_t n = encode(&e, nop, sizeof nop);
    vn_tcp_raw(&c.f, VN_C2S, VN_TCP_ACK | VN_TCP_PSH | VN_TCP_URG, c.f.next_off[VN_C2S], 1, NULL, 0, nop, n);
    cap_close(&c);

    /* Accept with a larger MTU, another level and another peer-to-peer bit;
     * a ConnectReject and data after it on a second connection. */
    cap_open(&c, "vitcp-ce-experts.pcap", 40009, VW_VITCP_DEFAULT_PORT, true);
    struct ce_args req = {true, false, VW_VITCP_ATTR_RELIABLE_DELIVERY, 32768, 4, "c", "s", 10, 0};
    ce_enc(&e, VW_VITCP_CONNECT_REQUEST, &req, opts);
    send_enc(&c, VN_C2S, &e);
    struct ce_args acc = {false, false, VW_VITCP_ATTR_RELIABLE_RECEPTION | VW_VITCP_ATTR_P2P, 65536, 4, "c", "s",
                          20, 10};
    ce_enc(&e, VW_VITCP_CONNECT_ACCEPT, &acc, opts);
    send_enc(&c, VN_S2C, &e);
    cap_close(&c);
    cap_open(&c, "vitcp-reject.pcap", 40010, VW_VITCP_DEFAULT_PORT, true);
    struct ce_args req2 = {false, false, VW_VITCP_ATTR_RELIABLE_DELIVERY | VW_VITCP_ATTR_UNRELIABLE, 65536, 4,
                           "c", "nobody", 10, 0};
    ce_enc(&e, VW_VITCP_CONNECT_REQUEST, &req2, opts);
    send_enc(&c, VN_C2S, &e);
    data_enc(&e, &c, VW_VITCP_CONNECT_REJECT, 0, 0, NULL, 0, true);
    send_enc(&c, VN_S2C, &e);
    send_data(&c, VN_C2S, VW_VITCP_SEND, 11, 0, pattern, 10, true); /* after the reject */
    cap_close(&c);
}

/* A tester's ConnectRequest of Version 2 (vitcp-conform's 050), which the
 * server rightly closes without an answer (V24). */
static void gen_version2(void)
{
    struct cap c;
    struct vw_vitcp_enc e;
    uint8_t opts[16];
    cap_open(&c, "vitcp-version2.pcap", 40013, VW_VITCP_DEFAULT_PORT, true);
    struct ce_args req = {false, false, VW_VITCP_ATTR_RELIABLE_DELIVERY, 65536, 0, "vitcp-conform-tester",
                          "vitcp-conform", 1000, 0};
    ce_enc(&e, VW_VITCP_CONNECT_REQUEST, &req, opts);
    e.hdr.version = 2;
    send_enc(&c, VN_C2S, &e);
    cap_close(&c);
}

/* Not on port 5995: found by the heuristic from a ConnectRequest, and
 * mid-stream from a payload that is exactly a chain of segments. */
static void gen_heuristic(void)
{
    struct cap c;
    cap_open(&c, "vitcp-heur.pcap", 40011, 7700, true);
    connect(&c, true, 4, 4);
    send_data(&c, VN_C2S, VW_VITCP_SEND, CLIENT_INIT_MSG + 1, 0, pattern, 20, true);
    cap_close(&c);
    cap_open(&c, "vitcp-heur-mid.pcap", 40012, 7701, false);
    send_data(&c, VN_C2S, VW_VITCP_SEND, 300, 0, pattern, 20, true);
    send_nop(&c, VN_S2C, 77);
    cap_close(&c);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: capgen_vitcp DIR\n");
        return 2;
    }
    out_dir = argv[1];
    mkdir(out_dir, 0755);
    for (size_t i = 0; i < sizeof pattern; i++)
        pattern[i] = (uint8_t)(i * 7 + 3);
    gen_basic("vitcp-basic.pcap", true);
    gen_basic("vitcp-nocrc.pcap", false);
    gen_badcrc();
    gen_midstream("vitcp-mid-crc.pcap", true);
    gen_midstream("vitcp-mid-nocrc.pcap", false);
    gen_split();
    gen_resync();
    gen_reassembly();
    gen_reads();
    gen_experts();
    gen_version2();
    gen_heuristic();
    if (failures) {
        fprintf(stderr, "capgen_vitcp: %d capture(s) failed to write\n", failures);
        return 1;
    }
    return 0;
}
