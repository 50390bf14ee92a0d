"""conform_impair_choices: the reference peers' choice matrices under
impairment (issue 33, "Verdicts stay true ... and their choice matrices";
C87).

A choice the draft allows changes how a peer cuts and times its bytes; a
conforming target over kernel TCP still sends the same byte stream, so
every case that passes through the clean relay with a choice passes under
every shipped TCP profile (lossy, reordering, jittery, tiny-segments) with
that choice: pass, or advisory where the case's own judgement depends on
arrival timing (C61), never a failure.

The whole matrices (test_*_peer_choices.py: 16 VI/TCP, 21 WARP and 33 IFT
configurations) times five runs would take about half an hour on 2 cores;
this test runs, per protocol, the choices that change segmentation and
timing most, where TCP's repairs and the relay's cuts meet the peer's own
framing:

- VI/TCP (vipl-peer): `seg-size=1400,no-crc,mtu=32768,offer-urgent` (a
  message in many VI segments, none with a CRC trailer, and the urgent
  option: the relay passes urgent segments untouched, C61) and
  `dfc,credits=1,level=rr` (descriptor flow control with one credit: the
  target sends only when the tester's credit arrives, so every delay
  stalls it).
- WARP (warp-peer): `frag=1` (every payload byte a chunk of its own: the
  most chunk headers for the relay to cut) and
  `header-chunk=3,last-byte` (a ULP header chunk of 3 bytes and a 1-byte
  last chunk: chunk boundaries that never line up with segments).
- IFT (ift-peer), node B (--target) and node A (--listen): `trickle=7`
  (at most 7 bytes per TCP write: the peer's own tiny segments, cut
  again by the relay) and `pipeline,greet` (node A's first Send and
  operation in one write, and B's Send right after phase 1: frames that
  race the indications, so a held-back indication meets them).

Environment: VITCP_CONFORM, VITCP_CASES, VIPL_PEER, WARP_PEER, IFT_PEER.
Needs root (the packet relay); skipped otherwise.
"""
import os
import time
import unittest

import peerlib
import test_ift_peer_suite as ift
import test_vipl_peer_suite as vipl
import test_warp_peer_suite as warp

PROFILES = ("lossy", "reordering", "jittery", "tiny-segments")
JOBS = 5

VIPL_CHOICES = [["seg-size=1400", "no-crc", "mtu=32768", "offer-urgent"], ["dfc", "credits=1", "level=rr"]]
WARP_CHOICES = [["frag=1"], ["header-chunk=3", "last-byte"]]
IFT_CHOICES = [["trickle=7"], ["pipeline", "greet"]]


def choice_args(choices):
    return ["--choice", ",".join(choices)]


def run_vipl(choices, net):
    rc, rep, text, log, status = vipl.run_suite(choice_args(choices), net)
    return [("", rep, text)]


def run_warp(choices, net):
    peer = warp.Peer(*choice_args(choices), all_addresses=True)
    try:
        skip = [a for c in sorted(warp.ISCSI_CASES) for a in ("--skip", c)]
        rc, rep, _, text = warp.run(peer, "--region", peer.region, *skip, *net, relay=True,
                                    initiator=choice_args(choices))
    finally:
        peer.stop()
    return [("", rep, text)]


def run_ift(choices, net):
    active = ift.run_active(choice_args(choices), net, relay=True)
    passive = ift.run_passive(choice_args(choices), net, relay=True)
    return [("node B ", active[1], active[3]), ("node A ", passive[1], passive[3])]


@unittest.skipUnless(os.geteuid() == 0, "the packet relay needs root")
class ChoicesUnderImpairment(unittest.TestCase):
    def check(self, protocol, run, matrix):
        """Each choice: once through the clean relay, once under each profile; the cases that pass
        clean pass impaired (or turn advisory), and the impairment touched the runs."""
        t0 = time.monotonic()
        jobs = [(tuple(c), net) for c in matrix for net in [("--relay-all",)] + [("--impair", p) for p in PROFILES]]
        results = dict(zip(jobs, peerlib.parallel(lambda j: run(list(j[0]), list(j[1])), jobs, JOBS)))
        problems = []
        for choices in map(tuple, matrix):
            name = "%s --choice %s" % (protocol, ",".join(choices))
            clean = results[(choices, ("--relay-all",))]
            for half, rep, text in clean:
                if rep is None:
                    problems.append("%s %s(clean): no report\n%s" % (name, half, text))
                elif any(c["verdict"] == "skip" and "packet relay" in c["message"] for c in rep["cases"]):
                    self.skipTest("no packet relay here")
            for profile in PROFILES:
                for (half, crep, _), (_, rep, text) in zip(clean, results[(choices, ("--impair", profile))]):
                    if crep is None:
                        continue
                    if rep is None:
                        problems.append("%s %s%s: no report\n%s" % (name, half, profile, text))
                        continue
                    passing = {c["id"] for c in crep["cases"] if c["verdict"] == "pass"}
                    if len(passing) < 5:
                        problems.append("%s %s: only %d cases pass on the clean relay" % (name, half, len(passing)))
                    worse = [c for c in rep["cases"] if c["id"] in passing and c["verdict"] not in ("pass", "advisory")]
                    if worse:
                        problems.append("%s %sunder %s: cases that pass through the clean relay but not here:\n%s" % (
                            name, half, profile, vipl.describe(worse)))
                    touched = [c for c in rep["cases"] if c.get("impaired", "").split(" (seed")[0]
                               not in ("", "nothing impaired")]
                    if len(touched) < 3:
                        problems.append("%s %sunder %s: only %d cases had packets impaired" % (
                            name, half, profile, len(touched)))
                    print("%-60s %-7s %-14s %2d pass clean, %2d impaired cases" % (
                        name, half.strip() or "-", profile, len(passing), len(touched)))
        print("%s: %d runs, %.1f s" % (protocol, len(jobs), time.monotonic() - t0))
        self.assertEqual(problems, [], "\n".join(problems))

    def test_vipl(self):
        peerlib.require_paths(VIPL_PEER=vipl.PEER, VITCP_CONFORM=vipl.CONFORM, VITCP_CASES=vipl.CASES)
        self.check("vitcp", run_vipl, VIPL_CHOICES)

    def test_warp(self):
        peerlib.require_paths(WARP_PEER=warp.PEER, VITCP_CONFORM=warp.CONFORM, VITCP_CASES=warp.CASES)
        self.check("warp", run_warp, WARP_CHOICES)

    def test_ift(self):
        peerlib.require_paths(IFT_PEER=ift.PEER, VITCP_CONFORM=ift.CONFORM, VITCP_CASES=ift.CASES)
        self.check("ift", run_ift, IFT_CHOICES)


class SubsetIsOfRealChoices(unittest.TestCase):
    """The subset names choices the peers have (a renamed choice would leave the test running nothing)."""

    def test_choices_exist(self):
        for program, matrix in ((vipl.PEER, VIPL_CHOICES), (warp.PEER, WARP_CHOICES), (ift.PEER, IFT_CHOICES)):
            if not program:
                self.skipTest("peers not given")
            listed = {c.split("=")[0] for c in peerlib.list_choices(program)}
            for choices in matrix:
                for c in choices:
                    self.assertIn(c.split("=")[0], listed, program)


if __name__ == "__main__":
    unittest.main()
