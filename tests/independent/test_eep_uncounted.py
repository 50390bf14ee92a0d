"""Issue 31, item 3 (EEP), from independent captures: one fault, one ID.
Whole words between the data block DL sizes and the TAIL of a message
with h=0 are bytes its header did not count (P30): a data block longer
than DL says is the DL rule (EEP-6H-DL-FITS), OH fields written with h=0
the H rule (EEP-6I-H-FLAG); the trailer reading (EEP-9-OT-NEEDS-OH) is only
the symptom's note. Over UDP and Ethernet, lint and the plugin (one and
two passes) give the same IDs to the same bytes."""
import struct
import unittest

from eep_pcap import capture, ether, lint, message, udp
from tcp_pcap import tshark

DATA = bytes(range(1, 33))


def oh_field(oh_type, data, last=True):
    """An OH field: T(1) C(1) type(6), L, L bytes, zero-padded to 8*[(L+9)/8] bytes (7)."""
    rec = bytes([(0x40 if last else 0) | oh_type, len(data)]) + data
    return rec + b"\0" * (8 * ((len(data) + 9) // 8) - len(rec))


class UncountedWords(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        oh = oh_field(5, b"abc")
        frames = [
            udp(message(pt=0x0001, data=DATA, dl=2)),                        # 1: DL counts 2 of 4 words
            ether(message(pt=0x0001, data=DATA, dl=2, ei=7), pad=False),     # 2: the same over Ethernet
            udp(message(pt=0x0001, data=oh + DATA, dl=4)),                   # 3: an OH field, h=0
            ether(message(pt=0x0001, data=oh + DATA, dl=4, ei=7)),           # 4: the same over Ethernet
            udp(message(pt=0x0001, data=oh + DATA, dl=4, h=True)),           # 5: right: clean
            udp(message(pt=0x0001, data=DATA)),                              # 6: right: clean
        ]
        cls.path = capture("eep_uncounted.pcap", frames)
        cls.lint = {f: {x for x in found if x[0] != "EEP-4A-CARRIAGE"} for f, found in lint(cls.path).items()}
        cls.lint = {f: found for f, found in cls.lint.items() if found}

    def test_each_fault_under_the_header_rule(self):
        note = ("EEP-9-OT-NEEDS-OH", "note")
        self.assertEqual(self.lint, {
            1: {("EEP-6H-DL-FITS", "error"), note},
            2: {("EEP-6H-DL-FITS", "error"), note},
            3: {("EEP-6I-H-FLAG", "error"), note},
            4: {("EEP-6I-H-FLAG", "error"), note},
        })

    def test_plugin_agrees_in_one_and_two_passes(self):
        for two in (False, True):
            ts, _ = tshark(self.path, "EEP-", two_pass=two)
            ts = {f: {x for x in found if x[0] != "EEP-4A-CARRIAGE"} for f, found in ts.items()}
            self.assertEqual({f: v for f, v in ts.items() if v}, self.lint, "two_pass=%s" % two)


if __name__ == "__main__":
    unittest.main()
