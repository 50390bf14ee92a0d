"""Mutated IFT captures: the ASan/UBSan-built plugin inside tshark must
decode thousands of corrupted PDUs without a crash or sanitizer report.
mutate_capture() is shared by the PacketWay and WARP fuzz tests."""
import os
import random
import struct
import tempfile
import unittest
import tsharklib

CAPS = os.environ.get("VITCP_TEST_CAPTURES", "")


def read_pcap(path):
    data = open(path, "rb").read()
    header, off, packets = data[:24], 24, []
    while off + 16 <= len(data):
        caplen = struct.unpack("<I", data[off + 8:off + 12])[0]
        packets.append(data[off + 16:off + 16 + caplen])
        off += 16 + caplen
    return header, packets


def mutate_capture(sources, count, seed, min_offset, tcp):
    """Write count mutated copies of the sources' packets (bytes flipped,
    inserted, truncated after min_offset) into one capture; TCP copies get
    their own source port so each is a fresh stream."""
    rng = random.Random(seed)
    header, pool = None, []
    for s in sources:
        header, pkts = read_pcap(s)
        pool += [p for p in pkts if len(p) > min_offset]
    out = bytearray(header)
    for i in range(count):
        p = bytearray(rng.choice(pool))
        for _ in range(rng.randint(1, 8)):
            pos = rng.randrange(min_offset, len(p))
            action = rng.random()
            if action < 0.7:
                p[pos] = rng.randrange(256)
            elif action < 0.85:
                p[pos:pos] = bytes([rng.randrange(256)] * rng.randint(1, 4))
            else:
                del p[pos:]
                if len(p) <= min_offset:
                    break
        if tcp and len(p) >= 36:
            p[34:36] = struct.pack(">H", 1024 + i % 60000)
        out += struct.pack("<IIII", 1000000000 + i, 0, len(p), len(p)) + p
    fd, path = tempfile.mkstemp(suffix=".pcap")
    os.write(fd, bytes(out))
    os.close(fd)
    return path


def survive(test, path, extra=()):
    """Full tree (-V) on every packet, two passes: tsharklib raises on a
    non-zero exit (a sanitizer report aborts tshark)."""
    try:
        out = tsharklib.run(path, ["-2", "-V"] + list(extra))
    finally:
        os.unlink(path)
    test.assertIn("Frame 1:", out)
    return out


class IftFuzz(unittest.TestCase):
    def test_mutated_ift(self):
        sources = [os.path.join(CAPS, n) for n in ("ift-good.pcap", "ift-frame-faults.pcap", "ift-ind-faults.pcap")]
        out = survive(self, mutate_capture(sources, 3000, 4, 54, True))
        self.assertIn("iWARP Framing for TCP", out)


if __name__ == "__main__":
    unittest.main()
