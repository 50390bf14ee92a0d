"""Statistics the GUI lists for the four protocols (Statistics menu trees,
Service Response Time > VI/TCP), checked through tshark's -z output on the
shipped captures: per-connection counts by type, bytes, checksum errors,
and the RDMA Read response times that vitcp.rdma.time shows."""
import os
import re
import unittest

import tsharklib

CAPS = os.path.join(os.environ.get("VITCP_SOURCE_DIR", ""), "captures")


def tree(capture, name):
    """{indented item: count} of a stats_tree printed by -z NAME,tree."""
    out = tsharklib.run(os.path.join(CAPS, capture), ["-q", "-2", "-z", name + ",tree"])
    items, group = {}, ""
    for line in out.splitlines():
        m = re.match(r"^(\s*\S.*?)\s{2,}(\d+)\s", line)
        if m and not line.startswith("Topic"):
            name = m.group(1)
            if name.startswith("   "):  # a type under its group: "group/type"
                name = group + "/" + name.strip()
            elif name.startswith("  "):
                group = name.strip()
            items[name] = int(m.group(2))
    return items


class Statistics(unittest.TestCase):
    def test_registered_for_the_gui(self):
        out, err = tsharklib.run_raw(["-z", "help"], with_stderr=True)
        listed = out + err
        for name in ("vitcp,tree", "ift,tree", "warp,tree", "pktway,tree", "vitcp,srt", "vitcp,stat"):
            self.assertIn(name, listed.split())

    def test_vitcp_tree(self):
        t = tree("vitcp-bad-crc.pcap", "vitcp")
        conn = " 10.0.0.1:40000 <-> 10.0.0.2:5995"
        self.assertEqual(t[conn], 21)
        self.assertEqual(t["  Segments by type"], 21)
        self.assertEqual(t["Segments by type/Send"], 6)  # 3 + 1 + 1 + 1 segments
        self.assertEqual(t["Messages by type/Send"], 4)
        self.assertEqual(t["Segments by type/RdmaReadResponse"], 5)
        self.assertEqual(t["  Messages by type"], 14)
        self.assertEqual(t["  Checksum errors"], 1)
        self.assertNotIn("  Checksum errors", tree("vitcp-full.pcap", "vitcp"))

    def test_ift_warp_and_eep_trees(self):
        ift = tree("ift-bad-hdr-crc.pcap", "ift")
        self.assertEqual(ift[" 10.0.0.1:40000 <-> 10.0.0.2:5996"], 9)
        self.assertEqual((ift["Frames by type/Adaption indication"], ift["  Messages by type"], ift["  Checksum errors"]), (2, 3, 1))
        warp = tree("warp-bad-adler.pcap", "warp")
        self.assertEqual((warp["  Chunks by type"], warp["  ULP PDUs by type"], warp["  Checksum errors"]), (8, 4, 1))
        self.assertEqual(warp["  Bytes"], 6304)
        eep = tree("eep-oversized-dl.pcap", "pktway")
        self.assertEqual(eep[" SA 0x000102 -> DT 0x000207"], 11)
        self.assertEqual((eep["Messages by packet type/0x0800"], eep["Messages by packet type/0x86dd"], eep["  Messages with errors"]), (10, 1, 1))

    def test_rdma_read_service_response_time(self):
        out = tsharklib.run(os.path.join(CAPS, "vitcp-full.pcap"), ["-q", "-2", "-z", "vitcp,srt"])
        row = re.search(r"^\s+0\s+RDMA Read\s+(\d+)\s+([\d.]+)\s+([\d.]+)", out, re.M)
        self.assertIsNotNone(row, out)
        # the same times as vitcp.rdma.time on the responses that complete the two reads
        times = tsharklib.fields(os.path.join(CAPS, "vitcp-full.pcap"), ["vitcp.rdma.time"],
                                 "vitcp.rdma.time && vitcp.flags.eom == 1 && vitcp.type == 3", two_pass=True)
        secs = sorted(float(r[0]) for r in times)
        self.assertEqual(int(row.group(1)), 2)
        self.assertAlmostEqual(float(row.group(2)), secs[0], places=6)
        self.assertAlmostEqual(float(row.group(3)), secs[-1], places=6)


if __name__ == "__main__":
    unittest.main()
