"""Issue 31, item 1, from independent captures: a router has an address
per interface (it receives on 127.77.0.10 and forwards from 127.77.0.11
over UDP; on two MACs over Ethernet), so both hops of a message are paired
by what a router may not change (version, DT, SA, PT, the data block or
the header), within a second, whatever addresses carry them (P31). Every
router rule is then judged: a TAIL not shifted, shifted the wrong way,
shifted with its MSbit set, or with the bits it carried lost; a data block
or a priority modified; a kept L2RH; a Hey-You! or Broadcast forwarded. A
capture where pairing by content is ambiguous is settled by naming the
router's addresses (lint --eep-router, the plugin's
pktway.router_addresses). The plugin shows the pair both ways
(pktway.first_hop_in on the copy, pktway.forwarded_in on the first hop,
the latter once the copy was dissected). Lint and the plugin agree, in one
pass and in two."""
import unittest

from eep_pcap import MAC_A, MAC_B, MAC_BROADCAST, capture, ether, ids, l2rh, message, udp
from tcp_pcap import lint, tshark

IP_A, IP_RIN, IP_ROUT, IP_B = bytes([127, 77, 0, 2]), bytes([127, 77, 0, 10]), bytes([127, 77, 0, 11]), \
    bytes([127, 77, 0, 3])
MAC_RIN, MAC_ROUT = bytes.fromhex("020000000010"), bytes.fromhex("020000000011")
DATA = b"a data block of forty bytes, unchanged."
MSB = 0x8000000000000000
MS = 1000   # microseconds


def hops(first, second, carrier, first_dst=None):
    """A -> R (on its in address), then R -> B (from its out address)."""
    if carrier == "eth":
        return [ether(first, src=MAC_A, dst=first_dst or MAC_RIN), ether(second, src=MAC_ROUT, dst=MAC_B)]
    return [udp(first, src=IP_A, dst=first_dst or IP_RIN, smac=MAC_A, dmac=MAC_RIN),
            udp(second, src=IP_ROUT, dst=IP_B, smac=MAC_ROUT, dmac=MAC_B)]


def pair(carrier, in_ei=0x1, out_ei=0x2, out_data=DATA, out_priority=5, keep_l2rh=False, dt=0x000207,
         first_dst=None):
    route = l2rh(b"\x03\x01\x04")
    first = message(dt=dt, pt=0x0001, data=DATA, ei=in_ei, records=route, priority=5)
    second = message(dt=dt, pt=0x0001, data=out_data, ei=out_ei, records=route if keep_l2rh else b"",
                     priority=out_priority)
    return hops(first, second, carrier, first_dst)


def cases(carrier):
    group = MAC_BROADCAST if carrier == "eth" else bytes([255, 255, 255, 255])
    return {
        # name: (frames, IDs at warning or above on the copy)
        "right": (pair(carrier), set()),
        "right_msb": (pair(carrier, in_ei=MSB | 1, out_ei=MSB | 1), set()),
        "not_shifted": (pair(carrier, out_ei=0x1), {"EEP-10-EI-SHIFT"}),
        "shifted_right": (pair(carrier, in_ei=0x2, out_ei=0x1), {"EEP-10-EI-SHIFT"}),
        "shifted_into_msbit": (pair(carrier, in_ei=MSB | 1, out_ei=0x2), {"EEP-10-EI-SHIFT"}),
        "bits_lost": (pair(carrier, in_ei=0x1, out_ei=0x0), {"EEP-10-EI-SHIFT"}),
        "data_changed": (pair(carrier, out_data=DATA.upper()), {"EEP-8-DB-UNMODIFIED"}),
        "priority_changed": (pair(carrier, out_priority=9), {"EEP-4B-ONLY-TAIL-MODIFIED"}),
        "l2rh_kept": (pair(carrier, keep_l2rh=True), {"EEP-5-HR-CONSUMES-L2RH"}),
        "hey_you_forwarded": (pair(carrier, dt=0x7FFFFE, first_dst=group), {"EEP-6C-LOCAL-ONLY"}),
        "broadcast_forwarded": (pair(carrier, dt=0x7FFFFF, first_dst=group), {"EEP-6C-LOCAL-ONLY"}),
    }


def both(test, path, lint_args=(), prefs=()):
    """Lint's {frame: {(ID, severity)}} after checking the plugin gives the same in one and two passes;
    and the plugin's (first_hop_in, forwarded_in) per frame from a second pass."""
    lt, _ = lint(path, lint_args)
    lt = {f: v for f, v in ((f, {x for x in found if x[0].startswith("EEP-") and x[0] != "EEP-4A-CARRIAGE"})
                            for f, found in lt.items()) if v}
    extra = []
    for p in prefs:
        extra += ["-o", p]
    links = None
    for two in (False, True):
        ts, f = tshark(path, "EEP-", ["pktway.first_hop_in", "pktway.forwarded_in"], two_pass=two, extra_args=extra)
        ts = {k: v for k, v in ((k, {x for x in v if x[0] != "EEP-4A-CARRIAGE"}) for k, v in ts.items()) if v}
        test.assertEqual(ts, lt, "%s two_pass=%s" % (path, two))
        if two:
            links = {k: tuple(v) for k, v in f.items()}
    return lt, links


class RouterWithTwoAddresses(unittest.TestCase):
    def test_every_router_rule_over_udp_and_ethernet(self):
        for carrier in ("udp", "eth"):
            for name, (frames, expected) in cases(carrier).items():
                path = capture("eep_r2_%s_%s.pcap" % (carrier, name), frames, [0, 2 * MS])
                lt, links = both(self, path)
                self.assertEqual(ids(lt), {2: expected} if expected else {}, "%s %s" % (carrier, name))
                self.assertEqual(links[1], ("", "2"), "%s %s: the first hop names its copy" % (carrier, name))
                self.assertEqual(links[2], ("1", ""), "%s %s: the copy names its first hop" % (carrier, name))

    def test_outside_the_time_window_no_pair(self):
        path = capture("eep_r2_late.pcap", pair("udp", out_ei=0x1), [0, 3000 * MS])
        lt, links = both(self, path)
        self.assertEqual(ids(lt), {})
        self.assertEqual(links[2], ("", ""))

    def test_the_sender_again_and_a_copy_back_are_no_hops(self):
        m = message(pt=0x0001, data=DATA, ei=0x1)
        frames = [udp(m, src=IP_A, dst=IP_RIN), udp(message(pt=0x0001, data=DATA, ei=0x7), src=IP_A, dst=IP_B),
                  udp(message(pt=0x0001, data=DATA, ei=0x7), src=IP_ROUT, dst=IP_A)]
        lt, links = both(self, capture("eep_r2_no_hop.pcap", frames, [0, MS, 2 * MS]))
        self.assertEqual(ids(lt), {})
        self.assertEqual([links[k] for k in (1, 2, 3)], [("", "")] * 3)


class AmbiguousPairing(unittest.TestCase):
    """Two nodes send the same message (same DT, SA, PT and data, e.g. a
    retransmission through another path): by content the copy from a
    non-router would pair; naming the router's addresses keeps only the
    router's copy, in both tools."""

    def frames(self):
        m_in = message(pt=0x0001, data=DATA, ei=0x1)
        return [udp(m_in, src=IP_A, dst=IP_RIN),                                           # 1 A -> R
                udp(message(pt=0x0001, data=DATA, ei=0x1), src=IP_B, dst=bytes([127, 77, 0, 4])),  # 2 B, no router
                udp(message(pt=0x0001, data=DATA, ei=0x2), src=IP_ROUT, dst=IP_B)]         # 3 R's copy

    def test_without_names_the_other_node_pairs(self):
        lt, links = both(self, capture("eep_r2_ambiguous.pcap", self.frames(), [0, MS, 2 * MS]))
        self.assertEqual(links[2][0], "1")   # taken for a hop that kept the TAIL
        self.assertEqual(ids(lt), {2: {"EEP-10-EI-SHIFT"}})

    def test_named_router_settles_it(self):
        path = capture("eep_r2_named.pcap", self.frames(), [0, MS, 2 * MS])
        lt, links = both(self, path, ["--eep-router", "127.77.0.10,127.77.0.11"],
                         ["pktway.router_addresses:127.77.0.10,127.77.0.11"])
        self.assertEqual(ids(lt), {})
        self.assertEqual([links[k] for k in (1, 2, 3)], [("", "3"), ("", ""), ("1", "")])

    def test_bad_router_address_is_refused(self):
        import os
        import subprocess
        p = subprocess.run([os.environ["VITCP_CONFORM"], "lint", "--eep-router", "10.0.0.300",
                            capture("eep_r2_any.pcap", self.frames())], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("10.0.0.300", p.stderr)


if __name__ == "__main__":
    unittest.main()
