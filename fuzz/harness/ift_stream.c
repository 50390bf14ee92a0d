/* IFT streams: the framer (with and without a leading indication) fed the
 * input whole and in chunks, the connection framer on both sides, and the
 * lint's reader (vw_ift_reader) with the negotiation it drives. */
#include <string.h>

#include "fuzz.h"
#include "stream_check.h"
#include "vitcp/ift_stream.h"

static void on_pdu(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_ift_pdu *pdu,
                   enum vw_req err, const struct vw_findings *f)
{
    stream_record_pdu(ctx, raw, len, off);
    FUZZ_CHECK(f == NULL || f->count <= VW_FINDINGS_MAX, "findings overflow");
    if (pdu && !pdu->is_indication && err == VW_REQ_NONE && pdu->frame.payload)
        FUZZ_CHECK(fuzz_inside(pdu->frame.payload, pdu->frame.payload_size, raw, len), "payload outside its PDU");
}

static void on_conn_pdu(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_ift_pdu *pdu,
                        enum vw_req err, const struct vw_findings *f)
{
    (void)ctx, (void)raw, (void)len, (void)off, (void)pdu, (void)err;
    FUZZ_CHECK(f == NULL || f->count <= VW_FINDINGS_MAX, "findings overflow");
    fuzz_pdus++;
}

struct read_ctx {
    struct vw_ift_nego *nego;
    int dir;
    uint64_t next_off;
};

/* The lint's handling of one PDU the reader delivers (conformance/src/proto/ift_lint.c). */
static bool on_read(void *ctx, const uint8_t *raw, size_t len, uint64_t off, bool is_indication)
{
    struct read_ctx *rc = ctx;
    FUZZ_CHECK(off >= rc->next_off, "reader PDUs out of order");
    rc->next_off = off + len;
    fuzz_pdus++;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    if (is_indication || !rc->nego->ind_seen[rc->dir]) {
        struct vw_ift_ind ind;
        if (vw_ift_ind_decode(raw, len, &ind, &fs) != VW_REQ_NONE)
            return false;
        vw_ift_nego_indication(rc->nego, rc->dir, &ind, &fs);
        vw_ift_ind_notes(&ind, &fs);
        return rc->nego->ind_seen[rc->dir] && ind.bc_version <= VW_IFT_BC_VERSION;
    }
    vw_ift_nego_frame(rc->nego, rc->dir, &fs);
    struct vw_ift_frame_mode announced = {0}, carried;
    vw_ift_nego_mode(rc->nego, rc->dir, &announced);
    struct vw_ift_frame fr;
    enum vw_req err = vw_ift_frame_decode_as_sent(raw, len, &announced, &fr, &carried, &fs);
    if (err == VW_REQ_NONE)
        vw_ift_nego_frame_rules(rc->nego, rc->dir, &fr, &fs);
    FUZZ_CHECK(fs.count <= VW_FINDINGS_MAX, "findings overflow");
    return err == VW_REQ_NONE;
}

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
    uint32_t h = fuzz_hash(buf, len) | 1u;
    for (int with_ind = 0; with_ind < 2; with_ind++) {
        struct stream_record whole = {0}, split = {0};
        struct vw_ift_framer f;
        FUZZ_CHECK(vw_ift_framer_init(&f, with_ind) == 0, "framer init");
        whole.fed = len;
        enum vw_req e_whole = vw_ift_framer_feed(&f, buf, len, on_pdu, &whole);
        vw_ift_framer_free(&f);
        FUZZ_CHECK(vw_ift_framer_init(&f, with_ind) == 0, "framer init");
        enum vw_req e_split = VW_REQ_NONE;
        for (size_t at = 0; at < len;) {
            size_t k = stream_chunk(&h, len - at);
            uint8_t *chunk = fuzz_exact_copy(buf + at, k);
            split.fed += k;
            e_split = vw_ift_framer_feed(&f, chunk, k, on_pdu, &split);
            free(chunk);
            at += k;
        }
        vw_ift_framer_free(&f);
        FUZZ_CHECK(whole.pdus == split.pdus && whole.digest == split.digest, "split feed framed other PDUs");
        FUZZ_CHECK(e_whole == e_split || len == 0, "split feed ended with another error");
    }

    struct vw_ift_conn c;
    FUZZ_CHECK(vw_ift_conn_init(&c) == 0, "conn init");
    vw_ift_conn_feed(&c, 0, buf, len, on_conn_pdu, NULL);
    vw_ift_conn_feed(&c, 1, buf, len, on_conn_pdu, NULL);
    vw_ift_conn_free(&c);

    /* the reader, both sides sending the input, fed in chunks */
    struct vw_ift_nego nego;
    struct vw_ift_reader rd[2];
    struct read_ctx rc[2] = {{&nego, 0, 0}, {&nego, 1, 0}};
    vw_ift_nego_init(&nego);
    for (int d = 0; d < 2; d++)
        vw_ift_reader_init(&rd[d], &nego, d, VW_IFT_READ_LIMIT_MAX);
    for (int d = 0; d < 2; d++) {
        for (size_t at = 0; at < len;) {
            size_t k = stream_chunk(&h, len - at);
            vw_ift_reader_feed(&rd[d], buf + at, k, on_read, &rc[d]);
            at += k;
        }
        vw_ift_reader_finish(&rd[d], on_read, &rc[d]);
        FUZZ_CHECK(rd[d].have <= rd[d].cap || rd[d].buf == NULL, "reader holds more than its buffer");
    }
    for (int d = 0; d < 2; d++)
        vw_ift_reader_free(&rd[d]);
    return 0;
}
