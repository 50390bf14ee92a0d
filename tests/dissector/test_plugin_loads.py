"""The built plugin is the one tshark loads, and it registers all four protocols."""
import unittest
import tsharklib


class PluginLoads(unittest.TestCase):
    def test_protocols_registered(self):
        protos = tsharklib.run_raw(["-G", "protocols"])
        names = {line.split("\t")[2] for line in protos.splitlines() if line.count("\t") >= 2}
        for proto in ("vitcp", "ift", "pktway", "warp"):
            self.assertIn(proto, names)


if __name__ == "__main__":
    unittest.main()
