"""Issue 22, item 3, from an independent capture: an L2RH or symbol sized
otherwise than P2 / P4 (unpadded, or padded by the draft's "-2-L") is one
finding under EEP-5A-L2RH-LEN / EEP-5B-SYMBOL-LEN, over Ethernet and UDP,
in lint and the plugin alike; nothing after it is read as header fields
(no version, destination, RZ or DL rule), and the plugin shows no header."""
import unittest

from eep_pcap import capture, ether, ids, l2rh, lint, message, symbol, tshark, udp

ROUTE13 = bytes(range(1, 14))


def routed(records):
    return message(pt=0x0001, data=b"routed data block 32 bytes long!", records=records)


class MisalignedRecords(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        unpadded = l2rh(ROUTE13, pad=0)                        # 15 bytes, P2 says 16
        overpadded = l2rh(b"\x05\x06\x07", pad=11)             # 16 bytes, P2 says 8
        draft_symbol = l2rh(b"\x01" * 6) + symbol(0x42, b"abcd", pad=10)  # 19 bytes, P4 says 16
        good = l2rh(ROUTE13) + symbol(0x42, b"abcd")
        cls.expected = {1: "EEP-5A-L2RH-LEN", 2: "EEP-5A-L2RH-LEN", 3: "EEP-5A-L2RH-LEN",
                        4: "EEP-5B-SYMBOL-LEN", 5: "EEP-5B-SYMBOL-LEN"}
        frames = [
            ether(routed(unpadded)),
            udp(routed(unpadded)),
            ether(routed(overpadded)),
            ether(routed(draft_symbol)),
            udp(routed(draft_symbol)),
            ether(routed(good)),  # 6: the same records as P2 / P4 size them
        ]
        cls.path = capture("eep_records.pcap", frames)
        cls.lint = lint(cls.path)
        cls.tshark, cls.fields = tshark(cls.path, ["pktway.dl", "pktway.version"])

    def test_lint_and_plugin_agree(self):
        self.assertEqual(self.lint, self.tshark)

    def test_said_once_under_the_records_rule(self):
        for frame, rule in self.expected.items():
            self.assertEqual(self.lint.get(frame), {(rule, "error")}, frame)

    def test_nothing_after_the_record_read_as_fields(self):
        for frame in self.expected:
            self.assertEqual(self.fields[frame], ["", ""], frame)
        self.assertEqual(self.fields[6], ["4", "0"])

    def test_well_framed_records_are_clean(self):
        self.assertEqual(ids(self.lint).get(6), None)
        self.assertEqual(self.lint.get(6), {("EEP-4B-ROUTES-CONSUMED", "note")})


if __name__ == "__main__":
    unittest.main()
