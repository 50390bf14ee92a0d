"""WARP dissector: every field of Send and RDMA Write chunks, Adler-32 status,
chunk framing across split/coalesced segments, ULP PDU reassembly up to the
L bit, and each expert rule asserted by its requirement ID."""
import os
import unittest
import tsharklib

CAPS = os.environ.get("VITCP_TEST_CAPTURES", "")
FIELDS = ["warp.type", "warp.flags.e", "warp.flags.c", "warp.flags.l", "warp.chunk_len", "warp.ssn", "warp.rid",
          "warp.offset", "warp.adler32.status", "warp.reassembled.length"]

def trafgen_capture(name, args):
    """A capture written by the built vitcp-trafgen into a temporary directory."""
    import subprocess
    import tempfile
    out = os.path.join(tempfile.mkdtemp(prefix="vitcp-heur-"), name)
    gen = os.path.join(os.environ["VITCP_BUILD_DIR"], "trafgen", "vitcp-trafgen")
    subprocess.run([gen] + args + ["--seed", "1", "--no-meta", "-q", "-w", out], check=True)
    return out



def by_frame(name, names, flt):
    rows = tsharklib.fields(os.path.join(CAPS, name), ["frame.number"] + names, flt)
    return {int(r[0]): r[1:] for r in rows}


class WarpGood(unittest.TestCase):
    def test_fields_and_reassembly(self):
        rows = by_frame("warp-good.pcap", FIELDS, "warp")
        self.assertEqual(rows[4], ["0", "0", "1", "1", "30", "7", "", "0", "1", ""])
        self.assertEqual(rows[5], ["0", "0", "0", "0", "25", "8", "", "0", "1", ""])
        self.assertEqual(rows[7], ["0", "0", "0", "0", "25", "8", "", "9", "1", ""])  # split over frames 6-7
        self.assertEqual(rows[8], ["0", "0", "1", "1", "26", "8", "", "18", "1", "28"])  # ULP PDU of 3 chunks
        self.assertEqual(rows[9], ["1,1", "0,0", "0,0", "0,1", "26,26", "", "0xabcd0001,0xabcd0001",
                                   "4294967296,4294967302", "1,1", "12"])
        self.assertEqual(set(rows), {4, 5, 7, 8, 9})

    def test_reassembled_bytes(self):
        rows = by_frame("warp-good.pcap", ["warp.reassembled.data"], "warp.reassembled.data")
        self.assertEqual(bytes.fromhex(rows[8][0].replace(":", "")), b"part one part two part three")

    def test_clean(self):
        self.assertEqual(by_frame("warp-good.pcap", [], '_ws.malformed || _ws.expert.message contains "WARP-"'), {})


class WarpInfoAndHandoff(unittest.TestCase):
    def test_info_style_flags_subtree_and_summary(self):
        rows = by_frame("warp-good.pcap", ["_ws.col.Info", "warp.flags"], "frame")
        self.assertEqual(rows[4], ["Send SSN=7 Off=0 Len=14 [L] [C]", "0x0003"])
        self.assertEqual(rows[8][0], "Send SSN=8 Off=18 Len=10 [L] [C] [ULP PDU reassembled]")
        self.assertEqual(rows[9][0], "RDMA Write RID=0xabcd0001 Off=4294967296 Len=6 | "
                                     "RDMA Write RID=0xabcd0001 Off=4294967302 Len=6 [L] [ULP PDU reassembled]")
        self.assertIn("[TCP segment of a reassembled PDU]", rows[6][0])
        bad = by_frame("warp-faults.pcap", ["_ws.col.Info"], "warp")
        self.assertEqual(bad[4][0], "Send SSN=1 Off=0 Len=9 [L] [BAD ADLER-32]")
        out = tsharklib.run(os.path.join(CAPS, "warp-good.pcap"), ["-V", "-Y", "frame.number == 4"])
        self.assertIn("WARP (draft-jpink-warp-summary Appendix A), Send, SSN 7, Offset 0, Len 14", out)
        self.assertIn(".... .... .... .011 = Flags: 0x3, Completion (C), Last chunk of the ULP PDU (L)", out)

    def test_ulp_pdu_handed_on(self):
        # whole ULP PDUs (one chunk, or reassembled in the L chunk's frame) go on as data ...
        rows = by_frame("warp-good.pcap", ["frame.protocols"], "warp")
        self.assertEqual([f for f, v in rows.items() if v[0].endswith(":data")], [4, 8, 9])
        # ... or to what Decode As picks on warp.ulp, writing after WARP's Info
        da = tsharklib.fields(os.path.join(CAPS, "warp-good.pcap"), ["frame.number", "frame.protocols", "_ws.col.Info"],
                              "data-text-lines", extra=["-d", "warp.ulp==5997,data-text-lines"])
        self.assertEqual([r[0] for r in da], ["4", "8", "9"])
        self.assertTrue(da[1][1].endswith("warp:data-text-lines"))


class WarpHeuristic(unittest.TestCase):
    def test_warp_on_another_tcp_port(self):
        cap = trafgen_capture("warp-7777.pcap", ["warp-session", "--port", "7777"])
        rows = tsharklib.fields(cap, ["frame.number", "tcp.dstport", "warp.ssn", "warp.adler32.status"], "warp")
        self.assertEqual(len(rows), 8)  # every chunk of the session, as on 5997
        self.assertEqual({r[3] for r in rows}, {"1"})
        self.assertIn("7777", {r[1] for r in rows})
        # without the heuristic nothing is WARP there
        off = tsharklib.fields(cap, ["frame.number"], "warp", extra=["--disable-heuristic", "warp_tcp"])
        self.assertEqual(off, [])


def conform_capture(name, peer_args, run_args):
    """A capture of vitcp-conform's WARP cases against the built warp-peer
    (run --capture): (path, the target's TCP port)."""
    import re
    import subprocess
    import tempfile
    build, src = os.environ["VITCP_BUILD_DIR"], os.environ["VITCP_SOURCE_DIR"]
    d = tempfile.mkdtemp(prefix="vitcp-warp-iscsi-")
    out, log = os.path.join(d, name), open(os.path.join(d, "peer.log"), "w+")
    peer = subprocess.Popen([os.path.join(build, "warp-ref", "warp-peer"), "--port", "0", "--bind", "127.0.0.1"] +
                            peer_args, stdout=log, stderr=subprocess.STDOUT)
    try:
        port = None
        for _ in range(100):
            log.seek(0)
            m = re.search(r"event=listening port=(\d+)", log.read())
            if m:
                port = int(m.group(1))
                break
            peer.wait(0.1) if peer.poll() is not None else __import__("time").sleep(0.1)
        if port is None:
            raise RuntimeError("warp-peer did not start")
        subprocess.run([os.path.join(build, "conformance", "vitcp-conform"), "run", "--protocol", "warp",
                        "--target", "127.0.0.1:%d" % port, "--cases", os.path.join(src, "conformance", "cases"),
                        "--no-relay", "--quiet", "--capture", out] + run_args,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    finally:
        peer.terminate()
        peer.wait(10)
        log.close()
    return out, port


class WarpIscsiHeuristic(unittest.TestCase):
    """W16: a Send's ULP PDU that looks like an iSCSI PDU goes to Wireshark's
    iSCSI dissector without Decode As (preference warp.iscsi_heuristic, on by
    default); RDMA Write data and other Sends do not."""

    @classmethod
    def setUpClass(cls):
        cls.iscsi, cls.iscsi_port = conform_capture("iscsi.pcapng", ["--iscsi"], ["--iscsi"])
        cls.echo, cls.echo_port = conform_capture("echo.pcapng", ["--zero-based"], [])

    def rows(self, cap, port, names, flt, prefs=()):
        return tsharklib.fields(cap, ["frame.number"] + names, flt,
                                extra=["-d", "tcp.port==%d,warp" % port] + list(prefs))

    def test_iscsi_pdus_found_without_decode_as(self):
        rows = self.rows(self.iscsi, self.iscsi_port, ["iscsi.opcode", "iscsi.initiatortasktag", "warp.type"], "iscsi")
        opcodes = {int(o, 0) for r in rows for o in r[1].split(",") if o}
        # SCSI Command, Data-Out, SCSI Response, Data-In (the header whose data came by RDMA Write), R2T
        self.assertTrue({0x01, 0x05, 0x21, 0x25, 0x31} <= opcodes, rows)
        itts = {int(t, 0) for r in rows for t in r[2].split(",") if t}
        self.assertTrue({0x1234, 0x77, 0x78} <= itts, rows)
        # every iSCSI PDU rode in a Send (type 0) ULP PDU, with the Send's Info before iSCSI's
        for r in rows:
            self.assertIn("0", r[3].split(","), r)
        info = self.rows(self.iscsi, self.iscsi_port, ["_ws.col.Info"], "iscsi.opcode == 0x21")
        self.assertTrue(info, rows)
        for i in info:
            self.assertRegex(i[1], r"Send SSN=\d+ Off=0 Len=48 \[L\] \[C\] \| SCSI: Response ", i)
        # the data placed by RDMA Write is not an iSCSI PDU: RDMA-only frames show no iscsi
        # whole PDUs: the iSCSI dissector finds nothing malformed (a Data-In header whose data came by RDMA
        # Write included)
        self.assertEqual(self.rows(self.iscsi, self.iscsi_port, [], "iscsi && _ws.malformed"), [])
        rdma_only = self.rows(self.iscsi, self.iscsi_port, ["warp.type"], "warp.type == 1 && !(warp.type == 0)")
        self.assertTrue(rdma_only)
        self.assertEqual(self.rows(self.iscsi, self.iscsi_port, [], "warp.type == 1 && !(warp.type == 0) && iscsi"),
                         [])

    def test_preference_turns_it_off(self):
        off = self.rows(self.iscsi, self.iscsi_port, [], "iscsi", prefs=["-o", "warp.iscsi_heuristic:FALSE"])
        self.assertEqual(off, [])
        # Decode As still works with the preference off
        da = self.rows(self.iscsi, self.iscsi_port, [], "iscsi",
                       prefs=["-o", "warp.iscsi_heuristic:FALSE", "-d", "warp.ulp==%d,iscsi" % self.iscsi_port])
        self.assertTrue(da)

    def test_clean_streams_not_taken_for_iscsi(self):
        # the echo suite's Sends (fill patterns, up to 20000 bytes) and the shipped WARP captures
        self.assertTrue(self.rows(self.echo, self.echo_port, [], "warp.type == 0"))
        self.assertEqual(self.rows(self.echo, self.echo_port, [], "iscsi"), [])
        for cap in ("warp-good.pcap", "warp-session.pcap", "warp-faults.pcap"):
            path = os.path.join(CAPS, cap)
            if os.path.exists(path):
                self.assertEqual(tsharklib.fields(path, ["frame.number"], "iscsi"), [], cap)


class WarpRules(unittest.TestCase):
    def test_each_rule(self):
        e = {k: v[0] for k, v in by_frame("warp-faults.pcap", ["_ws.expert.message"], "warp && _ws.expert").items()}
        self.assertIn("[WARP-A-ADLER-VALID] Bad Adler-32", e[4])
        self.assertIn("least significant byte first", e[5])
        self.assertIn("[WARP-SUMMARY-C-ONLY-WITH-L]", e[6])
        for rid in ("[WARP-A-RSVD-ZERO]", "[WARP-SUMMARY-E-TXERR]", "[WARP-A.1.2-SEND-OFFSET] Offset 100"):
            self.assertIn(rid, e[7])
        self.assertIn("[WARP-A.1.2-SSN-NEXT] SSN 9, expected 4", e[8])
        self.assertNotIn(9, e)
        self.assertIn("[WARP-A.1.1-RDMA-CONTIGUOUS] RID 0x00000011", e[10])
        self.assertIn("[WARP-A.1.1-RDMA-CONTIGUOUS] Offset 64", e[10])
        self.assertIn("[WARP-A-TYPE-KNOWN] Unknown type 5", e[11])
        self.assertIn("[WARP-A-CHUNK-LEN] Chunk length 10", e[12])
        rules = by_frame("warp-faults.pcap", ["warp.rule"], "warp.rule")
        self.assertEqual(rules[10], ["WARP-A.1.1-RDMA-CONTIGUOUS,WARP-A.1.1-RDMA-CONTIGUOUS"])
        self.assertEqual(rules[8], ["WARP-A.1.2-SSN-NEXT"])
        self.assertEqual(list(by_frame("warp-faults.pcap", [], "warp.expert.a_adler_valid.error")), [4, 5])
        st = by_frame("warp-faults.pcap", ["warp.adler32.status"], "warp.adler32.status")
        self.assertEqual(st[4], ["0"])
        self.assertEqual(st[6], ["1"])


if __name__ == "__main__":
    unittest.main()
