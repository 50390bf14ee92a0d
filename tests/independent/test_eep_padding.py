"""Issue 22, item 1, from an independent capture: Ethernet frames padded to
the 60-byte minimum (with and without a VLAN tag) are clean in both tshark
and lint, their EI is read from the message and not from the padding, a
non-zero EI from a source is a note (EEP-10-EI-ERROR), and fewer than 8
bytes after a message are link padding whatever they hold."""
import struct
import unittest

from eep_pcap import MAC_A, MAC_B, capture, ether, ids, lint, message, tshark, udp


class PaddedFramesAreClean(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        frames = [
            ether(message(pt=0x0001)),                                         # 1: 24 bytes + 22 padding
            ether(message(pt=0x0001, data=b"abcdefgh")),                       # 2: 32 + 14
            ether(message(pt=0x0001, data=b"abcdefghijklm")),                  # 3: 40 (PL 3) + 6
            ether(message(pt=0x0001, data=b"abcdefgh"), vlan=7),               # 4: VLAN, 32 + 10
            ether(message(pt=0x0001, ei=0x1)),                                 # 5: a source's non-zero EI
            ether(message(pt=0x0001, data=b"x" * 32) + b"\xee" * 5, pad=False),  # 6: 56 + 5 odd bytes
            udp(message(pt=0x0001, data=b"abcdefgh")),                         # 7: UDP: exactly the message
            ether(message(pt=0x0001, data=b"abcdefgh", ei=0x8000000000000000), src=MAC_B, dst=MAC_A),  # 8
        ]
        assert len(frames[0]) == 60 and len(frames[3]) == 60 and len(frames[5]) == 14 + 61
        cls.path = capture("eep_padding.pcap", frames)
        cls.lint = lint(cls.path)
        cls.tshark, cls.fields = tshark(cls.path, ["pktway.ei", "pktway.link_padding"])

    def test_no_warning_or_error(self):
        self.assertEqual(ids(self.lint), {})
        self.assertEqual(ids(self.tshark), {})

    def test_lint_and_plugin_agree(self):
        self.assertEqual(self.lint, self.tshark)

    def test_ei_is_a_note_and_never_read_from_padding(self):
        padding = ("EEP-4A-CARRIAGE", "note")  # P1: link padding is noted
        self.assertEqual(self.lint.get(5), {("EEP-10-EI-ERROR", "note"), padding})
        eis = {f: int(v[0], 16) for f, v in self.fields.items()}
        self.assertEqual(eis, {1: 0, 2: 0, 3: 0, 4: 0, 5: 1, 6: 0, 7: 0, 8: 0x8000000000000000})
        for frame in (1, 2, 3, 4, 6):
            self.assertEqual(self.lint.get(frame), {padding})
        self.assertNotIn(7, self.lint)
        # frame 8 is frame 2 sent back to its sender: not a router's copy
        self.assertEqual(self.lint.get(8), {("EEP-10-EI-ERROR", "note"), padding})

    def test_link_padding_shown(self):
        self.assertEqual(self.fields[1][1], "00" * 22)
        self.assertEqual(self.fields[6][1], "ee" * 5)
        self.assertEqual(self.fields[7][1], "")


if __name__ == "__main__":
    unittest.main()
