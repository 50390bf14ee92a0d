/*
 * Test captures for the WARP dissector (tests/dissector/test_warp.py), built
 * with the wire library's WARP encoder and the netio pcap writer: Send and
 * RDMA Write chunks, a ULP PDU in three chunks, split and coalesced chunks,
 * and one capture with every broken rule.
 *
 * Usage: capgen_warp DIR   (writes DIR/warp-*.pcap)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vitcp/pcap_writer.h"
#include "vitcp/warp.h"

static const char *out_dir;

static void die(const char *what)
{
    fprintf(stderr, "capgen_warp: %s\n", what);
    exit(1);
}

struct cap {
    struct vn_pcap_writer *w;
    struct vn_tcp_flow f;
};

static void cap_open(struct cap *c, const char *name)
{
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    c->w = vn_pcap_open(path, err, sizeof err);
    if (!c->w)
        die(err);
    if (vn_tcp_flow_init(&c->f, vn_pcap_sink(c->w), "10.0.0.1", 40002, "10.0.0.2", VW_WARP_DEFAULT_PORT) != 0 ||
        vn_tcp_handshake(&c->f) != 0)
        die("flow");
}

static void cap_close(struct cap *c)
{
    if (vn_tcp_close(&c->f) != 0 || vn_pcap_close(c->w) != 0)
        die("close");
}

static void send_seg(struct cap *c, const uint8_t *p, size_t n)
{
    if (vn_tcp_send_segment(&c->f, VN_C2S, p, n) != 0)
        die("send");
}

/* One chunk into buf; returns its length. */
static size_t chunk(uint8_t *buf, unsigned type, uint16_t flags, uint32_t id, uint64_t offset, const char *payload,
                    void (*fault)(struct vw_warp_enc *))
{
    struct vw_warp_enc enc;
    vw_warp_enc_init(&enc, type, (const uint8_t *)payload, strlen(payload));
    enc.flags = flags;
    if (type == VW_WARP_RDMA)
        enc.rid = id;
    else
        enc.ssn = id;
    enc.offset = offset;
    if (fault)
        fault(&enc);
    size_t n = vw_warp_encode(&enc, buf, 2048);
    if (!n)
        die("encode");
    return n;
}

static void fault_bad_adler(struct vw_warp_enc *e) { e->adler = VW_WARP_ADLER_BAD; }
static void fault_le_adler(struct vw_warp_enc *e) { e->adler = VW_WARP_ADLER_LE; }
static void fault_rsvd(struct vw_warp_enc *e) { e->rsvd = 0x1FF; }
static void fault_short(struct vw_warp_enc *e) { e->keep_chunk_len = true; e->chunk_len = 10; }

#define L VW_WARP_FLAG_L
#define C VW_WARP_FLAG_C
#define E VW_WARP_FLAG_E

static void gen_good(void)
{
    struct cap c;
    uint8_t buf[4096];
    size_t n, m;
    cap_open(&c, "warp-good.pcap");
    send_seg(&c, buf, chunk(buf, VW_WARP_SEND, L | C, 7, 0, "one whole send", NULL));      /* frame 4 */
    /* a Send ULP PDU in three chunks: frames 5, 6 (split), 7 */
    send_seg(&c, buf, chunk(buf, VW_WARP_SEND, 0, 8, 0, "part one ", NULL));
    n = chunk(buf, VW_WARP_SEND, 0, 8, 9, "part two ", NULL);
    send_seg(&c, buf, 6);
    send_seg(&c, buf + 6, n - 6);
    send_seg(&c, buf, chunk(buf, VW_WARP_SEND, L | C, 8, 18, "part three", NULL));
    /* RDMA Write in two chunks coalesced in one segment: frame 8 */
    n = chunk(buf, VW_WARP_RDMA, 0, 0xabcd0001, 0x100000000ull, "rdma-a", NULL);
    m = chunk(buf + n, VW_WARP_RDMA, L, 0xabcd0001, 0x100000006ull, "rdma-b", NULL);
    send_seg(&c, buf, n + m);
    cap_close(&c);
}

static void gen_faults(void)
{
    struct cap c;
    uint8_t buf[4096];
    cap_open(&c, "warp-faults.pcap");
    send_seg(&c, buf, chunk(buf, VW_WARP_SEND, L, 1, 0, "bad adler", fault_bad_adler));   /* 4 */
    send_seg(&c, buf, chunk(buf, VW_WARP_SEND, L, 2, 0, "le adler", fault_le_adler));     /* 5 */
    send_seg(&c, buf, chunk(buf, VW_WARP_SEND, C, 3, 0, "c without l", NULL));            /* 6 */
    send_seg(&c, buf, chunk(buf, VW_WARP_SEND, L | E, 3, 100, "gap, error", fault_rsvd)); /* 7 */
    send_seg(&c, buf, chunk(buf, VW_WARP_SEND, L, 9, 0, "ssn jump", NULL));               /* 8 */
    send_seg(&c, buf, chunk(buf, VW_WARP_RDMA, 0, 0x10, 0, "rdma-a", NULL));              /* 9 */
    send_seg(&c, buf, chunk(buf, VW_WARP_RDMA, L, 0x11, 64, "rdma-b", NULL));             /* 10 */
    send_seg(&c, buf, chunk(buf, 5, L, 0, 0, "unknown type", NULL));                      /* 11 */
    send_seg(&c, buf, chunk(buf, VW_WARP_SEND, L, 10, 0, "short", fault_short));          /* 12 */
    cap_close(&c);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: capgen_warp DIR\n");
        return 2;
    }
    out_dir = argv[1];
    if (mkdir(out_dir, 0755) != 0 && errno != EEXIST)
        die("cannot create the output folder");
    gen_good();
    gen_faults();
    return 0;
}
