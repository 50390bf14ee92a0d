"""Issue 22, VI/TCP, from independent captures (segments packed by hand with
struct and a CRC written in Python, vitcp_bytes.py; TCP by tcp_pcap.py):
a NOP before the ConnectRequest breaks VITCP-4.2-REQUEST-FIRST once and
does not derail the negotiation (V27); at Reliable Delivery a segment with
a bad CRC that the receiver TCP-ACKs and then sends on after shows that
neither reaction of section 3.6 happened (VITCP-3.6-BAD-CRC-REACTION, V26),
while a receiver that closes at once is clean of it, whatever the sender
still sends (V29). Lint and the plugin give
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
    """V26, V29: the reaction is judged on the side that received the bad
    segment (B here): B's own VI segments after it ACKed the bad one break
    VITCP-3.6-BAD-CRC-REACTION; A's segments (pipelined, or after B's FIN)
    are no reaction of B's. One and two passes."""

    def judge(self, name, c):
        lt, ts, _ = both(name, c.frames)
        ts2, _ = tshark(capture(name, c.frames), "VITCP-", two_pass=True)
        self.assertEqual(ids(ts), ids(lt))
        self.assertEqual(ids(ts2), ids(lt))
        return lt

    def test_receiver_acks_and_sends_on_is_red(self):
        c, _ = connected()
        bad = c.send(0, segment(SEND, 101, payload=DATA, flags=EOM, bad_crc=True))  # B ACKs it (pure ACK)
        c.send(0, segment(SEND, 102, payload=DATA, flags=EOM))                      # A's: no reaction
        more = c.send(1, segment(SEND, 501, payload=DATA, flags=EOM))               # B carries on
        c.close()
        lt = self.judge("vitcp_badcrc_carried_on.pcap", c)
        self.assertEqual(ids(lt), {bad: {"VITCP-3.6-CRC-VALID"}, more: {"VITCP-3.6-BAD-CRC-REACTION"}})

    def test_sender_pipelines_and_receiver_fins_is_clean_of_it(self):
        c, _ = connected()
        bad = c.send(0, segment(SEND, 101, payload=DATA, flags=EOM, bad_crc=True))
        c.send(0, segment(SEND, 102, payload=DATA, flags=EOM))  # in flight when B saw the bad one
        c.fin(1)                                                # B delivers with error and closes (3.6)
        c.send(0, segment(SEND, 103, payload=DATA, flags=EOM))  # A had not seen B's FIN yet
        c.fin(0)
        lt = self.judge("vitcp_badcrc_fin.pcap", c)
        self.assertEqual(ids(lt), {bad: {"VITCP-3.6-CRC-VALID"}})

    def test_closed_at_once_is_clean_of_it(self):
        c, _ = connected()
        bad = c.send(0, segment(SEND, 101, payload=DATA, flags=EOM, bad_crc=True))
        c.rst(1)
        lt = self.judge("vitcp_badcrc_closed.pcap", c)
        self.assertEqual(ids(lt), {bad: {"VITCP-3.6-CRC-VALID"}})


if __name__ == "__main__":
    unittest.main()
