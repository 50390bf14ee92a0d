/* PacketWay EEP: the input as a message over a link and over a datagram,
 * its records and OH fields walked, the display notes, and the router
 * check against itself and against the copy a router would forward, and
 * the two through the pairer. */
#include <string.h>

#include "fuzz.h"
#include "vitcp/pktway.h"

static volatile uint32_t sink;

static void walk(const uint8_t *area, size_t area_len, const uint8_t *buf, size_t len)
{
    size_t pos = 0;
    unsigned steps = 0;
    struct vw_eep_route rt;
    while (area && vw_eep_route_next(area, area_len, &pos, &rt) == 1) {
        FUZZ_CHECK(pos <= area_len && ++steps <= area_len, "record walk past its area or stuck");
        FUZZ_CHECK(fuzz_inside(rt.data, rt.data_len, buf, len), "record data outside the input");
    }
    pos = 0, steps = 0;
    struct vw_eep_oh oh;
    while (area && vw_eep_oh_next(area, area_len, &pos, &oh) == 1) {
        FUZZ_CHECK(pos <= area_len && ++steps <= area_len, "OH walk past its area or stuck");
        FUZZ_CHECK(fuzz_inside(oh.data, oh.data_len, buf, len), "OH data outside the input");
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
    struct vw_eep_msg m[2];
    bool ok[2];
    for (int carrier = 0; carrier < 2; carrier++) {
        struct vw_findings f;
        vw_findings_clear(&f);
        struct vw_eep_msg *msg = &m[carrier];
        ok[carrier] = vw_eep_decode_on(buf, len, (enum vw_eep_carrier)carrier, msg, &f) == VW_REQ_NONE;
        fuzz_pdus++;
        FUZZ_CHECK(f.count <= VW_FINDINGS_MAX, "findings overflow");
        if (!ok[carrier])
            continue;
        FUZZ_CHECK(fuzz_inside(msg->routes, msg->routes_len, buf, len), "records outside the input");
        FUZZ_CHECK(fuzz_inside(msg->oh, msg->oh_len, buf, len), "OH fields outside the input");
        FUZZ_CHECK(fuzz_inside(msg->data, msg->data_len, buf, len), "data outside the input");
        FUZZ_CHECK(fuzz_inside(msg->ot, msg->ot_len, buf, len), "trailer fields outside the input");
        FUZZ_CHECK(msg->tail_offset + 8 <= len, "TAIL outside the input");
        walk(msg->routes, msg->routes_len, buf, len);
        walk(msg->oh, msg->oh_len, buf, len);
        vw_findings_clear(&f);
        vw_eep_notes(buf, msg, NULL, &f);
        FUZZ_CHECK(f.count <= VW_FINDINGS_MAX, "findings overflow");
    }
    walk(buf, len, buf, len);
    enum vw_eep_route_kind kind;
    sink += (uint32_t)vw_eep_record_kind(buf, len, &kind);

    if (ok[0]) {
        /* the copy a router forwards: the first record consumed, the TAIL shifted */
        size_t cut = 0;
        struct vw_eep_route rt;
        size_t pos = 0;
        if (m[0].routes && vw_eep_route_next(m[0].routes, m[0].routes_len, &pos, &rt) == 1)
            cut = pos;
        uint8_t *out = fuzz_exact_copy(buf + cut, len - cut);
        struct vw_eep_msg om;
        if (vw_eep_decode(out, len - cut, &om, NULL) == VW_REQ_NONE) {
            for (int link = 0; link < 3; link++) {
                struct vw_findings f;
                vw_findings_clear(&f);
                sink += vw_eep_forward_check(buf, &m[0], out, &om, (enum vw_eep_link_state)link, &f);
                vw_findings_clear(&f);
                sink += vw_eep_forward_check(buf, &m[0], buf, &m[0], (enum vw_eep_link_state)link, &f);
                FUZZ_CHECK(f.count <= VW_FINDINGS_MAX, "findings overflow");
            }
            /* the two hops through the pairer (P11): in A -> R, the copy R -> B, the copy again */
            static const uint8_t a[6] = {2, 0, 0, 0, 0, 0xA}, r[6] = {2, 0, 0, 0, 0, 1}, b[6] = {2, 0, 0, 0, 0, 0xB};
            struct vw_eep_pairer *pr = vw_eep_pairer_new();
            if (pr) {
                struct vw_eep_hop h1, h2;
                vw_eep_hop_set(&h1, a, r, 6);
                vw_eep_hop_set(&h2, r, b, 6);
                struct vw_findings f;
                uint64_t first = 0;
                vw_findings_clear(&f);
                FUZZ_CHECK(!vw_eep_pairer_add(pr, 1, &h1, VW_EEP_CARRIER_LINK, buf, &m[0], &first, &f),
                           "a first message paired");
                vw_findings_clear(&f);
                bool paired = vw_eep_pairer_add(pr, 2, &h2, VW_EEP_CARRIER_LINK, out, &om, &first, &f);
                FUZZ_CHECK(!paired || first == 1, "paired with a frame never offered");
                FUZZ_CHECK(f.count <= VW_FINDINGS_MAX, "findings overflow");
                vw_findings_clear(&f);
                sink += vw_eep_pairer_add(pr, 3, &h2, VW_EEP_CARRIER_LINK, out, &om, &first, &f);
                vw_eep_pairer_free(pr);
            }
        }
        free(out);
    }
    return 0;
}
