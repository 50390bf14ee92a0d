/* IFT: the input as an adaption indication and as a frame under every CRC
 * mode (with and without a VTag to check), decoded as announced and as
 * sent, with the layout guessers and the DDP header decoder. */
#include <string.h>
#include "fuzz.h"
#include "vitcp/ift.h"

static volatile uint32_t sink;

static void check_frame(const struct vw_ift_frame *fr, const uint8_t *buf, size_t len)
{
    FUZZ_CHECK(fuzz_inside(fr->ddp, fr->ddp ? fr->header_size : 0, buf, len), "DDP header outside the input");
    FUZZ_CHECK(fuzz_inside(fr->payload, fr->payload ? fr->payload_size : 0, buf, len), "payload outside the input");
    if (fr->payload)
        FUZZ_CHECK(fr->payload == buf + fr->payload_offset, "payload_offset disagrees with payload");
}

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
    struct vw_findings f;
    struct vw_ift_ind ind;
    vw_findings_clear(&f);
    enum vw_req rc = vw_ift_ind_decode(buf, len, &ind, &f);
    fuzz_pdus++;
    if (rc == VW_REQ_NONE) {
        sink += vw_ift_ind_fatal(&ind);
        vw_ift_ind_notes(&ind, &f);
        char flags[256];
        sink += (uint32_t)vw_ift_flags_str(ind.flags, flags, sizeof flags)[0];
    }
    FUZZ_CHECK(f.count <= VW_FINDINGS_MAX, "findings overflow");
    sink += vw_ift_plausible_indication(buf, len);

    for (unsigned m = 0; m < 8; m++) {
        struct vw_ift_frame_mode mode = {.hc = m & 1, .pc = (m >> 1) & 1, .check_vtag = (m >> 2) & 1,
                                         .vtag = len > 5 ? (uint16_t)(buf[4] << 8 | buf[5]) : 0};
        struct vw_ift_frame fr, fr2;
        struct vw_ift_frame_mode carried;
        vw_findings_clear(&f);
        rc = vw_ift_frame_decode(buf, len, &mode, &fr, &f);
        fuzz_pdus++;
        if (rc == VW_REQ_NONE) {
            check_frame(&fr, buf, len);
            sink += vw_ift_frame_fatal(&fr, &mode);
        }
        vw_findings_clear(&f);
        rc = vw_ift_frame_decode_as_sent(buf, len, &mode, &fr2, &carried, &f);
        if (rc == VW_REQ_NONE)
            check_frame(&fr2, buf, len);
        FUZZ_CHECK(f.count <= VW_FINDINGS_MAX, "findings overflow");
        sink += vw_ift_frame_layout(buf, len, &mode, &carried);
        sink += (uint32_t)vw_ift_peek_frame_len(buf, len, &mode);
        if (len >= 6)
            sink += (uint32_t)vw_ift_frame_len_in_step(buf, len, &mode);
    }
    struct vw_ift_frame_mode guessed;
    sink += vw_ift_guess_mode(buf, len, &guessed);
    struct vw_ddp_hdr ddp;
    if (vw_ddp_decode(buf, len, &ddp))
        sink += (uint32_t)(uintptr_t)vw_rdmap_opcode_name(ddp.rdmap_opcode);
    struct vw_rdmap_read_req rq;
    if (vw_rdmap_read_req_decode(buf, len, &rq)) { /* and back: the same 28 bytes */
        uint8_t again[VW_RDMAP_READ_REQ_HDR_LEN];
        FUZZ_CHECK(vw_rdmap_read_req_encode(&rq, again, sizeof again) == sizeof again &&
                       memcmp(again, buf, sizeof again) == 0,
                   "RDMAP Read Request header does not encode back to its bytes");
    }
    return 0;
}
