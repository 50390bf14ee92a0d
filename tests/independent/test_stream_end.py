"""Issue 22, the end of a connection, from independent captures (bytes packed
by hand, vitcp_bytes.py, ift_bytes.py and the WARP chunk below; TCP by
tcp_pcap.py). A direction whose FIN comes inside a PDU cut it: WARP-A-TRUNCATED
(W18), VITCP-3.2-SEG-TRUNCATED (V28), IFT-5.1-FRAME-TRUNCATED (I22), at that
direction's FIN and nowhere else, in the plugin (one and two passes) as in
lint; Wireshark's tcp_dissect_pdus never hands the plugin that last PDU. What
the connection's close settles (a ConnectRequest never answered) is judged at
the second FIN or the RST. An RST or the capture's end judges no cut PDU, and a
capture that merely ends judges nothing."""
import struct
import unittest
import zlib

import ift_bytes as I
import vitcp_bytes as V
from tcp_pcap import Conversation, capture, lint, only, tshark


def warp_send(ssn, payload, last=True):
    """A WARP Send chunk (W1-W3): Type 0 | Rsvd | E C L, Chunk length of every byte, SSN, offset 0, Adler-32."""
    n = 4 + 8 + len(payload) + 4
    body = struct.pack(">HHII", 1 if last else 0, n, ssn, 0) + payload
    return body + struct.pack(">I", zlib.adler32(body))




def judged(name, frames, prefix):
    """Lint's findings and the plugin's in one and in two passes: all three must be equal."""
    path = capture(name, frames)
    lt, _ = lint(path)
    one, _ = tshark(path, prefix)
    two, _ = tshark(path, prefix, two_pass=True)
    return only(lt, prefix), one, two


def vitcp_connected(client_port=40000):
    c = Conversation(V.PORT, client_port)
    c.send(0, V.segment(V.CONNECT_REQUEST, 100, ce=V.ce_header(V.RELIABLE_DELIVERY)))
    c.send(1, V.segment(V.CONNECT_ACCEPT, 500, 100, ce=V.ce_header(V.RELIABLE_DELIVERY)))
    return c


def ift_negotiated(client_port=40000):
    c = Conversation(I.PORT, client_port)
    c.send(0, I.indication(I.R | I.HC | I.PC, 0xA0A0))
    c.send(1, I.indication(I.PH | I.R | I.HC | I.PC, 0xB0B0))
    return c


# One whole PDU and the PDU that side 0 leaves cut, per protocol.
def warp_pdus():
    return warp_send(1, b"x" * 40), warp_send(2, b"y" * 40)


def vitcp_pdus():
    return V.segment(V.SEND, 101, payload=b"a" * 40), V.segment(V.SEND, 102, payload=b"b" * 40)


def ift_pdus():
    return I.frame(0xB0B0, I.ddp_tagged(), b"p" * 32), I.frame(0xB0B0, I.ddp_tagged(to=32), b"q" * 32)


SETUPS = {"WARP-": (lambda client_port: Conversation(5997, client_port), warp_pdus, "WARP-A-TRUNCATED"),
          "VITCP-": (vitcp_connected, vitcp_pdus, "VITCP-3.2-SEG-TRUNCATED"),
          "IFT-": (ift_negotiated, ift_pdus, "IFT-5.1-FRAME-TRUNCATED")}


class Capture:
    """Many connections, one after the other, in one capture (each on its own client port), so a
    handful of tshark runs judge every case."""

    def __init__(self):
        self.frames = []

    def add(self, c, *frames):
        """Append c's frames; returns the given frame numbers of c as numbers in the capture."""
        base = len(self.frames)
        self.frames += c.frames
        return [base + n for n in frames]


class CutByTheFin(unittest.TestCase):
    def test_every_protocol_header_or_body_cut_either_fin_first(self):
        for prefix, (setup, pdus, rule) in SETUPS.items():
            cap, expected, port = Capture(), {}, 41000
            for cut in (3, 20):          # inside the first header word, and further on
                for other_fin_first in (False, True):
                    whole, last = pdus()
                    c = setup(port)
                    port += 1
                    c.send(0, whole)
                    c.send(0, last[:cut])
                    if other_fin_first:
                        c.fin(1)
                        fin = c.fin(0)
                    else:
                        fin = c.fin(0)
                        c.fin(1)
                    expected[cap.add(c, fin)[0]] = {(rule, "error")}
            with self.subTest(protocol=prefix):
                lt, one, two = judged("cut_%s.pcap" % prefix, cap.frames, prefix)
                self.assertEqual(lt, expected, "lint")
                self.assertEqual(one, lt, "plugin, one pass")
                self.assertEqual(two, lt, "plugin, two passes")

    def test_a_cut_indication(self):
        c = Conversation(I.PORT)
        c.send(0, I.indication(I.R | I.HC | I.PC, 0xA0A0)[:30])
        fin = c.fin(0)
        c.fin(1)
        lt, one, two = judged("cut_indication.pcap", c.frames, "IFT-")
        self.assertIn(("IFT-5.1-FRAME-TRUNCATED", "error"), lt.get(fin, set()))
        self.assertEqual((one, two), (lt, lt))


class NotJudged(unittest.TestCase):
    """A whole last PDU is clean; an RST (an abortive close, as I8 and V22
    use it) and a capture that stops judge no cut PDU."""

    def test_whole_last_pdu_reset_and_capture_end(self):
        for prefix, (setup, pdus, rule) in SETUPS.items():
            cap, port = Capture(), 42000
            for ending in ("fin", "rst", "capture"):  # the capture's end: the last connection only
                whole, last = pdus()
                c = setup(port)
                port += 1
                c.send(0, whole)
                c.send(0, last if ending == "fin" else last[:20])
                if ending == "fin":
                    c.close()
                elif ending == "rst":
                    c.rst(1)
                cap.add(c)
            with self.subTest(protocol=prefix):
                lt, one, two = judged("end_%s.pcap" % prefix, cap.frames, prefix)
                self.assertEqual((lt, one, two), ({}, {}, {}))


class GapBeforeTheFin(unittest.TestCase):
    """I37: a direction in which TCP's analysis found a segment missing
    ("previous segment not captured": a capture that lost it, or a path
    that delivered it where TCP's reassembly could not place it) ends
    without a verdict on its last PDU in the plugin: TCP may never have
    handed the protocol all its bytes, which is TCP's finding (Wireshark's
    tcp.analysis.lost_segment), not a cut PDU. The same PDU cut with no
    gap is still named (CutByTheFin)."""

    def test_no_cut_pdu_judged_after_a_gap(self):
        for prefix, (setup, pdus, rule) in SETUPS.items():
            whole, last = pdus()
            c = setup(43000)
            c.send(0, whole)
            c.send(0, last[:10])
            c.seq[0] += 10                    # ten bytes the capture never saw
            c.send(0, last[20:])
            fin = c.fin(0)
            c.fin(1)
            with self.subTest(protocol=prefix):
                path = capture("gap_%s.pcap" % prefix, c.frames)
                for two in (False, True):
                    found, _ = tshark(path, prefix, two_pass=two)
                    self.assertNotIn(fin, found, "two_pass=%s" % two)
                    self.assertFalse([f for f in found.values() if (rule, "error") in f], found)


class ConnectionLevel(unittest.TestCase):
    def test_request_never_answered_at_the_close_not_at_the_capture_end(self):
        c = Conversation(V.PORT)
        c.send(0, V.segment(V.CONNECT_REQUEST, 100, ce=V.ce_header(V.RELIABLE_DELIVERY)))
        open_frames = list(c.frames)
        c.fin(1)
        close = c.fin(0)
        lt, one, two = judged("vitcp_unanswered_close.pcap", c.frames, "VITCP-")
        self.assertEqual(lt, {close: {("VITCP-4.3-ANSWER", "warning")}})
        self.assertEqual((one, two), (lt, lt))
        c.frames = open_frames
        lt, one, two = judged("vitcp_unanswered_open.pcap", c.frames, "VITCP-")
        self.assertEqual((lt, one, two), ({}, {}, {}))

    def test_request_answered_by_reset(self):
        c = Conversation(V.PORT)
        c.send(0, V.segment(V.CONNECT_REQUEST, 100, ce=V.ce_header(V.RELIABLE_DELIVERY)))
        rst = c.rst(1)
        lt, one, two = judged("vitcp_unanswered_rst.pcap", c.frames, "VITCP-")
        self.assertEqual(lt, {rst: {("VITCP-4.3-ANSWER", "warning")}})
        self.assertEqual((one, two), (lt, lt))


if __name__ == "__main__":
    unittest.main()
