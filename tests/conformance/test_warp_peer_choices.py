"""warp_peer_choices: the WARP suite judges the draft, not the reference peer.

warp-peer's allowed-choice switches (`--choice`, docs/warp-peer.md) make
choices the WARP summary leaves to an implementation: how it cuts its
chunks (small ones, a header chunk, a 1-byte last chunk), its first SSN (0,
random, about to wrap), its completion policy (never C, C everywhere), a
Send announcing its region first, no close on an invalid chunk, a 64-bit
region base, the RID it allocates, an RDMA Write read back as a Send or not
at all, a mixed echo, the draft's Data-In opcode 0x45. The whole suite (echo
cases with the target's region, listen-mode cases against `warp-peer
--connect` with the same choices, relay cases as root, and the iSCSI cases
against `--iscsi`) runs against each switch alone and a few combinations,
and in every run:

- every case passes or is not applicable, never fails, times out or is
  skipped (but for the relay cases where no relay can be made); only the
  choice no-close makes the hostile cases advisory (W10's close is the
  project's decision, C62), exactly those that run;
- a not-applicable case says why, and the not-applicable cases are exactly
  the ones the choice makes so (NOT_APPLICABLE below): a switch that did
  nothing, or a case hiding behind 'not applicable', fails the test;
- vitcp-conform exits 0 and warp-peer ran without an error;
- each run takes under 30 s.

Runs are independent and run in parallel (WARP_SUITE_JOBS, default 6).
"""
import os
import time
import unittest

import peerlib
import test_warp_peer_suite as suite

JOBS = int(os.environ.get("WARP_SUITE_JOBS", "6"))
RUN_LIMIT_S = 30

# What the conventions a choice leaves out make inapplicable (C60, C63).
NO_READBACK = {"warp-probe-readback"}         # warp-peer echoes RDMA Writes as RDMA Writes (W6)
NO_RDMA_ECHO = {"warp-probe-rdma-echo"}       # readback: placed bytes come back in a Send instead
NO_PLACEMENT_VIEW = {"warp-probe-rdma-echo", "warp-probe-readback", "warp-rdma-write-echo",
                     "warp-rdma-multi-chunk", "warp-mix-rdma-send", "warp-split-every-byte", "warp-coalesced",
                     "warp-rdma-gap", "warp-rid-unknown", "warp-out-of-region"} | suite.RELAY_CASES

# (choices, echo-mode not-applicable set or None: no echo run, iSCSI run?)
MATRIX = [
    (["frag=1"], NO_READBACK, True),                           # 182-183, 361: any chunk size
    (["header-chunk=3", "last-byte"], NO_READBACK, True),      # 159-160, 361, 514
    (["first-ssn=0"], NO_READBACK, False),                     # 244, 360: no start fixed
    (["first-ssn=4294967295"], NO_READBACK, True),             # the next Send wraps to 0
    (["first-ssn=random"], NO_READBACK, False),
    (["no-completion"], NO_READBACK, True),                    # 178-180: sender managed completion
    (["completion-all"], NO_READBACK, True),
    (["announce"], NO_READBACK, False),                        # 196-201: the ULP exchanges the variables
    (["no-close"], NO_READBACK, True),                         # 218: no reaction defined (W10 is ours)
    (["base=7f0000000000"], NO_READBACK, False),               # 205, 246-247: 64-bit, non-zero based
    (["rid=0x2a"], NO_READBACK, True),                         # 153-154, 533-535: allocated by the receiver
    (["readback"], NO_RDMA_ECHO, False),                       # the draft defines no echo
    (["no-rdma-echo"], NO_PLACEMENT_VIEW, False),
    (["mix"], NO_READBACK, False),                             # 176: one stream mixes RDMA and Send
    (["data-in=0x45"], None, True),                            # 490, 497-498: the draft's opcode
    (["announce", "no-close", "frag=5", "first-ssn=4294967295", "readback"], NO_RDMA_ECHO, False),
    (["mix", "completion-all", "header-chunk=48", "last-byte", "base=fffffffff0000000"], NO_READBACK, False),
    (["no-completion", "no-rdma-echo", "announce", "first-ssn=random", "rid=7"], NO_PLACEMENT_VIEW, False),
    (["data-in=0x45", "rid=0x99", "no-close", "frag=9", "completion-all"], None, True),
]

ECHO_ONLY = {"announce", "readback", "no-rdma-echo", "mix", "base"}  # no meaning in iSCSI mode

# no-close: the hostile cases that run are advisory (they do not close, C62)
HOSTILE_ECHO = {"warp-bad-adler-not-placed", "warp-chunk-len-short", "warp-c-without-l", "warp-ssn-skip",
                "warp-send-offset-gap", "warp-retransmit", "warp-no-last", "warp-rdma-gap", "warp-rid-unknown",
                "warp-out-of-region"}
HOSTILE_ISCSI = {"warp-iscsi-immediate-by-rdma", "warp-iscsi-data-out-wrong-ttt"}


def advisory_expected(mode, choices, na):
    if "no-close" not in choices:
        return set()
    return (HOSTILE_ISCSI if mode == "iscsi" else HOSTILE_ECHO) - na

# As root, this combination also runs every echo and listen-mode case through
# the packet relay (--relay-all), so that the real packets carry its choices.
RELAY_ALL = (["announce", "frag=5", "first-ssn=4294967295", "mix", "no-close"], NO_READBACK)


def peer_args(choices):
    return ["--choice", ",".join(choices)]


def run_echo(choices, extra=()):
    """The echo cases (and the relay cases as root) against warp-peer with
    the choices, given its region: (rc, report, text, log, status, seconds)."""
    t0 = time.monotonic()
    peer = suite.Peer(*peer_args(choices), all_addresses=suite.ROOT)
    try:
        skip = []
        for c in sorted(suite.ISCSI_CASES):
            skip += ["--skip", c]
        # the listen-mode cases against warp-peer --connect making the same choices (C64)
        rc, rep, _, text = suite.run(peer, "--region", peer.region, *skip, *extra, relay=suite.ROOT,
                                     initiator=peer_args(choices))
    finally:
        status = peer.stop()
    return rc, rep, text, "\n".join(peer.lines), status, time.monotonic() - t0


def run_iscsi(choices):
    """The iSCSI cases against warp-peer --iscsi with the choices."""
    t0 = time.monotonic()
    peer = suite.Peer("--iscsi", *peer_args(choices))
    try:
        only = []
        for c in sorted(suite.ISCSI_CASES):
            only += ["--only", c]
        rc, rep, _, text = suite.run(peer, "--iscsi", *only, initiator=peer_args(choices))
    finally:
        status = peer.stop()
    return rc, rep, text, "\n".join(peer.lines), status, time.monotonic() - t0


class WarpPeerChoices(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        peerlib.require_paths(WARP_PEER=suite.PEER, VITCP_CONFORM=suite.CONFORM, VITCP_CASES=suite.CASES)

    def test_bad_choices_are_refused(self):
        peerlib.check_bad_choices_refused(self, suite.PEER, ["--port", "1"], (
            "no-such-choice", "frag", "frag=0", "frag=65516", "first-ssn=x", "first-ssn=4294967296", "base=xyz",
            "announce=1", "data-in=0x35", "rid=-1", "header-chunk=0", "readback,no-rdma-echo", ""))
        listed = [c.split("=")[0] for c in peerlib.list_choices(suite.PEER)]
        for choices, _, _ in MATRIX:
            for c in choices:
                self.assertIn(c.split("=")[0], listed)
        # every choice warp-peer has is in the matrix
        used = {c.split("=")[0] for choices, _, _ in MATRIX for c in choices}
        self.assertEqual(set(listed), used)

    def test_every_allowed_choice_gets_a_clean_report(self):
        t0 = time.monotonic()
        runs = []
        for choices, echo_na, iscsi in MATRIX:
            if echo_na is not None:
                runs.append(("echo", choices, echo_na))
            if iscsi and not any(c.split("=")[0] in ECHO_ONLY for c in choices):
                runs.append(("iscsi", choices, set()))
        if suite.ROOT:
            runs.append(("echo --relay-all", RELAY_ALL[0], RELAY_ALL[1]))

        def one(r):
            if r[0] == "iscsi":
                return run_iscsi(r[1])
            return run_echo(r[1], ("--relay-all",) if r[0].endswith("--relay-all") else ())

        results = peerlib.parallel(one, runs, JOBS)
        problems = []
        for (mode, choices, expected), (rc, report, text, log, status, secs) in zip(runs, results):
            name = "%s %s" % (mode, " ".join(peer_args(choices)))
            if report is None:
                problems.append("%s: no JSON report (exit %d):\n%s" % (name, rc, text))
                continue
            cases = report["cases"]
            advisory = advisory_expected(mode.split()[0], choices, expected)
            got_advisory = {c["id"] for c in cases if c["verdict"] == "advisory"}
            if got_advisory != advisory:
                problems.append("%s: advisory %s, expected %s" % (name, sorted(got_advisory), sorted(advisory)))
            for c in cases:
                if c["verdict"] == "advisory" and c["failed_requirement"] != "WARP-INTRO-CLOSE-ON-INVALID":
                    problems.append("%s: %s advisory under %s" % (name, c["id"], c["failed_requirement"]))
            bad = [c for c in cases if c["verdict"] not in ("pass", "not-applicable", "skip", "advisory")]
            if bad:
                problems.append("%s: cases that neither pass nor are not applicable:\n%s" % (
                    name, "\n".join("  %s %s: %s" % (c["id"], c["verdict"], c["message"]) for c in bad)))
            skipped = [c for c in cases if c["verdict"] == "skip" and "needs the packet relay" not in c["message"]]
            if skipped:
                problems.append("%s: skipped cases: %s" % (name, [(c["id"], c["message"]) for c in skipped]))
            want = expected if suite.ROOT else expected - suite.RELAY_CASES
            na = {c["id"] for c in cases if c["verdict"] == "not-applicable"}
            silent = [c["id"] for c in cases if c["verdict"] == "not-applicable" and not c["message"]]
            if silent:
                problems.append("%s: not applicable without a reason: %s" % (name, silent))
            if na != want:
                problems.append("%s: not applicable %s, expected %s (extra %s, missing %s)" % (
                    name, sorted(na), sorted(want), sorted(na - want), sorted(want - na)))
            ran = {c["id"] for c in cases}
            should = suite.ISCSI_CASES if mode == "iscsi" else suite.ECHO_CASES
            if ran != should:
                problems.append("%s: ran %s, expected %s" % (name, sorted(ran), sorted(should)))
            if rc != 0:
                problems.append("%s: vitcp-conform exit %d" % (name, rc))
            if status != 0:  # SIGTERM ends its loop: 0 (an ASan report or a crash would not be)
                problems.append("%s: warp-peer exit %s:\n%s" % (name, status, log[-2000:]))
            if secs >= RUN_LIMIT_S:
                problems.append("%s: the run took %.1f s (limit %d s)" % (name, secs, RUN_LIMIT_S))
            passed = sum(1 for c in cases if c["verdict"] == "pass")
            print("%-90s %2d pass, %2d not applicable, %4.1f s" % (name, passed, len(na), secs))
        print("matrix of %d runs: %.1f s" % (len(runs), time.monotonic() - t0))
        self.assertEqual(problems, [], "\n".join(problems))


if __name__ == "__main__":
    unittest.main()
