"""VI/TCP dissector: fields, CRC, framing, connection state, reassembly, RDMA
read tracking and rule experts, on the captures capgen_vitcp writes.

Every check runs in one pass and in two passes (-2) unless it depends on
knowing the future (links from a request to its response, unanswered reads).
"""
import os
import unittest

import tsharklib

CAPS = os.environ.get("VITCP_TEST_CAPTURES", "")


def cap(name):
    return os.path.join(CAPS, name)


def rows(name, names, two_pass=False, display_filter="vitcp", extra=()):
    """{frame number: [field values...]} for the VI/TCP frames of a capture."""
    out = tsharklib.fields(cap(name), ["frame.number"] + list(names), display_filter=display_filter,
                           two_pass=two_pass, extra=extra)
    return {int(r[0]): r[1:] for r in out}


def rules_by_frame(name, two_pass=False):
    return {f: set(v[0].split(",")) - {""} for f, v in rows(name, ["vitcp.rule"], two_pass).items()}


class BothPasses:
    """Mixin: run a check with and without -2."""

    def both(self, check):
        for two_pass in (False, True):
            with self.subTest(two_pass=two_pass):
                check(two_pass)


class Fields(unittest.TestCase, BothPasses):
    def test_types_and_header_fields(self):
        def check(two_pass):
            r = rows("vitcp-basic.pcap", ["vitcp.version", "vitcp.type", "vitcp.msg_num", "vitcp.seg_len",
                                          "vitcp.flags.eom", "vitcp.flags.idv", "vitcp.imm_data",
                                          "vitcp.msg_ack", "vitcp.rx_desc_posted"], two_pass)
            self.assertEqual([r[f][1] for f in sorted(r)], ["5", "6", "0", "1", "2", "3", "4", "0", "0", "0"])
            self.assertEqual(r[4][0], "1")
            self.assertEqual(r[4][2], "100")
            self.assertEqual(r[5][2], "500")
            # Send with immediate data: 24 + 100 + CRC 4
            self.assertEqual(r[6][3], "128")
            self.assertEqual(r[6][5], "1")
            self.assertEqual(r[6][6], "0xcafef00d")
            self.assertEqual(r[6][7], "500")
            # NOP: Message ACK and Rx Descriptors Posted
            self.assertEqual(r[10][7], "103")
            self.assertEqual(r[10][8], "12")
            self.assertEqual(r[11][4], "0")  # first of three segments: no EOM
            self.assertEqual(r[13][4], "1")
        self.both(check)

    def test_rdma_header(self):
        r = rows("vitcp-basic.pcap", ["vitcp.rdma.addr", "vitcp.rdma.handle", "vitcp.rdma.len"])
        self.assertEqual(r[7], ["0x1122334455667788", "0xabcd0001", "64"])
        self.assertEqual(r[8], ["0x0000000000002000", "0xabcd0002", "48"])

    def test_ce_header(self):
        r = rows("vitcp-basic.pcap", ["vitcp.ce.attrs", "vitcp.ce.attrs.reliable_delivery",
                                      "vitcp.ce.attrs.rdma_read", "vitcp.ce.mtu", "vitcp.ce.calling_disc_str",
                                      "vitcp.ce.called_disc_str", "vitcp.ce.rdma_read_window", "vitcp.opt.type",
                                      "vitcp.ce.calling_disc_len"], display_filter="vitcp.ce.attrs")
        self.assertEqual(r[4], ["0x001a", "1", "1", "65536", "client-1", "server-A", "4", "1,0", "8"])
        self.assertEqual(r[5][3], "32768")
        self.assertEqual(r[5][6], "8")

    def test_info_column(self):
        r = rows("vitcp-basic.pcap", ["_ws.col.Info"])
        self.assertEqual(r[11][0], "Send Msg=104 Off=0 Len=1000")
        self.assertEqual(r[13][0], "Send Msg=104 Off=2000 Len=500 [EOM]")
        self.assertEqual(r[6][0], "Send Msg=101 Off=0 Len=100 [EOM] [IDV]")
        # CE segments: MTU, level, CRC option, discriminators; RdmaReadRequest: address, handle, length
        self.assertEqual(r[4][0], 'ConnectRequest MTU=65536 Level=ReliableDelivery CRC=on Calling="client-1" '
                                  'Called="server-A" [EOM]')
        self.assertEqual(r[8][0], "RdmaReadRequest Msg=103 Addr=0x0000000000002000 Handle=0xabcd0002 Len=48 [EOM]")
        self.assertEqual(r[10][0], "NOP Msg=500 Ack=103 Posted=12 [EOM]")

    def test_decode_as_payload_table(self):
        # vitcp.payload works from Decode As; the ULP writes after VI/TCP's Info
        r = rows("vitcp-basic.pcap", ["frame.protocols", "_ws.col.Info"], extra=["-d", "vitcp.payload==5995,data-text-lines"])
        self.assertTrue(r[6][0].endswith(":vitcp:data-text-lines"))
        self.assertEqual(r[6][1], "Send Msg=101 Off=0 Len=100 [EOM] [IDV]")
        self.assertTrue(rows("vitcp-basic.pcap", ["frame.protocols"])[6][0].endswith(":vitcp:data"))

    def test_relative_message_numbers(self):
        r = rows("vitcp-basic.pcap", ["_ws.col.Info", "vitcp.msg_num", "vitcp.msg_num_rel"],
                 extra=["-o", "vitcp.relative_msg_num:TRUE"])
        self.assertEqual(r[4][1:], ["100", "0"])  # ConnectRequest: the requester's first number
        self.assertEqual(r[6][0], "Send Msg=1 Off=0 Len=100 [EOM] [IDV]")
        self.assertEqual(r[6][1:], ["101", "1"])
        self.assertEqual(r[13][0], "Send Msg=4 Off=2000 Len=500 [EOM]")
        # without the preference the Info column keeps absolute numbers, the field stays
        self.assertEqual(rows("vitcp-basic.pcap", ["vitcp.msg_num_rel"])[13], ["4"])


class Crc(unittest.TestCase, BothPasses):
    def test_crc_good_when_negotiated(self):
        r = rows("vitcp-basic.pcap", ["vitcp.crc.status", "vitcp.conn.crc"])
        self.assertTrue(all(v[0] == "1" for v in r.values()), r)  # 1: Good
        self.assertEqual(r[6][1], "1")

    def test_no_trailer_when_not_negotiated(self):
        r = rows("vitcp-nocrc.pcap", ["vitcp.crc", "vitcp.crc.status", "vitcp.conn.crc", "vitcp.seg_len"])
        self.assertTrue(all(v[1] == "3" for v in r.values()), r)  # 3: Not present
        self.assertEqual(r[6][2], "0")
        self.assertEqual(r[6][3], "124")

    def test_bad_crc_and_other_readings(self):
        def check(two_pass):
            r = rows("vitcp-badcrc.pcap", ["vitcp.crc.status", "vitcp.rule", "_ws.expert.message"], two_pass)
            self.assertEqual(r[6][:2], ["0", "VITCP-3.6-CRC-VALID"])
            self.assertEqual(r[7][:2], ["0", "VITCP-3.6-CRC-READING"])
            self.assertIn("big-endian placement", r[7][2])
            self.assertEqual(r[8][:2], ["0", "VITCP-3.6-CRC-READING"])
            self.assertIn("MSB-first", r[8][2])
            self.assertEqual(r[9][:2], ["1", ""])
        self.both(check)

    def test_crc_check_can_be_turned_off(self):
        r = rows("vitcp-badcrc.pcap", ["vitcp.crc.status", "vitcp.rule"], extra=["-o", "vitcp.check_crc:FALSE"])
        self.assertEqual(r[6], ["2", ""])  # 2: Unverified, no expert

    def test_midstream_with_trailers(self):
        def check(two_pass):
            r = rows("vitcp-mid-crc.pcap", ["vitcp.crc.status", "vitcp.conn.crc_source", "vitcp.payload_len"],
                     two_pass)
            self.assertEqual(sorted(r), [1, 2, 3, 4, 5])
            self.assertTrue(all(v[0] == "1" and v[1] == "2" for v in r.values()), r)
            self.assertEqual(r[1][2], "60")
        self.both(check)

    def test_midstream_without_trailers(self):
        def check(two_pass):
            r = rows("vitcp-mid-nocrc.pcap", ["vitcp.crc.status", "vitcp.conn.crc_source", "vitcp.payload_len",
                                              "vitcp.conn.crc"], two_pass)
            self.assertTrue(all(v[0] == "3" for v in r.values()), r)
            self.assertEqual(r[1][2], "60")  # the last 4 bytes are payload, not a trailer
            self.assertEqual(r[5][1:], ["2", "80", "0"])
        self.both(check)


class Framing(unittest.TestCase, BothPasses):
    def test_split_coalesced_and_byte_by_byte(self):
        def check(two_pass):
            r = rows("vitcp-split.pcap", ["vitcp.msg_num", "vitcp.payload_len", "vitcp.crc.status"], two_pass)
            self.assertEqual(r[8], ["101", "1000", "1"])       # one segment over three TCP segments
            self.assertEqual(r[9], ["102,103,104", "30,31,32", "1,1,1"])  # three in one
            self.assertEqual(r[37], ["500", "", "1"])         # 28 one-byte TCP segments
            self.assertEqual(r[38], ["105", "20", "1"])
            self.assertEqual(r[39], ["105", "", "1"])         # NOP completed by the next TCP segment
            self.assertEqual(len(r), 7)
        self.both(check)

    def test_bad_length_resync(self):
        def check(two_pass):
            r = rows("vitcp-resync.pcap", ["vitcp.unframed", "vitcp.rule", "vitcp.msg_num", "vitcp.type"],
                     two_pass)
            self.assertEqual(len(r[6][0]) // 2, 54)  # 24-byte header with length 10 + 30 junk bytes
            self.assertEqual(r[6][1], "VITCP-3.2-SEG-LEN-MIN")
            self.assertEqual(r[6][2], "101")        # the Send after the junk
            self.assertEqual(r[7][2:], ["101", "4"])
        self.both(check)

    def test_gap_resync(self):
        r = rows("vitcp-gap.pcap", ["vitcp.unframed", "vitcp.rule", "vitcp.msg_num"])
        self.assertEqual(len(r[1][0]) // 2, 37)
        self.assertEqual(r[1][1:], ["VITCP-3.2-SEG-CHAIN", "41"])
        self.assertEqual(r[2][2], "42")


class Reassembly(unittest.TestCase, BothPasses):
    def test_interleaved_send_and_read_response(self):
        def check(two_pass):
            r = rows("vitcp-reasm.pcap", ["vitcp.reassembled.length", "vitcp.fragment.count", "vitcp.fragment",
                                          "vitcp.type"], two_pass)
            self.assertEqual(r[11][:3], ["3000", "3", "7,9,11"])   # Send 501
            self.assertEqual(r[12][:3], ["3000", "3", "8,10,12"])  # RdmaReadResponse 101
            self.assertEqual(r[15][:3], ["1200", "2", "13,15"])    # RdmaWrite, retransmission ignored
            self.assertNotIn(14, r)
        self.both(check)

    def test_two_passes_without_a_filter(self):
        # tshark -2 dissects its first pass without a tree or columns; the
        # messages must be reassembled there all the same (D6).
        r = rows("vitcp-reasm.pcap", ["vitcp.reassembled.length", "vitcp.reassembled_in"], True, display_filter=None)
        self.assertEqual(r[11][0], "3000")
        self.assertEqual(r[15][0], "1200")
        self.assertEqual(r[7][1], "11")
        # A summary-only single pass skips reassembly but still decodes every segment.
        out = tsharklib.run(cap("vitcp-reasm.pcap"), [])
        self.assertIn("RdmaReadResponse", out)
        self.assertNotIn("Malformed", out)

    def test_reassembled_in_on_two_passes(self):
        r = rows("vitcp-reasm.pcap", ["vitcp.reassembled_in"], True)
        self.assertEqual(r[7], ["11"])
        self.assertEqual(r[10], ["12"])
        self.assertEqual(r[13], ["15"])


class ReadTracking(unittest.TestCase, BothPasses):
    def test_response_links_and_time(self):
        def check(two_pass):
            r = rows("vitcp-reads.pcap", ["vitcp.rdma.request_in", "vitcp.rdma.time", "vitcp.rdma.read_received"],
                     two_pass)
            self.assertEqual(r[9][0], "6")
            self.assertEqual(r[10], ["6", "0.005400000", "200"])
            self.assertEqual(r[11][0], "8")
        self.both(check)

    def test_request_links_forward_in_two_passes(self):
        r = rows("vitcp-reads.pcap", ["vitcp.rdma.response_in"], True)
        self.assertEqual(r[6], ["10"])
        self.assertEqual(r[8], ["11"])
        self.assertEqual(r[7], [""])

    def test_read_rules(self):
        one, two = rules_by_frame("vitcp-reads.pcap"), rules_by_frame("vitcp-reads.pcap", True)
        for rules in (one, two):
            self.assertEqual(rules[8], {"VITCP-2.2.2.2.6-READ-WINDOW"})
            self.assertEqual(rules[12], {"VITCP-3.2-RESP-MSG-NUM"})
        self.assertEqual(two[7], {"VITCP-2.2.2.2.6-READ-ANSWERED"})  # needs the whole capture
        self.assertEqual(one[7], set())


class Experts(unittest.TestCase, BothPasses):
    def test_segment_rules(self):
        def check(two_pass):
            r = rules_by_frame("vitcp-experts.pcap", two_pass)
            self.assertEqual(r[6], {"VITCP-3.2-IDV-ZERO-NA", "VITCP-3.2-IMM-ZERO-NA", "VITCP-3.2-SINGLE-SEGMENT",
                                    "VITCP-3.2-ERR-RESERVED"})
            self.assertEqual(r[7], {"VITCP-3.2-TXERR-SEEN", "VITCP-3.2-MSG-NUM-SEQ"})
            self.assertEqual(r[8], set())
            self.assertEqual(r[9], {"VITCP-3.2-DATA-OFFSET-NEXT"})
            self.assertEqual(r[10], {"VITCP-3.2-NOP-MSG-NUM"})
            self.assertEqual(r[11], {"VITCP-3.2-TYPE-KNOWN"})
            self.assertEqual(r[12], {"VITCP-3.2-VERSION"})
            self.assertEqual(r[13], {"VITCP-3-RDMA-HDR-PRESENT"})
            self.assertEqual(r[14], {"VITCP-3.7-URGENT-ONLY-IF-OFFERED", "VITCP-3.7-URGENT-RFC1122"})
        self.both(check)

    def test_ce_rules(self):
        r = rules_by_frame("vitcp-ce-experts.pcap")
        self.assertTrue({"VITCP-3.3-MTU-LESSER", "VITCP-3.3-LEVEL-MATCH", "VITCP-3.3-P2P-MATCH"} <= r[5], r)
        r = rules_by_frame("vitcp-reject.pcap")
        self.assertIn("VITCP-3.3-ONE-LEVEL", r[4])
        self.assertEqual(r[6], {"VITCP-4-CLOSE-AFTER-REFUSE"})

    def test_version_2_request_is_one_segment(self):
        """A ConnectRequest of Version 2 is framed whole and names only its
        Version, as the lint does; no bytes are unframed and no false Send
        is found inside it (issue 14)."""
        def check(two_pass):
            r = rows("vitcp-version2.pcap", ["vitcp.version", "vitcp.type", "vitcp.seg_len", "vitcp.unframed",
                                             "vitcp.rule"], two_pass)
            self.assertEqual(sorted(r), [4], r)
            version, seg_type, seg_len, unframed, rules = r[4]
            self.assertEqual((version, seg_type, unframed), ("2", "5", ""), r)
            self.assertEqual(int(seg_len), 164, r)
            self.assertEqual(set(rules.split(",")) - {""}, {"VITCP-3.2-VERSION"}, r)
        self.both(check)

    def test_expert_text_and_filter(self):
        out = tsharklib.fields(cap("vitcp-badcrc.pcap"), ["frame.number"],
                               display_filter="vitcp.expert.3_6_crc_valid.error")
        self.assertEqual([row[0] for row in out], ["6"])
        msgs = rows("vitcp-experts.pcap", ["_ws.expert.message"])
        self.assertTrue(msgs[10][0].startswith("[VITCP-3.2-NOP-MSG-NUM] "), msgs[10])

    def test_clean_captures_have_no_rule_notes(self):
        for name in ("vitcp-basic.pcap", "vitcp-nocrc.pcap", "vitcp-split.pcap"):
            r = rules_by_frame(name, True)
            self.assertEqual({f: v for f, v in r.items() if v}, {}, name)


class Registration(unittest.TestCase):
    def test_heuristic_from_connect_request(self):
        r = rows("vitcp-heur.pcap", ["vitcp.type", "tcp.dstport"])
        self.assertEqual(r[4], ["5", "7700"])
        self.assertEqual(r[6][0], "0")

    def test_heuristic_mid_stream(self):
        r = rows("vitcp-heur-mid.pcap", ["vitcp.type", "vitcp.msg_num"])
        self.assertEqual(r, {1: ["0", "300"], 2: ["4", "77"]})

    def test_heuristic_can_be_disabled(self):
        r = rows("vitcp-heur.pcap", ["vitcp.type"], extra=["--disable-heuristic", "vitcp_tcp"])
        self.assertEqual(r, {})

    def test_decode_as_and_port_preference(self):
        r = rows("vitcp-heur.pcap", ["vitcp.type"], extra=["--disable-heuristic", "vitcp_tcp",
                                                            "-d", "tcp.port==7700,vitcp"])
        self.assertEqual(r[4], ["5"])
        r = rows("vitcp-heur.pcap", ["vitcp.type"], extra=["-o", "vitcp.tcp.port:7700",
                                                            "--disable-heuristic", "vitcp_tcp"])
        self.assertEqual(r[4], ["5"])


class Statistics(unittest.TestCase):
    def test_stat_tap(self):
        out = tsharklib.run(cap("vitcp-reads.pcap"), ["-q", "-z", "vitcp,stat"])
        self.assertIn("Connection 10.0.0.1:40007 <-> 10.0.0.2:5995", out)
        lines = {l.split()[0]: l.split()[1:] for l in out.splitlines() if l.startswith("  Rdma")}
        self.assertEqual(lines["RdmaReadRequest"], ["3", "3"])
        self.assertEqual(lines["RdmaReadResponse"], ["3", "4"])
        self.assertIn("RDMA reads outstanding: 1", out)
        out = tsharklib.run(cap("vitcp-badcrc.pcap"), ["-q", "-z", "vitcp,stat"])
        self.assertIn("CRC errors: 3", out)


if __name__ == "__main__":
    unittest.main()
