/* pktway-node's logic (pktway-ref/src/node.c): the input as a message that
 * arrives at an end node and at a router, over UDP and over Ethernet, with
 * the oracles a node must keep: a verdict always, every message it sends
 * decodes, and a fault-free router's copy keeps every router rule
 * (vw_eep_forward_check) against what it received. */
#include <string.h>

#include "fuzz.h"
#include "node.h"

static struct pn_result res;
static struct pn_config cfgs[4];
static bool ready;

static void setup(void)
{
    char err[100];
    for (int i = 0; i < 4; i++) {
        struct pn_config *c = &cfgs[i];
        enum pn_if_kind kind = i & 1 ? PN_IF_ETH : PN_IF_UDP;
        pn_config_init(c, 2);
        c->router = i >= 2;
        c->echo = true;
        c->n_ifs = 2;
        c->if_kind[0] = c->if_kind[1] = kind;
        c->if_mtu[0] = PN_MSG_MAX;
        c->if_mtu[1] = 96;
        c->logical[c->n_logical++] = 0xE00001;
        const char *p = kind == PN_IF_UDP ? "1=10.0.0.1:5998@0" : "1=02:00:00:00:00:01@0";
        const char *q = kind == PN_IF_UDP ? "default=10.0.1.1:5998@1" : "default=02:00:00:00:01:01@1";
        if (pn_peer_parse(c, p, err, sizeof err) || pn_peer_parse(c, q, err, sizeof err))
            abort();
    }
    ready = true;
}

int LLVMFuzzerTestOneInput(const uint8_t *buf, size_t len)
{
    if (!ready)
        setup();
    static const struct pn_hop from = {.ifx = 0, .len = 6, .addr = {10, 0, 0, 9, 0x17, 0x6E}};
    for (int i = 0; i < 4; i++) {
        const struct pn_config *c = &cfgs[i];
        pn_handle(c, 0, &from, buf, len, &res);
        FUZZ_CHECK(res.reason != NULL, "no reason");
        FUZZ_CHECK(res.n_out <= PN_OUT_MAX, "too many messages out");
        FUZZ_CHECK(res.verdict != PN_FORWARDED || c->router, "an end node forwarded");
        if (!res.decoded) {
            FUZZ_CHECK(res.n_out == 0 && res.verdict == PN_DROPPED, "an undecodable message answered or passed on");
            continue;
        }
        fuzz_pdus++;
        enum vw_eep_carrier carrier = c->if_kind[0] == PN_IF_UDP ? VW_EEP_CARRIER_DATAGRAM : VW_EEP_CARRIER_LINK;
        /* A message with a fault may read differently once its first
         * records are gone (P12 looks for misaligned records only in a
         * message with a fault): its copy is only checked for a verdict. */
        struct vw_eep_msg in;
        struct vw_findings inf;
        vw_findings_clear(&inf);
        FUZZ_CHECK(vw_eep_decode_on(buf, len, carrier, &in, &inf) == VW_REQ_NONE, "decoded differently");
        bool faulty = inf.dropped > 0;
        for (unsigned k = 0; k < inf.count; k++)
            faulty |= inf.item[k].severity != VW_SEV_NOTE;
        for (unsigned o = 0; o < res.n_out; o++) {
            const struct pn_out *out = &res.out[o];
            FUZZ_CHECK(out->hop.ifx < c->n_ifs && out->hop.len == 6, "a message without a next hop");
            FUZZ_CHECK(out->len <= c->if_mtu[out->hop.ifx], "a message over the MTU sent");
            struct vw_eep_msg om;
            struct vw_findings f;
            vw_findings_clear(&f);
            bool forward = strcmp(out->kind, "forward") == 0;
            if (forward && faulty)
                continue;
            FUZZ_CHECK(vw_eep_decode_on(out->buf, out->len, carrier, &om, &f) == VW_REQ_NONE,
                       "a message sent does not decode");
            if (!forward) {
                FUZZ_CHECK(om.hdr.sa == c->addr && om.ei == 0 && om.n_l2rh + om.n_symbols == 0,
                           "an originated message not from this node, with EI or records");
                for (unsigned k = 0; k < f.count; k++)
                    FUZZ_CHECK(f.item[k].severity != VW_SEV_ERROR, "an originated message breaks a rule");
                continue;
            }
            vw_findings_clear(&f);
            FUZZ_CHECK(vw_eep_forward_check(buf, &in, out->buf, &om, VW_EEP_LINK_UNKNOWN, &f),
                       "a router's copy breaks a router rule");
        }
    }
    return 0;
}
