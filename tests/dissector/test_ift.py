"""IFT dissector: every field, negotiation applied per direction, CRCs,
split/coalesced frames, the DDP/RDMAP handoff, and one capture per group of
broken rules (each expert item asserted by its requirement ID)."""
import os
import unittest
import tsharklib

CAPS = os.environ.get("VITCP_TEST_CAPTURES", "")
# Every protocol stays enabled: the Send payloads of the test captures are
# text that Wireshark's RPC-over-RDMA heuristic rejects (see capgen_ift.c).


def cap(name):
    return os.path.join(CAPS, name)


def by_frame(capture, names, flt="ift"):
    rows = tsharklib.fields(capture, ["frame.number"] + names, flt)
    return {int(r[0]): r[1:] for r in rows}


class IftGood(unittest.TestCase):
    def test_indication_fields(self):
        rows = by_frame(cap("ift-good.pcap"),
                        ["ift.ai.magic", "ift.ai.version", "ift.ai.bc_version", "ift.ai.flags.ph", "ift.ai.flags.r",
                         "ift.ai.flags.hc", "ift.ai.flags.pc", "ift.ai.flags.sp", "ift.ai.flags.sm", "ift.ai.flags.rm",
                         "ift.ai.vtag", "ift.ai.marker_interval", "ift.ai.crc.status"], "ift.ai")
        self.assertEqual(rows[4], ["0x52444450", "1", "1", "0", "1", "1", "1", "0", "0", "0", "0x1111", "0", "1"])
        self.assertEqual(rows[5], ["0x52444450", "1", "1", "1", "1", "1", "0", "1", "0", "0", "0x2222", "0", "1"])

    def test_frames_follow_each_sides_announcement(self):
        rows = by_frame(cap("ift-good.pcap"),
                        ["ift.header_size", "ift.payload_size", "ift.vtag", "ift.hcrc.status", "ift.pcrc.status",
                         "ift.state.hc", "ift.state.pc", "ift.state.vtag", "ift.state.mode"], "ift.frame")
        # A announced HC+PC and echoes B's VTag; B announced HC only.
        self.assertEqual(rows[6], ["18", "17", "0x2222", "1", "1", "1", "1", "0x2222", "1"])
        self.assertEqual(rows[7], ["14", "12", "0x1111", "1", "3", "1", "0", "0x1111", "1"])
        # split over three segments: reassembled in the last one
        self.assertEqual(rows[10][:5], ["14", "27", "0x2222", "1", "1"])
        # two coalesced frames in one segment
        self.assertEqual(rows[11][:5], ["18,14", "19,13", "0x1111,0x1111", "1,1", "3,3"])
        self.assertEqual(set(rows), {6, 7, 10, 11})

    def test_ddp_rdmap_decoded_by_wireshark(self):
        rows = by_frame(cap("ift-good.pcap"), ["iwarp_rdma.opcode", "iwarp_ddp.msn", "iwarp_ddp.tagged_flag"],
                        "iwarp_ddp_rdmap")
        self.assertEqual(rows[6], ["0x03", "1", "0"])
        self.assertEqual(rows[7][0], "0x00")
        self.assertEqual(rows[7][2], "1")

    def test_no_malformed_and_only_sp_note(self):
        self.assertEqual(by_frame(cap("ift-good.pcap"), [], "_ws.malformed"), {})
        rows = by_frame(cap("ift-good.pcap"), ["_ws.expert.message"], '_ws.expert.message contains "IFT-"')
        self.assertEqual(list(rows), [5])
        self.assertIn("[IFT-4.2-SP-PERMISSION]", rows[5][0])

    def test_no_capture_is_malformed_with_every_protocol_enabled(self):
        # RPC-over-RDMA stays enabled: its heuristic must reject the Send payloads.
        for name in ("ift-good.pcap", "ift-frame-faults.pcap", "ift-ind-faults.pcap", "ift-order.pcap",
                     "ift-heuristic.pcap"):
            self.assertEqual(by_frame(cap(name), [], "_ws.malformed || rpcordma"), {}, name)
        sends = by_frame(cap("ift-good.pcap"), ["iwarp_rdma.opcode"], "iwarp_rdma.opcode == 3")
        self.assertEqual(sorted(sends), [6, 11])

    def test_heuristic_finds_indication_on_any_port(self):
        rows = by_frame(cap("ift-heuristic.pcap"), ["ift.ai.vtag", "ift.vtag", "tcp.dstport"])
        self.assertEqual(rows[4][0], "0x1111")
        self.assertEqual(rows[6][1:], ["0x2222", "40404"])


class IftInfo(unittest.TestCase):
    def test_info_style_and_bad_crcs(self):
        good = by_frame(cap("ift-good.pcap"), ["_ws.col.Info"], "frame")
        self.assertEqual(good[4][0], "Indication Phase=0 VTag=0x1111 [R] [HC] [PC]")
        self.assertEqual(good[5][0], "Indication Phase=1 VTag=0x2222 [R] [HC]")
        # our summary first, Wireshark's DDP/RDMAP after " | "; two frames in one segment
        self.assertEqual(good[6][0], "Frame VTag=0x2222 Hdr=18 Payload=17 | 40001 > 5996 Send [last DDP segment]")
        self.assertEqual(good[11][0], "Frame VTag=0x1111 Hdr=18 Payload=19 | 5996 > 40001 Send [last DDP segment] | "
                                      "Frame VTag=0x1111 Hdr=14 Payload=13 | 5996 > 40001 Write [last DDP segment]")
        # a frame carrying only part of a PDU keeps TCP's text
        self.assertIn("[TCP segment of a reassembled PDU]", good[8][0])
        faults = by_frame(cap("ift-frame-faults.pcap"), ["_ws.col.Info"], "ift")
        self.assertIn("[BAD HEADER CRC] |", faults[6][0])
        self.assertIn("[BAD PAYLOAD CRC] |", faults[7][0])
        self.assertNotIn("BAD", faults[8][0])
        self.assertIn("[BAD CRC]", by_frame(cap("ift-ind-faults.pcap"), ["_ws.col.Info"], "ift")[4][0])

    def test_broken_indication_says_magic_not_crc(self):
        import subprocess
        import tempfile
        out = os.path.join(tempfile.mkdtemp(prefix="vitcp-ift-"), "magic.pcap")
        subprocess.run([os.path.join(os.environ["VITCP_BUILD_DIR"], "trafgen", "vitcp-trafgen"), "ift-session",
                        "--break", "IFT-4.1-MAGIC", "--target", "0", "--seed", "1", "--no-meta", "-q",
                        "-w", out], check=True)
        rows = by_frame(out, ["_ws.col.Info"], "ift.ai")
        self.assertEqual(rows[4][0], "Indication Phase=0 VTag=0x0000 [BAD MAGIC]")  # nothing else was decoded
        self.assertEqual(rows[5][0], "Indication Phase=1 VTag=0xec67 [R] [HC] [PC]")

    def test_root_item_summary(self):
        out = tsharklib.run(cap("ift-good.pcap"), ["-V", "-Y", "frame.number == 5 || frame.number == 6"])
        self.assertIn("iWARP Framing for TCP, Adaption indication, Phase 1 (answer from B), VTag 0x2222", out)
        self.assertIn("iWARP Framing for TCP, Frame, VTag 0x2222, DDP header 18, payload 17", out)


class IftRules(unittest.TestCase):
    def experts(self, name):
        return {k: v[0] for k, v in by_frame(cap(name), ["_ws.expert.message"], "_ws.expert").items()}

    def test_frame_rules(self):
        e = self.experts("ift-frame-faults.pcap")
        self.assertIn("[IFT-5.1-HDR-CRC]", e[6])
        self.assertIn("[IFT-5.1-PAYLOAD-CRC]", e[7])
        self.assertIn("[IFT-4.2-VTAG-MATCH] VTag 0x9999", e[8])
        self.assertIn("[IFT-5.1-CRC-AS-NEGOTIATED] Payload CRC missing", e[9])
        self.assertIn("[IFT-5.1-DDP-HDR-PRESENT] header_size 10", e[10])
        st = by_frame(cap("ift-frame-faults.pcap"), ["ift.hcrc.status", "ift.pcrc.status"], "ift.frame")
        self.assertEqual(st[6], ["0", "1"])
        self.assertEqual(st[7], ["1", "0"])
        self.assertEqual(st[9], ["1,1", "3,1"])  # resynchronised: the next frame is good

    def test_indication_rules(self):
        e = self.experts("ift-ind-faults.pcap")
        for rid in ("[IFT-4.2-BC-VERSION-REJECT]", "[IFT-4.2-RESERVED-ZERO] Reserved flag",
                    "[IFT-4.2-RESERVED-ZERO] Reserved byte 7", "[IFT-4.2-MARKERS]", "[IFT-4.2-IGNORE-CRC]",
                    "[IFT-4.2-IND-CRC]"):
            self.assertIn(rid, e[4])
        for rid in ("[IFT-4.2-VERSION] Version must be 1", "[IFT-4.2-R-AGREE]", "[IFT-4.2-PHASE] The answer"):
            self.assertIn(rid, e[5])
        self.assertIn("[IFT-4.2-VERSION] Newer version", e[6])
        self.assertIn("[IFT-4.2-PHASE] Second adaption indication", e[6])
        st = by_frame(cap("ift-ind-faults.pcap"), ["ift.ai.crc.status"], "ift.ai")
        self.assertEqual(st[4], ["0"])
        self.assertEqual(st[5], ["1"])

    def test_rule_field_and_expert_names_follow_the_catalog(self):
        # ift.rule carries the ID alone; each rule/severity has its own expert field
        rows = by_frame(cap("ift-frame-faults.pcap"), ["ift.rule"], "ift.rule")
        self.assertEqual(rows, {6: ["IFT-5.1-HDR-CRC"], 7: ["IFT-5.1-PAYLOAD-CRC"], 8: ["IFT-4.2-VTAG-MATCH"],
                                9: ["IFT-5.1-CRC-AS-NEGOTIATED"], 10: ["IFT-5.1-DDP-HDR-PRESENT"]})
        self.assertEqual(list(by_frame(cap("ift-frame-faults.pcap"), [], "ift.expert.5_1_hdr_crc.error")), [6])
        notes = by_frame(cap("ift-good.pcap"), [], "ift.expert.4_2_sp_permission.note")
        self.assertEqual(list(notes), [5])

    def test_order_rules(self):
        e = self.experts("ift-order.pcap")
        self.assertIn("[IFT-4-INDICATION-FIRST]", e[4])
        self.assertIn("[IFT-4.2-FRAMES-AFTER-PHASE1]", e[6])


if __name__ == "__main__":
    unittest.main()
