/* PacketWay EEP's lint module (conform/protocol.h): over Ethernet
 * (Ethertype 0x88B5) or UDP (port), one message per frame, decoded as its
 * carrier delivers it (P1); both hops of a message through a router are
 * paired (P11, P31) as the dissector pairs them. */
#include "conform/proto/eep.h"

#include <stdio.h>

#include "vitcp/pcap_reader.h"
#include "vitcp/pktway.h"

enum { COUNT_MESSAGES };

/* --eep-router (P31), its only option: checked here, so that the lint never
 * meets a bad address. */
static int check_option(const char *name, const char *value, char *why, size_t whylen)
{
    (void)name;
    struct vw_eep_pairer *probe = vw_eep_pairer_new();
    char bad[64] = "";
    bool ok = probe && vw_eep_pairer_add_routers(probe, value, bad, sizeof bad) && *value;
    vw_eep_pairer_free(probe);
    if (!ok) {
        snprintf(why, whylen, "bad --eep-router address '%s' (MAC aa:bb:cc:dd:ee:ff, IPv4 or IPv6; commas between "
                 "several)", *value ? bad : value);
        return -1;
    }
    return 0;
}

static void datagram(struct cf_lint *l, const struct vn_datagram *dg)
{
    enum vw_eep_carrier carrier = dg->kind == VN_DGRAM_ETH ? VW_EEP_CARRIER_LINK : VW_EEP_CARRIER_DATAGRAM;
    if (dg->truncated) {
        cf_lint_issue(l, dg->frame, -1, VW_REQ_NONE, VW_SEV_NOTE,
                      "EEP message cut by the capture's snap length: not checked");
        return;
    }
    cf_lint_counted(l, COUNT_MESSAGES);
    struct vw_eep_msg msg;
    struct vw_findings fs;
    vw_findings_clear(&fs);
    enum vw_req err = vw_eep_decode_on(dg->data, dg->len, carrier, &msg, &fs);
    if (err == VW_REQ_NONE)
        vw_eep_notes(dg->data, &msg, NULL, &fs);
    const char *what = carrier == VW_EEP_CARRIER_LINK ? "EEP message (Ethernet)" : "EEP message (UDP)";
    cf_lint_findings(l, err, what, "cannot be parsed", &fs);
    if (err != VW_REQ_NONE)
        return;
    /* Both hops of a message through a router (P11, P31): the wire library
     * pairs the copies by what a router may not change, as the dissector
     * does; --eep-router names router addresses. */
    struct vw_eep_pairer **pairs = (struct vw_eep_pairer **)cf_lint_run_state(l);
    if (!*pairs) {
        if (!(*pairs = vw_eep_pairer_new())) {
            cf_lint_out_of_memory(l);
            return;
        }
        /* --eep-router (checked by check_option), NULL: pair by content (P31) */
        vw_eep_pairer_add_routers(*pairs, cf_lint_option(l, 0), NULL, 0);
    }
    struct vw_eep_hop hop;
    if (carrier == VW_EEP_CARRIER_LINK)
        vw_eep_hop_set(&hop, dg->src_mac, dg->dst_mac, 6);
    else
        vw_eep_hop_set(&hop, dg->src.ip.addr, dg->dst.ip.addr, dg->src.ip.family == 4 ? 4 : 16);
    vw_eep_hop_set_time(&hop, dg->ts_usec);
    uint64_t first = 0;
    vw_findings_clear(&fs);
    if (vw_eep_pairer_add(*pairs, dg->frame, &hop, carrier, dg->data, &msg, &first, &fs)) {
        char hop_what[80];
        snprintf(hop_what, sizeof hop_what, "%s, router's copy of frame %llu", what, (unsigned long long)first);
        cf_lint_findings(l, VW_REQ_NONE, hop_what, "", &fs);
    }
}

static void run_free(void *run_state)
{
    vw_eep_pairer_free(run_state);
}

static const struct cf_option options[] = {{"--eep-router", true}, {NULL, false}};

const struct cf_lint_module cf_lint_eep = {
    .protocol = &cf_proto_eep,
    .title = "EEP",
    .port_option = "--eep-port",
    .usage = "[--eep-router ADDRS]",
    .help = "  PacketWay EEP: Ethertype 0x88B5, UDP port --eep-port (5998). --eep-router names router\n"
            "  addresses (MAC, IPv4, IPv6; commas) where pairing a router's hops is ambiguous.\n",
    .options = options,
    .check_option = check_option,
    .counters = {{"eep_messages", "EEP messages"}},
    .datagram = datagram,
    .run_free = run_free,
};
