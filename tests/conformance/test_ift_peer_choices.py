"""ift_peer_choices: the IFT suite judges the draft, not the reference peer.

ift-peer's allowed-choice switches (`--choice`, docs/ift-peer.md "Allowed
choices", each with the draft's lines that allow it) make the choices the
IFT draft leaves to an implementation: DDP mode, declined or required
CRCs, IH/IP/SP/SM/RM, a node B that greets right after its phase 1, a node
A that pipelines several messages into one TCP write, small DDP and TCP
segments, one random VTag per process, a newer Version refused or
announced, a close in error with FIN, an abort after the answer, a
connecting node B, a ULP's upgrade before the indication. The whole
suite runs against each switch alone and a few combinations: the active
cases with ift-peer as node B (relay and capture cases included, as root),
the listen-mode cases with `ift-peer --connect` as node A and the same
choices. In every configuration:

- every case passes or is not applicable, never fails or times out, and
  gets an advisory verdict only where the choice makes the project's
  decision differ (ADVISORY below);
- a not-applicable case says why, and the cases that are not applicable
  are exactly the ones the choice makes so (the sets below), so a switch
  that did nothing visible to its cases, or a case that hides behind 'not
  applicable', fails the test;
- vitcp-conform exits 0, and the run takes less than 30 s (issue 29).

Environment: IFT_PEER, VITCP_CONFORM, VITCP_CASES (as ift_peer_suite);
IFT_CHOICE_JOBS runs in parallel (default 3).
"""
import os
import time
import unittest

import peerlib
import test_ift_peer_suite as suite

JOBS = int(os.environ.get("IFT_CHOICE_JOBS", "3"))
RELAY = os.geteuid() == 0  # the relay cases need root; else they are skipped with the reason

ACTIVE, PASSIVE = suite.ACTIVE_CASES, suite.PASSIVE_CASES
DDP_ONLY = {"ift-r-disagree-ddp-target", "ift-ddp-mode"}      # need a target in DDP mode (R clear)
CAPTURE_ACTIVE = {"ift-capture-exchange", "ift-capture-bad-crc"}  # the recorded flags: R, HC, PC only
CAPTURE_PASSIVE = {"ift-capture-listen"}
REFUSALS = {"ift-bad-magic", "ift-version-0", "ift-bc-version-2", "ift-bad-ind-crc", "ift-ind-crc32-refused",
            "ift-phase-1-first", "ift-frame-before-indication"}  # bad indications: no offer to refuse
# A target that refuses the tester's usual offer (R, HC, PC): only the
# refusals apply, and as node A only the cases that need no answer of it.
REFUSES_OFFER = ACTIVE - REFUSALS
REFUSES_OFFER_PASSIVE = PASSIVE - {"ift-probe-connects-as-a", "ift-listen-r-disagree", "ift-listen-bad-phase"}
# Listen mode: the case of a connecting node B is not applicable to every
# node A (added below unless the row chooses connect-as-b), and a node B
# makes the cases written for a connecting node A not applicable.
NODE_B = {"ift-listen-node-b"}
# The mid-stream upgrade (089) needs a target that takes the suite's ULP
# (--choice upgrade): not applicable elsewhere (added below).
ULP = {"ift-ulp-upgrade"}
NODE_B_PASSIVE = PASSIVE - NODE_B
# A target in DDP mode: what needs RDMA mode (RDMAP Sends, Writes, Reads)
# is not applicable; the DDP-mode echo needs --offers echo (the echo probe
# is an RDMAP Send).
DDP_TARGET = ACTIVE - REFUSALS - {"ift-negotiate", "ift-vtag-random", "ift-r-disagree-ddp-target"}
DDP_TARGET_PASSIVE = PASSIVE - {"ift-probe-connects-as-a", "ift-listen-bad-phase"}

# (choices, extra run arguments, not applicable active, passive, advisory active)
MATRIX = [
    ([], [], DDP_ONLY, set(), set()),
    (["no-r"], [], DDP_TARGET, DDP_TARGET_PASSIVE, set()),                         # lines 134-138
    (["no-r"], ["--offers", "echo"], DDP_TARGET - {"ift-ddp-mode"}, DDP_TARGET_PASSIVE, set()),
    (["no-hc"], [], DDP_ONLY | CAPTURE_ACTIVE, CAPTURE_PASSIVE, set()),           # lines 140-143
    (["no-pc"], [], DDP_ONLY | CAPTURE_ACTIVE, CAPTURE_PASSIVE, set()),           # lines 145-148
    (["ih"], [], DDP_ONLY | CAPTURE_ACTIVE | {"ift-bad-hdr-crc-not-placed", "ift-bad-crc32-not-placed",
                                              "ift-bad-omit-hcrc-not-placed"}, CAPTURE_PASSIVE, set()),
    (["ip"], [], DDP_ONLY | CAPTURE_ACTIVE | {"ift-bad-payload-crc-not-placed"}, CAPTURE_PASSIVE, set()),
    (["sp"], [], DDP_ONLY | CAPTURE_ACTIVE, CAPTURE_PASSIVE, set()),              # lines 162-167
    (["sm"], [], DDP_ONLY | CAPTURE_ACTIVE, CAPTURE_PASSIVE, set()),              # lines 169-172
    (["rm"], [], DDP_ONLY | CAPTURE_ACTIVE, CAPTURE_PASSIVE, set()),              # lines 183-186
    (["require-hc"], [], DDP_ONLY | {"ift-crc-none", "ift-crc-payload"}, set(), set()),  # SHOULD abort
    (["require-pc"], [], DDP_ONLY | {"ift-crc-none", "ift-crc-header"}, set(), set()),
    (["refuse-hc"], [], REFUSES_OFFER, REFUSES_OFFER_PASSIVE, set()),
    (["refuse-pc"], [], REFUSES_OFFER, REFUSES_OFFER_PASSIVE, set()),
    (["require-checked-hc"], [], DDP_ONLY | {"ift-flag-ih"}, set(), set()),      # lines 150-154
    (["require-checked-pc"], [], DDP_ONLY | {"ift-flag-ip"}, set(), set()),      # lines 156-160
    (["require-hc", "abort-late"], [], DDP_ONLY | {"ift-crc-none", "ift-crc-payload"}, set(), set()),
    (["greet"], [], DDP_ONLY, set(), set()),                                      # lines 129-132
    (["pipeline"], [], DDP_ONLY, set(), set()),                                   # lines 332-333
    (["frag=16"], [], DDP_ONLY, set(), set()),
    (["trickle=7"], [], DDP_ONLY, set(), set()),                                  # lines 360-362
    (["vtag-per-process"], [], DDP_ONLY, set(), {"ift-vtag-random"}),            # lines 189-191, I26
    (["refuse-newer-version"], [], DDP_ONLY | {"ift-newer-version-accepted"}, set(), set()),  # 115-116
    (["newer-version"], [], DDP_ONLY, set(), set()),                              # lines 109-112
    (["close-fin"], [], DDP_ONLY, set(), set()),                                  # lines 137-138, I24
    (["connect-as-b"], [], DDP_ONLY, NODE_B_PASSIVE, set()),                      # lines 129-132, I31
    (["upgrade"], [], DDP_ONLY, set(), set()),                                    # lines 69-72, I32
    (["upgrade", "greet", "trickle=3", "close-fin"], [], DDP_ONLY, set(), set()),
    (["connect-as-b", "greet", "no-hc", "trickle=5"], [], DDP_ONLY | CAPTURE_ACTIVE, NODE_B_PASSIVE, set()),
    (["greet", "pipeline", "trickle=5", "frag=16", "vtag-per-process", "close-fin", "newer-version"], [],
     DDP_ONLY, set(), {"ift-vtag-random"}),
    (["greet", "no-hc", "ih", "sp", "frag=100"], [],
     DDP_ONLY | CAPTURE_ACTIVE | {"ift-bad-hdr-crc-not-placed", "ift-bad-crc32-not-placed",
                                  "ift-bad-omit-hcrc-not-placed"}, CAPTURE_PASSIVE, set()),
    # answered, then aborted: the answer is judged (ift-negotiate), the offer not accepted
    (["refuse-pc", "abort-late", "close-fin"], [], REFUSES_OFFER - {"ift-negotiate", "ift-vtag-random", "ift-r-disagree"},
     REFUSES_OFFER_PASSIVE, set()),
    (["no-r", "greet", "trickle=3", "close-fin"], ["--offers", "echo"], DDP_TARGET - {"ift-ddp-mode"},
     DDP_TARGET_PASSIVE, set()),
]


def one_config(entry):
    """Both halves of the suite with these choices: (seconds, [(mode, rc, report, text)])."""
    choices, extra, *_ = entry
    peer_args = ["--choice", ",".join(choices)] if choices else []
    t0 = time.monotonic()
    active = suite.run_active(peer_args, list(extra), relay=RELAY)
    passive = suite.run_passive(peer_args, list(extra), relay=RELAY)
    return time.monotonic() - t0, [("active", *active), ("passive", *passive)]


class IftPeerChoices(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        peerlib.require_paths(IFT_PEER=suite.PEER, VITCP_CONFORM=suite.CONFORM, VITCP_CASES=suite.CASES)

    def test_every_choice_is_listed_and_bad_ones_refused(self):
        listed = {c.split("=")[0] for c in peerlib.list_choices(suite.PEER)}
        used = {c.split("=")[0] for choices, *_ in MATRIX for c in choices}
        self.assertEqual(listed - used, set(), "choices the matrix never runs")
        self.assertEqual(used - listed, set(), "the matrix names choices ift-peer does not list")
        peerlib.check_bad_choices_refused(self, suite.PEER, ["--listen", "0"], (
            "no-such-choice", "frag", "frag=0", "trickle=x", "greet=1", "trickle=65536"))

    def test_every_allowed_choice_gets_a_clean_report(self):
        t0 = time.monotonic()
        results = peerlib.parallel(one_config, MATRIX, JOBS)
        problems = []
        for (choices, extra, na_active, na_passive, advisory), (seconds, runs) in zip(MATRIX, results):
            name = " ".join((["--choice", ",".join(choices)] if choices else ["(defaults)"]) + list(extra))
            if seconds >= 30:
                problems.append("%s: the suite took %.1f s (at most 30)" % (name, seconds))
            for mode, rc, rep, _junit, text in runs:
                want_na, want_adv = (na_active, advisory) if mode == "active" else (na_passive, set())
                if mode == "passive" and "connect-as-b" not in choices:
                    want_na = want_na | NODE_B
                if mode == "active" and "upgrade" not in choices:
                    want_na = want_na | ULP
                cases = rep["cases"]
                self.assertEqual({c["id"] for c in cases}, ACTIVE if mode == "active" else PASSIVE, text)
                bad = [c for c in cases if c["verdict"] not in ("pass", "not-applicable", "advisory", "skip")]
                if bad:
                    problems.append("%s %s: cases that neither pass nor are not applicable:\n%s" % (
                        name, mode, "\n".join("  %s %s: %s" % (c["id"], c["verdict"], c["message"]) for c in bad)))
                skipped = [c["id"] for c in cases if c["verdict"] == "skip"
                           and not (c["id"] in suite.RELAY_CASES and not RELAY)]
                if skipped:
                    problems.append("%s %s: skipped: %s" % (name, mode, skipped))
                adv = {c["id"] for c in cases if c["verdict"] == "advisory"}
                if adv != want_adv:
                    problems.append("%s %s: advisory %s, expected %s" % (name, mode, sorted(adv), sorted(want_adv)))
                na = {c["id"] for c in cases if c["verdict"] == "not-applicable"}
                silent = [c["id"] for c in cases if c["verdict"] == "not-applicable" and not c["message"]]
                if silent:
                    problems.append("%s %s: not applicable without a reason: %s" % (name, mode, silent))
                if na != want_na:
                    problems.append("%s %s: not applicable: extra %s, missing %s" % (
                        name, mode, sorted(na - want_na), sorted(want_na - na)))
                if rc != 0:
                    problems.append("%s %s: vitcp-conform exit %d" % (name, mode, rc))
                passed = sum(1 for c in cases if c["verdict"] == "pass")
                print("%-72s %-7s %2d pass, %2d not applicable" % (name, mode, passed, len(na)))
            print("%-72s %.1f s" % (name, seconds))
        print("matrix of %d configurations: %.1f s" % (len(MATRIX), time.monotonic() - t0))
        self.assertEqual(problems, [], "\n".join(problems))


if __name__ == "__main__":
    unittest.main()
