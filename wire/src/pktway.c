/*
 * PacketWay EEP message codec (P1-P8): the leading L2RH and symbol records,
 * the 16-byte EEP header, optional header fields, data block, optional
 * trailer fields and TAIL, decoded with every bound checked; an encoder
 * that writes lengths, C bits and reserved fields wrong on request.
 */
#include <stdlib.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "vitcp/bytes.h"
#include "vitcp/pktway.h"

const struct vw_eep_types vw_eep_types_default = {
    .pt_rrp = 0x0001, .pt_err = 0x0002, .pt_ipv4 = 0x0800, .pt_ipv6 = 0x86DD,
    .te_err_unknown_dest = 0x0001, .te_err_too_long = 0x0002, .te_err_unknown_oh = 0x0003,
};

static uint32_t get_be24(const uint8_t *p) { return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2]; }
static void put_be24(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 16); p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)v;
}

enum vw_eep_dt_kind vw_eep_dt_kind(uint32_t dt)
{
    unsigned top = (dt >> 20) & 0xFu;
    if (!(top & 0x8u))
        return VW_EEP_DT_PHYSICAL;
    if ((top & 0xCu) == 0x8u)
        return VW_EEP_DT_L2RH;
    if ((top & 0xEu) == 0xCu)
        return VW_EEP_DT_RESERVED;
    return top == 0xEu ? VW_EEP_DT_LOGICAL : VW_EEP_DT_SYMBOL;
}

const char *vw_eep_dt_kind_name(enum vw_eep_dt_kind kind)
{
    switch (kind) {
    case VW_EEP_DT_PHYSICAL: return "Physical";
    case VW_EEP_DT_L2RH: return "L2RH";
    case VW_EEP_DT_RESERVED: return "Reserved";
    case VW_EEP_DT_LOGICAL: return "Logical";
    case VW_EEP_DT_SYMBOL: return "Symbol";
    }
    return "Unknown";
}

uint32_t vw_eep_dt_value(uint32_t dt)
{
    switch (vw_eep_dt_kind(dt)) {
    case VW_EEP_DT_PHYSICAL: return dt & 0x7FFFFFu;
    case VW_EEP_DT_L2RH: return dt & 0x3FFFFFu;
    case VW_EEP_DT_RESERVED: return dt & 0x1FFFFFu;
    default: return dt & 0xFFFFFu;
    }
}

const char *vw_eep_reserved_addr_name(uint32_t addr)
{
    switch (addr & 0xFFFFFFu) {
    case VW_EEP_ADDR_UNDEFINED: return "Undefined";
    case VW_EEP_ADDR_HEY_YOU: return "Hey-You";
    case VW_EEP_ADDR_BROADCAST: return "Broadcast";
    default: return NULL;
    }
}

const char *vw_eep_pt_name(const struct vw_eep_types *t, uint16_t pt)
{
    if (!t)
        t = &vw_eep_types_default;
    if (pt == t->pt_rrp) return "RRP";
    if (pt == t->pt_err) return "ERR";
    if (pt == t->pt_ipv4) return "IPv4";
    if (pt == t->pt_ipv6) return "IPv6";
    return "Unknown";
}

const char *vw_eep_te_name(const struct vw_eep_types *t, uint16_t pt, uint16_t te)
{
    if (!t)
        t = &vw_eep_types_default;
    if (pt != t->pt_err)
        return NULL;
    if (te == t->te_err_unknown_dest) return "Destination Unknown (UNK)";
    if (te == t->te_err_too_long) return "Message too long for path MTU";
    if (te == t->te_err_unknown_oh) return "Unknown mandatory optional header";
    return NULL;
}

const char *vw_eep_endian_name(uint8_t e4)
{
    return (e4 & 0x8u) ? "Little-Endian" : "Big-Endian";
}

const char *vw_eep_route_kind_name(enum vw_eep_route_kind kind)
{
    return kind == VW_EEP_ROUTE_L2RH ? "L2RH" : "Symbol";
}

int vw_eep_record_kind(const uint8_t *buf, size_t len, enum vw_eep_route_kind *kind)
{
    if (len < 2)
        return 0;
    if ((buf[1] & 0xC0u) == 0x80u) {
        *kind = VW_EEP_ROUTE_L2RH;
        return 1;
    }
    if ((buf[1] & 0xF0u) == 0xF0u) {
        *kind = VW_EEP_ROUTE_SYMBOL;
        return 1;
    }
    return 0;
}

int vw_eep_route_next(const uint8_t *area, size_t area_len, size_t *pos, struct vw_eep_route *r)
{
    size_t p = *pos;
    enum vw_eep_route_kind kind;
    if (p >= area_len)
        return 0;
    if (!vw_eep_record_kind(area + p, area_len - p, &kind))
        return 0; /* the EEP header (or too few bytes for anything) starts here */
    const uint8_t *b = area + p;
    size_t rest = area_len - p;
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->version = b[0] >> 6;
    r->priority = b[0] & 0x3Fu;
    r->offset = p;
    if (kind == VW_EEP_ROUTE_L2RH) {
        r->data_len = b[1] & 0x3Fu;
        r->record_len = vw_eep_l2rh_len(r->data_len);
        r->data = b + 2;
    } else {
        if (rest < 5)
            return -1;
        r->symbol_type = (uint32_t)(b[1] & 0x0Fu) << 16 | vw_get_be16(b + 2);
        r->data_len = b[4];
        r->record_len = vw_eep_symbol_len(r->data_len);
        r->data = b + 5;
    }
    if (r->record_len > rest)
        return -1;
    *pos = p + r->record_len;
    return 1;
}

int vw_eep_oh_next(const uint8_t *area, size_t area_len, size_t *pos, struct vw_eep_oh *oh)
{
    size_t p = *pos;
    if (p >= area_len)
        return 0;
    if (area_len - p < 2)
        return -1;
    const uint8_t *b = area + p;
    memset(oh, 0, sizeof *oh);
    oh->mandatory = b[0] & VW_EEP_OH_T;
    oh->last = b[0] & VW_EEP_OH_C;
    oh->type = b[0] & VW_EEP_OH_TYPE_MASK;
    oh->data_len = b[1];
    oh->data = b + 2;
    oh->offset = p;
    oh->field_len = vw_eep_oh_len(oh->data_len);
    if (oh->field_len > area_len - p)
        return -1;
    *pos = p + oh->field_len;
    return 1;
}

static void decode_hdr(const uint8_t *b, struct vw_eep_hdr *h)
{
    h->version = b[0] >> 6;
    h->priority = b[0] & 0x3Fu;
    h->dt = get_be24(b + 1);
    h->te = vw_get_be16(b + 4);
    h->pt = vw_get_be16(b + 6);
    uint32_t w = vw_get_be32(b + 8);
    h->endian = (uint8_t)(w >> 28);
    h->pl = (uint8_t)((w >> 25) & 0x7u);
    h->dl = w & VW_EEP_DL_MAX;
    h->h = b[12] & 0x80u;
    h->rz = b[12] & 0x7Fu;
    h->sa = get_be24(b + 13);
}

static void check_hdr(const struct vw_eep_hdr *h, size_t off, struct vw_findings *fs)
{
    uint32_t o = (uint32_t)off;
    if (h->version != 0)
        vw_findings_add(fs, VW_REQ_EEP_6A_VERSION, VW_SEV_WARN, o, 1,
                        "Version %u: end nodes drop it (P5), routers may forward it", h->version);
    enum vw_eep_dt_kind kind = vw_eep_dt_kind(h->dt);
    if (kind == VW_EEP_DT_RESERVED)
        vw_findings_add(fs, VW_REQ_EEP_6C_DT_KIND, VW_SEV_WARN, o + 1, 3,
                        "destination type 110x is reserved: dropped (P7)");
    else if (kind == VW_EEP_DT_PHYSICAL && h->dt == VW_EEP_ADDR_UNDEFINED)
        vw_findings_add(fs, VW_REQ_EEP_6C_DT_UNDEFINED, VW_SEV_ERROR, o + 1, 3,
                        "destination address 0x000000 is undefined");
    if (h->pl && h->dl == 0)
        vw_findings_add(fs, VW_REQ_EEP_6G_PL_ZERO_NO_DATA, VW_SEV_ERROR, o + 8, 4,
                        "PL %u with DL 0", h->pl);
    if (h->rz)
        vw_findings_add(fs, VW_REQ_EEP_6J_RZ_ZERO, VW_SEV_WARN, o + 12, 1, "RZ 0x%02x not zero", h->rz);
    if (h->sa & 0x800000u)
        vw_findings_add(fs, VW_REQ_EEP_6K_SA_PHYSICAL, VW_SEV_ERROR, o + 13, 3,
                        "Source address 0x%06x is a %s, not a physical address", h->sa,
                        vw_eep_dt_kind_name(vw_eep_dt_kind(h->sa)));
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

/* A note, not a warning: a source may send a non-zero EI (the draft's
 * memory board reporting a parity error) and a router that saw an error
 * must set it; the capture can only say that errors were indicated. */
static void report_ei(uint64_t ei, size_t off, struct vw_findings *fs)
{
    if (ei == 0)
        return;
    unsigned low = 0;
    while (!((ei >> low) & 1u))
        low++;
    vw_findings_add(fs, VW_REQ_EEP_10_EI_ERROR, VW_SEV_NOTE, (uint32_t)off, VW_EEP_TAIL_LEN,
                    "error indication 0x%016llx: the latest error %u router shift(s) ago%s",
                    (unsigned long long)ei, low, (ei >> 63) ? " (MSbit set: no longer shifted)" : "");
}

enum vw_req vw_eep_decode(const uint8_t *buf, size_t len, struct vw_eep_msg *m,
                          struct vw_findings *fs)
{
    return vw_eep_decode_on(buf, len, VW_EEP_CARRIER_LINK, m, fs);
}

/*
 * P30: with h=0 there are no trailer fields (9: only an OH field announces
 * them), so whole words of the message between the data block DL sizes and
 * the TAIL are bytes the header did not count. The rule the sender broke
 * first is in the header: the H bit (6i) when the data block starts with
 * OH fields ending with C=1 that account for the extra words (OH fields
 * written with h=0: a reader takes them as data and the data's end as
 * extra words), else DL (6h: DL gives the data block's length, shorter
 * here than the block sent). The trailer reading stays as a note
 * (EEP-9-OT-NEEDS-OH): read as trailer fields, they would need an OH.
 * extra: the uncounted bytes (over a link the TAIL read is then a word of
 * the message and its real TAIL is among them).
 */
static void uncounted_words(const uint8_t *buf, const struct vw_eep_msg *m, size_t extra_off, size_t extra,
                            struct vw_findings *fs)
{
    size_t opos = 0;
    struct vw_eep_oh oh;
    bool ended = false;
    const uint8_t *area = buf + m->db_offset;
    size_t area_len = m->db_len + extra;
    bool padded = true; /* each field's padding is zero (7), as a writer of OH fields leaves it */
    while (!ended && vw_eep_oh_next(area, area_len, &opos, &oh) == 1) {
        ended = oh.last;
        padded = padded && all_zero(oh.data + oh.data_len, oh.field_len - 2 - oh.data_len);
    }
    /* the OH fields shifted exactly as many bytes of the message past the
     * end DL gives it (a link frame's zero padding is read as padding) */
    bool oh_fields = ended && padded && opos == extra;
    if (oh_fields)
        vw_findings_add(fs, VW_REQ_EEP_6I_H_FLAG, VW_SEV_ERROR, (uint32_t)m->hdr_offset + 12, 1,
                        "h=0 but the data block starts with %zu bytes of optional header fields (the last with "
                        "C=1): h must be 1 (P30)", opos);
    else
        vw_findings_add(fs, VW_REQ_EEP_6H_DL_FITS, VW_SEV_ERROR, (uint32_t)(m->hdr_offset + 8), 4,
                        "DL %u counts %zu bytes, but %zu more bytes of the message follow the data block with h=0 "
                        "(no trailer fields): DL is short (P30)", m->hdr.dl, m->db_len, extra);
    vw_findings_add(fs, VW_REQ_EEP_9_OT_NEEDS_OH, VW_SEV_NOTE, (uint32_t)extra_off, (uint32_t)extra,
                    "read as trailer fields, these %zu bytes would need optional header fields", extra);
}

static enum vw_req decode_core(const uint8_t *buf, size_t len, enum vw_eep_carrier carrier,
                               struct vw_eep_msg *m, struct vw_findings *fs)
{
    memset(m, 0, sizeof *m);
    size_t pos = 0;
    struct vw_eep_route r;
    int rr;
    m->routes = buf;
    while ((rr = vw_eep_route_next(buf, len, &pos, &r)) == 1) {
        if (r.kind == VW_EEP_ROUTE_L2RH) {
            m->n_l2rh++;
        } else {
            m->n_symbols++;
            if (r.priority)
                vw_findings_add(fs, VW_REQ_EEP_5B_SYMBOL_PRIORITY, VW_SEV_NOTE, (uint32_t)r.offset, 1,
                                "symbol priority %u (senders use 0)", r.priority);
        }
    }
    if (rr < 0) {
        m->routes_len = pos; /* the records before the one that does not fit */
        enum vw_eep_route_kind kind = VW_EEP_ROUTE_L2RH;
        vw_eep_record_kind(buf + pos, len - pos, &kind);
        enum vw_req req = kind == VW_EEP_ROUTE_L2RH ? VW_REQ_EEP_5A_L2RH_LEN : VW_REQ_EEP_5B_SYMBOL_LEN;
        size_t left = len - pos;
        if (kind == VW_EEP_ROUTE_L2RH)
            vw_findings_add(fs, req, VW_SEV_ERROR, (uint32_t)pos, (uint32_t)left,
                            "L2RH with %u routing bytes needs %zu bytes, %zu left", r.data_len,
                            r.record_len, left);
        else if (left < 5)
            vw_findings_add(fs, req, VW_SEV_ERROR, (uint32_t)pos, (uint32_t)left,
                            "Symbol cut short: %zu bytes left", left);
        else
            vw_findings_add(fs, req, VW_SEV_ERROR, (uint32_t)pos, (uint32_t)left,
                            "Symbol with %u data bytes needs %zu bytes, %zu left", r.data_len,
                            r.record_len, left);
        return req;
    }
    m->routes_len = pos;
    if (len - pos < VW_EEP_MIN_LEN) {
        vw_findings_add(fs, VW_REQ_EEP_4A_TRUNCATED, VW_SEV_ERROR, (uint32_t)pos, (uint32_t)(len - pos),
                        "%zu bytes left for the 16-byte header and the 8-byte TAIL", len - pos);
        return VW_REQ_EEP_4A_TRUNCATED;
    }
    m->hdr_offset = pos;
    decode_hdr(buf + pos, &m->hdr);
    check_hdr(&m->hdr, pos, fs);
    pos += VW_EEP_HDR_LEN;

    /* Over a link, bytes after the last whole word cannot be a trailer
     * field or the TAIL (those are whole words): they are link padding,
     * e.g. Ethernet's to its 60-byte minimum. The TAIL is the last whole
     * word of the message, never read from the padding. */
    size_t words_end = carrier == VW_EEP_CARRIER_DATAGRAM ? len : pos + (len - pos) / VW_EEP_WORD * VW_EEP_WORD;
    /* Optional header fields, before the data block; the TAIL bounds them. */
    size_t before_tail = words_end - VW_EEP_TAIL_LEN;
    if (m->hdr.h) {
        const uint8_t *area = buf + pos;
        size_t area_len = before_tail - pos, opos = 0;
        struct vw_eep_oh oh;
        bool ended = false;
        int ro;
        while (!ended && (ro = vw_eep_oh_next(area, area_len, &opos, &oh)) == 1) {
            m->n_oh++;
            ended = oh.last;
            if (oh.mandatory) {
                m->n_oh_mandatory++;
                vw_findings_add(fs, VW_REQ_EEP_7_MANDATORY_UNKNOWN, VW_SEV_NOTE,
                                (uint32_t)(pos + oh.offset), (uint32_t)oh.field_len,
                                "Mandatory optional header type %u is unknown: the message should not be "
                                "processed", oh.type);
            }
        }
        if (!ended) {
            vw_findings_add(fs, VW_REQ_EEP_7_OH_FORMAT, VW_SEV_ERROR, (uint32_t)(pos + opos),
                            (uint32_t)(area_len - opos),
                            "optional header fields run past the message without a field with C=1");
            return VW_REQ_EEP_7_OH_FORMAT;
        }
        m->oh = area;
        m->oh_len = opos;
        pos += opos;
    }

    m->db_offset = pos;
    m->db_len = (size_t)m->hdr.dl * VW_EEP_WORD;
    if (m->db_len > before_tail - pos && carrier == VW_EEP_CARRIER_LINK && len % VW_EEP_WORD) {
        /* The message as its header sizes it does not end inside the frame,
         * so no link padding follows it: the frame holds the whole message,
         * and that is not whole words (a link pads only a message shorter
         * than its minimum). Said under its own rule, not as a DL that does
         * not fit (P11). */
        vw_findings_add(fs, VW_REQ_EEP_1B_8B_WORDS, VW_SEV_ERROR, 0, (uint32_t)len,
                        "a %zu-byte message is not a whole number of 8-byte words (its header asks for %zu "
                        "or more)", len, pos + m->db_len + VW_EEP_TAIL_LEN);
        return VW_REQ_EEP_1B_8B_WORDS;
    }
    if (m->db_len > before_tail - pos) {
        vw_findings_add(fs, VW_REQ_EEP_6H_DL_FITS, VW_SEV_ERROR, (uint32_t)(m->hdr_offset + 8), 4,
                        "Data block of %u words (%zu bytes) runs past the TAIL (%zu bytes before it)",
                        m->hdr.dl, m->db_len, before_tail - pos);
        return VW_REQ_EEP_6H_DL_FITS;
    }
    m->data = buf + pos;
    m->data_len = m->db_len >= m->hdr.pl ? m->db_len - m->hdr.pl : 0;
    pos += m->db_len;

    /* An Ethernet frame at its minimum size (46 payload bytes, 42 with a
     * VLAN tag) is what padding produces: when everything after a TAIL
     * right behind the data block is zero, that is read as padding, not as
     * zero trailer fields and a zero TAIL (no OH type is known to size
     * trailer fields, so the two readings are otherwise alike). */
    bool tail_is_data = false;
    bool padded_minimum = carrier == VW_EEP_CARRIER_LINK && (len == 46 || len == 42) &&
                          len > pos + VW_EEP_TAIL_LEN &&
                          all_zero(buf + pos + VW_EEP_TAIL_LEN, len - pos - VW_EEP_TAIL_LEN);
    if ((m->hdr.h || carrier == VW_EEP_CARRIER_DATAGRAM) && !padded_minimum) {
        /* P3: the TAIL is the last 8 bytes and trailer fields fill the gap.
         * A datagram is the message itself (no link padding), so this holds
         * there without OH fields too, and such trailer bytes need an OH. */
        m->ot = buf + pos;
        m->ot_len = before_tail - pos;
        m->tail_offset = before_tail;
        m->msg_len = words_end;
        m->link_padding = len - words_end;
        if (m->link_padding)
            vw_findings_add(fs, VW_REQ_EEP_P1_CARRIAGE, VW_SEV_NOTE, (uint32_t)words_end,
                            (uint32_t)m->link_padding,
                            "%zu bytes after the last whole word: link padding, not part of the message",
                            m->link_padding);
        if (m->ot_len % VW_EEP_WORD)
            vw_findings_add(fs, VW_REQ_EEP_1B_8B_WORDS, VW_SEV_ERROR, (uint32_t)pos, (uint32_t)m->ot_len,
                            "%zu trailer bytes are not whole 8-byte words", m->ot_len);
        if (m->ot_len && m->hdr.h)
            vw_findings_add(fs, VW_REQ_EEP_9_OT_UNSIZED, VW_SEV_NOTE, (uint32_t)pos, (uint32_t)m->ot_len,
                            "%zu bytes of optional trailer fields (no OH type is known to size them)",
                            m->ot_len);
        else if (m->ot_len)
            uncounted_words(buf, m, pos, m->ot_len, fs);
    } else {
        /* Without OH fields there are no trailer fields: the header sizes the message. */
        m->tail_offset = pos;
        m->msg_len = pos + VW_EEP_TAIL_LEN;
        m->link_padding = len - m->msg_len;
        /* Shorter than a word it cannot be a trailer field (whole words,
         * P11): link padding whatever it holds; longer, zeros are padding. */
        if (m->link_padding && (m->link_padding < VW_EEP_WORD || all_zero(buf + m->msg_len, m->link_padding)))
            vw_findings_add(fs, VW_REQ_EEP_P1_CARRIAGE, VW_SEV_NOTE, (uint32_t)m->msg_len,
                            (uint32_t)m->link_padding, "%zu bytes after the TAIL: link padding, not part of the message",
                            m->link_padding);
        else if (m->link_padding) {
            uncounted_words(buf, m, m->msg_len, m->link_padding, fs);
            tail_is_data = true; /* the word read as the TAIL is one the header did not count */
        }
    }
    m->ei = vw_get_be64(buf + m->tail_offset);
    if (!tail_is_data)
        report_ei(m->ei, m->tail_offset, fs);
    return VW_REQ_NONE;
}


/* Findings that say a reading of the bytes is wrong (not notes). */
static bool findings_clean(const struct vw_findings *fs)
{
    if (fs->dropped)
        return false;
    for (unsigned i = 0; i < fs->count; i++)
        if (fs->item[i].severity != VW_SEV_NOTE)
            return false;
    return true;
}

/* The rest of a message read from byte e on decodes without a fault: a
 * header, OH fields, data block and TAIL that add up to the bytes left (a
 * link may add padding only to a frame at its minimum). */
static bool reads_clean_from(const uint8_t *buf, size_t len, size_t e, enum vw_eep_carrier carrier)
{
    if (e >= len || len - e < VW_EEP_MIN_LEN)
        return false;
    if (carrier == VW_EEP_CARRIER_DATAGRAM && (len - e) % VW_EEP_WORD)
        return false;
    struct vw_eep_msg alt;
    struct vw_findings afs;
    vw_findings_clear(&afs);
    if (decode_core(buf + e, len - e, carrier, &alt, &afs) != VW_REQ_NONE || !findings_clean(&afs))
        return false;
    return alt.link_padding == 0 || len == 46 || len == 42;
}

/* Records tried for a misaligned end, and the ends tried for each. */
#define MISALIGN_RECORDS 8

/*
 * P12: a record whose sender sized it otherwise than P2 / P4 (unpadded, or
 * the draft's symbol padding "-2-L", a word count rounded up instead of
 * down) puts every byte after it at the wrong offset. When the message as
 * P2 / P4 frame it is faulty and some record k ending anywhere from its
 * last data byte to a word past its P2/P4 end leaves a rest that reads
 * clean, record k is the fault: said once under
 * its own rule, nothing after it read as fields. Returns the rule, or
 * VW_REQ_NONE when no record explains the fault.
 */
static enum vw_req misaligned_record(const uint8_t *buf, size_t len, enum vw_eep_carrier carrier,
                                     struct vw_eep_msg *m, struct vw_findings *fs)
{
    size_t pos = 0;
    struct vw_eep_route r;
    unsigned tried = 0, l2rh = 0, symbols = 0;
    enum vw_eep_route_kind kind;
    while (tried++ < MISALIGN_RECORDS && pos < len && vw_eep_record_kind(buf + pos, len - pos, &kind)) {
        size_t o = pos, head = kind == VW_EEP_ROUTE_L2RH ? 2u : 5u;
        if (len - o < head)
            return VW_REQ_NONE;
        unsigned l = kind == VW_EEP_ROUTE_L2RH ? (buf[o + 1] & 0x3Fu) : buf[o + 4];
        size_t framed = kind == VW_EEP_ROUTE_L2RH ? vw_eep_l2rh_len(l) : vw_eep_symbol_len(l);
        for (size_t e = o + head + l; e <= o + framed + VW_EEP_WORD && e < len; e++) {
            if (e == o + framed || !reads_clean_from(buf, len, e, carrier))
                continue;
            enum vw_req req = kind == VW_EEP_ROUTE_L2RH ? VW_REQ_EEP_5A_L2RH_LEN : VW_REQ_EEP_5B_SYMBOL_LEN;
            memset(m, 0, sizeof *m);
            m->routes = buf;
            m->routes_len = o;
            m->n_l2rh = l2rh;
            m->n_symbols = symbols;
            vw_findings_clear(fs);
            if (kind == VW_EEP_ROUTE_L2RH)
                vw_findings_add(fs, req, VW_SEV_ERROR, (uint32_t)o, (uint32_t)(len - o),
                                "L2RH with %u routing bytes is %zu bytes, not %zu (P2): the EEP header "
                                "follows at byte %zu; nothing after it is read", l, e - o, framed, e);
            else
                vw_findings_add(fs, req, VW_SEV_ERROR, (uint32_t)o, (uint32_t)(len - o),
                                "Symbol with %u data bytes is %zu bytes, not %zu (P4): the EEP header "
                                "follows at byte %zu; nothing after it is read", l, e - o, framed, e);
            return req;
        }
        if (vw_eep_route_next(buf, len, &pos, &r) != 1)
            return VW_REQ_NONE;
        if (r.kind == VW_EEP_ROUTE_L2RH)
            l2rh++;
        else
            symbols++;
    }
    return VW_REQ_NONE;
}

enum vw_req vw_eep_decode_on(const uint8_t *buf, size_t len, enum vw_eep_carrier carrier,
                             struct vw_eep_msg *m, struct vw_findings *fs)
{
    struct vw_findings own;
    vw_findings_clear(&own);
    enum vw_req err = decode_core(buf, len, carrier, m, &own);
    /* A datagram is the message itself, so its length must be whole
     * words: said once under its own rule, instead of whatever field the
     * stray bytes would otherwise seem to break (a link frame may be
     * padded, so there the message's end comes from the message).
     * Shorter than a header and a TAIL, it is truncated before anything. */
    bool ragged = carrier == VW_EEP_CARRIER_DATAGRAM && len >= VW_EEP_MIN_LEN && len % VW_EEP_WORD;
    if ((ragged || err != VW_REQ_NONE || !findings_clean(&own)) && (m->n_l2rh + m->n_symbols > 0 || err == VW_REQ_EEP_5A_L2RH_LEN || err == VW_REQ_EEP_5B_SYMBOL_LEN)) {
        struct vw_findings mis;
        vw_findings_clear(&mis);
        enum vw_req rec = misaligned_record(buf, len, carrier, m, &mis);
        if (rec != VW_REQ_NONE) {
            for (unsigned i = 0; i < mis.count; i++)
                vw_findings_add(fs, mis.item[i].req, mis.item[i].severity, mis.item[i].offset, mis.item[i].length,
                                "%s", mis.item[i].detail);
            return rec;
        }
    }
    if (ragged) {
        memset(m, 0, sizeof *m);
        m->routes = buf;
        vw_findings_add(fs, VW_REQ_EEP_1B_8B_WORDS, VW_SEV_ERROR, 0, (uint32_t)len,
                        "a %zu-byte message is not a whole number of 8-byte words", len);
        return VW_REQ_EEP_1B_8B_WORDS;
    }
    if (fs)
        fs->dropped += own.dropped;
    for (unsigned i = 0; i < own.count; i++)
        vw_findings_add(fs, own.item[i].req, own.item[i].severity, own.item[i].offset, own.item[i].length, "%s",
                        own.item[i].detail);
    return err;
}

/* ------------------------------------- what a display adds (notes) */

/* Non-zero padding bytes in p[from..to): one note for the first. */
static void note_padding(const uint8_t *buf, size_t from, size_t to, const char *where,
                         struct vw_findings *fs)
{
    for (size_t i = from; i < to; i++) {
        if (buf[i]) {
            vw_findings_add(fs, VW_REQ_EEP_3_PADDING_UNCHECKED, VW_SEV_NOTE, (uint32_t)from,
                            (uint32_t)(to - from),
                            "%s padding byte 0x%02x not zero (discarded without checking)", where, buf[i]);
            return;
        }
    }
}

void vw_eep_notes(const uint8_t *buf, const struct vw_eep_msg *m, const struct vw_eep_types *types,
                  struct vw_findings *fs)
{
    unsigned routes = m->n_l2rh + m->n_symbols;
    if (routes)
        vw_findings_add(fs, VW_REQ_EEP_4B_ROUTES_CONSUMED, VW_SEV_NOTE, 0, (uint32_t)m->routes_len,
                        "%u L2RH/symbol record(s) not yet consumed", routes);
    size_t pos = 0;
    struct vw_eep_route r;
    while (vw_eep_route_next(buf, m->routes_len, &pos, &r) == 1) {
        size_t head = r.kind == VW_EEP_ROUTE_L2RH ? 2u : 5u;
        note_padding(buf, r.offset + head + r.data_len, r.offset + r.record_len,
                     vw_eep_route_kind_name(r.kind), fs);
    }
    uint32_t dt = m->hdr.dt;
    if (vw_eep_dt_kind(dt) == VW_EEP_DT_PHYSICAL &&
        (dt == VW_EEP_ADDR_HEY_YOU || dt == VW_EEP_ADDR_BROADCAST))
        vw_findings_add(fs, VW_REQ_EEP_6C_LOCAL_ONLY, VW_SEV_NOTE, (uint32_t)m->hdr_offset + 1, 3,
                        "%s: delivered locally, never forwarded (P7)",
                        dt == VW_EEP_ADDR_HEY_YOU ? "Hey-You!" : "Broadcast");
    if (!strcmp(vw_eep_pt_name(types, m->hdr.pt), "Unknown"))
        vw_findings_add(fs, VW_REQ_EEP_6E_PT_KNOWN, VW_SEV_NOTE, (uint32_t)m->hdr_offset + 6, 2,
                        "Packet type 0x%04x is not in the project's enumeration (P8)", m->hdr.pt);
    else if (!strcmp(vw_eep_pt_name(types, m->hdr.pt), "ERR") && !vw_eep_te_name(types, m->hdr.pt, m->hdr.te))
        vw_findings_add(fs, VW_REQ_EEP_6E_ERR_TE, VW_SEV_NOTE, (uint32_t)m->hdr_offset + 4, 2,
                        "ERR with type extension 0x%04x, which names no error of the project's enumeration (P8)",
                        m->hdr.te);
    size_t opos = 0;
    struct vw_eep_oh oh;
    size_t oh_base = m->hdr_offset + VW_EEP_HDR_LEN;
    while (m->oh && vw_eep_oh_next(m->oh, m->oh_len, &opos, &oh) == 1)
        note_padding(buf, oh_base + oh.offset + 2 + oh.data_len, oh_base + oh.offset + oh.field_len,
                     "Optional header field", fs);
    note_padding(buf, m->db_offset + m->data_len, m->db_offset + m->db_len, "Data block", fs);
}

/* ------------------------------------------------------ router check */

/* Bytes of in's records that a router consumes: the leading symbols and
 * the first L2RH (5), or every symbol when no L2RH follows them. */
static size_t consumed_records(const uint8_t *buf, const struct vw_eep_msg *m, bool *had_l2rh)
{
    size_t pos = 0;
    struct vw_eep_route r;
    *had_l2rh = false;
    while (vw_eep_route_next(buf, m->routes_len, &pos, &r) == 1) {
        if (r.kind == VW_EEP_ROUTE_L2RH) {
            *had_l2rh = true;
            break;
        }
    }
    return pos;
}

static const char *component_at(const struct vw_eep_msg *m, size_t off, enum vw_req *req)
{
    *req = VW_REQ_EEP_4B_ONLY_TAIL_MODIFIED;
    if (off < m->hdr_offset + VW_EEP_HDR_LEN)
        return "EEP header";
    if (off < m->db_offset)
        return "optional header fields";
    if (off < m->db_offset + m->db_len) {
        *req = VW_REQ_EEP_8_DB_UNMODIFIED;
        return "data block";
    }
    return "optional trailer fields";
}

bool vw_eep_forward_check(const uint8_t *in_buf, const struct vw_eep_msg *in, const uint8_t *out_buf,
                          const struct vw_eep_msg *out, enum vw_eep_link_state link, struct vw_findings *fs)
{
    bool ok = true;
    /* [2]..[5] arrive exactly as sent (4b). */
    size_t in_e2e = in->tail_offset - in->hdr_offset, out_e2e = out->tail_offset - out->hdr_offset;
    const uint8_t *a = in_buf + in->hdr_offset, *b = out_buf + out->hdr_offset;
    size_t same = in_e2e < out_e2e ? in_e2e : out_e2e, diff = 0;
    while (diff < same && a[diff] == b[diff])
        diff++;
    if (diff < same || in_e2e != out_e2e) {
        enum vw_req req;
        const char *what = component_at(in, in->hdr_offset + diff, &req);
        vw_findings_add(fs, req, VW_SEV_ERROR, (uint32_t)(out->hdr_offset + diff), 0,
                        "%s changed by the router (byte %zu of %zu, %zu forwarded): only the TAIL may change",
                        what, diff, in_e2e, out_e2e);
        ok = false;
    }
    /* [1]: the router consumes the symbols before the first L2RH and that L2RH (5). */
    bool had_l2rh;
    size_t gone = consumed_records(in_buf, in, &had_l2rh);
    size_t left = in->routes_len - gone;
    enum vw_req consume_req = had_l2rh ? VW_REQ_EEP_5_HR_CONSUMES_L2RH : VW_REQ_EEP_5_SYMBOL_CONSUMED;
    bool ends_with_left = out->routes_len >= left &&
                          memcmp(out_buf + out->routes_len - left, in_buf + gone, left) == 0;
    if (!ends_with_left) {
        vw_findings_add(fs, consume_req, VW_SEV_ERROR, 0, (uint32_t)out->routes_len,
                        "forwarded records (%zu bytes) are not the received ones after the %zu consumed "
                        "bytes (%zu left)", out->routes_len, gone, left);
        ok = false;
    } else if (gone && out->routes_len >= in->routes_len &&
               memcmp(out_buf + out->routes_len - in->routes_len, in_buf, in->routes_len) == 0) {
        vw_findings_add(fs, consume_req, VW_SEV_ERROR, 0, (uint32_t)gone,
                        "the leading %s (%zu bytes) was forwarded, not consumed",
                        had_l2rh ? "L2RH and the symbols before it" : "symbols", gone);
        ok = false;
    } else if (out->routes_len > left) {
        vw_findings_add(fs, VW_REQ_EEP_1C_L3_PREFIX, VW_SEV_NOTE, 0, (uint32_t)(out->routes_len - left),
                        "the router put %zu bytes of records in front (1c)", out->routes_len - left);
    }
    /* [6]: shifted once unless its MSbit is set, LSbit set on a detected error (10, P6). */
    uint64_t clean = vw_eep_tail_forward(in->ei, false), damaged = vw_eep_tail_forward(in->ei, true);
    bool tail_ok = link == VW_EEP_LINK_CLEAN     ? out->ei == clean
                   : link == VW_EEP_LINK_DAMAGED ? out->ei == damaged
                                                 : out->ei == clean || out->ei == damaged;
    if (!tail_ok) {
        bool shifted = out->ei == clean || out->ei == damaged;
        vw_findings_add(fs, shifted ? VW_REQ_EEP_10_EI_ERROR_LSBIT : VW_REQ_EEP_10_EI_SHIFT, VW_SEV_ERROR,
                        (uint32_t)out->tail_offset, VW_EEP_TAIL_LEN,
                        "forwarded EI 0x%016llx from 0x%016llx, expected 0x%016llx%s",
                        (unsigned long long)out->ei, (unsigned long long)in->ei,
                        (unsigned long long)(link == VW_EEP_LINK_DAMAGED ? damaged : clean),
                        link == VW_EEP_LINK_DAMAGED ? " (error detected: LSbit set)"
                        : link == VW_EEP_LINK_CLEAN ? " (no error on the link)" : "");
        ok = false;
    }
    return ok;
}

/* ------------------------------------------------------ router pairs */

void vw_eep_hop_set(struct vw_eep_hop *hop, const uint8_t *src, const uint8_t *dst, size_t len)
{
    memset(hop, 0, sizeof *hop);
    if (!src || !dst || (len != 4 && len != 6 && len != 16))
        return;
    memcpy(hop->src, src, len);
    memcpy(hop->dst, dst, len);
    hop->len = (uint8_t)len;
}

/* A destination many nodes receive: an Ethernet group address, IPv4
 * multicast or limited broadcast, IPv6 multicast. */
static bool hop_dst_group(const struct vw_eep_hop *h)
{
    switch (h->len) {
    case 6: return h->dst[0] & 1u;
    case 4: return h->dst[0] >= 224u;
    case 16: return h->dst[0] == 0xFFu;
    default: return false;
    }
}

bool vw_eep_addr_parse(const char *text, uint8_t out[16], size_t *len)
{
    if (!text || !out || !len)
        return false;
    unsigned m[6];
    char tail;
    if (sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &tail) == 6 &&
        strlen(text) == 17) {
        for (int i = 0; i < 6; i++)
            out[i] = (uint8_t)m[i];
        *len = 6;
        return true;
    }
    if (inet_pton(AF_INET, text, out) == 1) {
        *len = 4;
        return true;
    }
    if (inet_pton(AF_INET6, text, out) == 1) {
        *len = 16;
        return true;
    }
    return false;
}

struct pair_entry {
    bool used, forwarded;
    uint64_t frame;
    struct vw_eep_hop hop;
    enum vw_eep_carrier carrier;
    uint8_t *bytes; /* the message (msg_len bytes) */
    size_t len;
    struct vw_eep_msg msg; /* decoded from bytes */
};

struct vw_eep_pairer {
    struct pair_entry e[VW_EEP_PAIR_WINDOW];
    unsigned next; /* ring slot the next message takes */
    unsigned n_routers;
    uint8_t router[VW_EEP_PAIR_ROUTERS_MAX][16];
    uint8_t router_len[VW_EEP_PAIR_ROUTERS_MAX];
};

struct vw_eep_pairer *vw_eep_pairer_new(void)
{
    return calloc(1, sizeof(struct vw_eep_pairer));
}

void vw_eep_pairer_free(struct vw_eep_pairer *p)
{
    if (!p)
        return;
    for (unsigned i = 0; i < VW_EEP_PAIR_WINDOW; i++)
        free(p->e[i].bytes);
    free(p);
}

bool vw_eep_pairer_add_router(struct vw_eep_pairer *p, const uint8_t *addr, size_t len)
{
    if (!p || !addr || (len != 4 && len != 6 && len != 16) || p->n_routers == VW_EEP_PAIR_ROUTERS_MAX)
        return false;
    memcpy(p->router[p->n_routers], addr, len);
    p->router_len[p->n_routers++] = (uint8_t)len;
    return true;
}

bool vw_eep_pairer_add_routers(struct vw_eep_pairer *p, const char *list, char *bad, size_t badlen)
{
    if (bad && badlen)
        bad[0] = '\0';
    for (const char *s = list ? list : ""; *s;) {
        size_t n = strcspn(s, ", \t");
        if (n) {
            char one[64];
            uint8_t a[16];
            size_t len = 0;
            bool ok = n < sizeof one;
            if (ok) {
                memcpy(one, s, n);
                one[n] = '\0';
                ok = vw_eep_addr_parse(one, a, &len) && vw_eep_pairer_add_router(p, a, len);
            }
            if (!ok) {
                if (bad && badlen)
                    snprintf(bad, badlen, "%.*s", (int)n, s);
                return false;
            }
        }
        s += n;
        s += strspn(s, ", \t");
    }
    return true;
}

static bool is_router(const struct vw_eep_pairer *p, const uint8_t *addr, size_t len)
{
    for (unsigned i = 0; i < p->n_routers; i++)
        if (p->router_len[i] == len && !memcmp(p->router[i], addr, len))
            return true;
    return false;
}

/* What a router may not change (P31): the version, DT, SA and PT. */
static bool same_router_key(const struct vw_eep_msg *ma, const struct vw_eep_msg *mb)
{
    return ma->hdr.version == mb->hdr.version && ma->hdr.dt == mb->hdr.dt && ma->hdr.sa == mb->hdr.sa &&
           ma->hdr.pt == mb->hdr.pt;
}

/* The rest of the EEP header apart from the priority, and the OH fields
 * (so also the data block's length). */
static bool same_header(const uint8_t *a, const struct vw_eep_msg *ma, const uint8_t *b,
                        const struct vw_eep_msg *mb)
{
    size_t la = ma->db_offset - ma->hdr_offset, lb = mb->db_offset - mb->hdr_offset;
    const uint8_t *ha = a + ma->hdr_offset, *hb = b + mb->hdr_offset;
    return la == lb && (ha[0] & 0xC0u) == (hb[0] & 0xC0u) && memcmp(ha + 1, hb + 1, la - 1) == 0;
}

static bool same_data(const uint8_t *a, const struct vw_eep_msg *ma, const uint8_t *b, const struct vw_eep_msg *mb)
{
    size_t la = ma->tail_offset - ma->db_offset, lb = mb->tail_offset - mb->db_offset;
    return la == lb && memcmp(a + ma->db_offset, b + mb->db_offset, la) == 0;
}

/* Could the later copy be a router's hop of the earlier one, by the
 * addresses that carry them (P31)? */
static bool may_be_hop(const struct vw_eep_pairer *p, const struct vw_eep_hop *first,
                       const struct vw_eep_hop *later)
{
    if (!first->len || !later->len)
        return false; /* without the carrier's addresses the sender again cannot be told apart */
    if (first->ts_usec && later->ts_usec &&
        (later->ts_usec < first->ts_usec || later->ts_usec - first->ts_usec > VW_EEP_PAIR_USEC))
        return false;
    if (p->n_routers) {
        if (!is_router(p, later->src, later->len))
            return false;
        if (first->len == later->len && !memcmp(first->src, later->src, first->len))
            return false;
        return is_router(p, first->dst, first->len) || hop_dst_group(first);
    }
    if (first->len != later->len)
        return false;
    if (!memcmp(first->src, later->src, first->len))
        return false; /* its own sender again (also the same frame twice) */
    return memcmp(first->src, later->dst, first->len) != 0; /* not back where it came from */
}

bool vw_eep_pairer_add(struct vw_eep_pairer *p, uint64_t frame, const struct vw_eep_hop *hop,
                       enum vw_eep_carrier carrier, const uint8_t *buf, const struct vw_eep_msg *m,
                       uint64_t *first_frame, struct vw_findings *fs)
{
    if (!p || !hop || !m || m->msg_len == 0)
        return false;
    for (unsigned k = 0; k < VW_EEP_PAIR_WINDOW; k++) {
        struct pair_entry *e = &p->e[(p->next + k) % VW_EEP_PAIR_WINDOW];
        /* The same frame again (the sender repeated it, a capture on two
         * interfaces): not a hop, and not kept twice; the kept one stands
         * for it, as this frame and free to be forwarded again. */
        if (e->used && e->hop.len == hop->len && !memcmp(e->hop.src, hop->src, hop->len) &&
            !memcmp(e->hop.dst, hop->dst, hop->len) && e->len == m->msg_len && !memcmp(e->bytes, buf, e->len)) {
            e->frame = frame;
            e->hop.ts_usec = hop->ts_usec;
            e->forwarded = false;
            return false;
        }
    }
    /* The earlier copy (P31): the same data block first (8), then the same
     * header (4), then one sent to this copy's sender (2), then one not yet
     * forwarded (1); one with neither the data nor the header is another
     * message; ties go to the oldest. */
    struct pair_entry *best = NULL;
    int best_score = 0;
    for (unsigned k = 0; k < VW_EEP_PAIR_WINDOW; k++) {
        struct pair_entry *e = &p->e[(p->next + k) % VW_EEP_PAIR_WINDOW]; /* oldest first */
        if (!e->used || !same_router_key(&e->msg, m) || !may_be_hop(p, &e->hop, hop))
            continue;
        bool data = same_data(e->bytes, &e->msg, buf, m), header = same_header(e->bytes, &e->msg, buf, m);
        if (!data && !header)
            continue;
        bool to_sender = e->hop.len == hop->len && !memcmp(e->hop.dst, hop->src, hop->len);
        int score = (data ? 8 : 0) + (header ? 4 : 0) + (to_sender ? 2 : 0) + (e->forwarded ? 0 : 1);
        if (score > best_score) {
            best = e;
            best_score = score;
        }
    }
    bool paired = false;
    if (best) {
        paired = true;
        best->forwarded = true;
        if (first_frame)
            *first_frame = best->frame;
        uint32_t dt = best->msg.hdr.dt;
        if (vw_eep_dt_kind(dt) == VW_EEP_DT_PHYSICAL && (dt == VW_EEP_ADDR_HEY_YOU || dt == VW_EEP_ADDR_BROADCAST))
            vw_findings_add(fs, VW_REQ_EEP_6C_LOCAL_ONLY, VW_SEV_ERROR, (uint32_t)m->hdr_offset + 1, 3,
                            "%s forwarded by a router (first hop in frame %llu): delivered locally only (P7)",
                            dt == VW_EEP_ADDR_HEY_YOU ? "Hey-You!" : "Broadcast", (unsigned long long)best->frame);
        vw_eep_forward_check(best->bytes, &best->msg, buf, m, VW_EEP_LINK_UNKNOWN, fs);
    }
    /* Keep this copy: a later hop may forward it in turn. */
    struct pair_entry *slot = &p->e[p->next];
    uint8_t *copy = malloc(m->msg_len);
    if (!copy)
        return paired;
    free(slot->bytes);
    memset(slot, 0, sizeof *slot);
    memcpy(copy, buf, m->msg_len);
    slot->bytes = copy;
    slot->len = m->msg_len;
    slot->frame = frame;
    slot->hop = *hop;
    slot->carrier = carrier;
    if (vw_eep_decode_on(copy, m->msg_len, carrier, &slot->msg, NULL) != VW_REQ_NONE ||
        slot->msg.msg_len != m->msg_len) {
        free(copy);
        memset(slot, 0, sizeof *slot);
        return paired;
    }
    slot->used = true;
    p->next = (p->next + 1) % VW_EEP_PAIR_WINDOW;
    return paired;
}

/* ------------------------------------------------------------ encoder */

void vw_eep_enc_init(struct vw_eep_enc *enc, uint32_t dest, uint32_t src, uint16_t pt,
                     const uint8_t *data, size_t data_len)
{
    memset(enc, 0, sizeof *enc);
    enc->hdr.dt = dest & 0xFFFFFFu;
    enc->hdr.sa = src & 0xFFFFFFu;
    enc->hdr.pt = pt;
    enc->data = data;
    enc->data_len = data_len;
}

static size_t route_len(const struct vw_eep_route_enc *r)
{
    return r->kind == VW_EEP_ROUTE_L2RH ? vw_eep_l2rh_len((unsigned)r->data_len)
                                        : vw_eep_symbol_len((unsigned)r->data_len);
}

static size_t data_words(size_t data_len) { return (data_len + VW_EEP_WORD - 1) / VW_EEP_WORD; }

size_t vw_eep_encoded_len(const struct vw_eep_enc *enc)
{
    size_t n = 0;
    for (size_t i = 0; i < enc->n_routes; i++)
        n += route_len(&enc->routes[i]);
    n += VW_EEP_HDR_LEN;
    for (size_t i = 0; i < enc->n_oh; i++)
        n += vw_eep_oh_len((unsigned)enc->oh[i].data_len);
    n += data_words(enc->data_len) * VW_EEP_WORD;
    return n + enc->ot_len + VW_EEP_TAIL_LEN;
}

static bool enc_fits_fields(const struct vw_eep_enc *enc)
{
    for (size_t i = 0; i < enc->n_routes; i++)
        if (enc->routes[i].data_len > (enc->routes[i].kind == VW_EEP_ROUTE_L2RH ? 63u : 255u))
            return false;
    for (size_t i = 0; i < enc->n_oh; i++)
        if (enc->oh[i].data_len > 255u)
            return false;
    return data_words(enc->data_len) <= VW_EEP_DL_MAX;
}

size_t vw_eep_encode(const struct vw_eep_enc *enc, uint8_t *buf, size_t cap)
{
    if (!enc_fits_fields(enc))
        return 0;
    size_t n = vw_eep_encoded_len(enc);
    if (n > cap)
        return 0;
    memset(buf, 0, n); /* padding bytes are zero */
    size_t p = 0;
    for (size_t i = 0; i < enc->n_routes; i++) {
        const struct vw_eep_route_enc *r = &enc->routes[i];
        uint8_t *b = buf + p;
        b[0] = (uint8_t)((r->version & 0x3u) << 6 | (r->priority & 0x3Fu));
        if (r->kind == VW_EEP_ROUTE_L2RH) {
            b[1] = (uint8_t)(0x80u | r->data_len);
            if (r->data_len)
                memcpy(b + 2, r->data, r->data_len);
        } else {
            b[1] = (uint8_t)(0xF0u | ((r->symbol_type >> 16) & 0x0Fu));
            vw_put_be16(b + 2, (uint16_t)r->symbol_type);
            b[4] = (uint8_t)r->data_len;
            if (r->data_len)
                memcpy(b + 5, r->data, r->data_len);
        }
        p += route_len(r);
    }
    const struct vw_eep_hdr *h = &enc->hdr;
    size_t words = data_words(enc->data_len);
    uint32_t dl = enc->keep_lengths ? h->dl : (uint32_t)words;
    uint32_t pl = enc->keep_lengths ? h->pl : (uint32_t)(words * VW_EEP_WORD - enc->data_len);
    bool has_oh = enc->keep_h ? h->h : enc->n_oh > 0;
    uint8_t *b = buf + p;
    b[0] = (uint8_t)((h->version & 0x3u) << 6 | (h->priority & 0x3Fu));
    put_be24(b + 1, h->dt);
    vw_put_be16(b + 4, h->te);
    vw_put_be16(b + 6, h->pt);
    vw_put_be32(b + 8, (uint32_t)(h->endian & 0xFu) << 28 | (pl & 0x7u) << 25 | (dl & VW_EEP_DL_MAX));
    b[12] = (uint8_t)((has_oh ? 0x80u : 0u) | (h->rz & 0x7Fu));
    put_be24(b + 13, h->sa);
    p += VW_EEP_HDR_LEN;
    for (size_t i = 0; i < enc->n_oh; i++) {
        const struct vw_eep_oh_enc *o = &enc->oh[i];
        bool last = enc->keep_c ? o->last : i + 1 == enc->n_oh;
        buf[p] = (uint8_t)((o->mandatory ? VW_EEP_OH_T : 0u) | (last ? VW_EEP_OH_C : 0u) |
                           (o->type & VW_EEP_OH_TYPE_MASK));
        buf[p + 1] = (uint8_t)o->data_len;
        if (o->data_len)
            memcpy(buf + p + 2, o->data, o->data_len);
        p += vw_eep_oh_len((unsigned)o->data_len);
    }
    if (enc->data_len)
        memcpy(buf + p, enc->data, enc->data_len);
    p += words * VW_EEP_WORD;
    if (enc->ot_len)
        memcpy(buf + p, enc->ot, enc->ot_len);
    p += enc->ot_len;
    vw_put_be64(buf + p, enc->ei);
    return p + VW_EEP_TAIL_LEN;
}
