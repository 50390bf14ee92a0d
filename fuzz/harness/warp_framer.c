/* WARP: the stream framer (vw_warp_framer_feed) fed the input whole and in chunks.
 * One exception to "the same PDUs however the bytes arrive" (W17): a Chunk
 * length of the payload only is named from the bytes at hand up to the end
 * of the caller's chunk, so a split feed may not see the evidence the whole
 * one saw. It can only see less (the evidence grows with the bytes), so then
 * the whole feed named it, stopped under WARP-A-CHUNK-LEN, and its PDUs are
 * the split feed's first ones. */
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

/* The split feed: its record, and its digest once it had as many PDUs as the whole feed. */
struct split_record {
    struct stream_record r;
    uint64_t want;
    uint32_t digest_at_want;
};

static void on_split_chunk(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_warp_chunk *c,
                           enum vw_req err, const struct vw_findings *f)
{
    struct split_record *s = ctx;
    on_chunk(&s->r, raw, len, off, c, err, f);
    if (s->r.pdus == s->want)
        s->digest_at_want = s->r.digest;
}

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
    uint32_t h = fuzz_hash(buf, len) | 1u;
    struct stream_record whole = {0};
    struct split_record sr = {0};
    struct stream_record *split = &sr.r;
    struct vw_warp_framer f;
    FUZZ_CHECK(vw_warp_framer_init(&f) == 0, "framer init");
    whole.fed = len;
    enum vw_req e_whole = vw_warp_framer_feed(&f, buf, len, on_chunk, &whole);
    enum vw_warp_po po_whole = f.payload_only;
    vw_warp_framer_free(&f);
    sr.want = whole.pdus; /* 0 PDUs: the digest of none */
    FUZZ_CHECK(vw_warp_framer_init(&f) == 0, "framer init");
    enum vw_req e_split = VW_REQ_NONE;
    for (size_t at = 0; at < len;) {
        size_t k = stream_chunk(&h, len - at);
        uint8_t *chunk = fuzz_exact_copy(buf + at, k);
        split->fed += k;
        e_split = vw_warp_framer_feed(&f, chunk, k, on_split_chunk, &sr);
        free(chunk);
        at += k;
    }
    enum vw_warp_po po_split = f.payload_only;
    vw_warp_framer_free(&f);
    FUZZ_CHECK(po_split == VW_WARP_PO_NO || po_whole != VW_WARP_PO_NO, "split feed named a reading the whole one did not");
    bool same = whole.pdus == split->pdus && whole.digest == split->digest && e_whole == e_split;
    if (po_whole != VW_WARP_PO_NO && !same) {
        FUZZ_CHECK(e_whole == VW_REQ_WARP_A_CHUNK_LEN, "payload-only reading without WARP-A-CHUNK-LEN");
        FUZZ_CHECK(split->pdus >= whole.pdus && sr.digest_at_want == whole.digest,
                   "split feed framed other PDUs before the payload-only reading");
        return 0;
    }
    FUZZ_CHECK(whole.pdus == split->pdus && whole.digest == split->digest, "split feed framed other PDUs");
    FUZZ_CHECK(e_whole == e_split || len == 0, "split feed ended with another error");
    return 0;
}
