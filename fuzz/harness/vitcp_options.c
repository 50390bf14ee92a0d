/* VI/TCP: the CE options walk (vw_vitcp_opt_next) over an arbitrary area,
 * as the decoder, lint and dissector call it on a CE segment's tail. */
#include "fuzz.h"
#include "vitcp/vitcp.h"

static volatile uint32_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
    /* the whole input, then every suffix start the first bytes choose, so a
     * walk also begins mid-option */
    size_t starts[3] = {0, len ? buf[0] % (len + 1) : 0, len > 1 ? (size_t)(buf[1] & 3) * 4 % (len + 1) : 0};
    for (unsigned s = 0; s < 3; s++) {
        const uint8_t *area = buf + starts[s];
        size_t area_len = len - starts[s];
        size_t pos = 0;
        uint16_t type, olen;
        const uint8_t *d;
        unsigned steps = 0;
        int k;
        while ((k = vw_vitcp_opt_next(area, area_len, &pos, &type, &olen, &d)) == 1) {
            fuzz_pdus++;
            FUZZ_CHECK(pos <= area_len, "option walk moved past its area");
            FUZZ_CHECK(++steps <= area_len, "option walk does not progress");
            if (d) {
                size_t dl = olen >= 4 ? olen - 4u : 0u;
                FUZZ_CHECK(fuzz_inside(d, dl, area, area_len), "option data outside the area");
                for (size_t i = 0; i < dl; i++)
                    sink += d[i];
            }
            sink += (uint32_t)(uintptr_t)vw_vitcp_opt_name(type);
        }
        FUZZ_CHECK(k == 0 || k == -1, "option walk returned neither 1, 0 nor -1");
    }
    return 0;
}
