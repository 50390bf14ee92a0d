/* PacketWay EEP (P1-P8): every field's round trip, the draft's own record
 * examples, every decode error naming its rule, names, and garbage. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "vitcp/pktway.h"

static enum vw_req decode_exact(const uint8_t *p, size_t n, struct vw_eep_msg *m,
                                struct vw_findings *fs)
{
    uint8_t *d = malloc(n ? n : 1);
    assert_non_null(d);
    if (n)
        memcpy(d, p, n);
    vw_findings_clear(fs);
    enum vw_req r = vw_eep_decode(d, n, m, fs);
    free(d);
    return r;
}

static const uint8_t sr[13] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13};
static const uint8_t sym[9] = {0xD1, 0xD2, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7, 0xD8, 0xD9};
static const uint8_t ohd[4] = {0xAA, 0xBB, 0xCC, 0xDD};
static const uint8_t payload[13] = "thirteen byte";

/* L2RH (L=13) + symbol (L=9) + header + mandatory OH (L=4) + 13 data bytes
 * + one trailer word + TAIL. */
static size_t full_message(uint8_t *buf, size_t cap, struct vw_eep_enc *e,
                           struct vw_eep_route_enc *routes, struct vw_eep_oh_enc *oh)
{
    static const uint8_t ot[8] = {0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C, 0x0C};
    routes[0] = (struct vw_eep_route_enc){.kind = VW_EEP_ROUTE_L2RH, .data = sr, .data_len = 13};
    routes[1] = (struct vw_eep_route_enc){.kind = VW_EEP_ROUTE_SYMBOL, .symbol_type = 0xABCDE,
                                          .data = sym, .data_len = 9};
    oh[0] = (struct vw_eep_oh_enc){.mandatory = true, .type = 0x15, .data = ohd, .data_len = 4};
    vw_eep_enc_init(e, 0x012345, 0x000042, 0x0800, payload, sizeof payload);
    e->routes = routes;
    e->n_routes = 2;
    e->oh = oh;
    e->n_oh = 1;
    e->ot = ot;
    e->ot_len = 8;
    e->hdr.priority = 0x2A;
    e->hdr.te = 0xBEEF;
    e->hdr.endian = 0xA;
    return vw_eep_encode(e, buf, cap);
}

static void test_draft_record_examples(void **state)
{
    (void)state;
    /* 5a: an L2RH with 13 routing bytes takes two words: 00 8D SR01.. */
    struct vw_eep_route_enc r = {.kind = VW_EEP_ROUTE_L2RH, .data = sr, .data_len = 13};
    struct vw_eep_enc e;
    vw_eep_enc_init(&e, 5, 0, 1, NULL, 0);
    e.routes = &r;
    e.n_routes = 1;
    uint8_t b[128];
    size_t n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(n, 16 + 16 + 8);
    assert_int_equal(b[0], 0x00);
    assert_int_equal(b[1], 0x8D);
    assert_memory_equal(b + 2, sr, 13);
    assert_int_equal(b[15], 0);
    assert_int_equal(vw_eep_l2rh_len(13), 16);
    assert_int_equal(vw_eep_l2rh_len(6), 8);
    assert_int_equal(vw_eep_l2rh_len(7), 16);
    /* 5b2: a symbol with 9 data bytes takes two words (P4: 8*[(L+12)/8]) */
    assert_int_equal(vw_eep_symbol_len(9), 16);
    assert_int_equal(vw_eep_symbol_len(3), 8);
    assert_int_equal(vw_eep_symbol_len(4), 16);
    /* 7: an OH with 4 data bytes is one word */
    assert_int_equal(vw_eep_oh_len(4), 8);
    assert_int_equal(vw_eep_oh_len(7), 16);
}

static void test_full_message_round_trip(void **state)
{
    (void)state;
    struct vw_eep_enc e;
    struct vw_eep_route_enc routes[2];
    struct vw_eep_oh_enc oh[1];
    uint8_t b[256];
    size_t n = full_message(b, sizeof b, &e, routes, oh);
    assert_int_equal(n, 16 + 16 + 16 + 8 + 16 + 8 + 8);
    assert_int_equal(vw_eep_encoded_len(&e), n);
    /* header bytes at 32: P=0x2A, DT, TE, PT, E/PL/DL, h, SA */
    const uint8_t hdr[16] = {0x2A, 0x01, 0x23, 0x45, 0xBE, 0xEF, 0x08, 0x00,
                             0xA0 | (3 << 1), 0x00, 0x00, 0x02, 0x80, 0x00, 0x00, 0x42};
    assert_memory_equal(b + 32, hdr, 16);
    assert_int_equal(b[16 + 1], 0xFA); /* symbol: 1111 + type's top nibble */
    assert_int_equal(b[48], 0x80 | 0x40 | 0x15);
    assert_int_equal(b[49], 4);

    struct vw_eep_msg m;
    struct vw_findings fs;
    assert_int_equal(decode_exact(b, n, &m, &fs), VW_REQ_NONE);
    /* decode again in place: the pointers below refer into b */
    vw_findings_clear(&fs);
    assert_int_equal(vw_eep_decode(b, n, &m, &fs), VW_REQ_NONE);
    assert_int_equal(m.n_l2rh, 1);
    assert_int_equal(m.n_symbols, 1);
    assert_int_equal(m.routes_len, 32);
    assert_int_equal(m.hdr_offset, 32);
    assert_int_equal(m.hdr.version, 0);
    assert_int_equal(m.hdr.priority, 0x2A);
    assert_int_equal(m.hdr.dt, 0x012345);
    assert_int_equal(vw_eep_dt_kind(m.hdr.dt), VW_EEP_DT_PHYSICAL);
    assert_int_equal(m.hdr.te, 0xBEEF);
    assert_int_equal(m.hdr.pt, 0x0800);
    assert_int_equal(m.hdr.endian, 0xA);
    assert_int_equal(m.hdr.pl, 3);
    assert_int_equal(m.hdr.dl, 2);
    assert_true(m.hdr.h);
    assert_int_equal(m.hdr.rz, 0);
    assert_int_equal(m.hdr.sa, 0x42);
    assert_int_equal(m.n_oh, 1);
    assert_int_equal(m.n_oh_mandatory, 1);
    assert_int_equal(m.oh_len, 8);
    assert_int_equal(m.db_offset, 56);
    assert_int_equal(m.db_len, 16);
    assert_int_equal(m.data_len, 13);
    assert_memory_equal(m.data, payload, 13);
    assert_int_equal(m.ot_len, 8);
    assert_int_equal(m.tail_offset, n - 8);
    assert_int_equal(m.msg_len, n);
    assert_true(m.ei == 0);
    /* notes only: unknown mandatory OH, unsized trailer */
    assert_int_equal(fs.count, 2);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_7_MANDATORY_UNKNOWN));
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_9_OT_UNSIZED));

    /* walk the records and OH fields */
    size_t pos = 0;
    struct vw_eep_route r;
    assert_int_equal(vw_eep_route_next(m.routes, m.routes_len, &pos, &r), 1);
    assert_int_equal(r.kind, VW_EEP_ROUTE_L2RH);
    assert_int_equal(r.data_len, 13);
    assert_int_equal(r.record_len, 16);
    assert_int_equal(vw_eep_route_next(m.routes, m.routes_len, &pos, &r), 1);
    assert_int_equal(r.kind, VW_EEP_ROUTE_SYMBOL);
    assert_int_equal(r.symbol_type, 0xABCDE);
    assert_int_equal(r.data_len, 9);
    assert_memory_equal(r.data, sym, 9);
    assert_int_equal(vw_eep_route_next(m.routes, m.routes_len, &pos, &r), 0);
    pos = 0;
    struct vw_eep_oh o;
    assert_int_equal(vw_eep_oh_next(m.oh, m.oh_len, &pos, &o), 1);
    assert_true(o.mandatory);
    assert_true(o.last);
    assert_int_equal(o.type, 0x15);
    assert_memory_equal(o.data, ohd, 4);
    assert_int_equal(vw_eep_oh_next(m.oh, m.oh_len, &pos, &o), 0);
}

static void test_header_field_findings(void **state)
{
    (void)state;
    struct {
        uint8_t version;
        uint32_t dt;
        uint8_t rz;
        uint32_t sa;
        enum vw_req want;
    } cases[] = {
        {1, 5, 0, 0, VW_REQ_EEP_6A_VERSION},
        {0, 0xC00001, 0, 0, VW_REQ_EEP_6C_DT_KIND},
        {0, 0x000000, 0, 0, VW_REQ_EEP_6C_DT_UNDEFINED},
        {0, 5, 0x11, 0, VW_REQ_EEP_6J_RZ_ZERO},
        {0, 5, 0, 0x800001, VW_REQ_EEP_6K_SA_PHYSICAL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        struct vw_eep_enc e;
        vw_eep_enc_init(&e, cases[k].dt, cases[k].sa, 1, payload, 8);
        e.hdr.version = cases[k].version;
        e.hdr.rz = cases[k].rz;
        uint8_t b[64];
        size_t n = vw_eep_encode(&e, b, sizeof b);
        assert_int_equal(n, 32);
        struct vw_eep_msg m;
        struct vw_findings fs;
        assert_int_equal(decode_exact(b, n, &m, &fs), VW_REQ_NONE);
        assert_int_equal(fs.count, 1);
        assert_int_equal(fs.item[0].req, cases[k].want);
        assert_int_equal(m.hdr.version, cases[k].version);
        assert_int_equal(m.hdr.rz, cases[k].rz);
        assert_int_equal(m.hdr.sa, cases[k].sa);
    }
    /* PL with DL 0 (P5), via wrong lengths on request */
    struct vw_eep_enc e;
    vw_eep_enc_init(&e, 5, 0, 1, NULL, 0);
    e.keep_lengths = true;
    e.hdr.pl = 3;
    uint8_t b[64];
    size_t n = vw_eep_encode(&e, b, sizeof b);
    struct vw_eep_msg m;
    struct vw_findings fs;
    assert_int_equal(decode_exact(b, n, &m, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_6G_PL_ZERO_NO_DATA));
    assert_int_equal(m.data_len, 0);
    /* a non-zero TAIL */
    vw_eep_enc_init(&e, 5, 0, 1, NULL, 0);
    e.ei = 0x4;
    n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(decode_exact(b, n, &m, &fs), VW_REQ_NONE);
    assert_true(m.ei == 4);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_10_EI_ERROR));
    assert_non_null(strstr(fs.item[0].detail, "2 router shift"));
    /* symbol priority note */
    struct vw_eep_route_enc r = {.kind = VW_EEP_ROUTE_SYMBOL, .priority = 3, .data_len = 0};
    vw_eep_enc_init(&e, 5, 0, 1, NULL, 0);
    e.routes = &r;
    e.n_routes = 1;
    n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(n, 8 + 24);
    assert_int_equal(decode_exact(b, n, &m, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_5B_SYMBOL_PRIORITY));
}

static void test_decode_errors_name_rules(void **state)
{
    (void)state;
    struct vw_eep_msg m;
    struct vw_findings fs;
    uint8_t b[256];
    struct vw_eep_enc e;
    vw_eep_enc_init(&e, 5, 0, 1, payload, 8);
    size_t n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(n, 32);
    /* truncated */
    assert_int_equal(decode_exact(b, 23, &m, &fs), VW_REQ_EEP_4A_TRUNCATED);
    assert_int_equal(decode_exact(b, 0, &m, &fs), VW_REQ_EEP_4A_TRUNCATED);
    assert_int_equal(decode_exact(b, 1, &m, &fs), VW_REQ_EEP_4A_TRUNCATED);
    /* 31 bytes where the header asks for 32: the message itself is not
     * whole words (issue 22), a whole-word one with DL past the end is DL-FITS */
    assert_int_equal(decode_exact(b, 31, &m, &fs), VW_REQ_EEP_1B_8B_WORDS);
    assert_int_equal(decode_exact(b, 24, &m, &fs), VW_REQ_EEP_6H_DL_FITS);
    e.keep_lengths = true;
    e.hdr.dl = 5;
    n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(decode_exact(b, n, &m, &fs), VW_REQ_EEP_6H_DL_FITS);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_6H_DL_FITS));
    /* L2RH and symbol records running past the message */
    struct vw_eep_route_enc r = {.kind = VW_EEP_ROUTE_L2RH, .data = sr, .data_len = 13};
    vw_eep_enc_init(&e, 5, 0, 1, NULL, 0);
    e.routes = &r;
    e.n_routes = 1;
    n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(decode_exact(b, 15, &m, &fs), VW_REQ_EEP_5A_L2RH_LEN);
    r.kind = VW_EEP_ROUTE_SYMBOL;
    r.data_len = 9;
    n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(decode_exact(b, 12, &m, &fs), VW_REQ_EEP_5B_SYMBOL_LEN);
    assert_int_equal(decode_exact(b, 4, &m, &fs), VW_REQ_EEP_5B_SYMBOL_LEN);
    /* OH chain without C=1, and h set with no OH at all */
    struct vw_eep_oh_enc oh[2] = {{.type = 1, .data = ohd, .data_len = 4},
                                  {.type = 2, .data = ohd, .data_len = 2}};
    vw_eep_enc_init(&e, 5, 0, 1, NULL, 0);
    e.oh = oh;
    e.n_oh = 2;
    e.keep_c = true;
    n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(n, 16 + 16 + 8);
    assert_int_equal(decode_exact(b, n, &m, &fs), VW_REQ_EEP_7_OH_FORMAT);
    e.keep_c = false;
    n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(decode_exact(b, n, &m, &fs), VW_REQ_NONE);
    assert_int_equal(m.n_oh, 2);
    assert_int_equal(fs.count, 0);
    vw_eep_enc_init(&e, 5, 0, 1, NULL, 0);
    e.keep_h = true;
    e.hdr.h = true;
    n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(decode_exact(b, n, &m, &fs), VW_REQ_EEP_7_OH_FORMAT);
    /* trailer bytes not whole words (with OH) */
    static const uint8_t ot[5] = {1, 2, 3, 4, 5};
    vw_eep_enc_init(&e, 5, 0, 1, NULL, 0);
    e.oh = oh;
    e.n_oh = 1;
    e.ot = ot;
    e.ot_len = 5;
    n = vw_eep_encode(&e, b, sizeof b);
    /* over UDP the datagram is the message: not whole words, said once */
    vw_findings_clear(&fs);
    assert_int_equal(vw_eep_decode_on(b, n, VW_EEP_CARRIER_DATAGRAM, &m, &fs), VW_REQ_EEP_1B_8B_WORDS);
    assert_int_equal(fs.count, 1);
    /* over a link, bytes after the last whole word are padding (a trailer is
     * whole words), so the TAIL is the last whole word of the frame */
    assert_int_equal(decode_exact(b, n, &m, &fs), VW_REQ_NONE);
    assert_false(vw_findings_has(&fs, VW_REQ_EEP_1B_8B_WORDS));
    assert_int_equal(m.link_padding, 5);
    assert_int_equal(m.msg_len, n - 5);
    /* oversized lengths are refused by the encoder */
    struct vw_eep_route_enc big = {.kind = VW_EEP_ROUTE_L2RH, .data = payload, .data_len = 64};
    vw_eep_enc_init(&e, 5, 0, 1, NULL, 0);
    e.routes = &big;
    e.n_routes = 1;
    assert_int_equal(vw_eep_encode(&e, b, sizeof b), 0);
    vw_eep_enc_init(&e, 5, 0, 1, payload, 8);
    assert_int_equal(vw_eep_encode(&e, b, 31), 0);
}

static void test_link_padding(void **state)
{
    (void)state;
    uint8_t b[64] = {0};
    struct vw_eep_enc e;
    vw_eep_enc_init(&e, 5, 0, 1, NULL, 0);
    size_t n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(n, 24);
    struct vw_eep_msg m;
    struct vw_findings fs;
    /* Ethernet pads a 24-byte message (P1): zeros after the TAIL are a note */
    assert_int_equal(decode_exact(b, 46, &m, &fs), VW_REQ_NONE);
    assert_int_equal(m.msg_len, 24);
    assert_int_equal(m.link_padding, 22);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_P1_CARRIAGE));
    assert_int_equal(fs.item[0].severity, VW_SEV_NOTE);
    b[40] = 7;
    assert_int_equal(decode_exact(b, 46, &m, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_9_OT_NEEDS_OH));

    /* With optional header fields (h=1) the TAIL is the message's last word;
     * a frame padded to Ethernet's minimum must not have its EI read from
     * the padding, nor its padding called broken words (issue 22). */
    static const uint8_t ohd[4] = {1, 2, 3, 4};
    struct vw_eep_oh_enc oh = {.type = 0x15, .data = ohd, .data_len = 4};
    uint8_t p[64] = {0};
    vw_eep_enc_init(&e, 5, 0, 1, NULL, 0);
    e.oh = &oh;
    e.n_oh = 1;
    e.ei = 0x3;
    n = vw_eep_encode(&e, p, sizeof p);
    assert_int_equal(n, 32); /* header, one OH word, TAIL */
    assert_int_equal(decode_exact(p, 46, &m, &fs), VW_REQ_NONE);
    assert_false(vw_findings_has(&fs, VW_REQ_EEP_1B_8B_WORDS));
    assert_int_equal(m.tail_offset, 24);
    assert_int_equal(m.ei, 0x3);
    assert_int_equal(m.link_padding, 14);
    /* a frame over the minimum: bytes after the last whole word are padding */
    assert_int_equal(decode_exact(p, 37, &m, &fs), VW_REQ_NONE);
    assert_false(vw_findings_has(&fs, VW_REQ_EEP_1B_8B_WORDS));
    assert_int_equal(m.link_padding, 5);
    assert_int_equal(m.ei, 0x3);
}

/* Over UDP the datagram is the message: the TAIL is its last word even
 * without optional header fields, and a word before it is a trailer
 * without OH (not the TAIL followed by padding, as on a link). */
static void test_datagram_carrier(void **state)
{
    (void)state;
    uint8_t b[64];
    struct vw_eep_enc e;
    vw_eep_enc_init(&e, 0x000123, 0x000042, 0x0001, (const uint8_t *)"data", 4);
    e.ot = (const uint8_t *)"TRAILER!";
    e.ot_len = 8;
    e.ei = 0x5;
    size_t n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(n, 40); /* header, one data word, the trailer word, TAIL */
    struct vw_eep_msg m;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    assert_int_equal(vw_eep_decode_on(b, n, VW_EEP_CARRIER_DATAGRAM, &m, &fs), VW_REQ_NONE);
    assert_int_equal(m.tail_offset, 32);
    assert_int_equal(m.ei, 0x5);
    assert_int_equal(m.ot_len, 8);
    assert_int_equal(m.link_padding, 0);
    /* P30: with h=0 the trailer word is a data word DL did not count (the
     * DL rule, an error); the trailer reading is the symptom's note */
    assert_int_equal(fs.count, 3);
    assert_int_equal(fs.item[0].req, VW_REQ_EEP_6H_DL_FITS);
    assert_int_equal(fs.item[0].severity, VW_SEV_ERROR);
    assert_int_equal(fs.item[1].req, VW_REQ_EEP_9_OT_NEEDS_OH);
    assert_int_equal(fs.item[1].severity, VW_SEV_NOTE);
    assert_int_equal(fs.item[2].req, VW_REQ_EEP_10_EI_ERROR);
    /* OH fields written with h=0 (DL counting the data only): the H rule */
    static const uint8_t oh_h0[40] = {
        0, 0, 0x01, 0x23, 0, 0, 0, 0x01, 0, 0, 0, 1, 0, 0, 0, 0x42,   /* header: DL 1, h=0 */
        0x45, 3, 'a', 'b', 'c', 0, 0, 0,                               /* OH type 5, C=1, L=3 */
        'd', 'a', 't', 'a', 0, 0, 0, 0,                                /* the data word */
        0, 0, 0, 0, 0, 0, 0, 0};                                       /* TAIL */
    vw_findings_clear(&fs);
    assert_int_equal(vw_eep_decode_on(oh_h0, sizeof oh_h0, VW_EEP_CARRIER_DATAGRAM, &m, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_6I_H_FLAG));
    assert_false(vw_findings_has(&fs, VW_REQ_EEP_6H_DL_FITS));
    /* the same bytes on a link: the TAIL follows the data block */
    assert_int_equal(decode_exact(b, n, &m, &fs), VW_REQ_NONE);
    assert_int_equal(m.tail_offset, 24);
    assert_int_equal(m.link_padding, 8);
    /* a well-formed datagram has no finding */
    vw_eep_enc_init(&e, 0x000123, 0x000042, 0x0001, (const uint8_t *)"data", 4);
    n = vw_eep_encode(&e, b, sizeof b);
    vw_findings_clear(&fs);
    assert_int_equal(vw_eep_decode_on(b, n, VW_EEP_CARRIER_DATAGRAM, &m, &fs), VW_REQ_NONE);
    assert_int_equal(fs.count, 0);
    assert_int_equal(m.tail_offset, 24);
    assert_int_equal(m.msg_len, 32);
}

/* What a display notes: records left, local-only addresses, unknown PT,
 * non-zero padding; nothing for a plain message. */
static void test_display_notes(void **state)
{
    (void)state;
    uint8_t b[256];
    struct vw_eep_enc e;
    struct vw_eep_route_enc routes[2];
    struct vw_eep_oh_enc oh[1];
    size_t n = full_message(b, sizeof b, &e, routes, oh);
    struct vw_eep_msg m;
    struct vw_findings fs;
    assert_int_equal(decode_exact(b, n, &m, &fs), VW_REQ_NONE);
    uint8_t *d = malloc(n);
    assert_non_null(d);
    memcpy(d, b, n);
    assert_int_equal(vw_eep_decode(d, n, &m, NULL), VW_REQ_NONE);
    vw_findings_clear(&fs);
    vw_eep_notes(d, &m, NULL, &fs);
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_EEP_4B_ROUTES_CONSUMED);
    assert_string_equal(fs.item[0].detail, "2 L2RH/symbol record(s) not yet consumed");
    /* padding of the L2RH (bytes 15) and of the data block made non-zero */
    d[15] = 0xEE;
    d[m.db_offset + m.db_len - 1] = 0x01;
    vw_findings_clear(&fs);
    vw_eep_notes(d, &m, NULL, &fs);
    assert_int_equal(fs.count, 3);
    assert_int_equal(fs.item[1].req, VW_REQ_EEP_3_PADDING_UNCHECKED);
    assert_int_equal(fs.item[1].offset, 15);
    assert_int_equal(fs.item[2].req, VW_REQ_EEP_3_PADDING_UNCHECKED);
    assert_int_equal(fs.item[2].offset, m.db_offset + m.data_len);
    free(d);

    /* Hey-You! with an unknown packet type; a configured enumeration knows it */
    vw_eep_enc_init(&e, VW_EEP_ADDR_HEY_YOU, 0x000042, 0x4242, NULL, 0);
    n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(vw_eep_decode(b, n, &m, NULL), VW_REQ_NONE);
    vw_findings_clear(&fs);
    vw_eep_notes(b, &m, NULL, &fs);
    assert_int_equal(fs.count, 2);
    assert_int_equal(fs.item[0].req, VW_REQ_EEP_6C_LOCAL_ONLY);
    assert_non_null(strstr(fs.item[0].detail, "Hey-You!"));
    assert_int_equal(fs.item[1].req, VW_REQ_EEP_6E_PT_KNOWN);
    assert_string_equal(fs.item[1].detail, "Packet type 0x4242 is not in the project's enumeration (P8)");
    struct vw_eep_types t = vw_eep_types_default;
    t.pt_rrp = 0x4242;
    vw_findings_clear(&fs);
    vw_eep_notes(b, &m, &t, &fs);
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_EEP_6C_LOCAL_ONLY);
}

static void test_names_and_tail(void **state)
{
    (void)state;
    assert_int_equal(vw_eep_dt_kind(0x7FFFFF), VW_EEP_DT_PHYSICAL);
    assert_int_equal(vw_eep_dt_kind(0x800000), VW_EEP_DT_L2RH);
    assert_int_equal(vw_eep_dt_kind(0xBFFFFF), VW_EEP_DT_L2RH);
    assert_int_equal(vw_eep_dt_kind(0xC00000), VW_EEP_DT_RESERVED);
    assert_int_equal(vw_eep_dt_kind(0xDFFFFF), VW_EEP_DT_RESERVED);
    assert_int_equal(vw_eep_dt_kind(0xE12345), VW_EEP_DT_LOGICAL);
    assert_int_equal(vw_eep_dt_kind(0xF00001), VW_EEP_DT_SYMBOL);
    assert_int_equal(vw_eep_dt_value(0xE12345), 0x12345);
    assert_int_equal(vw_eep_dt_value(0x7FFFFE), 0x7FFFFE);
    assert_string_equal(vw_eep_dt_kind_name(VW_EEP_DT_LOGICAL), "Logical");
    assert_string_equal(vw_eep_dt_kind_name(VW_EEP_DT_RESERVED), "Reserved");
    assert_string_equal(vw_eep_reserved_addr_name(0x7FFFFE), "Hey-You");
    assert_string_equal(vw_eep_reserved_addr_name(0x7FFFFF), "Broadcast");
    assert_string_equal(vw_eep_reserved_addr_name(0), "Undefined");
    assert_null(vw_eep_reserved_addr_name(0x42));
    assert_string_equal(vw_eep_pt_name(NULL, 0x0001), "RRP");
    assert_string_equal(vw_eep_pt_name(NULL, 0x0002), "ERR");
    assert_string_equal(vw_eep_pt_name(NULL, 0x0800), "IPv4");
    assert_string_equal(vw_eep_pt_name(NULL, 0x86DD), "IPv6");
    assert_string_equal(vw_eep_pt_name(NULL, 0x1234), "Unknown");
    struct vw_eep_types t = vw_eep_types_default;
    t.pt_err = 0x0300;
    assert_string_equal(vw_eep_pt_name(&t, 0x0300), "ERR");
    assert_string_equal(vw_eep_te_name(&t, 0x0300, 3), "Unknown mandatory optional header");
    assert_string_equal(vw_eep_te_name(NULL, 2, 1), "Destination Unknown (UNK)");
    assert_string_equal(vw_eep_te_name(NULL, 2, 2), "Message too long for path MTU");
    assert_null(vw_eep_te_name(NULL, 1, 1));
    assert_null(vw_eep_te_name(NULL, 2, 9));
    assert_string_equal(vw_eep_endian_name(0x8), "Little-Endian");
    assert_string_equal(vw_eep_endian_name(0x7), "Big-Endian");
    assert_string_equal(vw_eep_route_kind_name(VW_EEP_ROUTE_SYMBOL), "Symbol");
    /* P6: shift per router, LSbit on error, no shift once the MSbit is set */
    assert_true(vw_eep_tail_forward(0, false) == 0);
    assert_true(vw_eep_tail_forward(0, true) == 1);
    assert_true(vw_eep_tail_forward(1, false) == 2);
    assert_true(vw_eep_tail_forward(3, true) == 7);
    assert_true(vw_eep_tail_forward(0x8000000000000000ull, false) == 0x8000000000000000ull);
    assert_true(vw_eep_tail_forward(0x8000000000000000ull, true) == 0x8000000000000001ull);
}

/* EEP-4B-LEADING-RECORD: bits 9-10 = 0b10 start an L2RH, bits 9-12 = 0b1111
 * a symbol, anything else the EEP header (so a header's DT is never 10xx
 * or 1111). */
static void test_leading_record_bits(void **state)
{
    (void)state;
    for (unsigned b1 = 0; b1 < 256; b1++) {
        const uint8_t two[2] = {0x00, (uint8_t)b1};
        enum vw_eep_route_kind kind = VW_EEP_ROUTE_SYMBOL;
        int is_record = vw_eep_record_kind(two, 2, &kind);
        if ((b1 & 0xC0u) == 0x80u) {
            assert_int_equal(is_record, 1);
            assert_int_equal(kind, VW_EEP_ROUTE_L2RH);
        } else if ((b1 & 0xF0u) == 0xF0u) {
            assert_int_equal(is_record, 1);
            assert_int_equal(kind, VW_EEP_ROUTE_SYMBOL);
        } else {
            assert_int_equal(is_record, 0);
        }
    }
    const uint8_t one[1] = {0x80};
    enum vw_eep_route_kind kind;
    assert_int_equal(vw_eep_record_kind(one, 1, &kind), 0);
}

/* EEP-3-LENGTHS-EXCLUDE-THEMSELVES, EEP-5B-SYMBOLS-MIXED, EEP-6K-SA-OPTIONAL:
 * records and OH fields with L = 0 take one word, DL = 0 has no data block,
 * symbols may sit between L2RHs, SA 0 is allowed; none of it is a finding. */
static void test_zero_lengths_mixed_records_sa_zero(void **state)
{
    (void)state;
    /* L2RH L=0 | symbol L=0 | L2RH L=1 | header (h, DL 0, SA 0) | OH L=0, C=1 | TAIL */
    const uint8_t msg[] = {
        0x00, 0x80, 0, 0, 0, 0, 0, 0,
        0x00, 0xF1, 0x23, 0x45, 0x00, 0, 0, 0,
        0x00, 0x81, 0x77, 0, 0, 0, 0, 0,
        0x00, 0x00, 0x01, 0x23, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00,
        0x45, 0x00, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0,
    };
    struct vw_eep_msg m;
    struct vw_findings fs;
    assert_int_equal(decode_exact(msg, sizeof msg, &m, &fs), VW_REQ_NONE);
    assert_int_equal(fs.count, 0);
    assert_int_equal(m.n_l2rh, 2);
    assert_int_equal(m.n_symbols, 1);
    assert_int_equal(m.routes_len, 24);
    assert_int_equal(m.hdr_offset, 24);
    assert_int_equal(m.hdr.sa, 0);
    assert_int_equal(m.n_oh, 1);
    assert_int_equal(m.oh_len, 8);
    assert_int_equal(m.db_len, 0);
    assert_int_equal(m.tail_offset, sizeof msg - 8);
    assert_int_equal(m.msg_len, sizeof msg);
}

/* EEP-6E-ERR-TE: an ERR's TE names an error of the enumeration (P8). */
static void test_err_type_extension(void **state)
{
    (void)state;
    struct vw_eep_enc e;
    struct vw_eep_msg m;
    struct vw_findings fs;
    uint8_t b[64];
    vw_eep_enc_init(&e, 0x000042, 0x000007, 0x0002, NULL, 0);
    e.hdr.te = 0x0001; /* Destination Unknown */
    size_t n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(vw_eep_decode(b, n, &m, NULL), VW_REQ_NONE);
    vw_findings_clear(&fs);
    vw_eep_notes(b, &m, NULL, &fs);
    assert_int_equal(fs.count, 0);

    e.hdr.te = 0x0009;
    n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(vw_eep_decode(b, n, &m, NULL), VW_REQ_NONE);
    vw_findings_clear(&fs);
    vw_eep_notes(b, &m, NULL, &fs);
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_EEP_6E_ERR_TE);
    assert_int_equal(fs.item[0].severity, VW_SEV_NOTE);
    assert_int_equal(fs.item[0].offset, 4);
    assert_string_equal(fs.item[0].detail,
                        "ERR with type extension 0x0009, which names no error of the project's enumeration (P8)");
    struct vw_eep_types t = vw_eep_types_default;
    t.te_err_unknown_oh = 0x0009; /* a configured enumeration knows it */
    vw_findings_clear(&fs);
    vw_eep_notes(b, &m, &t, &fs);
    assert_int_equal(fs.count, 0);

    e.hdr.pt = 0x0800; /* TE 9 of another type is that type's business */
    n = vw_eep_encode(&e, b, sizeof b);
    assert_int_equal(vw_eep_decode(b, n, &m, NULL), VW_REQ_NONE);
    vw_findings_clear(&fs);
    vw_eep_notes(b, &m, NULL, &fs);
    assert_int_equal(fs.count, 0);
}

/* Router copies: what comes in is a symbol, two L2RHs, the header, 13 data
 * bytes and EI 1; the right copy lacks the symbol and the first L2RH and
 * has EI 2. */
static const uint8_t r1[3] = {0x11, 0x12, 0x13}, r2[6] = {0x21, 0x22, 0x23, 0x24, 0x25, 0x26};

static size_t router_message(uint8_t *buf, size_t cap, bool consumed, uint64_t ei, struct vw_eep_msg *m)
{
    struct vw_eep_route_enc routes[3] = {
        {.kind = VW_EEP_ROUTE_SYMBOL, .symbol_type = 0x12345, .data = sym, .data_len = 2},
        {.kind = VW_EEP_ROUTE_L2RH, .data = r1, .data_len = 3},
        {.kind = VW_EEP_ROUTE_L2RH, .data = r2, .data_len = 6},
    };
    struct vw_eep_enc e;
    vw_eep_enc_init(&e, 0x000123, 0x000042, 0x0800, payload, sizeof payload);
    e.routes = consumed ? routes + 2 : routes;
    e.n_routes = consumed ? 1 : 3;
    e.ei = ei;
    size_t n = vw_eep_encode(&e, buf, cap);
    assert_int_equal(vw_eep_decode(buf, n, m, NULL), VW_REQ_NONE);
    return n;
}

static void forward_check_finds(const uint8_t *in_buf, const struct vw_eep_msg *in, const uint8_t *out_buf,
                                const struct vw_eep_msg *out, enum vw_eep_link_state link, bool ok,
                                enum vw_req req)
{
    struct vw_findings fs;
    vw_findings_clear(&fs);
    assert_int_equal(vw_eep_forward_check(in_buf, in, out_buf, out, link, &fs), ok);
    if (req == VW_REQ_NONE) {
        assert_int_equal(fs.count, 0);
    } else {
        assert_int_equal(fs.count, 1);
        assert_int_equal(fs.item[0].req, req);
    }
}

static void test_forward_check(void **state)
{
    (void)state;
    uint8_t in_buf[128], out_buf[128];
    struct vw_eep_msg in, out;
    router_message(in_buf, sizeof in_buf, false, 1, &in);
    assert_int_equal(in.routes_len, 8 + 8 + 8);
    size_t n = router_message(out_buf, sizeof out_buf, true, 2, &out);
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_CLEAN, true, VW_REQ_NONE);
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_UNKNOWN, true, VW_REQ_NONE);

    /* EEP-10-EI-ERROR-LSBIT: a damaged link wants the LSbit after the shift */
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_DAMAGED, false, VW_REQ_EEP_10_EI_ERROR_LSBIT);
    router_message(out_buf, sizeof out_buf, true, 3, &out);
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_DAMAGED, true, VW_REQ_NONE);
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_UNKNOWN, true, VW_REQ_NONE);
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_CLEAN, false, VW_REQ_EEP_10_EI_ERROR_LSBIT);
    /* EEP-10-EI-SHIFT: not shifted; with the MSbit set it must not be */
    router_message(out_buf, sizeof out_buf, true, 1, &out);
    struct vw_findings fs;
    vw_findings_clear(&fs);
    assert_false(vw_eep_forward_check(in_buf, &in, out_buf, &out, VW_EEP_LINK_CLEAN, &fs));
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_EEP_10_EI_SHIFT);
    assert_string_equal(fs.item[0].detail, "forwarded EI 0x0000000000000001 from 0x0000000000000001, "
                                           "expected 0x0000000000000002 (no error on the link)");
    router_message(in_buf, sizeof in_buf, false, 0x8000000000000000ull, &in);
    router_message(out_buf, sizeof out_buf, true, 0x8000000000000000ull, &out);
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_CLEAN, true, VW_REQ_NONE);
    router_message(out_buf, sizeof out_buf, true, 0, &out);
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_CLEAN, false, VW_REQ_EEP_10_EI_SHIFT);

    /* EEP-8-DB-UNMODIFIED and EEP-4B-ONLY-TAIL-MODIFIED: one byte changed */
    router_message(in_buf, sizeof in_buf, false, 0, &in);
    n = router_message(out_buf, sizeof out_buf, true, 0, &out);
    out_buf[out.db_offset + 3] ^= 0x20;
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_CLEAN, false, VW_REQ_EEP_8_DB_UNMODIFIED);
    out_buf[out.db_offset + 3] ^= 0x20;
    out_buf[out.hdr_offset] = 0x3F; /* priority */
    vw_findings_clear(&fs);
    assert_false(vw_eep_forward_check(in_buf, &in, out_buf, &out, VW_EEP_LINK_CLEAN, &fs));
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_EEP_4B_ONLY_TAIL_MODIFIED);
    assert_string_equal(fs.item[0].detail,
                        "EEP header changed by the router (byte 0 of 32, 32 forwarded): only the TAIL may change");
    out_buf[out.hdr_offset] = 0x00;
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_CLEAN, true, VW_REQ_NONE);
    /* a trailer word added between the data block and the TAIL */
    uint8_t longer[136];
    memcpy(longer, out_buf, out.tail_offset);
    memset(longer + out.tail_offset, 0xAB, 8);
    memcpy(longer + out.tail_offset + 8, out_buf + out.tail_offset, 8);
    struct vw_eep_msg lm;
    assert_int_equal(vw_eep_decode_on(longer, n + 8, VW_EEP_CARRIER_DATAGRAM, &lm, NULL), VW_REQ_NONE);
    forward_check_finds(in_buf, &in, longer, &lm, VW_EEP_LINK_CLEAN, false, VW_REQ_EEP_4B_ONLY_TAIL_MODIFIED);

    /* EEP-5-HR-CONSUMES-L2RH: the records forwarded whole */
    router_message(out_buf, sizeof out_buf, false, 0, &out);
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_CLEAN, false, VW_REQ_EEP_5_HR_CONSUMES_L2RH);
    /* ... or the remaining L2RH changed */
    router_message(out_buf, sizeof out_buf, true, 0, &out);
    out_buf[3] ^= 1;
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_CLEAN, false, VW_REQ_EEP_5_HR_CONSUMES_L2RH);
    /* a record the router put in front (1c) is only noted */
    uint8_t prefixed[136];
    const uint8_t own_l2rh[8] = {0x00, 0x82, 0x99, 0x98, 0, 0, 0, 0};
    n = router_message(out_buf, sizeof out_buf, true, 0, &out);
    memcpy(prefixed, own_l2rh, 8);
    memcpy(prefixed + 8, out_buf, n);
    struct vw_eep_msg pm;
    assert_int_equal(vw_eep_decode(prefixed, n + 8, &pm, NULL), VW_REQ_NONE);
    forward_check_finds(in_buf, &in, prefixed, &pm, VW_EEP_LINK_CLEAN, true, VW_REQ_EEP_1C_L3_PREFIX);

    /* EEP-5-SYMBOL-CONSUMED: a leading symbol without an L2RH after it */
    struct vw_eep_route_enc lone = {.kind = VW_EEP_ROUTE_SYMBOL, .symbol_type = 7, .data = sym, .data_len = 3};
    struct vw_eep_enc e;
    vw_eep_enc_init(&e, 0x000123, 0x000042, 0x0800, payload, sizeof payload);
    e.routes = &lone;
    e.n_routes = 1;
    n = vw_eep_encode(&e, in_buf, sizeof in_buf);
    assert_int_equal(vw_eep_decode(in_buf, n, &in, NULL), VW_REQ_NONE);
    memcpy(out_buf, in_buf, n); /* forwarded with the symbol */
    assert_int_equal(vw_eep_decode(out_buf, n, &out, NULL), VW_REQ_NONE);
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_CLEAN, false, VW_REQ_EEP_5_SYMBOL_CONSUMED);
    e.n_routes = 0;
    n = vw_eep_encode(&e, out_buf, sizeof out_buf);
    assert_int_equal(vw_eep_decode(out_buf, n, &out, NULL), VW_REQ_NONE);
    forward_check_finds(in_buf, &in, out_buf, &out, VW_EEP_LINK_CLEAN, true, VW_REQ_NONE);
}

static void test_garbage_never_overreads(void **state)
{
    (void)state;
    srand(4242);
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)(rand() % 200);
        uint8_t tmp[200];
        for (size_t i = 0; i < n; i++)
            tmp[i] = (uint8_t)rand();
        if (round & 1) /* small DL half the time, so decoding goes further */
            for (size_t i = 8; i + 4 < n; i += 8)
                tmp[i] &= 0xF0, tmp[i + 1] = 0, tmp[i + 2] = 0;
        struct vw_eep_msg m;
        struct vw_findings fs;
        (void)decode_exact(tmp, n, &m, &fs);
    }
    /* the router check on pairs of garbage messages that did decode */
    static uint8_t prev[200];
    struct vw_eep_msg prev_m;
    bool have_prev = false;
    unsigned pairs = 0;
    for (int round = 0; round < 4000; round++) {
        size_t n = 24 + (size_t)(rand() % 176);
        uint8_t tmp[200];
        for (size_t i = 0; i < n; i++)
            tmp[i] = (uint8_t)rand();
        for (size_t i = 8; i + 4 < n; i += 8) /* small DL, no OH: most of these decode */
            tmp[i] &= 0xF0, tmp[i + 1] = 0, tmp[i + 2] = 0, tmp[i + 4] &= 0x7F;
        uint8_t *d = malloc(n);
        assert_non_null(d);
        memcpy(d, tmp, n);
        struct vw_eep_msg m;
        struct vw_findings fs;
        if (vw_eep_decode(d, n, &m, NULL) == VW_REQ_NONE) {
            if (have_prev) {
                vw_findings_clear(&fs);
                (void)vw_eep_forward_check(prev, &prev_m, d, &m, (enum vw_eep_link_state)(round % 3), &fs);
                (void)vw_eep_forward_check(d, &m, prev, &prev_m, VW_EEP_LINK_UNKNOWN, &fs);
                pairs++;
            }
            memcpy(prev, d, n);
            assert_int_equal(vw_eep_decode(prev, n, &prev_m, NULL), VW_REQ_NONE);
            have_prev = true;
        }
        free(d);
    }
    assert_true(pairs > 100);
}

/* Issue 22: a message that is not whole words is said under its own rule
 * over a link too, when the frame ends inside the message its header
 * sizes; bytes after the message shorter than a word are link padding. */
static void test_link_message_not_whole_words(void **state)
{
    (void)state;
    struct vw_eep_msg m;
    struct vw_findings fs;
    /* 16-byte header, DL 1 PL 3 but only 5 data bytes written, TAIL: 29 bytes. */
    uint8_t b[29] = {0x00, 0x00, 0x02, 0x07, 0x00, 0x00, 0x08, 0x00, 0x06, 0x00, 0x00, 0x01,
                     0x00, 0x00, 0x01, 0x02, 'a', 'b', 'c', 'd', 'e', 0, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(decode_exact(b, sizeof b, &m, &fs), VW_REQ_EEP_1B_8B_WORDS);
    assert_int_equal(fs.count, 1);
    assert_false(vw_findings_has(&fs, VW_REQ_EEP_6H_DL_FITS));
    /* A whole-word message whose DL does not fit is still DL-FITS. */
    assert_int_equal(decode_exact(b, 24, &m, &fs), VW_REQ_EEP_6H_DL_FITS);
    /* DL 0: 24 bytes of message, then 5 bytes that cannot be a trailer word. */
    uint8_t c[29];
    memcpy(c, b, sizeof c);
    c[8] = c[9] = c[10] = c[11] = 0;
    memset(c + 24, 0xEE, 5);
    assert_int_equal(decode_exact(c, sizeof c, &m, &fs), VW_REQ_NONE);
    assert_int_equal(m.msg_len, 24);
    assert_int_equal(m.link_padding, 5);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_P1_CARRIAGE));
    assert_false(vw_findings_has(&fs, VW_REQ_EEP_9_OT_NEEDS_OH));
    /* A whole non-zero word after it is not padding. */
    uint8_t d[32];
    memcpy(d, c, 24);
    memset(d + 24, 0xEE, 8);
    assert_int_equal(decode_exact(d, sizeof d, &m, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_9_OT_NEEDS_OH));
}

/* An unpadded L2RH (15 bytes for L = 13) and a symbol padded by the
 * draft's "-2-L" (3 bytes more than P4): one finding under the record's
 * rule, none for the header read at the wrong offset (P12). */
static void test_misaligned_records(void **state)
{
    (void)state;
    uint8_t good[256], bad[256];
    struct vw_eep_route_enc r = {.kind = VW_EEP_ROUTE_L2RH, .data = sr, .data_len = 13};
    struct vw_eep_enc e;
    vw_eep_enc_init(&e, 0x000207, 0x000102, 0x0800, payload, sizeof payload);
    e.routes = &r;
    e.n_routes = 1;
    size_t n = vw_eep_encode(&e, good, sizeof good);
    assert_int_equal(n, 16 + 16 + 16 + 8);
    struct vw_eep_msg m;
    struct vw_findings fs;
    for (int carrier = 0; carrier < 2; carrier++) {
        /* drop the L2RH's padding byte */
        memcpy(bad, good, 15);
        memcpy(bad + 15, good + 16, n - 16);
        vw_findings_clear(&fs);
        assert_int_equal(vw_eep_decode_on(bad, n - 1, (enum vw_eep_carrier)carrier, &m, &fs),
                         VW_REQ_EEP_5A_L2RH_LEN);
        assert_int_equal(fs.count, 1);
        assert_int_equal(fs.item[0].offset, 0);
        assert_int_equal(m.routes_len, 0);
        assert_non_null(strstr(fs.item[0].detail, "is 15 bytes, not 16"));
    }
    /* symbol L = 4: P4 says 16 bytes; the draft's padding makes 19 */
    struct vw_eep_route_enc rs[2] = {
        {.kind = VW_EEP_ROUTE_L2RH, .data = sr, .data_len = 6},
        {.kind = VW_EEP_ROUTE_SYMBOL, .symbol_type = 0x42, .data = sym, .data_len = 4}};
    e.routes = rs;
    e.n_routes = 2;
    n = vw_eep_encode(&e, good, sizeof good);
    assert_int_equal(n, 8 + 16 + 16 + 16 + 8);
    memcpy(bad, good, 24);
    memset(bad + 24, 0, 3);
    memcpy(bad + 27, good + 24, n - 24);
    for (int carrier = 0; carrier < 2; carrier++) {
        vw_findings_clear(&fs);
        assert_int_equal(vw_eep_decode_on(bad, n + 3, (enum vw_eep_carrier)carrier, &m, &fs),
                         VW_REQ_EEP_5B_SYMBOL_LEN);
        assert_int_equal(fs.count, 1);
        assert_int_equal(fs.item[0].offset, 8);
        assert_int_equal(m.routes_len, 8);
        assert_int_equal(m.n_l2rh, 1);
    }
    /* A well-framed message with a header fault is not blamed on its record. */
    e.hdr.rz = 0x11;
    n = vw_eep_encode(&e, good, sizeof good);
    vw_findings_clear(&fs);
    assert_int_equal(vw_eep_decode_on(good, n, VW_EEP_CARRIER_DATAGRAM, &m, &fs), VW_REQ_NONE);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_6J_RZ_ZERO));
    assert_false(vw_findings_has(&fs, VW_REQ_EEP_5B_SYMBOL_LEN));
}

static const uint8_t mac_a[6] = {2, 0, 0, 0, 0, 0xA}, mac_r[6] = {2, 0, 0, 0, 0, 0x1},
                     mac_b[6] = {2, 0, 0, 0, 0, 0xB}, mac_bc[6] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};

/* Offer one encoded message to the pairer from src to dst. */
static bool offer(struct vw_eep_pairer *p, uint64_t frame, const uint8_t *src, const uint8_t *dst,
                  const struct vw_eep_enc *e, uint64_t *first, struct vw_findings *fs)
{
    uint8_t buf[256];
    size_t n = vw_eep_encode(e, buf, sizeof buf);
    assert_true(n > 0);
    struct vw_eep_msg m;
    assert_int_equal(vw_eep_decode_on(buf, n, VW_EEP_CARRIER_LINK, &m, NULL), VW_REQ_NONE);
    struct vw_eep_hop hop;
    vw_eep_hop_set(&hop, src, dst, 6);
    vw_findings_clear(fs);
    return vw_eep_pairer_add(p, frame, &hop, VW_EEP_CARRIER_LINK, buf, &m, first, fs);
}

static void test_pairer(void **state)
{
    (void)state;
    struct vw_eep_pairer *p = vw_eep_pairer_new();
    assert_non_null(p);
    struct vw_eep_route_enc r = {.kind = VW_EEP_ROUTE_L2RH, .data = sr, .data_len = 3};
    struct vw_eep_enc in, out;
    vw_eep_enc_init(&in, 0x000207, 0x000102, 0x0800, payload, sizeof payload);
    in.routes = &r;
    in.n_routes = 1;
    in.ei = 0x5;
    out = in;
    out.routes = NULL;
    out.n_routes = 0;
    out.ei = 0xA; /* shifted */
    uint64_t first = 0;
    struct vw_findings fs;
    /* a right forward: paired, nothing to say */
    assert_false(offer(p, 1, mac_a, mac_r, &in, &first, &fs));
    assert_true(offer(p, 2, mac_r, mac_b, &out, &first, &fs));
    assert_int_equal(first, 1);
    assert_int_equal(fs.count, 0);
    /* the same frame seen twice is no hop */
    assert_false(offer(p, 3, mac_r, mac_b, &out, &first, &fs));
    /* not shifted */
    in.hdr.te = 1; out.hdr.te = 1;
    assert_false(offer(p, 4, mac_a, mac_r, &in, &first, &fs));
    out.ei = 0x5;
    assert_true(offer(p, 5, mac_r, mac_b, &out, &first, &fs));
    assert_int_equal(first, 4);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_10_EI_SHIFT));
    /* MSbit set: not shifted; shifting it is the fault */
    in.hdr.te = 2; out.hdr.te = 2;
    in.ei = 0x8000000000000000ull;
    out.ei = 0;
    assert_false(offer(p, 6, mac_a, mac_r, &in, &first, &fs));
    assert_true(offer(p, 7, mac_r, mac_b, &out, &first, &fs));
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_10_EI_SHIFT));
    /* a changed data block and a changed priority */
    static const uint8_t other[13] = "THIRTEEN BYTE";
    in.hdr.te = 3; out.hdr.te = 3;
    in.ei = out.ei = 0;
    assert_false(offer(p, 8, mac_a, mac_r, &in, &first, &fs));
    out.data = other;
    assert_true(offer(p, 9, mac_r, mac_b, &out, &first, &fs));
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_8_DB_UNMODIFIED));
    out.data = payload;
    in.hdr.te = 4; out.hdr.te = 4;
    assert_false(offer(p, 10, mac_a, mac_r, &in, &first, &fs));
    out.hdr.priority = 9;
    assert_true(offer(p, 11, mac_r, mac_b, &out, &first, &fs));
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_4B_ONLY_TAIL_MODIFIED));
    out.hdr.priority = 0;
    /* the L2RH not consumed */
    in.hdr.te = 5; out.hdr.te = 5;
    assert_false(offer(p, 12, mac_a, mac_r, &in, &first, &fs));
    out.routes = &r;
    out.n_routes = 1;
    assert_true(offer(p, 13, mac_r, mac_b, &out, &first, &fs));
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_5_HR_CONSUMES_L2RH));
    /* Broadcast forwarded (P7) */
    struct vw_eep_enc bc;
    vw_eep_enc_init(&bc, VW_EEP_ADDR_BROADCAST, 0x000102, 0x0800, payload, sizeof payload);
    assert_false(offer(p, 14, mac_a, mac_bc, &bc, &first, &fs));
    assert_true(offer(p, 15, mac_r, mac_b, &bc, &first, &fs));
    assert_int_equal(first, 14);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_6C_LOCAL_ONLY));
    /* a hop that is unknown never pairs */
    uint8_t buf[128];
    size_t n = vw_eep_encode(&in, buf, sizeof buf);
    struct vw_eep_msg m;
    assert_int_equal(vw_eep_decode(buf, n, &m, NULL), VW_REQ_NONE);
    struct vw_eep_hop unknown;
    vw_eep_hop_set(&unknown, mac_a, mac_r, 5);
    assert_int_equal(unknown.len, 0);
    assert_false(vw_eep_pairer_add(p, 16, &unknown, VW_EEP_CARRIER_LINK, buf, &m, &first, &fs));
    assert_false(vw_eep_pairer_add(p, 17, &unknown, VW_EEP_CARRIER_LINK, buf, &m, &first, &fs));
    /* more messages than the window: old ones go, nothing leaks */
    for (uint64_t f = 20; f < 20 + 3 * VW_EEP_PAIR_WINDOW; f++) {
        in.hdr.te = (uint16_t)f;
        assert_false(offer(p, f, mac_a, mac_r, &in, &first, &fs));
    }
    vw_eep_pairer_free(p);
    vw_eep_pairer_free(NULL);
}

/* P31: a router with an address per interface, a time window, named
 * router addresses, and address parsing. */
static bool offer_at(struct vw_eep_pairer *p, uint64_t frame, const uint8_t *src, const uint8_t *dst, uint64_t ts,
                     const struct vw_eep_enc *e, uint64_t *first, struct vw_findings *fs)
{
    uint8_t buf[256];
    size_t n = vw_eep_encode(e, buf, sizeof buf);
    assert_true(n > 0);
    struct vw_eep_msg m;
    assert_int_equal(vw_eep_decode_on(buf, n, VW_EEP_CARRIER_DATAGRAM, &m, NULL), VW_REQ_NONE);
    struct vw_eep_hop hop;
    vw_eep_hop_set(&hop, src, dst, 4);
    vw_eep_hop_set_time(&hop, ts);
    vw_findings_clear(fs);
    return vw_eep_pairer_add(p, frame, &hop, VW_EEP_CARRIER_DATAGRAM, buf, &m, first, fs);
}

static void test_pairer_router_addresses(void **state)
{
    (void)state;
    static const uint8_t a[4] = {127, 77, 0, 2}, r_in[4] = {127, 77, 0, 10}, r_out[4] = {127, 77, 0, 11},
                         b[4] = {127, 77, 0, 3}, c[4] = {127, 77, 0, 4};
    struct vw_eep_enc in, out;
    vw_eep_enc_init(&in, 0x000207, 0x000102, 0x0800, payload, sizeof payload);
    in.ei = 0x1;
    out = in;
    out.ei = 0x1; /* not shifted */
    uint64_t first = 0;
    struct vw_findings fs;
    struct vw_eep_pairer *p = vw_eep_pairer_new();
    assert_non_null(p);
    /* received on .10, forwarded from .11: paired by content, judged */
    assert_false(offer_at(p, 1, a, r_in, 1000, &in, &first, &fs));
    assert_true(offer_at(p, 2, r_out, b, 3000, &out, &first, &fs));
    assert_int_equal(first, 1);
    assert_true(vw_findings_has(&fs, VW_REQ_EEP_10_EI_SHIFT));
    /* more than a second later: another message, not a hop */
    in.hdr.te = 1; out.hdr.te = 1;
    assert_false(offer_at(p, 3, a, r_in, 10000000, &in, &first, &fs));
    assert_false(offer_at(p, 4, r_out, b, 11000001, &out, &first, &fs));
    /* the sender again, and a copy back to the sender: no hops */
    in.hdr.te = 2;
    assert_false(offer_at(p, 5, a, r_in, 20000000, &in, &first, &fs));
    out.hdr.te = 2;
    assert_false(offer_at(p, 6, a, b, 20000100, &out, &first, &fs));
    assert_false(offer_at(p, 7, r_out, a, 20000200, &out, &first, &fs));
    /* the same DT/SA/PT with another data block and another header: no hop */
    static const uint8_t other[13] = "THIRTEEN BYTE";
    out.data = other;
    out.hdr.te = 9;
    assert_false(offer_at(p, 8, r_out, b, 20000300, &out, &first, &fs));
    out.data = payload;
    vw_eep_pairer_free(p);

    /* named routers: a non-router's copy is not a hop, the router's is */
    p = vw_eep_pairer_new();
    char bad[32];
    assert_false(vw_eep_pairer_add_routers(p, "127.77.0.10, nonsense", bad, sizeof bad));
    assert_string_equal(bad, "nonsense");
    vw_eep_pairer_free(p);
    p = vw_eep_pairer_new();
    assert_true(vw_eep_pairer_add_routers(p, "127.77.0.10,127.77.0.11 02:00:00:00:00:10", bad, sizeof bad));
    in.hdr.te = out.hdr.te = 3;
    out.ei = 0x2;
    assert_false(offer_at(p, 1, a, r_in, 1000, &in, &first, &fs));
    assert_false(offer_at(p, 2, b, c, 2000, &in, &first, &fs)); /* b is no router */
    assert_true(offer_at(p, 3, r_out, b, 3000, &out, &first, &fs));
    assert_int_equal(first, 1);
    assert_int_equal(fs.count, 0);
    vw_eep_pairer_free(p);

    uint8_t addr[16];
    size_t len = 0;
    assert_true(vw_eep_addr_parse("02:00:00:00:00:1f", addr, &len));
    assert_int_equal(len, 6);
    assert_int_equal(addr[5], 0x1f);
    assert_true(vw_eep_addr_parse("fe80::1", addr, &len));
    assert_int_equal(len, 16);
    assert_false(vw_eep_addr_parse("10.0.0.300", addr, &len));
    assert_false(vw_eep_addr_parse("02:00:00:00:00:1f:", addr, &len));
    assert_false(vw_eep_addr_parse(NULL, addr, &len));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_draft_record_examples),
        cmocka_unit_test(test_full_message_round_trip),
        cmocka_unit_test(test_header_field_findings),
        cmocka_unit_test(test_decode_errors_name_rules),
        cmocka_unit_test(test_link_padding),
        cmocka_unit_test(test_datagram_carrier),
        cmocka_unit_test(test_display_notes),
        cmocka_unit_test(test_names_and_tail),
        cmocka_unit_test(test_leading_record_bits),
        cmocka_unit_test(test_zero_lengths_mixed_records_sa_zero),
        cmocka_unit_test(test_err_type_extension),
        cmocka_unit_test(test_forward_check),
        cmocka_unit_test(test_garbage_never_overreads),
        cmocka_unit_test(test_link_message_not_whole_words),
        cmocka_unit_test(test_misaligned_records),
        cmocka_unit_test(test_pairer),
        cmocka_unit_test(test_pairer_router_addresses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
