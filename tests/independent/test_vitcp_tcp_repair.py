"""Issue 33, V38: what TCP does to a VI/TCP connection is TCP's, never a
VI/TCP rule broken, in the plugin's one and two passes.

- A network that re-segments may cut the ConnectRequest before the end of
  its 24-byte header. The heuristic recognises the connection from the
  first four bytes (version, type, length) at the stream's start, and
  the plugin decodes the whole exchange as over one segment.
- With fewer than four bytes there is nothing to recognise; the
  connection is recognised later, at the other side's ConnectAccept. That
  side's first bytes were not decoded: the connection's start was not
  seen, so the Sends after it break no "request first" rule, and the
  second pass shows the early bytes as not decoded rather than as bytes
  that break the segment chain.
- A real capture of an impaired run (vitcp-conform run --impair
  tiny-segments,reorder=5%,seed=7 against vipl-peer, the read-window
  case's connection cut out with tshark): late pieces that Wireshark 4.0
  takes for spurious retransmissions reach the plugin where a segment
  header should start. Those bytes are unframed after a TCP repair (TCP's
  analysis flags the frame), not VITCP-3.2-SEG-CHAIN.
The server port is not VI/TCP's, so only the heuristic recognises the
hand-made connections."""
import gzip
import os
import shutil
import tempfile
import unittest

from tcp_pcap import Conversation, capture, ids, tshark, tsharklib
from vitcp_bytes import CONNECT_ACCEPT, CONNECT_REQUEST, EOM, RELIABLE_DELIVERY, SEND, ce_header, segment

PORT = 41999  # no VI/TCP port: the heuristic must recognise the connection
DATA = b"re-segmented VI/TCP payload" * 3
HERE = os.path.dirname(os.path.abspath(__file__))


def fields(path, two_pass, *names, extra=()):
    args = (["-2"] if two_pass else []) + list(extra) + ["-T", "fields", "-E", "separator=\t", "-E", "occurrence=a"]
    for n in ("frame.number",) + names:
        args += ["-e", n]
    return {int(r[0]): r[1:] for r in (line.split("\t") for line in tsharklib.run(path, args).splitlines())}


def exchange(first_piece):
    """A's ConnectRequest cut after first_piece bytes (no PSH on the piece),
    B's ConnectAccept, a Send each way, both FINs. Returns the capture and
    the frames of A's two pieces."""
    c = Conversation(PORT)
    req = segment(CONNECT_REQUEST, 100, ce=ce_header(RELIABLE_DELIVERY))
    piece1 = c.send(0, req[:first_piece], ack=False, push=False)
    piece2 = c.send(0, req[first_piece:])
    c.send(1, segment(CONNECT_ACCEPT, 500, 100, ce=ce_header(RELIABLE_DELIVERY)))
    c.send(0, segment(SEND, 101, payload=DATA, flags=EOM))
    c.send(1, segment(SEND, 501, payload=DATA, flags=EOM))
    c.close()
    return capture("vitcp_cut_request_%d.pcap" % first_piece, c.frames), piece1, piece2


class CutConnectRequest(unittest.TestCase):
    def test_recognised_from_four_bytes(self):
        for cut in (4, 10, 23):
            path, _, piece2 = exchange(cut)
            for two in (False, True):
                judged, _ = tshark(path, "VITCP-", two_pass=two)
                self.assertEqual(ids(judged), {}, "cut after %d bytes, two passes: %s" % (cut, two))
                by_frame = fields(path, two, "vitcp.type")
                types = [v[0] for _, v in sorted(by_frame.items()) if v[0]]
                # the request (in its second piece), the accept, a Send each way
                self.assertEqual(types, ["5", "6", "0", "0"], "cut after %d bytes, two passes: %s" % (cut, two))
                self.assertEqual(by_frame[piece2][0], "5")

    def test_recognised_late_judges_no_start(self):
        path, piece1, piece2 = exchange(2)
        for two in (False, True):
            judged, _ = tshark(path, "VITCP-", two_pass=two)
            self.assertEqual(ids(judged), {}, "two passes: %s" % two)
            types = [v[0] for _, v in sorted(fields(path, two, "vitcp.type").items()) if v[0]]
            self.assertEqual(types, ["6", "0", "0"], "two passes: %s" % two)
        second = fields(path, True, "vitcp.not_decoded", "vitcp.unframed")
        self.assertTrue(second[piece2][0], "the request's bytes are shown as not decoded on the second pass")
        self.assertFalse(second[piece2][1])

    def test_two_bytes_of_something_else_are_not_claimed(self):
        c = Conversation(PORT)
        c.send(0, b"\x01\x05", ack=False, push=False)  # VI/TCP's first two bytes, then no ConnectRequest
        c.send(0, b"GET / HTTP/1.0\r\n\r\n")
        c.close()
        path = capture("vitcp_not_claimed.pcap", c.frames)
        for two in (False, True):
            self.assertEqual([v for v in fields(path, two, "vitcp.type", "vitcp.unframed").values() if any(v)], [])


class ImpairedCapture(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="vitcp-repair-")
        self.path = os.path.join(self.tmp, "repair.pcapng")
        with gzip.open(os.path.join(HERE, "data", "vitcp-impaired-repair.pcapng.gz")) as f, open(self.path, "wb") as o:
            shutil.copyfileobj(f, o)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def test_unframed_after_a_repair_is_tcps(self):
        args = ["-o", "tcp.reassemble_out_of_order:TRUE", "-d", "tcp.port==59973,vitcp"]
        for two in (False, True):
            judged, _ = tshark(self.path, "VITCP-", two_pass=two, extra_args=args)
            chain = {f for f, found in judged.items() for i, _ in found if i == "VITCP-3.2-SEG-CHAIN"}
            self.assertEqual(chain, set(), "two passes: %s" % two)
            out = tsharklib.run(self.path, (["-2"] if two else []) + args + [
                "-Y", "frame.number == 1708", "-T", "fields", "-e", "_ws.col.Info", "-e", "vitcp.unframed"])
            info, unframed = out.rstrip("\n").split("\t")
            self.assertIn("after a TCP repair", info)
            self.assertTrue(unframed)
            # ...and the connection is decoded as before the change: 20 VI/TCP segments (most of them
            # reassembled 4 KB read responses) in one pass, 19 in two
            types = sum(len([t for t in v[0].split(",") if t])
                        for v in fields(self.path, two, "vitcp.type", extra=args).values())
            self.assertGreaterEqual(types, 19)


if __name__ == "__main__":
    unittest.main()
