"""ift_peer_suite: the IFT cases (conformance/cases/ift/, protocol ift)
through `vitcp-conform run --protocol ift` against ift-peer, on the engine's
generic step runner.

1. `ift-peer --listen` (node B) passes every active case (`--target`) and
   the connecting `ift-peer --connect` (node A, `--connect-cmd`) every
   passive case (`--listen`) with the defaults (each choice of
   `ift-peer --list-choices`: ctest ift_peer_choices); the reports name the protocol, JSON and JUnit alike. The relay
   cases (I11's speculative placement, C46) run against the default target
   (as root; otherwise they are skipped with the reason); the fault and
   choice runs leave them out (--no-relay).
2. Every fault of `ift-peer --list-faults` (as target and as the connecting
   node) fails at least one case under the fault's own requirement ID,
   which the case names, and no case fails for another ID except those in
   RELATED. Every case is failed by some fault or listed in NO_FAULT_FAILS
   with the reason.
3. The IFT requirements no case tests are listed with the reason by
   `vitcp-conform list --protocol ift` (NOT_ACTIVE below is what it shows);
   every catalog entry checked actively names its cases, and those cases
   exist and test it.
4. `--protocol ift` selects only IFT cases.
5. The capture cases (NAME.meta + NAME.pcapng, I19) load, and a damaged
   recording or meta is a load error; they run with the others in 1 and 2,
   as do the listen-mode relay cases (C53).

Environment: IFT_PEER, VITCP_CONFORM (programs), VITCP_CASES (case folder).
"""
import os
import json
import re
import tempfile
import subprocess
import unittest

import peerlib

PEER = os.environ.get("IFT_PEER", "")
CONFORM = os.environ.get("VITCP_CONFORM", "")
CASES = os.environ.get("VITCP_CASES", "")

ACTIVE_CASES = {
    "ift-probe-offer", "ift-probe-echo", "ift-probe-readback", "ift-negotiate", "ift-vtag-random", "ift-send-echo", "ift-two-sends", "ift-crc-none", "ift-crc-header",
    "ift-crc-payload", "ift-bad-hdr-crc-not-placed", "ift-bad-payload-crc-not-placed", "ift-bad-vtag-not-placed",
    "ift-bad-crc32-not-placed", "ift-bad-omit-hcrc-not-placed", "ift-write-read", "ift-write-segments",
    "ift-r-disagree", "ift-r-disagree-ddp-target", "ift-ddp-mode", "ift-bad-magic", "ift-version-0",
    "ift-bc-version-2", "ift-bad-ind-crc", "ift-ind-crc32-refused", "ift-newer-version-accepted",
    "ift-reserved-ignored", "ift-phase-1-first", "ift-frame-before-indication", "ift-flag-ih", "ift-flag-ip",
    "ift-flag-sp", "ift-flag-sm", "ift-flag-rm", "ift-ulp-upgrade",
}
# Through the packet relay (I11, C46): root and a target listening on all
# addresses; the fault and choice runs leave them out (--no-relay).
RELAY_CASES = {
    "ift-relay-in-order", "ift-relay-sends-in-order", "ift-relay-sp0-no-speculation", "ift-relay-false-hcrc",
    "ift-relay-false-vtag", "ift-relay-false-hsize", "ift-relay-false-pcrc", "ift-relay-no-overwrite",
    "ift-relay-place-again",
}
ACTIVE_CASES |= RELAY_CASES
# The same through the relay with the target as A (listen mode, C53).
RELAY_PASSIVE = {
    "ift-relay-listen-in-order", "ift-relay-listen-sp0-no-speculation", "ift-relay-listen-false-hcrc",
    "ift-relay-listen-false-vtag", "ift-relay-listen-false-hsize", "ift-relay-listen-false-pcrc",
    "ift-relay-listen-no-overwrite", "ift-relay-listen-place-again",
}
# Capture cases (NAME.meta + NAME.pcapng, I19): recorded by
# scripts/record-ift-captures.sh, replayed with the target as B or as A.
CAPTURE_ACTIVE = {"ift-capture-exchange", "ift-capture-bad-crc"}
CAPTURE_PASSIVE = {"ift-capture-listen"}
ACTIVE_CASES |= CAPTURE_ACTIVE
PASSIVE_CASES = {"ift-probe-connects-as-a", "ift-probe-readback-listen", "ift-listen-node-b", "ift-listen-phase0", "ift-listen-wait-phase1", "ift-listen-r-disagree", "ift-listen-bad-phase"}
PASSIVE_CASES |= CAPTURE_PASSIVE | RELAY_PASSIVE
RELAY_CASES |= RELAY_PASSIVE
IFT_CASES = ACTIVE_CASES | PASSIVE_CASES

# Not applicable against a default ift-peer: they need a target in DDP mode,
# one that takes the suite's ULP upgrade (--choice upgrade), and (listen
# mode) a connecting target that is node B.
DEFAULT_NA = {"ift-r-disagree-ddp-target", "ift-ddp-mode", "ift-ulp-upgrade"}
DEFAULT_NA_PASSIVE = {"ift-listen-node-b"}

# The connect command of the passive cases: node A reads 16 bytes (its
# first frame is a Read Request).
CLIENT_OPS = ["--read", "16", "--timeout", "2000"]

# Faults that no case of the suite can provoke, with the reason (none).
UNCAUGHT = {}

# Cases no fault fails, and why (the test checks the list is exactly that).
# The refusals 081, 083, 084 and 087 are failed by the reaction faults
# answer-version-0, answer-bad-ind-crc and answer-phase-1 (I20).
NO_FAULT_FAILS = {
    "ift-bad-magic": "a reaction (I20); ift-peer's framer knows an indication by its magic and stops before its "
                     "decoder sees one without it, so no fault of it can answer a bad magic",
    "ift-frame-before-indication": "a reaction (I20); ift-peer's framer cannot take a frame for an indication: "
                                   "a fault that answered one would first have to read 64 bytes of a frame as one",
}

NO_FAULT_FAILS["ift-ulp-upgrade"] = ("needs a target that takes the suite's ULP upgrade (ift-peer --choice upgrade, "
                                     "ift_peer_choices); the fault runs use ift-peer without it")

for _c in RELAY_CASES:
    NO_FAULT_FAILS[_c] = ("a relay case, run against the default target only: ift-peer reads its TCP stream "
                          "through a socket, so it receives in order whatever the relay does to the segments, "
                          "and no fault of it places speculatively")

# Faults whose case gives an advisory verdict (C35), not a failure: the
# case's rule is a project decision where the draft leaves the reaction
# open, so the fault shows as an advisory verdict under its own ID there.
ADVISORY_CATCHES = {
    "fixed-vtag": {"ift-vtag-random"},      # I26: one draw per process cannot be told from a fixed VTag
    "answer-version-0": {"ift-version-0"},  # I25: the reaction to Version 0 is the project's (lines 105-114)
    "answer-phase-1": {"ift-phase-1-first"},  # I33: the reaction to a phase 1 first is I15's
    "place-bad-frames": {"ift-bad-hdr-crc-not-placed", "ift-bad-payload-crc-not-placed",  # I33: lines 347-350
                         "ift-bad-vtag-not-placed", "ift-bad-crc32-not-placed", "ift-bad-omit-hcrc-not-placed"},
}

# Other IDs a fault legitimately makes a case fail with, and why.
RELATED = {
    # a receiver that does not check the indication's CRC takes CRC-32 too (084)
    "answer-bad-ind-crc": {"IFT-5.1-CRC32C"},
}

# What the fault/choice runs of each kind need.
def is_client_fault(name):
    return name in ("rdma-hdr-in-header", "early-frames")


class Peer(peerlib.Process):
    """One ift-peer target (node B) on a free port of the loopback."""

    def __init__(self, *args, all_addresses=False):
        bind = [] if all_addresses else ["--bind", "127.0.0.1"]
        super().__init__([PEER, "--listen", "0"] + bind + list(args), r"event=listening", name="ift-peer")
        self.port = peerlib.port_of(self.ready_line)


def conform(mode_args, extra=(), protocol="ift", cases=None):
    """vitcp-conform run: (exit status, JSON report, JUnit root, text)."""
    args = list(mode_args) + ["--no-capture"] + (["--protocol", protocol] if protocol else []) + list(extra)
    return peerlib.conform_run(args, cases or CASES, junit=True, timeout=240, conform=CONFORM)


def run_active(peer_args, extra=(), relay=False):
    """relay: the relay cases run too (the target listens on all addresses,
    as the relay reaches it at its own address); else --no-relay."""
    peer = Peer(*peer_args, all_addresses=relay)
    try:
        return conform(["--target", "127.0.0.1:%d" % peer.port], list(extra) + ([] if relay else ["--no-relay"]))
    finally:
        peer.stop()


def run_passive(client_args, extra=(), relay=False):
    """relay: the listen-mode relay cases run too (C53); else --no-relay."""
    cmd = " ".join([PEER, "--connect", "{host}:{port}"] + CLIENT_OPS + list(client_args))
    return conform(["--listen", "0", "--connect-cmd", cmd], list(extra) + ([] if relay else ["--no-relay"]))


def faults():
    return peerlib.list_faults(PEER)


def choices():
    return [n.replace("=N", "=16") for n in peerlib.list_choices(PEER)]


class IftSuite(unittest.TestCase):
    def check_report(self, rep, junit, text, expected, not_applicable=None, relay_ran=False):
        def allowed(c):
            if c["id"] in RELAY_CASES and not relay_ran:
                return ("skip",)
            if not_applicable is None:
                return ("pass", "not-applicable")
            return ("not-applicable",) if c["id"] in not_applicable else ("pass",)

        peerlib.check_report(self, rep, text, "ift", expected, allowed)
        classes = {tc.get("classname") for tc in junit.iter("testcase")}
        self.assertTrue(classes and all(c.startswith("ift.") for c in classes), classes)
        self.assertIn("] ift ", text)

    def test_default_peer_passes_every_case(self):
        rc, rep, junit, text = run_active([], relay=True)
        # the relay needs root (CI runs the tests as root); else its cases are skipped with the reason
        self.check_report(rep, junit, text, ACTIVE_CASES, DEFAULT_NA, relay_ran=os.geteuid() == 0)
        self.assertEqual(rc, 0, text)
        rc, rep, junit, text = run_passive([], relay=True)
        self.check_report(rep, junit, text, PASSIVE_CASES, DEFAULT_NA_PASSIVE, relay_ran=os.geteuid() == 0)
        self.assertEqual(rc, 0, text)

    def test_each_fault_fails_a_case_under_its_id(self):
        table = faults()
        self.assertGreaterEqual(len(table), 17)

        def one(job):
            fault, kind = job
            rc, rep, junit, text = (run_passive if kind == "passive" else run_active)(["--fault", fault],
                                                                                      ["--slack", "800", "--offers", "offer,echo,readback,connects-as-a"])
            for c in rep["cases"]:  # the advisory verdict is how the fault shows there (C35)
                if c["verdict"] == "advisory" and c["id"] in ADVISORY_CATCHES.get(fault, ()):
                    c["verdict"] = "fail"
            return rc, rep, junit, text

        jobs = [(f, k) for f in table for k in (("passive",) if is_client_fault(f) else ("active", "passive"))]
        results = peerlib.fault_runs(jobs, one, 3)
        peerlib.check_faults(self, table, results, IFT_CASES, RELATED, UNCAUGHT, NO_FAULT_FAILS)

    def test_cases_name_catalog_ids_and_list_shows_the_rest(self):
        reqs = {r["id"]: r for r in peerlib.list_requirements("ift", CASES, conform=CONFORM)}
        self.assertGreaterEqual(len(reqs), 40)
        named = set()
        for text in peerlib.case_texts(os.path.join(CASES, "ift")):
            named |= set(re.findall(r"IFT-[A-Z0-9.-]*[A-Z0-9]", text))
        self.assertFalse(named - set(reqs), "cases name IDs outside the catalog")
        for rid in named:
            self.assertTrue(reqs[rid]["status"].startswith("active"), "%s: %s" % (rid, reqs[rid]["status"]))
        # every active-checkable requirement no case names says why (the relay cases of I11)
        for rid, r in reqs.items():
            if "active" in r["checks"] and rid not in named:
                self.assertNotEqual(r["status"], "", rid)
                self.assertTrue(r["reason"], rid)

    def test_catalog_names_real_cases(self):
        """Every wire/catalog/ift.def entry checked actively names its
        case(s) in its "how checked" text ("vitcp-conform cases ift-..."),
        and every case a text names exists and tests that entry (vitcp-conform
        list: the cases that name the ID), so the links cannot rot."""
        p = subprocess.run([CONFORM, "list", "--json", "--protocol", "ift", "--cases", CASES],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True)
        reqs = json.loads(p.stdout)["requirements"]
        every_case = set().union(*(r["cases"] for r in reqs))
        self.assertEqual(every_case, IFT_CASES)
        case_reqs = {c: {r["id"] for r in reqs if c in r["cases"]} for c in every_case}
        self.assertGreaterEqual(peerlib.check_catalog_claims(self, reqs, case_reqs), 40)

    def test_generic_runner_features_fail_what_differs(self):
        """if-open makes a refused offer not applicable, but never excuses a
        message that differs; a later connect opens a new session; a relay
        action that did not happen fails the case; the tester's own write
        after the target closed is no verdict (C66)."""
        head = "protocol ift\ncase %s\nrequire IFT-4.2-HC-ACCEPTABLE\n"
        cases = {
            "010.case": ("ift-x-refused", "connect\nsend Ind hc=0\nexpect Ind if-open\n",
                         "not-applicable", None, "if-open"),
            "020.case": ("ift-x-closed", "connect\nsend Ind hc=0\nexpect Ind\n",
                         "fail", "IFT-4.2-HC-ACCEPTABLE", "closed the connection instead of sending Ind"),
            "030.case": ("ift-x-differs", "connect\nsend Ind\nexpect Ind if-open ph=0\n",
                         "fail", "IFT-4.2-HC-ACCEPTABLE", "expected Ind ph=0, got ph=1"),
            "040.case": ("ift-x-reconnect", "connect\nsend Ind hc=0\nexpect-close\nconnect\nsend Ind\n"
                         "expect Ind\nsend Send payload=10\nexpect Send payload=10 data=echo\n",
                         "pass", None, ""),
            # C66: the tester's own write after the target's close is no verdict; the next step judges the close
            "050.case": ("ift-x-write-after-close", "connect\nsend Ind hc=0\nwait 200\nsend Send payload=10\n"
                         "expect-close\n", "pass", None, ""),
            "060.case": ("ift-x-write-after-close-if-open", "connect\nsend Ind hc=0\nwait 200\n"
                         "send Send payload=10\nexpect Send if-open\n", "not-applicable", None, "if-open"),
            "070.case": ("ift-x-write-after-close-expect", "connect\nsend Ind hc=0\nwait 200\n"
                         "send Send payload=10\nexpect Send\n", "fail", "IFT-4.2-HC-ACCEPTABLE",
                         "closed the connection instead of sending Send"),
        }
        if os.geteuid() == 0:
            cases["080.case"] = ("ift-x-relay", "relay\npacket drop tester 9\nconnect\nsend Ind\nexpect Ind\n",
                                 "fail", "IFT-4.2-HC-ACCEPTABLE", "the relay applied 'packet drop tester 9' to 0")
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "ift"))
            for name, (cid, steps, *_rest) in cases.items():
                with open(os.path.join(d, "ift", name), "w") as f:
                    f.write(head % cid + steps)
            peer = Peer("--choice", "require-hc", all_addresses=True)
            try:
                rc, rep, _, text = conform(["--target", "127.0.0.1:%d" % peer.port], ["--no-survival"], cases=d)
            finally:
                peer.stop()
        by_id = {c["id"]: c for c in rep["cases"]}
        for name, (cid, _, verdict, rid, says) in cases.items():
            c = by_id[cid]
            self.assertEqual(c["verdict"], verdict, c["message"])
            if rid:
                self.assertEqual(c["failed_requirement"], rid, c["message"])
            self.assertIn(says, c["message"])
        self.assertIn(rc, (0, 1), text)  # a SHOULD's failure does not fail the run; no usage error

    def test_capture_cases_load_and_reject_damage(self):
        """I19: `show` compiles each IFT capture case into steps (the target's
        answers as recorded, with their digests); a damaged recording or meta
        is a load error that names the file, never a crash or a case."""
        d = os.path.join(CASES, "ift")
        metas = sorted(f for f in os.listdir(d) if f.endswith(".meta"))
        self.assertGreaterEqual(len(metas), 2)
        for m in metas:
            p = subprocess.run([CONFORM, "show", os.path.join(d, m)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("protocol ift", p.stdout)
            self.assertRegex(p.stdout, r"expect +Ind \(as recorded")
            self.assertRegex(p.stdout, r"send +Ind \(recorded")
        out = subprocess.run([CONFORM, "show", os.path.join(d, "400-capture-exchange.meta")],
                             stdout=subprocess.PIPE, text=True).stdout
        self.assertRegex(out, r"expect +ReadResp .*payload=3000 digest=\d+ \[IFT-6-DELIVERS-IN-ORDER\]")
        self.assertRegex(out, r"only-if +Ind r=1 hc=1 pc=1")
        with tempfile.TemporaryDirectory() as t:
            os.mkdir(os.path.join(t, "ift"))
            src = os.path.join(d, "400-capture-exchange")
            with open(src + ".pcapng", "rb") as f:
                blob = f.read()
            with open(src + ".meta") as f:
                meta = f.read()
            bad = {
                "cut.meta": (meta, blob[:len(blob) * 2 // 3], "400"),
                "junk.meta": (meta, b"\x0a\x0d\x0d\x0a" + b"\xff" * 60, "junk"),
                "word.meta": (meta + "frobnicate yes\n", blob, "unknown line"),
                "id.meta": (meta + "frame 9 VITCP-3.2-VERSION\n", blob, "IFT requirement ID"),
            }
            for name, (text, pcap, says) in bad.items():
                with open(os.path.join(t, "ift", name), "w") as f:
                    f.write(text)
                with open(os.path.join(t, "ift", name[:-5] + ".pcapng"), "wb") as f:
                    f.write(pcap)
                p = subprocess.run([CONFORM, "show", os.path.join(t, "ift", name)], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True)
                self.assertEqual(p.returncode, 2, (name, p.stdout, p.stderr))
                self.assertIn(name[:-5], p.stderr)
                if name != "cut.meta":
                    self.assertIn(says, p.stderr)

    def test_protocol_selects_the_cases(self):
        peer = Peer()
        try:
            _, rep, _, text = conform(["--target", "127.0.0.1:%d" % peer.port], ["--only", "VITCP-3.2-VERSION",
                                                                                 "--no-survival"], protocol=None)
        finally:
            peer.stop()
        peerlib.check_protocol_selects(self, "ift", rep, text, CASES, conform=CONFORM)


if __name__ == "__main__":
    unittest.main()
