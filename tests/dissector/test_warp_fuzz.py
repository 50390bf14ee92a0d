"""Mutated WARP chunks through the sanitizer-built plugin."""
import os
import unittest
from test_ift_fuzz import mutate_capture, survive, CAPS


class WarpFuzz(unittest.TestCase):
    def test_mutated_warp(self):
        sources = [os.path.join(CAPS, n) for n in ("warp-good.pcap", "warp-faults.pcap")]
        out = survive(self, mutate_capture(sources, 3000, 6, 54, True))
        self.assertIn("WARP", out)


if __name__ == "__main__":
    unittest.main()
