/* WARP: the input as one chunk (vw_warp_decode) and as a run of chunks cut
 * by their own lengths, each through the W4 sequencing check. */
#include "fuzz.h"
#include "vitcp/warp.h"
#include "vitcp/warp_stream.h"

static volatile uint32_t sink;

static void decode_one(const uint8_t *buf, size_t len, struct vw_warp_seq *seq)
{
    struct vw_warp_chunk c;
    struct vw_findings f;
    vw_findings_clear(&f);
    enum vw_req rc = vw_warp_decode(buf, len, &c, &f);
    fuzz_pdus++;
    FUZZ_CHECK(f.count <= VW_FINDINGS_MAX, "findings overflow");
    if (rc != VW_REQ_NONE)
        return;
    FUZZ_CHECK(fuzz_inside(c.payload, c.payload_len, buf, len), "payload outside the input");
    if (c.payload)
        FUZZ_CHECK(c.payload == buf + c.payload_offset, "payload_offset disagrees with payload");
    struct vw_warp_seq_pos pos;
    vw_findings_clear(&f);
    vw_warp_seq_check(seq, &c, &pos, &f);
    FUZZ_CHECK(f.count <= VW_FINDINGS_MAX, "findings overflow");
    sink += (uint32_t)(uintptr_t)vw_warp_type_name(c.type);
}

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
    struct vw_warp_seq seq = {0};
    decode_one(buf, len, &seq);
    sink += vw_warp_plausible_header(buf, len) + vw_warp_peek_chunk_len(buf, len);
    /* consecutive chunks, each in its own exact block */
    struct vw_warp_seq seq2 = {0};
    for (size_t at = 0; at + 4 <= len;) {
        size_t n = vw_warp_peek_chunk_len(buf + at, len - at);
        if (n < 4 || n > len - at)
            break;
        uint8_t *chunk = fuzz_exact_copy(buf + at, n);
        decode_one(chunk, n, &seq2);
        free(chunk);
        at += n;
    }
    return 0;
}
