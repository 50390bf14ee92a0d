"""vitcp-trafgen against the dissector: every VI/TCP, IFT, PacketWay EEP and
WARP mutation from `vitcp-trafgen --list-mutations`, generated once (target
0 in the first scenario that has one), must show its requirement ID in the
protocol's `<proto>.rule` field in tshark with the built plugin. IDs the
dissector cannot show are in EXEMPT with the reason.

To keep the runtime low, the cases of one protocol are concatenated into
one capture, each on its own client TCP port (--client-port) so that every
case is its own conversation; tshark runs once per protocol, two at a time.
Also: a pcapng case carries the run record and the rule in its comments."""
import os
import struct
import subprocess
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor

import tsharklib

BUILD = os.environ.get("VITCP_BUILD_DIR", "")
TRAFGEN = os.path.join(BUILD, "trafgen", "vitcp-trafgen")

# Protocol of an ID prefix: (rule field prefix, scenarios tried in order).
PROTOCOLS = {
    "VITCP-": ("vitcp", ["vitcp-full", "vitcp-full-nocrc", "vitcp-dfc", "vitcp-rdma-read",
                         "vitcp-send", "vitcp-connect", "vitcp-reject"]),
    "IFT-": ("ift", ["ift-session", "ift-nocrc"]),
    "EEP-": ("pktway", ["eep-frames", "eep-router"]),
    "WARP-": ("warp", ["warp-session"]),
}

# Mutations whose ID the dissector does not show, and why. Each is still
# checked: the test fails if the ID does appear (then drop it from here).
EXEMPT = {
    # (none: a retransmission whose bytes differ is compared by the
    # dissector's postdissector since issue 16, as the lint does)
}


def trafgen(*args, check=True):
    proc = subprocess.run([TRAFGEN] + list(args), capture_output=True, text=True, timeout=60)
    if check and proc.returncode != 0:
        raise RuntimeError("vitcp-trafgen %s: %d %s" % (" ".join(args), proc.returncode, proc.stderr))
    return proc


def pcap_records(path):
    """(link header, [record bytes]) of a classic pcap file."""
    with open(path, "rb") as f:
        data = f.read()
    header, pos, recs = data[:24], 24, []
    while pos < len(data):
        caplen = struct.unpack_from("<I", data, pos + 8)[0]
        recs.append(data[pos:pos + 16 + caplen])
        pos += 16 + caplen
    return header, recs


class TrafgenMutationsInTshark(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(TRAFGEN):
            raise RuntimeError("build vitcp-trafgen first (%s missing)" % TRAFGEN)
        cls.tmp = tempfile.mkdtemp(prefix="vitcp-trafgen-tshark-")
        out = trafgen("--list-mutations").stdout.splitlines()
        cls.mutations = [line.split()[0] for line in out[1:] if line.strip()]

    def generate(self, prefix):
        """One merged capture for a protocol: [(id, first frame, last frame)]."""
        field, scenarios = PROTOCOLS[prefix]
        ids = [m for m in self.mutations if m.startswith(prefix)]
        cases, header, records = [], None, []
        for i, mid in enumerate(ids):
            path = os.path.join(self.tmp, "case.pcap")
            for sc in scenarios:
                proc = trafgen(sc, "--break", mid, "--target", "0", "--client-port", str(41000 + i),
                               "-q", "--no-meta", "-w", path, check=False)
                if proc.returncode == 0:
                    break
                self.assertEqual(proc.returncode, 2, proc.stderr)  # no target here: try the next
            else:
                self.fail("%s has no target in %s" % (mid, scenarios))
            h, recs = pcap_records(path)
            header = header or h
            cases.append((mid, len(records) + 1, len(records) + len(recs)))
            records += recs
        merged = os.path.join(self.tmp, "merged-%s.pcap" % field)
        with open(merged, "wb") as f:
            f.write(header + b"".join(records))
        return field, merged, cases

    def test_every_mutation_is_named_by_the_dissector(self):
        tsharklib.run_raw(["-v"])  # set up the private plugin folder once, before the threads
        generated = [self.generate(p) for p in PROTOCOLS]
        self.assertEqual(sum(len(c) for _, _, c in generated), len(self.mutations))

        def rules(job):
            field, merged, cases = job
            rows = tsharklib.fields(merged, ["frame.number", field + ".rule"])
            by_frame = {int(r[0]): set(r[1].split(",")) - {""} for r in rows}
            return field, cases, by_frame

        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(rules, generated))
        missing, unexpected = [], []
        for field, cases, by_frame in results:
            for mid, first, last in cases:
                seen = set()
                for n in range(first, last + 1):
                    seen |= by_frame.get(n, set())
                if mid in EXEMPT:
                    if mid in seen:
                        unexpected.append("%s is shown now: drop its exemption" % mid)
                elif mid not in seen:
                    missing.append("%s (frames %d-%d of %s): %s" % (mid, first, last, field, sorted(seen)))
        self.assertEqual(missing + unexpected, [])

    def test_pcapng_comments(self):
        path = os.path.join(self.tmp, "case.pcapng")
        trafgen("warp-session", "--break", "WARP-A-ADLER-VALID", "--target", "1", "-q", "--no-meta", "-w", path)
        rows = tsharklib.fields(path, ["frame.number", "frame.comment", "warp.rule"])
        commented = [r for r in rows if r[1]]
        self.assertEqual(len(commented), 1)
        self.assertTrue(commented[0][1].startswith("WARP-A-ADLER-VALID: "), commented[0])
        self.assertIn("WARP-A-ADLER-VALID", commented[0][2])
        capinfo = tsharklib.run(path, ["-q", "-z", "io,stat,0"])  # reads the whole file without error
        self.assertIn("Interval", capinfo)
        # The section comment (the run record and replay command).
        with open(path, "rb") as f:
            head = f.read(2048)
        self.assertIn(b"replay: vitcp-trafgen warp-session --seed 1", head)
        self.assertIn(b"mutation: WARP-A-ADLER-VALID", head)


if __name__ == "__main__":
    unittest.main()
