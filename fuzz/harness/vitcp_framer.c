/* VI/TCP: the stream framer (vw_vitcp_framer_feed) fed the input whole and
 * in chunks, and a session (framer + connection rules) on it. */
#include "fuzz.h"
#include "stream_check.h"
#include "vitcp/vitcp_stream.h"

static void on_seg(void *ctx, const uint8_t *raw, size_t len, uint64_t off, const struct vw_vitcp_seg *seg,
                   enum vw_req err, const struct vw_findings *f)
{
    (void)err;
    stream_record_pdu(ctx, raw, len, off);
    FUZZ_CHECK(f == NULL || f->count <= VW_FINDINGS_MAX, "findings overflow");
    if (seg && seg->payload && err == VW_REQ_NONE)
        FUZZ_CHECK(fuzz_inside(seg->payload, seg->payload_len, raw, len), "payload outside its PDU");
}

static void on_session_seg(void *ctx, const uint8_t *raw, size_t len, uint64_t off,
                           const struct vw_vitcp_seg *seg, enum vw_req err, const struct vw_findings *f)
{
    (void)ctx, (void)raw, (void)len, (void)off, (void)seg, (void)err;
    FUZZ_CHECK(f == NULL || f->count <= VW_FINDINGS_MAX, "findings overflow");
    fuzz_pdus++;
}

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
    uint32_t h = fuzz_hash(buf, len) | 1u;
    enum vw_vitcp_crc_mode mode = (enum vw_vitcp_crc_mode)(h % 3);

    struct stream_record whole = {0}, split = {0};
    struct vw_vitcp_framer f;
    FUZZ_CHECK(vw_vitcp_framer_init(&f, mode) == 0, "framer init");
    whole.fed = len;
    enum vw_req e_whole = vw_vitcp_framer_feed(&f, buf, len, on_seg, &whole);
    vw_vitcp_framer_free(&f);

    FUZZ_CHECK(vw_vitcp_framer_init(&f, mode) == 0, "framer init");
    enum vw_req e_split = VW_REQ_NONE;
    for (size_t at = 0; at < len;) {
        size_t k = stream_chunk(&h, len - at);
        /* each chunk in its own exact heap block */
        uint8_t *chunk = fuzz_exact_copy(buf + at, k);
        split.fed += k;
        e_split = vw_vitcp_framer_feed(&f, chunk, k, on_seg, &split);
        free(chunk);
        at += k;
    }
    vw_vitcp_framer_free(&f);
    FUZZ_CHECK(whole.pdus == split.pdus && whole.digest == split.digest, "split feed framed other PDUs");
    FUZZ_CHECK(e_whole == e_split || len == 0, "split feed ended with another error");

    /* both directions of a session: the input as the client's bytes, then as the server's */
    struct vw_vitcp_session s;
    FUZZ_CHECK(vw_vitcp_session_init(&s) == 0, "session init");
    vw_vitcp_session_feed(&s, 0, buf, len, on_session_seg, NULL);
    vw_vitcp_session_feed(&s, 1, buf, len, on_session_seg, NULL);
    struct vw_findings fs;
    vw_findings_clear(&fs);
    vw_vitcp_conn_finish(&s.conn, &fs);
    vw_vitcp_session_free(&s);
    return 0;
}
