/* IFT, PacketWay EEP and WARP scenarios and their mutations. */
#include <string.h>

#include "internal.h"
#include "mutations.h"

/* ------------------------------------------------------------------ IFT */

struct ift {
    struct tg_gen *g;
    bool crc;         /* any CRC */
    bool hc, pc;      /* what both indications announce, so what frames carry */
    uint16_t vtag[2]; /* vtag[d]: what side d announced; frames TO d carry it */
    uint32_t msn[2];  /* untagged message sequence numbers per sender */
};

static void ift_emit(struct ift *s, struct tg_pdu *pdu)
{
    pdu->proto = TG_IFT;
    pdu->crc = s->crc;
    tg_emit(s->g, pdu);
}

static void ift_indication(struct ift *s, int dir)
{
    struct tg_pdu pdu;
    memset(&pdu, 0, sizeof pdu);
    pdu.dir = dir;
    pdu.ift_ind = true;
    pdu.first_seg = pdu.last_seg = true;
    vw_ift_ind_enc_init(&pdu.ift_ind_enc, (unsigned)dir, s->vtag[dir], s->hc, s->pc);
    if (s->g->p->ift_flags_set) /* --ift-flags: every bit but PH from the command line */
        pdu.ift_ind_enc.flags = (pdu.ift_ind_enc.flags & VW_IFT_FLAG_PH) | (s->g->p->ift_flags & ~VW_IFT_FLAG_PH);
    ift_emit(s, &pdu);
}

/* One RDMAP message (Send untagged, Write tagged) in frames of seg_payload. */
static void ift_message(struct ift *s, int dir, bool tagged, size_t len)
{
    struct tg_gen *g = s->g;
    const uint8_t *data = tg_payload(g, len);
    size_t step = g->p->seg_payload;
    uint32_t msn = ++s->msn[dir];
    uint32_t stag = 0x00AB0100u + (uint32_t)dir;
    size_t off = 0;
    do {
        size_t n = len - off < step ? len - off : step;
        struct tg_pdu pdu;
        memset(&pdu, 0, sizeof pdu);
        pdu.dir = dir;
        pdu.type = tagged ? VW_RDMAP_WRITE : VW_RDMAP_SEND;
        pdu.ift_tagged = tagged;
        pdu.first_seg = off == 0;
        pdu.last_seg = off + n == len;
        pdu.ddp.tagged = tagged;
        pdu.ddp.last = pdu.last_seg;
        pdu.ddp.dv = VW_DDP_VERSION;
        pdu.ddp.rdmap_rv = VW_RDMAP_VERSION;
        pdu.ddp.rdmap_opcode = (uint8_t)pdu.type;
        if (tagged) {
            pdu.ddp.stag = stag;
            pdu.ddp.to = 0x40000000u + off;
        } else {
            pdu.ddp.qn = 0;
            pdu.ddp.msn = msn;
            pdu.ddp.mo = (uint32_t)off;
        }
        /* The frame carries the VTag its receiver announced. */
        vw_ift_frame_enc_init(&pdu.ift, s->vtag[!dir], s->hc, s->pc, NULL, 0, data + off, n);
        ift_emit(s, &pdu);
        off += n;
    } while (off < len);
}

static void run_ift(struct tg_gen *g, bool crc)
{
    struct ift s = {.g = g, .hc = crc, .pc = crc};
    if (g->p->ift_flags_set) {
        s.hc = (g->p->ift_flags & VW_IFT_FLAG_HC) != 0;
        s.pc = (g->p->ift_flags & VW_IFT_FLAG_PC) != 0;
    }
    s.crc = s.hc || s.pc;
    s.vtag[0] = (uint16_t)(tg_rng_next(&g->rng) | 1u); /* VTags random (4.2), never 0 */
    s.vtag[1] = (uint16_t)(tg_rng_next(&g->rng) | 1u);
    tg_tcp_open(g, VW_IFT_DEFAULT_PORT);
    ift_indication(&s, 0);
    ift_indication(&s, 1);
    for (unsigned i = 0; i < g->p->count; i++) {
        ift_message(&s, 0, false, g->p->msg_size);
        ift_message(&s, 0, true, g->p->msg_size);
        ift_message(&s, 1, false, 200);
    }
    tg_tcp_close(g);
}
static void run_ift_crc(struct tg_gen *g) { run_ift(g, true); }
static void run_ift_nocrc(struct tg_gen *g) { run_ift(g, false); }

static bool ift_ind(const struct tg_pdu *p) { return p->ift_ind; }
static bool ift_ind_answer(const struct tg_pdu *p) { return p->ift_ind && p->dir == 1; }
static bool ift_frame(const struct tg_pdu *p) { return !p->ift_ind; }
static bool ift_frame_hc(const struct tg_pdu *p) { return !p->ift_ind && p->ift.hc; }
static bool ift_frame_pc(const struct tg_pdu *p) { return !p->ift_ind && p->ift.pc; }
static void ap_ift_ind_crc(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->ift_ind_enc.crc = VW_IFT_CRC_BAD; }
static void ap_ift_magic(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->ift_ind_enc.magic ^= 0x01000000u; }
static void ap_ift_version(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->ift_ind_enc.version = 2; }
static void ap_ift_reserved(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->ift_ind_enc.flags |= 0x00000100u; }
static void ap_ift_phase(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->ift_ind_enc.flags &= ~VW_IFT_FLAG_PH; }
static void ap_ift_hdr_crc(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->ift.hdr_crc = VW_IFT_CRC_BAD; }
static void ap_ift_pay_crc(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->ift.payload_crc = VW_IFT_CRC_BAD; }
static void ap_ift_vtag(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->ift.vtag ^= 0x8000u; }

static void ap_ift_bc(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->ift_ind_enc.bc_version = 0; }
static void ap_ift_r(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->ift_ind_enc.flags ^= VW_IFT_FLAG_R; }
static void ap_ift_markers(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* I9: markers are undefined; an indication that offers them */
    p->ift_ind_enc.flags |= VW_IFT_FLAG_SM | VW_IFT_FLAG_RM;
    p->ift_ind_enc.marker_interval = 512;
}
static void ap_ift_crc_as_neg(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* CRCs where the sender announced none, none where it announced them */
    p->ift.hc = !p->ift.hc;
    p->ift.pc = !p->ift.pc;
}
static void ap_ift_no_ddp(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->ift_no_ddp = true; }

/* ------------------------------------------------------------------ EEP */

#define EEP_SRC 0x000102u
#define EEP_DEST 0x000207u
/* The largest data block the scenario builds: an IP packet of 1400 bytes. */
#define EEP_IP_MAX 1400u

static void eep_send(struct tg_gen *g, struct tg_pdu *pdu)
{
    pdu->proto = TG_EEP;
    pdu->first_seg = pdu->last_seg = true;
    tg_emit(g, pdu);
}

/*
 * A data block that is what its packet type says (P8: 0x0800 IPv4, 0x86DD
 * IPv6): a real IPv4 or IPv6 packet with correct checksums carrying a UDP
 * datagram of udp_len random bytes between two documentation addresses.
 * Readers hand the block to their IP dissector, so it must parse as one.
 * Written into out (EEP_IP_MAX bytes); returns its length, 0 on failure.
 */
static size_t eep_ip_block(struct tg_gen *g, bool v6, size_t udp_len, uint8_t *out, uint16_t *pt)
{
    uint8_t frame[VN_ETH_HDR_LEN + EEP_IP_MAX];
    struct vn_endpoint a, b;
    if (vn_endpoint_set(&a, v6 ? "2001:db8::1" : "192.0.2.1", 41000) != 0 ||
        vn_endpoint_set(&b, v6 ? "2001:db8::2" : "192.0.2.2", 41001) != 0)
        return 0;
    size_t n = vn_build_udp(frame, sizeof frame, &a, &b, 0, tg_payload(g, udp_len), udp_len);
    if (n <= VN_ETH_HDR_LEN) {
        tg_fail(g, "EEP data block of %zu UDP bytes does not fit", udp_len);
        return 0;
    }
    memcpy(out, frame + VN_ETH_HDR_LEN, n - VN_ETH_HDR_LEN);
    *pt = v6 ? VN_ETHERTYPE_IPV6 : VN_ETHERTYPE_IPV4;
    return n - VN_ETH_HDR_LEN;
}

/* One message whose data block is an IP packet of ip_len bytes (IPv4 or IPv6 header + UDP header + data). */
static void eep_ip_message(struct tg_gen *g, struct tg_pdu *pdu, bool v6, size_t ip_len, uint8_t *buf)
{
    size_t hdrs = (v6 ? VN_IPV6_HDR_LEN : VN_IPV4_HDR_LEN) + VN_UDP_HDR_LEN;
    uint16_t pt = 0;
    size_t n = eep_ip_block(g, v6, ip_len - hdrs, buf, &pt);
    vw_eep_enc_init(&pdu->eep, EEP_DEST, EEP_SRC, pt, buf, n);
}

static void run_eep(struct tg_gen *g)
{
    static const uint8_t route_bytes[13] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
    static const uint8_t oh_data[5] = {0xA1, 0xA2, 0xA3, 0xA4, 0xA5};
    uint8_t ip[EEP_IP_MAX];
    for (unsigned i = 0; i < g->p->count; i++) {
        /* IPv4 packets of 33..68 bytes: every length modulo 8, so each PL value (6g). */
        for (size_t len = 1; len <= 8; len++) {
            struct tg_pdu pdu;
            memset(&pdu, 0, sizeof pdu);
            eep_ip_message(g, &pdu, false, VN_IPV4_HDR_LEN + VN_UDP_HDR_LEN + len * 5, ip);
            eep_send(g, &pdu);
        }
        /* A larger message. */
        struct tg_pdu big;
        memset(&big, 0, sizeof big);
        size_t n = g->p->msg_size < EEP_IP_MAX ? g->p->msg_size : EEP_IP_MAX;
        if (n < VN_IPV4_HDR_LEN + VN_UDP_HDR_LEN)
            n = VN_IPV4_HDR_LEN + VN_UDP_HDR_LEN;
        eep_ip_message(g, &big, false, n, ip);
        eep_send(g, &big);
        /* Routed by an L2RH of 13 bytes (two words, P2), then a symbol; IPv6 inside. */
        static struct vw_eep_route_enc routes[2];
        routes[0] = (struct vw_eep_route_enc){.kind = VW_EEP_ROUTE_L2RH, .data = route_bytes, .data_len = 13};
        routes[1] = (struct vw_eep_route_enc){.kind = VW_EEP_ROUTE_SYMBOL, .symbol_type = 0x00042,
                                              .data = route_bytes, .data_len = 4};
        struct tg_pdu routed;
        memset(&routed, 0, sizeof routed);
        eep_ip_message(g, &routed, true, VN_IPV6_HDR_LEN + VN_UDP_HDR_LEN + 16, ip);
        routed.eep.routes = routes;
        routed.eep.n_routes = 2;
        eep_send(g, &routed);
        /* Two optional header fields, the last with C (7), and no data
         * block: an IP header would end a chain whose C bits were cleared
         * (its first byte, 0x45 or 0x6X, has C set), and the
         * EEP-7-OH-FORMAT mutation must leave the chain without an end. */
        struct tg_pdu oh;
        memset(&oh, 0, sizeof oh);
        vw_eep_enc_init(&oh.eep, EEP_DEST, EEP_SRC, VN_ETHERTYPE_IPV4, NULL, 0);
        oh.eep_oh[0] = (struct vw_eep_oh_enc){.type = 3, .data = oh_data, .data_len = 5};
        oh.eep_oh[1] = (struct vw_eep_oh_enc){.type = 4, .data = oh_data, .data_len = 2};
        oh.eep.oh = oh.eep_oh;
        oh.eep.n_oh = 2;
        oh.eep_has_oh = true;
        eep_send(g, &oh);
    }
}

/*
 * Both hops of messages through an EEP router (P11), A -> router -> B:
 * the first carries an L2RH the router consumes and a TAIL the router
 * shifts (P6), the second is what a right router forwards. One pair has
 * a TAIL with its MSbit set, which is not shifted.
 */
static void eep_hops(struct tg_gen *g, const struct vw_eep_route_enc *route, uint64_t ei, uint16_t te)
{
    struct tg_pdu in, out;
    memset(&in, 0, sizeof in);
    size_t n = sizeof in.eep_data;
    memcpy(in.eep_data, tg_payload(g, n), n);
    vw_eep_enc_init(&in.eep, EEP_DEST, EEP_SRC, 0x0001, in.eep_data, n);
    in.eep.hdr.te = te;
    in.eep.routes = route;
    in.eep.n_routes = 1;
    in.eep.ei = ei;
    in.eep_hop = 1;
    out = in;
    out.eep.data = out.eep_data;
    out.eep.routes = NULL;
    out.eep.n_routes = 0;
    out.eep.ei = vw_eep_tail_forward(ei, false);
    out.eep_hop = 2;
    out.eep_in_ei = ei;
    out.eep_in_routes = route;
    out.eep_in_n_routes = 1;
    eep_send(g, &in);
    eep_send(g, &out);
}

static void run_eep_router(struct tg_gen *g)
{
    static const uint8_t hop_bytes[5] = {3, 1, 4, 1, 5};
    static const struct vw_eep_route_enc route = {.kind = VW_EEP_ROUTE_L2RH, .data = hop_bytes, .data_len = 5};
    /* A leading symbol alone: the router consumes it and forwards by the DT (5). */
    static const struct vw_eep_route_enc symbol = {.kind = VW_EEP_ROUTE_SYMBOL, .symbol_type = 0x00042,
                                                   .data = hop_bytes, .data_len = 3};
    for (unsigned i = 0; i < g->p->count; i++) {
        eep_hops(g, &route, 0x1, (uint16_t)(2 * i));                       /* an error one router back */
        eep_hops(g, &route, 0x8000000000000001ull, (uint16_t)(2 * i + 1)); /* MSbit set: no longer shifted */
        eep_hops(g, &symbol, 0x2, (uint16_t)(0x100 + i));                 /* routed by a symbol */
    }
}

static bool eep_any(const struct tg_pdu *p) { return p->eep_hop == 0; }
static bool eep_plain(const struct tg_pdu *p) { return !p->eep_has_oh && p->eep.n_routes == 0; }
static bool eep_with_oh(const struct tg_pdu *p) { return p->eep_has_oh; }
static void ap_eep_version(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->eep.hdr.version = 2; }
static void ap_eep_rz(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->eep.hdr.rz = 0x11; }
static void ap_eep_dl(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* a DL far beyond the message: the oversized-DL case */
    p->eep.keep_lengths = true;
    p->eep.hdr.dl = VW_EEP_DL_MAX;
    p->eep.hdr.pl = 0;
}
static void ap_eep_oh_no_end(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* no field has C: the chain never ends */
    p->eep.keep_c = true;
    p->eep_oh[0].last = false;
    p->eep_oh[1].last = false;
}
static void ap_eep_dt_undef(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->eep.hdr.dt = VW_EEP_ADDR_UNDEFINED; }
static void ap_eep_sa(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->eep.hdr.sa = 0xE00001u; }
static void ap_eep_pt(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->eep.hdr.pt = 0x7E57u; }
static void ap_eep_ei(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->eep.ei = 0x4ull; }

/* Bytes of the encoded records before record k. */
static size_t eep_routes_before(const struct vw_eep_enc *e, size_t k)
{
    size_t n = 0;
    for (size_t i = 0; i < k && i < e->n_routes; i++)
        n += e->routes[i].kind == VW_EEP_ROUTE_L2RH ? vw_eep_l2rh_len((unsigned)e->routes[i].data_len)
                                                    : vw_eep_symbol_len((unsigned)e->routes[i].data_len);
    return n;
}
/* A message without records or OH fields whose data block has padding
 * and which stays over Ethernet's 46-byte minimum without it (a link
 * would pad a shorter one). */
static bool eep_db_padded(const struct tg_pdu *p)
{
    size_t pl = (VW_EEP_WORD - p->eep.data_len % VW_EEP_WORD) % VW_EEP_WORD;
    return eep_plain(p) && p->eep_hop == 0 && pl && vw_eep_encoded_len(&p->eep) - pl > 46;
}
static void ap_eep_db_unpadded(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* the data block written without its PL padding: the message is not whole words */
    p->eep_cut_at = VW_EEP_HDR_LEN + p->eep.data_len;
    p->eep_cut_len = (VW_EEP_WORD - p->eep.data_len % VW_EEP_WORD) % VW_EEP_WORD;
}
static bool eep_l2rh_padded(const struct tg_pdu *p)
{
    return p->eep_hop == 0 && p->eep.n_routes > 0 && p->eep.routes[0].kind == VW_EEP_ROUTE_L2RH &&
           (p->eep.routes[0].data_len + 2) % VW_EEP_WORD != 0;
}
static void ap_eep_l2rh_unpadded(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* the first L2RH written without its padding (P2) */
    size_t l = p->eep.routes[0].data_len;
    p->eep_cut_at = 2 + l;
    p->eep_cut_len = vw_eep_l2rh_len((unsigned)l) - 2 - l;
}
static bool eep_symbol_second(const struct tg_pdu *p)
{
    return p->eep_hop == 0 && p->eep.n_routes > 1 && p->eep.routes[1].kind == VW_EEP_ROUTE_SYMBOL;
}
static void ap_eep_symbol_draft_pad(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* the symbol padded by the draft's 8*[(L+12)/8]-2-L: 3 bytes more than P4 */
    p->eep_grow_at = eep_routes_before(&p->eep, 2);
    p->eep_grow_len = 3;
}
static bool eep_second_hop(const struct tg_pdu *p) { return p->eep_hop == 2; }
static bool eep_second_hop_l2rh(const struct tg_pdu *p)
{
    return p->eep_hop == 2 && p->eep_in_n_routes && p->eep_in_routes[0].kind == VW_EEP_ROUTE_L2RH;
}
static bool eep_second_hop_symbol(const struct tg_pdu *p)
{
    return p->eep_hop == 2 && p->eep_in_n_routes && p->eep_in_routes[0].kind == VW_EEP_ROUTE_SYMBOL;
}
static void ap_eep_no_shift(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* the router left the TAIL alone, or shifted one whose MSbit is set */
    p->eep.ei = (p->eep_in_ei >> 63) ? p->eep_in_ei << 1 : p->eep_in_ei;
}
static void ap_eep_db_changed(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* the router changed a data byte */
    p->eep_data[7] ^= 0x5A;
    p->eep.data = p->eep_data;
}
static void ap_eep_l2rh_kept(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* the router forwarded the L2RH it routed by (or the symbol it consumed) */
    p->eep.routes = p->eep_in_routes;
    p->eep.n_routes = p->eep_in_n_routes;
}

/* Issue 19: a mutation for every EEP rule one message (or a router's
 * copy) can break where a capture shows it. */
static bool eep_routed(const struct tg_pdu *p)
{
    return p->eep_hop == 0 && p->eep.n_routes == 2 && p->eep.routes[1].kind == VW_EEP_ROUTE_SYMBOL;
}
static bool eep_oh_no_data(const struct tg_pdu *p) { return p->eep_has_oh && p->eep.data_len == 0; }
static void ap_eep_dt_reserved(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->eep.hdr.dt = 0xC00207u; }
static void ap_eep_pl_no_data(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* PL 3 on a message without a data block */
    p->eep.keep_lengths = true;
    p->eep.hdr.dl = 0;
    p->eep.hdr.pl = 3;
}
static void ap_eep_truncated(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* the message ends with its EEP header: no data block, no TAIL */
    size_t at = eep_routes_before(&p->eep, p->eep.n_routes) + VW_EEP_HDR_LEN;
    p->eep_cut_at = at;
    p->eep_cut_len = vw_eep_encoded_len(&p->eep) - at;
}
static void ap_eep_oh_without_h(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* the optional header fields written, h=0 (P30: the H rule, not the trailer's) */
    p->eep.keep_h = true;
    p->eep.hdr.h = false;
}
static void ap_eep_ot_unsized(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* one trailer word behind optional header fields: no known OH type sizes it */
    memset(p->eep_ot, 0x0B, 8);
    p->eep.ot = p->eep_ot;
    p->eep.ot_len = 8;
}
static void ap_eep_oh_mandatory(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* the first optional header field marked mandatory (T=1): no OH type is known (P8) */
    p->eep_oh[0].mandatory = true;
    p->eep.oh = p->eep_oh;
}
static void ap_eep_symbol_priority(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* the symbol with priority 3 (P4: senders use 0) */
    memcpy(p->eep_routes, p->eep.routes, 2 * sizeof p->eep_routes[0]);
    p->eep_routes[1].priority = 3;
    p->eep.routes = p->eep_routes;
}
static void ap_eep_err_te(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* an ERR whose TE names no error of the enumeration (P8) */
    p->eep.hdr.pt = 0x0002;
    p->eep.hdr.te = 0x0999;
}
static void ap_eep_priority_changed(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* the router changed the EEP header's priority */
    p->eep.hdr.priority = 5;
    p->eep.data = p->eep_data;
}

/* ----------------------------------------------------------------- WARP */

static void warp_message(struct tg_gen *g, int dir, unsigned type, size_t len, uint32_t id)
{
    const uint8_t *data = tg_payload(g, len);
    size_t step = g->p->seg_payload;
    size_t off = 0;
    do {
        size_t n = len - off < step ? len - off : step;
        struct tg_pdu pdu;
        memset(&pdu, 0, sizeof pdu);
        pdu.proto = TG_WARP;
        pdu.dir = dir;
        pdu.type = type;
        pdu.first_seg = off == 0;
        pdu.last_seg = off + n == len;
        vw_warp_enc_init(&pdu.warp, type, data + off, n);
        if (type == VW_WARP_RDMA) {
            pdu.warp.rid = id;
            pdu.warp.offset = 0x100000u + off;
        } else {
            pdu.warp.ssn = id;
            pdu.warp.offset = off;
        }
        if (pdu.last_seg)
            pdu.warp.flags |= VW_WARP_FLAG_L;
        tg_emit(g, &pdu);
        off += n;
    } while (off < len);
}

static void run_warp(struct tg_gen *g)
{
    uint32_t ssn[2] = {(uint32_t)tg_rng_next(&g->rng) & 0xFFFF, (uint32_t)tg_rng_next(&g->rng) & 0xFFFF};
    tg_tcp_open(g, VW_WARP_DEFAULT_PORT);
    for (unsigned i = 0; i < g->p->count; i++) {
        warp_message(g, 0, VW_WARP_SEND, g->p->msg_size, ssn[0]++);
        warp_message(g, 0, VW_WARP_RDMA, g->p->msg_size, 7);
        warp_message(g, 1, VW_WARP_SEND, 100, ssn[1]++);
        warp_message(g, 0, VW_WARP_SEND, 64, ssn[0]++);
    }
    tg_tcp_close(g);
}

static bool warp_any(const struct tg_pdu *p) { (void)p; return true; }
static bool warp_not_last(const struct tg_pdu *p) { return !p->last_seg; }
static bool warp_send_first(const struct tg_pdu *p) { return p->type == VW_WARP_SEND && p->first_seg && !p->last_seg; }
static bool warp_send_single_later(const struct tg_pdu *p)
{
    return p->type == VW_WARP_SEND && p->first_seg && p->last_seg && p->dir == 0;
}
static bool warp_rdma_last(const struct tg_pdu *p) { return p->type == VW_WARP_RDMA && !p->first_seg && p->last_seg; }
static void ap_warp_adler(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->warp.adler = VW_WARP_ADLER_BAD; }
static void ap_warp_rsvd(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->warp.rsvd = 0x101; }
static void ap_warp_type(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->warp.type = 5; }
static void ap_warp_c(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->warp.flags |= VW_WARP_FLAG_C; }
static void ap_warp_e(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->warp.flags |= VW_WARP_FLAG_E; }
static void ap_warp_ssn(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->warp.ssn += 3; }
static void ap_warp_send_off(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->warp.offset += 16; }
static void ap_warp_rdma_off(struct tg_pdu *p, struct tg_rng *r) { (void)r; p->warp.offset += 16; }
static void ap_warp_len(struct tg_pdu *p, struct tg_rng *r)
{
    (void)r; /* a length under the header: no chunk can be framed */
    p->warp.keep_chunk_len = true;
    p->warp.chunk_len = 6;
}

const struct tg_scenario tg_other_scenarios[] = {
    {"ift-session", TG_IFT, "both adaption phases with HC/PC, untagged Sends and tagged RDMA writes in frames", run_ift_crc},
    {"ift-nocrc", TG_IFT, "the same without header and payload CRCs", run_ift_nocrc},
    {"eep-frames", TG_EEP, "EEP messages carrying IPv4/IPv6 packets: every PL, an L2RH and a symbol route, optional header fields", run_eep},
    {"eep-router", TG_EEP, "both hops of EEP messages through a router (A -> router -> B): the L2RH or a lone symbol consumed, the TAIL shifted, one with its MSbit set", run_eep_router},
    {"warp-session", TG_WARP, "WARP Send and RDMA chunks, multi-chunk ULP PDUs, both directions", run_warp},
};
const size_t tg_other_scenario_count = sizeof tg_other_scenarios / sizeof tg_other_scenarios[0];

#define MI(sym, el, ap, what) {VW_REQ_##sym, TG_IFT, what, el, ap}
#define ME(sym, el, ap, what) {VW_REQ_##sym, TG_EEP, what, el, ap}
#define MW(sym, el, ap, what) {VW_REQ_##sym, TG_WARP, what, el, ap}
const struct tg_mutation tg_other_mutations[] = {
    MI(IFT_4_2_IND_CRC, ift_ind, ap_ift_ind_crc, "indication CRC with every bit inverted"),
    MI(IFT_4_1_MAGIC, ift_ind, ap_ift_magic, "indication with a wrong magic (I35)"),
    MI(IFT_4_2_VERSION, ift_ind, ap_ift_version, "indication Version 2"),
    MI(IFT_4_2_RESERVED_ZERO, ift_ind, ap_ift_reserved, "reserved flag bit set"),
    MI(IFT_4_2_PHASE, ift_ind_answer, ap_ift_phase, "answer indication with PH clear"),
    MI(IFT_5_1_HDR_CRC, ift_frame_hc, ap_ift_hdr_crc, "frame header CRC inverted"),
    MI(IFT_5_1_PAYLOAD_CRC, ift_frame_pc, ap_ift_pay_crc, "frame payload CRC inverted"),
    MI(IFT_4_2_VTAG_MATCH, ift_frame, ap_ift_vtag, "frame with a VTag the receiver never announced"),
    MI(IFT_5_1_CRC_AS_NEGOTIATED, ift_frame, ap_ift_crc_as_neg, "frame with CRCs contrary to its sender's HC/PC"),
    MI(IFT_4_2_BC_VERSION_SET, ift_ind, ap_ift_bc, "version 1 indication with BC version 0"),
    MI(IFT_4_2_R_AGREE, ift_ind_answer, ap_ift_r, "answer indication with the other R bit"),
    MI(IFT_4_2_MARKERS, ift_ind, ap_ift_markers, "indication offering markers (SM, RM, interval 512)"),
    MI(IFT_5_1_DDP_HDR_PRESENT, ift_frame, ap_ift_no_ddp, "frame with header_size 0 (no DDP header)"),
    ME(EEP_6A_VERSION, eep_any, ap_eep_version, "EEP Version 2"),
    ME(EEP_6J_RZ_ZERO, eep_any, ap_eep_rz, "RZ bits set"),
    ME(EEP_6H_DL_FITS, eep_plain, ap_eep_dl, "DL of 2^25-1 words in a short message"),
    ME(EEP_7_OH_FORMAT, eep_with_oh, ap_eep_oh_no_end, "optional header chain without an end (no C)"),
    ME(EEP_6C_DT_UNDEFINED, eep_any, ap_eep_dt_undef, "Destination-Type is the Undefined address"),
    ME(EEP_6K_SA_PHYSICAL, eep_any, ap_eep_sa, "Source Address not a physical address"),
    ME(EEP_6E_PT_KNOWN, eep_any, ap_eep_pt, "unknown Packet Type 0x7E57"),
    ME(EEP_10_EI_ERROR, eep_any, ap_eep_ei, "TAIL error indication bit 2 set"),
    ME(EEP_1B_8B_WORDS, eep_db_padded, ap_eep_db_unpadded, "data block written without its padding: the message is not whole words"),
    ME(EEP_5A_L2RH_LEN, eep_l2rh_padded, ap_eep_l2rh_unpadded, "L2RH written without its padding (P2)"),
    ME(EEP_5B_SYMBOL_LEN, eep_symbol_second, ap_eep_symbol_draft_pad, "symbol padded as the draft's formula says (3 bytes more than P4)"),
    ME(EEP_10_EI_SHIFT, eep_second_hop, ap_eep_no_shift, "router's copy with the TAIL not shifted (or shifted with its MSbit set)"),
    ME(EEP_8_DB_UNMODIFIED, eep_second_hop, ap_eep_db_changed, "router's copy with a data byte changed"),
    ME(EEP_5_HR_CONSUMES_L2RH, eep_second_hop_l2rh, ap_eep_l2rh_kept, "router's copy still carrying the L2RH it was routed by"),
    ME(EEP_6C_DT_KIND, eep_any, ap_eep_dt_reserved, "Destination-Type of the reserved kind 110x"),
    ME(EEP_6G_PL_ZERO_NO_DATA, eep_oh_no_data, ap_eep_pl_no_data, "PL 3 with DL 0"),
    ME(EEP_4A_TRUNCATED, eep_routed, ap_eep_truncated, "message cut after its EEP header (no data block, no TAIL)"),
    ME(EEP_6I_H_FLAG, eep_with_oh, ap_eep_oh_without_h, "optional header fields written with h=0"),
    ME(EEP_9_OT_UNSIZED, eep_oh_no_data, ap_eep_ot_unsized, "a trailer word behind optional header fields (noted: no OH type sizes it)"),
    ME(EEP_7_MANDATORY_UNKNOWN, eep_with_oh, ap_eep_oh_mandatory, "optional header field marked mandatory (noted: no OH type is known)"),
    ME(EEP_5B_SYMBOL_PRIORITY, eep_routed, ap_eep_symbol_priority, "symbol with priority 3 (noted)"),
    ME(EEP_6E_ERR_TE, eep_db_padded, ap_eep_err_te, "ERR packet with TE 0x0999 (noted: names no error)"),
    ME(EEP_5_SYMBOL_CONSUMED, eep_second_hop_symbol, ap_eep_l2rh_kept, "router's copy still carrying the leading symbol it consumed"),
    ME(EEP_4B_ONLY_TAIL_MODIFIED, eep_second_hop, ap_eep_priority_changed, "router's copy with the EEP header's priority changed"),
    MW(WARP_A_ADLER_VALID, warp_any, ap_warp_adler, "Adler-32 with every bit inverted"),
    MW(WARP_A_RSVD_ZERO, warp_any, ap_warp_rsvd, "reserved bits set"),
    MW(WARP_A_TYPE_KNOWN, warp_send_single_later, ap_warp_type, "single-chunk Send sent as unknown type 5"),
    MW(WARP_C_ONLY_WITH_L, warp_not_last, ap_warp_c, "C set on a chunk without L"),
    MW(WARP_E_TXERR, warp_any, ap_warp_e, "E (transmit error) set"),
    MW(WARP_W4_SSN_NEXT, warp_send_single_later, ap_warp_ssn, "Send Sequence Number jumps by 3"),
    MW(WARP_W4_SEND_OFFSET, warp_send_first, ap_warp_send_off, "first Send chunk at offset 16"),
    MW(WARP_W4_RDMA_CONTIGUOUS, warp_rdma_last, ap_warp_rdma_off, "last RDMA chunk 16 bytes past the previous one"),
    MW(WARP_A_CHUNK_LEN, warp_any, ap_warp_len, "chunk length 6, under any header"),
};
const size_t tg_other_mutation_count = sizeof tg_other_mutations / sizeof tg_other_mutations[0];
