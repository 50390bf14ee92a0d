/*
 * Link, IP and transport framing for captures and raw injection: addresses,
 * the Internet checksum, and builders for Ethernet (optionally 802.1Q) frames
 * carrying IPv4 or IPv6 with TCP or UDP, or any Ethertype. Built frames go to
 * a sink: a pcap file (pcap_writer.h), a libnet injector, or memory.
 *
 * These are the carrier protocols only; the PDUs inside are built by the wire
 * library (vitcp_wire).
 */
#ifndef VITCP_FRAME_H
#define VITCP_FRAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VN_ETH_HDR_LEN 14
#define VN_VLAN_TAG_LEN 4
#define VN_IPV4_HDR_LEN 20
#define VN_IPV6_HDR_LEN 40
#define VN_TCP_HDR_LEN 20
#define VN_UDP_HDR_LEN 8
#define VN_ETHERTYPE_IPV4 0x0800u
#define VN_ETHERTYPE_IPV6 0x86DDu
#define VN_ETHERTYPE_VLAN 0x8100u
#define VN_ETHERTYPE_PKTWAY 0x88B5u /* spec-decisions P1 */
#define VN_UDP_PORT_PKTWAY 5998u     /* spec-decisions P1 */
/* Largest frame a builder writes: Ethernet + VLAN + IPv6 + 64 KiB. */
#define VN_FRAME_MAX (VN_ETH_HDR_LEN + VN_VLAN_TAG_LEN + VN_IPV6_HDR_LEN + 65535u)

/* TCP flags. */
#define VN_TCP_FIN 0x01u
#define VN_TCP_SYN 0x02u
#define VN_TCP_RST 0x04u
#define VN_TCP_PSH 0x08u
#define VN_TCP_ACK 0x10u
#define VN_TCP_URG 0x20u

/* One IP address: family 4 or 6; IPv4 uses the first 4 bytes. */
struct vn_ip {
    uint8_t family;
    uint8_t addr[16];
};

/* One end of a conversation. */
struct vn_endpoint {
    uint8_t mac[6];
    struct vn_ip ip;
    uint16_t port;
};

/* Parse "10.0.0.1" or "fd00::1". Returns 0, or -1 if not an address. */
int vn_ip_parse(const char *text, struct vn_ip *ip);
/* Fill an endpoint from an address text and port; the MAC is derived from the
 * address (02:00 + last 4 address bytes, locally administered) so captures are
 * deterministic. Returns 0 or -1. */
int vn_endpoint_set(struct vn_endpoint *ep, const char *ip_text, uint16_t port);

/* RFC 1071 Internet checksum helpers: accumulate, then fold and complement. */
uint32_t vn_inet_sum(uint32_t sum, const void *buf, size_t len);
uint16_t vn_inet_fold(uint32_t sum);

/* Where built frames go. emit returns 0, or -1 with a message in err. */
struct vn_sink {
    int (*emit)(void *ctx, const uint8_t *frame, size_t len);
    void *ctx;
};

/* Everything the L2-L4 headers need. Fields left zero get sensible values
 * (TTL 64, window 65535). */
struct vn_tcp_hdr_spec {
    const struct vn_endpoint *src;
    const struct vn_endpoint *dst;
    uint16_t vlan;       /* 802.1Q VLAN ID, 0 = untagged */
    uint32_t seq;
    uint32_t ack;
    uint8_t flags;       /* VN_TCP_* */
    uint16_t window;
    uint16_t urgent;     /* urgent pointer (meaningful with VN_TCP_URG) */
    const uint8_t *options; /* raw TCP options, padded by the builder to 4 bytes */
    size_t options_len;  /* at most 40 */
    uint8_t ttl;
    uint16_t ip_id;
    bool bad_checksum;   /* write a wrong TCP checksum on purpose */
};

/* Build a whole Ethernet frame into buf (cap >= VN_FRAME_MAX is always
 * enough). Returns the frame length, or 0 if the arguments cannot make a
 * frame (payload too large, options over 40 bytes, mixed address families). */
size_t vn_build_tcp(uint8_t *buf, size_t cap, const struct vn_tcp_hdr_spec *spec,
                    const uint8_t *payload, size_t len);
size_t vn_build_udp(uint8_t *buf, size_t cap, const struct vn_endpoint *src,
                    const struct vn_endpoint *dst, uint16_t vlan,
                    const uint8_t *payload, size_t len);
size_t vn_build_eth(uint8_t *buf, size_t cap, const uint8_t src_mac[6], const uint8_t dst_mac[6],
                    uint16_t vlan, uint16_t ethertype, const uint8_t *payload, size_t len);

#endif
