"""Issue 22, VI/TCP, from independent captures (segments packed by hand with
struct and a CRC written in Python, vitcp_bytes.py; TCP by tcp_pcap.py):
a NOP before the ConnectRequest breaks VITCP-4.2-REQUEST-FIRST once and
does not derail the negotiation (V27); at Reliable Delivery a segment with
a bad CRC that is TCP-ACKed and followed by more data shows that neither
reaction of section 3.6 happened (VITCP-3.6-BAD-CRC-REACTION, V26), while
a receiver that closes at once is clean of it. Lint and the plugin give
the same IDs on the same frames."""
import unittest

from tcp_pcap import Conversation, capture, ids, lint, only, tshark
from vitcp_bytes import (CONNECT_ACCEPT, CONNECT_REQUEST, EOM, NOP, PORT, RELIABLE_DELIVERY, SEND, ce_header,
                         segment)

DATA = b"independent VI/TCP payload bytes" * 2


def both(name, frames):
    path = capture(name, frames)
    lt, issues = lint(path)
    ts, _ = tshark(path, "VITCP-")
    return only(lt, "VITCP-"), ts, issues


def connected(nop_first=False):
    c = Conversation(PORT)
    nop = c.send(0, segment(NOP, 99)) if nop_first else None
    c.send(0, segment(CONNECT_REQUEST, 100, ce=ce_header(RELIABLE_DELIVERY)))
    c.send(1, segment(CONNECT_ACCEPT, 500, 100, ce=ce_header(RELIABLE_DELIVERY)))
    return c, nop


class NopBeforeRequest(unittest.TestCase):
    def test_one_error_and_the_negotiation_stands(self):
        c, nop = connected(nop_first=True)
        for n in range(101, 105):
            c.send(0, segment(SEND, n, payload=DATA, flags=EOM))
        c.send(1, segment(SEND, 501, payload=DATA, flags=EOM))
        c.close()
        lt, ts, _ = both("vitcp_nop_first.pcap", c.frames)
        self.assertEqual(ids(lt), {nop: {"VITCP-4.2-REQUEST-FIRST"}})
        self.assertEqual(ids(ts), ids(lt))

    def test_clean_without_it(self):
        c, _ = connected()
        c.send(0, segment(SEND, 101, payload=DATA, flags=EOM))
        c.close()
        lt, ts, _ = both("vitcp_clean.pcap", c.frames)
        self.assertEqual((ids(lt), ids(ts)), ({}, {}))


class BadCrcAtReliableDelivery(unittest.TestCase):
    def test_acked_and_carried_on_is_red(self):
        c, _ = connected()
        bad = c.send(0, segment(SEND, 101, payload=DATA, flags=EOM, bad_crc=True))  # B ACKs it (pure ACK)
        more = c.send(0, segment(SEND, 102, payload=DATA, flags=EOM))
        c.close()
        lt, ts, _ = both("vitcp_badcrc_carried_on.pcap", c.frames)
        self.assertEqual(ids(lt), {bad: {"VITCP-3.6-CRC-VALID"}, more: {"VITCP-3.6-BAD-CRC-REACTION"}})
        self.assertEqual(ids(ts), ids(lt))

    def test_closed_at_once_is_clean_of_it(self):
        c, _ = connected()
        bad = c.send(0, segment(SEND, 101, payload=DATA, flags=EOM, bad_crc=True))
        c.rst(1)
        lt, ts, _ = both("vitcp_badcrc_closed.pcap", c.frames)
        self.assertEqual(ids(lt), {bad: {"VITCP-3.6-CRC-VALID"}})
        self.assertEqual(ids(ts), ids(lt))



if __name__ == "__main__":
    unittest.main()
