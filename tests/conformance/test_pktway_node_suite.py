"""pktway_node_suite: the PacketWay EEP cases (conformance/cases/eep/,
protocol eep) through `vitcp-conform run --protocol eep` against pktway-node
over UDP on the loopback, on the engine's generic step runner with
datagram links (C47, C48).

1. An end node (`pktway-node --echo`, tester link 0) passes every end-node
   case, and a router between the tester's links 0 and 1 (`--router`, the
   topology below; `run --eep-router`) every router case; each run skips
   the other kind; the reports name the protocol.
2. Every fault of `pktway-node --list-faults` (the router ones against the
   router, the others against the end node) fails at least one case under
   the fault's own requirement ID, and no case fails for another ID except
   those listed in RELATED; a fault no case can provoke is in UNCAUGHT with
   the reason (and one a case does catch fails the test). Every case is
   failed by some fault under a rule the case names, or listed in
   NO_FAULT_FAILS with the reason.
3. The catalog: every EEP entry whose check kind is active is covered by a
   case (`vitcp-conform list --json`: no active entry NOT COVERED).
4. The capture of a clean end-node run holds the UDP messages of both
   sides, and `vitcp-conform lint` finds no error in it but the tester's
   two malformed messages.
5. Over raw Ethernet (root: veth pairs to a network namespace the test
   creates and always removes; skipped with the reason otherwise): the end
   node on its end passes every end-node case but the UDP-only one, with
   the tester on `--link 0=eth:IF`; a router between two pairs every
   router case (`--link 0=eth:IF0 --link 1=eth:IF1`).

The router topology: tester link 0 (EEP address 1) - router interface 0;
router interface 1 (MTU 512) - tester link 1 (EEP address 2). Its peer
table: 1 and 3 behind interface 0, 2 and 3 and Hey-You! behind interface 1
(so DT 3 goes to link 0 by the DT, to link 1 by an L2RH naming interface
1; a Hey-You! has a next hop it must not take, P7).

Environment: PKTWAY_NODE, VITCP_CONFORM (programs), VITCP_CASES (case folder).
"""
import json
import os
import re
import subprocess
import tempfile
import unittest

import peerlib
from peerlib import free_udp_port

NODE = os.environ.get("PKTWAY_NODE", "")
CONFORM = os.environ.get("VITCP_CONFORM", "")
CASES = os.environ.get("VITCP_CASES", "")

END_CASES = {
    "eep-hey-you-answered", "eep-answer-no-data", "eep-delivered-echo", "eep-records-consumed",
    "eep-version-dropped", "eep-reserved-dt-dropped", "eep-logical-not-subscribed", "eep-mandatory-oh-err",
    "eep-mandatory-oh-not-delivered", "eep-optional-oh-delivered", "eep-rz-ignored", "eep-padding-unchecked",
    "eep-sa-zero-no-err", "eep-not-whole-words-dropped", "eep-truncated-dropped", "eep-capture-exchange",
}
ROUTER_CASES = {
    "eep-router-forwards", "eep-router-ei-msb", "eep-router-leading-l2rh", "eep-router-symbols-mixed",
    "eep-router-symbol-consumed", "eep-router-local-only", "eep-router-path-mtu", "eep-router-no-sar",
    "eep-router-unreachable", "eep-router-error-lsbit", "eep-router-rz-unchanged",
}
CHAIN_CASES = {"eep-chain-shift", "eep-chain-msb", "eep-chain-lsbit"}
EEP_CASES = END_CASES | ROUTER_CASES | CHAIN_CASES

# Faults of the router (run against the router topology); the others run
# against the end node.
ROUTER_FAULTS = {"no-shift", "no-error-bit", "modify-db", "modify-header", "keep-l2rh", "keep-symbol",
                 "route-by-dt", "forward-local", "ignore-mtu", "segment", "no-forward", "keep-routes"}

# Faults of both kinds of node: run against the end node and the router.
BOTH_FAULTS = {"no-err", "wrong-te", "ei-nonzero"}
# Router faults also run in the chain (the second router faulty).
CHAIN_FAULTS = {"no-shift", "no-error-bit", "modify-db", "modify-header"}

# Faults that no case of the suite can provoke, with the reason.
UNCAUGHT = {
}

# Cases no fault fails, and why (the test checks the list is exactly that).
NO_FAULT_FAILS = {
    "eep-records-consumed": "pktway-node has no end-node fault that keeps or chokes on a record (keep-l2rh and "
                            "keep-symbol are a router's)",
    "eep-sa-zero-no-err": "no fault sends an ERR to SA 0 (no-err sends none at all)",
    "eep-not-whole-words-dropped": "pktway-node has no fault that takes a malformed message",
    "eep-truncated-dropped": "pktway-node has no fault that takes a malformed message",
    "eep-chain-msb": "the second router must leave an MSbit-set TAIL unshifted, which no-shift does too; no fault "
                     "shifts it anyway",
}

# Other IDs a fault legitimately makes a case fail with, and why.
RELATED = {
    # the capture case's ERR step compares the TE too, under the ERR's rule
    "wrong-te": {"EEP-6E-ERR-TO-SA"},
    # the node leaves 4 bytes off every message it sends: the shortest
    # (24 bytes: header and TAIL) cannot be decoded at all
    "odd-length": {"EEP-4A-TRUNCATED"},
    # the end node's ERR is missing: the case that wants the ERR before
    # anything else times out under the delivery rule it checks
    "no-err": {"EEP-7-MANDATORY-UNKNOWN", "EEP-1B-PATH-MTU"},
    # a delivered message with a mandatory OH causes no ERR either
    "accept-mandatory": {"EEP-6E-ERR-TO-SA"},
    # a dropped optional-OH message is also a dropped padded one (the
    # padding case sends an optional OH field)
    "drop-optional": {"EEP-3-PADDING-UNCHECKED"},
    # forwarding a message over the MTU sends no ERR; splitting it neither
    "ignore-mtu": {"EEP-1B-NO-SAR"},
    "segment": {"EEP-1B-PATH-MTU"},
    # no copy comes out: every router case that expects one times out
    # (nor refuses one over the MTU: no ERR)
    "no-forward": {"EEP-1C-LEADING-L2RH", "EEP-5-HR-CONSUMES-L2RH", "EEP-5-SYMBOL-CONSUMED", "EEP-10-EI-SHIFT",
                   "EEP-10-EI-ERROR-LSBIT", "EEP-6J-RZ-IGNORED", "EEP-1B-PATH-MTU"},
    # the copy goes back out of interface 0 by its DT
    "route-by-dt": {"EEP-5-HR-CONSUMES-L2RH"},
    # a kept symbol before a kept L2RH: the forward check names either rule
    "keep-symbol": {"EEP-5-HR-CONSUMES-L2RH"},
    "keep-l2rh": {"EEP-5-SYMBOL-CONSUMED"},
}


class Node(peerlib.Process):
    """One pktway-node on the loopback (its UDP ports from its event lines)."""

    def __init__(self, *args, addr="0x10", prefix=()):
        super().__init__(list(prefix) + [NODE, "--addr", addr] + list(args), r"^event=ready", name="pktway-node",
                         stdin=True)
        self.ports = [int(m.group(1)) for m in (re.search(r"kind=udp local=[0-9.]+:(\d+)", l)
                                                 for l in self.lines if l.startswith("event=interface")) if m]


def end_node(*extra):
    node = Node("--udp", "127.0.0.1:0", "--echo", *extra)
    return node, ["--target", "127.0.0.1:%d" % node.ports[0]]


def router(*extra):
    t0, t1 = free_udp_port(), free_udp_port()
    node = Node("--router", "--udp", "127.0.0.1:0", "--udp", "127.0.0.1:0",
                "--peer", "1=127.0.0.1:%d@0" % t0, "--peer", "3=127.0.0.1:%d@0" % t0,
                "--peer", "2=127.0.0.1:%d@1" % t1, "--peer", "3=127.0.0.1:%d@1" % t1,
                "--peer", "hey-you=127.0.0.1:%d@1" % t1, "--mtu", "1:512", *extra)
    return node, ["--target", "127.0.0.1:%d" % node.ports[0], "--link", "0=127.0.0.1:%d" % t0,
                  "--link", "1=127.0.0.1:%d,127.0.0.1:%d" % (t1, node.ports[1]), "--eep-router"]


def chain(*extra):
    """Two routers in a row: tester link 0 - A - B - tester link 1; the
    fault (extra) is B's."""
    t0, t1, a1, b0 = (free_udp_port() for _ in range(4))
    a = Node("--router", "--udp", "127.0.0.1:0", "--udp", "127.0.0.1:%d" % a1,
             "--peer", "1=127.0.0.1:%d@0" % t0, "--peer", "2=127.0.0.1:%d@1" % b0)
    try:
        b = Node("--router", "--udp", "127.0.0.1:%d" % b0, "--udp", "127.0.0.1:0",
                 "--peer", "1=127.0.0.1:%d@0" % a1, "--peer", "2=127.0.0.1:%d@1" % t1, *extra, addr="0x11")
    except Exception:
        a.stop()
        raise
    return Pair(a, b), ["--target", "127.0.0.1:%d" % a.ports[0], "--link", "0=127.0.0.1:%d" % t0,
                        "--link", "1=127.0.0.1:%d,127.0.0.1:%d" % (t1, b.ports[1]), "--eep-chain"]


class Pair:
    """Two nodes stopped together; lines are both's."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    @property
    def lines(self):
        return self.a.lines + self.b.lines

    def stop(self):
        self.b.stop()
        return self.a.stop()


def run(args, *extra, capture=None):
    """vitcp-conform run: (exit status, JSON report, text)."""
    rc, report, _, text = peerlib.conform_run(["--protocol", "eep", "--slack", "1000"] +
                                              (["--capture", capture] if capture else ["--no-capture"]) +
                                              list(args) + list(extra), CASES, conform=CONFORM)
    return rc, report, text


class Netns:
    """A network namespace with the far ends of `pairs` veth pairs; the near
    ends stay here, with MACs 02:00:00:00:ee:0N (far: ...:1N). Removed (and
    with it the pairs) by close, whatever happened."""

    def __init__(self, pairs=1):
        Netns.remove_stale()
        tag = "%d" % os.getpid()
        self.ns = "cfeep" + tag
        self.near = ["vcf%de%s" % (i, tag) for i in range(pairs)]
        self.far = ["vcf%dn%s" % (i, tag) for i in range(pairs)]
        self.near_mac = ["02:00:00:00:ee:0%d" % i for i in range(pairs)]
        cmds = [["ip", "netns", "add", self.ns]]
        for i in range(pairs):
            cmds += [["ip", "link", "add", self.near[i], "address", self.near_mac[i], "type", "veth", "peer", "name",
                      self.far[i], "address", "02:00:00:00:ee:1%d" % i, "netns", self.ns],
                     ["ip", "link", "set", self.near[i], "up"],
                     ["ip", "netns", "exec", self.ns, "ip", "link", "set", self.far[i], "up"]]
        try:
            for c in cmds:
                p = subprocess.run(c, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=20)
                if p.returncode != 0:
                    raise OSError("%s: %s" % (" ".join(c), p.stdout.strip()))
        except Exception:
            self.close()
            raise

    @staticmethod
    def remove_stale():
        """The namespaces (and near ends) of an earlier run that was killed
        before it could remove them: its process is gone."""
        listed = subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, timeout=20).stdout
        for pid in re.findall(r"^cfeep(\d+)\b", listed, re.M):
            if not os.path.exists("/proc/%s" % pid):
                subprocess.run(["ip", "netns", "del", "cfeep" + pid], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=20)
                for i in range(2):
                    subprocess.run(["ip", "link", "del", "vcf%de%s" % (i, pid)], stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, timeout=20)

    def close(self):
        subprocess.run(["ip", "netns", "del", self.ns], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)
        for near in self.near:
            subprocess.run(["ip", "link", "del", near], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=20)


class EepSuite(unittest.TestCase):
    def check_clean_run(self, start, expect_pass, expect_skip, capture=None):
        node, args = start()
        try:
            rc, rep, text = run(args, capture=capture)
        finally:
            node.stop()
        peerlib.check_report(self, rep, text, "eep", EEP_CASES,
                             lambda c: ("pass",) if c["id"] in expect_pass else ("skip",))
        self.assertEqual(rc, 0, text)
        self.assertNotIn("Sanitizer", text)
        return node

    def test_end_node_passes_every_end_node_case(self):
        with tempfile.TemporaryDirectory() as d:
            cap = os.path.join(d, "eep.pcapng")
            node = self.check_clean_run(end_node, END_CASES, ROUTER_CASES | CHAIN_CASES, capture=cap)
            # what the node said it did: the drops the cases provoke, with their reasons
            log = "\n".join(node.lines)
            for reason in ("EEP-6A-VERSION", "EEP-6C-DT-KIND", "EEP-6C-LOGICAL", "EEP-7-MANDATORY-UNKNOWN"):
                self.assertRegex(log, r"event=dropped .*reason=%s" % reason)
            lint = subprocess.run([CONFORM, "lint", "--json", "--eep-port", str(node.ports[0]), cap],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
            full = json.loads(lint.stdout)
            res = full["summary"]
            # every frame is an EEP message (both sides'); the only errors
            # are the tester's two malformed messages (hostile cases 060, 061)
            self.assertGreater(res["eep_messages"], 20, lint.stdout[:500])
            self.assertEqual(res["eep_messages"], res["frames"], lint.stdout[:500])
            errors = [i for i in full["issues"] if i["severity"] == "error"]
            self.assertEqual(sorted(i["requirement"] for i in errors), ["EEP-1B-8B-WORDS", "EEP-6H-DL-FITS"],
                             lint.stdout[:3000])

    def netns(self, pairs):
        if os.geteuid() != 0:
            self.skipTest("raw Ethernet in a network namespace needs root")
        try:
            return Netns(pairs)
        except OSError as e:
            self.skipTest("no network namespace with veth pairs here: %s" % e)

    def test_router_over_ethernet(self):
        net = self.netns(2)
        try:
            m0, m1 = net.near_mac
            node = Node("--router", "--iface", net.far[0], "--iface", net.far[1], "--peer", "1=%s@0" % m0,
                        "--peer", "3=%s@0" % m0, "--peer", "2=%s@1" % m1, "--peer", "3=%s@1" % m1,
                        "--peer", "hey-you=%s@1" % m1, "--mtu", "1:512", prefix=("ip", "netns", "exec", net.ns))
            try:
                rc, rep, text = run(["--link", "0=eth:%s" % net.near[0], "--link", "1=eth:%s" % net.near[1],
                                     "--eep-router"])
            finally:
                node.stop()
        finally:
            net.close()
        self.assertNotIn(net.ns, subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, text=True).stdout)
        by_id = {c["id"]: c for c in rep["cases"]}
        for cid in ROUTER_CASES:
            self.assertEqual(by_id[cid]["verdict"], "pass", "%s: %s" % (cid, by_id[cid]["message"]))
        self.assertEqual(rc, 0, text)

    def test_end_node_over_ethernet(self):
        net = self.netns(1)
        try:
            node = Node("--iface", net.far[0], "--echo", prefix=("ip", "netns", "exec", net.ns))
            try:
                with tempfile.TemporaryDirectory() as d:
                    cap = os.path.join(d, "eth.pcapng")
                    rc, rep, text = run(["--link", "0=eth:%s" % net.near[0]], capture=cap)
                    lint = subprocess.run([CONFORM, "lint", "--json", cap], stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, text=True, timeout=60)
            finally:
                node.stop()
        finally:
            net.close()
        self.assertNotIn(net.ns, subprocess.run(["ip", "netns", "list"], stdout=subprocess.PIPE, text=True).stdout)
        by_id = {c["id"]: c for c in rep["cases"]}
        for cid in END_CASES:
            want = "skip" if cid == "eep-not-whole-words-dropped" else "pass"
            self.assertEqual(by_id[cid]["verdict"], want, "%s: %s" % (cid, by_id[cid]["message"]))
        self.assertEqual(rc, 0, text)
        full = json.loads(lint.stdout)
        # the frames are Ethernet (Ethertype 0x88B5), both sides' messages
        self.assertGreater(full["summary"]["eep_messages"], 20, lint.stdout[:500])
        errors = [i["requirement"] for i in full["issues"] if i["severity"] == "error"]
        self.assertEqual(errors, ["EEP-6H-DL-FITS"], lint.stdout[:3000])  # the tester's cut message (061)

    def test_capture_case_replays_to_another_address(self):
        """The recorded node was 0x10; replayed to a node 0x22 (--eep-address),
        the recorded messages go to it, and its answers match."""
        node = Node("--udp", "127.0.0.1:0", "--echo", addr="0x22")
        try:
            rc, rep, text = run(["--target", "127.0.0.1:%d" % node.ports[0], "--eep-address", "0x22",
                                 "--only", "eep-capture-exchange"])
        finally:
            node.stop()
        self.assertEqual([(c["id"], c["verdict"]) for c in rep["cases"]], [("eep-capture-exchange", "pass")], text)
        self.assertRegex("\n".join(node.lines), r"event=dropped .*reason=EEP-6A-VERSION")
        self.assertEqual(len([l for l in node.lines if l.startswith("event=sent")]), 4, "\n".join(node.lines))

    def test_chain_passes_every_chain_case(self):
        node = self.check_clean_run(chain, CHAIN_CASES, END_CASES | ROUTER_CASES)
        self.assertEqual(len([l for l in node.lines if l.startswith("event=forwarded")]), 2 * len(CHAIN_CASES))

    def test_router_passes_every_router_case(self):
        node = self.check_clean_run(router, ROUTER_CASES, END_CASES | CHAIN_CASES)
        log = "\n".join(node.lines)
        self.assertRegex(log, r"event=refused .*reason=EEP-1B-PATH-MTU")
        self.assertRegex(log, r"event=forwarded .*records=1 consumed=1")

    def test_each_fault_fails_a_case_under_its_id(self):
        faults = peerlib.list_faults(NODE, strict=False)

        def one(job):
            fault, start = job
            node, args = start("--fault", fault)
            try:
                rc, rep, text = run(args)
                return rc, rep, None, text
            finally:
                node.stop()

        jobs = [(f, router if f in ROUTER_FAULTS else end_node) for f in faults] + \
            [(f, router) for f in BOTH_FAULTS] + [(f, chain) for f in CHAIN_FAULTS]
        results = peerlib.fault_runs(jobs, one, 2)
        print("\n".join("%s: %s" % (f, ", ".join("%s(%s)" % (c["id"], c["failed_requirement"])
                                                   for r in runs for c in peerlib.failing(r[1])))
                        for f, runs in sorted(results.items())))
        # a case counts as failed by a fault when it fails under the
        # fault's own rule (or a RELATED one) and names that rule
        # (odd-length and sa-logical, which break every message,
        # fail every case under a rule most do not name);
        # exit status 1 when a MUST-class rule failed, else 0 (SHOULD, IMPLIED, ...)
        peerlib.check_faults(self, faults, results, EEP_CASES, RELATED, UNCAUGHT, NO_FAULT_FAILS, rc_ok=(0, 1),
                             counts=lambda c: c["failed_requirement"] in c["requirements"])

    def test_catalog_active_entries_are_covered(self):
        reqs = peerlib.list_requirements("EEP", CASES, conform=CONFORM)
        self.assertGreaterEqual(len(reqs), 58)
        for r in reqs:
            if "active" in r["checks"]:
                self.assertTrue(r["status"].startswith("active ("), "%s: %s" % (r["id"], r["status"]))
        self.assertFalse([r["id"] for r in reqs if r["status"] == "NOT COVERED"])


if __name__ == "__main__":
    unittest.main()
