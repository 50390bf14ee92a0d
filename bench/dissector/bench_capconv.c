/* Baseline captures for the dissector benchmark: re-frame the TCP payloads of
 * a capture written by vitcp-trafgen as
 *   mpa    iWARP MPA (RFC 5044, markers off, CRC on): an MPA Request/Reply,
 *          then one FPDU per TCP segment of the input, of the same size
 *          (rounded up to the 4-byte FPDU alignment, at least 24 bytes),
 *          each carrying a DDP untagged RDMAP Send (a tagged RDMA Write when
 *          under 16 payload bytes), so Wireshark's own
 *          iwarp_mpa -> iwarp_ddp_rdmap dissectors do the work;
 *   plain  the very same TCP payload bytes on an unregistered port, for
 *          plain TCP (the benchmark also disables the plugin's heuristics).
 * The TCP conversation (handshake, segment order, pure ACKs, close) follows
 * the input, which must hold one TCP connection over IPv4 (what trafgen
 * writes with its defaults).
 *
 * usage: bench_capconv mpa|plain IN.pcap OUT.pcap [--port N]
 * Prints "segments N bytes N adjusted N" (adjusted: segments whose size MPA
 * framing could not keep exactly). Exit 0, 1 on I/O errors, 2 on bad use. */
#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vitcp/checksum.h"
#include "vitcp/pcap_writer.h"
#include "vitcp/tcp_flow.h"

#define MPA_KEY_LEN 16
#define MPA_MIN_FPDU 24 /* 2 length + 18 DDP/RDMAP untagged header + 4 CRC */
#define DDP_UNTAGGED_HDR 18
#define DDP_TAGGED_HDR 14

enum mode { MODE_MPA, MODE_PLAIN };

struct conv {
    enum mode mode;
    struct vn_tcp_flow flow;
    uint16_t client_port;
    bool have_client;
    bool started;
    uint32_t msn[2];
    uint64_t segments, bytes, adjusted;
    uint8_t buf[65536];
};

static void put_be16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* MPA Request or Reply frame: key, M=0 C=1 R=0, Rev 1, no private data. */
static int send_mpa_start(struct conv *c, enum vn_dir dir)
{
    uint8_t f[20];
    memcpy(f, dir == VN_C2S ? "MPA ID Req Frame" : "MPA ID Rep Frame", MPA_KEY_LEN);
    f[16] = 0x40; /* CRC flag */
    f[17] = 1;    /* revision */
    put_be16(f + 18, 0);
    return vn_tcp_send_segment(&c->flow, dir, f, sizeof f);
}

/* One FPDU of total length len (a multiple of 4, >= 24) whose Send payload is
 * taken from src (the input's bytes after a 24-byte header, for similar
 * content). */
static size_t build_fpdu(struct conv *c, enum vn_dir dir, size_t len, const uint8_t *src, size_t srclen)
{
    uint8_t *f = c->buf;
    size_t ulpdu = len - 2 - 4; /* no pad: 2 + ulpdu is a multiple of 4 when len is */
    size_t hdr;
    put_be16(f, (uint16_t)ulpdu);
    if (ulpdu - DDP_UNTAGGED_HDR >= 16) {
        f[2] = 0x41; /* DDP: untagged, Last, DV 1 */
        f[3] = 0x43; /* RDMAP: RV 1, opcode 3 Send */
        put_be32(f + 4, 0); /* reserved for the ULP */
        put_be32(f + 8, 0); /* queue number 0 (Send queue) */
        put_be32(f + 12, ++c->msn[dir]);
        put_be32(f + 16, 0); /* message offset */
        hdr = DDP_UNTAGGED_HDR;
    } else {
        /* Under 16 payload bytes (a VI/TCP NOP's size) Wireshark's RPC-over-RDMA
         * heuristic throws on a Send: carry a tagged RDMA Write instead. */
        f[2] = 0xc1; /* DDP: tagged, Last, DV 1 */
        f[3] = 0x40; /* RDMAP: RV 1, opcode 0 RDMA Write */
        put_be32(f + 4, 0x1000u + dir); /* STag */
        put_be32(f + 8, 0);
        put_be32(f + 12, (uint32_t)c->segments * 64u); /* tagged offset */
        hdr = DDP_TAGGED_HDR;
    }
    size_t payload = ulpdu - hdr;
    /* Skip the input PDU's own header: its payload is what a Send carries. */
    size_t skip = srclen > 24 ? 24 : srclen;
    src += skip;
    srclen -= skip;
    for (size_t i = 0; i < payload; i++)
        f[2 + hdr + i] = i < srclen ? src[i] : (uint8_t)i;
    vw_put_le32(f + len - 4, vw_crc32c(f, len - 4)); /* as Wireshark's iwarp_mpa checks it */
    return len;
}

static int on_segment(struct conv *c, enum vn_dir dir, const uint8_t *payload, size_t len)
{
    c->segments++;
    if (c->mode == MODE_PLAIN) {
        c->bytes += len;
        return vn_tcp_send_segment(&c->flow, dir, payload, len);
    }
    size_t want = len < MPA_MIN_FPDU ? MPA_MIN_FPDU : (len + 3) & ~(size_t)3;
    if (want > 65495)
        want = 65492;
    if (want != len)
        c->adjusted++;
    c->bytes += want;
    build_fpdu(c, dir, want, payload, len);
    return vn_tcp_send_segment(&c->flow, dir, c->buf, want);
}

static int start(struct conv *c, const uint8_t *ip, uint16_t sport, uint16_t dport, uint16_t out_port)
{
    char a[16], b[16];
    bool c2s = sport == c->client_port;
    const uint8_t *cli = c2s ? ip + 12 : ip + 16, *srv = c2s ? ip + 16 : ip + 12;
    snprintf(a, sizeof a, "%u.%u.%u.%u", cli[0], cli[1], cli[2], cli[3]);
    snprintf(b, sizeof b, "%u.%u.%u.%u", srv[0], srv[1], srv[2], srv[3]);
    (void)dport;
    if (vn_tcp_flow_init(&c->flow, c->flow.sink, a, c->client_port, b, out_port) != 0)
        return -1;
    c->started = true;
    if (vn_tcp_handshake(&c->flow) != 0)
        return -1;
    if (c->mode == MODE_MPA && (send_mpa_start(c, VN_C2S) != 0 || send_mpa_start(c, VN_S2C) != 0))
        return -1;
    return 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: bench_capconv mpa|plain IN.pcap OUT.pcap [--port N]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc != 4 && argc != 6)
        return usage();
    static struct conv c;
    if (strcmp(argv[1], "mpa") == 0)
        c.mode = MODE_MPA;
    else if (strcmp(argv[1], "plain") == 0)
        c.mode = MODE_PLAIN;
    else
        return usage();
    unsigned long out_port = c.mode == MODE_MPA ? 5999 : 47999;
    if (argc == 6) {
        char *end;
        errno = 0;
        out_port = strtoul(argv[5], &end, 10);
        if (strcmp(argv[4], "--port") != 0 || errno || *end || out_port == 0 || out_port > 65535)
            return usage();
    }

    char errbuf[PCAP_ERRBUF_SIZE];
    pcap_t *in = pcap_open_offline(argv[2], errbuf);
    if (!in) {
        fprintf(stderr, "bench_capconv: %s\n", errbuf);
        return 1;
    }
    if (pcap_datalink(in) != DLT_EN10MB) {
        fprintf(stderr, "bench_capconv: %s: not an Ethernet capture\n", argv[2]);
        pcap_close(in);
        return 1;
    }
    char err[256];
    struct vn_pcap_writer *w = vn_pcap_open(argv[3], err, sizeof err);
    if (!w) {
        fprintf(stderr, "bench_capconv: %s\n", err);
        pcap_close(in);
        return 1;
    }
    c.flow.sink = vn_pcap_sink(w);

    int rc = 0;
    struct pcap_pkthdr *h;
    const u_char *p;
    int r;
    uint16_t server_port = 0;
    while (rc == 0 && (r = pcap_next_ex(in, &h, &p)) == 1) {
        size_t n = h->caplen;
        if (n < 14 || p[12] != 0x08 || p[13] != 0x00)
            continue; /* not IPv4 */
        const uint8_t *ip = p + 14;
        n -= 14;
        size_t ihl = (size_t)(ip[0] & 0x0f) * 4;
        if (n < 20 || (ip[0] >> 4) != 4 || ihl < 20 || n < ihl || ip[9] != 6)
            continue;
        size_t tot = (size_t)ip[2] << 8 | ip[3];
        if (tot < ihl || tot > n) {
            fprintf(stderr, "bench_capconv: truncated or bad IPv4 frame, skipped\n");
            continue;
        }
        const uint8_t *tcp = ip + ihl;
        size_t tcplen = tot - ihl;
        size_t doff = tcplen >= 20 ? (size_t)(tcp[12] >> 4) * 4 : 0;
        if (doff < 20 || doff > tcplen)
            continue;
        uint16_t sport = (uint16_t)(tcp[0] << 8 | tcp[1]), dport = (uint16_t)(tcp[2] << 8 | tcp[3]);
        uint8_t flags = tcp[13];
        if (!c.have_client) {
            /* The sender of the first SYN (or, mid-stream, of the first frame) is the client. */
            c.client_port = (flags & VN_TCP_SYN) && (flags & VN_TCP_ACK) ? dport : sport;
            server_port = (flags & VN_TCP_SYN) && (flags & VN_TCP_ACK) ? sport : dport;
            c.have_client = true;
        }
        if (!((sport == c.client_port && dport == server_port) || (dport == c.client_port && sport == server_port))) {
            fprintf(stderr, "bench_capconv: %s holds more than one TCP connection\n", argv[2]);
            rc = 1;
            break;
        }
        if (!c.started && start(&c, ip, sport, dport, (uint16_t)out_port) != 0) {
            fprintf(stderr, "bench_capconv: cannot write %s\n", argv[3]);
            rc = 1;
            break;
        }
        enum vn_dir dir = sport == c.client_port ? VN_C2S : VN_S2C;
        size_t len = tcplen - doff;
        if (len > 0)
            rc = on_segment(&c, dir, tcp + doff, len);
        else if ((flags & (VN_TCP_SYN | VN_TCP_FIN | VN_TCP_RST)) == 0 && (flags & VN_TCP_ACK))
            rc = vn_tcp_ack(&c.flow, dir);
        if (rc != 0)
            fprintf(stderr, "bench_capconv: cannot write %s\n", argv[3]);
    }
    if (rc == 0 && r == PCAP_ERROR) {
        fprintf(stderr, "bench_capconv: %s: %s\n", argv[2], pcap_geterr(in));
        rc = 1;
    }
    if (rc == 0 && !c.started) {
        fprintf(stderr, "bench_capconv: %s holds no IPv4 TCP connection\n", argv[2]);
        rc = 1;
    }
    if (rc == 0 && vn_tcp_close(&c.flow) != 0)
        rc = 1;
    pcap_close(in);
    if (vn_pcap_close(w) != 0 && rc == 0) {
        fprintf(stderr, "bench_capconv: writing %s failed\n", argv[3]);
        rc = 1;
    }
    if (rc == 0)
        printf("segments %llu bytes %llu adjusted %llu\n", (unsigned long long)c.segments,
               (unsigned long long)c.bytes, (unsigned long long)c.adjusted);
    return rc == 0 ? 0 : 1;
}
