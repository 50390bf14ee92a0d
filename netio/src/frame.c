/* Ethernet / IPv4 / IPv6 / TCP / UDP framing with correct checksums. */
#include "vitcp/frame.h"

#include <arpa/inet.h>
#include <string.h>

#include "vitcp/bytes.h"

int vn_ip_parse(const char *text, struct vn_ip *ip)
{
    memset(ip, 0, sizeof *ip);
    if (text == NULL)
        return -1;
    if (inet_pton(AF_INET, text, ip->addr) == 1) {
        ip->family = 4;
        return 0;
    }
    if (inet_pton(AF_INET6, text, ip->addr) == 1) {
        ip->family = 6;
        return 0;
    }
    return -1;
}

int vn_endpoint_set(struct vn_endpoint *ep, const char *ip_text, uint16_t port)
{
    memset(ep, 0, sizeof *ep);
    if (vn_ip_parse(ip_text, &ep->ip) != 0)
        return -1;
    size_t alen = ep->ip.family == 4 ? 4 : 16;
    ep->mac[0] = 0x02; /* locally administered, unicast */
    ep->mac[1] = 0x00;
    memcpy(ep->mac + 2, ep->ip.addr + alen - 4, 4);
    ep->port = port;
    return 0;
}

uint32_t vn_inet_sum(uint32_t sum, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    /* 64-bit accumulator: no carry is lost for any length we handle. */
    uint64_t acc = sum;
    while (len >= 2) {
        acc += (uint32_t)(p[0] << 8 | p[1]);
        p += 2;
        len -= 2;
    }
    if (len)
        acc += (uint32_t)p[0] << 8;
    while (acc >> 32)
        acc = (acc & 0xFFFFFFFFu) + (acc >> 32);
    return (uint32_t)acc;
}

uint16_t vn_inet_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xFFFFu) + (sum >> 16);
    return (uint16_t)~sum;
}

/* Ethernet (+ optional VLAN tag) header; returns its length. */
static size_t put_eth(uint8_t *buf, const uint8_t *src_mac, const uint8_t *dst_mac, uint16_t vlan,
                      uint16_t ethertype)
{
    memcpy(buf, dst_mac, 6);
    memcpy(buf + 6, src_mac, 6);
    if (vlan) {
        vw_put_be16(buf + 12, VN_ETHERTYPE_VLAN);
        vw_put_be16(buf + 14, (uint16_t)(vlan & 0x0FFFu));
        vw_put_be16(buf + 16, ethertype);
        return VN_ETH_HDR_LEN + VN_VLAN_TAG_LEN;
    }
    vw_put_be16(buf + 12, ethertype);
    return VN_ETH_HDR_LEN;
}

/* IP header for l4_len bytes of protocol proto; returns its length and the
 * pseudo-header sum for the transport checksum. */
static size_t put_ip(uint8_t *buf, const struct vn_ip *src, const struct vn_ip *dst, uint8_t proto,
                     size_t l4_len, uint8_t ttl, uint16_t id, uint32_t *pseudo)
{
    uint32_t sum;
    if (src->family == 4) {
        buf[0] = 0x45;
        buf[1] = 0;
        vw_put_be16(buf + 2, (uint16_t)(VN_IPV4_HDR_LEN + l4_len));
        vw_put_be16(buf + 4, id);
        vw_put_be16(buf + 6, 0x4000); /* DF */
        buf[8] = ttl;
        buf[9] = proto;
        vw_put_be16(buf + 10, 0);
        memcpy(buf + 12, src->addr, 4);
        memcpy(buf + 16, dst->addr, 4);
        vw_put_be16(buf + 10, vn_inet_fold(vn_inet_sum(0, buf, VN_IPV4_HDR_LEN)));
        sum = vn_inet_sum(0, src->addr, 4);
        sum = vn_inet_sum(sum, dst->addr, 4);
        sum += proto;
        sum += (uint32_t)l4_len;
        *pseudo = sum;
        return VN_IPV4_HDR_LEN;
    }
    vw_put_be32(buf, 0x60000000u);
    vw_put_be16(buf + 4, (uint16_t)l4_len);
    buf[6] = proto;
    buf[7] = ttl;
    memcpy(buf + 8, src->addr, 16);
    memcpy(buf + 24, dst->addr, 16);
    sum = vn_inet_sum(0, src->addr, 16);
    sum = vn_inet_sum(sum, dst->addr, 16);
    sum += proto;
    sum += (uint32_t)l4_len;
    *pseudo = sum;
    return VN_IPV6_HDR_LEN;
}

static size_t l2l3_len(const struct vn_ip *ip, uint16_t vlan)
{
    return VN_ETH_HDR_LEN + (vlan ? VN_VLAN_TAG_LEN : 0u) +
           (ip->family == 4 ? VN_IPV4_HDR_LEN : VN_IPV6_HDR_LEN);
}

static bool families_ok(const struct vn_endpoint *a, const struct vn_endpoint *b)
{
    return (a->ip.family == 4 || a->ip.family == 6) && a->ip.family == b->ip.family;
}

size_t vn_build_tcp(uint8_t *buf, size_t cap, const struct vn_tcp_hdr_spec *s,
                    const uint8_t *payload, size_t len)
{
    if (!families_ok(s->src, s->dst) || s->options_len > 40)
        return 0;
    size_t tcp_hdr = VN_TCP_HDR_LEN + ((s->options_len + 3u) & ~(size_t)3u);
    size_t l4_len = tcp_hdr + len;
    /* IPv4 total length and IPv6 payload length are 16-bit. */
    size_t ip_limit = s->src->ip.family == 4 ? 65535u - VN_IPV4_HDR_LEN : 65535u;
    if (l4_len > ip_limit)
        return 0;
    size_t total = l2l3_len(&s->src->ip, s->vlan) + l4_len;
    if (total > cap)
        return 0;
    uint16_t ethertype = s->src->ip.family == 4 ? VN_ETHERTYPE_IPV4 : VN_ETHERTYPE_IPV6;
    size_t off = put_eth(buf, s->src->mac, s->dst->mac, s->vlan, ethertype);
    uint32_t pseudo;
    off += put_ip(buf + off, &s->src->ip, &s->dst->ip, 6, l4_len, s->ttl ? s->ttl : 64, s->ip_id,
                  &pseudo);
    uint8_t *tcp = buf + off;
    vw_put_be16(tcp, s->src->port);
    vw_put_be16(tcp + 2, s->dst->port);
    vw_put_be32(tcp + 4, s->seq);
    vw_put_be32(tcp + 8, s->ack);
    tcp[12] = (uint8_t)((tcp_hdr / 4) << 4);
    tcp[13] = s->flags;
    vw_put_be16(tcp + 14, s->window ? s->window : 65535u);
    vw_put_be16(tcp + 16, 0);
    vw_put_be16(tcp + 18, s->urgent);
    if (s->options_len)
        memcpy(tcp + VN_TCP_HDR_LEN, s->options, s->options_len);
    /* Pad options with End of Option List (0). */
    memset(tcp + VN_TCP_HDR_LEN + s->options_len, 0, tcp_hdr - VN_TCP_HDR_LEN - s->options_len);
    if (len)
        memcpy(tcp + tcp_hdr, payload, len);
    uint16_t ck = vn_inet_fold(vn_inet_sum(pseudo, tcp, l4_len));
    if (s->bad_checksum)
        ck = (uint16_t)(ck ^ 0x5A5Au);
    vw_put_be16(tcp + 16, ck);
    return total;
}

size_t vn_build_udp(uint8_t *buf, size_t cap, const struct vn_endpoint *src,
                    const struct vn_endpoint *dst, uint16_t vlan, const uint8_t *payload,
                    size_t len)
{
    if (!families_ok(src, dst))
        return 0;
    size_t l4_len = VN_UDP_HDR_LEN + len;
    size_t ip_limit = src->ip.family == 4 ? 65535u - VN_IPV4_HDR_LEN : 65535u;
    if (l4_len > ip_limit)
        return 0;
    size_t total = l2l3_len(&src->ip, vlan) + l4_len;
    if (total > cap)
        return 0;
    uint16_t ethertype = src->ip.family == 4 ? VN_ETHERTYPE_IPV4 : VN_ETHERTYPE_IPV6;
    size_t off = put_eth(buf, src->mac, dst->mac, vlan, ethertype);
    uint32_t pseudo;
    off += put_ip(buf + off, &src->ip, &dst->ip, 17, l4_len, 64, 0, &pseudo);
    uint8_t *udp = buf + off;
    vw_put_be16(udp, src->port);
    vw_put_be16(udp + 2, dst->port);
    vw_put_be16(udp + 4, (uint16_t)l4_len);
    vw_put_be16(udp + 6, 0);
    if (len)
        memcpy(udp + VN_UDP_HDR_LEN, payload, len);
    uint16_t ck = vn_inet_fold(vn_inet_sum(pseudo, udp, l4_len));
    vw_put_be16(udp + 6, ck ? ck : 0xFFFFu); /* 0 means "no checksum" in UDP */
    return total;
}

size_t vn_build_eth(uint8_t *buf, size_t cap, const uint8_t src_mac[6], const uint8_t dst_mac[6],
                    uint16_t vlan, uint16_t ethertype, const uint8_t *payload, size_t len)
{
    size_t hdr = VN_ETH_HDR_LEN + (vlan ? VN_VLAN_TAG_LEN : 0u);
    if (len > 65535u || hdr + len > cap)
        return 0;
    size_t off = put_eth(buf, src_mac, dst_mac, vlan, ethertype);
    if (len)
        memcpy(buf + off, payload, len);
    return off + len;
}
