"""Robustness: thousands of mutated VI/TCP streams through tshark with the
plugin (built with ASan+UBSan in CI, runtime preloaded by tsharklib).

Each mutated copy of a capgen_vitcp capture gets its own client port, so every
copy is a connection of its own; several thousand copies are packed into a few
files to keep the run short. tshark must exit 0 (a sanitizer report aborts
it), and print no dissector bug; Wireshark's own "Malformed Packet" marks are
allowed. Seeded, so a failure reproduces.
"""
import os
import random
import struct
import tempfile
import unittest

import tsharklib

CAPS = os.environ.get("VITCP_TEST_CAPTURES", "")
SEED = int(os.environ.get("VITCP_FUZZ_SEED", "20001117"))
FILES = 4
COPIES_PER_FILE = 500
PAYLOAD_AT = 14 + 20 + 20  # Ethernet + IPv4 + TCP without options


def read_pcap(path):
    with open(path, "rb") as f:
        data = f.read()
    header, frames, at = data[:24], [], 24
    while at + 16 <= len(data):
        sec, usec, caplen, wirelen = struct.unpack("<IIII", data[at:at + 16])
        frames.append((sec, usec, bytearray(data[at + 16:at + 16 + caplen]), wirelen))
        at += 16 + caplen
    return header, frames


def set_client_port(frame, old, new):
    if len(frame) < PAYLOAD_AT:
        return
    sport, dport = struct.unpack(">HH", frame[34:38])
    if sport == old:
        frame[34:36] = struct.pack(">H", new)
    if dport == old:
        frame[36:38] = struct.pack(">H", new)


def mutate(rng, frame):
    """One of: flip bytes, set a Segment Length, truncate, or insert junk."""
    payload = len(frame) - PAYLOAD_AT
    if payload <= 0:
        return frame
    kind = rng.randrange(5)
    if kind == 0:
        for _ in range(rng.randint(1, 8)):
            frame[PAYLOAD_AT + rng.randrange(payload)] = rng.randrange(256)
    elif kind == 1 and payload >= 4:
        frame[PAYLOAD_AT + 2:PAYLOAD_AT + 4] = struct.pack(">H", rng.choice(
            [0, 1, 23, 24, 25, 39, 40, 163, 164, 165, 0xFFFF, rng.randrange(65536)]))
    elif kind == 2 and payload >= 2:
        frame[PAYLOAD_AT + 1] = rng.randrange(256)  # type and flags
    elif kind == 3:
        del frame[PAYLOAD_AT + rng.randrange(payload):]
    else:
        at = PAYLOAD_AT + rng.randrange(payload)
        frame[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 40)))
    return frame


class Fuzz(unittest.TestCase):
    def test_mutated_streams(self):
        rng = random.Random(SEED)
        bases = []
        for name in sorted(os.listdir(CAPS)):
            if name.startswith("vitcp-") and name.endswith(".pcap"):
                header, frames = read_pcap(os.path.join(CAPS, name))
                port = struct.unpack(">H", frames[0][2][34:36])[0]
                bases.append((header, frames, port))
        self.assertGreater(len(bases), 8)
        tmp = tempfile.mkdtemp(prefix="vitcp-fuzz-")
        copies = 0
        for n in range(FILES):
            path = os.path.join(tmp, "fuzz-%d.pcap" % n)
            with open(path, "wb") as out:
                out.write(bases[0][0])
                for k in range(COPIES_PER_FILE):
                    header, frames, port = rng.choice(bases)
                    new_port = 10000 + (n * COPIES_PER_FILE + k) % 50000
                    rate = rng.choice([0.05, 0.2, 0.5])
                    for sec, usec, data, wirelen in frames:
                        frame = bytearray(data)
                        set_client_port(frame, port, new_port)
                        if rng.random() < rate:
                            frame = mutate(rng, frame)
                        out.write(struct.pack("<IIII", sec, usec, len(frame), max(wirelen, len(frame))))
                        out.write(frame)
                    copies += 1
            for args in (["-2", "-V"], ["-V", "-z", "vitcp,stat", "-o", "vitcp.max_reassembly:100000"]):
                with self.subTest(file=path, args=args):
                    out = tsharklib.run(path, args)  # raises on a non-zero exit (sanitizer abort)
                    self.assertIn("VI/TCP", out)
                    self.assertNotIn("Dissector bug", out)
                    self.assertNotIn("DISSECTOR_ASSERT", out)
        self.assertEqual(copies, FILES * COPIES_PER_FILE)


if __name__ == "__main__":
    unittest.main()
