/* Deterministic capture mutations (see pcap_mutate.h). */
#include "pcap_mutate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vitcp/frame.h"

static const char *const mut_names[RB_MUT_COUNT] = {
    "truncate", "flip", "hdr-flip", "snaplen", "linktype", "rec-len", "ip-tcp-field",
    "drop", "dup-changed", "swap", "magic", "garbage-rec", "seq-wrap"};

const char *rb_pcap_mut_name(enum rb_pcap_mut m)
{
    return m < RB_MUT_COUNT ? mut_names[m] : "?";
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static void put_le32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}
static void put_le16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8); }
static uint16_t be16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static void put_be16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v; }
static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

#define MAX_RECS 4096

/* Offsets of the record headers of a little-endian pcap. */
static size_t records(const uint8_t *b, size_t len, size_t *off)
{
    size_t n = 0, p = 24;
    while (p + 16 <= len && n < MAX_RECS) {
        uint32_t cl = le32(b + p + 8);
        if (cl > len - p - 16)
            break;
        off[n++] = p;
        p += 16 + cl;
    }
    return n;
}

/* Where the IP and TCP headers of an Ethernet frame start (0 if none). */
struct layers {
    size_t ip;      /* offset of the IP header in the frame */
    int family;
    size_t tcp;     /* offset of the TCP header, 0 if not TCP */
};

static struct layers find_layers(const uint8_t *f, size_t n)
{
    struct layers l = {0, 0, 0};
    if (n < 14)
        return l;
    size_t h = 14;
    uint16_t et = be16(f + 12);
    while ((et == 0x8100 || et == 0x88A8) && h + 4 <= n) {
        et = be16(f + h + 2);
        h += 4;
    }
    if (et == 0x0800 && h + 20 <= n) {
        l.ip = h, l.family = 4;
        size_t ihl = (size_t)(f[h] & 15) * 4;
        if (f[h + 9] == 6 && ihl >= 20 && h + ihl + 20 <= n)
            l.tcp = h + ihl;
    } else if (et == 0x86DD && h + 40 <= n) {
        l.ip = h, l.family = 6;
        if (f[h + 6] == 6 && h + 60 <= n)
            l.tcp = h + 40;
    }
    return l;
}

static size_t pcapng_mutate(struct rb_rng *r, const uint8_t *in, size_t len, uint8_t *out,
                            char *desc, size_t dc)
{
    memcpy(out, in, len);
    /* Block starts. */
    size_t blk[64], nb = 0;
    for (size_t p = 0; p + 12 <= len && nb < 64;) {
        uint32_t bl = le32(in + p + 4);
        if (bl < 12 || bl > len - p)
            break;
        blk[nb++] = p;
        p += bl;
    }
    switch (rb_below(r, 6)) {
    case 0: {
        size_t cut = (size_t)rb_below(r, len);
        snprintf(desc, dc, "pcapng truncate at %zu", cut);
        return cut;
    }
    case 1: {
        static const uint32_t v[] = {0, 4, 11, 13, 0xFFFFFFFCu, 0x7FFFFFFFu, 0x10000000u};
        size_t b = nb ? blk[rb_below(r, nb)] : 0;
        uint32_t val = rb_below(r, 2) ? v[rb_below(r, 7)] : (uint32_t)rb_next(r);
        bool trailing = rb_below(r, 2);
        size_t at = b + 4;
        if (trailing && nb && le32(in + b + 4) >= 12)
            at = b + le32(in + b + 4) - 4;
        if (at + 4 <= len)
            put_le32(out + at, val);
        snprintf(desc, dc, "pcapng block at %zu %s length = 0x%x", b, trailing ? "trailing" : "leading", val);
        return len;
    }
    case 2: { /* EPB captured/original length */
        size_t b = nb ? blk[rb_below(r, nb)] : 0;
        static const uint32_t v[] = {0, 1, 0xFFFF, 0x40000, 0xFFFFFFFFu};
        uint32_t val = v[rb_below(r, 5)];
        size_t at = b + 20 + 4 * rb_below(r, 2);
        if (at + 4 <= len)
            put_le32(out + at, val);
        snprintf(desc, dc, "pcapng block at %zu length field at +%zu = 0x%x", b, at - b, val);
        return len;
    }
    case 3: { /* IDB link type / snaplen */
        static const uint16_t lt[] = {0, 101, 113, 276, 228, 0xFFFF, 147};
        uint16_t val = lt[rb_below(r, 7)];
        if (nb > 1 && blk[1] + 16 <= len) {
            put_le16(out + blk[1] + 8, val);
            put_le32(out + blk[1] + 12, (uint32_t)rb_below(r, 3) * 0x7FFFFFFFu);
        }
        snprintf(desc, dc, "pcapng IDB link type %u", val);
        return len;
    }
    case 4: { /* byte-order magic / version */
        size_t at = 8 + 4 * rb_below(r, 2);
        if (at + 4 <= len)
            put_le32(out + at, (uint32_t)rb_next(r));
        snprintf(desc, dc, "pcapng SHB field at %zu random", at);
        return len;
    }
    default: {
        unsigned k = 1 + (unsigned)rb_below(r, 8);
        for (unsigned i = 0; i < k && len; i++)
            out[rb_below(r, len)] ^= (uint8_t)(1u + rb_below(r, 255));
        snprintf(desc, dc, "pcapng %u byte flips", k);
        return len;
    }
    }
}

size_t rb_pcap_mutate(struct rb_rng *r, unsigned kind, const uint8_t *in, size_t len, uint8_t *out,
                      size_t cap, char *desc, size_t dc)
{
    if (cap < len + RB_MUTATE_SLACK)
        abort();
    if (len >= 4 && le32(in) == 0x0A0D0D0Au)
        return pcapng_mutate(r, in, len, out, desc, dc);
    if (kind >= RB_MUT_COUNT)
        kind = (unsigned)rb_below(r, RB_MUT_COUNT);
    memcpy(out, in, len);
    static size_t rec[MAX_RECS];
    size_t nr = records(in, len, rec);
    const char *name = mut_names[kind];
    if (nr == 0 && kind >= RB_MUT_REC_LEN && kind != RB_MUT_MAGIC)
        kind = RB_MUT_FLIP;
    size_t ri = nr ? (size_t)rb_below(r, nr) : 0;
    size_t rp = nr ? rec[ri] : 0;
    uint32_t rcl = nr ? le32(in + rp + 8) : 0;
    switch ((enum rb_pcap_mut)kind) {
    case RB_MUT_TRUNCATE: {
        size_t cut = (size_t)rb_below(r, len + 1);
        snprintf(desc, dc, "%s at %zu", name, cut);
        return cut;
    }
    case RB_MUT_FLIP: {
        unsigned k = 1 + (unsigned)rb_below(r, 8);
        for (unsigned i = 0; i < k && len; i++)
            out[rb_below(r, len)] ^= (uint8_t)(1u + rb_below(r, 255));
        snprintf(desc, dc, "%s %u bytes", name, k);
        return len;
    }
    case RB_MUT_HDR_FLIP: {
        size_t at = rb_below(r, 2) || nr == 0 ? (size_t)rb_below(r, 24) : rp + (size_t)rb_below(r, 16);
        if (at < len)
            out[at] ^= (uint8_t)(1u + rb_below(r, 255));
        snprintf(desc, dc, "%s at %zu", name, at);
        return len;
    }
    case RB_MUT_SNAPLEN: {
        static const uint32_t v[] = {0, 1, 14, 0x7FFFFFFFu, 0xFFFFFFFFu, 0x40001};
        uint32_t val = v[rb_below(r, 6)];
        if (len >= 20)
            put_le32(out + 16, val);
        snprintf(desc, dc, "%s = 0x%x", name, val);
        return len;
    }
    case RB_MUT_LINKTYPE: {
        static const uint32_t v[] = {0, 1, 12, 14, 101, 108, 113, 276, 228, 229, 147, 0xFFFF, 0x10000001u};
        uint32_t val = rb_below(r, 4) ? v[rb_below(r, 13)] : (uint32_t)rb_next(r);
        if (len >= 24)
            put_le32(out + 20, val);
        snprintf(desc, dc, "%s = %u", name, val);
        return len;
    }
    case RB_MUT_REC_LEN: {
        static const uint32_t v[] = {0, 1, 0xFFFF, 0x40000, 0x40001, 0x7FFFFFFFu, 0xFFFFFFFFu};
        uint32_t val = v[rb_below(r, 7)];
        bool orig = rb_below(r, 2);
        put_le32(out + rp + (orig ? 12 : 8), val);
        snprintf(desc, dc, "%s record %zu %s = 0x%x", name, ri, orig ? "len" : "caplen", val);
        return len;
    }
    case RB_MUT_IP_TCP_FIELD: {
        uint8_t *f = out + rp + 16;
        struct layers l = find_layers(f, rcl);
        unsigned what = (unsigned)rb_below(r, 6);
        if (l.family == 0) {
            snprintf(desc, dc, "%s record %zu: no IP (unchanged)", name, ri);
            return len;
        }
        uint32_t val = (uint32_t)rb_next(r);
        if (what == 0 && l.family == 4) {
            f[l.ip] = (uint8_t)(0x40 | (val & 15));
            snprintf(desc, dc, "%s record %zu IPv4 IHL %u", name, ri, val & 15);
        } else if (what == 1) {
            static const uint16_t v[] = {0, 1, 19, 20, 39, 40, 0xFFFF};
            uint16_t tl = v[val % 7];
            put_be16(f + l.ip + (l.family == 4 ? 2 : 4), tl);
            snprintf(desc, dc, "%s record %zu IP%s length %u", name, ri, l.family == 4 ? "v4 total" : "v6 payload", tl);
        } else if (what == 2 && l.family == 6) {
            static const uint8_t nh[] = {0, 43, 60, 44, 59, 17, 6};
            f[l.ip + 6] = nh[val % 7];
            snprintf(desc, dc, "%s record %zu IPv6 next header %u", name, ri, nh[val % 7]);
        } else if (what == 2 || what == 0) {
            put_be16(f + l.ip + 6, (uint16_t)val); /* fragment bits */
            snprintf(desc, dc, "%s record %zu IPv4 flags/fragment 0x%04x", name, ri, (uint16_t)val);
        } else if (l.tcp == 0) {
            snprintf(desc, dc, "%s record %zu: no TCP (unchanged)", name, ri);
        } else if (what == 3) {
            f[l.tcp + 12] = (uint8_t)((val & 15) << 4);
            snprintf(desc, dc, "%s record %zu TCP data offset %u", name, ri, val & 15);
        } else if (what == 4) {
            f[l.tcp + 13] = (uint8_t)val;
            snprintf(desc, dc, "%s record %zu TCP flags 0x%02x", name, ri, (uint8_t)val);
        } else {
            put_be32(f + l.tcp + 4 + 4 * (val & 1), (uint32_t)rb_next(r));
            snprintf(desc, dc, "%s record %zu TCP %s random", name, ri, (val & 1) ? "ack" : "seq");
        }
        return len;
    }
    case RB_MUT_DROP: {
        size_t rl = 16 + rcl;
        memmove(out + rp, in + rp + rl, len - rp - rl);
        snprintf(desc, dc, "%s record %zu", name, ri);
        return len - rl;
    }
    case RB_MUT_DUP_CHANGED: {
        size_t rl = 16 + rcl;
        if (rl > RB_MUTATE_SLACK) {
            snprintf(desc, dc, "%s record %zu too long (unchanged)", name, ri);
            return len;
        }
        memcpy(out + rp + rl, in + rp, len - rp); /* the record twice, then the rest */
        if (rcl > 54)
            out[rp + rl + 16 + 54 + rb_below(r, rcl - 54)] ^= 0x5A;
        snprintf(desc, dc, "%s record %zu", name, ri);
        return len + rl;
    }
    case RB_MUT_SWAP: {
        if (nr < 2 || ri + 1 >= nr) {
            snprintf(desc, dc, "%s: no pair (unchanged)", name);
            return len;
        }
        size_t a = rec[ri], b = rec[ri + 1], al = b - a, bl = 16 + le32(in + b + 8);
        memcpy(out + a, in + b, bl);
        memcpy(out + a + bl, in + a, al);
        snprintf(desc, dc, "%s records %zu and %zu", name, ri, ri + 1);
        return len;
    }
    case RB_MUT_MAGIC: {
        static const uint32_t v[] = {0xd4c3b2a1u, 0xa1b23c4du, 0x4d3cb2a1u, 0xa1b2cd34u, 0};
        uint32_t val = v[rb_below(r, 5)];
        if (len >= 4)
            put_le32(out, val);
        snprintf(desc, dc, "%s = 0x%08x", name, val);
        return len;
    }
    case RB_MUT_GARBAGE_REC: {
        size_t gl = (size_t)rb_below(r, 2000);
        memmove(out + rp + 16 + gl, in + rp, len - rp);
        put_le32(out + rp, 1000000000u), put_le32(out + rp + 4, 0);
        put_le32(out + rp + 8, (uint32_t)gl), put_le32(out + rp + 12, (uint32_t)gl);
        rb_fill(r, out + rp + 16, gl);
        if (gl >= 14 && rb_below(r, 2)) /* make it reach the IP decoders */
            put_be16(out + rp + 16 + 12, rb_below(r, 2) ? 0x0800 : 0x86DD), out[rp + 16 + 14] = rb_below(r, 2) ? 0x45 : 0x60;
        snprintf(desc, dc, "%s of %zu bytes before record %zu", name, gl, ri);
        return len + 16 + gl;
    }
    case RB_MUT_SEQ_WRAP: {
        /* Take the sender of a random TCP record; shift its seq and the
         * peer's ack so its stream crosses 2^32 soon after the start. */
        struct layers l = find_layers(in + rp + 16, rcl);
        if (l.tcp == 0) {
            snprintf(desc, dc, "%s: record %zu not TCP (unchanged)", name, ri);
            return len;
        }
        uint16_t port = be16(in + rp + 16 + l.tcp);
        uint32_t isn = be32(in + rp + 16 + l.tcp + 4);
        uint32_t delta = (uint32_t)(0xFFFFFF00u - (uint32_t)rb_below(r, 4096)) - isn;
        for (size_t i = 0; i < nr; i++) {
            uint8_t *f = out + rec[i] + 16;
            uint32_t fl = le32(out + rec[i] + 8);
            struct layers m = find_layers(f, fl);
            if (m.tcp == 0)
                continue;
            if (be16(f + m.tcp) == port)
                put_be32(f + m.tcp + 4, be32(f + m.tcp + 4) + delta);
            if (be16(f + m.tcp + 2) == port)
                put_be32(f + m.tcp + 8, be32(f + m.tcp + 8) + delta);
        }
        snprintf(desc, dc, "%s port %u delta 0x%08x", name, port, delta);
        return len;
    }
    default:
        break;
    }
    snprintf(desc, dc, "unchanged");
    return len;
}

uint8_t *rb_build_pcapng(size_t *len)
{
    size_t cap = 1024, n = 0;
    uint8_t *b = calloc(1, cap);
    if (b == NULL)
        abort();
#define U32(v) (put_le32(b + n, (v)), n += 4)
#define U16(v) (put_le16(b + n, (v)), n += 2)
    U32(0x0A0D0D0Au), U32(28), U32(0x1A2B3C4Du), U16(1), U16(0), U32(0xFFFFFFFFu),
        U32(0xFFFFFFFFu), U32(28);
    U32(1), U32(20), U16(1), U16(0), U32(0), U32(20);
    struct vn_endpoint a, c;
    vn_endpoint_set(&a, "10.9.0.1", 1111);
    vn_endpoint_set(&c, "10.9.0.2", 5995);
    static uint8_t frame[VN_FRAME_MAX];
    uint8_t payload[100];
    for (int i = 0; i < 3; i++) {
        static const int order[3] = {0, 2, 1};
        int k = order[i];
        memset(payload, 'a' + k, sizeof payload);
        struct vn_tcp_hdr_spec spec = {.src = &a, .dst = &c, .seq = 7000u + (uint32_t)k * 100,
                                       .flags = VN_TCP_ACK};
        size_t fl = vn_build_tcp(frame, sizeof frame, &spec, payload, sizeof payload);
        size_t padded = (fl + 3) & ~(size_t)3;
        U32(6), U32((uint32_t)(32 + padded)), U32(0), U32(0), U32((uint32_t)i), U32((uint32_t)fl),
            U32((uint32_t)fl);
        memcpy(b + n, frame, fl);
        n += padded;
        U32((uint32_t)(32 + padded));
    }
#undef U32
#undef U16
    *len = n;
    return b;
}
