/* netio: the input as a capture file (vn_pcap_read: pcap and pcapng, link
 * layers, IP, TCP reassembly), and as one frame fed from memory under every
 * link type the reader decodes. Events must stay consistent: data inside
 * the frame's bytes, per-direction offsets that never go back. */
#include <string.h>

#include "fuzz.h"
#include "vitcp/pcap_reader.h"

#define MAX_CONNS 64

struct events {
    uint64_t next_off[MAX_CONNS][2]; /* delivered edge per direction (DATA and GAP) */
    uint64_t opens, closes;
};

static volatile uint32_t sink;

static void on_tcp(void *ctx, const struct vn_tcp_event *ev)
{
    struct events *e = ctx;
    fuzz_pdus++;
    if (ev->kind == VN_TCP_DATA || ev->kind == VN_TCP_RETX)
        for (size_t i = 0; i < ev->len; i++)
            sink += ev->data[i]; /* ASan checks every byte is live */
    if (ev->conn >= MAX_CONNS)
        return;
    uint64_t *edge = &e->next_off[ev->conn][ev->dir == VN_S2C];
    switch (ev->kind) {
    case VN_TCP_OPEN:
        e->opens++;
        break;
    case VN_TCP_CLOSE:
        e->closes++;
        break;
    case VN_TCP_DATA:
    case VN_TCP_GAP:
        FUZZ_CHECK(ev->offset == *edge, "DATA/GAP not contiguous in its direction");
        *edge = ev->offset + ev->len;
        break;
    case VN_TCP_RETX:
        FUZZ_CHECK(ev->offset < *edge || ev->len == 0, "RETX above the delivered edge");
        break;
    default:
        break;
    }
}

static void on_dgram(void *ctx, const struct vn_datagram *dg)
{
    (void)ctx;
    fuzz_pdus++;
    for (size_t i = 0; i < dg->len; i++)
        sink += dg->data[i];
}

static void on_notice(void *ctx, uint64_t frame, const char *msg)
{
    (void)ctx, (void)frame;
    FUZZ_CHECK(msg != NULL && strlen(msg) < 4096, "notice without a bounded message");
}

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
    struct events ev = {0};
    struct vn_reader_callbacks cb = {on_tcp, on_dgram, on_notice, &ev, NULL};
    /* small limits, so the limit paths run too */
    struct vn_reader_limits lim = {.max_connections = 32, .max_ooo_bytes = 64 * 1024, .retx_history = 4096};
    char err[256];
    struct vn_reader_stats st;
    const char *path = fuzz_scratch_file(buf, len, ".pcap");
    int rc = vn_pcap_read(path, &cb, &lim, &st, err, sizeof err);
    FUZZ_CHECK(rc == 0 || rc == -1, "vn_pcap_read returned neither 0 nor -1");
    if (rc == -1)
        FUZZ_CHECK(memchr(err, '\0', sizeof err) && err[0], "no error message");
    FUZZ_CHECK(ev.opens == ev.closes, "a connection opened without closing, or closed twice");

    static const int linktypes[] = {0, 1, 12, 14, 101, 108, 113, 276};
    for (size_t i = 0; i < sizeof linktypes / sizeof linktypes[0]; i++) {
        if (!vn_reader_linktype_supported(linktypes[i]))
            continue;
        struct events e2 = {0};
        struct vn_reader_callbacks cb2 = {on_tcp, on_dgram, on_notice, &e2, NULL};
        struct vn_reader *r = vn_reader_new(linktypes[i], &cb2, &lim);
        FUZZ_CHECK(r != NULL, "reader allocation");
        vn_reader_feed(r, 1000000, buf, len, len);
        vn_reader_feed(r, 2000000, buf, len / 2, len); /* the same frame cut by the snap length */
        vn_reader_finish(r);
        vn_reader_free(r);
        FUZZ_CHECK(e2.opens == e2.closes, "a connection opened without closing, or closed twice");
    }
    return 0;
}
