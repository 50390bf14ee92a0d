"""Issue 22, IFT, from independent captures (indications and frames packed
by hand with struct and a CRC-32C written in Python, ift_bytes.py; TCP by
tcp_pcap.py). Reactions are judged by the reaction (I8, I12): a correct
peer is clean, a wrong one red under the reaction's ID. Framing lost to a
too-short payload_size is said once under IFT-5.1-FRAME-LEN and nothing
after it is read (I13); a header_size that does not match the DDP header
is an error (I5, I8); a mid-stream upgrade is found by its magic in lint
as in the plugin; DDP mode is not decoded as RDMAP (I14). Lint and the
plugin give the same IDs on the same frames."""
import unittest

from ift_bytes import HC, PC, PH, PORT, R, ddp_tagged, frame, indication
from tcp_pcap import Conversation, capture, ids, lint, only, tshark, tsharklib

VA, VB = 0xA0A0, 0xB0B0          # the VTags A and B announce (B's frames carry VA, A's carry VB)
PAYLOAD = b"sixteen byte pay" * 2


def both(name, frames):
    path = capture(name, frames)
    lt, issues = lint(path)
    ts, _ = tshark(path, "IFT-")
    return only(lt, "IFT-"), ts, issues


def agreed(r=True):
    """Both indications (A phase 0, B phase 1) with HC and PC; R as given on both."""
    c = Conversation(PORT)
    c.send(0, indication((R if r else 0) | HC | PC, VA))
    c.send(1, indication(PH | (R if r else 0) | HC | PC, VB))
    return c


class RDisagreement(unittest.TestCase):
    def test_b_answers_then_resets_is_clean(self):
        c = Conversation(PORT)
        c.send(0, indication(R | HC | PC, VA))
        b = c.send(1, indication(PH | HC | PC, VB))
        c.rst(1)
        lt, ts, _ = both("ift_r_ok.pcap", c.frames)
        self.assertEqual(ids(lt), {})
        self.assertIn(("IFT-4.2-R-AGREE", "note"), lt[b])
        self.assertEqual(ts, lt)

    def test_b_carries_on_is_red(self):
        c = Conversation(PORT)
        c.send(0, indication(R | HC | PC, VA))
        c.send(1, indication(PH | HC | PC, VB))
        bad = c.send(1, frame(VA, ddp_tagged(), PAYLOAD))
        c.close()
        lt, ts, _ = both("ift_r_bad.pcap", c.frames)
        self.assertEqual(ids(lt), {bad: {"IFT-4.2-R-AGREE"}})
        self.assertEqual(ts, lt)


class BcVersion(unittest.TestCase):
    def test_b_rejects_is_clean(self):
        c = Conversation(PORT)
        a = c.send(0, indication(R | HC | PC, VA, version=2, bc_version=2))
        c.rst(1)
        lt, ts, _ = both("ift_bc_ok.pcap", c.frames)
        self.assertEqual(ids(lt), {})
        self.assertIn(("IFT-4.2-BC-VERSION-REJECT", "note"), lt[a])
        self.assertEqual(ts, lt)

    def test_b_answers_is_red(self):
        c = Conversation(PORT)
        c.send(0, indication(R | HC | PC, VA, version=2, bc_version=2))
        b = c.send(1, indication(PH | R | HC | PC, VB))
        c.rst(1)
        lt, ts, _ = both("ift_bc_bad.pcap", c.frames)
        self.assertEqual(ids(lt), {b: {"IFT-4.2-BC-VERSION-REJECT"}})
        self.assertEqual(ts, lt)


class NoDataAfterError(unittest.TestCase):
    def test_b_resets_is_clean(self):
        c = agreed()
        bad = c.send(0, frame(VB, ddp_tagged(), PAYLOAD, bad_hcrc=True))
        c.rst(1)
        lt, ts, _ = both("ift_err_ok.pcap", c.frames)
        self.assertEqual(ids(lt), {bad: {"IFT-5.1-HDR-CRC"}})
        self.assertEqual(ts, lt)

    def test_b_carries_on_is_red(self):
        c = agreed()
        bad = c.send(0, frame(VB, ddp_tagged(), PAYLOAD, bad_hcrc=True))
        more = c.send(1, frame(VA, ddp_tagged(), PAYLOAD))
        c.close()
        lt, ts, _ = both("ift_err_bad.pcap", c.frames)
        self.assertEqual(ids(lt), {bad: {"IFT-5.1-HDR-CRC"}, more: {"IFT-5.1-NO-DATA-AFTER-ERROR"}})
        self.assertEqual(ts, lt)


class NoDataAfterErrorInFlight(unittest.TestCase):
    """V29 for IFT: the receiver's frames count as carrying on only once its
    TCP ACK covered the error frame. B's frame sent before it received A's
    bad frame (its ACK short of it) was in flight; B then resets: clean.
    B's frame after its ACK covered it is red. One and two passes."""

    def test_in_flight_then_reset_is_clean(self):
        c = agreed()
        bad = c.send(0, frame(VB, ddp_tagged(), PAYLOAD, bad_hcrc=True), ack=False)
        c._raw(1, 0x08, frame(VA, ddp_tagged(), PAYLOAD), ack=c.seq[0] - len(frame(VB, ddp_tagged(), PAYLOAD)))
        c.seq[1] += len(frame(VA, ddp_tagged(), PAYLOAD))
        c.rst(1)
        lt = every_pass(self, "ift_err_in_flight.pcap", c.frames)
        self.assertEqual(ids(lt), {bad: {"IFT-5.1-HDR-CRC"}})

    def test_after_its_ack_is_red(self):
        c = agreed()
        bad = c.send(0, frame(VB, ddp_tagged(), PAYLOAD, bad_hcrc=True), ack=False)
        c._raw(1, 0x08, frame(VA, ddp_tagged(), PAYLOAD), ack=c.seq[0] - len(frame(VB, ddp_tagged(), PAYLOAD)))
        c.seq[1] += len(frame(VA, ddp_tagged(), PAYLOAD))
        more = c.send(1, frame(VA, ddp_tagged(), PAYLOAD))   # its ACK now covers the bad frame
        c.close()
        lt = every_pass(self, "ift_err_after_ack.pcap", c.frames)
        self.assertEqual(ids(lt), {bad: {"IFT-5.1-HDR-CRC"}, more: {"IFT-5.1-NO-DATA-AFTER-ERROR"}})


class ShortPayloadSize(unittest.TestCase):
    def test_framing_lost_once(self):
        c = agreed()
        good = frame(VB, ddp_tagged(), PAYLOAD)
        short = frame(VB, ddp_tagged(), PAYLOAD, payload_size=4, pc=False, hc=True)
        # the sender counted 4 payload bytes but sent 32 and its payload CRC: the rest is not a frame
        from ift_bytes import crc32c
        import struct
        short = short[:-4] + PAYLOAD + struct.pack("<I", crc32c(PAYLOAD))
        c.send(0, good)
        bad = c.send(0, short)
        c.send(0, good)
        c.close()
        lt, ts, _ = both("ift_short.pcap", c.frames)
        # the short frame's payload CRC is read where its sizes put it (bad), then framing is lost once
        self.assertEqual(ids(lt), {bad: {"IFT-5.1-PAYLOAD-CRC", "IFT-5.1-FRAME-LEN"}})
        self.assertEqual(sum(1 for f in lt.values() for i, _ in f if i == "IFT-5.1-FRAME-LEN"), 1)
        self.assertEqual(ts, lt)

    def test_lost_at_a_capture_gap_is_tcps(self):
        """I38: a segment the capture missed puts the next one's bytes where a
        frame must start. TCP's analysis flags that frame (previous segment
        not captured); lint, which reassembles by itself, notes a gap; the
        plugin, one pass and two, loses the framing without IFT-5.1-FRAME-LEN
        (the same bytes without the gap are the test above)."""
        c = agreed()
        good = frame(VB, ddp_tagged(), PAYLOAD)
        c.send(0, good)
        c.seq[0] += 10  # the first 10 bytes of the next frame never reached the capture
        after = c.send(0, good[10:])
        c.send(0, good)
        c.close()
        lt, ts, _ = both("ift_gap.pcap", c.frames)
        self.assertEqual((ids(lt), ids(ts)), ({}, {}))
        path = capture("ift_gap.pcap", c.frames)
        self.assertEqual(ids(tshark(path, "IFT-", two_pass=True)[0]), {})
        info = tsharklib.run(path, ["-Y", "frame.number == %d" % after, "-T", "fields", "-e", "_ws.col.Info"])
        self.assertIn("framing lost after a TCP repair", info)


class ShortPayloadSizeAcrossSegments(unittest.TestCase):
    """I13 wherever TCP cut the stream: the bytes after the short frame may
    start in a later segment than the frame (at its first byte, after a cut
    inside their own header, or after a frame reassembled from several
    segments); both tools name the same frame under IFT-5.1-FRAME-LEN, in one
    and in two passes."""

    def run_case(self, name, payload, payload_size, cuts):
        import struct
        from ift_bytes import crc32c
        good = frame(VB, ddp_tagged(), payload)
        short = frame(VB, ddp_tagged(), payload, payload_size=payload_size, pc=False) + \
            struct.pack("<I", crc32c(payload))
        claimed = 6 + 14 + 4 + payload_size + 4
        stream = good + short + good
        c = agreed()
        start = len(good)
        for a, b in zip([0] + cuts, cuts + [len(stream)]):
            c.send(0, stream[a:b])
        c.close()
        path = capture(name, c.frames)
        lt, _ = lint(path)
        lt = only(lt, "IFT-")
        lost = [f for f, found in lt.items() if ("IFT-5.1-FRAME-LEN", "error") in found]
        self.assertEqual(len(lost), 1, lt)
        # the frame where the 6 header bytes after the short frame's claimed end are complete
        last = start + claimed + 5
        seg = sum(1 for cut in cuts if cut <= last)
        self.assertEqual(lost[0], 8 + 2 * seg, (lt, cuts))   # handshake, two indications, then data and ACK
        for two in (False, True):
            ts, _ = tshark(path, "IFT-", two_pass=two)
            self.assertEqual(ts, lt, "two_pass=%s cuts=%s" % (two, cuts))

    def test_next_bytes_start_a_segment(self):
        n = len(frame(VB, ddp_tagged(), PAYLOAD))
        self.run_case("ift_short_seg.pcap", PAYLOAD, 4, [n + 32])

    def test_cut_inside_the_next_bytes_header(self):
        n = len(frame(VB, ddp_tagged(), PAYLOAD))
        for k in (1, 3, 5):
            self.run_case("ift_short_seg%d.pcap" % k, PAYLOAD, 4, [n + 32 + k])

    def test_short_frame_cut_before_its_end(self):
        n = len(frame(VB, ddp_tagged(), PAYLOAD))
        self.run_case("ift_short_cut.pcap", PAYLOAD, 4, [n + 3, n + 20, n + 31])

    def test_reassembled_frame_then_next_bytes_later(self):
        big = bytes((i * 7 + 100) & 0xFF for i in range(3000))
        n = len(frame(VB, ddp_tagged(), big))
        mss = list(range(1448, 3 * n, 1448))
        for ps in (1500, 2800):
            self.run_case("ift_short_big%d.pcap" % ps, big, ps, [c for c in mss if c < 3 * n])


class CutWhereAnotherLayoutEnds(unittest.TestCase):
    """I36: a conforming frame (HC and PC as announced) cut by TCP inside the
    sender's write, exactly where a frame without its CRCs (or without its
    payload CRC) would end, is one frame with both CRCs: the segment that
    ends there carries no PSH, so the plugin sizes the frame as announced
    and waits for the rest, as lint's reader does. Nothing is found, in one
    and two passes, and both frames are decoded with good CRCs."""

    def test_cut_at_the_end_of_a_shorter_layout(self):
        good = frame(VB, ddp_tagged(), PAYLOAD)
        for name, cut in (("no CRCs", 6 + 14 + len(PAYLOAD)), ("no payload CRC", 6 + 14 + 4 + len(PAYLOAD))):
            with self.subTest(cut=name):
                c = agreed()
                stream = good + good
                c.send(0, stream[:cut], ack=False, push=False)
                c.send(0, stream[cut:])
                c.close()
                path = capture("ift_cut_%d.pcap" % cut, c.frames)
                lt, _ = lint(path)
                self.assertEqual(only(lt, "IFT-"), {})
                for two in (False, True):
                    ts, extra = tshark(path, "IFT-", two_pass=two, extra_fields=["ift.hcrc.status", "ift.pcrc.status"])
                    self.assertEqual(ts, {}, "two_pass=%s" % two)
                    # both frames decoded whole, with good CRCs, in the second segment (frame 9: the
                    # handshake, the two indications and their ACKs, then the first piece)
                    self.assertEqual(extra[8], ["", ""], "two_pass=%s" % two)
                    self.assertEqual(extra[9], ["1^1", "1^1"], "two_pass=%s" % two)


class HeaderSize(unittest.TestCase):
    def test_header_size_not_the_ddp_header_is_an_error(self):
        c = agreed()
        bad = c.send(0, frame(VB, ddp_tagged() + b"\0\0", PAYLOAD))   # 16 bytes: RFC 5041's tagged header is 14
        c.close()
        lt, ts, _ = both("ift_hsize.pcap", c.frames)
        self.assertEqual(ids(lt), {bad: {"IFT-5.1-DDP-HDR-PRESENT"}})
        self.assertEqual(ts, lt)


class MidStreamUpgrade(unittest.TestCase):
    def test_found_by_its_magic(self):
        c = Conversation(17777)
        c.send(0, b"HELLO ULP: let us upgrade\r\n")
        c.send(1, b"OK upgrade\r\n")
        c.send(0, indication(R | HC | PC, VA))
        c.send(1, indication(PH | R | HC | PC, VB))
        c.send(0, frame(VB, ddp_tagged(), PAYLOAD))
        bad = c.send(1, frame(VA, ddp_tagged(), PAYLOAD, bad_hcrc=True))
        c.rst(0)
        lt, ts, issues = both("ift_upgrade.pcap", c.frames)
        self.assertEqual(ids(lt), {bad: {"IFT-5.1-HDR-CRC"}})
        self.assertEqual(ts, lt)
        # I21: IFT from the indication's frame on; the ULP's frames stay out of IFT on a second pass too
        path = capture("ift_upgrade.pcap", c.frames)
        for two in (False, True):
            ts, f = tshark(path, "IFT-", ["_ws.col.Protocol", "_ws.col.Info"], two_pass=two)
            self.assertEqual(ts, lt)
            self.assertEqual([f[4][0], f[6][0], f[8][0]], ["TCP", "TCP", "IFT"], "two-pass" if two else "one pass")
            # IFT asked TCP for more of the ULP's bytes on the second pass before I21
            self.assertNotIn("reassembled PDU", f[4][1] + f[6][1])


class UpgradeOnAnotherProtocolsPort(unittest.TestCase):
    """I21: on a TCP port Wireshark gives to another dissector (23, Telnet, which takes any bytes),
    the port's dissector is asked before heuristics; TCP's "Try heuristic sub-dissectors first"
    (tcp.try_heuristic_first) lets the IFT heuristic find the indication by its magic, the way the
    plugin's documentation gives. Lint needs nothing."""

    @classmethod
    def setUpClass(cls):
        c = Conversation(23)
        c.send(0, b"HELLO ULP: let us upgrade\r\n")
        c.send(1, b"OK upgrade\r\n")
        cls.ind = c.send(0, indication(R | HC | PC, VA))
        c.send(1, indication(PH | R | HC | PC, VB))
        c.send(0, frame(VB, ddp_tagged(), PAYLOAD))
        cls.bad = c.send(1, frame(VA, ddp_tagged(), PAYLOAD, bad_hcrc=True))
        c.rst(0)
        cls.path = capture("ift_upgrade_telnet.pcap", c.frames)
        lt, _ = lint(cls.path)
        cls.lint = only(lt, "IFT-")

    def test_lint_finds_it(self):
        self.assertEqual(ids(self.lint), {self.bad: {"IFT-5.1-HDR-CRC"}})

    def test_port_dissector_wins_by_default(self):
        ts, f = tshark(self.path, "IFT-", ["_ws.col.Protocol"])
        self.assertEqual(ts, {})
        self.assertEqual(f[self.ind][0], "TELNET")

    def test_heuristics_first_finds_it(self):
        for two in (False, True):
            ts, f = tshark(self.path, "IFT-", ["_ws.col.Protocol"], two_pass=two,
                           extra_args=["-o", "tcp.try_heuristic_first:TRUE"])
            self.assertEqual(ts, self.lint, "two-pass" if two else "one pass")
            self.assertEqual([f[4][0], f[6][0], f[self.ind][0]], ["TELNET", "TELNET", "IFT"],
                             "two-pass" if two else "one pass")


class DdpMode(unittest.TestCase):
    def test_r_clear_on_both_ends_is_not_rdmap(self):
        c = agreed(r=False)
        f = c.send(0, frame(VB, ddp_tagged(rdmap=0x07), PAYLOAD))     # the second byte is the ULP's
        c.close()
        path = capture("ift_ddp_mode.pcap", c.frames)
        lt, _ = lint(path)
        ts, fields = tshark(path, "IFT-", ["iwarp_rdma.opcode", "_ws.col.Info"])
        self.assertEqual(ids(only(lt, "IFT-")), {})
        self.assertEqual(ts, only(lt, "IFT-"))
        self.assertEqual(fields[f][0], "")                   # no RDMAP opcode decoded
        self.assertIn("DDP Tagged STag=0x00001234", fields[f][1])
        # in RDMA mode the same frame (RDMAP version 1, Write) is RDMAP
        c = agreed(r=True)
        f = c.send(0, frame(VB, ddp_tagged(), PAYLOAD))
        c.close()
        _, fields = tshark(capture("ift_rdma_mode.pcap", c.frames), "IFT-", ["iwarp_rdma.opcode", "_ws.col.Info"])
        self.assertEqual(fields[f][0], "0x00")


def every_pass(test, name, frames):
    """Lint's verdict, which the plugin must give in one pass and in two."""
    path = capture(name, frames)
    lt, _ = lint(path)
    lt = only(lt, "IFT-")
    for two in (False, True):
        ts, _ = tshark(path, "IFT-", two_pass=two)
        test.assertEqual(ts, lt, "two_pass=%s" % two)
    return lt


class DdpModeFields(unittest.TestCase):
    """Issue 31 item 5 (D7): in DDP mode (both R clear) the plugin decodes
    the RFC 5041 header itself: control bits, the ULP's byte, STag and TO
    or QN, MSN and MO; in RDMA mode it leaves them to Wireshark's DDP."""

    FIELDS = ["ift.ddp.tagged", "ift.ddp.last", "ift.ddp.dv", "ift.ddp.rsvdulp", "ift.ddp.stag", "ift.ddp.to",
              "ift.ddp.qn", "ift.ddp.msn", "ift.ddp.mo", "ift.ddp.rsvdulp2"]

    def test_tagged_and_untagged(self):
        import struct
        untagged = struct.pack(">BBIIII", 0x40 | 0x01, 0x5A, 0xCAFEF00D, 3, 7, 64)   # L, DV 1, ULP byte, QN 3, MSN 7, MO 64
        c = agreed(r=False)
        t = c.send(0, frame(VB, ddp_tagged(stag=0xABCD, to=4096, rdmap=0x07), PAYLOAD))
        u = c.send(0, frame(VB, untagged, PAYLOAD))
        c.close()
        path = capture("ift_ddp_fields.pcap", c.frames)
        for two in (False, True):
            _, f = tshark(path, "IFT-", self.FIELDS, two_pass=two)
            self.assertEqual(f[t][:6], ["1", "1", "1", "0x07", "0x0000abcd", "4096"], "two_pass=%s" % two)
            self.assertEqual(f[u][:4], ["0", "1", "1", "0x5a"])
            self.assertEqual(f[u][6:], ["3", "7", "64", "0xcafef00d"])
        lt, _ = lint(path)
        self.assertEqual(ids(only(lt, "IFT-")), {})
        # RDMA mode: Wireshark's DDP/RDMAP decodes it, not these fields
        c = agreed(r=True)
        t = c.send(0, frame(VB, ddp_tagged(), PAYLOAD))
        c.close()
        _, f = tshark(capture("ift_rdma_fields.pcap", c.frames), "IFT-", self.FIELDS + ["iwarp_ddp.stag"])
        self.assertEqual(f[t][:10], [""] * 10)
        self.assertEqual(f[t][10], "0x00001234")


class BadMagic(unittest.TestCase):
    """One fault, one ID (I35): an indication with a bad magic is
    IFT-4.1-MAGIC in both tools, and nothing after it repeats the fault;
    a frame where the indication is due is IFT-4-INDICATION-FIRST."""

    def test_one_id_in_both_tools(self):
        c = Conversation(PORT)
        a = c.send(0, indication(R | HC | PC, VA, magic=0x52444451))
        c.rst(1)
        lt = every_pass(self, "ift_magic.pcap", c.frames)
        self.assertEqual(ids(lt), {a: {"IFT-4.1-MAGIC"}})

    def test_bad_magic_found_by_its_crc_and_frames_after_it(self):
        c = Conversation(PORT)
        a = c.send(0, indication(R | HC | PC, VA, magic=0x00000001))   # header_size 0 there: the CRC tells
        c.send(0, frame(VB, ddp_tagged(), PAYLOAD))
        c.send(0, frame(VB, ddp_tagged(), PAYLOAD))
        c.rst(1)
        lt = every_pass(self, "ift_magic_frames.pcap", c.frames)
        self.assertEqual(ids(lt), {a: {"IFT-4.1-MAGIC"}})

    def test_frame_before_the_indication(self):
        c = Conversation(PORT)
        f = c.send(0, frame(VB, ddp_tagged(), PAYLOAD))
        c.rst(1)
        lt = every_pass(self, "ift_frame_first.pcap", c.frames)
        self.assertEqual(ids(lt), {f: {"IFT-4-INDICATION-FIRST"}})


class BcVersionAnswer(unittest.TestCase):
    """I34: an answer with BC version 2 to a version 1 indication breaks
    IFT-4.2-BC-VERSION-SET (answering confirms version 1), an error in both
    tools, whatever its version field; A's reset is the right reaction."""

    def test_answer_with_bc_version_2(self):
        for version in (1, 2):
            c = Conversation(PORT)
            c.send(0, indication(R | HC | PC, VA))
            b = c.send(1, indication(PH | R | HC | PC, VB, version=version, bc_version=2))
            c.rst(0)
            lt = every_pass(self, "ift_bc_answer%d.pcap" % version, c.frames)
            self.assertEqual(lt, {b: {("IFT-4.2-BC-VERSION-SET", "error")}})


class RDisagreementSeenByA(unittest.TestCase):
    def test_a_carries_on_after_the_answer_is_red(self):
        c = Conversation(PORT)
        c.send(0, indication(R | HC | PC, VA))
        b = c.send(1, indication(PH | HC | PC, VB))
        bad = c.send(0, frame(VB, ddp_tagged(), PAYLOAD))
        c.close()
        lt = every_pass(self, "ift_r_a_on.pcap", c.frames)
        self.assertEqual(ids(lt), {bad: {"IFT-4.2-R-AGREE"}})
        self.assertIn(("IFT-4.2-R-AGREE", "note"), lt[b])


if __name__ == "__main__":
    unittest.main()
