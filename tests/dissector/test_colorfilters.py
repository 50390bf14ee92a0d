"""dissector/vitcp.colorfilters: every rule is a valid display filter and the
first matching rule colours what it is meant to (bad checksums, errors,
warnings, then each protocol), as Wireshark applies them in order."""
import os
import re
import unittest

import tsharklib

SOURCE = os.environ.get("VITCP_SOURCE_DIR", "")
CAPS = os.path.join(SOURCE, "captures")


def rules():
    out = []
    with open(os.path.join(SOURCE, "dissector", "vitcp.colorfilters")) as f:
        for line in f:
            m = re.match(r"^@([^@]+)@([^@]+)@\[(\d+),(\d+),(\d+)\]\[(\d+),(\d+),(\d+)\]$", line.strip())
            if m:
                out.append((m.group(1), m.group(2)))
            else:
                assert line.startswith("#") or not line.strip(), line
    return out


def first_rule(capture):
    """{frame: name of the first rule that matches}, as the packet list colours."""
    seen = {}
    for name, flt in rules():
        for row in tsharklib.fields(os.path.join(CAPS, capture), ["frame.number"], flt, two_pass=True):
            seen.setdefault(int(row[0]), name)
    return seen


class ColorFilters(unittest.TestCase):
    def test_format_and_filters_compile(self):
        self.assertEqual(len(rules()), 9)
        for name, flt in rules():
            self.assertTrue(name.startswith("vitcp: "))
            tsharklib.run(os.path.join(CAPS, "vitcp-connect.pcap"), ["-Y", flt])  # raises on a bad filter

    def test_each_capture_gets_its_colours(self):
        self.assertEqual({f for f, n in first_rule("vitcp-bad-crc.pcap").items() if n == "vitcp: bad checksum"}, {9})
        self.assertEqual({f for f, n in first_rule("warp-bad-adler.pcap").items() if n == "vitcp: bad checksum"}, {5})
        eep = first_rule("eep-oversized-dl.pcap")
        self.assertEqual(eep[3], "vitcp: protocol error")
        self.assertEqual(eep[1], "vitcp: PacketWay EEP")
        # a non-zero EI is a note (legal for a source, required of a router
        # that saw an error): the protocol's own colour, no warning colour
        self.assertEqual(first_rule("eep-ei-error.pcap")[1], "vitcp: PacketWay EEP")
        # the right CRC in the other byte order: a bad checksum as placed (red wins over the warning)
        self.assertEqual(first_rule("vitcp-crc-msb-first.pcap")[9], "vitcp: bad checksum")
        ift = first_rule("ift-session.pcap")
        self.assertEqual((ift[4], ift[6]), ("vitcp: IFT adaption indication", "vitcp: IFT"))
        full = first_rule("vitcp-full.pcap")
        self.assertEqual((full[4], full[6]), ("vitcp: VI/TCP connection establishment", "vitcp: VI/TCP"))


if __name__ == "__main__":
    unittest.main()
