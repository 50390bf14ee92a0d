"""vipl_peer_suite: the reference provider's conformance target against the
whole active suite, then once per deliberate fault.

1. `vipl-peer --port P` (normal mode) passes every case of conformance/cases
   (090-incoming-timeout is skipped, as in CI: it waits 32 s).
2. For every fault of `vipl-peer --list-faults`, the whole suite runs against
   `vipl-peer --port P --fault NAME`: at least one case that names the fault's
   requirement ID must fail, and every failing case must have failed for the
   fault's ID or for an ID in RELATED[fault] (a consequence of the same
   defect, with the reason written next to it). Faults that no current case
   can provoke are listed in UNCAUGHT with the reason, and printed; a fault in
   UNCAUGHT that a case does catch fails the test, so the table shrinks as
   cases land.

Runs are independent (each gets its own vipl-peer and port) and run in
parallel: they mostly wait on the network.

Environment: VIPL_PEER, VITCP_CONFORM (programs), VITCP_CASES (case folder),
VIPL_SUITE_JOBS (parallel runs, default 6).
"""
import json
import os
import re
import shlex
import subprocess
import tempfile
import time
import unittest

import peerlib
from peerlib import free_port

PEER = os.environ.get("VIPL_PEER", "")
CONFORM = os.environ.get("VITCP_CONFORM", "")
CASES = os.environ.get("VITCP_CASES", "")
JOBS = int(os.environ.get("VIPL_SUITE_JOBS", "6"))

# Every run skips the 32-second Incoming-timeout case (docs/conformance.md C7).
SKIP = ["VITCP-4.3-INCOMING-TIMEOUT"]

# Faults that no case of the suite can provoke yet, with the reason.
UNCAUGHT = {
}

# Faults only a packet-relay case can catch (the urgent pointer's position is
# in the TCP header, conform/relay.h). The relay needs root and
# /dev/net/tun; where the run skipped its cases, these faults are reported
# as not checked instead of failing the test.
RELAY_ONLY = {"urgent-bsd", "urgent-mid"}


def relay_skipped(report):
    return [c for c in report["cases"] if c["verdict"] == "skip" and "needs the packet relay" in c["message"]]

# Cases that no fault of vipl-peer fails, and why (the test checks that the
# list is exactly the cases no fault run failed).
NO_FAULT_FAILS = {
}

# Other IDs a fault legitimately makes a case fail with, and why.
RELATED = {
    # C5: a missing trailer after CRC negotiation reads as a bad CRC, and a
    # header-only segment (NOP) without it is shorter than header + trailer.
    "omit-crc": {"VITCP-3.6-CRC-VALID", "VITCP-3.2-SEG-LEN-HEADERS"},
    # At Reliable Reception a refused read's MPE acknowledgement never comes
    # (131-rr-read-bad-handle); a read at RD that is never answered names
    # the fault's own ID (100, 110).
    "no-read-response": {"VITCP-3.2-ERR-VALID-RR"},
    # The reaction to a bad CRC: at Reliable Delivery the close (V22), at
    # Reliable Reception the UTE acknowledgement (A10). A target that takes
    # the segment as good does neither.
    "bad-crc-accepted": {"VITCP-3.6-BAD-CRC-CLOSE-RELIABLE", "VITCP-3.6-BAD-CRC-ACK-UTE"},
    # One fault for every first segment a provider must close on (V10, V19,
    # V24): the over-long discriminator (051) and data before the request
    # (060) name their own rules first.
    "keep-malformed-open": {"VITCP-3.3-DISC-LEN-MAX", "VITCP-4-UNEXPECTED-CLOSE"},
}


RUN_SECONDS = {}


class Peer:
    """One vipl-peer on a free port (it listens on the port it is given: a
    port taken in between is tried again, five times)."""

    def __init__(self, args):
        for attempt in range(5):
            self.port = free_port()
            try:
                # its event lines to a file, as they always went (a write to a pipe can block it)
                self.process = peerlib.Process([PEER, "--port", str(self.port)] + args, r"event=listening",
                                               name="vipl-peer %s" % " ".join(args), timeout=15, to_file=True)
                return
            except RuntimeError as e:
                error = e
        raise error

    def output(self):
        return self.process.output()

    def stop(self):
        return self.process.stop()


def region_of(log):
    """ADDR:HANDLE:LEN for vitcp-conform --region, from vipl-peer's event=region line."""
    m = re.search(r"event=region addr=0x([0-9a-f]+) handle=(\d+) len=(\d+)", log)
    if not m:
        raise RuntimeError("vipl-peer printed no event=region line:\n" + log)
    return "%s:%x:%s" % (m.group(1), int(m.group(2)), m.group(3))


def run_suite(peer_args, conform_args=()):
    """Run the whole suite against a fresh vipl-peer with peer_args: the active
    cases against `vipl-peer --port`, the passive (listen-mode) ones against
    `vipl-peer --connect`. Returns (exit status, JSON report, text, peer log,
    peer status)."""
    t0 = time.monotonic()
    peer = Peer(peer_args)
    # --linger: the process outlives its disconnect, so a TCP connection the
    # disconnect left open shows before the process exits.
    # {host}: 127.0.0.1, or the tester's address behind the packet relay.
    connect_cmd = " ".join([shlex.quote(PEER), "--connect", "{host}:{port}", "--linger", "3000"] +
                           [shlex.quote(a) for a in peer_args])
    with tempfile.NamedTemporaryFile(suffix=".json") as rep:
        cmd = [CONFORM, "run", "--target", "127.0.0.1:%d" % peer.port, "--listen", "0",
               "--connect-cmd", connect_cmd, "--no-announce", "--region", region_of(peer.output()),
               "--cases", CASES,
               "--json", rep.name, "--quiet"] + list(conform_args)
        if "--capture" not in conform_args:
            cmd.append("--no-capture")  # else r.pcapng lands beside the temporary report
        for s in SKIP:
            cmd += ["--skip", s]
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=150)
        finally:
            status = peer.stop()
        with open(rep.name) as f:
            text = f.read()
        report = json.loads(text) if text.strip() else None
    RUN_SECONDS[" ".join(peer_args) or "normal"] = time.monotonic() - t0
    return p.returncode, report, p.stdout, peer.output(), status


def failing(report):
    """Cases that did not pass: failures, timeouts, and (for the proof that
    every case can be failed) advisory verdicts (C35) and not-applicable
    ones, which vipl-peer's normal mode never gives."""
    return [c for c in report["cases"] if c["verdict"] not in ("pass", "skip", "skipped")]


def describe(cases):
    return "\n".join("  %s: %s (%s) %s" % (c["id"], c["verdict"], c["failed_requirement"], c["message"])
                     for c in cases)


def list_faults():
    return list(peerlib.list_faults(PEER).items())


class VIPLPeerReadMode(unittest.TestCase):
    """vipl-peer --connect --reads: N RDMA Reads at once of a passive
    vipl-peer's region; every one completes with the region's bytes."""

    def test_reads_of_the_peer_region(self):
        peer = Peer([])
        try:
            addr, handle, _ = region_of(peer.output()).split(":")
            # 4 reads of 16 bytes at offset 0x100 of a region whose byte i holds i & 0xFF
            out = subprocess.run([PEER, "--connect", "127.0.0.1:%d" % peer.port, "--reads", "4",
                                  "--read-region", "%x:%s:16" % (int(addr, 16) + 0x100, handle)],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30)
        finally:
            peer.stop()
        self.assertEqual(out.returncode, 0, out.stdout)
        self.assertIn("event=reads-posted n=4 len=16", out.stdout)
        reads = re.findall(r"event=read n=(\d+) status=0x([0-9a-f]+) len=(\d+) head=([0-9a-f]+)", out.stdout)
        self.assertEqual([int(n) for n, _, _, _ in reads], [0, 1, 2, 3], out.stdout)
        for _, status, length, head in reads:
            self.assertEqual(int(status, 16), 0x40001, out.stdout)  # VIP_STATUS_DONE | OP_RDMA_READ, no error
            self.assertEqual((int(length), head), (16, "00010203"), out.stdout)

    def test_bad_read_arguments(self):
        for args in (["--connect", "127.0.0.1:1", "--reads", "17"],
                     ["--connect", "127.0.0.1:1", "--reads", "-1"],
                     ["--connect", "127.0.0.1:1", "--read-region", "10000000:1:0"],
                     ["--connect", "127.0.0.1:1", "--read-region", "10000000:1:65537"],
                     ["--connect", "127.0.0.1:1", "--read-region", "10000000:1"],
                     ["--connect", "127.0.0.1:1", "--read-region", "zz:1:16"],
                     ["--port", "1", "--reads", "2"]):
            p = subprocess.run([PEER] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, "%s: %s" % (args, p.stderr))
            self.assertTrue(p.stderr.startswith("vipl-peer: "), "%s: %s" % (args, p.stderr))


class VIPLPeerSuite(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        peerlib.require_paths(VIPL_PEER=PEER, VITCP_CONFORM=CONFORM, VITCP_CASES=CASES)

    def test_normal_mode_passes_every_case(self):
        rc, report, text, log, status = run_suite([])
        self.assertIsNotNone(report, "no JSON report:\n" + text)
        self.assertEqual(failing(report), [], "failing cases:\n" + describe(failing(report)) + "\n" + text)
        ran = [c for c in report["cases"] if c["verdict"] == "pass"]
        self.assertGreaterEqual(len(ran), 30, "the suite ran too few cases:\n" + text)
        self.assertEqual(report["summary"].get("failed", 0), 0, text)
        self.assertEqual(rc, 0, text)
        self.assertEqual(status, 0, "vipl-peer did not stop cleanly on SIGTERM:\n" + log)
        print("normal mode: %d cases pass" % len(ran))

    def test_capture_beside_the_reports(self):
        """Without --capture, the run's capture lands beside its JSON report
        (r.json -> r.pcapng), the report names it, and it holds the run."""
        peer = Peer([])
        try:
            with tempfile.TemporaryDirectory() as tmp:
                rep = os.path.join(tmp, "r.json")
                p = subprocess.run([CONFORM, "run", "--target", "127.0.0.1:%d" % peer.port, "--cases", CASES,
                                    "--only", "accept-basic", "--only", "send-numbering", "--json", rep, "--quiet"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
                self.assertEqual(p.returncode, 0, p.stdout)
                cap = os.path.join(tmp, "r.pcapng")
                with open(rep) as f:
                    self.assertEqual(json.load(f)["summary"]["capture"], cap)
                lint = subprocess.run([CONFORM, "lint", "--json", cap], stdout=subprocess.PIPE, text=True, timeout=60)
                self.assertEqual(json.loads(lint.stdout)["summary"]["vitcp_connections"], 2, lint.stdout[-1000:])
                p = subprocess.run([CONFORM, "run", "--target", "127.0.0.1:%d" % peer.port, "--cases", CASES,
                                    "--only", "accept-basic", "--json", os.path.join(tmp, "n.json"), "--no-capture",
                                    "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
                self.assertEqual(p.returncode, 0, p.stdout)
                self.assertFalse(os.path.exists(os.path.join(tmp, "n.pcapng")))
        finally:
            peer.stop()

    def test_lint_accepts_a_close_without_answer(self):
        """A ConnectRequest of Version 2 (050) or with a 65-byte
        discriminator (051) is rightly closed without an answer (V24, V10):
        the lint of the run's capture names the request's rule, never
        VITCP-4.3-ANSWER ("never answered"), as it did before (C38)."""
        peer = Peer([])
        try:
            with tempfile.TemporaryDirectory() as tmp:
                cap = os.path.join(tmp, "closed.pcapng")
                p = subprocess.run([CONFORM, "run", "--target", "127.0.0.1:%d" % peer.port, "--cases", CASES,
                                    "--only", "version-2", "--only", "disc-too-long", "--capture", cap, "--quiet"],
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
                self.assertEqual(p.returncode, 0, p.stdout)
                lint = subprocess.run([CONFORM, "lint", "--json", "--port", str(peer.port), cap],
                                      stdout=subprocess.PIPE, text=True, timeout=60)
                report = json.loads(lint.stdout)
                ids = [i["requirement"] for i in report["issues"]]
                self.assertEqual(report["summary"]["vitcp_connections"], 2, lint.stdout[-2000:])
                self.assertIn("VITCP-3.2-VERSION", ids, lint.stdout[-2000:])
                self.assertNotIn("VITCP-4.3-ANSWER", ids, lint.stdout[-2000:])
        finally:
            peer.stop()

    def test_every_case_through_the_relay(self):
        """--relay-all: every case, active and passive, on real packets, each
        segment the implementation sent judged by the lint's rules too; the
        capture holds them."""
        with tempfile.TemporaryDirectory() as tmp:
            cap = os.path.join(tmp, "run.pcapng")
            rc, report, text, log, status = run_suite([], ["--relay-all", "--capture", cap])
            self.assertIsNotNone(report, "no JSON report:\n" + text)
            if relay_skipped(report):
                self.skipTest(relay_skipped(report)[0]["message"])
            self.assertEqual(failing(report), [], "failing cases:\n" + describe(failing(report)) + "\n" + text)
            self.assertEqual(rc, 0, text)
            lint = subprocess.run([CONFORM, "lint", "--json", cap], stdout=subprocess.PIPE, text=True, timeout=60)
            summary = json.loads(lint.stdout)["summary"]
            # Real packets of every case: at least a SYN, SYN-ACK and one segment each way per case.
            passed = [c for c in report["cases"] if c["verdict"] == "pass"]
            self.assertGreaterEqual(len(passed), 45, text)
            self.assertGreaterEqual(summary["frames"], 5 * len(passed), lint.stdout[-2000:])
            self.assertGreaterEqual(summary["vitcp_connections"], len(passed) - 5, lint.stdout[-2000:])

    def test_each_fault_fails_its_rule(self):
        faults = list_faults()
        self.assertGreaterEqual(len(faults), 20)
        names = {n for n, _ in faults}
        self.assertEqual(set(UNCAUGHT) - names, set(), "UNCAUGHT names faults vipl-peer does not have")
        results = dict(zip(faults, peerlib.parallel(lambda f: run_suite(["--fault", f[0]]), faults, JOBS)))
        problems = []
        for (name, rid), (rc, report, text, log, status) in results.items():
            mine = []
            if report is None:
                problems.append("%s: no JSON report (exit %d):\n%s" % (name, rc, text))
                continue
            bad = failing(report)
            naming = [c for c in bad if rid in c["requirements"] or c["failed_requirement"] == rid]
            allowed = {rid} | RELATED.get(name, set())
            unrelated = [c for c in bad if c["failed_requirement"] not in allowed]
            if name in UNCAUGHT:
                if naming:
                    problems.append("%s (%s) is in UNCAUGHT but is caught now:\n%s"
                                    % (name, rid, describe(naming)))
                if unrelated:
                    problems.append("%s (%s): cases failed for unrelated IDs:\n%s"
                                    % (name, rid, describe(unrelated)))
                continue
            if not naming and name in RELAY_ONLY and relay_skipped(report):
                print("fault %-24s %-38s not checked: %s" % (name, rid, relay_skipped(report)[0]["message"]))
                continue
            if not naming:
                mine.append("%s (%s): no case naming the ID failed (exit %d)\n%s" % (name, rid, rc, describe(bad)))
            if unrelated:
                mine.append("%s (%s): cases failed for unrelated IDs:\n%s" % (name, rid, describe(unrelated)))
            # C1: SHOULD findings fail the case but not the run.
            want_rc = 1 if report["summary"].get("must_failed", 0) else 0
            if rc != want_rc:
                mine.append("%s (%s): vitcp-conform exit %d, expected %d" % (name, rid, rc, want_rc))
            if status != 0:
                mine.append("%s: vipl-peer exit %s:\n%s" % (name, status, log[-2000:]))
            if not mine:
                print("fault %-24s %-38s caught by %s" % (name, rid, ", ".join(c["id"] for c in naming)))
            problems += mine
        # Every case must be failed by some fault, or say why none can.
        failed_somewhere = set()
        ran = set()
        for _, (rc, report, text, log, status) in results.items():
            if report:
                ran |= {c["id"] for c in report["cases"] if c["verdict"] != "skip"}
                failed_somewhere |= {c["id"] for c in failing(report)}
        never = ran - failed_somewhere
        self.assertEqual(never - set(NO_FAULT_FAILS), set(),
                         "cases no fault fails and NO_FAULT_FAILS does not explain: %s" % sorted(never - set(NO_FAULT_FAILS)))
        stale = {c for c in NO_FAULT_FAILS if c in failed_somewhere}
        self.assertEqual(stale, set(), "NO_FAULT_FAILS lists cases a fault fails now: %s" % sorted(stale))
        print("cases no fault can fail:")
        for case, why in sorted(NO_FAULT_FAILS.items()):
            print("  %-28s %s" % (case, why))
        slow = sorted(RUN_SECONDS.items(), key=lambda kv: -kv[1])[:3]
        print("slowest runs: " + ", ".join("%s %.1f s" % kv for kv in slow))
        print("faults no case can catch yet:")
        for name, why in sorted(UNCAUGHT.items()):
            print("  %-24s %s" % (name, why))
        self.assertEqual(problems, [], "\n".join(problems))


if __name__ == "__main__":
    unittest.main()
