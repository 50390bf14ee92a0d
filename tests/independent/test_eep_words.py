"""Issue 22, item 2, from an independent capture: a message that is not a
whole number of 8-byte words is said under EEP-1B-8B-WORDS (not
EEP-6H-DL-FITS) over UDP and over Ethernet, link padding (fewer than 8
bytes after the message's end as the message gives it) is still told
apart, and lint and the plugin give the same IDs to the same bytes."""
import unittest

from eep_pcap import capture, ether, ids, lint, message, tshark, udp


class MessageLengthInWords(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        frames = [
            # 1: DL 6 PL 3 but 45 data bytes written unpadded: 69 bytes over Ethernet
            ether(message(pt=0x0001, data=bytes(range(1, 46)), pad_data=False)),
            # 2: the 29-byte message over UDP (DL 1 PL 3, 5 data bytes)
            udp(message(pt=0x0001, data=b"abcde", pad_data=False)),
            # 3: 56-byte message + 5 odd bytes: link padding, clean
            ether(message(pt=0x0001, data=b"y" * 32) + b"\x11\x22\x33\x44\x55", pad=False),
            # 4: 56-byte message + a whole non-zero word: not padding
            ether(message(pt=0x0001, data=b"y" * 32) + b"\x99" * 8, pad=False),
            # 5: whole words, DL too large: the DL rule, as before
            ether(message(pt=0x0001, data=b"z" * 16, dl=10), pad=False),
            # 6: a 61-byte UDP message: whole words broken over UDP too
            udp(message(pt=0x0001, data=bytes(range(37)), pad_data=False)),
        ]
        cls.path = capture("eep_words.pcap", frames)
        cls.lint = lint(cls.path)
        cls.tshark, _ = tshark(cls.path)

    def test_lint_and_plugin_agree(self):
        self.assertEqual(self.lint, self.tshark)

    def test_each_frame_under_its_rule(self):
        self.assertEqual(ids(self.lint, "note"), {
            1: {"EEP-1B-8B-WORDS"},
            2: {"EEP-1B-8B-WORDS"},
            3: {"EEP-4A-CARRIAGE"},
            4: {"EEP-6H-DL-FITS", "EEP-9-OT-NEEDS-OH"},   # P30: DL did not count it; the trailer reading a note
            5: {"EEP-6H-DL-FITS"},
            6: {"EEP-1B-8B-WORDS"},
        })
        self.assertEqual(self.lint[1], {("EEP-1B-8B-WORDS", "error")})
        self.assertEqual(self.lint[3], {("EEP-4A-CARRIAGE", "note")})
        self.assertEqual(self.lint[4], {("EEP-6H-DL-FITS", "error"), ("EEP-9-OT-NEEDS-OH", "note")})


if __name__ == "__main__":
    unittest.main()
