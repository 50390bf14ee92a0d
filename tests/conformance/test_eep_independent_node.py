"""eep_independent_node: the EEP suite against an EEP node written from the
draft alone (eep_indie_node.py: Python, no wire/ code, no pktway-node
convention), the best proof of issue 30's "an independent end node and
router that keep every rule get a clean report".

1. As an end node (UDP) that echoes nothing, answers no Hey-You!, sends no
   ERR, drops an L2RH left at the destination and prints one line per
   delivered message (its delivery log, run --eep-delivery-log, P40):
   every case passes, is skipped as another topology's, or is not
   applicable with a reason, and the not-applicable set is exactly what
   the node does not offer (the echo, the Hey-You! answer, ERRs).
2. As a router with its own L2RH format (routing bytes "l1", --eep-l2rh
   1=6c31), no ERR and no error detection: every router case passes or is
   not applicable (the ERR cases, the LSbit case); two of them in a row
   every chain case but the LSbit one. Over raw Ethernet too, as an end
   node and a router in the network run --topology makes (root), the
   delivery log read from the node the tester starts.
3. The same node made to break one rule (--break): a non-zero V, an OH
   field without h, a DL too small in what it originates (its echo), an
   L2RH kept in a router's copy, a Broadcast forwarded: each fails the
   case that provokes it under that rule (issue 30 item 9).

Environment: VITCP_CONFORM (program), VITCP_CASES (case folder).
"""
import os
import sys
import tempfile
import unittest

import peerlib
from peerlib import Pair, free_udp_port

CONFORM = os.environ.get("VITCP_CONFORM", "")
CASES = os.environ.get("VITCP_CASES", "")
NODE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "eep_indie_node.py")
DELIVERY_LOG = ["--eep-delivery-log", r"^DELIVERED .* bytes=([0-9]+)$"]
OK = ("pass", "not-applicable", "skip")
SKIP_REASONS = ("a router case", "an end-node case", "two routers in a row", "a UDP case")

# What the independent node does not offer, and so the cases that cannot
# judge it (each with a reason in the report)
END_NA = {"eep-probe-echo", "eep-probe-hey-you", "eep-hey-you-answered", "eep-answer-no-data", "eep-probe-err",
          "eep-mandatory-oh-err", "eep-capture-exchange"}
ROUTER_NA = {"eep-probe-err", "eep-router-unreachable", "eep-router-error-lsbit"}


def start(*args, to_file=True):
    return peerlib.Process([sys.executable, NODE] + list(args), r"^READY", name="eep_indie_node", to_file=to_file)


def end_node(*extra):
    port = free_udp_port()
    node = start("--addr", "0x10", "--udp", "127.0.0.1:%d" % port, *extra)
    return node, ["--target", "127.0.0.1:%d" % port, "--eep-unknown-oh", "5"]


def router(*extra):
    p0, p1, t0, t1 = (free_udp_port() for _ in range(4))
    node = start("--addr", "0x10", "--router", "--udp", "127.0.0.1:%d" % p0, "--udp", "127.0.0.1:%d" % p1,
                 "--route", "1=0", "--route", "3=0", "--route", "2=1", "--neighbor", "0=127.0.0.1:%d" % t0,
                 "--neighbor", "1=127.0.0.1:%d" % t1, "--mtu", "1=512", *extra)
    return node, ["--target", "127.0.0.1:%d" % p0, "--link", "0=127.0.0.1:%d" % t0,
                  "--link", "1=127.0.0.1:%d,127.0.0.1:%d" % (t1, p1), "--eep-router", "--eep-l2rh", "1=6c31",
                  "--eep-unknown-oh", "5"]


def chain(*extra):
    """Two of its routers in a row: tester link 0 - A - B - tester link 1."""
    a0, a1, b0, b1, t0, t1 = (free_udp_port() for _ in range(6))
    a = start("--addr", "0x10", "--router", "--udp", "127.0.0.1:%d" % a0, "--udp", "127.0.0.1:%d" % a1,
              "--route", "1=0", "--route", "2=1", "--neighbor", "0=127.0.0.1:%d" % t0,
              "--neighbor", "1=127.0.0.1:%d" % b0)
    try:
        b = start("--addr", "0x11", "--router", "--udp", "127.0.0.1:%d" % b0, "--udp", "127.0.0.1:%d" % b1,
                  "--route", "1=0", "--route", "2=1", "--neighbor", "0=127.0.0.1:%d" % a1,
                  "--neighbor", "1=127.0.0.1:%d" % t1, *extra)
    except Exception:
        a.stop()
        raise
    return Pair(a, b), ["--target", "127.0.0.1:%d" % a0, "--link", "0=127.0.0.1:%d" % t0,
                        "--link", "1=127.0.0.1:%d,127.0.0.1:%d" % (t1, b1), "--eep-chain"]


def run(start_fn, *node_args, extra=()):
    node, args = start_fn(*node_args)
    try:
        rc, rep, _, text = peerlib.conform_run(["--protocol", "eep", "--slack", "1000", "--no-capture"] + args +
                                               list(extra), CASES, conform=CONFORM)
    finally:
        node.stop()
    return rc, rep, text, node


def verdicts(rep):
    return "\n".join("  %s %s: %s" % (c["id"], c["verdict"], c["message"][:200]) for c in rep["cases"])


class IndependentNode(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        peerlib.require_paths(VITCP_CONFORM=CONFORM, VITCP_CASES=CASES)

    def clean(self, rc, rep, text, expected_na):
        self.assertIsNotNone(rep, text)
        bad = [c for c in rep["cases"] if c["verdict"] not in OK]
        self.assertEqual(bad, [], verdicts(rep))
        for c in rep["cases"]:
            if c["verdict"] == "skip":
                self.assertTrue(any(r in c["message"] for r in SKIP_REASONS), c)
            if c["verdict"] == "not-applicable":
                self.assertTrue(c["message"], c)
        self.assertEqual({c["id"] for c in rep["cases"] if c["verdict"] == "not-applicable"}, expected_na,
                         verdicts(rep))
        self.assertEqual(rc, 0, text)

    def test_end_node_gets_a_clean_report(self):
        def logged(*extra):
            node, args = end_node(*extra)
            return node, args + DELIVERY_LOG + ["--eep-node-log", node.log.name]
        rc, rep, text, node = run(logged)
        self.clean(rc, rep, text, END_NA)
        passed = {c["id"] for c in rep["cases"] if c["verdict"] == "pass"}
        # the delivery cases judged it through its own lines
        for cid in ("eep-delivered-echo", "eep-records-consumed", "eep-version-dropped", "eep-reserved-dt-dropped",
                    "eep-logical-not-subscribed", "eep-mandatory-oh-not-delivered", "eep-optional-oh-delivered",
                    "eep-rz-ignored", "eep-padding-unchecked"):
            self.assertIn(cid, passed, verdicts(rep))
        log = "\n".join(node.lines)
        self.assertRegex(log, r"DELIVERED .* bytes=301")
        self.assertRegex(log, r"DROPPED version")
        self.assertRegex(log, r"DROPPED mandatory-oh")

    def test_end_node_without_delivery_log(self):
        """Without its log and its echo nothing shows a delivery: those cases
        are not applicable, never failed."""
        rc, rep, text, _ = run(end_node)
        delivery = {"eep-delivered-echo", "eep-records-consumed", "eep-version-dropped", "eep-reserved-dt-dropped",
                    "eep-logical-not-subscribed", "eep-mandatory-oh-not-delivered", "eep-optional-oh-delivered",
                    "eep-rz-ignored", "eep-padding-unchecked"}
        self.clean(rc, rep, text, END_NA | delivery)

    def test_router_gets_a_clean_report(self):
        rc, rep, text, node = run(router)
        self.clean(rc, rep, text, ROUTER_NA)
        log = "\n".join(node.lines)
        self.assertRegex(log, r"DROPPED too-long")
        self.assertRegex(log, r"FORWARDED if=1")

    def test_chain_gets_a_clean_report(self):
        rc, rep, text, node = run(chain)
        self.clean(rc, rep, text, {"eep-chain-lsbit"})  # no error detection declared (C72)
        self.assertEqual(len([l for l in node.lines if l.startswith("FORWARDED")]), 4, node.lines)

    def eth(self, topology, cmds, contract):
        """The run --topology network over raw Ethernet (root; every case
        skipped with the reason where no namespace can be made)."""
        with tempfile.TemporaryDirectory() as d:
            args = ["--topology", topology, "--node-ready", "^READY", "--node-log", os.path.join(d, "node.log")]
            for c in cmds:
                args += ["--node-cmd", "%s %s %s" % (sys.executable, NODE, c)]
            rc, rep, _, text = peerlib.conform_run(["--protocol", "eep", "--slack", "1000", "--no-capture"] + args +
                                                   list(contract), CASES, conform=CONFORM)
        if rep and all(c["verdict"] == "skip" for c in rep["cases"]):
            self.skipTest(rep["cases"][0]["message"])
        return rc, rep, text

    def test_over_ethernet(self):
        """End node (its delivery log read from the node the tester starts)
        and router over raw Ethernet in the network run --topology makes."""
        rc, rep, text = self.eth("end", ["--addr 0x10 --iface {if0}"], ["--eep-unknown-oh", "5"] + DELIVERY_LOG)
        self.clean(rc, rep, text, END_NA)
        rc, rep, text = self.eth("router", ["--addr 0x10 --router --iface {if0} --iface {if1} --route 1=0 --route 3=0 "
                                            "--route 2=1 --neighbor 0={peer0} --neighbor 1={peer1} --mtu 1=512"],
                                 ["--eep-l2rh", "1=6c31", "--eep-unknown-oh", "5"])
        self.clean(rc, rep, text, ROUTER_NA)

    def test_each_broken_rule_fails_its_case(self):
        jobs = [(end_node, "v", "eep-probe-echo", "EEP-6A-VERSION"),
                (end_node, "oh-no-h", "eep-probe-echo", "EEP-6I-H-FLAG"),
                (end_node, "dl-short", "eep-probe-echo", "EEP-6H-DL-FITS"),
                (router, "keep-l2rh", "eep-router-leading-l2rh", "EEP-5-HR-CONSUMES-L2RH"),
                (router, "forward-broadcast", "eep-router-local-only", "EEP-6C-LOCAL-ONLY")]

        def one(job):
            start_fn, brk = job[0], job[1]
            extra = ("--echo", "--break", brk) if start_fn is end_node else ("--break", brk)
            return run(start_fn, *extra)
        results = peerlib.parallel(one, jobs, 3)
        for (_, brk, cid, rule), (rc, rep, text, _) in zip(jobs, results):
            with self.subTest(brk=brk):
                self.assertIsNotNone(rep, text)
                failed = {c["id"]: c for c in rep["cases"] if c["verdict"] in ("fail", "timeout")}
                self.assertIn(cid, failed, verdicts(rep))
                self.assertEqual(failed[cid]["failed_requirement"], rule, failed[cid]["message"])
                # nothing fails under another rule
                self.assertEqual({c["failed_requirement"] for c in failed.values()}, {rule}, verdicts(rep))
                self.assertIn(rc, (0, 1), text)  # 1 when the rule is MUST-class


if __name__ == "__main__":
    unittest.main()
