"""Every capture shipped under captures/ as a user opens it: one pass and two
passes (-2, as Wireshark's GUI revisits packets), with the full tree (-V).
No dissector bug, no malformed packet, only the rule findings each capture
was made to show, no warning or error from another protocol, and the
protocol in the Protocol column of the packets that carry it."""
import glob
import os
import re
import unittest

import tsharklib

SOURCE = os.environ.get("VITCP_SOURCE_DIR", "")

# The requirement IDs each capture shows (captures/README.md, "What it shows").
EXPECTED_RULES = {
    "eep-ei-error.pcap": {"EEP-10-EI-ERROR", "EEP-4B-ROUTES-CONSUMED"},
    "eep-frames-udp.pcap": {"EEP-4B-ROUTES-CONSUMED"},
    "eep-frames.pcap": {"EEP-4B-ROUTES-CONSUMED"},
    "eep-oh-no-end.pcap": {"EEP-4B-ROUTES-CONSUMED", "EEP-7-OH-FORMAT"},
    "eep-oversized-dl.pcap": {"EEP-4B-ROUTES-CONSUMED", "EEP-6H-DL-FITS"},
    "ift-bad-hdr-crc.pcap": {"IFT-5.1-HDR-CRC", "IFT-5.1-NO-DATA-AFTER-ERROR"},
    "ift-crc-as-negotiated.pcap": {"IFT-5.1-CRC-AS-NEGOTIATED"},
    "ift-hc-only.pcap": {"IFT-4.2-IGNORE-CRC", "IFT-4.2-SP-PERMISSION"},
    "ift-markers.pcap": {"IFT-4.2-MARKERS"},
    "vitcp-bad-crc.pcap": {"VITCP-3.6-CRC-VALID", "VITCP-3.6-BAD-CRC-REACTION"},
    "vitcp-bad-crc.pcapng": {"VITCP-3.6-CRC-VALID", "VITCP-3.6-BAD-CRC-REACTION"},
    "vitcp-crc-msb-first.pcap": {"VITCP-3.6-CRC-READING"},
    "vitcp-read-window.pcap": {"VITCP-2.2.2.2.6-READ-WINDOW"},
    "vitcp-retx-differs.pcap": {"VITCP-2.2.2.2.5-RETX-SAME-DATA"},
    "vitcp-txerr.pcap": {"VITCP-3.2-TXERR-SEEN"},
    "vitcp-unnegotiated-crc.pcap": {"VITCP-3.6-CRC-ONLY-IF-NEGOTIATED"},
    "warp-bad-adler.pcap": {"WARP-A-ADLER-VALID"},
}
RULE_FIELDS = ["vitcp.rule", "ift.rule", "pktway.rule", "warp.rule"]
OUR_PROTOCOLS = {"VI/TCP", "IFT", "PKTWAY", "WARP"}
# Protocol column of the packets each family's filter selects.
COLUMN = {"vitcp": ("vitcp", "VI/TCP"), "vipl": ("vitcp", "VI/TCP"), "ift": ("ift.ai", "IFT"),
          "eep": ("pktway", "PKTWAY"), "warp": ("warp", "WARP")}


def shipped():
    caps = sorted(glob.glob(os.path.join(SOURCE, "captures", "*.pcap")) +
                  glob.glob(os.path.join(SOURCE, "captures", "*.pcapng")))
    if not caps:
        raise RuntimeError("no captures under %s/captures" % SOURCE)
    return caps


def expert_table(text):
    """(severity section, protocol, summary) rows of tshark -z expert."""
    rows, section = [], None
    for line in text.splitlines():
        m = re.match(r"^(Errors|Warns|Notes|Chats|Comments) \(\d+\)", line)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^\s+(\d+)\s+(\S+)\s+(\S+)\s+(.*)$", line)
        if section and m and m.group(1) != "Frequency":
            rows.append((section, m.group(3), m.group(4)))
    return rows


class ShippedCaptures(unittest.TestCase):
    def test_retransmission_that_differs_is_an_error_in_both_passes(self):
        cap = os.path.join(SOURCE, "captures", "vitcp-retx-differs.pcap")
        for two_pass in (False, True):
            rows = tsharklib.fields(cap, ["frame.number", "vitcp.rule", "_ws.expert.severity"],
                                    "tcp.analysis.retransmission", two_pass=two_pass)
            self.assertEqual([r[:2] for r in rows], [["12", "VITCP-2.2.2.2.5-RETX-SAME-DATA"]])
            self.assertIn("8388608", rows[0][2].split(","))  # PI_ERROR (TCP's retransmission note beside it)
        # identical retransmissions stay silent: the captures without the mutation have none flagged
        self.assertEqual(tsharklib.fields(os.path.join(SOURCE, "captures", "vitcp-full.pcap"), ["frame.number"],
                                          "vitcp.rule", two_pass=True), [])

    def test_no_dissector_bug_or_malformed_in_either_pass(self):
        for cap in shipped():
            for two_pass in (False, True):
                with self.subTest(capture=os.path.basename(cap), two_pass=two_pass):
                    args = ["-V"] + (["-2"] if two_pass else [])
                    out, err = tsharklib.run(cap, args, with_stderr=True)
                    self.assertNotIn("Dissector bug", out + err)
                    self.assertNotIn("Malformed Packet", out)
                    self.assertNotIn("Exception occurred", out)
                    self.assertTrue(out.count("\nFrame ") + out.startswith("Frame ") > 0)

    def test_only_the_findings_each_capture_was_made_to_show(self):
        for cap in shipped():
            name = os.path.basename(cap)
            with self.subTest(capture=name):
                rows = tsharklib.fields(cap, RULE_FIELDS, two_pass=True)
                found = {rid for row in rows for col in row for rid in col.split(",") if rid}
                self.assertEqual(found, EXPECTED_RULES.get(name, set()))
                experts = expert_table(tsharklib.run(cap, ["-2", "-q", "-z", "expert"]))
                foreign = [r for r in experts if r[0] in ("Errors", "Warns") and r[1] not in OUR_PROTOCOLS]
                self.assertEqual(foreign, [])
                ours = {re.match(r"\[([A-Z0-9.-]+)\]", r[2]).group(1) for r in experts
                        if r[1] in OUR_PROTOCOLS and r[2].startswith("[")}
                self.assertEqual(ours, EXPECTED_RULES.get(name, set()))

    def test_protocol_column_names_the_protocol(self):
        for cap in shipped():
            name = os.path.basename(cap)
            flt, proto = COLUMN[name.split("-")[0]]
            with self.subTest(capture=name):
                rows = tsharklib.fields(cap, ["_ws.col.Protocol"], display_filter=flt, two_pass=True)
                self.assertGreater(len(rows), 0)
                self.assertEqual({r[0] for r in rows}, {proto})

    def test_eep_data_blocks_are_real_ip_packets(self):
        for name in ("eep-frames.pcap", "eep-frames-udp.pcap"):
            cap = os.path.join(SOURCE, "captures", name)
            rows = tsharklib.fields(cap, ["pktway.pt", "ip.src", "ipv6.src", "ip.checksum.status",
                                          "udp.checksum.status", "_ws.col.Info"],
                                    display_filter="pktway.data", two_pass=True,
                                    extra=["-o", "ip.check_checksum:TRUE", "-o", "udp.check_checksum:TRUE"])
            self.assertEqual(len(rows), 10, name)
            for pt, ip4, ip6, ipck, udpck, info in rows:
                inner = ip4.split(",")[-1] if pt == "0x0800" else ip6.split(",")[-1]
                self.assertIn(inner, ("192.0.2.1", "2001:db8::1"), name)
                self.assertEqual(udpck.split(",")[-1], "1", name)  # Good (proto_checksum_vals)
                self.assertEqual(set(ipck.split(",")) - {""}, {"1"} if pt == "0x0800" or "udp" in name else set(), name)
                self.assertIn(" | 41000 → 41001 Len=", info)


if __name__ == "__main__":
    unittest.main()
