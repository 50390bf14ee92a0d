"""The dissector on real traffic: vipl-pingpong sessions recorded with dumpcap
on the loopback (captures/vipl-pingpong-*.pcap, recorded once, not
regenerated; the commands are in captures/README.md).

Asserted in one pass and in two passes (-2): no malformed packet and no
warning or error expert (no rule note either: the sessions are clean); the
CRC is Good on every VI/TCP segment when the session negotiated it and Not
present when not; every message (a Send or an RDMA Write, single-segment or
reassembled) has the size the session's parameters give, in order, in the
right direction.
"""
import os
import unittest

import tsharklib

CAPTURES = os.path.join(os.environ.get("VITCP_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
                        "captures")

# name: (op, crc negotiated, sizes, --iters, --count) of the recorded run
SESSIONS = {
    "vipl-pingpong-send-crc": ("send", True, (4, 1000, 70000), 1, 1),
    "vipl-pingpong-send-nocrc": ("send", False, (4, 1000), 2, 2),
    "vipl-pingpong-write-crc": ("write", True, (4, 1000), 2, 2),
    "vipl-pingpong-write-nocrc": ("write", False, (4, 3000), 2, 2),
}

SEND, RDMA_WRITE, CONNECT_REQUEST, CONNECT_ACCEPT = 0, 1, 5, 6
CHECKSUM_GOOD, CHECKSUM_NOT_PRESENT = 1, 3
SEVERITY_WARN = 0x00600000
C, S = "client", "server"


def expected_messages(op, sizes, iters, count):
    """(direction, type, size) of every data message vipl-pingpong sends, in
    order: the address exchange (16 bytes each way), then per size a control
    message (16), the ping-pongs, a control message, the stream and the
    server's 4-byte acknowledgement; at the end the quit control message."""
    data = RDMA_WRITE if op == "write" else SEND
    out = [(C, SEND, 16), (S, SEND, 16)]
    for size in sizes:
        out.append((C, SEND, 16))
        for _ in range(iters):
            out += [(C, data, size), (S, data, size)]
        out.append((C, SEND, 16))
        out += [(C, data, size)] * count
        out.append((S, SEND, 4))
    out.append((C, SEND, 16))
    return out


def segments(name, two_pass):
    fields = ["frame.number", "tcp.dstport", "vitcp.type", "vitcp.payload_len", "vitcp.flags.eom",
              "vitcp.reassembled.length", "vitcp.crc.status"]
    rows = tsharklib.fields(os.path.join(CAPTURES, name + ".pcap"), fields, display_filter="vitcp",
                            two_pass=two_pass)
    for r in rows:
        if any("," in v for v in r):
            raise AssertionError("%s frame %s: more than one VI/TCP segment in a frame: %s" % (name, r[0], r))
    return rows


class RecordedPingpong(unittest.TestCase):
    def both(self, check):
        for name in sorted(SESSIONS):
            for two_pass in (False, True):
                with self.subTest(capture=name, two_pass=two_pass):
                    check(name, two_pass)

    def test_no_malformed_packet_or_warning(self):
        def check(name, two_pass):
            path = os.path.join(CAPTURES, name + ".pcap")
            bad = tsharklib.fields(path, ["frame.number", "_ws.expert.message"],
                                   display_filter="_ws.malformed || _ws.expert.severity >= %d || vitcp.rule"
                                   % SEVERITY_WARN, two_pass=two_pass)
            self.assertEqual(bad, [])
            # ... and the filter does find what it looks for (not a filter that matches nothing)
            self.assertTrue(tsharklib.fields(path, ["frame.number"], display_filter="vitcp.type == 5",
                                             two_pass=two_pass))
        self.both(check)

    def test_crc_status(self):
        def check(name, two_pass):
            crc = SESSIONS[name][1]
            rows = segments(name, two_pass)
            self.assertGreater(len(rows), 20)
            want = str(CHECKSUM_GOOD if crc else CHECKSUM_NOT_PRESENT)
            # every segment, the CE exchange included (it carries trailers once offered)
            wrong = [r for r in rows if r[6] != want]
            self.assertEqual(wrong, [], "crc.status should be %s" % want)
        self.both(check)

    def test_message_sizes(self):
        def check(name, two_pass):
            op, _, sizes, iters, count = SESSIONS[name]
            rows = segments(name, two_pass)
            server_port = None
            messages = []
            for frame, dport, typ, plen, eom, reasm, _ in rows:
                typ = int(typ)
                if typ == CONNECT_REQUEST:
                    server_port = dport
                if typ not in (SEND, RDMA_WRITE) or eom != "1":
                    continue
                size = int(reasm) if reasm else int(plen)
                messages.append((C if dport == server_port else S, typ, size))
            self.assertIsNotNone(server_port, "no ConnectRequest")
            self.assertEqual(messages, expected_messages(op, sizes, iters, count))
            if max(sizes) > 65280:
                # a message over one segment's payload is reassembled from several
                reassembled = [r for r in rows if r[5]]
                self.assertEqual([int(r[5]) for r in reassembled], [70000] * (2 * iters + count))
        self.both(check)


if __name__ == "__main__":
    unittest.main()
