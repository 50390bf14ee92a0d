"""Mutated PacketWay EEP messages (Ethernet and UDP) through the sanitizer-built plugin."""
import os
import unittest
from test_ift_fuzz import mutate_capture, survive, CAPS


class PktwayFuzz(unittest.TestCase):
    def test_mutated_pktway(self):
        sources = [os.path.join(CAPS, n) for n in ("pktway-good.pcap", "pktway-faults.pcap")]
        out = survive(self, mutate_capture(sources, 3000, 5, 14, False))
        self.assertIn("PacketWay End-to-End Protocol", out)


if __name__ == "__main__":
    unittest.main()
