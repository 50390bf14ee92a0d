/*
 * Test captures for the IFT dissector (tests/dissector/test_ift*.py), built
 * with the wire library's IFT encoders and the netio pcap writer: a good
 * negotiation with different CRC choices per direction, tagged and untagged
 * DDP frames, split and coalesced frames, then one capture per group of
 * broken rules.
 *
 * Usage: capgen_ift DIR   (writes DIR/ift-*.pcap)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/stat.h>

#include "vitcp/ift.h"
#include "vitcp/pcap_writer.h"

#define VTAG_A 0x1111u /* announced by the client (A): the server puts it in its frames */
#define VTAG_B 0x2222u

static const char *out_dir;

static void die(const char *what)
{
    fprintf(stderr, "capgen_ift: %s\n", what);
    exit(1);
}

struct cap {
    struct vn_pcap_writer *w;
    struct vn_tcp_flow f;
};

static void cap_open(struct cap *c, const char *name, uint16_t server_port)
{
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    c->w = vn_pcap_open(path, err, sizeof err);
    if (!c->w)
        die(err);
    if (vn_tcp_flow_init(&c->f, vn_pcap_sink(c->w), "10.0.0.1", 40001, "10.0.0.2", server_port) != 0 ||
        vn_tcp_handshake(&c->f) != 0)
        die("flow");
}

static void cap_close(struct cap *c)
{
    if (vn_tcp_close(&c->f) != 0 || vn_pcap_close(c->w) != 0)
        die("close");
}

static void send_seg(struct cap *c, enum vn_dir dir, const uint8_t *p, size_t n)
{
    if (vn_tcp_send_segment(&c->f, dir, p, n) != 0)
        die("send");
}

static size_t indication(uint8_t *buf, const struct vw_ift_ind_enc *enc)
{
    size_t n = vw_ift_ind_encode(enc, buf, VW_IFT_IND_LEN);
    if (n != VW_IFT_IND_LEN)
        die("indication encode");
    return n;
}

static void send_indication(struct cap *c, enum vn_dir dir, unsigned phase, uint16_t vtag, bool hc, bool pc,
                            uint32_t extra_flags)
{
    struct vw_ift_ind_enc enc;
    uint8_t buf[VW_IFT_IND_LEN];
    vw_ift_ind_enc_init(&enc, phase, vtag, hc, pc);
    enc.flags |= extra_flags;
    send_seg(c, dir, buf, indication(buf, &enc));
}

/* An untagged RDMAP Send (18-byte DDP header) or a tagged RDMA Write (14). */
static size_t ddp_header(uint8_t *buf, bool tagged, uint32_t msn)
{
    struct vw_ddp_hdr h;
    memset(&h, 0, sizeof h);
    h.tagged = tagged;
    h.last = true;
    h.dv = VW_DDP_VERSION;
    h.rdmap_rv = VW_RDMAP_VERSION;
    if (tagged) {
        h.rdmap_opcode = VW_RDMAP_WRITE;
        h.stag = 0x0000abcd;
        h.to = 0x1000;
    } else {
        h.rdmap_opcode = VW_RDMAP_SEND;
        h.qn = 0;
        h.msn = msn;
        h.mo = 0;
    }
    size_t n = vw_ddp_encode(&h, buf, 32);
    if (!n)
        die("ddp encode");
    return n;
}

/*
 * Wireshark 4.0's RPC-over-RDMA heuristic (packet-rpcrdma.c, called by
 * iwarp_ddp_rdmap for every RDMAP Send) reads the payload's 32-bit word at
 * offset 12 as an RPC-over-RDMA message type before checking the length: a
 * Send payload under 16 bytes throws (the frame shows "Malformed"), and one
 * with 0..4 there (RDMA_MSG..RDMA_ERROR) is claimed. Sample Send payloads
 * are therefore text of 16 bytes or more, which it rejects.
 */
static bool rpcrdma_heuristic_rejects(const char *payload)
{
    if (strlen(payload) < 16)
        return false;
    const unsigned char *p = (const unsigned char *)payload + 12;
    uint32_t msg_type = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
    return msg_type > 4;
}

/* Encode one frame into buf; fault tweaks the encoder. */
static size_t frame(uint8_t *buf, size_t cap, uint16_t vtag, bool hc, bool pc, bool tagged, const char *payload,
                    void (*fault)(struct vw_ift_frame_enc *))
{
    uint8_t ddp[32];
    if (!tagged && !rpcrdma_heuristic_rejects(payload))
        die("Send payload the RPC-over-RDMA heuristic would take (see rpcrdma_heuristic_rejects)");
    size_t ddp_len = ddp_header(ddp, tagged, 1);
    struct vw_ift_frame_enc enc;
    vw_ift_frame_enc_init(&enc, vtag, hc, pc, ddp, ddp_len, (const uint8_t *)payload, strlen(payload));
    if (fault)
        fault(&enc);
    size_t n = vw_ift_frame_encode(&enc, buf, cap);
    if (!n)
        die("frame encode");
    return n;
}

static void fault_bad_hcrc(struct vw_ift_frame_enc *e) { e->hdr_crc = VW_IFT_CRC_BAD; }
static void fault_bad_pcrc(struct vw_ift_frame_enc *e) { e->payload_crc = VW_IFT_CRC_BAD; }
static void fault_omit_pcrc(struct vw_ift_frame_enc *e) { e->payload_crc = VW_IFT_CRC_OMIT; }
static void fault_short_ddp(struct vw_ift_frame_enc *e) { e->ddp_len = 10; }

/* Good: A (client) announces HC+PC, B (server) HC only and SP. Frames each
 * way, one split over three segments, two coalesced in one segment. */
static void gen_good(void)
{
    struct cap c;
    uint8_t buf[4096];
    size_t n, m;
    cap_open(&c, "ift-good.pcap", VW_IFT_DEFAULT_PORT);
    send_indication(&c, VN_C2S, 0, VTAG_A, true, true, 0);
    send_indication(&c, VN_S2C, 1, VTAG_B, true, false, VW_IFT_FLAG_SP);
    n = frame(buf, sizeof buf, VTAG_B, true, true, false, "hello from side A", NULL);
    send_seg(&c, VN_C2S, buf, n);                                 /* frame 6 */
    n = frame(buf, sizeof buf, VTAG_A, true, false, true, "write from B", NULL);
    send_seg(&c, VN_S2C, buf, n);                                 /* frame 7 */
    n = frame(buf, sizeof buf, VTAG_B, true, true, true, "split across three segments", NULL);
    send_seg(&c, VN_C2S, buf, 5);                                 /* frames 8-10 */
    send_seg(&c, VN_C2S, buf + 5, 20);
    send_seg(&c, VN_C2S, buf + 25, n - 25);
    n = frame(buf, sizeof buf, VTAG_A, true, false, false, "first of two frames", NULL);
    m = frame(buf + n, sizeof buf - n, VTAG_A, true, false, true, "second of two", NULL);
    send_seg(&c, VN_S2C, buf, n + m);                             /* frame 11 */
    cap_close(&c);
}

/* Frame faults after a good negotiation (A: HC+PC). */
static void gen_frame_faults(void)
{
    struct cap c;
    uint8_t buf[4096];
    size_t n, m;
    cap_open(&c, "ift-frame-faults.pcap", VW_IFT_DEFAULT_PORT);
    send_indication(&c, VN_C2S, 0, VTAG_A, true, true, 0);        /* frame 4 */
    send_indication(&c, VN_S2C, 1, VTAG_B, true, true, 0);        /* frame 5 */
    n = frame(buf, sizeof buf, VTAG_B, true, true, false, "frame with a bad header crc", fault_bad_hcrc);
    send_seg(&c, VN_C2S, buf, n);                                 /* frame 6 */
    n = frame(buf, sizeof buf, VTAG_B, true, true, false, "frame with a bad payload crc", fault_bad_pcrc);
    send_seg(&c, VN_C2S, buf, n);                                 /* frame 7 */
    n = frame(buf, sizeof buf, 0x9999, true, true, false, "frame with a wrong vtag", NULL);
    send_seg(&c, VN_C2S, buf, n);                                 /* frame 8 */
    /* payload CRC left out although announced, then a good frame behind it */
    n = frame(buf, sizeof buf, VTAG_B, true, true, false, "frame without its payload crc", fault_omit_pcrc);
    m = frame(buf + n, sizeof buf - n, VTAG_B, true, true, false, "good frame after it", NULL);
    send_seg(&c, VN_C2S, buf, n + m);                             /* frame 9 */
    n = frame(buf, sizeof buf, VTAG_B, true, true, false, "short ddp header", fault_short_ddp);
    send_seg(&c, VN_C2S, buf, n);                                 /* frame 10 */
    cap_close(&c);
}

/* Indication faults: A's phase 0 breaks the field rules; B answers with
 * phase 0 again and R clear (disagreement). */
static void gen_ind_faults(void)
{
    struct cap c;
    struct vw_ift_ind_enc enc;
    uint8_t buf[VW_IFT_IND_LEN], reserved[VW_IFT_IND_RESERVED_LEN];
    cap_open(&c, "ift-ind-faults.pcap", VW_IFT_DEFAULT_PORT);
    memset(reserved, 0, sizeof reserved);
    reserved[7] = 0x5a;
    vw_ift_ind_enc_init(&enc, 0, VTAG_A, false, false);
    enc.bc_version = 2;
    enc.flags |= 0x00000100u | VW_IFT_FLAG_SM | VW_IFT_FLAG_RM | VW_IFT_FLAG_IH;
    enc.marker_interval = 512;
    enc.reserved = reserved;
    enc.crc = VW_IFT_CRC_BAD;
    send_seg(&c, VN_C2S, buf, indication(buf, &enc));             /* frame 4 */
    vw_ift_ind_enc_init(&enc, 0, VTAG_B, false, false);
    enc.flags &= ~VW_IFT_FLAG_R;
    enc.version = 0;
    send_seg(&c, VN_S2C, buf, indication(buf, &enc));             /* frame 5 */
    /* a newer version with BC version 1 is accepted (note only) */
    vw_ift_ind_enc_init(&enc, 0, VTAG_A, false, false);
    enc.version = 3;
    send_seg(&c, VN_C2S, buf, indication(buf, &enc));             /* frame 6: second from A */
    cap_close(&c);
}

/* Frames with no indication on the IFT port (I7), and an early frame from A
 * before B's phase 1. */
static void gen_order_faults(void)
{
    struct cap c;
    uint8_t buf[4096];
    size_t n;
    cap_open(&c, "ift-order.pcap", VW_IFT_DEFAULT_PORT);
    n = frame(buf, sizeof buf, VTAG_B, false, false, false, "before any indication", NULL);
    send_seg(&c, VN_S2C, buf, n);                                 /* frame 4: B sends no indication first */
    send_indication(&c, VN_C2S, 0, VTAG_A, false, false, 0);      /* frame 5 */
    n = frame(buf, sizeof buf, VTAG_B, false, false, false, "too early for frames", NULL);
    send_seg(&c, VN_C2S, buf, n);                                 /* frame 6: A before phase 1 */
    cap_close(&c);
}

/* Found by the heuristic on an unregistered port. */
static void gen_heuristic(void)
{
    struct cap c;
    uint8_t buf[4096];
    size_t n;
    cap_open(&c, "ift-heuristic.pcap", 40404);
    send_indication(&c, VN_C2S, 0, VTAG_A, false, false, 0);
    send_indication(&c, VN_S2C, 1, VTAG_B, false, false, 0);
    n = frame(buf, sizeof buf, VTAG_B, false, false, false, "found by its magic", NULL);
    send_seg(&c, VN_C2S, buf, n);
    cap_close(&c);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: capgen_ift DIR\n");
        return 2;
    }
    out_dir = argv[1];
    if (mkdir(out_dir, 0755) != 0 && errno != EEXIST)
        die("cannot create the output folder");
    gen_good();
    gen_frame_faults();
    gen_ind_faults();
    gen_order_faults();
    gen_heuristic();
    return 0;
}
