/* VI/TCP framer, connection checker and session: every split point of a
 * multi-segment stream, byte-by-byte feeding, framing errors and resync,
 * and each connection rule broken once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "vitcp/bytes.h"
#include "vitcp/vitcp_stream.h"

/* ---- building streams with the encoder */

struct stream {
    uint8_t bytes[2][8192];
    size_t len[2];
    int order[64]; /* direction of each segment, in sending order */
    size_t seg_end[64];
    unsigned nsegs;
};

static void put(struct stream *st, int dir, const struct vw_vitcp_enc *e)
{
    size_t n = vw_vitcp_encode(e, st->bytes[dir] + st->len[dir], sizeof st->bytes[dir] - st->len[dir]);
    assert_true(n > 0);
    st->len[dir] += n;
    st->order[st->nsegs] = dir;
    st->seg_end[st->nsegs] = st->len[dir];
    st->nsegs++;
}

static const uint8_t payload[3000] = {1, 2, 3, 4, 5};

/* A connection: request and accept with CRC (if crc), a two-segment Send with
 * immediate data, an RdmaWrite, a read answered in two segments interleaved
 * with a Send from the responder, a NOP, a Reliable Reception ACK. */
static void good_connection(struct stream *st, bool crc)
{
    memset(st, 0, sizeof *st);
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_REQUEST, crc);
    e.ce.attrs = VW_VITCP_ATTR_RELIABLE_RECEPTION | VW_VITCP_ATTR_RDMA_READ | VW_VITCP_ATTR_RDMA_WRITE;
    e.ce.rdma_read_window = 2;
    e.ce.mtu = 65536;
    e.ce.called_disc_len = 3;
    memcpy(e.ce.called_disc, "svc", 3);
    e.hdr.msg_num = 100;
    e.hdr.rx_desc_posted = 4;
    put(st, 0, &e);
    e.hdr.type = VW_VITCP_CONNECT_ACCEPT;
    e.hdr.msg_num = 900;
    e.hdr.msg_ack = 100;
    e.ce.mtu = 32768;
    put(st, 1, &e);

    /* Send 101 in two segments with immediate data */
    vw_vitcp_enc_init(&e, VW_VITCP_SEND, crc);
    e.hdr.msg_num = 101;
    e.hdr.flags = VW_VITCP_FLAG_IDV;
    e.hdr.imm_data = 0x11223344;
    e.hdr.rx_desc_posted = 4;
    e.payload = payload;
    e.payload_len = 1000;
    put(st, 0, &e);
    e.hdr.flags = VW_VITCP_FLAG_IDV | VW_VITCP_FLAG_EOM;
    e.hdr.data_offset = 1000;
    e.payload_len = 500;
    put(st, 0, &e);

    /* RdmaWrite 102, one segment */
    vw_vitcp_enc_init(&e, VW_VITCP_RDMA_WRITE, crc);
    e.hdr.msg_num = 102;
    e.hdr.rx_desc_posted = 4;
    e.rdma.addr = 0x1000;
    e.rdma.handle = 7;
    e.rdma.length = 200;
    e.payload = payload;
    e.payload_len = 200;
    put(st, 0, &e);

    /* RdmaReadRequest 103 for 600 bytes */
    vw_vitcp_enc_init(&e, VW_VITCP_RDMA_READ_REQ, crc);
    e.hdr.msg_num = 103;
    e.hdr.rx_desc_posted = 4;
    e.rdma.addr = 0x2000;
    e.rdma.handle = 8;
    e.rdma.length = 600;
    put(st, 0, &e);

    /* responder: first response half, a Send 901, second half */
    vw_vitcp_enc_init(&e, VW_VITCP_RDMA_READ_RESP, crc);
    e.hdr.msg_num = 103;
    e.hdr.flags = 0;
    e.hdr.msg_ack = 102;
    e.hdr.rx_desc_posted = 4;
    e.payload = payload;
    e.payload_len = 300;
    put(st, 1, &e);
    struct vw_vitcp_enc s;
    vw_vitcp_enc_init(&s, VW_VITCP_SEND, crc);
    s.hdr.msg_num = 901;
    s.hdr.msg_ack = 102;
    s.hdr.rx_desc_posted = 4;
    s.payload = payload;
    s.payload_len = 10;
    put(st, 1, &s);
    e.hdr.flags = VW_VITCP_FLAG_EOM;
    e.hdr.data_offset = 300;
    put(st, 1, &e);

    /* NOP from the requester: last message number 103 */
    vw_vitcp_enc_init(&e, VW_VITCP_NOP, crc);
    e.hdr.msg_num = 103;
    e.hdr.msg_ack = 901;
    e.hdr.rx_desc_posted = 5;
    put(st, 0, &e);
}

/* ---- collecting what the framer delivers */

struct seen {
    unsigned count;
    unsigned errors;      /* findings of severity error */
    unsigned fatal;
    uint8_t type[64];
    uint32_t offset[64];
    uint64_t stream_off[64];
    bool crc[64];
    struct vw_findings all;
};

static void collect(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_vitcp_seg *seg,
                    enum vw_req err, const struct vw_findings *f)
{
    (void)raw;
    (void)len;
    struct seen *s = ctx;
    if (err != VW_REQ_NONE)
        s->fatal++;
    if (s->count < 64) {
        s->type[s->count] = seg->hdr.type;
        s->offset[s->count] = seg->hdr.data_offset;
        s->stream_off[s->count] = off;
        s->crc[s->count] = seg->has_crc;
    }
    s->count++;
    for (unsigned i = 0; i < f->count; i++) {
        if (f->item[i].severity == VW_SEV_ERROR)
            s->errors++;
        if (s->all.count < VW_FINDINGS_MAX)
            s->all.item[s->all.count++] = f->item[i];
    }
}

/* Feed a session in sending order, each direction's bytes cut into chunks
 * at the given split size (0: whole segments). */
static void run_session(const struct stream *st, size_t chunk, struct seen *out)
{
    struct vw_vitcp_session ses;
    assert_int_equal(vw_vitcp_session_init(&ses), 0);
    memset(out, 0, sizeof *out);
    size_t pos[2] = {0, 0};
    for (unsigned i = 0; i < st->nsegs; i++) {
        int d = st->order[i];
        while (pos[d] < st->seg_end[i]) {
            size_t n = st->seg_end[i] - pos[d];
            if (chunk && n > chunk)
                n = chunk;
            assert_int_equal(vw_vitcp_session_feed(&ses, d, st->bytes[d] + pos[d], n, collect, out), VW_REQ_NONE);
            pos[d] += n;
        }
    }
    vw_vitcp_conn_finish(&ses.conn, &out->all);
    vw_vitcp_session_free(&ses);
}

static void test_good_session(void **state)
{
    (void)state;
    static struct stream st;
    for (int crc = 0; crc < 2; crc++) {
        good_connection(&st, crc);
        for (size_t chunk = 0; chunk <= 7; chunk++) {
            struct seen s;
            run_session(&st, chunk, &s);
            assert_int_equal(s.count, st.nsegs);
            assert_int_equal(s.fatal, 0);
            if (s.errors)
                fail_msg("crc=%d chunk=%zu: %u errors, first %s: %s", crc, chunk, s.errors,
                         vw_req_id(s.all.item[0].req), s.all.item[0].detail);
            assert_int_equal(s.all.count, 0);
            assert_int_equal(s.type[2], VW_VITCP_SEND);
            assert_int_equal(s.offset[3], 1000);
            assert_int_equal(s.crc[4], crc);
        }
    }
}

/* A framer alone at every split point of one direction's stream. */
static void test_framer_every_split(void **state)
{
    (void)state;
    static struct stream st;
    good_connection(&st, true);
    const uint8_t *b = st.bytes[0];
    size_t n = st.len[0];
    struct seen whole;
    memset(&whole, 0, sizeof whole);
    struct vw_vitcp_framer f;
    assert_int_equal(vw_vitcp_framer_init(&f, VW_VITCP_CRC_ON), 0);
    assert_int_equal(vw_vitcp_framer_feed(&f, b, n, collect, &whole), VW_REQ_NONE);
    vw_vitcp_framer_free(&f);
    assert_int_equal(whole.count, 6);
    for (size_t cut = 0; cut <= n; cut++) {
        struct seen s;
        memset(&s, 0, sizeof s);
        assert_int_equal(vw_vitcp_framer_init(&f, VW_VITCP_CRC_ON), 0);
        assert_int_equal(vw_vitcp_framer_feed(&f, b, cut, collect, &s), VW_REQ_NONE);
        assert_int_equal(vw_vitcp_framer_feed(&f, b + cut, n - cut, collect, &s), VW_REQ_NONE);
        vw_vitcp_framer_free(&f);
        assert_int_equal(s.count, whole.count);
        assert_memory_equal(s.stream_off, whole.stream_off, sizeof(uint64_t) * whole.count);
        assert_memory_equal(s.type, whole.type, whole.count);
    }
    /* byte by byte */
    struct seen s;
    memset(&s, 0, sizeof s);
    assert_int_equal(vw_vitcp_framer_init(&f, VW_VITCP_CRC_ON), 0);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(vw_vitcp_framer_feed(&f, b + i, 1, collect, &s), VW_REQ_NONE);
    vw_vitcp_framer_free(&f);
    assert_int_equal(s.count, whole.count);
    assert_int_equal(s.stream_off[5], whole.stream_off[5]);
}

static void test_framer_error_and_resync(void **state)
{
    (void)state;
    static struct stream st;
    good_connection(&st, false);
    uint8_t bad[32] = {1, 0x80, 0, 10}; /* Segment Length 10 */
    struct vw_vitcp_framer f;
    struct seen s;
    memset(&s, 0, sizeof s);
    assert_int_equal(vw_vitcp_framer_init(&f, VW_VITCP_CRC_OFF), 0);
    assert_int_equal(vw_vitcp_framer_feed(&f, bad, 3, collect, &s), VW_REQ_NONE);
    assert_int_equal(vw_vitcp_framer_feed(&f, bad + 3, 29, collect, &s), VW_REQ_VITCP_3_2_SEG_LEN_MIN);
    /* sticky until resync */
    assert_int_equal(vw_vitcp_framer_feed(&f, st.bytes[0], st.len[0], collect, &s), VW_REQ_VITCP_3_2_SEG_LEN_MIN);
    assert_int_equal(s.count, 0);
    assert_true(vw_vitcp_plausible_header(st.bytes[0], st.len[0]));
    assert_false(vw_vitcp_plausible_header(bad, sizeof bad));
    vw_vitcp_framer_resync(&f, 1000);
    assert_int_equal(vw_vitcp_framer_feed(&f, st.bytes[0], st.len[0], collect, &s), VW_REQ_NONE);
    assert_int_equal(s.count, 6);
    assert_int_equal(s.stream_off[0], 1000);
    vw_vitcp_framer_free(&f);
    /* random garbage: never out of bounds, always either segments or an error */
    srand(3);
    for (int i = 0; i < 2000; i++) {
        uint8_t g[200];
        for (size_t k = 0; k < sizeof g; k++)
            g[k] = (uint8_t)rand();
        memset(&s, 0, sizeof s);
        assert_int_equal(vw_vitcp_framer_init(&f, (enum vw_vitcp_crc_mode)(i % 3)), 0);
        size_t at = 0;
        while (at < sizeof g) {
            size_t n = 1 + (size_t)rand() % 40;
            if (n > sizeof g - at)
                n = sizeof g - at;
            if (vw_vitcp_framer_feed(&f, g + at, n, collect, &s) != VW_REQ_NONE)
                break;
            at += n;
        }
        vw_vitcp_framer_free(&f);
    }
}

/* ---- connection rules: start from a good connection, break one thing */

static struct seen check_stream(const struct stream *st)
{
    struct seen s;
    run_session(st, 0, &s);
    return s;
}

static void enc_at(struct stream *st, int dir, unsigned type, uint32_t msg, void (*tweak)(struct vw_vitcp_enc *))
{
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, type, false);
    e.hdr.msg_num = msg;
    e.hdr.rx_desc_posted = 4;
    if (vw_vitcp_type_has_rdma(type)) {
        e.rdma.length = type == VW_VITCP_RDMA_WRITE ? 10 : 100;
    }
    if (vw_vitcp_type_has_payload(type)) {
        e.payload = payload;
        e.payload_len = 10;
    }
    if (tweak)
        tweak(&e);
    put(st, dir, &e);
}

static void base(struct stream *st, uint16_t level, bool crc_req, bool crc_acc, uint16_t window)
{
    memset(st, 0, sizeof *st);
    struct vw_vitcp_enc e;
    vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_REQUEST, crc_req);
    e.ce.attrs = level | VW_VITCP_ATTR_RDMA_READ;
    e.ce.rdma_read_window = window;
    e.ce.mtu = 4096;
    e.hdr.msg_num = 10;
    e.hdr.rx_desc_posted = 4;
    put(st, 0, &e);
    vw_vitcp_enc_init(&e, VW_VITCP_CONNECT_ACCEPT, crc_acc);
    e.ce.attrs = level | VW_VITCP_ATTR_RDMA_READ;
    e.ce.rdma_read_window = window;
    e.ce.mtu = 4096;
    e.hdr.msg_num = 50;
    e.hdr.msg_ack = 10;
    e.hdr.rx_desc_posted = 4;
    put(st, 1, &e);
}

static void expect(const struct stream *st, enum vw_req req)
{
    struct seen s = check_stream(st);
    if (!vw_findings_has(&s.all, req)) {
        fail_msg("expected %s, got %u findings (first: %s)", vw_req_id(req), s.all.count,
                 s.all.count ? vw_req_id(s.all.item[0].req) : "-");
    }
}

static void no_eom(struct vw_vitcp_enc *e) { e->hdr.flags = 0; }
static void offset_5(struct vw_vitcp_enc *e) { e->hdr.data_offset = 5; e->hdr.flags = 0; }
static void idv(struct vw_vitcp_enc *e) { e->hdr.flags = VW_VITCP_FLAG_IDV; e->hdr.imm_data = 1; }
static void idv_eom_other_imm(struct vw_vitcp_enc *e) { e->hdr.flags = VW_VITCP_FLAG_IDV | VW_VITCP_FLAG_EOM; e->hdr.imm_data = 2; e->hdr.data_offset = 10; }
static void eom_off10(struct vw_vitcp_enc *e) { e->hdr.data_offset = 10; }
static void big_read(struct vw_vitcp_enc *e) { e->rdma.length = 100000; }
static void ack_ahead(struct vw_vitcp_enc *e) { e->hdr.msg_ack = 99; }
static void ack_err(struct vw_vitcp_enc *e) { e->hdr.msg_ack = 11; e->hdr.remote_err = VW_VITCP_ERR_MPE; }
static void rx_back(struct vw_vitcp_enc *e) { e->hdr.rx_desc_posted = 2; }
static void resp_len_200(struct vw_vitcp_enc *e) { e->payload_len = 200; }
static void wrong_rdma_len(struct vw_vitcp_enc *e) { e->rdma.length = 50; }
static void resp_len_100(struct vw_vitcp_enc *e) { e->payload_len = 100; }

static void test_conn_rules(void **state)
{
    (void)state;
    static struct stream st;
    const uint16_t RR = VW_VITCP_ATTR_RELIABLE_RECEPTION, RD = VW_VITCP_ATTR_RELIABLE_DELIVERY;

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_SEND, 12, NULL); /* skips 11 */
    expect(&st, VW_REQ_VITCP_3_2_MSG_NUM_SEQ);

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_SEND, 11, no_eom);
    enc_at(&st, 0, VW_VITCP_SEND, 12, NULL);
    expect(&st, VW_REQ_VITCP_3_2_EOM_LAST);

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_SEND, 11, offset_5);
    expect(&st, VW_REQ_VITCP_3_2_DATA_OFFSET_FIRST);

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_SEND, 11, no_eom);
    enc_at(&st, 0, VW_VITCP_SEND, 11, NULL); /* offset 0 again */
    expect(&st, VW_REQ_VITCP_3_2_DATA_OFFSET_NEXT);

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_SEND, 11, idv);
    enc_at(&st, 0, VW_VITCP_SEND, 11, idv_eom_other_imm);
    expect(&st, VW_REQ_VITCP_3_2_IMM_SAME);

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_SEND, 11, idv);
    enc_at(&st, 0, VW_VITCP_SEND, 11, eom_off10);
    expect(&st, VW_REQ_VITCP_3_2_IDV_EACH_SEGMENT);

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_NOP, 12, NULL);
    expect(&st, VW_REQ_VITCP_3_2_NOP_MSG_NUM);

    base(&st, RD, false, false, 4);
    enc_at(&st, 1, VW_VITCP_RDMA_READ_RESP, 77, NULL);
    expect(&st, VW_REQ_VITCP_3_2_RESP_MSG_NUM);

    base(&st, RD, false, false, 1);
    enc_at(&st, 0, VW_VITCP_RDMA_READ_REQ, 11, NULL);
    enc_at(&st, 0, VW_VITCP_RDMA_READ_REQ, 12, NULL);
    expect(&st, VW_REQ_VITCP_2_2_READ_WINDOW);

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_RDMA_READ_REQ, 11, NULL);
    enc_at(&st, 0, VW_VITCP_RDMA_READ_REQ, 12, NULL);
    enc_at(&st, 1, VW_VITCP_RDMA_READ_RESP, 11, no_eom);
    enc_at(&st, 1, VW_VITCP_RDMA_READ_RESP, 12, NULL);
    expect(&st, VW_REQ_VITCP_2_2_NO_INTERLEAVE);

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_RDMA_READ_REQ, 11, NULL);
    enc_at(&st, 1, VW_VITCP_RDMA_READ_RESP, 11, resp_len_200);
    expect(&st, VW_REQ_VITCP_3_4_READ_RESP_LEN);

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_RDMA_READ_REQ, 11, big_read);
    expect(&st, VW_REQ_VITCP_3_3_MTU_RESPECTED);

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_RDMA_WRITE, 11, wrong_rdma_len);
    expect(&st, VW_REQ_VITCP_3_4_RDMA_LEN_TOTAL);

    base(&st, RR, false, false, 4);
    enc_at(&st, 1, VW_VITCP_SEND, 51, ack_ahead);
    expect(&st, VW_REQ_VITCP_3_2_ACK_VALID_RR);

    base(&st, RR, false, false, 4);
    enc_at(&st, 0, VW_VITCP_SEND, 11, NULL);
    enc_at(&st, 1, VW_VITCP_NOP, 50, ack_err);
    enc_at(&st, 1, VW_VITCP_SEND, 51, NULL);
    expect(&st, VW_REQ_VITCP_3_2_ACK_ERROR_CLOSE);

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_SEND, 11, rx_back);
    expect(&st, VW_REQ_VITCP_3_2_RX_DESC_MOD);

    base(&st, RD, true, true, 4);
    enc_at(&st, 0, VW_VITCP_SEND, 11, NULL); /* no trailer although negotiated: */
    expect(&st, VW_REQ_VITCP_3_6_CRC_VALID); /* its last bytes are read as a bad CRC */

    base(&st, RD, false, true, 4);
    expect(&st, VW_REQ_VITCP_3_6_ACCEPT_CRC_ONLY_IF_REQ);

    /* setup-state rules */
    base(&st, RD, false, false, 4);
    st.len[1] = 0; /* drop the accept */
    st.nsegs = 1;
    enc_at(&st, 0, VW_VITCP_SEND, 11, NULL);
    expect(&st, VW_REQ_VITCP_4_REQUEST_FIRST);

    base(&st, RD, false, false, 4);
    st.len[1] = 0;
    st.nsegs = 1;
    enc_at(&st, 1, VW_VITCP_CONNECT_REJECT, 0, NULL);
    enc_at(&st, 0, VW_VITCP_SEND, 11, NULL);
    expect(&st, VW_REQ_VITCP_4_CLOSE_AFTER_REFUSE);

    base(&st, RD, false, false, 4);
    st.len[1] = 0;
    st.nsegs = 1;
    expect(&st, VW_REQ_VITCP_4_ANSWER_TYPES);
}

/* 2.2.2.2.3: only RdmaReadResponse segments may interleave with another
 * message (V36); a request or a Send inside an open Send is EOM-LAST. */
static void test_interleave_exception(void **state)
{
    (void)state;
    static struct stream st;
    const uint16_t RD = VW_VITCP_ATTR_RELIABLE_DELIVERY;

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_RDMA_READ_REQ, 11, NULL);
    enc_at(&st, 1, VW_VITCP_SEND, 51, no_eom);
    enc_at(&st, 1, VW_VITCP_RDMA_READ_RESP, 11, resp_len_100);
    enc_at(&st, 1, VW_VITCP_SEND, 51, eom_off10);
    struct seen s = check_stream(&st);
    assert_int_equal(s.fatal, 0);
    if (s.errors != 0)
        fail_msg("a read response inside an open Send is allowed, got %s", vw_req_id(s.all.item[0].req));

    base(&st, RD, false, false, 4);
    enc_at(&st, 0, VW_VITCP_SEND, 11, no_eom);
    enc_at(&st, 0, VW_VITCP_RDMA_READ_REQ, 12, NULL);
    enc_at(&st, 0, VW_VITCP_SEND, 11, eom_off10);
    expect(&st, VW_REQ_VITCP_3_2_EOM_LAST);
}

/* The accepter's answer must respect the request (3.3). */
static void test_accept_rules(void **state)
{
    (void)state;
    struct vw_vitcp_conn c;
    struct vw_vitcp_seg req, acc;
    struct vw_findings f;
    memset(&req, 0, sizeof req);
    req.hdr.version = 1;
    req.hdr.type = VW_VITCP_CONNECT_REQUEST;
    req.hdr.flags = VW_VITCP_FLAG_EOM;
    req.has_ce = true;
    req.ce.attrs = VW_VITCP_ATTR_RELIABLE_DELIVERY;
    req.ce.mtu = 8192;
    req.ce.called_disc_len = 2;
    memcpy(req.ce.called_disc, "ab", 2);
    acc = req;
    acc.hdr.type = VW_VITCP_CONNECT_ACCEPT;
    acc.ce.attrs = VW_VITCP_ATTR_RELIABLE_RECEPTION | VW_VITCP_ATTR_P2P;
    acc.ce.mtu = 16384;
    acc.ce.called_disc[1] = 'x';
    vw_vitcp_conn_init(&c);
    vw_findings_clear(&f);
    vw_vitcp_conn_check(&c, 0, &req, &f);
    assert_int_equal(vw_vitcp_conn_crc_mode(&c), VW_VITCP_CRC_AUTO);
    vw_vitcp_conn_check(&c, 1, &acc, &f);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_3_MTU_LESSER));
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_3_LEVEL_MATCH));
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_3_P2P_MATCH));
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_3_3_RESPONSE_DISC));
    assert_int_equal(c.phase, VW_VITCP_PHASE_CONNECTED);
    assert_int_equal(vw_vitcp_conn_crc_mode(&c), VW_VITCP_CRC_OFF);
    /* a second request is a protocol error */
    vw_findings_clear(&f);
    vw_vitcp_conn_check(&c, 0, &req, &f);
    assert_true(vw_findings_has(&f, VW_REQ_VITCP_4_UNEXPECTED_CLOSE));
}

/* V38: an answer whose request the capture does not hold (it started, or
 * the connection was recognised, after it) breaks no rule; with the start
 * seen, the same answer is an unexpected one. */
static void test_answer_without_start(void **state)
{
    (void)state;
    struct vw_vitcp_conn c;
    struct vw_findings f;
    struct vw_vitcp_seg acc;
    memset(&acc, 0, sizeof acc);
    acc.hdr.version = VW_VITCP_VERSION;
    acc.hdr.type = VW_VITCP_CONNECT_ACCEPT;
    acc.has_ce = true;
    acc.ce.attrs = VW_VITCP_ATTR_RELIABLE_DELIVERY;
    acc.ce.mtu = 8192;
    for (int seen = 0; seen < 2; seen++) {
        for (unsigned type = VW_VITCP_CONNECT_ACCEPT; type <= VW_VITCP_CONNECT_NOMATCH; type++) {
            acc.hdr.type = (uint8_t)type;
            vw_vitcp_conn_init(&c);
            if (seen)
                vw_vitcp_conn_saw_start(&c);
            vw_findings_clear(&f);
            vw_vitcp_conn_check(&c, 1, &acc, &f);
            assert_int_equal(vw_findings_has(&f, VW_REQ_VITCP_4_UNEXPECTED_CLOSE), seen);
        }
    }
    /* the accepted connection goes on without a start: a Send breaks no "request first" */
    vw_vitcp_conn_init(&c);
    acc.hdr.type = VW_VITCP_CONNECT_ACCEPT;
    vw_findings_clear(&f);
    vw_vitcp_conn_check(&c, 1, &acc, &f);
    assert_int_equal(c.phase, VW_VITCP_PHASE_MIDSTREAM);
    assert_int_equal(c.mtu, 8192);
    struct vw_vitcp_seg send;
    memset(&send, 0, sizeof send);
    send.hdr.version = VW_VITCP_VERSION;
    send.hdr.type = VW_VITCP_SEND;
    send.hdr.flags = VW_VITCP_FLAG_EOM;
    vw_vitcp_conn_check(&c, 0, &send, &f);
    assert_int_equal(f.count, 0);
}

/* Capture started mid-connection: the first data segment decides. */
static void test_midstream(void **state)
{
    (void)state;
    static struct stream st;
    good_connection(&st, true);
    /* skip the CE segments of both directions */
    size_t skip0 = st.seg_end[0], skip1 = st.seg_end[1];
    struct vw_vitcp_session ses;
    struct seen s;
    memset(&s, 0, sizeof s);
    assert_int_equal(vw_vitcp_session_init(&ses), 0);
    assert_int_equal(vw_vitcp_session_feed(&ses, 0, st.bytes[0] + skip0, st.len[0] - skip0, collect, &s), VW_REQ_NONE);
    assert_int_equal(vw_vitcp_session_feed(&ses, 1, st.bytes[1] + skip1, st.len[1] - skip1, collect, &s), VW_REQ_NONE);
    assert_int_equal(ses.conn.phase, VW_VITCP_PHASE_MIDSTREAM);
    assert_int_equal(vw_vitcp_conn_crc_mode(&ses.conn), VW_VITCP_CRC_ON);
    assert_int_equal(s.count, st.nsegs - 2);
    for (unsigned i = 0; i < s.count; i++)
        assert_true(s.crc[i]);
    vw_vitcp_session_free(&ses);
}

/* V26: a bad CRC at RD that the receiver ACKs, then more data. */
static void test_badcrc_watch(void **state)
{
    (void)state;
    struct vw_vitcp_conn c;
    vw_vitcp_conn_init(&c);
    c.level = VW_VITCP_ATTR_RELIABLE_DELIVERY;
    struct vw_vitcp_badcrc_watch w;
    memset(&w, 0, sizeof w);
    struct vw_findings fs;
    vw_findings_clear(&fs);
    vw_findings_add(&fs, VW_REQ_VITCP_3_6_CRC_VALID, VW_SEV_ERROR, 0, 4, "bad");
    vw_vitcp_badcrc_segment(&w, &c, 0, 1000, 8, &fs);
    assert_int_equal(fs.count, 1);
    assert_true(w.pending[0]);
    vw_vitcp_badcrc_ack(&w, 0, 5000); /* the sender's own ACK of the other side: nothing */
    vw_vitcp_badcrc_ack(&w, 1, 999);  /* short of its end: not acked */
    vw_findings_clear(&fs);
    vw_vitcp_badcrc_segment(&w, &c, 0, 1100, 9, &fs);
    assert_int_equal(fs.count, 0);
    vw_vitcp_badcrc_ack(&w, 1, 1000);
    vw_vitcp_badcrc_segment(&w, &c, 0, 1150, 10, &fs); /* V29: the sender's pipelined data is no reaction */
    assert_int_equal(fs.count, 0);
    vw_vitcp_badcrc_segment(&w, &c, 1, 300, 10, &fs); /* B, the receiver, carries on */
    assert_int_equal(fs.count, 1);
    assert_int_equal(fs.item[0].req, VW_REQ_VITCP_3_6_BAD_CRC_REACTION);
    assert_non_null(strstr(fs.item[0].detail, "frame 8"));
    vw_findings_clear(&fs);
    vw_vitcp_badcrc_segment(&w, &c, 0, 1200, 11, &fs); /* judged once */
    assert_int_equal(fs.count, 0);
    /* V29: the receiver ACKs it and closes: the sender's data after the
     * receiver's FIN is nobody's reaction */
    memset(&w, 0, sizeof w);
    vw_findings_clear(&fs);
    vw_findings_add(&fs, VW_REQ_VITCP_3_6_CRC_VALID, VW_SEV_ERROR, 0, 4, "bad");
    vw_vitcp_badcrc_segment(&w, &c, 0, 1000, 8, &fs);
    vw_vitcp_badcrc_ack(&w, 1, 1000);
    vw_vitcp_badcrc_close(&w, 0); /* the sender's own close settles nothing */
    assert_true(w.pending[0]);
    vw_vitcp_badcrc_close(&w, 1);
    assert_false(w.pending[0]);
    vw_findings_clear(&fs);
    vw_vitcp_badcrc_segment(&w, &c, 0, 1100, 9, &fs);
    vw_vitcp_badcrc_segment(&w, &c, 1, 300, 10, &fs);
    assert_int_equal(fs.count, 0);
    /* at Reliable Reception the receiver's error report (a Message ACK with
     * a VI error) is the second reaction itself, not carrying on */
    memset(&w, 0, sizeof w);
    c.level = VW_VITCP_ATTR_RELIABLE_RECEPTION;
    vw_findings_clear(&fs);
    vw_findings_add(&fs, VW_REQ_VITCP_3_6_CRC_VALID, VW_SEV_ERROR, 0, 4, "bad");
    vw_vitcp_badcrc_segment(&w, &c, 0, 1000, 8, &fs);
    vw_vitcp_badcrc_ack(&w, 1, 1000);
    c.dir[1].error_acked = true;
    vw_findings_clear(&fs);
    vw_vitcp_badcrc_segment(&w, &c, 1, 300, 9, &fs);
    assert_int_equal(fs.count, 0);
    assert_false(w.pending[0]);
    c.dir[1].error_acked = false;
    /* at Unreliable nothing is watched */
    memset(&w, 0, sizeof w);
    c.level = VW_VITCP_ATTR_UNRELIABLE;
    vw_findings_add(&fs, VW_REQ_VITCP_3_6_CRC_VALID, VW_SEV_ERROR, 0, 4, "bad");
    vw_vitcp_badcrc_segment(&w, &c, 0, 1000, 8, &fs);
    assert_false(w.pending[0]);
}

/* V28: a side's FIN judges its cut segment and open message once; the
 * close then notes only the open message of a side not judged. */
static void test_direction_end(void **state)
{
    (void)state;
    struct vw_vitcp_conn c;
    vw_vitcp_conn_init(&c);
    c.dir[0].in_msg = c.dir[1].in_msg = true;
    c.dir[0].cur_type = c.dir[1].cur_type = VW_VITCP_SEND;
    struct vw_findings f;
    vw_findings_clear(&f);
    vw_vitcp_direction_end(&c, 0, 10, &f);
    assert_int_equal(f.count, 2);
    assert_int_equal(f.item[0].req, VW_REQ_VITCP_3_2_SEG_TRUNCATED);
    assert_int_equal(f.item[0].severity, VW_SEV_ERROR);
    assert_int_equal(f.item[1].req, VW_REQ_VITCP_3_2_EOM_LAST);
    vw_findings_clear(&f);
    vw_vitcp_direction_end(&c, 0, 10, &f); /* once per side */
    vw_vitcp_direction_end(&c, 2, 10, &f); /* no such side */
    assert_int_equal(f.count, 0);
    vw_vitcp_conn_finish(&c, &f);
    assert_int_equal(f.count, 1); /* side 1's open message only */
    assert_int_equal(f.item[0].req, VW_REQ_VITCP_3_2_EOM_LAST);
    assert_non_null(strstr(f.item[0].detail, "side 1"));
    vw_findings_clear(&f);
    vw_vitcp_direction_end(&c, 1, 0, &f); /* whole last segment: only the open message */
    assert_int_equal(f.count, 1);
    assert_int_equal(f.item[0].req, VW_REQ_VITCP_3_2_EOM_LAST);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_good_session),
        cmocka_unit_test(test_framer_every_split),
        cmocka_unit_test(test_framer_error_and_resync),
        cmocka_unit_test(test_conn_rules),
        cmocka_unit_test(test_interleave_exception),
        cmocka_unit_test(test_accept_rules),
        cmocka_unit_test(test_answer_without_start),
        cmocka_unit_test(test_midstream),
        cmocka_unit_test(test_badcrc_watch),
        cmocka_unit_test(test_direction_end),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
