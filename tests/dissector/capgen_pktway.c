/*
 * Test captures for the PacketWay EEP dissector (tests/dissector/test_pktway.py),
 * built with the wire library's EEP encoder and the netio pcap writer, over
 * Ethernet (Ethertype 0x88B5) and UDP (port 5998): routing records, symbols,
 * optional header fields, IPv4 in the data block, ERR with an error
 * indication, then one message per group of broken rules.
 *
 * Usage: capgen_pktway DIR   (writes DIR/pktway-*.pcap)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "vitcp/pcap_writer.h"
#include "vitcp/pktway.h"

static const char *out_dir;
static struct vn_endpoint host_a, host_b;
static const uint8_t mac_a[6] = { 2, 0, 0, 0, 0, 1 }, mac_b[6] = { 2, 0, 0, 0, 0, 2 };

static void die(const char *what)
{
    fprintf(stderr, "capgen_pktway: %s\n", what);
    exit(1);
}

static struct vn_pcap_writer *open_cap(const char *name)
{
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/%s", out_dir, name);
    struct vn_pcap_writer *w = vn_pcap_open(path, err, sizeof err);
    if (!w)
        die(err);
    return w;
}

static size_t encode(const struct vw_eep_enc *enc, uint8_t *buf, size_t cap)
{
    size_t n = vw_eep_encode(enc, buf, cap);
    if (!n)
        die("encode");
    return n;
}

static void udp(struct vn_pcap_writer *w, const uint8_t *p, size_t n)
{
    if (vn_udp_send(vn_pcap_sink(w), &host_a, &host_b, p, n) != 0)
        die("udp");
}

static void eth(struct vn_pcap_writer *w, const uint8_t *p, size_t n)
{
    if (vn_eth_send(vn_pcap_sink(w), mac_a, mac_b, VW_EEP_ETHERTYPE, p, n) != 0)
        die("eth");
}

static void gen_good(void)
{
    struct vn_pcap_writer *w = open_cap("pktway-good.pcap");
    uint8_t buf[2048];
    struct vw_eep_enc enc;
    /* 1: Ethernet, an L2RH of 13 routing bytes and a 9-byte symbol, IPv4 inside */
    static const uint8_t route[13] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 };
    static const uint8_t sym[9] = { 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9 };
    struct vw_eep_route_enc routes[2] = {
        { .kind = VW_EEP_ROUTE_L2RH, .data = route, .data_len = sizeof route },
        { .kind = VW_EEP_ROUTE_SYMBOL, .symbol_type = 0xABCDE, .data = sym, .data_len = sizeof sym },
    };
    uint8_t ip[28] = { 0x45, 0, 0, 28, 0, 1, 0, 0, 64, 253, 0, 0, 192, 168, 7, 1, 192, 168, 7, 2,
                       'p', 'k', 't', 'w', 'a', 'y', '!', '!' };
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2)
        sum += (uint32_t)(ip[i] << 8 | ip[i + 1]);
    while (sum >> 16)
        sum = (sum & 0xFFFF) + (sum >> 16);
    ip[10] = (uint8_t)(~sum >> 8);
    ip[11] = (uint8_t)~sum;
    vw_eep_enc_init(&enc, 0x000123, 0x000042, 0x0800, ip, sizeof ip);
    enc.routes = routes;
    enc.n_routes = 2;
    eth(w, buf, encode(&enc, buf, sizeof buf));
    /* 2: UDP, RRP with one optional header field (4 bytes), 5 data bytes */
    static const uint8_t ohdata[4] = { 0xde, 0xad, 0xbe, 0xef };
    struct vw_eep_oh_enc oh = { .mandatory = false, .type = 5, .data = ohdata, .data_len = 4 };
    vw_eep_enc_init(&enc, 0x000123, 0x000042, 0x0001, (const uint8_t *)"hello", 5);
    enc.hdr.te = 0x0007;
    enc.oh = &oh;
    enc.n_oh = 1;
    udp(w, buf, encode(&enc, buf, sizeof buf));
    /* 3: UDP, ERR "Destination Unknown" to Hey-You, errors flagged 0 and 3 shifts back */
    vw_eep_enc_init(&enc, VW_EEP_ADDR_HEY_YOU, 0x000042, 0x0002, (const uint8_t *)"12345678", 8);
    enc.hdr.te = 0x0001;
    enc.ei = 0x9;
    udp(w, buf, encode(&enc, buf, sizeof buf));
    if (vn_pcap_close(w) != 0)
        die("close");
}

static void gen_faults(void)
{
    struct vn_pcap_writer *w = open_cap("pktway-faults.pcap");
    uint8_t buf[2048];
    struct vw_eep_enc enc;
    /* 1: version, RZ, SA not physical, DT undefined, PL without data, unknown PT */
    vw_eep_enc_init(&enc, 0x000000, 0x800001, 0x1234, NULL, 0);
    enc.hdr.version = 1;
    enc.hdr.rz = 5;
    enc.keep_lengths = true;
    enc.hdr.dl = 0;
    enc.hdr.pl = 3;
    udp(w, buf, encode(&enc, buf, sizeof buf));
    /* 2: a mandatory OH, and a chain that never sets C */
    struct vw_eep_oh_enc oh = { .mandatory = true, .type = 9, .last = false, .data = (const uint8_t *)"ab", .data_len = 2 };
    vw_eep_enc_init(&enc, 0x000123, 0x000042, 0x0001, (const uint8_t *)"data", 4);
    enc.oh = &oh;
    enc.n_oh = 1;
    enc.keep_c = true;
    udp(w, buf, encode(&enc, buf, sizeof buf));
    /* 3: reserved DT kind, trailer bytes without optional header fields */
    vw_eep_enc_init(&enc, 0xC00001, 0x000042, 0x0001, (const uint8_t *)"data", 4);
    enc.ot = (const uint8_t *)"TRAILER!";
    enc.ot_len = 8;
    udp(w, buf, encode(&enc, buf, sizeof buf));
    /* 4: DL runs past the message */
    vw_eep_enc_init(&enc, 0x000123, 0x000042, 0x0001, (const uint8_t *)"data", 4);
    enc.keep_lengths = true;
    enc.hdr.dl = 100;
    enc.hdr.pl = 4;
    udp(w, buf, encode(&enc, buf, sizeof buf));
    /* 5: an L2RH announcing 13 routing bytes with 4 left */
    static const uint8_t cut_l2rh[6] = { 0x00, 0x8D, 1, 2, 3, 4 };
    udp(w, cut_l2rh, sizeof cut_l2rh);
    /* 6: shorter than header + TAIL */
    static const uint8_t cut_hdr[12] = { 0, 0, 1, 0x23, 0, 0, 0, 1, 0, 0, 0, 0 };
    udp(w, cut_hdr, sizeof cut_hdr);
    /* 7: an OH announcing trailer fields, with 8 trailer bytes */
    struct vw_eep_oh_enc oh2 = { .mandatory = false, .type = 1, .data = (const uint8_t *)"crc", .data_len = 3 };
    vw_eep_enc_init(&enc, 0x000123, 0x000042, 0x0001, (const uint8_t *)"data", 4);
    enc.oh = &oh2;
    enc.n_oh = 1;
    enc.ot = (const uint8_t *)"\x11\x22\x33\x44\x55\x66\x77\x88";
    enc.ot_len = 8;
    udp(w, buf, encode(&enc, buf, sizeof buf));
    /* 8: Ethernet, a short message padded to the minimum frame, symbol priority 3 */
    struct vw_eep_route_enc sym = { .kind = VW_EEP_ROUTE_SYMBOL, .priority = 3, .symbol_type = 1,
                                    .data = (const uint8_t *)"s", .data_len = 1 };
    vw_eep_enc_init(&enc, 0x000123, 0x000042, 0x0001, NULL, 0);
    enc.routes = &sym;
    enc.n_routes = 1;
    memset(buf, 0, sizeof buf);
    size_t n = encode(&enc, buf, sizeof buf);
    eth(w, buf, n < 46 ? 46 : n);
    if (vn_pcap_close(w) != 0)
        die("close");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: capgen_pktway DIR\n");
        return 2;
    }
    out_dir = argv[1];
    if (mkdir(out_dir, 0755) != 0 && errno != EEXIST)
        die("cannot create the output folder");
    if (vn_endpoint_set(&host_a, "10.0.0.1", 40003) != 0 || vn_endpoint_set(&host_b, "10.0.0.2", VW_EEP_UDP_PORT) != 0)
        die("endpoints");
    gen_good();
    gen_faults();
    return 0;
}
