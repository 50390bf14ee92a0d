/*
 * IFT over a byte stream. A framer per direction turns bytes (any chunking,
 * as TCP delivers them) into the sender's adaption indication followed by
 * whole frames, applying what the indications negotiated (I6-I9): the
 * sender's HC/PC decide which CRCs its frames carry, the VTag its receiver
 * announced must be in every frame. A connection pairs two framers, fed in
 * capture order, and adds the rules that need both sides (phases, R bit,
 * frames before phase 1).
 */
#ifndef VITCP_IFT_STREAM_H
#define VITCP_IFT_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "vitcp/ift.h"

/* One PDU of an IFT stream. */
struct vw_ift_pdu {
    bool is_indication;
    struct vw_ift_ind ind;     /* when is_indication */
    struct vw_ift_frame frame; /* otherwise */
};

/* Called once per whole PDU; raw/len valid only during the call;
 * stream_off is its offset in the direction's byte stream. err is
 * VW_REQ_NONE when pdu was decoded, else the fatal rule (pdu partial).
 * findings holds every rule violation seen in this PDU. */
typedef void (*vw_ift_pdu_cb)(void *ctx, const uint8_t *raw, size_t len, uint64_t stream_off,
                              const struct vw_ift_pdu *pdu, enum vw_req err,
                              const struct vw_findings *findings);

struct vw_ift_framer {
    uint8_t *buf;            /* reassembly buffer of a split PDU: grows to the PDU's length, NULL until needed */
    size_t cap;
    bool oom;                /* the buffer could not grow: the framer stopped (sticky; bytes were lost) */
    size_t have;
    uint64_t stream_off;       /* stream offset of buf[0] */
    bool ind_seen;             /* the sender's indication has been framed */
    struct vw_ift_ind ind;     /* that indication (ind.reserved is not kept) */
    struct vw_ift_frame_mode mode;
    uint64_t frames;           /* frames delivered */
    enum vw_req error;         /* sticky framing error; VW_REQ_NONE while healthy */
    enum vw_req close_reason;  /* first I8 reaction rule seen (the peer must RST) */
};

/* expect_indication: the stream starts with the sender's indication (the
 * normal case, I7); false for captures that start later, then set the mode
 * with vw_ift_framer_set_mode. Returns 0 (the reassembly buffer is
 * allocated when a frame first arrives split). */
int vw_ift_framer_init(struct vw_ift_framer *f, bool expect_indication);
void vw_ift_framer_free(struct vw_ift_framer *f);
void vw_ift_framer_set_mode(struct vw_ift_framer *f, const struct vw_ift_frame_mode *mode);
/* The VTag the receiver of this direction announced in its indication. */
void vw_ift_framer_set_vtag(struct vw_ift_framer *f, uint16_t vtag);

/* Feed bytes; cb runs for every completed PDU. Returns VW_REQ_NONE or the
 * framing rule broken (bytes that are not an indication where one is due,
 * BC version above 1): the framer then consumes nothing more and keeps
 * returning the error until resynchronised. Never reads outside
 * data[0..len). */
enum vw_req vw_ift_framer_feed(struct vw_ift_framer *f, const uint8_t *data, size_t len,
                               vw_ift_pdu_cb cb, void *ctx);
/* Drop buffered bytes and restart framing at stream_off, keeping the mode. */
void vw_ift_framer_resync(struct vw_ift_framer *f, uint64_t stream_off);

/* --------------------------------------------------------- connection */

/* The negotiation of one connection as its two indications show it (I7,
 * I8): the rules that need both sides. vw_ift_conn keeps one; a caller that
 * frames PDUs itself (the dissector) feeds it indications and frames in
 * capture order. Sides are 0 and 1. */
struct vw_ift_nego {
    bool ind_seen[2];
    struct vw_ift_ind ind[2];  /* each side's first indication (ind.reserved not kept) */
    int phase0_dir;            /* side that sent the first indication (A), -1 until seen */
    bool r_disagree;           /* the R bits of the two indications differ */
    bool incompatible[2];      /* this side's indication has a BC version above ours */
    bool error_frame[2];       /* this side sent a frame its receiver must close on (I8, I12) */
    bool after_error_seen[2];  /* this side sent a frame after the peer's error frame (reported once) */
    /* V29 for IFT: the receiver's reaction counts from when its TCP ACK
     * covered the error frame (the caller's stream unit), once the caller
     * reports ACKs at all (vw_ift_nego_ack); frames it sent before were in
     * flight, no reaction. */
    bool acks_reported;
    uint64_t acked[2];         /* highest ACK side d sent of the other side's bytes */
    bool error_end_known[2];
    uint64_t error_end[2];     /* end of side d's first error frame */
};

void vw_ift_nego_init(struct vw_ift_nego *n);
/* An indication from side dir: IFT-4.2-PHASE (the first one of the
 * connection is phase 0, the answer phase 1, one per side). Rules that bind
 * a reaction are judged by the reaction: the R bits disagreeing is a note
 * (IFT-4.2-R-AGREE then judges every frame either side still sends), and
 * an answer to an incompatible indication breaks IFT-4.2-BC-VERSION-REJECT.
 * Returns true when it is this side's first, which is then in force; a
 * second one changes nothing. */
bool vw_ift_nego_indication(struct vw_ift_nego *n, int dir, const struct vw_ift_ind *ind,
                            struct vw_findings *findings);
/* A frame from side dir: IFT-4-INDICATION-FIRST when that side sent no
 * indication, else IFT-4.2-FRAMES-AFTER-PHASE1 when the peer sent none;
 * IFT-4.2-R-AGREE when the R bits disagreed (the connection must close in
 * error, not carry data), IFT-4.2-BC-VERSION-REJECT when the peer's
 * indication was incompatible (it must be rejected, not answered). */
void vw_ift_nego_frame(const struct vw_ift_nego *n, int dir, struct vw_findings *findings);
/* The mode of frames sent by dir: its own HC/PC and the VTag its peer
 * announced (check_vtag only once that is known). Returns false (mode's
 * hc/pc untouched) when dir's own indication is not known. */
/* I12, the reaction to an erroneous frame, judged on what the receiver
 * sends after it: vw_ift_nego_frame_done takes a frame's complete findings
 * (decoder and connection rules) and remembers whether the frame breaks a
 * rule I8 closes the connection for (wrong VTag, a header or payload CRC
 * the receiver did not announce to ignore with IH/IP, sizes that do not
 * fit); vw_ift_nego_after_error, for each later frame, adds
 * IFT-5.1-NO-DATA-AFTER-ERROR (once per side) when the frame comes from the
 * receiver of such a frame: it carried on instead of closing. */
void vw_ift_nego_frame_done(struct vw_ift_nego *n, int dir, const struct vw_findings *findings);
void vw_ift_nego_after_error(struct vw_ift_nego *n, int dir, struct vw_findings *findings);
/* V29: where the frame vw_ift_nego_frame_done just took ends (the caller's
 * stream unit), and each TCP ACK side dir sends (acked: the other side's
 * next expected byte). Once ACKs are reported, a frame of the receiver
 * counts as carrying on only after its ACK covered the error frame. */
void vw_ift_nego_frame_end(struct vw_ift_nego *n, int dir, uint64_t end);
void vw_ift_nego_ack(struct vw_ift_nego *n, int dir, uint64_t acked);

/* I13: could the bytes at p start a frame of side dir? False (framing is
 * lost there) when both indications are known and the bytes are neither an
 * indication nor a frame: a header_size above VW_IFT_DDP_HDR_PLAUSIBLE_MAX
 * (RFC 5041's headers are 14 and 18 bytes) and a VTag that is not the
 * receiver's: the sizes of the frame before them did not fit. */
#define VW_IFT_DDP_HDR_PLAUSIBLE_MAX 255
bool vw_ift_frame_start_plausible(const uint8_t *p, size_t have, const struct vw_ift_frame_mode *mode);

bool vw_ift_nego_mode(const struct vw_ift_nego *n, int dir, struct vw_ift_frame_mode *mode);
/* Both indications are known and both set R: the connection is in RDMA mode (4.2). */
bool vw_ift_nego_rdma(const struct vw_ift_nego *n);
/* The rules of a decoded frame from side dir that depend on what the two
 * indications negotiated: IFT-4.2-R-MODE (in RDMA mode every DDP header
 * carries RDMAP version 1, I5). vw_ift_conn runs it on every frame; a caller
 * that decodes frames itself (lint, dissector) calls it after the decode. */
void vw_ift_nego_frame_rules(const struct vw_ift_nego *n, int dir, const struct vw_ift_frame *frame,
                             struct vw_findings *findings);

/* ------------------------------------------------------------- reader */

/*
 * Reading one direction of a connection as an observer (the lint, test
 * decoders): bytes in any chunking become whole PDUs, each with its stream
 * offset; the caller decodes them and feeds its vw_ift_nego, whose mode for
 * this direction sizes every later frame. Unlike vw_ift_framer, which
 * stops where a sender breaks its CRC announcement (a receiver must close,
 * I8), the reader keeps in step with such a sender: a frame's length
 * follows vw_ift_frame_len_in_step. The layout is chosen only once the
 * bytes after the frame show it (the next frame's VTag, or the end of the
 * stream at vw_ift_reader_finish), so chunking does not change the frames;
 * one exception keeps live streams flowing: a frame that ends exactly
 * where the caller's chunk ends is taken as announced at once.
 */

enum vw_ift_read_status {
    VW_IFT_READ_OK,
    VW_IFT_READ_NOT_INDICATION, /* the direction does not start with an indication: not_indication_rule (I35) */
    VW_IFT_READ_TOO_LARGE,      /* a PDU longer than the reader's limit */
    VW_IFT_READ_NO_MEMORY,
    VW_IFT_READ_STOPPED,        /* the callback asked to stop */
    VW_IFT_READ_FRAMING_LOST,   /* bytes that cannot start a frame (I13, IFT-5.1-FRAME-LEN); lost_off says where */
};

/* Every PDU fits: the longest frame the 16-bit sizes allow. */
#define VW_IFT_READ_LIMIT_MAX VW_IFT_FRAME_MAX

/* One whole PDU of the direction; raw is valid only during the call.
 * is_indication: it starts with the magic (the first one always does).
 * Return false to stop reading (VW_IFT_READ_STOPPED). */
typedef bool (*vw_ift_read_cb)(void *ctx, const uint8_t *raw, size_t len, uint64_t stream_off,
                               bool is_indication);

struct vw_ift_reader {
    const struct vw_ift_nego *nego; /* the caller's; read for each frame's mode */
    int dir;                        /* the side whose bytes this reader gets */
    size_t limit;                   /* longest PDU accepted */
    uint8_t *buf;                   /* bytes of a PDU not yet decidable or whole; NULL until needed */
    size_t have, cap;
    uint64_t stream_off;            /* offset of the first byte not yet delivered */
    enum vw_ift_read_status status; /* sticky */
    uint64_t lost_off;              /* VW_IFT_READ_FRAMING_LOST: stream offset of the foreign bytes */
    uint16_t lost_hs, lost_vtag;    /* ... their header_size and VTag */
    enum vw_req not_indication_rule; /* VW_IFT_READ_NOT_INDICATION: IFT-4.1-MAGIC or IFT-4-INDICATION-FIRST (I35) */
};

/* limit: longest PDU to accept (at least VW_IFT_IND_LEN; VW_IFT_READ_LIMIT_MAX
 * accepts all); the buffer never exceeds it by more than a frame header and
 * two CRCs. Allocates nothing. */
void vw_ift_reader_init(struct vw_ift_reader *r, const struct vw_ift_nego *nego, int dir, size_t limit);
void vw_ift_reader_free(struct vw_ift_reader *r);
/* Feed the direction's next bytes; cb gets every PDU whose length they
 * settle. Returns the (sticky) status; after an error nothing more is read.
 * Never reads outside data[0..len). */
enum vw_ift_read_status vw_ift_reader_feed(struct vw_ift_reader *r, const uint8_t *data, size_t len,
                                           vw_ift_read_cb cb, void *ctx);
/* The stream ended: deliver the PDUs whose length the end settles (a frame
 * that broke its announcement and is the last one). What then remains in
 * r->have is an unfinished PDU. */
enum vw_ift_read_status vw_ift_reader_finish(struct vw_ift_reader *r, vw_ift_read_cb cb, void *ctx);
/* A direction's FIN (I22): cut_bytes of a PDU it never finished (what
 * r->have holds after vw_ift_reader_finish, or what TCP still holds for
 * the plugin) break IFT-5.1-FRAME-TRUNCATED. Lint and the plugin both
 * judge a direction's end with this. */
void vw_ift_direction_end(size_t cut_bytes, struct vw_findings *findings);

struct vw_ift_conn {
    struct vw_ift_framer dir[2];
    struct vw_ift_nego nego;
};

int vw_ift_conn_init(struct vw_ift_conn *c);
void vw_ift_conn_free(struct vw_ift_conn *c);
/* Feed bytes sent by side dir (0 or 1), in capture order across both sides.
 * cb gets every PDU with the framer's findings and the connection rules
 * (IFT-4.2-PHASE, IFT-4.2-R-AGREE, IFT-4.2-FRAMES-AFTER-PHASE1,
 * IFT-4.2-R-MODE). */
enum vw_req vw_ift_conn_feed(struct vw_ift_conn *c, int dir, const uint8_t *data, size_t len,
                             vw_ift_pdu_cb cb, void *ctx);

#endif
