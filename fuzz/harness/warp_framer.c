/* WARP: the stream framer (vw_warp_framer_feed) fed the input whole and in chunks. */
#include "fuzz.h"
#include "stream_check.h"
#include "vitcp/warp_stream.h"

static void on_chunk(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_warp_chunk *c,
                     enum vw_req err, const struct vw_findings *f)
{
    stream_record_pdu(ctx, raw, len, off);
    FUZZ_CHECK(f == NULL || f->count <= VW_FINDINGS_MAX, "findings overflow");
    if (c && err == VW_REQ_NONE && c->payload)
        FUZZ_CHECK(fuzz_inside(c->payload, c->payload_len, raw, len), "payload outside its PDU");
}

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
    uint32_t h = fuzz_hash(buf, len) | 1u;
    struct stream_record whole = {0}, split = {0};
    struct vw_warp_framer f;
    FUZZ_CHECK(vw_warp_framer_init(&f) == 0, "framer init");
    whole.fed = len;
    enum vw_req e_whole = vw_warp_framer_feed(&f, buf, len, on_chunk, &whole);
    vw_warp_framer_free(&f);
    FUZZ_CHECK(vw_warp_framer_init(&f) == 0, "framer init");
    enum vw_req e_split = VW_REQ_NONE;
    for (size_t at = 0; at < len;) {
        size_t k = stream_chunk(&h, len - at);
        uint8_t *chunk = fuzz_exact_copy(buf + at, k);
        split.fed += k;
        e_split = vw_warp_framer_feed(&f, chunk, k, on_chunk, &split);
        free(chunk);
        at += k;
    }
    vw_warp_framer_free(&f);
    FUZZ_CHECK(whole.pdus == split.pdus && whole.digest == split.digest, "split feed framed other PDUs");
    FUZZ_CHECK(e_whole == e_split || len == 0, "split feed ended with another error");
    return 0;
}
