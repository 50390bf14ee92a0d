"""PacketWay EEP dissector: routing records, every header field, OH fields,
IPv4 in the data block, the TAIL, and each expert rule by its requirement ID,
over Ethernet (0x88B5) and UDP (5998)."""
import os
import unittest
import tsharklib

CAPS = os.environ.get("VITCP_TEST_CAPTURES", "")
FIELDS = ["pktway.l2rh.len", "pktway.symbol.type", "pktway.symbol.len", "pktway.version", "pktway.priority",
          "pktway.dt", "pktway.dt.kind", "pktway.te", "pktway.pt", "pktway.endian", "pktway.pl", "pktway.dl",
          "pktway.h", "pktway.sa", "pktway.oh.type", "pktway.oh.mandatory", "pktway.oh.last", "pktway.oh.len",
          "pktway.ei"]

def trafgen_capture(name, args):
    """A capture written by the built vitcp-trafgen into a temporary directory."""
    import subprocess
    import tempfile
    out = os.path.join(tempfile.mkdtemp(prefix="vitcp-heur-"), name)
    gen = os.path.join(os.environ["VITCP_BUILD_DIR"], "trafgen", "vitcp-trafgen")
    subprocess.run([gen] + args + ["--seed", "1", "--no-meta", "-q", "-w", out], check=True)
    return out



def by_frame(name, names, flt):
    rows = tsharklib.fields(os.path.join(CAPS, name), ["frame.number"] + names, flt)
    return {int(r[0]): r[1:] for r in rows}


class PktwayGood(unittest.TestCase):
    def test_fields(self):
        rows = by_frame("pktway-good.pcap", FIELDS, "pktway")
        self.assertEqual(rows[1], ["13", "0x0abcde", "9", "0", "0", "0x000123", "0", "0x0000", "0x0800", "0x00000000",
                                   "4", "4", "0", "0x00000042", "", "", "", "", "0x0000000000000000"])
        self.assertEqual(rows[2], ["", "", "", "0", "0", "0x000123", "0", "0x0007", "0x0001", "0x00000000", "3", "1",
                                   "1", "0x00000042", "5", "0", "1", "4", "0x0000000000000000"])
        self.assertEqual(rows[3][5:9], ["0x7ffffe", "0", "0x0001", "0x0002"])
        self.assertEqual(rows[3][18], "0x0000000000000009")

    def test_ipv4_in_data_block_and_tail_hops(self):
        self.assertEqual(by_frame("pktway-good.pcap", ["ip.src", "ip.dst"], "pktway && ip.proto == 253")[1],
                         ["192.168.7.1", "192.168.7.2"])
        self.assertEqual(by_frame("pktway-good.pcap", ["pktway.ei.hop"], "pktway.ei.hop")[3], ["0,3"])

    def test_good_messages_only_notes(self):
        self.assertEqual(by_frame("pktway-good.pcap", [], "_ws.malformed"), {})
        e = {k: v[0] for k, v in by_frame("pktway-good.pcap", ["_ws.expert.message"], "_ws.expert").items()}
        self.assertIn("[EEP-4B-ROUTES-CONSUMED] 2", e[1])
        self.assertNotIn(2, e)
        self.assertIn("[EEP-6C-LOCAL-ONLY] Hey-You!", e[3])
        self.assertIn("[EEP-10-EI-ERROR]", e[3])


class PktwayInfo(unittest.TestCase):
    def test_info_style_names_addresses_and_keeps_the_row(self):
        rows = by_frame("pktway-good.pcap", ["_ws.col.Protocol", "_ws.col.Info"], "pktway")
        self.assertEqual(rows[2], ["PKTWAY", "Message SA=0x000042 DT=0x000123 PT=RRP DL=1"])
        self.assertEqual(rows[3], ["PKTWAY", "ERR Destination Unknown (UNK) SA=0x000042 DT=Hey-You! PT=ERR DL=1 [EI]"])
        # IPv4 in the data block: IP writes after the EEP summary, the Protocol column stays
        self.assertEqual(rows[1][0], "PKTWAY")
        self.assertTrue(rows[1][1].startswith("Message SA=0x000042 DT=0x000123 PT=IPv4 DL=4 | "))

    def test_header_words_and_address_names(self):
        out = tsharklib.run(os.path.join(CAPS, "pktway-good.pcap"), ["-V", "-Y", "frame.number == 3"])
        self.assertIn("EEP header, Src: 0x000042, Dst: Hey-You!", out)
        self.assertIn("Word 3: 0x00000042 (h, RZ, Source address)", out)
        self.assertIn("[Destination address: Hey-You! (0x7ffffe)]", out)
        self.assertIn("0111 1111 1111 1111 1111 1110 = Destination type: 0x7ffffe", out)

    def test_decode_as_packet_type(self):
        rows = tsharklib.fields(os.path.join(CAPS, "pktway-good.pcap"), ["frame.number", "frame.protocols"],
                                "eth.type", extra=["-d", "pktway.pt==0x0001,eth"])
        self.assertIn("2", [r[0] for r in rows])


class PktwayHeuristic(unittest.TestCase):
    def test_eep_on_another_udp_port(self):
        cap = trafgen_capture("eep-7778.pcap", ["eep-frames", "--eep-udp", "--port", "7778"])
        rows = tsharklib.fields(cap, ["frame.number", "udp.dstport", "pktway.pt"], "pktway")
        self.assertEqual(len(rows), 11)
        self.assertEqual({r[1].split(",")[0] for r in rows}, {"7778"})
        off = tsharklib.fields(cap, ["frame.number"], "pktway", extra=["--disable-heuristic", "pktway_udp"])
        self.assertEqual(off, [])


class PktwayRules(unittest.TestCase):
    def test_each_rule(self):
        e = {k: v[0] for k, v in by_frame("pktway-faults.pcap", ["_ws.expert.message"], "_ws.expert").items()}
        for rid in ("[EEP-6A-VERSION] Version 1", "[EEP-6C-DT-UNDEFINED]", "[EEP-6E-PT-KNOWN] Packet type 0x1234",
                    "[EEP-6G-PL-ZERO-NO-DATA]", "[EEP-6J-RZ-ZERO]", "[EEP-6K-SA-PHYSICAL] Source address 0x800001"):
            self.assertIn(rid, e[1])
        self.assertIn("[EEP-7-OH-FORMAT]", e[2])
        self.assertIn("[EEP-7-MANDATORY-UNKNOWN] Mandatory optional header type 9", e[2])
        self.assertIn("[EEP-6C-DT-KIND]", e[3])
        self.assertIn("[EEP-6H-DL-FITS] DL 1 counts 8 bytes, but 8 more bytes", e[3])  # P30
        self.assertIn("[EEP-9-OT-NEEDS-OH] read as trailer fields", e[3])
        self.assertIn("[EEP-6H-DL-FITS] Data block of 100 words", e[4])
        self.assertIn("[EEP-5A-L2RH-LEN] L2RH with 13 routing bytes needs 16 bytes, 6 left", e[5])
        self.assertIn("[EEP-4A-TRUNCATED] 12 bytes", e[6])
        self.assertIn("[EEP-9-OT-UNSIZED] 8 bytes", e[7])
        for rid in ("[EEP-5B-SYMBOL-PRIORITY]", "[EEP-4A-CARRIAGE] 14 bytes after the TAIL"):
            self.assertIn(rid, e[8])
        rules = by_frame("pktway-faults.pcap", ["pktway.rule"], "pktway.rule")
        self.assertEqual(rules[3], ["EEP-6C-DT-KIND,EEP-6H-DL-FITS,EEP-9-OT-NEEDS-OH"])  # UDP: the TAIL is the last word
        self.assertEqual(rules[5], ["EEP-5A-L2RH-LEN"])
        self.assertEqual(list(by_frame("pktway-faults.pcap", [], "pktway.expert.6k_sa_physical.error")), [1])


if __name__ == "__main__":
    unittest.main()
