/* The node logic of pktway-node (node.h): pure functions over bytes. */
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "node.h"

void pn_config_init(struct pn_config *cfg, uint32_t addr)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->addr = addr;
    cfg->types = vw_eep_types_default;
    cfg->err_quote = PN_ERR_QUOTE;
}

static int parse_u64(const char *s, size_t n, uint64_t max, uint64_t *out);

/* ------------------------------------------------------------ choices */

/* The allowed choices: each where the draft (lines given) leaves the node
 * free. Not faults: a node making any of them keeps every rule. */
static const struct {
    const char *name, *lines, *what;
} choices[] = {
    {"no-hey-you-answer", "683-689", "a delivered Hey-You! is not answered (\"If you receive it, it's for you\": no answer is asked)"},
    {"drop-leftover-l2rh", "412-413,449-451", "a message that stops at this node with an L2RH left is dropped, not consumed and delivered (L2RHs \"should be consumed\" by the HRs before the destination)"},
    {"l2rh-if-byte=N", "455-456", "an L2RH's routing byte N (0-7) names the out interface, bytes N+1..N+6 the native next hop (\"totally SAN dependent\")"},
    {"known-oh=T[:T...]", "805,814", "OH types 0-63 this node knows: a mandatory OH field of a known type is processed (\"application-specific OH-TYPEs\")"},
    {"err-quote=N", "729-731", "an ERR carries the first N (0-64) bytes of the message it answers (the draft says only that the TE names the error)"},
    {"no-err-report", "729-731,785-786", "no ERR is sent for a message this node cannot handle (an ERR is \"usually sent\" to the SA, and \"error messages may be returned\": never required)"},
    {"no-detect", "160-161,880-883", "as a router, no error is detected in what it forwards (the LSbit is never set: how a SAN checks errors is not defined)"},
    {"eth-pad", "137-138,193", "Ethernet frames shorter than 60 bytes are padded to 60, as a NIC does (the native data link's encapsulation)"},
};

void pn_choice_list(FILE *out)
{
    for (size_t i = 0; i < sizeof choices / sizeof choices[0]; i++)
        fprintf(out, "%s lines %s: %s\n", choices[i].name, choices[i].lines, choices[i].what);
}

static int choice_one(struct pn_config *cfg, const char *item, size_t n, char *err, size_t errlen)
{
    char name[64];
    if (n == 0 || n >= sizeof name) {
        snprintf(err, errlen, "bad choice '%.*s' (see --list-choices)", (int)(n > 40 ? 40 : n), item);
        return -1;
    }
    memcpy(name, item, n);
    name[n] = 0;
    char *eq = strchr(name, '=');
    const char *val = eq ? eq + 1 : NULL;
    if (eq)
        *eq = 0;
    uint64_t u;
    bool flag = !val;
    if (!strcmp(name, "no-hey-you-answer") && flag) {
        cfg->no_hey_you_answer = true;
    } else if (!strcmp(name, "drop-leftover-l2rh") && flag) {
        cfg->drop_leftover_l2rh = true;
    } else if (!strcmp(name, "no-err-report") && flag) {
        cfg->no_err_report = true;
    } else if (!strcmp(name, "no-detect") && flag) {
        cfg->no_detect = true;
    } else if (!strcmp(name, "eth-pad") && flag) {
        cfg->eth_pad = true;
    } else if (!strcmp(name, "l2rh-if-byte") && val && !parse_u64(val, strlen(val), 7, &u)) {
        cfg->l2rh_if_byte = (unsigned)u;
    } else if (!strcmp(name, "err-quote") && val && !parse_u64(val, strlen(val), PN_ERR_QUOTE, &u)) {
        cfg->err_quote = (size_t)u;
    } else if (!strcmp(name, "known-oh") && val && *val) {
        for (const char *t = val; *t;) {
            size_t tl = strcspn(t, ":");
            if (parse_u64(t, tl, VW_EEP_OH_TYPE_MASK, &u)) {
                snprintf(err, errlen, "bad choice known-oh=%s (OH types 0-63, ':' between)", val);
                return -1;
            }
            cfg->known_oh |= 1ull << u;
            if (t[tl] == ':' && !t[tl + 1]) {
                snprintf(err, errlen, "bad choice known-oh=%s (OH types 0-63, ':' between)", val);
                return -1;
            }
            t += tl + (t[tl] == ':');
        }
    } else {
        snprintf(err, errlen, "bad choice '%s%s%s' (see --list-choices)", name, val ? "=" : "", val ? val : "");
        return -1;
    }
    return 0;
}

int pn_choice_parse(struct pn_config *cfg, const char *list, char *err, size_t errlen)
{
    if (!*list) {
        snprintf(err, errlen, "empty --choice (see --list-choices)");
        return -1;
    }
    for (const char *s = list;;) {
        size_t n = strcspn(s, ",");
        if (choice_one(cfg, s, n, err, errlen))
            return -1;
        if (!s[n])
            return 0;
        s += n + 1; /* a trailing ',' leaves an empty choice: refused */
    }
}

void pn_choice_format(const struct pn_config *cfg, char *buf, size_t cap)
{
    size_t w = 0;
    buf[0] = 0;
#define ADD(...)                                                                  \
    do {                                                                          \
        if (w < cap)                                                              \
            w += (size_t)snprintf(buf + w, cap - w, "%s", w ? "," : "");          \
        if (w < cap)                                                              \
            w += (size_t)snprintf(buf + w, cap - w, __VA_ARGS__);                 \
    } while (0)
    if (cfg->no_hey_you_answer) ADD("no-hey-you-answer");
    if (cfg->drop_leftover_l2rh) ADD("drop-leftover-l2rh");
    if (cfg->l2rh_if_byte) ADD("l2rh-if-byte=%u", cfg->l2rh_if_byte);
    if (cfg->known_oh) ADD("known-oh=0x%llx", (unsigned long long)cfg->known_oh);
    if (cfg->err_quote != PN_ERR_QUOTE) ADD("err-quote=%zu", cfg->err_quote);
    if (cfg->no_err_report) ADD("no-err-report");
    if (cfg->no_detect) ADD("no-detect");
    if (cfg->eth_pad) ADD("eth-pad");
#undef ADD
    if (!buf[0])
        snprintf(buf, cap, "none");
}

const char *pn_verdict_name(enum pn_verdict v)
{
    switch (v) {
    case PN_DELIVERED: return "delivered";
    case PN_DROPPED: return "dropped";
    case PN_FORWARDED: return "forwarded";
    case PN_REFUSED: return "refused";
    }
    return "?";
}

/* ------------------------------------------------------------ parsing */

static int parse_u64(const char *s, size_t n, uint64_t max, uint64_t *out)
{
    char tmp[32], *end;
    if (n == 0 || n >= sizeof tmp || !isdigit((unsigned char)s[0]))
        return -1;
    memcpy(tmp, s, n);
    tmp[n] = 0;
    errno = 0;
    unsigned long long v = strtoull(tmp, &end, 0);
    if (*end || errno || v > max)
        return -1;
    *out = v;
    return 0;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    c = tolower(c);
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* n hex digits (even) into out (cap bytes); bytes written or -1. */
static long parse_hex(const char *s, size_t n, uint8_t *out, size_t cap)
{
    if (n % 2 || n / 2 > cap)
        return -1;
    for (size_t i = 0; i < n; i += 2) {
        int hi = hexval((unsigned char)s[i]), lo = hexval((unsigned char)s[i + 1]);
        if (hi < 0 || lo < 0)
            return -1;
        out[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    return (long)(n / 2);
}

int pn_addr_parse(const char *text, uint32_t *addr)
{
    uint64_t v;
    if (strcmp(text, "hey-you") == 0)
        v = VW_EEP_ADDR_HEY_YOU;
    else if (strcmp(text, "broadcast") == 0)
        v = VW_EEP_ADDR_BROADCAST;
    else if (parse_u64(text, strlen(text), 0xFFFFFF, &v))
        return -1;
    *addr = (uint32_t)v;
    return 0;
}

int pn_hop_parse(const char *text, enum pn_if_kind kind, struct pn_hop *hop)
{
    uint8_t ifx = hop->ifx;
    memset(hop, 0, sizeof *hop);
    hop->ifx = ifx;
    if (kind == PN_IF_ETH) {
        unsigned m[6];
        char extra;
        if (sscanf(text, "%2x:%2x:%2x:%2x:%2x:%2x%c", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5], &extra) != 6 ||
            strlen(text) != 17)
            return -1;
        for (int i = 0; i < 6; i++)
            hop->addr[i] = (uint8_t)m[i];
        hop->len = 6;
        return 0;
    }
    const char *colon = strrchr(text, ':');
    uint64_t port;
    char ip[16];
    size_t iplen = colon ? (size_t)(colon - text) : 0;
    if (!colon || iplen == 0 || iplen >= sizeof ip || parse_u64(colon + 1, strlen(colon + 1), 65535, &port) ||
        port == 0)
        return -1;
    memcpy(ip, text, iplen);
    ip[iplen] = 0;
    unsigned a[4];
    char extra;
    if (sscanf(ip, "%3u.%3u.%3u.%3u%c", &a[0], &a[1], &a[2], &a[3], &extra) != 4 || a[0] > 255 || a[1] > 255 ||
        a[2] > 255 || a[3] > 255)
        return -1;
    for (int i = 0; i < 4; i++)
        hop->addr[i] = (uint8_t)a[i];
    hop->addr[4] = (uint8_t)(port >> 8);
    hop->addr[5] = (uint8_t)port;
    hop->len = 6;
    return 0;
}

void pn_hop_format(const struct pn_hop *hop, enum pn_if_kind kind, char *buf, size_t cap)
{
    const uint8_t *a = hop->addr;
    if (hop->len != 6)
        snprintf(buf, cap, "-");
    else if (kind == PN_IF_ETH)
        snprintf(buf, cap, "%02x:%02x:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3], a[4], a[5]);
    else
        snprintf(buf, cap, "%u.%u.%u.%u:%u", a[0], a[1], a[2], a[3], (unsigned)(a[4] << 8 | a[5]));
}

int pn_peer_parse(struct pn_config *cfg, const char *text, char *err, size_t errlen)
{
    const char *eq = strchr(text, '=');
    if (!eq || eq == text) {
        snprintf(err, errlen, "a peer is EEP=HOP[@IF]");
        return -1;
    }
    if (cfg->n_peers == PN_MAX_PEERS) {
        snprintf(err, errlen, "more than %d peers", PN_MAX_PEERS);
        return -1;
    }
    struct pn_peer p = {0};
    char name[32], hoptext[64];
    size_t nlen = (size_t)(eq - text);
    if (nlen >= sizeof name) {
        snprintf(err, errlen, "bad EEP address");
        return -1;
    }
    memcpy(name, text, nlen);
    name[nlen] = 0;
    if (strcmp(name, "default") == 0)
        p.any = true;
    else if (pn_addr_parse(name, &p.eep)) {
        snprintf(err, errlen, "bad EEP address '%s'", name);
        return -1;
    }
    const char *at = strrchr(eq + 1, '@');
    size_t hlen = at ? (size_t)(at - eq - 1) : strlen(eq + 1);
    uint64_t ifx = 0;
    if (hlen >= sizeof hoptext || (at && parse_u64(at + 1, strlen(at + 1), PN_MAX_IFS - 1, &ifx))) {
        snprintf(err, errlen, "bad next hop or interface number");
        return -1;
    }
    if (ifx >= cfg->n_ifs) {
        snprintf(err, errlen, "no interface %u", (unsigned)ifx);
        return -1;
    }
    memcpy(hoptext, eq + 1, hlen);
    hoptext[hlen] = 0;
    p.hop.ifx = (uint8_t)ifx;
    if (pn_hop_parse(hoptext, cfg->if_kind[ifx], &p.hop)) {
        snprintf(err, errlen, "bad next hop '%s' (%s)", hoptext,
                 cfg->if_kind[ifx] == PN_IF_ETH ? "a MAC aa:bb:cc:dd:ee:ff" : "IPv4:PORT");
        return -1;
    }
    cfg->peers[cfg->n_peers++] = p;
    return 0;
}

bool pn_route(const struct pn_config *cfg, uint32_t dt, int only_if, struct pn_hop *hop)
{
    const struct pn_peer *def = NULL;
    for (unsigned i = 0; i < cfg->n_peers; i++) {
        const struct pn_peer *p = &cfg->peers[i];
        if (only_if >= 0 && p->hop.ifx != only_if)
            continue;
        if (!p->any && p->eep == dt) {
            *hop = p->hop;
            return true;
        }
        if (p->any && !def)
            def = p;
    }
    if (def)
        *hop = def->hop;
    return def != NULL;
}

/* ------------------------------------------------------------ building */

static uint8_t *arena_take(struct pn_result *res, size_t n)
{
    if (n > sizeof res->arena - res->arena_used)
        return NULL;
    uint8_t *p = res->arena + res->arena_used;
    res->arena_used += n;
    return p;
}

static void add_out(struct pn_result *res, const struct pn_hop *hop, const char *kind, const uint8_t *buf,
                    size_t len)
{
    if (res->n_out == PN_OUT_MAX || !buf || !len)
        return;
    res->out[res->n_out++] = (struct pn_out){*hop, kind, buf, len};
}

/* Encode a message this node originates, with the origination faults. */
static size_t originate(const struct pn_config *cfg, struct vw_eep_enc *enc, uint8_t *buf, size_t cap)
{
    /* two words: over a link the first is read as the TAIL (P11), the
     * second still shows as trailer bytes without OH fields */
    static const uint8_t junk_ot[16] = {0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5,
                                        0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5, 0xA5};
    switch (cfg->fault) {
    case PN_FAULT_EI_NONZERO: enc->ei = 1; break;
    case PN_FAULT_RZ_NONZERO: enc->hdr.rz = 0x7F; break;
    case PN_FAULT_PL_NO_DATA:
        if (enc->data_len == 0) {
            enc->keep_lengths = true;
            enc->hdr.dl = 0;
            enc->hdr.pl = 7;
        }
        break;
    case PN_FAULT_OT_WITHOUT_OH:
        if (enc->n_oh == 0 && enc->ot_len == 0) {
            enc->ot = junk_ot;
            enc->ot_len = sizeof junk_ot;
        }
        break;
    case PN_FAULT_SA_LOGICAL: enc->hdr.sa = 0xE00000u | (cfg->addr & 0xFFFFFu); break;
    default: break;
    }
    return vw_eep_encode(enc, buf, cap);
}

size_t pn_send_len(const struct pn_config *cfg, size_t len)
{
    return cfg->fault == PN_FAULT_ODD_LENGTH && len >= 4 ? len - 4 : len;
}

static bool sa_answerable(uint32_t sa)
{
    return sa != VW_EEP_ADDR_UNDEFINED && vw_eep_dt_kind(sa) == VW_EEP_DT_PHYSICAL && sa != VW_EEP_ADDR_HEY_YOU &&
           sa != VW_EEP_ADDR_BROADCAST;
}

/* The hop back to a message's source (P15, P16): the peer table's for the
 * SA, else where the message came from. */
static bool hop_back(const struct pn_config *cfg, uint32_t sa, unsigned in_if, const struct pn_hop *from,
                     struct pn_hop *hop)
{
    for (unsigned i = 0; i < cfg->n_peers; i++)
        if (!cfg->peers[i].any && cfg->peers[i].eep == sa) {
            *hop = cfg->peers[i].hop;
            return true;
        }
    if (!from || from->len != 6)
        return pn_route(cfg, sa, -1, hop);
    *hop = *from;
    hop->ifx = (uint8_t)in_if;
    return true;
}

/* An ERR to the SA of the message in buf (P15). */
static void send_err(const struct pn_config *cfg, unsigned in_if, const struct pn_hop *from, const uint8_t *buf,
                     const struct vw_eep_msg *m, uint16_t te, struct pn_result *res)
{
    bool to_zero = cfg->fault == PN_FAULT_ERR_TO_SA_ZERO && m->hdr.sa == VW_EEP_ADDR_UNDEFINED && from;
    if (cfg->fault == PN_FAULT_NO_ERR || cfg->no_err_report || m->hdr.pt == cfg->types.pt_err || (!sa_answerable(m->hdr.sa) && !to_zero))
        return;
    struct pn_hop hop;
    if (!hop_back(cfg, m->hdr.sa, in_if, from, &hop))
        return;
    if (cfg->fault == PN_FAULT_WRONG_TE)
        te = 0x00FF;
    size_t end = m->tail_offset + VW_EEP_TAIL_LEN, quote = end - m->hdr_offset;
    if (quote > cfg->err_quote)
        quote = cfg->err_quote;
    struct vw_eep_enc enc;
    vw_eep_enc_init(&enc, m->hdr.sa, cfg->addr, cfg->types.pt_err, buf + m->hdr_offset, quote);
    enc.hdr.te = te;
    uint8_t *out = arena_take(res, vw_eep_encoded_len(&enc) + 64);
    size_t n = out ? originate(cfg, &enc, out, vw_eep_encoded_len(&enc) + 64) : 0;
    if (n && n <= cfg->if_mtu[hop.ifx]) {
        add_out(res, &hop, "err", out, n);
        res->err_te = te;
    }
}

/* The answer to a Hey-You! and the echo (P16): the same PT, TE, E and
 * data back to the SA. */
static void send_answer(const struct pn_config *cfg, unsigned in_if, const struct pn_hop *from,
                        const struct vw_eep_msg *m, const char *kind, struct pn_result *res)
{
    if (m->hdr.pt == cfg->types.pt_err || !sa_answerable(m->hdr.sa))
        return;
    struct pn_hop hop;
    if (!hop_back(cfg, m->hdr.sa, in_if, from, &hop))
        return;
    struct vw_eep_enc enc;
    vw_eep_enc_init(&enc, m->hdr.sa, cfg->addr, m->hdr.pt, m->data, m->data_len);
    enc.hdr.te = m->hdr.te;
    enc.hdr.endian = m->hdr.endian;
    enc.hdr.priority = m->hdr.priority;
    size_t cap = vw_eep_encoded_len(&enc) + 64;
    uint8_t *out = arena_take(res, cap);
    size_t n = out ? originate(cfg, &enc, out, cap) : 0;
    if (n && n <= cfg->if_mtu[hop.ifx])
        add_out(res, &hop, kind, out, n);
}

static void verdict(struct pn_result *res, enum pn_verdict v, const char *reason)
{
    res->verdict = v;
    res->reason = reason;
}

static bool is_local(const struct pn_config *cfg, uint32_t dt)
{
    if (dt == cfg->addr || dt == VW_EEP_ADDR_HEY_YOU || dt == VW_EEP_ADDR_BROADCAST)
        return true;
    for (unsigned i = 0; i < cfg->n_logical; i++)
        if (cfg->logical[i] == dt)
            return true;
    return false;
}

/* Local delivery: the checks of an end node (P5, P7, section 7). */
static void deliver(const struct pn_config *cfg, unsigned in_if, const struct pn_hop *from, const uint8_t *buf,
                    const struct vw_eep_msg *m, const struct vw_findings *fs, struct pn_result *res)
{
    uint32_t dt = m->hdr.dt;
    enum vw_eep_dt_kind kind = vw_eep_dt_kind(dt);
    for (unsigned i = 0; i < fs->count; i++)
        if (fs->item[i].severity == VW_SEV_ERROR)
            return verdict(res, PN_DROPPED, vw_req_id(fs->item[i].req));
    if (m->hdr.version != 0 && cfg->fault != PN_FAULT_ACCEPT_VERSION)
        return verdict(res, PN_DROPPED, vw_req_id(VW_REQ_EEP_6A_VERSION));
    if (kind == VW_EEP_DT_RESERVED || kind == VW_EEP_DT_L2RH || kind == VW_EEP_DT_SYMBOL) {
        if (cfg->fault != PN_FAULT_ACCEPT_RESERVED)
            return verdict(res, PN_DROPPED, vw_req_id(VW_REQ_EEP_6C_DT_KIND));
    } else if (kind == VW_EEP_DT_LOGICAL) {
        if (!is_local(cfg, dt) && cfg->fault != PN_FAULT_ACCEPT_LOGICAL)
            return verdict(res, PN_DROPPED, vw_req_id(VW_REQ_EEP_6C_LOGICAL));
    } else if (!is_local(cfg, dt)) {
        return verdict(res, PN_DROPPED, "not-mine");
    }
    if (m->hdr.rz != 0 && cfg->fault == PN_FAULT_DROP_RZ)
        return verdict(res, PN_DROPPED, vw_req_id(VW_REQ_EEP_6J_RZ_IGNORED));
    size_t pos = 0;
    struct vw_eep_oh oh;
    bool mandatory = false, optional = false;
    while (vw_eep_oh_next(m->oh, m->oh_len, &pos, &oh) == 1)
        if (!(cfg->known_oh >> oh.type & 1)) /* a known type is processed (choice known-oh) */
            *(oh.mandatory ? &mandatory : &optional) = true;
    if (mandatory && cfg->fault != PN_FAULT_ACCEPT_MANDATORY) { /* P8: no OH type is known but those chosen */
        verdict(res, PN_DROPPED, vw_req_id(VW_REQ_EEP_7_MANDATORY_UNKNOWN));
        send_err(cfg, in_if, from, buf, m, cfg->types.te_err_unknown_oh, res);
        return;
    }
    if (optional && cfg->fault == PN_FAULT_DROP_OPTIONAL)
        return verdict(res, PN_DROPPED, vw_req_id(VW_REQ_EEP_7_OPTIONAL_MAY_DROP));
    verdict(res, PN_DELIVERED, "");
    if (dt == VW_EEP_ADDR_HEY_YOU) {
        if (!cfg->no_hey_you_answer)
            send_answer(cfg, in_if, from, m, "answer", res);
    }
    else if (cfg->echo)
        send_answer(cfg, in_if, from, m, "echo", res);
}

static void set_dl_pl(uint8_t *hdr, uint32_t dl, uint8_t pl)
{
    uint32_t w = (uint32_t)(hdr[8] & 0xF0) << 24 | (uint32_t)(pl & 7) << 25 | (dl & VW_EEP_DL_MAX);
    hdr[8] = (uint8_t)(w >> 24);
    hdr[9] = (uint8_t)(w >> 16);
    hdr[10] = (uint8_t)(w >> 8);
    hdr[11] = (uint8_t)w;
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

/* The router's copy (P9, P13, P14): records [cut_a, cut_b) removed, the
 * TAIL forwarded, nothing else changed (unless a fault says so). */
static void forward(const struct pn_config *cfg, unsigned in_if, const struct pn_hop *from, const uint8_t *buf,
                    const struct vw_eep_msg *m, size_t cut_a, size_t cut_b, const struct pn_hop *hop,
                    struct pn_result *res)
{
    size_t end = m->tail_offset + VW_EEP_TAIL_LEN;
    size_t len = end - (cut_b - cut_a);
    uint8_t *out = arena_take(res, len);
    if (!out)
        return verdict(res, PN_DROPPED, "no-memory");
    memcpy(out, buf, cut_a);
    memcpy(out + cut_a, buf + cut_b, end - cut_b);
    size_t hdr = m->hdr_offset - (cut_b - cut_a), tail = len - VW_EEP_TAIL_LEN;
    bool err_bit = res->error_seen && cfg->fault != PN_FAULT_NO_ERROR_BIT;
    res->ei_out = cfg->fault == PN_FAULT_NO_SHIFT ? (m->ei | (err_bit ? 1u : 0u)) : vw_eep_tail_forward(m->ei, err_bit);
    put_be64(out + tail, res->ei_out);
    if (cfg->fault == PN_FAULT_MODIFY_HEADER)
        out[hdr] = (uint8_t)((out[hdr] & 0xC0) | ((out[hdr] + 1) & 0x3F));
    if (cfg->fault == PN_FAULT_MODIFY_DB && m->db_len)
        out[hdr + (m->db_offset - m->hdr_offset)] ^= 0xFF;
    if (len > cfg->if_mtu[hop->ifx]) {
        size_t db = hdr + (m->db_offset - m->hdr_offset), words = m->hdr.dl;
        if (cfg->fault == PN_FAULT_SEGMENT && words >= 2) { /* two messages, the data block split */
            size_t w1 = words / 2, n1 = db + 8 * w1 + VW_EEP_TAIL_LEN;
            uint8_t *first = arena_take(res, n1);
            if (!first)
                return verdict(res, PN_DROPPED, "no-memory");
            memcpy(first, out, db + 8 * w1);
            set_dl_pl(first + hdr, (uint32_t)w1, 0);
            memcpy(first + db + 8 * w1, out + tail, VW_EEP_TAIL_LEN);
            add_out(res, hop, "forward", first, n1);
            memmove(out + db, out + db + 8 * w1, len - db - 8 * w1);
            set_dl_pl(out + hdr, (uint32_t)(words - w1), m->hdr.pl);
            add_out(res, hop, "forward", out, len - 8 * w1);
            return verdict(res, PN_FORWARDED, "");
        }
        if (cfg->fault != PN_FAULT_IGNORE_MTU) {
            verdict(res, PN_REFUSED, vw_req_id(VW_REQ_EEP_1B_PATH_MTU));
            send_err(cfg, in_if, from, buf, m, cfg->types.te_err_too_long, res);
            return;
        }
    }
    add_out(res, hop, "forward", out, len);
    verdict(res, PN_FORWARDED, "");
}

static void unreachable(const struct pn_config *cfg, unsigned in_if, const struct pn_hop *from, const uint8_t *buf,
                        const struct vw_eep_msg *m, struct pn_result *res)
{
    verdict(res, PN_DROPPED, "unreachable");
    send_err(cfg, in_if, from, buf, m, cfg->types.te_err_unknown_dest, res);
}

/* The fault answer-cut: a Hey-You! whose data block runs past its end
 * (its header decoded, nothing after it) answered with the whole words
 * there are after the header, as if they were its data. */
static void answer_cut(const struct pn_config *cfg, unsigned in_if, const struct pn_hop *from, const uint8_t *buf,
                       size_t len, const struct vw_eep_msg *m, struct pn_result *res)
{
    size_t at = m->hdr_offset + VW_EEP_HDR_LEN;
    struct pn_hop hop;
    if (at > len || !sa_answerable(m->hdr.sa) || !hop_back(cfg, m->hdr.sa, in_if, from, &hop))
        return verdict(res, PN_DROPPED, vw_req_id(VW_REQ_EEP_6H_DL_FITS));
    size_t avail = (len - at) / VW_EEP_WORD * VW_EEP_WORD;
    struct vw_eep_enc enc;
    vw_eep_enc_init(&enc, m->hdr.sa, cfg->addr, m->hdr.pt, buf + at, avail);
    uint8_t *out = arena_take(res, vw_eep_encoded_len(&enc) + 64);
    size_t n = out ? originate(cfg, &enc, out, vw_eep_encoded_len(&enc) + 64) : 0;
    verdict(res, PN_DELIVERED, "fault");
    if (n && n <= cfg->if_mtu[hop.ifx])
        add_out(res, &hop, "answer", out, n);
}

void pn_handle(const struct pn_config *cfg, unsigned in_if, const struct pn_hop *from, const uint8_t *buf,
               size_t len, struct pn_result *res)
{
    res->verdict = PN_DROPPED;
    res->reason = "";
    res->decoded = false;
    res->records = res->consumed = 0;
    res->error_seen = false;
    res->ei_out = 0;
    res->err_te = 0;
    res->n_out = 0;
    res->arena_used = 0;
    if (in_if >= cfg->n_ifs || len > PN_MSG_MAX)
        return verdict(res, PN_DROPPED, "too-long");
    struct vw_findings fs;
    vw_findings_clear(&fs);
    enum vw_eep_carrier carrier = cfg->if_kind[in_if] == PN_IF_UDP ? VW_EEP_CARRIER_DATAGRAM : VW_EEP_CARRIER_LINK;
    struct vw_eep_msg *m = &res->msg;
    enum vw_req rc = vw_eep_decode_on(buf, len, carrier, m, &fs);
    if (rc == VW_REQ_EEP_6H_DL_FITS && cfg->fault == PN_FAULT_ANSWER_CUT && m->hdr.dt == VW_EEP_ADDR_HEY_YOU)
        return answer_cut(cfg, in_if, from, buf, len, m, res);
    if (rc != VW_REQ_NONE)
        return verdict(res, PN_DROPPED, vw_req_id(rc));
    res->decoded = true;
    for (unsigned i = 0; i < fs.count; i++)
        if (fs.item[i].severity == VW_SEV_ERROR)
            res->error_seen = !cfg->no_detect;
    res->records = m->n_l2rh + m->n_symbols;
    if (cfg->fault == PN_FAULT_DROP_MIXED && m->n_l2rh && m->n_symbols)
        return verdict(res, PN_DROPPED, vw_req_id(VW_REQ_EEP_5B_SYMBOLS_MIXED));

    /* The leading symbols and the first L2RH (P13). */
    size_t pos = 0, l2rh_at = 0, l2rh_end = 0;
    struct vw_eep_route r, l2rh = {0};
    bool have_l2rh = false;
    unsigned symbols_before = 0;
    while (!have_l2rh && vw_eep_route_next(m->routes, m->routes_len, &pos, &r) == 1) {
        if (r.kind == VW_EEP_ROUTE_L2RH) {
            have_l2rh = true;
            l2rh = r;
            l2rh_at = r.offset;
            l2rh_end = r.offset + r.record_len;
        } else {
            symbols_before++;
        }
    }
    uint32_t dt = m->hdr.dt;
    bool local_only = dt == VW_EEP_ADDR_HEY_YOU || dt == VW_EEP_ADDR_BROADCAST; /* P7: never forwarded */

    if (!cfg->router || local_only || (!have_l2rh && is_local(cfg, dt))) {
        if (cfg->drop_leftover_l2rh && m->n_l2rh)
            return verdict(res, PN_DROPPED, "leftover-l2rh"); /* choice: not consumed, dropped */
        res->consumed = res->records; /* P13: a message that stops here consumes every record */
        deliver(cfg, in_if, from, buf, m, &fs, res);
        if (cfg->router && local_only && cfg->fault == PN_FAULT_FORWARD_LOCAL) {
            uint8_t *copy = arena_take(res, m->tail_offset + VW_EEP_TAIL_LEN);
            if (copy) {
                memcpy(copy, buf, m->tail_offset + VW_EEP_TAIL_LEN);
                put_be64(copy + m->tail_offset, vw_eep_tail_forward(m->ei, false));
                for (unsigned i = 0; i < cfg->n_ifs; i++) {
                    struct pn_hop hop = {.ifx = (uint8_t)i};
                    if (i != in_if && cfg->if_kind[i] == PN_IF_ETH) {
                        memset(hop.addr, 0xFF, 6);
                        hop.len = 6;
                    } else if (i == in_if || !pn_route(cfg, dt, (int)i, &hop)) {
                        continue;
                    }
                    add_out(res, &hop, "forward", copy, m->tail_offset + VW_EEP_TAIL_LEN);
                }
            }
        }
        return;
    }

    struct pn_hop hop = {0};
    if (have_l2rh && cfg->fault != PN_FAULT_ROUTE_BY_DT) {
        /* L2 forwarding: routing byte 0 names the out interface, bytes 1-6
         * (when present) the native next hop on it (P13). */
        res->consumed = symbols_before + 1;
        size_t a = 0, b = l2rh_end;
        if (cfg->fault == PN_FAULT_KEEP_L2RH) {
            b = l2rh_at;
            res->consumed = symbols_before;
        } else if (cfg->fault == PN_FAULT_KEEP_SYMBOL) {
            a = l2rh_at;
            res->consumed = 1;
        }
        unsigned at = cfg->l2rh_if_byte; /* 0 unless the choice l2rh-if-byte */
        if (l2rh.data_len < at + 1 || l2rh.data[at] >= cfg->n_ifs)
            return unreachable(cfg, in_if, from, buf, m, res);
        hop.ifx = l2rh.data[at];
        if (l2rh.data_len >= at + 7) {
            memcpy(hop.addr, l2rh.data + at + 1, 6);
            hop.len = 6;
        } else if (!pn_route(cfg, dt, hop.ifx, &hop)) {
            return unreachable(cfg, in_if, from, buf, m, res);
        }
        if (cfg->fault == PN_FAULT_NO_FORWARD)
            return verdict(res, PN_DROPPED, "fault");
        return forward(cfg, in_if, from, buf, m, a, b, &hop, res);
    }

    /* L3 forwarding by the Destination-Type; leading symbols (and, with
     * route-by-dt, the L2RH) are consumed. */
    size_t a = 0, b = have_l2rh ? l2rh_end : m->routes_len;
    res->consumed = have_l2rh ? symbols_before + 1 : m->n_symbols;
    if (cfg->fault == PN_FAULT_KEEP_SYMBOL && !have_l2rh) {
        b = 0;
        res->consumed = 0;
    }
    enum vw_eep_dt_kind kind = vw_eep_dt_kind(dt);
    if (kind != VW_EEP_DT_PHYSICAL && kind != VW_EEP_DT_LOGICAL && cfg->fault != PN_FAULT_ACCEPT_RESERVED)
        return verdict(res, PN_DROPPED, vw_req_id(VW_REQ_EEP_6C_DT_KIND));
    if (dt == VW_EEP_ADDR_UNDEFINED)
        return verdict(res, PN_DROPPED, vw_req_id(VW_REQ_EEP_6C_DT_UNDEFINED));
    if (kind == VW_EEP_DT_LOGICAL) { /* P7: only where a peer is configured for it */
        bool found = false;
        for (unsigned i = 0; i < cfg->n_peers && !found; i++)
            if (!cfg->peers[i].any && cfg->peers[i].eep == dt) {
                hop = cfg->peers[i].hop;
                found = true;
            }
        if (!found)
            return verdict(res, PN_DROPPED, vw_req_id(VW_REQ_EEP_6C_LOGICAL));
    } else if (!pn_route(cfg, dt, -1, &hop)) {
        return unreachable(cfg, in_if, from, buf, m, res);
    }
    if (cfg->fault == PN_FAULT_NO_FORWARD)
        return verdict(res, PN_DROPPED, "fault");
    forward(cfg, in_if, from, buf, m, a, b, &hop, res);
}

/* ------------------------------------------------------------ send specs */

static int spec_err(char *err, size_t errlen, const char *what, const char *s, size_t n)
{
    snprintf(err, errlen, "bad %s '%.*s'", what, (int)(n > 40 ? 40 : n), s);
    return -1;
}

int pn_spec_parse(const char *text, struct pn_spec *spec, char *err, size_t errlen)
{
    memset(spec, 0, offsetof(struct pn_spec, data));
    spec->data_len = 0;
    spec->ifx = -1;
    spec->count = 1;
    spec->cut = 0;
    spec->have_to = false;
    spec->to[0] = 0;
    const char *s = text;
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        const char *eq = memchr(s, '=', n);
        if (!eq)
            return spec_err(err, errlen, "item (key=value)", s, n);
        size_t klen = (size_t)(eq - s), vlen = n - klen - 1;
        const char *v = eq + 1;
        char key[8];
        uint64_t u;
        if (klen == 0 || klen >= sizeof key)
            return spec_err(err, errlen, "key", s, klen);
        memcpy(key, s, klen);
        key[klen] = 0;
#define NUM(max, field)                                   \
    do {                                                  \
        if (parse_u64(v, vlen, (max), &u))                \
            return spec_err(err, errlen, key, v, vlen);   \
        field = u;                                        \
    } while (0)
        if (!strcmp(key, "dt") || !strcmp(key, "sa")) {
            char tmp[32];
            uint32_t a;
            if (vlen >= sizeof tmp)
                return spec_err(err, errlen, key, v, vlen);
            memcpy(tmp, v, vlen);
            tmp[vlen] = 0;
            if (pn_addr_parse(tmp, &a))
                return spec_err(err, errlen, key, v, vlen);
            if (key[0] == 'd') {
                spec->dt = a;
                spec->have_dt = true;
            } else {
                spec->sa = a;
                spec->have_sa = true;
            }
        } else if (!strcmp(key, "pt")) {
            NUM(0xFFFF, spec->pt);
        } else if (!strcmp(key, "te")) {
            NUM(0xFFFF, spec->te);
        } else if (!strcmp(key, "v")) {
            NUM(3, spec->v);
        } else if (!strcmp(key, "p")) {
            NUM(63, spec->p);
        } else if (!strcmp(key, "e")) {
            NUM(15, spec->e);
        } else if (!strcmp(key, "rz")) {
            NUM(127, spec->rz);
        } else if (!strcmp(key, "ei")) {
            NUM(UINT64_MAX, spec->ei);
        } else if (!strcmp(key, "if")) {
            NUM(PN_MAX_IFS - 1, spec->ifx);
        } else if (!strcmp(key, "cut")) {
            NUM(PN_MSG_MAX, spec->cut);
        } else if (!strcmp(key, "count")) {
            NUM(1000000, spec->count);
            if (spec->count == 0)
                return spec_err(err, errlen, key, v, vlen);
        } else if (!strcmp(key, "data")) {
            long got = parse_hex(v, vlen, spec->data, sizeof spec->data);
            if (got < 0)
                return spec_err(err, errlen, "data (hex bytes)", v, vlen);
            spec->data_len = (size_t)got;
        } else if (!strcmp(key, "len")) {
            NUM(PN_MSG_MAX - 64, spec->data_len);
            for (size_t i = 0; i < spec->data_len; i++)
                spec->data[i] = (uint8_t)i;
        } else if (!strcmp(key, "ot")) {
            long got = parse_hex(v, vlen, spec->ot, sizeof spec->ot);
            if (got < 0)
                return spec_err(err, errlen, "ot (hex bytes)", v, vlen);
            spec->ot_len = (size_t)got;
        } else if (!strcmp(key, "to")) {
            if (vlen >= sizeof spec->to)
                return spec_err(err, errlen, key, v, vlen);
            memcpy(spec->to, v, vlen);
            spec->to[vlen] = 0;
            spec->have_to = true;
        } else if (!strcmp(key, "l2rh") || !strcmp(key, "sym") || !strcmp(key, "oh") || !strcmp(key, "moh")) {
            /* l2rh=HEX; sym=TYPE[:HEX]; oh=TYPE[:HEX] (optional), moh=TYPE[:HEX] (mandatory) */
            const char *colon = memchr(v, ':', vlen);
            size_t tlen = key[0] == 'l' ? 0 : (colon ? (size_t)(colon - v) : vlen);
            const char *hex = key[0] == 'l' ? v : (colon ? colon + 1 : v + vlen);
            size_t hlen = vlen - (size_t)(hex - v);
            uint64_t type = 0;
            if (key[0] != 'l' && parse_u64(v, tlen, key[0] == 's' ? 0xFFFFF : 0x3F, &type))
                return spec_err(err, errlen, key, v, vlen);
            uint8_t tmp[255];
            long got = parse_hex(hex, hlen, tmp, key[0] == 'l' ? 63 : sizeof tmp);
            if (got < 0)
                return spec_err(err, errlen, key, v, vlen);
            if (key[0] == 'l' || key[0] == 's') {
                if (spec->n_routes == PN_SPEC_ROUTES)
                    return spec_err(err, errlen, "count of records", v, vlen);
                struct pn_spec_route *r = &spec->routes[spec->n_routes++];
                r->kind = key[0] == 'l' ? VW_EEP_ROUTE_L2RH : VW_EEP_ROUTE_SYMBOL;
                r->symbol_type = (uint32_t)type;
                memcpy(r->data, tmp, (size_t)got);
                r->len = (size_t)got;
            } else {
                if (spec->n_oh == PN_SPEC_OH)
                    return spec_err(err, errlen, "count of OH fields", v, vlen);
                struct pn_spec_oh *o = &spec->oh[spec->n_oh++];
                o->mandatory = key[0] == 'm';
                o->type = (uint8_t)type;
                memcpy(o->data, tmp, (size_t)got);
                o->len = (size_t)got;
            }
        } else {
            return spec_err(err, errlen, "key", s, klen);
        }
#undef NUM
        s += n;
        if (*s == ',')
            s++;
    }
    if (!spec->have_dt) {
        snprintf(err, errlen, "a message needs dt=");
        return -1;
    }
    return 0;
}

size_t pn_spec_build(const struct pn_config *cfg, const struct pn_spec *spec, uint8_t *buf, size_t cap,
                     struct pn_hop *hop, char *err, size_t errlen)
{
    struct vw_eep_route_enc routes[PN_SPEC_ROUTES];
    struct vw_eep_oh_enc oh[PN_SPEC_OH];
    for (size_t i = 0; i < spec->n_routes; i++)
        routes[i] = (struct vw_eep_route_enc){spec->routes[i].kind, 0, 0, spec->routes[i].symbol_type,
                                              spec->routes[i].data, spec->routes[i].len};
    for (size_t i = 0; i < spec->n_oh; i++)
        oh[i] = (struct vw_eep_oh_enc){spec->oh[i].mandatory, spec->oh[i].type, false, spec->oh[i].data,
                                       spec->oh[i].len};
    struct vw_eep_enc enc;
    vw_eep_enc_init(&enc, spec->dt, spec->have_sa ? spec->sa : cfg->addr, spec->pt, spec->data, spec->data_len);
    enc.hdr.te = spec->te;
    enc.hdr.version = spec->v;
    enc.hdr.priority = spec->p;
    enc.hdr.endian = spec->e;
    enc.hdr.rz = spec->rz;
    enc.ei = spec->ei;
    enc.routes = routes;
    enc.n_routes = spec->n_routes;
    enc.oh = oh;
    enc.n_oh = spec->n_oh;
    enc.ot = spec->ot;
    enc.ot_len = spec->ot_len;
    size_t n = originate(cfg, &enc, buf, cap);
    if (!n) {
        snprintf(err, errlen, "the message does not fit (%zu bytes at most)", cap);
        return 0;
    }
    if (spec->cut >= n) {
        snprintf(err, errlen, "cut=%zu leaves nothing of the %zu-byte message", spec->cut, n);
        return 0;
    }
    n -= spec->cut;
    if (spec->ifx >= (int)cfg->n_ifs) {
        snprintf(err, errlen, "no interface %d", spec->ifx);
        return 0;
    }
    memset(hop, 0, sizeof *hop);
    if (spec->have_to) {
        hop->ifx = (uint8_t)(spec->ifx < 0 ? 0 : spec->ifx);
        if (pn_hop_parse(spec->to, cfg->if_kind[hop->ifx], hop)) {
            snprintf(err, errlen, "bad to= next hop '%s'", spec->to);
            return 0;
        }
    } else if (!pn_route(cfg, spec->dt, spec->ifx, hop)) {
        unsigned ifx = spec->ifx < 0 ? 0 : (unsigned)spec->ifx;
        bool local = spec->dt == VW_EEP_ADDR_HEY_YOU || spec->dt == VW_EEP_ADDR_BROADCAST;
        if (!local || cfg->n_ifs == 0 || cfg->if_kind[ifx] != PN_IF_ETH) {
            snprintf(err, errlen, "no next hop for 0x%06x (give --peer or to=)", (unsigned)spec->dt);
            return 0;
        }
        hop->ifx = (uint8_t)ifx; /* Hey-You!/Broadcast on an Ethernet link: the broadcast MAC */
        memset(hop->addr, 0xFF, 6);
        hop->len = 6;
    }
    if (n > cfg->if_mtu[hop->ifx] && cfg->fault != PN_FAULT_IGNORE_MTU) {
        snprintf(err, errlen, "%s: %zu bytes over the MTU %zu of interface %u", vw_req_id(VW_REQ_EEP_1B_PATH_MTU), n,
                 cfg->if_mtu[hop->ifx], hop->ifx);
        return 0;
    }
    return n;
}
