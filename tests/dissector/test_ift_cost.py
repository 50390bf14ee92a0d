"""IFT in two passes: Wireshark's DDP/RDMAP Send reassembly is asked once per
segment, not again on the second pass (issue 22). Counted, not timed: the
helper fragcount_preload.so counts tshark's calls to fragment_add_seq_next per
frame (see packet-ift.c, ift_call_ddp_rdmap)."""
import os
import shutil
import subprocess
import tempfile
import unittest
import tsharklib

BUILD = os.environ.get("VITCP_BUILD_DIR", "")
TRAFGEN = os.path.join(BUILD, "trafgen", "vitcp-trafgen")
FRAGCOUNT = os.environ.get("VITCP_FRAGCOUNT", "")
SENDS = 60  # ift-session: per round a 3000-byte Send in 1024-byte frames, a tagged write, a 200-byte Send back


class IftSendReassemblyWork(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(TRAFGEN) or not os.path.exists(FRAGCOUNT):
            raise RuntimeError("build vitcp-trafgen and fragcount_preload first (%s, %s)" % (TRAFGEN, FRAGCOUNT))
        cls.tmp = tempfile.mkdtemp(prefix="vitcp-ift-cost-")
        os.chmod(cls.tmp, 0o777)  # tshark runs as nobody and writes the count here
        # tshark runs as nobody, who may not read the build tree (a clone
        # under /root): preload a copy from the shared folder
        cls.fragcount = os.path.join(cls.tmp, "fragcount_preload.so")
        shutil.copy(FRAGCOUNT, cls.fragcount)
        os.chmod(cls.fragcount, 0o755)
        cls.cap = os.path.join(cls.tmp, "ift.pcap")
        subprocess.run([TRAFGEN, "--seed", "1", "-q", "--no-meta", "--count", str(SENDS), "-w", cls.cap,
                        "ift-session"], check=True, capture_output=True)

    def count(self, *args):
        out = os.path.join(self.tmp, "count-%d.txt" % len(os.listdir(self.tmp)))
        preload = ":".join(p for p in (os.environ.get("VITCP_PRELOAD", ""), self.fragcount) if p)
        tsharklib.run(self.cap, list(args), env_extra={"LD_PRELOAD": preload, "VITCP_FRAGCOUNT_OUT": out})
        if not os.path.exists(out):
            self.fail("tshark wrote no count: %s was not preloaded" % self.fragcount)
        with open(out) as f:
            fields = dict(kv.split("=") for kv in f.read().split())
        return {k: int(v) for k, v in fields.items()}

    def send_segments(self):
        """Frames whose IFT frame carries an untagged Send segment, and how many are not the last."""
        rows = tsharklib.fields(self.cap, ["iwarp_ddp.last_flag"], "iwarp_rdma.opcode == 0x03", two_pass=True)
        return len(rows), sum(1 for r in rows if r[0] in ("0", "False"))

    def test_capture_has_multi_segment_sends(self):
        total, not_last = self.send_segments()
        self.assertEqual(total, SENDS * 4)      # 3 segments c2s + 1 s2c per round
        self.assertEqual(not_last, SENDS * 2)

    def test_one_pass_asks_once_per_segment(self):
        total, _ = self.send_segments()
        c = self.count()
        self.assertEqual(c["calls"], total)
        self.assertEqual(c["repeated"], 0)

    def test_second_pass_adds_no_segment_again(self):
        # Before the fix every segment but the last of each Send was added
        # again on the second pass: calls = 4 * SENDS + 2 * SENDS.
        total, _ = self.send_segments()
        c = self.count("-2")
        self.assertEqual(c["calls"], total)
        self.assertEqual(c["frames"], total)
        self.assertEqual(c["repeated"], 0)

    def test_earlier_segments_still_point_at_the_reassembly(self):
        # The second pass shows, on every segment but the last, the frame the
        # Send was reassembled in (DDP's own field), as before.
        rows = tsharklib.fields(self.cap, ["frame.number", "iwarp_rdma.send.reassembled_in"],
                                "iwarp_rdma.opcode == 0x03 && iwarp_ddp.last_flag == 0", two_pass=True)
        self.assertEqual(len(rows), SENDS * 2)
        for num, reassembled_in in rows:
            self.assertTrue(reassembled_in, "frame %s shows no reassembly" % num)
            self.assertGreater(int(reassembled_in), int(num))


if __name__ == "__main__":
    unittest.main()
