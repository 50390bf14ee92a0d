/* The capture reader: TCP reassembly at every split, out of order,
 * retransmissions (identical and differing, V25), gaps, IPv6 and VLAN,
 * datagrams, and clear errors on bad files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vitcp/pcap_reader.h"
#include "vitcp/pcap_writer.h"

#define STREAM_MAX 8192

/* What the callbacks saw. */
struct seen {
    uint8_t stream[2][STREAM_MAX];
    size_t got[2];           /* contiguous bytes received per direction */
    bool offset_error;       /* a DATA chunk not at the expected offset */
    unsigned opens, closes, gaps, retx, retx_diff, datagrams, notices, urgent;
    uint16_t urgent_ptr;
    uint64_t urgent_offset;
    size_t gap_bytes;
    uint64_t gap_offset;
    size_t diff_bytes;
    uint64_t diff_offset;
    uint64_t diff_frame;
    enum vn_close_reason reason;
    unsigned fins[2];        /* VN_TCP_DIR_END per direction */
    uint64_t fin_offset[2];
    bool fin_after_close;    /* a FIN reported after the CLOSE */
    uint64_t first_data_frame[2];
    struct vn_datagram dg[4];
    uint8_t dg_data[4][64];
};

static void on_tcp(void *ctx, const struct vn_tcp_event *ev)
{
    struct seen *s = ctx;
    switch (ev->kind) {
    case VN_TCP_OPEN:
        s->opens++;
        break;
    case VN_TCP_DATA:
        if (ev->offset != s->got[ev->dir] || ev->offset + ev->len > STREAM_MAX) {
            s->offset_error = true;
            break;
        }
        if (s->got[ev->dir] == 0)
            s->first_data_frame[ev->dir] = ev->frame;
        memcpy(s->stream[ev->dir] + ev->offset, ev->data, ev->len);
        s->got[ev->dir] += ev->len;
        break;
    case VN_TCP_GAP:
        if (ev->offset != s->got[ev->dir])
            s->offset_error = true;
        s->gaps++;
        s->gap_bytes += ev->len;
        s->gap_offset = ev->offset;
        s->got[ev->dir] += ev->len; /* the stream continues after the hole */
        break;
    case VN_TCP_RETX:
        s->retx++;
        if (ev->diff_bytes) {
            s->retx_diff++;
            s->diff_bytes = ev->diff_bytes;
            s->diff_offset = ev->diff_offset;
            s->diff_frame = ev->frame;
        }
        break;
    case VN_TCP_CLOSE:
        s->closes++;
        s->reason = ev->reason;
        break;
    case VN_TCP_DIR_END:
        s->fins[ev->dir]++;
        s->fin_offset[ev->dir] = ev->offset;
        s->fin_after_close |= s->closes > 0;
        break;
    case VN_TCP_URGENT:
        s->urgent++;
        s->urgent_ptr = ev->urgent;
        s->urgent_offset = ev->offset;
        break;
    }
}

static void on_dgram(void *ctx, const struct vn_datagram *d)
{
    struct seen *s = ctx;
    if (s->datagrams < 4) {
        s->dg[s->datagrams] = *d;
        memcpy(s->dg_data[s->datagrams], d->data, d->len < 64 ? d->len : 64);
    }
    s->datagrams++;
}

static void on_notice(void *ctx, uint64_t frame, const char *msg)
{
    (void)frame;
    (void)msg;
    ((struct seen *)ctx)->notices++;
}

/* A sink that feeds frames straight into a reader (no file). */
static int feed_emit(void *ctx, const uint8_t *frame, size_t len)
{
    vn_reader_feed(ctx, 0, frame, len, len);
    return 0;
}

struct rig {
    struct seen seen;
    struct vn_reader_callbacks cb;
    struct vn_reader *reader;
    struct vn_tcp_flow flow;
};

static struct rig *rig_new(const char *cip, const char *sip, const struct vn_reader_limits *lim)
{
    struct rig *g = calloc(1, sizeof *g);
    assert_non_null(g);
    g->cb = (struct vn_reader_callbacks){on_tcp, on_dgram, on_notice, &g->seen, NULL};
    g->reader = vn_reader_new(DLT_EN10MB, &g->cb, lim);
    assert_non_null(g->reader);
    struct vn_sink sink = {feed_emit, g->reader};
    assert_int_equal(vn_tcp_flow_init(&g->flow, sink, cip, 40000, sip, 5995), 0);
    return g;
}

static void rig_free(struct rig *g)
{
    vn_reader_free(g->reader);
    free(g);
}

static uint8_t pattern[STREAM_MAX];

static int setup_pattern(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof pattern; i++)
        pattern[i] = (uint8_t)(i * 31 + (i >> 8));
    return 0;
}

static void test_every_split_in_and_out_of_order(void **state)
{
    (void)state;
    const size_t total = 300;
    for (size_t k = 1; k < total; k++) {
        for (int reversed = 0; reversed < 2; reversed++) {
            struct rig *g = rig_new("10.0.0.1", "10.0.0.2", NULL);
            assert_int_equal(vn_tcp_handshake(&g->flow), 0);
            if (reversed) {
                assert_int_equal(vn_tcp_send_at(&g->flow, VN_C2S, k, pattern + k, total - k), 0);
                assert_int_equal(vn_tcp_send_at(&g->flow, VN_C2S, 0, pattern, k), 0);
            } else {
                assert_int_equal(vn_tcp_send_segment(&g->flow, VN_C2S, pattern, k), 0);
                assert_int_equal(vn_tcp_send_segment(&g->flow, VN_C2S, pattern + k, total - k), 0);
            }
            assert_int_equal(vn_tcp_close(&g->flow), 0);
            vn_reader_finish(g->reader);
            assert_false(g->seen.offset_error);
            assert_int_equal(g->seen.got[VN_C2S], total);
            assert_memory_equal(g->seen.stream[VN_C2S], pattern, total);
            assert_int_equal(g->seen.gaps, 0);
            assert_int_equal(g->seen.retx, 0);
            assert_int_equal(g->seen.opens, 1);
            assert_int_equal(g->seen.closes, 1);
            assert_int_equal(g->seen.reason, VN_CLOSE_FIN);
            /* each direction's end, once, at its FIN's offset, before the close */
            assert_int_equal(g->seen.fins[VN_C2S], 1);
            assert_int_equal(g->seen.fins[VN_S2C], 1);
            assert_int_equal(g->seen.fin_offset[VN_C2S], total);
            assert_int_equal(g->seen.fin_offset[VN_S2C], 0);
            assert_false(g->seen.fin_after_close);
            rig_free(g);
        }
    }
}

static void test_three_way_shuffle_with_overlap(void **state)
{
    (void)state;
    /* Segments C, A, B where B overlaps both neighbours by 10 bytes. */
    struct rig *g = rig_new("10.0.0.1", "10.0.0.2", NULL);
    assert_int_equal(vn_tcp_handshake(&g->flow), 0);
    assert_int_equal(vn_tcp_send_at(&g->flow, VN_C2S, 200, pattern + 200, 100), 0);
    assert_int_equal(vn_tcp_send_at(&g->flow, VN_C2S, 0, pattern, 100), 0);
    assert_int_equal(vn_tcp_send_at(&g->flow, VN_C2S, 90, pattern + 90, 120), 0);
    vn_reader_finish(g->reader);
    assert_false(g->seen.offset_error);
    assert_int_equal(g->seen.got[VN_C2S], 300);
    assert_memory_equal(g->seen.stream[VN_C2S], pattern, 300);
    assert_int_equal(g->seen.retx, 2); /* both overlaps, identical */
    assert_int_equal(g->seen.retx_diff, 0);
    assert_int_equal(g->seen.reason, VN_CLOSE_END_OF_CAPTURE);
    assert_int_equal(g->seen.fins[VN_C2S] + g->seen.fins[VN_S2C], 0); /* no FIN was sent */
    rig_free(g);
}

static void test_retransmission_with_different_bytes(void **state)
{
    (void)state;
    struct rig *g = rig_new("10.0.0.1", "10.0.0.2", NULL);
    assert_int_equal(vn_tcp_handshake(&g->flow), 0);               /* frames 1-3 */
    assert_int_equal(vn_tcp_send_segment(&g->flow, VN_C2S, pattern, 100), 0); /* 4 */
    assert_int_equal(vn_tcp_send_at(&g->flow, VN_C2S, 0, pattern, 100), 0);   /* 5: same */
    uint8_t changed[40];
    memcpy(changed, pattern + 50, 40);
    changed[7] ^= 0xFF;
    changed[9] ^= 0x01;
    assert_int_equal(vn_tcp_send_at(&g->flow, VN_C2S, 50, changed, 40), 0);   /* 6: differs */
    vn_reader_finish(g->reader);
    assert_int_equal(g->seen.retx, 2);
    assert_int_equal(g->seen.retx_diff, 1);
    assert_int_equal(g->seen.diff_bytes, 2);
    assert_int_equal(g->seen.diff_offset, 57);
    assert_int_equal(g->seen.diff_frame, 6);
    /* The first copy wins. */
    assert_memory_equal(g->seen.stream[VN_C2S], pattern, 100);
    assert_int_equal(vn_reader_stats(g->reader)->retx_differing, 1);
    rig_free(g);
}

/* A segment with URG: its stream offset and urgent pointer, before its data. */
static void test_urgent_pointer_event(void **state)
{
    (void)state;
    struct rig *g = rig_new("10.0.0.1", "10.0.0.2", NULL);
    assert_int_equal(vn_tcp_handshake(&g->flow), 0);
    assert_int_equal(vn_tcp_send_segment(&g->flow, VN_C2S, pattern, 100), 0);
    assert_int_equal(vn_tcp_raw(&g->flow, VN_C2S, VN_TCP_ACK | VN_TCP_PSH | VN_TCP_URG, 100, 7, NULL, 0,
                                pattern + 100, 50), 0);
    vn_reader_finish(g->reader);
    assert_int_equal(g->seen.urgent, 1);
    assert_int_equal(g->seen.urgent_ptr, 7);
    assert_int_equal(g->seen.urgent_offset, 100);
    assert_int_equal(g->seen.got[VN_C2S], 150);
    rig_free(g);
}

static void test_gap_reported_by_ack_and_at_end(void **state)
{
    (void)state;
    struct rig *g = rig_new("10.0.0.1", "10.0.0.2", NULL);
    assert_int_equal(vn_tcp_handshake(&g->flow), 0);
    assert_int_equal(vn_tcp_send_segment(&g->flow, VN_C2S, pattern, 100), 0);
    vn_tcp_skip(&g->flow, VN_C2S, 37);
    /* The server ACKs bytes the capture never saw. */
    assert_int_equal(vn_tcp_ack(&g->flow, VN_S2C), 0);
    assert_int_equal(g->seen.gaps, 1);
    assert_int_equal(g->seen.gap_bytes, 37);
    assert_int_equal(g->seen.gap_offset, 100);
    assert_int_equal(vn_tcp_send_segment(&g->flow, VN_C2S, pattern + 137, 50), 0);
    assert_int_equal(g->seen.got[VN_C2S], 187);
    assert_memory_equal(g->seen.stream[VN_C2S] + 137, pattern + 137, 50);
    /* A hole at the end of the capture, with data held after it. */
    vn_tcp_skip(&g->flow, VN_C2S, 13);
    assert_int_equal(vn_tcp_send_segment(&g->flow, VN_C2S, pattern + 200, 20), 0);
    assert_int_equal(g->seen.got[VN_C2S], 187);
    vn_reader_finish(g->reader);
    assert_false(g->seen.offset_error);
    assert_int_equal(g->seen.gaps, 2);
    assert_int_equal(g->seen.gap_bytes, 50);
    assert_int_equal(g->seen.gap_offset, 187);
    assert_int_equal(g->seen.got[VN_C2S], 220);
    assert_memory_equal(g->seen.stream[VN_C2S] + 200, pattern + 200, 20);
    assert_int_equal(vn_reader_stats(g->reader)->gap_bytes, 50);
    rig_free(g);
}

static void test_buffer_limit_turns_hole_into_gap(void **state)
{
    (void)state;
    struct vn_reader_limits lim = {.max_ooo_bytes = 1000};
    struct rig *g = rig_new("10.0.0.1", "10.0.0.2", &lim);
    assert_int_equal(vn_tcp_handshake(&g->flow), 0);
    vn_tcp_skip(&g->flow, VN_C2S, 10);
    for (int i = 0; i < 3; i++)
        assert_int_equal(vn_tcp_send_segment(&g->flow, VN_C2S, pattern + 10 + i * 400, 400), 0);
    assert_int_equal(g->seen.gaps, 1);
    assert_int_equal(g->seen.gap_bytes, 10);
    assert_int_equal(g->seen.got[VN_C2S], 1210);
    assert_true(g->seen.notices >= 1);
    rig_free(g); /* freeing with state left must not leak */
}

static void test_ipv6_vlan_both_directions_and_mid_stream_start(void **state)
{
    (void)state;
    struct rig *g = rig_new("fd00::1", "fd00::2", NULL);
    g->flow.vlan = 7;
    /* No handshake: the capture starts mid-connection. */
    assert_int_equal(vn_tcp_send(&g->flow, VN_C2S, pattern, 3000), 0);
    assert_int_equal(vn_tcp_send(&g->flow, VN_S2C, pattern + 100, 2000), 0);
    assert_int_equal(vn_tcp_rst(&g->flow, VN_C2S), 0);
    assert_false(g->seen.offset_error);
    assert_int_equal(g->seen.got[VN_C2S], 3000);
    assert_int_equal(g->seen.got[VN_S2C], 2000);
    assert_memory_equal(g->seen.stream[VN_S2C], pattern + 100, 2000);
    assert_int_equal(g->seen.closes, 1);
    assert_int_equal(g->seen.reason, VN_CLOSE_RST);
    assert_int_equal(g->seen.first_data_frame[VN_S2C], 4);
    rig_free(g);
}

/* A direction ends at its FIN only once every byte before it is in: a FIN
 * that overtakes its data is told when the data arrives; a direction that
 * an RST ends gets no FIN event. */
static void test_fin_told_when_the_direction_is_whole(void **state)
{
    (void)state;
    struct rig *g = rig_new("10.0.0.1", "10.0.0.2", NULL);
    assert_int_equal(vn_tcp_handshake(&g->flow), 0);
    assert_int_equal(vn_tcp_send_at(&g->flow, VN_C2S, 100, pattern + 100, 50), 0);
    assert_int_equal(vn_tcp_fin(&g->flow, VN_C2S), 0);
    assert_int_equal(g->seen.fins[VN_C2S], 0); /* bytes 0-99 still missing */
    assert_int_equal(vn_tcp_send_at(&g->flow, VN_C2S, 0, pattern, 100), 0);
    assert_int_equal(g->seen.fins[VN_C2S], 1);
    assert_int_equal(g->seen.fin_offset[VN_C2S], 150);
    assert_int_equal(g->seen.closes, 0);
    assert_int_equal(vn_tcp_rst(&g->flow, VN_S2C), 0);
    assert_int_equal(g->seen.fins[VN_S2C], 0);
    assert_int_equal(g->seen.fins[VN_C2S], 1);
    assert_int_equal(g->seen.closes, 1);
    assert_int_equal(g->seen.reason, VN_CLOSE_RST);
    rig_free(g);
}

static void test_sequence_wrap(void **state)
{
    (void)state;
    struct rig *g = rig_new("10.0.0.1", "10.0.0.2", NULL);
    g->flow.isn[VN_C2S] = 0xFFFFFF00u;
    assert_int_equal(vn_tcp_handshake(&g->flow), 0);
    assert_int_equal(vn_tcp_send(&g->flow, VN_C2S, pattern, 4000), 0);
    vn_reader_finish(g->reader);
    assert_int_equal(g->seen.got[VN_C2S], 4000);
    assert_memory_equal(g->seen.stream[VN_C2S], pattern, 4000);
    assert_int_equal(g->seen.gaps, 0);
    rig_free(g);
}

static void test_file_round_trip_with_datagrams(void **state)
{
    (void)state;
    char path[] = "/tmp/vitcp-reader-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    char err[256];
    struct vn_pcap_writer *w = vn_pcap_open(path, err, sizeof err);
    assert_non_null(w);
    struct vn_tcp_flow f;
    assert_int_equal(vn_tcp_flow_init(&f, vn_pcap_sink(w), "10.1.1.1", 5000, "10.1.1.2", 5995), 0);
    assert_int_equal(vn_tcp_handshake(&f), 0);
    assert_int_equal(vn_tcp_send(&f, VN_C2S, pattern, 5000), 0);
    struct vn_endpoint a, b;
    vn_endpoint_set(&a, "10.1.1.1", 5998);
    vn_endpoint_set(&b, "10.1.1.2", 5998);
    assert_int_equal(vn_udp_send(vn_pcap_sink(w), &a, &b, pattern, 9), 0);
    /* A 5-byte payload is padded to the 60-byte Ethernet minimum on real links;
     * the reader must deliver only what the frame says. */
    assert_int_equal(vn_eth_send(vn_pcap_sink(w), a.mac, b.mac, VN_ETHERTYPE_PKTWAY, pattern, 5), 0);
    assert_int_equal(vn_tcp_close(&f), 0);
    assert_int_equal(vn_pcap_close(w), 0);

    struct seen *s = calloc(1, sizeof *s);
    struct vn_reader_callbacks cb = {on_tcp, on_dgram, on_notice, s, NULL};
    struct vn_reader_stats st;
    assert_int_equal(vn_pcap_read(path, &cb, NULL, &st, err, sizeof err), 0);
    assert_int_equal(s->got[VN_C2S], 5000);
    assert_memory_equal(s->stream[VN_C2S], pattern, 5000);
    assert_int_equal(s->datagrams, 2);
    assert_int_equal(s->dg[0].kind, VN_DGRAM_UDP);
    assert_int_equal(s->dg[0].len, 9);
    assert_int_equal(s->dg[0].dst.port, 5998);
    assert_memory_equal(s->dg_data[0], pattern, 9);
    assert_int_equal(s->dg[1].kind, VN_DGRAM_ETH);
    assert_int_equal(s->dg[1].ethertype, 0x88B5);
    assert_int_equal(s->dg[1].len, 5);
    assert_int_equal(s->dg[1].frame, 9); /* 3 handshake + 4 data + UDP + this */
    assert_int_equal(st.frames, 13);
    assert_int_equal(st.connections, 1);
    assert_int_equal(st.tcp_bytes, 5000);
    assert_int_equal(s->closes, 1);
    assert_int_equal(s->reason, VN_CLOSE_FIN);

    /* Cut the file in the middle of a record: the frames before are
     * delivered and the error names the damage. */
    FILE *fp = fopen(path, "r+b");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    long size = ftell(fp);
    fclose(fp);
    assert_int_equal(truncate(path, size - 30), 0);
    memset(s, 0, sizeof *s);
    err[0] = '\0';
    assert_int_equal(vn_pcap_read(path, &cb, NULL, &st, err, sizeof err), -1);
    assert_non_null(strstr(err, "damaged after frame 12"));
    assert_int_equal(st.frames, 12);
    free(s);
    unlink(path);
}

/* pcapng written by hand (libpcap reads it but cannot write it). */
static void put_u32(FILE *f, uint32_t v) { fwrite(&v, 4, 1, f); }
static void put_u16(FILE *f, uint16_t v) { fwrite(&v, 2, 1, f); }

static void test_pcapng_file(void **state)
{
    (void)state;
    char path[] = "/tmp/vitcp-pcapng-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    put_u32(f, 0x0A0D0D0A); /* Section Header Block */
    put_u32(f, 28);
    put_u32(f, 0x1A2B3C4D);
    put_u16(f, 1);
    put_u16(f, 0);
    put_u32(f, 0xFFFFFFFF);
    put_u32(f, 0xFFFFFFFF);
    put_u32(f, 28);
    put_u32(f, 1); /* Interface Description Block: Ethernet */
    put_u32(f, 20);
    put_u16(f, 1);
    put_u16(f, 0);
    put_u32(f, 0);
    put_u32(f, 20);
    struct vn_endpoint a, b;
    vn_endpoint_set(&a, "10.9.0.1", 1111);
    vn_endpoint_set(&b, "10.9.0.2", 5995);
    static uint8_t frame[VN_FRAME_MAX];
    for (int i = 0; i < 3; i++) { /* three segments, the middle one last */
        static const int order[3] = {0, 2, 1};
        int k = order[i];
        struct vn_tcp_hdr_spec spec = {.src = &a, .dst = &b, .seq = 7000u + (uint32_t)k * 100,
                                       .flags = VN_TCP_ACK};
        size_t n = vn_build_tcp(frame, sizeof frame, &spec, pattern + k * 100, 100);
        size_t padded = (n + 3) & ~(size_t)3;
        put_u32(f, 6); /* Enhanced Packet Block */
        put_u32(f, (uint32_t)(32 + padded));
        put_u32(f, 0);
        put_u32(f, 0);
        put_u32(f, (uint32_t)i);
        put_u32(f, (uint32_t)n);
        put_u32(f, (uint32_t)n);
        fwrite(frame, 1, n, f);
        for (size_t z = n; z < padded; z++)
            fputc(0, f);
        put_u32(f, (uint32_t)(32 + padded));
    }
    fclose(f);
    struct seen *s = calloc(1, sizeof *s);
    struct vn_reader_callbacks cb = {on_tcp, on_dgram, on_notice, s, NULL};
    char err[256];
    struct vn_reader_stats st;
    assert_int_equal(vn_pcap_read(path, &cb, NULL, &st, err, sizeof err), 0);
    assert_int_equal(st.frames, 3);
    assert_int_equal(s->got[VN_C2S], 300);
    assert_memory_equal(s->stream[VN_C2S], pattern, 300);
    assert_false(s->offset_error);
    free(s);
    unlink(path);
}

static void test_bad_files(void **state)
{
    (void)state;
    char err[256] = "";
    struct seen s;
    struct vn_reader_callbacks cb = {on_tcp, on_dgram, on_notice, &s, NULL};
    assert_int_equal(vn_pcap_read("/nonexistent/x.pcap", &cb, NULL, NULL, err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/x.pcap"));
    char path[] = "/tmp/vitcp-garbage-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, "this is not a capture file at all", 33), 33);
    close(fd);
    err[0] = '\0';
    assert_int_equal(vn_pcap_read(path, &cb, NULL, NULL, err, sizeof err), -1);
    assert_true(strlen(err) > 0);
    unlink(path);
    assert_null(vn_reader_new(12345, &cb, NULL));
}

static void test_malformed_frames_give_notices(void **state)
{
    (void)state;
    struct seen *s = calloc(1, sizeof *s);
    struct vn_reader_callbacks cb = {on_tcp, on_dgram, on_notice, s, NULL};
    struct vn_reader *r = vn_reader_new(DLT_EN10MB, &cb, NULL);
    uint8_t frame[VN_FRAME_MAX];
    struct vn_endpoint a, b;
    vn_endpoint_set(&a, "10.0.0.1", 1);
    vn_endpoint_set(&b, "10.0.0.2", 2);
    struct vn_tcp_hdr_spec spec = {.src = &a, .dst = &b, .flags = VN_TCP_ACK};
    size_t n = vn_build_tcp(frame, sizeof frame, &spec, pattern, 50);
    assert_true(n > 0);
    /* Every truncation of a valid frame: no crash, no data past the cut. */
    for (size_t cut = 0; cut < n; cut++)
        vn_reader_feed(r, 0, frame, cut, cut);
    /* Snaplen-cut frame: caplen < wire length. */
    vn_reader_feed(r, 0, frame, n - 10, n);
    /* Bad IHL, bad TCP data offset, fragment. */
    uint8_t bad[VN_FRAME_MAX];
    memcpy(bad, frame, n);
    bad[14] = 0x43;
    vn_reader_feed(r, 0, bad, n, n);
    memcpy(bad, frame, n);
    bad[14 + 20 + 12] = 0xF0;
    vn_reader_feed(r, 0, bad, n, n);
    memcpy(bad, frame, n);
    bad[14 + 6] = 0x20;
    vn_reader_feed(r, 0, bad, n, n);
    /* Random bytes after a valid Ethernet/IPv4 header prefix. */
    uint32_t x = 12345;
    for (int i = 0; i < 2000; i++) {
        memcpy(bad, frame, 14);
        size_t len = 14 + (size_t)(i % 120);
        for (size_t j = 14; j < len; j++) {
            x = x * 1103515245u + 12345u;
            bad[j] = (uint8_t)(x >> 16);
        }
        bad[14] = (uint8_t)(0x40 | (bad[14] & 0x0F));
        vn_reader_feed(r, 0, bad, len, len);
    }
    vn_reader_finish(r);
    assert_true(s->notices > 10);
    assert_false(s->offset_error);
    vn_reader_free(r);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_split_in_and_out_of_order),
        cmocka_unit_test(test_three_way_shuffle_with_overlap),
        cmocka_unit_test(test_retransmission_with_different_bytes),
        cmocka_unit_test(test_urgent_pointer_event),
        cmocka_unit_test(test_gap_reported_by_ack_and_at_end),
        cmocka_unit_test(test_buffer_limit_turns_hole_into_gap),
        cmocka_unit_test(test_ipv6_vlan_both_directions_and_mid_stream_start),
        cmocka_unit_test(test_fin_told_when_the_direction_is_whole),
        cmocka_unit_test(test_sequence_wrap),
        cmocka_unit_test(test_file_round_trip_with_datagrams),
        cmocka_unit_test(test_pcapng_file),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_malformed_frames_give_notices),
    };
    return cmocka_run_group_tests(tests, setup_pattern, NULL);
}
