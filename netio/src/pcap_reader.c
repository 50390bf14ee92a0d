/* Capture reader: link and network layer decoding in front of the TCP
 * reassembler (tcp_reasm.c). */
#include "vitcp/pcap_reader.h"

#include <pcap/pcap.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_reasm.h"
#include "vitcp/bytes.h"

#ifndef DLT_LINUX_SLL2
#define DLT_LINUX_SLL2 276
#endif

struct vn_reader {
    int linktype;
    struct vn_reader_callbacks cb;
    struct vn_reader_stats stats;
    struct vn_reasm reasm;
    uint64_t last_ts;
};

int vn_reader_linktype_supported(int lt)
{
    return lt == DLT_EN10MB || lt == DLT_LINUX_SLL || lt == DLT_LINUX_SLL2 || lt == DLT_RAW ||
           lt == DLT_NULL || lt == DLT_LOOP || lt == 101 /* LINKTYPE_RAW */;
}

struct vn_reader *vn_reader_new(int linktype, const struct vn_reader_callbacks *cb,
                                const struct vn_reader_limits *limits)
{
    if (!vn_reader_linktype_supported(linktype))
        return NULL;
    struct vn_reader *r = calloc(1, sizeof *r);
    if (r == NULL)
        return NULL;
    r->linktype = linktype;
    r->cb = *cb;
    if (vn_reasm_init(&r->reasm, &r->cb, limits, &r->stats) != 0) {
        free(r);
        return NULL;
    }
    return r;
}

static void notice(struct vn_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void notice(struct vn_reader *r, const char *fmt, ...)
{
    r->stats.ignored++;
    if (r->cb.notice == NULL)
        return;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->cb.notice(r->cb.ctx, r->stats.frames, msg);
}

/* The frame once link and IP headers are peeled. */
struct l3 {
    uint64_t ts;
    uint16_t vlan;
    const uint8_t *src_mac, *dst_mac;
    struct vn_ip src, dst;
    uint8_t proto;
    const uint8_t *l4;
    size_t l4_len;      /* captured transport bytes */
    size_t l4_missing;  /* transport bytes the capture cut off */
};

static void transport(struct vn_reader *r, const struct l3 *p)
{
    if (p->proto == 6) {
        if (p->l4_len < VN_TCP_HDR_LEN) {
            notice(r, "TCP header cut short (%zu bytes)", p->l4_len);
            return;
        }
        size_t hl = (size_t)(p->l4[12] >> 4) * 4;
        if (hl < VN_TCP_HDR_LEN || hl > p->l4_len) {
            notice(r, "TCP header length %zu invalid or past the captured bytes", hl);
            return;
        }
        struct vn_tcp_seg_in s = {.frame = r->stats.frames, .ts_usec = p->ts};
        s.src.ip = p->src;
        s.dst.ip = p->dst;
        s.src.port = vw_get_be16(p->l4);
        s.dst.port = vw_get_be16(p->l4 + 2);
        s.seq = vw_get_be32(p->l4 + 4);
        s.ack = vw_get_be32(p->l4 + 8);
        s.flags = p->l4[13];
        s.urgent = vw_get_be16(p->l4 + 18);
        s.data = p->l4 + hl;
        s.len = p->l4_len - hl;
        if (p->l4_missing && r->cb.notice)
            r->cb.notice(r->cb.ctx, r->stats.frames,
                         "TCP segment cut by the capture's snapshot length");
        vn_reasm_segment(&r->reasm, &s);
        return;
    }
    if (p->proto == 17) {
        if (p->l4_len < VN_UDP_HDR_LEN) {
            notice(r, "UDP header cut short");
            return;
        }
        size_t ulen = vw_get_be16(p->l4 + 4);
        if (ulen < VN_UDP_HDR_LEN || ulen > p->l4_len + p->l4_missing) {
            notice(r, "UDP length %zu does not fit the IP payload", ulen);
            return;
        }
        struct vn_datagram d = {.kind = VN_DGRAM_UDP, .frame = r->stats.frames, .ts_usec = p->ts,
                                .vlan = p->vlan};
        d.src.ip = p->src;
        d.dst.ip = p->dst;
        d.src.port = vw_get_be16(p->l4);
        d.dst.port = vw_get_be16(p->l4 + 2);
        d.data = p->l4 + VN_UDP_HDR_LEN;
        d.len = ulen - VN_UDP_HDR_LEN;
        if (d.len > p->l4_len - VN_UDP_HDR_LEN) {
            d.len = p->l4_len - VN_UDP_HDR_LEN;
            d.truncated = true;
        }
        r->stats.datagrams++;
        if (r->cb.datagram)
            r->cb.datagram(r->cb.ctx, &d);
        return;
    }
    r->stats.ignored++;
}

static void ipv4(struct vn_reader *r, struct l3 *p, const uint8_t *b, size_t len, size_t wire)
{
    if (len < VN_IPV4_HDR_LEN || (b[0] >> 4) != 4) {
        notice(r, "IPv4 header cut short or wrong version");
        return;
    }
    size_t ihl = (size_t)(b[0] & 0x0F) * 4;
    size_t total = vw_get_be16(b + 2);
    if (ihl < VN_IPV4_HDR_LEN || total < ihl || ihl > len) {
        notice(r, "IPv4 header length %zu / total length %zu invalid", ihl, total);
        return;
    }
    if (total > wire) {
        notice(r, "IPv4 total length %zu beyond the frame (%zu bytes)", total, wire);
        return;
    }
    if ((vw_get_be16(b + 6) & 0x3FFFu) != 0) {
        notice(r, "IPv4 fragment not reassembled");
        return;
    }
    p->src.family = p->dst.family = 4;
    memcpy(p->src.addr, b + 12, 4);
    memcpy(p->dst.addr, b + 16, 4);
    p->proto = b[9];
    p->l4 = b + ihl;
    /* total trims Ethernet padding; len may be shorter (snaplen). */
    size_t have = len < total ? len : total;
    p->l4_len = have - ihl;
    p->l4_missing = total - have;
    transport(r, p);
}

static void ipv6(struct vn_reader *r, struct l3 *p, const uint8_t *b, size_t len, size_t wire)
{
    if (len < VN_IPV6_HDR_LEN || (b[0] >> 4) != 6) {
        notice(r, "IPv6 header cut short or wrong version");
        return;
    }
    size_t total = VN_IPV6_HDR_LEN + vw_get_be16(b + 4);
    if (total > wire) {
        notice(r, "IPv6 payload length beyond the frame");
        return;
    }
    p->src.family = p->dst.family = 6;
    memcpy(p->src.addr, b + 8, 16);
    memcpy(p->dst.addr, b + 24, 16);
    uint8_t next = b[6];
    size_t off = VN_IPV6_HDR_LEN;
    size_t have = len < total ? len : total;
    /* Skip hop-by-hop, routing and destination options headers. */
    for (int i = 0; i < 8 && (next == 0 || next == 43 || next == 60); i++) {
        if (off + 8 > have) {
            notice(r, "IPv6 extension header cut short");
            return;
        }
        size_t ext = ((size_t)b[off + 1] + 1) * 8;
        next = b[off];
        off += ext;
    }
    if (next == 44) {
        notice(r, "IPv6 fragment not reassembled");
        return;
    }
    if (off > have) {
        notice(r, "IPv6 extension headers past the captured bytes");
        return;
    }
    p->proto = next;
    p->l4 = b + off;
    p->l4_len = have - off;
    p->l4_missing = total - have;
    transport(r, p);
}

static void network(struct vn_reader *r, struct l3 *p, uint16_t ethertype, const uint8_t *b,
                    size_t len, size_t wire)
{
    if (ethertype == VN_ETHERTYPE_IPV4) {
        ipv4(r, p, b, len, wire);
    } else if (ethertype == VN_ETHERTYPE_IPV6) {
        ipv6(r, p, b, len, wire);
    } else {
        struct vn_datagram d = {.kind = VN_DGRAM_ETH, .frame = r->stats.frames, .ts_usec = p->ts,
                                .vlan = p->vlan, .ethertype = ethertype, .src_mac = p->src_mac,
                                .dst_mac = p->dst_mac, .data = b, .len = len,
                                .truncated = len < wire};
        r->stats.datagrams++;
        if (r->cb.datagram)
            r->cb.datagram(r->cb.ctx, &d);
    }
}

void vn_reader_feed(struct vn_reader *r, uint64_t ts_usec, const uint8_t *f, size_t caplen,
                    size_t wire_len)
{
    r->stats.frames++;
    r->last_ts = ts_usec;
    if (wire_len < caplen)
        wire_len = caplen;
    struct l3 p = {.ts = ts_usec};
    size_t hdr;
    uint16_t et;
    switch (r->linktype) {
    case DLT_EN10MB:
        if (caplen < VN_ETH_HDR_LEN) {
            notice(r, "Ethernet header cut short (%zu bytes)", caplen);
            return;
        }
        p.dst_mac = f;
        p.src_mac = f + 6;
        et = vw_get_be16(f + 12);
        hdr = VN_ETH_HDR_LEN;
        for (int tags = 0; tags < 2 && (et == 0x8100 || et == 0x88A8 || et == 0x9100); tags++) {
            if (caplen < hdr + 4) {
                notice(r, "VLAN tag cut short");
                return;
            }
            p.vlan = vw_get_be16(f + hdr) & 0x0FFFu;
            et = vw_get_be16(f + hdr + 2);
            hdr += 4;
        }
        break;
    case DLT_LINUX_SLL:
        if (caplen < 16) {
            notice(r, "Linux cooked header cut short");
            return;
        }
        et = vw_get_be16(f + 14);
        hdr = 16;
        break;
    case DLT_LINUX_SLL2:
        if (caplen < 20) {
            notice(r, "Linux cooked v2 header cut short");
            return;
        }
        et = vw_get_be16(f);
        hdr = 20;
        break;
    case DLT_NULL:
    case DLT_LOOP: {
        if (caplen < 4) {
            notice(r, "loopback header cut short");
            return;
        }
        uint32_t af = r->linktype == DLT_LOOP ? vw_get_be32(f)
                                              : (uint32_t)f[0] | (uint32_t)f[1] << 8 |
                                                    (uint32_t)f[2] << 16 | (uint32_t)f[3] << 24;
        if (af > 0xFFFF) /* written big-endian by the capturing host */
            af = vw_get_be32(f);
        et = af == 2 ? VN_ETHERTYPE_IPV4 : VN_ETHERTYPE_IPV6;
        hdr = 4;
        break;
    }
    default: /* raw IP */
        if (caplen < 1) {
            notice(r, "empty frame");
            return;
        }
        et = (f[0] >> 4) == 4 ? VN_ETHERTYPE_IPV4 : VN_ETHERTYPE_IPV6;
        hdr = 0;
        break;
    }
    network(r, &p, et, f + hdr, caplen - hdr, wire_len - hdr);
}

void vn_reader_finish(struct vn_reader *r)
{
    vn_reasm_finish(&r->reasm, r->stats.frames, r->last_ts);
}

const struct vn_reader_stats *vn_reader_stats(const struct vn_reader *r) { return &r->stats; }

void vn_reader_free(struct vn_reader *r)
{
    if (r == NULL)
        return;
    vn_reasm_free(&r->reasm);
    free(r);
}

int vn_pcap_read(const char *path, const struct vn_reader_callbacks *cb,
                 const struct vn_reader_limits *limits, struct vn_reader_stats *stats, char *err,
                 size_t errlen)
{
    char perr[PCAP_ERRBUF_SIZE] = "";
    pcap_t *p = pcap_open_offline(path, perr);
    if (p == NULL) {
        snprintf(err, errlen, "cannot read %s: %s", path, perr);
        return -1;
    }
    int lt = pcap_datalink(p);
    struct vn_reader *r = vn_reader_new(lt, cb, limits);
    if (r == NULL) {
        snprintf(err, errlen, "%s: link type %s (%d) is not supported", path,
                 pcap_datalink_val_to_name(lt) ? pcap_datalink_val_to_name(lt) : "?", lt);
        pcap_close(p);
        return -1;
    }
    int rc = 0;
    for (;;) {
        struct pcap_pkthdr *h;
        const u_char *d;
        int got = pcap_next_ex(p, &h, &d);
        if (got == 1) {
            uint64_t ts = (uint64_t)h->ts.tv_sec * 1000000u + (uint64_t)h->ts.tv_usec;
            vn_reader_feed(r, ts, d, h->caplen, h->len);
            continue;
        }
        if (got == PCAP_ERROR) {
            snprintf(err, errlen, "%s: damaged after frame %llu: %s", path,
                     (unsigned long long)r->stats.frames, pcap_geterr(p));
            rc = -1;
        }
        break;
    }
    vn_reader_finish(r);
    if (stats)
        *stats = r->stats;
    vn_reader_free(r);
    pcap_close(p);
    return rc;
}
