"""warp_peer_suite: the WARP cases (conformance/cases/warp/, protocol warp)
through `vitcp-conform run --protocol warp` against warp-peer, on the engine's
generic step runner.

1. `warp-peer --port 0` (normal mode) passes every WARP case, the reports
   name the protocol (JSON per case and in the summary, JUnit classname, the
   text report) and no VI/TCP case runs.
2. Each fault in FAULT_CASES makes the named case fail under the fault's own
   requirement ID (`warp-peer --list-faults`), and no case fails for another
   ID except those listed in RELATED.
3. `--protocol` with an unknown name is a usage error; the VI/TCP cases do
   not run under --protocol warp and the WARP cases not without it.

Environment: WARP_PEER, VITCP_CONFORM (programs), VITCP_CASES (case folder).
"""
import json
import os
import re
import subprocess
import tempfile
import threading
import time
import unittest
import xml.etree.ElementTree as ET

PEER = os.environ.get("WARP_PEER", "")
CONFORM = os.environ.get("VITCP_CONFORM", "")
CASES = os.environ.get("VITCP_CASES", "")

WARP_CASES = {"warp-send-echo", "warp-multi-chunk-send", "warp-bad-adler-not-placed"}

# fault -> the case that must fail under the fault's ID.
FAULT_CASES = {
    "bad-adler": "warp-send-echo",
    "skip-ssn": "warp-multi-chunk-send",
    "no-last": "warp-send-echo",
    "send-offset": "warp-multi-chunk-send",
    "retransmit": "warp-send-echo",
    "short-chunk-len": "warp-send-echo",
    "unknown-type": "warp-send-echo",
    "c-without-l": "warp-multi-chunk-send",
}

# Other IDs a fault legitimately makes a case fail with, and why.
RELATED = {fault: set() for fault in FAULT_CASES}


class Peer:
    """One warp-peer on a free port of the loopback."""

    def __init__(self, *args):
        self.proc = subprocess.Popen([PEER, "--port", "0", "--bind", "127.0.0.1"] + list(args),
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.lines = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        end = time.time() + 10
        with self.cond:
            while not any("event=listening" in l for l in self.lines):
                if time.time() > end or self.proc.poll() is not None:
                    raise RuntimeError("warp-peer did not start:\n" + "\n".join(self.lines))
                self.cond.wait(0.2)
            line = next(l for l in self.lines if "event=listening" in l)
        self.port = int(re.search(r"port=(\d+)", line).group(1))

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()

    def stop(self):
        self.proc.terminate()
        try:
            status = self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            status = self.proc.wait()
        self.reader.join(10)
        self.proc.stdout.close()
        return status


def run(peer, *extra, protocol="warp"):
    """vitcp-conform run against peer: (exit status, JSON report, JUnit root, text)."""
    with tempfile.TemporaryDirectory() as d:
        js, ju = os.path.join(d, "r.json"), os.path.join(d, "r.xml")
        cmd = [CONFORM, "run", "--target", "127.0.0.1:%d" % peer.port, "--cases", CASES,
               "--json", js, "--junit", ju, "--no-capture"] + (["--protocol", protocol] if protocol else []) + \
            list(extra)
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        with open(js) as f:
            report = json.load(f)
        junit = ET.parse(ju).getroot()
    return p.returncode, report, junit, p.stdout + p.stderr


class WarpSuite(unittest.TestCase):
    def test_normal_peer_passes_every_warp_case(self):
        peer = Peer()
        try:
            rc, rep, junit, text = run(peer)
        finally:
            peer.stop()
        ids = {c["id"] for c in rep["cases"]}
        self.assertEqual(ids, WARP_CASES, text)
        for c in rep["cases"]:
            self.assertEqual(c["verdict"], "pass", "%s: %s" % (c["id"], c["message"]))
            self.assertEqual(c["protocol"], "warp")
            self.assertTrue(all(r.startswith("WARP-") for r in c["requirements"]), c)
        self.assertEqual(rc, 0, text)
        self.assertEqual(rep["summary"]["protocol"], "warp")
        classes = {tc.get("classname") for tc in junit.iter("testcase")}
        self.assertTrue(classes and all(c.startswith("warp.") for c in classes), classes)
        self.assertIn("] warp ", text)

    def test_each_fault_fails_its_case_under_its_id(self):
        faults = dict(l.split() for l in subprocess.run([PEER, "--list-faults"], stdout=subprocess.PIPE,
                                                          text=True, check=True).stdout.splitlines())
        for fault, case in FAULT_CASES.items():
            with self.subTest(fault=fault):
                rid = faults[fault]
                peer = Peer("--fault", fault)
                try:
                    rc, rep, _, text = run(peer)
                finally:
                    peer.stop()
                by_id = {c["id"]: c for c in rep["cases"]}
                self.assertEqual(by_id[case]["verdict"], "fail", "%s: %s" % (fault, text))
                self.assertEqual(by_id[case]["failed_requirement"], rid, by_id[case]["message"])
                for c in rep["cases"]:
                    if c["verdict"] in ("fail", "timeout"):
                        self.assertIn(c["failed_requirement"], {rid} | RELATED[fault],
                                      "%s: %s %s" % (fault, c["id"], c["message"]))
                self.assertEqual(rc, 1, text)

    def test_generic_runner_fails_what_differs(self):
        """Cases written to fail against the normal peer: each fails as it
        should, with the step's ID, at the step's line."""
        cases = {
            "010-close.case": ("warp-x-close", "send Send ssn=1 payload=10\nexpect-close 1000 [WARP-INTRO-NO-PLACE-INVALID]",
                               "fail", "WARP-INTRO-NO-PLACE-INVALID", "instead of closing the connection"),
            "020-field.case": ("warp-x-field", "send Send ssn=1 payload=10\nexpect Send ssn=99 [WARP-A.1.2-SSN-NEXT]",
                               "fail", "WARP-A.1.2-SSN-NEXT", "ssn is 1, expected =99"),
            "030-data.case": ("warp-x-data", "send Send ssn=1 payload=10 fill=1\nexpect Send payload=11 data=echo",
                              "fail", "WARP-SUMMARY-SEND-FIELDS", "payload is 10, expected =11"),
            "040-silence.case": ("warp-x-silence", "expect Send", "timeout", "WARP-SUMMARY-SEND-FIELDS",
                                 "no Send chunk within"),
        }
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "warp"))
            for name, (cid, steps, *_rest) in cases.items():
                with open(os.path.join(d, "warp", name), "w") as f:
                    f.write("protocol warp\ncase %s\nrequire WARP-SUMMARY-SEND-FIELDS\nconnect\n%s\n" % (cid, steps))
            peer = Peer()
            try:
                global CASES
                saved, CASES = CASES, d
                try:
                    rc, rep, _, text = run(peer)
                finally:
                    CASES = saved
            finally:
                peer.stop()
        by_id = {c["id"]: c for c in rep["cases"]}
        for name, (cid, _, verdict, rid, says) in cases.items():
            c = by_id[cid]
            self.assertEqual((c["verdict"], c["failed_requirement"]), (verdict, rid), c["message"])
            self.assertIn(says, c["message"])
            self.assertIn("warp/%s:" % name, c["message"])
        self.assertEqual(rc, 1, text)

    def test_protocol_selects_the_cases(self):
        peer = Peer()
        try:
            _, rep, _, text = run(peer, "--only", "VITCP-3.2-VERSION", "--no-survival", protocol=None)
        finally:
            peer.stop()
        # without --protocol the VI/TCP cases are selected: a WARP target fails them, no WARP case runs
        self.assertTrue(rep["cases"])
        self.assertTrue(all(c["protocol"] == "vitcp" for c in rep["cases"]), text)
        p = subprocess.run([CONFORM, "run", "--target", "127.0.0.1:1", "--protocol", "sctp"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("vitcp-conform: unknown --protocol 'sctp'", p.stderr)
        p = subprocess.run([CONFORM, "run", "--target", "127.0.0.1:1", "--protocol", "warp", "--cases", CASES,
                            "--only", "VITCP-3.2-VERSION"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("matches no case", p.stderr)


if __name__ == "__main__":
    unittest.main()
