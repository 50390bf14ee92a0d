"""Issue 22, item 4, from independent captures: both hops of a message
through a router (A -> R, then R -> B, over Ethernet or UDP) are paired by
lint and the plugin alike. A right router (L2RH consumed, TAIL shifted, or
left alone when its MSbit is set, LSbit set on an error it saw) is clean;
a wrong TAIL shift is red under EEP-10-EI-SHIFT, a changed data block
under EEP-8-DB-UNMODIFIED, a changed priority under
EEP-4B-ONLY-TAIL-MODIFIED, a kept L2RH under EEP-5-HR-CONSUMES-L2RH, a kept
symbol under EEP-5-SYMBOL-CONSUMED and a
forwarded Hey-You!/Broadcast under EEP-6C-LOCAL-ONLY; the plugin links the
copy to its first hop (pktway.first_hop_in)."""
import unittest

from eep_pcap import (IP_A, IP_B, IP_R, MAC_A, MAC_B, MAC_BROADCAST, MAC_R, capture, ether, ids, l2rh, lint,
                      message, symbol, tshark, udp)

DATA = b"a data block of forty bytes, unchanged."
MSB = 0x8000000000000000


def hops(first, second, carrier="eth", first_dst=None):
    """Frames of a message sent A -> R and the copy R -> B."""
    if carrier == "eth":
        return [ether(first, src=MAC_A, dst=first_dst or MAC_R), ether(second, src=MAC_R, dst=MAC_B)]
    return [udp(first, src=IP_A, dst=IP_R, smac=MAC_A, dmac=MAC_R),
            udp(second, src=IP_R, dst=IP_B, smac=MAC_R, dmac=MAC_B)]


def pair(in_ei=0x1, out_ei=0x2, out_data=DATA, out_priority=0, keep_l2rh=False, dt=0x000207, carrier="eth",
         first_dst=None):
    route = l2rh(b"\x03\x01\x04")
    first = message(dt=dt, pt=0x0001, data=DATA, ei=in_ei, records=route, priority=5)
    second = message(dt=dt, pt=0x0001, data=out_data, ei=out_ei, records=route if keep_l2rh else b"",
                     priority=out_priority if out_priority else 5)
    return hops(first, second, carrier, first_dst)


CASES = {
    # name: (frames, IDs at warning or above on the router's copy, or None when no pair is expected)
    "right": (pair(), set()),
    "right_udp": (pair(carrier="udp"), set()),
    "right_error_seen": (pair(out_ei=0x3), set()),
    "right_msb": (pair(in_ei=MSB | 1, out_ei=MSB | 1), set()),
    "right_msb_error_seen": (pair(in_ei=MSB, out_ei=MSB | 1), set()),
    "not_shifted": (pair(out_ei=0x1), {"EEP-10-EI-SHIFT"}),
    "not_shifted_udp": (pair(out_ei=0x1, carrier="udp"), {"EEP-10-EI-SHIFT"}),
    "shifted_twice": (pair(out_ei=0x4), {"EEP-10-EI-SHIFT"}),
    "msb_shifted": (pair(in_ei=MSB | 1, out_ei=0x2), {"EEP-10-EI-SHIFT"}),
    "data_changed": (pair(out_data=DATA.upper()), {"EEP-8-DB-UNMODIFIED"}),
    "priority_changed": (pair(out_priority=9), {"EEP-4B-ONLY-TAIL-MODIFIED"}),
    "l2rh_kept": (pair(keep_l2rh=True), {"EEP-5-HR-CONSUMES-L2RH"}),
    "symbol_kept": (hops(message(pt=0x0001, data=DATA, ei=0x1, records=symbol(0x42, b"sym")),
                         message(pt=0x0001, data=DATA, ei=0x2, records=symbol(0x42, b"sym"))),
                    {"EEP-5-SYMBOL-CONSUMED"}),
    "symbol_consumed": (hops(message(pt=0x0001, data=DATA, ei=0x1, records=symbol(0x42, b"sym")),
                             message(pt=0x0001, data=DATA, ei=0x2)), set()),
    "hey_you_forwarded": (pair(dt=0x7FFFFE, first_dst=MAC_BROADCAST), {"EEP-6C-LOCAL-ONLY"}),
    "broadcast_forwarded": (pair(dt=0x7FFFFF, first_dst=MAC_BROADCAST), {"EEP-6C-LOCAL-ONLY"}),
    # no pair: sent back to its sender; another message; the same frame twice
    "sent_back": ([ether(message(pt=0x0001, data=DATA), src=MAC_A, dst=MAC_R),
                   ether(message(pt=0x0001, data=DATA, ei=0x7), src=MAC_R, dst=MAC_A)], None),
    "other_message": ([ether(message(pt=0x0001, data=DATA), src=MAC_A, dst=MAC_R),
                       ether(message(sa=0x000103, pt=0x0001, data=DATA, ei=0x7), src=MAC_R, dst=MAC_B)], None),
    "same_frame_twice": ([ether(message(pt=0x0001, data=DATA, ei=0x7), src=MAC_A, dst=MAC_R)] * 2, None),
}


class RouterPairs(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.results = {}
        for name, (frames, _) in CASES.items():
            path = capture("eep_router_%s.pcap" % name, frames)
            judged, fields = tshark(path, ["pktway.first_hop_in"])
            cls.results[name] = (lint(path), judged, fields)

    def test_lint_and_plugin_agree(self):
        for name, (by_lint, by_plugin, _) in self.results.items():
            self.assertEqual(by_lint, by_plugin, name)

    def test_each_copy_judged(self):
        for name, (_, expected) in CASES.items():
            by_lint, _, _ = self.results[name]
            got = ids(by_lint)
            if expected:
                self.assertEqual(got, {2: expected}, name)
            else:
                self.assertEqual(got, {}, name)

    def test_wrong_shift_is_an_error(self):
        by_lint, by_plugin, _ = self.results["not_shifted"]
        self.assertIn(("EEP-10-EI-SHIFT", "error"), by_lint[2])
        self.assertIn(("EEP-10-EI-SHIFT", "error"), by_plugin[2])

    def test_plugin_links_the_first_hop(self):
        for name, (_, expected) in CASES.items():
            fields = self.results[name][2]
            self.assertEqual(fields[1], [""], name)
            self.assertEqual(fields[2], ["1"] if expected is not None else [""], name)


if __name__ == "__main__":
    unittest.main()
