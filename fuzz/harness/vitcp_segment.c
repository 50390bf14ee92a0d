/* VI/TCP: one segment through vw_vitcp_decode under each CRC reading, the
 * segment rules, and the CE options walk of what it found. */
#include "fuzz.h"
#include "vitcp/vitcp.h"
#include "vitcp/vitcp_stream.h"

static volatile uint32_t sink;

static void walk_options(const uint8_t *opts, size_t opts_len, const uint8_t *buf, size_t len)
{
    size_t pos = 0;
    uint16_t type, olen;
    const uint8_t *d;
    unsigned steps = 0;
    while (vw_vitcp_opt_next(opts, opts_len, &pos, &type, &olen, &d) == 1) {
        FUZZ_CHECK(pos <= opts_len, "option walk moved past its area");
        FUZZ_CHECK(++steps <= opts_len, "option walk does not progress");
        if (d)
            FUZZ_CHECK(fuzz_inside(d, olen >= 4 ? olen - 4u : 0u, buf, len), "option data outside the input");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
    static const enum vw_vitcp_crc_mode modes[] = {VW_VITCP_CRC_OFF, VW_VITCP_CRC_ON, VW_VITCP_CRC_AUTO};
    for (unsigned m = 0; m < 3; m++) {
        struct vw_vitcp_seg seg;
        struct vw_findings f;
        vw_findings_clear(&f);
        enum vw_req rc = vw_vitcp_decode(buf, len, modes[m], &seg, &f);
        fuzz_pdus++;
        FUZZ_CHECK(f.count <= VW_FINDINGS_MAX, "findings overflow");
        if (rc != VW_REQ_NONE)
            continue;
        FUZZ_CHECK(fuzz_inside(seg.payload, seg.payload_len, buf, len), "payload outside the input");
        if (seg.payload) {
            FUZZ_CHECK(seg.payload == buf + seg.payload_offset, "payload_offset disagrees with payload");
            for (size_t i = 0; i < seg.payload_len; i++)
                sink += seg.payload[i];
        }
        if (seg.has_ce && seg.ce.options) {
            FUZZ_CHECK(fuzz_inside(seg.ce.options, seg.ce.options_len, buf, len), "CE options outside the input");
            walk_options(seg.ce.options, seg.ce.options_len, buf, len);
        }
        vw_findings_clear(&f);
        vw_vitcp_check_segment(&seg, &f);
        FUZZ_CHECK(f.count <= VW_FINDINGS_MAX, "findings overflow");
    }
    sink += vw_vitcp_plausible_header(buf, len) + vw_vitcp_peek_seg_len(buf, len);
    return 0;
}
