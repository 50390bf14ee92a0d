"""Issue 22, WARP, from independent captures (chunks packed by hand with
struct and Python's zlib.adler32, never wire/'s encoder): the E bit is a
normal signal (a note, W13); a Send never finished with L breaks
WARP-SUMMARY-L-LAST when the next SSN starts and when the direction ends
mid-PDU; two multi-chunk RDMA Writes to one RID completing in one frame
reassemble apart under `tshark -2` (W14); the readings W1-W3 rejected are
named (W15). Lint and the plugin report the same IDs on the same frames."""
import struct
import unittest
import zlib

from tcp_pcap import Conversation, capture, ids, lint, only, tshark, tsharklib

PORT = 5997
SEND, RDMA = 0, 1
E, C, L = 4, 2, 1


def chunk(ctype, flags, a, b, payload, adler=None, length=None, type8=False):
    """A WARP chunk: Type(4) Rsvd(9) E C L | Chunk length, then SSN+offset32 (Send) or RID+offset64 (RDMA),
    payload, big-endian Adler-32 of every byte before it (W1-W3)."""
    hdr = struct.pack(">IQ", a, b) if ctype == RDMA else struct.pack(">II", a, b)
    n = 4 + len(hdr) + len(payload) + 4
    word = (ctype << 8 if type8 else ctype << 12) | flags
    body = struct.pack(">HH", word, n if length is None else length) + hdr + payload
    return body + struct.pack(">I", zlib.adler32(body) if adler is None else adler)


def both(path):
    lt, _ = lint(path)
    ts, _ = tshark(path, "WARP-")
    return only(lt, "WARP-"), ts


class TransmitErrorIsANote(unittest.TestCase):
    def test_e_bit(self):
        c = Conversation(PORT)
        c.send(0, chunk(SEND, L | E, 1, 0, b"aborted by its sender"))
        c.send(0, chunk(SEND, L | C, 2, 0, b"the next one"))
        c.send(1, chunk(SEND, L, 7, 0, b"reply"))
        c.close()
        lt, ts = both(capture("warp_e.pcap", c.frames))
        self.assertEqual(lt, {4: {("WARP-SUMMARY-E-TXERR", "note")}})
        self.assertEqual(ts, lt)
        self.assertEqual(ids(lt), {})


class SendWithoutLast(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        c = Conversation(PORT)
        cls.first = c.send(0, chunk(SEND, 0, 1, 0, b"x" * 40))          # Send 1, no L ...
        cls.next_ssn = c.send(0, chunk(SEND, L, 2, 0, b"y" * 10))       # ... Send 2 starts: L-LAST
        cls.open = c.send(0, chunk(SEND, 0, 3, 0, b"z" * 30))           # Send 3 never ends
        c.send(1, chunk(SEND, L, 1, 0, b"reply"))
        c.fin(1)
        cls.fin = c.fin(0)                                              # A's FIN closes the connection
        cls.path = capture("warp_no_last.pcap", c.frames)
        cls.lint, cls.tshark = both(cls.path)

    def test_next_ssn_without_last(self):
        self.assertEqual(ids(self.lint).get(self.next_ssn), {"WARP-SUMMARY-L-LAST"})

    def test_direction_ends_mid_pdu(self):
        self.assertEqual(ids(self.lint).get(self.fin), {"WARP-SUMMARY-L-LAST"})

    def test_nothing_else_and_tools_agree(self):
        self.assertEqual(set(ids(self.lint)), {self.next_ssn, self.fin})
        self.assertEqual(self.tshark, self.lint)

    def test_a_finished_send_is_clean(self):
        c = Conversation(PORT)
        c.send(0, chunk(SEND, 0, 1, 0, b"x" * 40))
        c.send(0, chunk(SEND, L, 1, 40, b"x" * 40))
        c.close()
        lt, ts = both(capture("warp_last_ok.pcap", c.frames))
        self.assertEqual((lt, ts), ({}, {}))


class TwoWritesOneFrame(unittest.TestCase):
    """Two multi-chunk RDMA Writes to RID 9, both completing in one frame: 3000 bytes at offsets
    0/1440/2880, then 2000 bytes at 0/1440 (the draft lets a ULP write one region many times)."""

    def test_reassembled_apart_in_two_passes(self):
        w1 = [bytes([0x41 + i]) * n for i, n in enumerate((1440, 1440, 120))]
        w2 = [bytes([0x61 + i]) * n for i, n in enumerate((1440, 560))]
        c = Conversation(PORT)
        c.send(0, chunk(RDMA, 0, 9, 0, w1[0]))
        c.send(0, chunk(RDMA, 0, 9, 1440, w1[1]))
        last = c.send(0, chunk(RDMA, L, 9, 2880, w1[2]) + chunk(RDMA, 0, 9, 0, w2[0]) + chunk(RDMA, L | C, 9, 1440, w2[1]))
        c.close()
        path = capture("warp_two_writes.pcap", c.frames)
        for two in (False, True):
            _, f = tshark(path, "WARP-", ["warp.reassembled.length", "warp.reassembled.data"], two_pass=two)
            lengths, data = f[last]
            self.assertEqual(lengths.split("^"), ["3000", "2000"], "two-pass" if two else "one pass")
            self.assertEqual([bytes.fromhex(d) for d in data.split("^")], [b"".join(w1), b"".join(w2)])
        lt, ts = both(path)
        self.assertEqual((lt, ts), ({}, {}))


class RejectedReadingsNamed(unittest.TestCase):
    def test_8bit_type(self):
        c = Conversation(PORT)
        c.send(0, chunk(SEND, L, 1, 0, b"ok"))
        bad = c.send(0, chunk(RDMA, L, 9, 0, b"w" * 24, type8=True))
        c.send(0, chunk(SEND, L, 2, 0, b"still framed"))
        c.close()
        lt, ts = both(capture("warp_type8.pcap", c.frames))
        self.assertEqual(ids(lt), {bad: {"WARP-A-TYPE-KNOWN"}})
        self.assertEqual(ts, lt)
        _, issues = lint(capture("warp_type8.pcap", c.frames))
        self.assertTrue(any("8-bit Type" in i["message"] for i in issues))

    def test_length_without_adler(self):
        def short(ctype, flags, a, b, payload):
            full = chunk(ctype, flags, a, b, payload)
            return full[:2] + struct.pack(">H", len(full) - 4) + full[4:-4] + \
                struct.pack(">I", zlib.adler32(full[:2] + struct.pack(">H", len(full) - 4) + full[4:-4]))
        c = Conversation(PORT)
        first = c.send(0, short(SEND, L, 1, 0, b"p" * 20))
        c.send(0, short(SEND, L, 2, 0, b"q" * 20))
        c.close()
        path = capture("warp_no_adler.pcap", c.frames)
        lt, ts = both(path)
        self.assertEqual(ids(lt), {first: {"WARP-A-ADLER-VALID", "WARP-A-CHUNK-LEN"}})
        self.assertEqual(ts, lt)
        _, issues = lint(path)
        self.assertTrue(any("leaves the Adler-32 out" in i["message"] for i in issues))


class RuleBrokenNamed(unittest.TestCase):
    """W21 (issue 28): a verdict names the rule the bytes broke, the same in both tools."""

    def test_length_four_too_long(self):
        def long4(ctype, flags, a, b, payload):
            full = chunk(ctype, flags, a, b, payload)
            body = full[:2] + struct.pack(">H", len(full) + 4) + full[4:-4]
            return body + struct.pack(">I", zlib.adler32(body))
        c = Conversation(PORT)
        c.send(0, chunk(SEND, L, 1, 0, b"ok"))
        bad = c.send(0, long4(SEND, L, 2, 0, b"p" * 20) + chunk(SEND, L, 3, 0, b"q" * 20))
        c.close()
        path = capture("warp_len4.pcap", c.frames)
        lt, ts = both(path)
        self.assertEqual(ids(lt), {bad: {"WARP-A-CHUNK-LEN"}})
        self.assertEqual(ts, lt)
        _, issues = lint(path)
        self.assertTrue(any("is 4 more than the chunk" in i["message"] for i in issues))

    def test_early_last_bit(self):
        c = Conversation(PORT)
        c.send(0, chunk(SEND, L, 1, 0, b"a" * 1448))
        bad = c.send(0, chunk(SEND, L, 1, 1448, b"b" * 100))
        c.send(0, chunk(SEND, L, 2, 0, b"next"))
        c.close()
        lt, ts = both(capture("warp_early_l.pcap", c.frames))
        self.assertEqual(ids(lt), {bad: {"WARP-SUMMARY-L-LAST"}})
        self.assertEqual(ts, lt)

    def test_repeated_ssn(self):
        c = Conversation(PORT)
        c.send(0, chunk(SEND, L, 1, 0, b"once"))
        copy = c.send(0, chunk(SEND, L, 1, 0, b"once"))
        c.send(0, chunk(SEND, L, 2, 0, b"next"))
        other = c.send(0, chunk(SEND, L, 2, 0, b"else"))
        c.close()
        lt, ts = both(capture("warp_ssn_again.pcap", c.frames))
        self.assertEqual(ids(lt), {copy: {"WARP-A.1.2-SSN-NEXT", "WARP-INTRO-NO-WARP-RETRANSMIT"},
                                   other: {"WARP-A.1.2-SSN-NEXT"}})
        self.assertEqual(ts, lt)

class PayloadOnlyLengthNamed(unittest.TestCase):
    """W17: a Chunk length that counts the payload only is named where the bytes show it (the
    chunk's Adler-32 checks out read so, or a chunk header follows it), in both tools, at the
    chunk's frame under WARP-A-CHUNK-LEN, in one and two passes; nothing after it is read."""

    @staticmethod
    def po(ctype, flags, a, b, payload, adler_ok=True):
        hdr = struct.pack(">IQ", a, b) if ctype == RDMA else struct.pack(">II", a, b)
        body = struct.pack(">HH", ctype << 12 | flags, len(payload)) + hdr + payload
        return body + struct.pack(">I", zlib.adler32(body) ^ (0 if adler_ok else 0xFFFF))

    def check(self, name, payload, reading, ctype=SEND, adler_ok=True, together=False, header_cut=0):
        c = Conversation(PORT)
        ok = chunk(SEND, L, 1, 0, b"ok")
        first = self.po(ctype, L, 2, 0, payload, adler_ok)
        second = self.po(SEND, L, 3, 0, b"more of the same")
        if header_cut:
            # the chunk's first word split across two segments: both tools read on from where TCP
            # completes it, to the end of that segment
            stream = ok + first + second
            c.send(0, stream[:len(ok) + header_cut])
            bad = c.send(0, stream[len(ok) + header_cut:])
        elif together:
            c.send(0, ok)
            bad = c.send(0, first + second)
        else:
            c.send(0, ok)
            bad = c.send(0, first)
            c.send(0, second)
        c.send(1, chunk(SEND, L, 7, 0, b"reply"))
        c.close()
        path = capture(name, c.frames)
        lt, issues = lint(path)
        lt = only(lt, "WARP-")
        self.assertEqual(lt, {bad: {("WARP-A-CHUNK-LEN", "error")}})
        self.assertTrue(any(reading in i["message"] for i in issues if i["frame"] == bad), issues)
        for two in (False, True):
            ts, f = tshark(path, "WARP-", ["_ws.col.Info"], two_pass=two)
            self.assertEqual(ts, lt, "two-pass" if two else "one pass")
            self.assertIn("[framing lost: length of the payload only]", f[bad][0])
        msgs = tsharklib.run(path, ["-Y", "frame.number == %d" % bad, "-T", "fields", "-e", "_ws.expert.message"])
        self.assertIn(reading, msgs)

    def test_send_adler_reads_right(self):
        self.check("warp_po_send.pcap", b"p" * 40, "payload only: read so, the chunk's Adler-32 checks out")

    def test_length_under_the_header(self):
        # 8 payload bytes: W2 cannot frame a Send of 8, the payload-only reading can
        self.check("warp_po_short.pcap", b"p" * 8, "payload only: read so, the chunk's Adler-32 checks out")

    def test_rdma_write(self):
        self.check("warp_po_rdma.pcap", bytes(range(100)), "checks out", ctype=RDMA)

    def test_next_header_parses(self):
        # the Adler-32 is wrong either way, but the next chunk's header follows the payload-only chunk
        self.check("warp_po_next.pcap", b"p" * 40, "payload only: read so, a chunk header follows",
                   adler_ok=False, together=True)

    def test_header_split_across_segments(self):
        for cut in (1, 3):
            self.check("warp_po_cut%d.pcap" % cut, b"p" * 40, "checks out", header_cut=cut)

    def test_w2_bad_adler_is_not_this_reading(self):
        c = Conversation(PORT)
        bad = c.send(0, chunk(SEND, L, 1, 0, b"p" * 40, adler=1))
        c.send(0, chunk(SEND, L, 2, 0, b"still framed"))
        c.close()
        lt, ts = both(capture("warp_po_none.pcap", c.frames))
        self.assertEqual(ids(lt), {bad: {"WARP-A-ADLER-VALID"}})
        self.assertEqual(ts, lt)


if __name__ == "__main__":
    unittest.main()
