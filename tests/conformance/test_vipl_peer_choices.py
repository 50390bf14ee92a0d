"""vipl_peer_choices: the suite judges the draft, not the reference peer.

vipl-peer's allowed-choice switches (`--choice`, docs/vipl.md) make choices
the VI/TCP draft leaves to an implementation: decline the CRC option, divide
messages into 1400-byte segments, a 32 KiB MTU, a trailer on refusals, offer
the Urgent Marker option, an RDMA Read Window of 1, no RDMA, one receive
credit at connection, one reliability level only, Descriptor Flow Control. The whole suite (active
cases, listen-mode cases through `vipl-peer --connect` with the same
choices, relay cases where a relay can be made) runs against each switch
alone and a few combinations, and in every combination:

- every case passes or is not applicable, never fails, times out or gets
  an advisory verdict;
- a not-applicable case says why, and the cases that are not applicable
  are exactly the ones the choice makes inapplicable (NOT_APPLICABLE
  below), so a switch that did nothing, or a case that hides behind
  'not applicable', fails the test;
- vitcp-conform exits 0.

One combination also runs every case through the packet relay
(--relay-all), so that the lint's rules judge the real packets of a target
that makes these choices.

Runs are independent and run in parallel (VIPL_SUITE_JOBS, default 6).
"""
import os
import time
import unittest

import peerlib
import test_vipl_peer_suite as suite

JOBS = int(os.environ.get("VIPL_SUITE_JOBS", "6"))

# The cases a choice makes inapplicable (and why), by case id.
CRC_CASES = {"bad-crc-reliable-delivery", "rr-bad-crc-ute", "active-crc-both", "capture-crc-echo"}
BIG_MESSAGE_CASES = {"multi-segment-echo", "multi-segment-immediate"}  # a 65536-byte message
READ_CASES = {"rdma-write-readback", "rdma-read-interleave", "read-past-window", "rr-read-bad-handle"}
RD_ONLY_CASES = {"nop-ignored-fields", "bad-crc-reliable-delivery", "txerr-reliable-delivery"}
RR_ONLY_CASES = {"rr-write-bad-handle", "rr-read-bad-handle", "rr-bad-crc-ute"}
WRITE_CASES = {"rr-write-bad-handle", "nop-credit-update"}  # need RDMA Write enabled

MATRIX = [
    (["no-crc"], CRC_CASES),                                  # 3.6: MAY contain the CRC option
    (["seg-size=1400"], set()),                               # 3.2, 2.2.2.2.3: more segments
    (["mtu=32768"], BIG_MESSAGE_CASES),                       # V11
    (["crc-on-reject"], set()),                               # V6: Segment Length 28
    (["offer-urgent"], set()),                                # 3.7: either end may
    (["read-window=1"], {"rdma-read-interleave"}),            # two reads at once need 2
    (["no-rdma"], READ_CASES | WRITE_CASES),      # 3.3: enables independent
    (["credits=1"], set()),                                   # C11 no longer wants 2
    (["dfc"], set()),                                         # 3.3: the target is flow-controlled
    (["level=rd"], RR_ONLY_CASES),                            # VIA 2.5: fewer levels
    (["level=rr"], RD_ONLY_CASES),
    (["level=u"], RD_ONLY_CASES | RR_ONLY_CASES | {"rdma-write-readback", "rdma-read-interleave",
                                                   "read-past-window", "active-read-window"}),
    (["no-crc", "seg-size=1400", "mtu=32768", "offer-urgent"], CRC_CASES | BIG_MESSAGE_CASES),
    (["no-rdma", "credits=1", "read-window=1", "crc-on-reject"], READ_CASES | WRITE_CASES),
    (["level=rr", "seg-size=1400", "no-crc", "credits=1"], RD_ONLY_CASES | CRC_CASES),
    (["dfc", "credits=1", "level=rr"], RD_ONLY_CASES),
]

# This combination also runs every case through the packet relay.
RELAY_ALL = ["no-crc", "seg-size=1400", "mtu=32768", "offer-urgent"]


def peer_args(choices):
    return ["--choice", ",".join(choices)]


class VIPLPeerChoices(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        peerlib.require_paths(VIPL_PEER=suite.PEER, VITCP_CONFORM=suite.CONFORM, VITCP_CASES=suite.CASES)

    def test_bad_choices_are_refused(self):
        import subprocess
        peerlib.check_bad_choices_refused(self, suite.PEER, ["--port", "1"], (
            "no-such-choice", "seg-size", "seg-size=0", "mtu=abc", "no-crc=1", "credits=17", "level=x",
            "read-window=65"))
        listed = subprocess.run([suite.PEER, "--list-choices"], stdout=subprocess.PIPE, text=True,
                                check=True).stdout
        for choices, _ in MATRIX:
            for c in choices:
                self.assertIn(c.split("=")[0], listed)

    def test_every_allowed_choice_gets_a_clean_report(self):
        t0 = time.monotonic()
        runs = [(choices, expected, ()) for choices, expected in MATRIX]
        runs.append((RELAY_ALL, next(e for c, e in MATRIX if c == RELAY_ALL), ("--relay-all",)))
        results = peerlib.parallel(lambda r: suite.run_suite(peer_args(r[0]), r[2]), runs, JOBS)
        problems = []
        for (choices, expected, extra), (rc, report, text, log, status) in zip(runs, results):
            name = " ".join(peer_args(choices) + list(extra))
            if report is None:
                problems.append("%s: no JSON report (exit %d):\n%s" % (name, rc, text))
                continue
            if extra and suite.relay_skipped(report):
                print("%s: not checked: %s" % (name, suite.relay_skipped(report)[0]["message"]))
                continue
            bad = [c for c in report["cases"] if c["verdict"] not in ("pass", "not-applicable", "skip")]
            if bad:
                problems.append("%s: cases that neither pass nor are not applicable:\n%s" % (name, suite.describe(bad)))
            skipped = [c for c in report["cases"] if c["verdict"] == "skip"
                       and "needs the packet relay" not in c["message"]]
            if skipped:
                problems.append("%s: skipped cases:\n%s" % (name, suite.describe(skipped)))
            na = {c["id"] for c in report["cases"] if c["verdict"] == "not-applicable"}
            silent = [c["id"] for c in report["cases"] if c["verdict"] == "not-applicable" and not c["message"]]
            if silent:
                problems.append("%s: not applicable without a reason: %s" % (name, silent))
            if na != expected:
                problems.append("%s: not applicable %s, expected %s (extra %s, missing %s)" % (
                    name, sorted(na), sorted(expected), sorted(na - expected), sorted(expected - na)))
            if rc != 0:
                problems.append("%s: vitcp-conform exit %d" % (name, rc))
            if status != 0:
                problems.append("%s: vipl-peer exit %s:\n%s" % (name, status, log[-2000:]))
            passed = sum(1 for c in report["cases"] if c["verdict"] == "pass")
            print("%-70s %2d pass, %2d not applicable" % (name, passed, len(na)))
        print("matrix of %d runs: %.1f s" % (len(runs), time.monotonic() - t0))
        self.assertEqual(problems, [], "\n".join(problems))


if __name__ == "__main__":
    unittest.main()
