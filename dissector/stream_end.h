/*
 * Where a TCP direction of a stream protocol (VI/TCP, IFT, WARP) ends, so
 * the plugin judges what it left unfinished at the same FIN as lint does
 * (V28, I22, W18). TCP hands a subdissector no data-less FIN and never the
 * incomplete last PDU (tcp_dissect_pdus waits for bytes that never come),
 * so each protocol notes after every tcp_dissect_pdus call how many bytes
 * of an unfinished PDU TCP holds, and a postdissector reads TCP's FIN and
 * RST flags. Both on the first pass; the verdicts are kept per frame.
 */
#ifndef VITCP_STREAM_END_H
#define VITCP_STREAM_END_H

#include <epan/packet.h>
#include "rule_experts.h"

typedef struct {
    guint32 pending[2]; /* bytes TCP holds of a PDU the direction has not finished */
    gboolean ended[2];  /* the direction's FIN was seen */
    gboolean closed;    /* both FINs, or an RST */
    gboolean gap[2];    /* TCP's analysis found a segment of the direction missing before it (I37) */
} stream_end_t;

/* What one frame ends. */
typedef struct {
    gboolean dir_ended;   /* the first FIN of the frame's direction */
    gboolean conn_closed; /* the second direction's FIN, or the first RST */
} stream_end_step_t;

/* After tcp_dissect_pdus, on the first pass (dir: the sender's side). */
void stream_end_after_pdus(stream_end_t *se, int dir, tvbuff_t *tvb, packet_info *pinfo);

/* In a postdissector, on the first pass: what this frame from side dir
 * ends, from TCP's flags (nothing if the flags are not in tree). A
 * direction in which TCP's analysis saw a segment missing ("previous
 * segment not captured") ends without dir_ended: TCP may never have handed
 * the protocol all its bytes, so where its last PDU ended is TCP's
 * finding, not the protocol's (I37). */
stream_end_step_t stream_end_frame(stream_end_t *se, int dir, proto_tree *tree);

/* A protocol's postdissector for its ends: judge runs once per TCP frame
 * on the first pass and adds what the frame ends to fs; the kept verdict is
 * shown on every pass as an item of the protocol with the rules' experts. */
typedef void (*stream_end_judge_fn)(packet_info *pinfo, proto_tree *tree, struct vw_findings *fs);
typedef struct {
    const int *proto;
    const gint *ett;
    const rule_experts_t *rules;
    stream_end_judge_fn judge;
    const char *item_text; /* appended to the protocol item */
    const char *info_text; /* appended to the Info column */
} stream_end_dissector_t;

int stream_end_dissect(const stream_end_dissector_t *d, tvbuff_t *tvb, packet_info *pinfo, proto_tree *tree);

/* From proto_reg_handoff: postdissector wants TCP's FIN and RST flags. */
void stream_end_want_flags(dissector_handle_t postdissector);

#endif
