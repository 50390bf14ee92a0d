/* The capture writer: frames read back with libpcap have the headers,
 * checksums, sequence numbers and timestamps the flow promised. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vitcp/bytes.h"
#include "vitcp/pcap_reader.h"
#include "vitcp/pcap_writer.h"

struct frame {
    struct pcap_pkthdr h;
    uint8_t data[VN_FRAME_MAX];
};

static char tmp_path[64];

static struct frame *read_all(const char *path, size_t *count)
{
    char err[PCAP_ERRBUF_SIZE];
    pcap_t *p = pcap_open_offline(path, err);
    assert_non_null(p);
    assert_int_equal(pcap_datalink(p), DLT_EN10MB);
    struct frame *frames = NULL;
    size_t n = 0;
    struct pcap_pkthdr *h;
    const u_char *d;
    while (pcap_next_ex(p, &h, &d) == 1) {
        frames = realloc(frames, (n + 1) * sizeof *frames);
        assert_non_null(frames);
        frames[n].h = *h;
        memcpy(frames[n].data, d, h->caplen);
        n++;
    }
    pcap_close(p);
    *count = n;
    return frames;
}

static void make_tmp(void)
{
    snprintf(tmp_path, sizeof tmp_path, "/tmp/vitcp-writer-XXXXXX");
    int fd = mkstemp(tmp_path);
    assert_true(fd >= 0);
    close(fd);
}

/* A pcap writer on a fresh tmp_path. */
static struct vn_pcap_writer *open_tmp_writer(void)
{
    make_tmp();
    char err[256];
    struct vn_pcap_writer *w = vn_pcap_open(tmp_path, err, sizeof err);
    if (w == NULL)
        fail_msg("cannot write %s: %s", tmp_path, err);
    return w;
}

/* Verify the IPv4 header and TCP checksums of a frame; return the TCP header. */
static const uint8_t *check_ipv4_tcp(const struct frame *fr, size_t *payload_len)
{
    const uint8_t *eth = fr->data;
    assert_int_equal(vw_get_be16(eth + 12), VN_ETHERTYPE_IPV4);
    const uint8_t *ip = eth + 14;
    assert_int_equal(ip[0], 0x45);
    assert_int_equal(ip[9], 6);
    assert_int_equal(vn_inet_fold(vn_inet_sum(0, ip, 20)), 0);
    size_t total = vw_get_be16(ip + 2);
    assert_int_equal(total + 14, fr->h.caplen);
    const uint8_t *tcp = ip + 20;
    size_t l4 = total - 20;
    uint32_t pseudo = vn_inet_sum(0, ip + 12, 8) + 6 + (uint32_t)l4;
    assert_int_equal(vn_inet_fold(vn_inet_sum(pseudo, tcp, l4)), 0);
    *payload_len = l4 - (size_t)(tcp[12] >> 4) * 4;
    return tcp;
}

static void test_tcp_conversation(void **state)
{
    (void)state;
    struct vn_pcap_writer *w = open_tmp_writer();
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 40000, "10.0.0.2", 5995), 0);
    uint8_t data[3000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 7);
    assert_int_equal(vn_tcp_handshake(&f), 0);              /* frames 0-2 */
    assert_int_equal(vn_tcp_send(&f, VN_C2S, data, 3000), 0); /* 3-5: 1460+1460+80 */
    assert_int_equal(vn_tcp_ack(&f, VN_S2C), 0);             /* 6 */
    assert_int_equal(vn_tcp_send_segment(&f, VN_S2C, data, 100), 0); /* 7 */
    assert_int_equal(vn_tcp_close(&f), 0);                   /* 8-11 */
    assert_int_equal(vn_pcap_frames(w), 12);
    assert_int_equal(vn_pcap_close(w), 0);

    size_t n;
    struct frame *fr = read_all(tmp_path, &n);
    assert_int_equal(n, 12);
    size_t plen;
    const uint8_t *tcp = check_ipv4_tcp(&fr[0], &plen);
    assert_int_equal(tcp[13], VN_TCP_SYN);
    assert_int_equal(vw_get_be32(tcp + 4), 1000);
    assert_int_equal(vw_get_be16(tcp), 40000);
    assert_int_equal(vw_get_be16(tcp + 2), 5995);
    assert_int_equal(tcp[20], 2); /* MSS option */
    assert_int_equal(vw_get_be16(tcp + 22), 1460);
    tcp = check_ipv4_tcp(&fr[1], &plen);
    assert_int_equal(tcp[13], VN_TCP_SYN | VN_TCP_ACK);
    assert_int_equal(vw_get_be32(tcp + 4), 5000);
    assert_int_equal(vw_get_be32(tcp + 8), 1001);
    tcp = check_ipv4_tcp(&fr[3], &plen);
    assert_int_equal(plen, 1460);
    assert_int_equal(vw_get_be32(tcp + 4), 1001);
    assert_int_equal(vw_get_be32(tcp + 8), 5001);
    assert_memory_equal(tcp + 20, data, 1460);
    tcp = check_ipv4_tcp(&fr[5], &plen);
    assert_int_equal(plen, 80);
    assert_int_equal(vw_get_be32(tcp + 4), 1001 + 2920);
    assert_int_equal(tcp[13], VN_TCP_ACK | VN_TCP_PSH);
    tcp = check_ipv4_tcp(&fr[6], &plen);
    assert_int_equal(vw_get_be32(tcp + 8), 4001);
    tcp = check_ipv4_tcp(&fr[7], &plen);
    assert_int_equal(plen, 100);
    assert_int_equal(vw_get_be32(tcp + 4), 5001);
    tcp = check_ipv4_tcp(&fr[8], &plen); /* client FIN */
    assert_int_equal(tcp[13], VN_TCP_FIN | VN_TCP_ACK);
    assert_int_equal(vw_get_be32(tcp + 4), 4001);
    assert_int_equal(vw_get_be32(tcp + 8), 5101);
    tcp = check_ipv4_tcp(&fr[9], &plen); /* server ACKs the FIN */
    assert_int_equal(vw_get_be32(tcp + 8), 4002);
    tcp = check_ipv4_tcp(&fr[11], &plen); /* client ACKs the server FIN */
    assert_int_equal(vw_get_be32(tcp + 4), 4002);
    assert_int_equal(vw_get_be32(tcp + 8), 5102);
    /* Deterministic clock. */
    assert_int_equal(fr[0].h.ts.tv_sec, VN_PCAP_START_SEC);
    assert_int_equal(fr[0].h.ts.tv_usec, 0);
    assert_int_equal(fr[11].h.ts.tv_usec, 11 * VN_PCAP_STEP_USEC);
    free(fr);
    unlink(tmp_path);
}

static void test_out_of_order_gap_rst(void **state)
{
    (void)state;
    struct vn_pcap_writer *w = open_tmp_writer();
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 1, "10.0.0.2", 2), 0);
    const uint8_t a[10] = "0123456789";
    assert_int_equal(vn_tcp_send_at(&f, VN_C2S, 5, a + 5, 5), 0);
    assert_int_equal(vn_tcp_send_at(&f, VN_C2S, 0, a, 5), 0);
    assert_int_equal(f.next_off[VN_C2S], 10);
    vn_tcp_skip(&f, VN_C2S, 7);
    assert_int_equal(vn_tcp_send_segment(&f, VN_C2S, a, 3), 0);
    assert_int_equal(vn_tcp_rst(&f, VN_S2C), 0);
    assert_int_equal(vn_pcap_close(w), 0);
    size_t n, plen;
    struct frame *fr = read_all(tmp_path, &n);
    assert_int_equal(n, 4);
    assert_int_equal(vw_get_be32(check_ipv4_tcp(&fr[0], &plen) + 4), 1006);
    assert_int_equal(vw_get_be32(check_ipv4_tcp(&fr[1], &plen) + 4), 1001);
    assert_int_equal(vw_get_be32(check_ipv4_tcp(&fr[2], &plen) + 4), 1018);
    const uint8_t *tcp = check_ipv4_tcp(&fr[3], &plen);
    assert_int_equal(tcp[13], VN_TCP_RST | VN_TCP_ACK);
    assert_int_equal(vw_get_be32(tcp + 8), 1021);
    free(fr);
    unlink(tmp_path);
}

static void test_ipv6_udp_eth_vlan(void **state)
{
    (void)state;
    struct vn_pcap_writer *w = open_tmp_writer();
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "fd00::1", 1234, "fd00::2", 5995), 0);
    f.vlan = 42;
    const uint8_t payload[5] = {1, 2, 3, 4, 5};
    assert_int_equal(vn_tcp_send_segment(&f, VN_C2S, payload, 5), 0);
    struct vn_endpoint a, b;
    assert_int_equal(vn_endpoint_set(&a, "192.168.1.1", 5998), 0);
    assert_int_equal(vn_endpoint_set(&b, "192.168.1.2", 5998), 0);
    assert_int_equal(vn_udp_send(vn_pcap_sink(w), &a, &b, payload, 5), 0);
    assert_int_equal(vn_eth_send(vn_pcap_sink(w), a.mac, b.mac, VN_ETHERTYPE_PKTWAY, payload, 5), 0);
    vn_pcap_pause(w, 1000000);
    assert_int_equal(vn_eth_send(vn_pcap_sink(w), a.mac, b.mac, VN_ETHERTYPE_PKTWAY, payload, 0), 0);
    assert_int_equal(vn_pcap_close(w), 0);

    size_t n;
    struct frame *fr = read_all(tmp_path, &n);
    assert_int_equal(n, 4);
    /* IPv6 over VLAN 42. */
    const uint8_t *e = fr[0].data;
    assert_int_equal(vw_get_be16(e + 12), VN_ETHERTYPE_VLAN);
    assert_int_equal(vw_get_be16(e + 14), 42);
    assert_int_equal(vw_get_be16(e + 16), VN_ETHERTYPE_IPV6);
    const uint8_t *ip6 = e + 18;
    assert_int_equal(ip6[0] >> 4, 6);
    assert_int_equal(ip6[6], 6);
    size_t l4 = vw_get_be16(ip6 + 4);
    assert_int_equal(l4, 25);
    uint32_t pseudo = vn_inet_sum(0, ip6 + 8, 32) + 6 + (uint32_t)l4;
    assert_int_equal(vn_inet_fold(vn_inet_sum(pseudo, ip6 + 40, l4)), 0);
    assert_memory_equal(ip6 + 60, payload, 5);
    /* UDP with checksum. */
    const uint8_t *ip = fr[1].data + 14;
    assert_int_equal(ip[9], 17);
    assert_int_equal(vn_inet_fold(vn_inet_sum(0, ip, 20)), 0);
    uint32_t upseudo = vn_inet_sum(0, ip + 12, 8) + 17 + 13;
    assert_int_equal(vw_get_be16(ip + 24), 13);
    assert_int_equal(vn_inet_fold(vn_inet_sum(upseudo, ip + 20, 13)), 0);
    assert_int_equal(vw_get_be16(ip + 22), 5998);
    /* Raw Ethertype 0x88B5; MACs derived from the addresses. */
    assert_int_equal(vw_get_be16(fr[2].data + 12), 0x88B5);
    assert_int_equal(fr[2].data[0], 0x02);
    assert_int_equal(fr[2].data[5], 2);
    assert_int_equal(fr[2].h.caplen, 19);
    assert_memory_equal(fr[2].data + 14, payload, 5);
    /* The pause shows in the timestamps. */
    uint64_t t2 = (uint64_t)fr[2].h.ts.tv_sec * 1000000 + (uint64_t)fr[2].h.ts.tv_usec;
    uint64_t t3 = (uint64_t)fr[3].h.ts.tv_sec * 1000000 + (uint64_t)fr[3].h.ts.tv_usec;
    assert_int_equal(t3 - t2, 1000000 + VN_PCAP_STEP_USEC);
    free(fr);
    unlink(tmp_path);
}

static void test_tcp_timestamps(void **state)
{
    (void)state;
    struct vn_pcap_writer *w = open_tmp_writer();
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 1, "10.0.0.2", 2), 0);
    f.timestamps = true;
    assert_int_equal(vn_tcp_handshake(&f), 0);
    const uint8_t d[3] = {7, 8, 9};
    assert_int_equal(vn_tcp_send(&f, VN_S2C, d, 3), 0);
    assert_int_equal(vn_pcap_close(w), 0);
    size_t n, plen;
    struct frame *fr = read_all(tmp_path, &n);
    assert_int_equal(n, 4);
    const uint8_t *tcp = check_ipv4_tcp(&fr[0], &plen); /* SYN: MSS then NOP NOP TS */
    assert_int_equal(tcp[12] >> 4, 9);
    assert_int_equal(tcp[20], 2);
    assert_int_equal(tcp[26], 8);
    assert_int_equal(vw_get_be32(tcp + 28), 1);
    tcp = check_ipv4_tcp(&fr[1], &plen); /* SYN-ACK echoes the client's TSval */
    assert_int_equal(vw_get_be32(tcp + 28), 1);
    assert_int_equal(vw_get_be32(tcp + 32), 1);
    tcp = check_ipv4_tcp(&fr[3], &plen); /* data: NOP NOP TS only */
    assert_int_equal(tcp[12] >> 4, 8);
    assert_int_equal(tcp[22], 8);
    assert_int_equal(vw_get_be32(tcp + 24), 2);
    assert_int_equal(vw_get_be32(tcp + 28), 2);
    assert_int_equal(plen, 3);
    assert_memory_equal(tcp + 32, d, 3);
    free(fr);
    unlink(tmp_path);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    char err[256] = "";
    assert_null(vn_pcap_open("/nonexistent-dir/x.pcap", err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent-dir/x.pcap"));
    assert_null(vn_pcap_open("", err, sizeof err));
    struct vn_tcp_flow f;
    struct vn_sink none = {NULL, NULL};
    assert_int_equal(vn_tcp_flow_init(&f, none, "10.0.0.1", 1, "fd00::2", 2), -1);
    assert_int_equal(vn_tcp_flow_init(&f, none, "not-an-ip", 1, "10.0.0.2", 2), -1);
    /* Oversized payloads and options are refused, not truncated. */
    static uint8_t buf[VN_FRAME_MAX];
    static uint8_t big[65536];
    struct vn_endpoint a, b;
    vn_endpoint_set(&a, "10.0.0.1", 1);
    vn_endpoint_set(&b, "10.0.0.2", 2);
    struct vn_tcp_hdr_spec s = {.src = &a, .dst = &b};
    assert_int_equal(vn_build_tcp(buf, sizeof buf, &s, big, 65535 - 40 + 1), 0);
    assert_int_equal(vn_build_tcp(buf, sizeof buf, &s, big, 65535 - 40), 65535 + 14);
    s.options_len = 41;
    s.options = big;
    assert_int_equal(vn_build_tcp(buf, sizeof buf, &s, NULL, 0), 0);
    assert_int_equal(vn_build_udp(buf, 10, &a, &b, 0, NULL, 0), 0);
    /* Known checksum: RFC 1071 example bytes. */
    const uint8_t rfc[8] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
    assert_int_equal(vn_inet_fold(vn_inet_sum(0, rfc, 8)), (uint16_t)~0xddf2u);
}

/* One conversation written as pcap and as pcapng by the same calls. */
static void write_conversation(const char *path, enum vn_capture_format fmt, const char *shb_comment)
{
    char err[256];
    struct vn_pcap_writer *w = vn_capture_open(path, fmt, shb_comment, err, sizeof err);
    assert_non_null(w);
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.0.0.1", 40000, "10.0.0.2", 5995), 0);
    uint8_t data[2000];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (uint8_t)(i * 13);
    assert_int_equal(vn_tcp_handshake(&f), 0);                /* frames 0-2 */
    vn_pcap_comment_next(w, "first data frame");
    assert_int_equal(vn_tcp_send(&f, VN_C2S, data, 2000), 0);  /* 3-4 (1460 + 540) */
    vn_pcap_comment_next(w, "dropped");
    vn_pcap_comment_next(w, NULL);                             /* cleared: no comment */
    assert_int_equal(vn_tcp_send_segment(&f, VN_S2C, data, 3), 0); /* 5: odd length, padded */
    assert_int_equal(vn_tcp_close(&f), 0);
    assert_int_equal(vn_pcap_close(w), 0);
}

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static uint16_t le16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

/* The comment option (code 1) in an options area, or NULL. */
static const uint8_t *find_comment(const uint8_t *o, size_t n, size_t *len)
{
    size_t pos = 0;
    while (pos + 4 <= n) {
        uint16_t code = le16(o + pos), l = le16(o + pos + 2);
        if (code == 0)
            return NULL;
        if (code == 1) {
            *len = l;
            return o + pos + 4;
        }
        pos += 4 + ((l + 3u) & ~3u);
    }
    return NULL;
}

static void count_tcp(void *ctx, const struct vn_tcp_event *ev)
{
    if (ev->kind == VN_TCP_DATA)
        *(size_t *)ctx += ev->len;
}

static void test_pcapng(void **state)
{
    (void)state;
    char ng[80], classic[80];
    make_tmp();
    snprintf(ng, sizeof ng, "%s.pcapng", tmp_path);
    snprintf(classic, sizeof classic, "%s", tmp_path);
    assert_int_equal(vn_capture_format_for(ng), VN_CAPTURE_PCAPNG);
    assert_int_equal(vn_capture_format_for("x.PCAPNG"), VN_CAPTURE_PCAPNG);
    assert_int_equal(vn_capture_format_for("x.pcap"), VN_CAPTURE_PCAP);
    assert_int_equal(vn_capture_format_for("pcapng"), VN_CAPTURE_PCAP);
    const char *section = "seed: 7\nmutation: none"; /* 22 bytes: padded to 24 */
    write_conversation(ng, VN_CAPTURE_PCAPNG, section);
    write_conversation(classic, VN_CAPTURE_PCAP, section);

    /* Blocks: SHB (with the comment), IDB (Ethernet), one EPB per frame,
     * each length at both ends, multiple of 4. */
    FILE *fp = fopen(ng, "rb");
    assert_non_null(fp);
    static uint8_t file[65536];
    size_t size = fread(file, 1, sizeof file, fp);
    fclose(fp);
    size_t pos = 0, epbs = 0, commented = 0;
    while (pos < size) {
        assert_true(size - pos >= 12);
        uint32_t type = le32(file + pos), len = le32(file + pos + 4);
        assert_int_equal(len % 4, 0);
        assert_true(len >= 12 && len <= size - pos);
        assert_int_equal(le32(file + pos + len - 4), len);
        const uint8_t *body = file + pos + 8;
        size_t clen = 0;
        const uint8_t *c;
        if (pos == 0) {
            assert_int_equal(type, 0x0A0D0D0Au);
            assert_int_equal(le32(body), 0x1A2B3C4Du);
            assert_int_equal(le16(body + 4), 1);
            c = find_comment(body + 16, len - 28, &clen);
            assert_non_null(c);
            assert_int_equal(clen, strlen(section));
            assert_memory_equal(c, section, clen);
        } else if (pos == le32(file + 4)) {
            assert_int_equal(type, 1);
            assert_int_equal(le16(body), 1); /* LINKTYPE_ETHERNET */
        } else {
            assert_int_equal(type, 6);
            uint32_t caplen = le32(body + 12);
            size_t opts = 20 + ((caplen + 3u) & ~3u);
            c = find_comment(body + opts, len - 12 - opts, &clen);
            if (epbs == 3) {
                assert_non_null(c);
                assert_int_equal(clen, strlen("first data frame"));
                assert_memory_equal(c, "first data frame", clen);
            }
            commented += c != NULL;
            uint64_t ts = (uint64_t)le32(body + 4) << 32 | le32(body + 8);
            assert_int_equal(ts, (uint64_t)VN_PCAP_START_SEC * 1000000u + epbs * VN_PCAP_STEP_USEC);
            epbs++;
        }
        pos += len;
    }
    assert_int_equal(commented, 1);

    /* libpcap reads both; same frames, same timestamps. */
    size_t n1, n2;
    struct frame *a = read_all(ng, &n1), *b = read_all(classic, &n2);
    assert_int_equal(n1, epbs);
    assert_int_equal(n1, n2);
    for (size_t i = 0; i < n1; i++) {
        assert_int_equal(a[i].h.caplen, b[i].h.caplen);
        assert_memory_equal(a[i].data, b[i].data, a[i].h.caplen);
        assert_int_equal(a[i].h.ts.tv_usec, b[i].h.ts.tv_usec);
    }
    free(a);
    free(b);

    /* The project's reader follows the TCP stream in it. */
    size_t bytes = 0;
    struct vn_reader_callbacks cb = {count_tcp, NULL, NULL, &bytes, NULL};
    char err[256];
    assert_int_equal(vn_pcap_read(ng, &cb, NULL, NULL, err, sizeof err), 0);
    assert_int_equal(bytes, 2003);

    /* Errors: no directory, no name. */
    assert_null(vn_capture_open("/nonexistent-dir/x.pcapng", VN_CAPTURE_PCAPNG, NULL, err, sizeof err));
    assert_non_null(strstr(err, "/nonexistent-dir/x.pcapng"));
    assert_null(vn_capture_open("", VN_CAPTURE_PCAPNG, NULL, err, sizeof err));
    unlink(ng);
    unlink(classic);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tcp_conversation),
        cmocka_unit_test(test_out_of_order_gap_rst),
        cmocka_unit_test(test_ipv6_udp_eth_vlan),
        cmocka_unit_test(test_tcp_timestamps),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_pcapng),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
