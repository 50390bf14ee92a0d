/* WARP's lint module (conform/protocol.h): each direction's chunks through
 * the wire library's WARP framer (its sequencing and Adler rules). WARP
 * has no magic and its header is too weak a sign: only its port selects it. */
#include "conform/proto/warp.h"

#include <stdio.h>

#include "vitcp/pcap_reader.h"
#include "vitcp/warp_stream.h"

enum { COUNT_CONNECTIONS, COUNT_CHUNKS };

static int conn_open(struct cf_lint *l, struct cf_lint_flow *f, const struct vn_tcp_event *ev)
{
    (void)ev;
    struct vw_warp_framer *framer = f->state;
    if (vw_warp_framer_init(&framer[0]) != 0 || vw_warp_framer_init(&framer[1]) != 0)
        return -1; /* conn_free frees what was made */
    cf_lint_counted(l, COUNT_CONNECTIONS);
    return 0;
}

static void conn_free(struct cf_lint_flow *f)
{
    struct vw_warp_framer *framer = f->state;
    vw_warp_framer_free(&framer[0]);
    vw_warp_framer_free(&framer[1]);
}

static void on_chunk(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_warp_chunk *ch,
                     enum vw_req err, const struct vw_findings *fs)
{
    (void)raw;
    (void)len;
    (void)off;
    struct cf_lint *l = ctx;
    cf_lint_counted(l, COUNT_CHUNKS);
    char what[48];
    snprintf(what, sizeof what, "WARP %s chunk", vw_warp_type_name(ch->type));
    cf_lint_findings(l, err, what, "cannot be parsed", fs);
}

static void data(struct cf_lint *l, struct cf_lint_flow *f, int dir, const struct vn_tcp_event *ev)
{
    struct vw_warp_framer *framer = f->state;
    enum vw_req e = vw_warp_framer_feed(&framer[dir], ev->data, ev->len, on_chunk, l);
    if (e == VW_REQ_NONE)
        return;
    f->dead[dir] = true;
    const char *why = framer[dir].no_adler_reading ? VW_WARP_NO_ADLER_TEXT
                                                   : vw_warp_payload_only_text(framer[dir].payload_only);
    cf_lint_issue(l, ev->frame, dir, e, VW_SEV_ERROR, "WARP framing lost%s%s: the rest of this direction is not checked",
                  why ? ": " : "", why ? why : "");
}

/* A direction's FIN (W18): a chunk it left unfinished. */
static void direction_end(struct cf_lint *l, struct cf_lint_flow *f, int dir, struct vw_findings *fs)
{
    (void)l;
    if (f->dead[dir])
        return;
    struct vw_warp_framer *framer = f->state;
    vw_warp_framer_finish(&framer[dir], fs);
    f->dead[dir] = true;
}

const struct cf_lint_module cf_lint_warp = {
    .protocol = &cf_proto_warp,
    .title = "WARP",
    .port_option = "--warp-port",
    .help = "  WARP: TCP port --warp-port (5997).\n",
    .counters = {{"warp_connections", "WARP connections"}, {"warp_chunks", "chunks"}},
    .from_start = true,
    .heavy = true,
    .conn_size = 2 * sizeof(struct vw_warp_framer),
    .conn_open = conn_open,
    .conn_free = conn_free,
    .data = data,
    .direction_end = direction_end,
};
