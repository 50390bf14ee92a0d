"""conform_impair: conformance under network impairment (issue 33, C61).

The packet relay impairs every packet of a run (`run --impair PROFILE`):
loss, duplicates, delay and jitter, reordering, data segments cut into
tiny pieces, all seeded. A conforming target over kernel TCP sees the
same byte stream, so:

1. Against vipl-peer, every case that passes on the clean wire (every
   case through the relay, --relay-all) passes under each shipped profile;
   the report names the profile, and each case says what was done to its
   packets with a seed derived from the profile's and the case's id.
2. Every vipl-peer fault that its proof catches is still caught, under
   its own ID, with --impair lossy.
3. The capture of an impaired run holds real retransmissions, copies,
   reordered and cut segments, with a pcapng comment on each impaired
   packet; lint and the plugin (one and two passes) find in it no
   VI/TCP rule broken that the clean run's capture does not show: TCP's
   repairs are TCP's (Wireshark's own analysis), never a VI/TCP error.
4. WARP and IFT against warp-peer and ift-peer: every case that passes
   through the clean relay passes under each shipped profile.
5. PacketWay EEP over UDP: the tester impairs its own links; a case the
   impairment touched (lost, copied, reordered) that does not pass is
   inconclusive, never failed, and a fixed delay changes no verdict.
6. The same as 5 over raw Ethernet, in the end-node topology
   vitcp-conform makes (run --topology, root).
7. Bad profiles are refused.
8. Without root (run as nobody) every VI/TCP, WARP and IFT case under
   --impair is skipped with the reason (no packet relay) and the run exits
   0; EEP's datagram links are impaired by the tester itself and run.

Needs root (the relay's namespace and TUN devices); skipped otherwise.
Environment: VITCP_CONFORM, VITCP_CASES, VIPL_PEER, PKTWAY_NODE, WARP_PEER,
IFT_PEER; VITCP_PLUGIN and
VITCP_PRELOAD for tshark (the plugin's part is skipped without them).
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "independent"))
sys.path.insert(0, os.path.join(HERE, "..", "dissector"))

import peerlib  # noqa: E402
import test_vipl_peer_suite as vipl  # noqa: E402

PROFILES = ("lossy", "reordering", "jittery", "tiny-segments")
CONFORM = os.environ.get("VITCP_CONFORM", "")


def case_seed(profile_seed, case_id):
    """cf_impair_case_seed: FNV-1a of the id, mixed with the profile's seed."""
    h = 0xcbf29ce484222325
    for b in case_id.encode():
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    s = h ^ ((profile_seed * 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF)
    return s or 1


# The relay's recordings give each side a MAC of its own (relay_record.c):
# the target's packets come from this one.
TARGET_MAC = bytes.fromhex("027663000002")


def target_frames(path):
    """Frame numbers of the packets the target sent (pcapng, Ethernet)."""
    return {n for n, (_, pkt) in enumerate(peerlib.pcapng_frames(path), 1) if pkt[6:12] == TARGET_MAC}


def lint_errors(path, report):
    """{requirement ID} of every VI/TCP error lint finds in the segments the
    target sent (the tester's own hostile segments are judged by state that
    random message numbers change from run to run), on the target's port:
    recognising VI/TCP by its first bytes would depend on how they were cut."""
    port = report["summary"]["target"].rsplit(":", 1)[1]
    p = subprocess.run([CONFORM, "lint", "--json", "--port", port, path], capture_output=True, text=True,
                       timeout=120)
    if p.returncode not in (0, 1):
        raise RuntimeError("lint %s: %d %s" % (path, p.returncode, p.stderr))
    mine = target_frames(path)
    return {i["requirement"] for i in json.loads(p.stdout)["issues"]
            if i["requirement"] and i["severity"] == "error" and i["frame"] in mine}


@unittest.skipUnless(os.geteuid() == 0, "the packet relay needs root")
class Impaired(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        peerlib.require_paths(VIPL_PEER=vipl.PEER, VITCP_CONFORM=vipl.CONFORM, VITCP_CASES=vipl.CASES)
        cls.tmp = tempfile.TemporaryDirectory(prefix="vitcp-impair-")
        cls.clean_cap = os.path.join(cls.tmp.name, "clean.pcapng")
        rc, rep, text, log, status = vipl.run_suite([], ("--relay-all", "--capture", cls.clean_cap))
        if rep is None:
            raise RuntimeError("clean run: no report (exit %d)\n%s" % (rc, text))
        if any(c["verdict"] == "skip" and "packet relay" in c["message"] for c in rep["cases"]):
            raise unittest.SkipTest("no packet relay here")
        cls.clean = {c["id"]: c for c in rep["cases"]}
        cls.clean_report = rep
        cls.clean_seconds = rep["summary"]["seconds"]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_every_profile_keeps_the_verdicts_and_the_judgement(self):
        passing = {i for i, c in self.clean.items() if c["verdict"] == "pass"}
        self.assertGreater(len(passing), 30, "the clean run passes the suite")
        clean_lint = lint_errors(self.clean_cap, self.clean_report)
        caps = {p: os.path.join(self.tmp.name, "%s.pcapng" % p) for p in PROFILES}
        runs = peerlib.parallel(lambda p: vipl.run_suite([], ("--impair", p, "--capture", caps[p])), PROFILES, 2)
        problems = []
        for profile, (rc, rep, text, log, status) in zip(PROFILES, runs):
            if rep is None:
                problems.append("%s: no report (exit %d)\n%s" % (profile, rc, text))
                continue
            self.assertIn("seed=1", rep["summary"].get("impair", ""), profile)
            got = {c["id"]: c for c in rep["cases"]}
            # an advisory verdict (C35) never fails a run: a reaction the draft leaves open may
            # depend on when the bytes arrive (120: window+1 reads arriving apart are no excess)
            worse = [got[i] for i in sorted(passing) if got[i]["verdict"] not in ("pass", "advisory")]
            if worse:
                problems.append("%s: cases that pass on a clean wire but not here:\n%s" % (profile, vipl.describe(worse)))
            impaired = [c for c in rep["cases"] if c.get("impaired", "").split(" (seed")[0] not in ("", "nothing impaired")]
            if len(impaired) < 5:
                problems.append("%s: only %d cases had packets impaired" % (profile, len(impaired)))
            for c in rep["cases"]:
                if c.get("impaired") and "(seed %d)" % case_seed(1, c["id"]) not in c["impaired"]:
                    problems.append("%s: %s: seed not the case's: %s" % (profile, c["id"], c["impaired"]))
            with open(caps[profile], "rb") as f:
                if b"impairment (seed" not in f.read():
                    problems.append("%s: no impairment comment in the capture" % profile)
            new = lint_errors(caps[profile], rep) - clean_lint
            if new:
                problems.append("%s: lint finds errors the clean run's capture does not show: %s" % (profile, sorted(new)))
            print("%-14s %d of %d cases impaired, %.1f s (clean %.1f s)" % (
                profile, len(impaired), len(rep["cases"]), rep["summary"]["seconds"], self.clean_seconds))
        self.assertEqual(problems, [], "\n".join(problems))

    @unittest.skipUnless(os.environ.get("VITCP_PLUGIN"), "no plugin built")
    def test_plugin_sees_no_new_rule_broken(self):
        import tcp_pcap
        cap = os.path.join(self.tmp.name, "tiny.pcapng")
        rc, rep, text, log, status = vipl.run_suite([], ("--impair", "tiny-segments,reorder=5%,seed=7", "--capture", cap))
        self.assertIsNotNone(rep, text)
        # Wireshark reassembles out-of-order segments only when asked (tcp.reassemble_out_of_order)
        ooo = ["-o", "tcp.reassemble_out_of_order:TRUE"]
        port = lambda report: report["summary"]["target"].rsplit(":", 1)[1]
        on = lambda report: ooo + ["-d", "tcp.port==%s,vitcp" % port(report)]
        for two in (False, True):
            clean, _ = tcp_pcap.tshark(self.clean_cap, "VITCP-", two_pass=two, extra_args=on(self.clean_report))
            got, _ = tcp_pcap.tshark(cap, "VITCP-", two_pass=two, extra_args=on(rep))
            def errors(judged, path):
                mine = target_frames(path)
                return {i for frame, found in judged.items() if frame in mine for i, s in found if s == "error"}
            new = errors(got, cap) - errors(clean, self.clean_cap)
            # ...and not because nothing was decoded: the same VI/TCP segments, give or take a few NOPs
            pdus = lambda path, report: sum(len([t for t in line.split(",") if t]) for line in tcp_pcap.tsharklib.run(
                path, (["-2"] if two else []) + on(report) + ["-T", "fields", "-e", "vitcp.type"]).splitlines())
            n_clean, n_got = pdus(self.clean_cap, self.clean_report), pdus(cap, rep)
            self.assertGreater(n_clean, 150)
            self.assertGreater(n_got, 0.9 * n_clean, "the plugin decoded %d segments, %d on the clean wire" % (n_got, n_clean))
            if new:  # rare and timing-dependent (see the session note on issue 33): keep the evidence
                kept = tempfile.mkdtemp(prefix="vitcp-impair-failed-")
                shutil.copy(self.clean_cap, kept)
                shutil.copy(cap, kept)
                self.fail("plugin%s: VI/TCP errors only the impaired capture shows: %s (captures kept in %s; "
                          "tshark %s -o tcp.reassemble_out_of_order:TRUE -d tcp.port==%s,vitcp)"
                          % (" -2" if two else "", sorted(new), kept, "-2" if two else "", port(rep)))


    def test_faults_are_still_caught(self):
        """Every fault vipl-peer's proof catches on a clean wire is caught on a lossy one, under its own ID."""
        faults = [f for f in vipl.list_faults() if f[0] not in vipl.UNCAUGHT]
        self.assertGreaterEqual(len(faults), 20)
        runs = peerlib.parallel(lambda f: vipl.run_suite(["--fault", f[0]], ("--impair", "lossy")), faults, 3)
        problems = []
        for (name, rid), (rc, rep, text, log, status) in zip(faults, runs):
            if rep is None:
                problems.append("%s: no report (exit %d)\n%s" % (name, rc, text))
                continue
            bad = vipl.failing(rep)
            # the clean proof's own criterion (test_vipl_peer_suite): a failing case names the ID
            if not any(rid in c["requirements"] or c["failed_requirement"] == rid for c in bad):
                problems.append("%s (%s): not caught under its ID on a lossy network:\n%s" % (name, rid, vipl.describe(bad)))
        print("%d faults, each caught under its own ID with --impair lossy" % (len(faults) - len(problems)))
        self.assertEqual(problems, [], "\n".join(problems))


def stream_suite(program, peer_args, protocol, conform_args):
    """The protocol's active cases against a fresh reference peer listening on all addresses (the relay
    reaches it at its address there): (JSON report, text)."""
    import re
    peer = peerlib.Process([program] + peer_args, r"event=listening", timeout=10)
    try:
        port = re.search(r"port=(\d+)", peer.ready_line).group(1)
        with tempfile.TemporaryDirectory() as d:
            js = os.path.join(d, "r.json")
            p = subprocess.run([CONFORM, "run", "--protocol", protocol, "--target", "127.0.0.1:" + port,
                                "--cases", vipl.CASES, "--json", js, "--no-capture", "--quiet"] + list(conform_args),
                               capture_output=True, text=True, timeout=300)
            with open(js) as f:
                return json.load(f), p.stdout + p.stderr
    finally:
        peer.stop()


@unittest.skipUnless(os.geteuid() == 0, "the packet relay needs root")
class OtherStreams(unittest.TestCase):
    """WARP and IFT against their reference peers: what passes through the clean relay passes impaired."""

    def check(self, program_var, peer_args, protocol):
        program = os.environ.get(program_var, "")
        if not program:
            self.skipTest(program_var + " not set")
        clean, text = stream_suite(program, peer_args, protocol, ["--relay-all"])
        if any(c["verdict"] == "skip" and "packet relay" in c["message"] for c in clean["cases"]):
            self.skipTest("no packet relay here")
        passing = {c["id"] for c in clean["cases"] if c["verdict"] == "pass"}
        self.assertGreater(len(passing), 10, text)
        runs = peerlib.parallel(lambda p: stream_suite(program, peer_args, protocol, ["--impair", p]), PROFILES, 2)
        problems = []
        for profile, (rep, text) in zip(PROFILES, runs):
            worse = [c for c in rep["cases"] if c["id"] in passing and c["verdict"] not in ("pass", "advisory")]
            if worse:
                problems.append("%s %s: cases that pass through the clean relay but not here:\n%s" % (
                    protocol, profile, vipl.describe(worse)))
        self.assertEqual(problems, [], "\n".join(problems))

    def test_warp(self):
        self.check("WARP_PEER", ["--port", "0", "--zero-based"], "warp")

    def test_ift(self):
        self.check("IFT_PEER", ["--listen", "0"], "ift")


class Datagrams(unittest.TestCase):
    """PacketWay EEP over UDP: the tester impairs its own links (no retransmission on a datagram link):
    a case the impairment touched and that did not pass is inconclusive, never failed."""

    def run_eep(self, *extra):
        node_bin = os.environ.get("PKTWAY_NODE", "")
        if not node_bin:
            self.skipTest("PKTWAY_NODE not set")
        port = peerlib.free_udp_port()
        proc = subprocess.Popen([node_bin, "--addr", "0x10", "--udp", "127.0.0.1:%d" % port, "--echo"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            with tempfile.TemporaryDirectory() as d:
                js = os.path.join(d, "r.json")
                # the node's conventions declared (C60, C70): an impaired probe says nothing
                # about them; pktway-node --echo offers all three
                p = subprocess.run([CONFORM, "run", "--protocol", "eep", "--target", "127.0.0.1:%d" % port,
                                    "--cases", vipl.CASES, "--json", js, "--no-capture", "--quiet",
                                    "--offers", "echo,hey-you-answer,err-report", "--eep-unknown-oh", "5"] + list(extra),
                                   capture_output=True, text=True, timeout=300)
                with open(js) as f:
                    return p.returncode, json.load(f), p.stdout + p.stderr
        finally:
            proc.terminate()
            proc.wait(10)

    def test_impaired_datagrams_are_inconclusive_never_failed(self):
        rc, clean, text = self.run_eep()
        passing = {c["id"] for c in clean["cases"] if c["verdict"] == "pass"}
        self.assertGreater(len(passing), 5, text)
        rc, rep, text = self.run_eep("--impair", "loss=20%,dup=10%,reorder=20%,delay=0-3ms,seed=3")
        got = {c["id"]: c for c in rep["cases"]}
        wrong = [c for c in rep["cases"] if c["id"] in passing and c["verdict"] not in ("pass", "inconclusive")]
        self.assertEqual(wrong, [], vipl.describe(wrong))
        inconclusive = [c for c in rep["cases"] if c["verdict"] == "inconclusive"]
        self.assertTrue(inconclusive, "a fifth lost and no case inconclusive?\n" + text)
        for c in inconclusive:
            self.assertIsNone(c["failed_requirement"], c)
            self.assertIn("destroyed the evidence", c["message"])
            self.assertRegex(c["impaired"], r"lost|copied|reordered")
        self.assertEqual(rc, 0, text)
        self.assertEqual(rep["summary"]["inconclusive"], len(inconclusive))
        # a fixed delay keeps every datagram and its order: the verdicts stand
        rc, rep, text = self.run_eep("--impair", "delay=3ms")
        self.assertEqual({c["id"] for c in rep["cases"] if c["verdict"] == "pass"}, passing, text)


class DatagramTopology(unittest.TestCase):
    """PacketWay EEP over raw Ethernet, in the end-node topology vitcp-conform
    makes (run --topology, root): the tester impairs its own veth link as it
    does a UDP one; a case that passes clean passes or is inconclusive with
    the reason, never failed."""

    def run_end(self, *extra):
        import test_pktway_node_suite as eep
        if not eep.NODE:
            self.skipTest("PKTWAY_NODE not set")
        with tempfile.TemporaryDirectory() as d:
            rc, rep, text = eep.run(["--topology", "end", "--node-ready", "^event=ready", "--node-log",
                                     os.path.join(d, "node.log"), "--node-cmd", eep.END_NODE_CMD,
                                     "--offers", "echo,hey-you-answer,err-report"] + eep.END_CONTRACT + list(extra))
        if all(c["verdict"] == "skip" for c in rep["cases"]):
            self.skipTest(rep["cases"][0]["message"])
        return rc, rep, text

    def test_raw_ethernet_impaired(self):
        rc, clean, text = self.run_end()
        passing = {c["id"] for c in clean["cases"] if c["verdict"] == "pass"}
        self.assertGreater(len(passing), 10, text)
        rc, rep, text = self.run_end("--impair", "loss=10%,dup=5%,reorder=10%,seed=3")
        self.assertEqual(rc, 0, text)
        self.assertIn("loss=10%", rep["summary"]["impair"])
        wrong = [c for c in rep["cases"] if c["id"] in passing and c["verdict"] not in ("pass", "inconclusive")]
        self.assertEqual(wrong, [], vipl.describe(wrong))
        inconclusive = [c for c in rep["cases"] if c["verdict"] == "inconclusive"]
        self.assertTrue(inconclusive, text)
        for c in inconclusive:
            self.assertIsNone(c["failed_requirement"], c)
            self.assertIn("destroyed the evidence", c["message"])
            self.assertRegex(c["impaired"], r"lost|copied|reordered")


class WithoutRoot(unittest.TestCase):
    """Without root there is no packet relay: under --impair every case of
    the TCP protocols (VI/TCP, WARP, IFT) is skipped with the reason and the
    run exits 0 (a lab sees why nothing was judged, not a failure). Run as
    nobody (setpriv, on copies of the program and the cases nobody can
    read) when the test is root; the datagram links of PacketWay EEP need
    no relay (the tester impairs its own sockets), so its cases run."""

    def run_unprivileged(self, args):
        import shutil
        with tempfile.TemporaryDirectory() as d:
            os.chmod(d, 0o777)
            js = os.path.join(d, "r.json")
            conform, cases = CONFORM, vipl.CASES
            prefix = []
            if os.geteuid() == 0:
                conform, cases = os.path.join(d, "vitcp-conform"), os.path.join(d, "cases")
                shutil.copy(CONFORM, conform)
                shutil.copytree(vipl.CASES, cases)
                for top, dirs, files in os.walk(cases):
                    os.chmod(top, 0o755)
                    for f in files:
                        os.chmod(os.path.join(top, f), 0o644)
                prefix = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]
            p = subprocess.run(prefix + [conform, "run", "--cases", cases, "--json", js, "--no-capture", "--quiet",
                                         "--impair", "lossy"] + args, capture_output=True, text=True, timeout=120)
            self.assertTrue(os.path.exists(js), p.stdout + p.stderr)
            with open(js) as f:
                return p.returncode, json.load(f), p.stdout + p.stderr

    def test_every_tcp_case_skipped_with_the_reason(self):
        peers = [("VIPL_PEER", ["--port", str(peerlib.free_port())], None, []),
                 ("WARP_PEER", ["--port", "0", "--zero-based"], r"event=listening", ["--protocol", "warp"]),
                 ("IFT_PEER", ["--listen", "0"], r"event=listening", ["--protocol", "ift"])]
        for var, peer_args, ready, proto in peers:
            program = os.environ.get(var, "")
            if not program:
                self.skipTest(var + " not set")
            with self.subTest(peer=var):
                if ready:
                    peer = peerlib.Process([program] + peer_args, ready, timeout=10)
                    port = peerlib.port_of(peer.ready_line)
                else:  # vipl-peer takes the port it is given
                    peer = peerlib.Process([program] + peer_args, r"event=region", timeout=10)
                    port = int(peer_args[1])
                try:
                    rc, rep, text = self.run_unprivileged(["--target", "127.0.0.1:%d" % port] + proto)
                finally:
                    peer.stop()
                self.assertEqual(rc, 0, text)
                self.assertGreater(len(rep["cases"]), 10)
                for c in rep["cases"]:
                    self.assertEqual(c["verdict"], "skip", c)
                    self.assertIn("needs the packet relay: ", c["message"], c)
                self.assertIn("loss=3%", rep["summary"].get("impair", ""))

    def test_eep_impairs_its_own_links_without_root(self):
        node_bin = os.environ.get("PKTWAY_NODE", "")
        if not node_bin:
            self.skipTest("PKTWAY_NODE not set")
        port = peerlib.free_udp_port()
        node = peerlib.Process([node_bin, "--addr", "0x10", "--udp", "127.0.0.1:%d" % port, "--echo"],
                               r"^event=ready", timeout=10)
        try:
            rc, rep, text = self.run_unprivileged(["--protocol", "eep", "--target", "127.0.0.1:%d" % port,
                                                   "--eep-unknown-oh", "5", "--offers", "echo,hey-you-answer,err-report"])
        finally:
            node.stop()
        self.assertEqual(rc, 0, text)
        ran = [c for c in rep["cases"] if c["verdict"] in ("pass", "inconclusive")]
        self.assertGreater(len(ran), 10, text)
        self.assertTrue(all("packet relay" not in c["message"] for c in rep["cases"]), text)


class Profiles(unittest.TestCase):
    def test_bad_profiles_are_refused(self):
        for bad, words in (("bogus", "unknown profile"), ("loss=70%", "bad loss"), ("delay=5-1ms", "bad delay"),
                           ("resegment=0-10", "bad resegment"), ("seed=x", "bad seed"), ("loss=0", "impairs nothing"),
                           ("color=red", "unknown 'color'"), ("", "give a profile")):
            p = subprocess.run([CONFORM, "run", "--target", "127.0.0.1:1", "--impair", bad], capture_output=True,
                               text=True, timeout=30)
            self.assertEqual(p.returncode, 2, (bad, p.stderr))
            self.assertIn(words, p.stderr, bad)
        p = subprocess.run([CONFORM, "run", "--target", "127.0.0.1:1", "--impair", "lossy", "--no-relay"],
                           capture_output=True, text=True, timeout=30)
        self.assertEqual(p.returncode, 2)
        self.assertIn("contradict", p.stderr)


if __name__ == "__main__":
    unittest.main()
