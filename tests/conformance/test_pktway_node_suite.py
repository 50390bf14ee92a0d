"""pktway_node_suite: the PacketWay EEP cases (conformance/cases/eep/,
protocol eep) through `vitcp-conform run --protocol eep` against pktway-node
over UDP on the loopback, on the engine's generic step runner with
datagram links (C47, C48).

1. An end node (`pktway-node --echo`, tester link 0) passes every end-node
   case, and a router between the tester's links 0 and 1 (`--router`, the
   topology below; `run --eep-router`) every router case; each run skips
   the other kind; the reports name the protocol. Each run is told
   pktway-node's node contract (docs/conformance.md, "The node under
   test"; C70): an OH type it does not know, the L2RH toward link 1, that
   its routers count a malformed message as a detected error. Its other
   choices are test_pktway_node_choices.py's.
2. Every fault of `pktway-node --list-faults` (the router ones against the
   router, the others against the end node) fails at least one case under
   the fault's own requirement ID, and no case fails for another ID except
   those listed in RELATED; a fault no case can provoke is in UNCAUGHT with
   the reason (and one a case does catch fails the test). Every case is
   failed by some fault under a rule the case names, or listed in
   NO_FAULT_FAILS with the reason.
3. The catalog: every EEP entry whose check kind is active is covered by a
   case (`vitcp-conform list --json`: no active entry NOT COVERED) and its
   "how checked" text names its cases ("vitcp-conform cases eep-..."),
   each of which exists and names the entry's ID.
4. The capture of a clean end-node run holds the UDP messages of both
   sides, and `vitcp-conform lint` finds no error in it but the tester's
   two malformed messages.
5. Over raw Ethernet, in the network vitcp-conform makes itself (`run
   --topology end|router|chain --node-cmd ...`, C54: a namespace per node,
   veth pairs to the tester, all removed; every case skipped with the
   reason where no namespace can be made, e.g. not root): the end node
   passes every end-node case but the UDP-only one, a router every router
   case, two routers in a row every chain case; nothing is left behind.
6. Delivery seen in the node's own output (P40, C90): pktway-node without
   --echo, its event=delivered lines read from the file its output goes to
   (--eep-delivery-log, --eep-node-log): the receiving faults fail their
   cases through it; expect-log / expect-no-log judge the line (a delivery
   where none was expected, a data length that is not the message's); a
   missing pattern or output makes the step not applicable; bad options
   and steps are refused; data=echo without payload=N is not run (P39).

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
import shutil
import signal
import subprocess
import tempfile
import time
import unittest

import peerlib
from peerlib import Pair, free_udp_port

NODE = os.environ.get("PKTWAY_NODE", "")
CONFORM = os.environ.get("VITCP_CONFORM", "")
CASES = os.environ.get("VITCP_CASES", "")

END_CASES = {
    "eep-probe-echo", "eep-probe-hey-you", "eep-hey-you-answered", "eep-answer-no-data", "eep-delivered-echo", "eep-records-consumed",
    "eep-version-dropped", "eep-reserved-dt-dropped", "eep-logical-not-subscribed", "eep-mandatory-oh-err",
    "eep-mandatory-oh-not-delivered", "eep-optional-oh-delivered", "eep-rz-ignored", "eep-padding-unchecked",
    "eep-sa-zero-no-err", "eep-not-whole-words-dropped", "eep-truncated-dropped", "eep-capture-exchange",
    "eep-probe-err",
}
# End-node cases a router takes too (a message for its own address): the
# probe of err-report (P38)
ANY_NODE_CASES = {"eep-probe-err"}
ROUTER_CASES = {
    "eep-router-forwards", "eep-router-ei-msb", "eep-router-leading-l2rh", "eep-router-symbols-mixed",
    "eep-router-symbol-consumed", "eep-router-local-only", "eep-router-path-mtu", "eep-router-no-sar",
    "eep-router-unreachable", "eep-router-error-lsbit", "eep-router-rz-unchanged", "eep-capture-router",
}
CHAIN_CASES = {"eep-chain-shift", "eep-chain-msb", "eep-chain-lsbit"}
EEP_CASES = END_CASES | ROUTER_CASES | CHAIN_CASES

# Faults of the router (run against the router topology); the others run
# against the end node.
ROUTER_FAULTS = {"no-shift", "no-error-bit", "modify-db", "modify-header", "keep-l2rh", "keep-symbol",
                 "route-by-dt", "forward-local", "ignore-mtu", "segment", "no-forward", "keep-routes",
                 # a message mixing symbols and L2RHs reaches an end node only with an L2RH left,
                 # which it may drop (C71): a router's case (111) provokes it
                 "drop-mixed"}

# Faults of both kinds of node: run against the end node and the router.
BOTH_FAULTS = {"no-err", "wrong-te", "ei-nonzero"}
# Router faults also run in the chain (the second router faulty).
CHAIN_FAULTS = {"no-shift", "no-error-bit", "modify-db", "modify-header"}

# Faults that no case of the suite can provoke, with the reason.
UNCAUGHT = {
    # P30 (issue 31): trailer words without OH fields are the same bytes as a
    # DL too short, so every tool names them under EEP-6H-DL-FITS (RELATED)
    # with EEP-9-OT-NEEDS-OH only as that finding's note; the fault's own ID
    # is caught by no case any more
    "ot-without-oh": "P30: its bytes are a DL too short, named EEP-6H-DL-FITS (the trailer reading a note)",
}

# Cases no fault fails, and why (the test checks the list is exactly that).
NO_FAULT_FAILS = {
    "eep-delivered-echo": "the faults that break its rules in an echo (ot-without-oh, sa-logical, odd-length) break "
                          "them in the echo probe (008) first, which fails under them; the echo is then not "
                          "offered (C60) and this case not applicable",
    "eep-records-consumed": "an end node that kept a symbol would deliver it to its own user, which no echo "
                            "shows (the echo is the node's own message); keep-symbol is a router's fault",
    "eep-not-whole-words-dropped": "a fault that takes a datagram past its last word would break EEP-1B-8B-WORDS, "
                                   "which odd-length already names (one fault per rule)",
    "eep-chain-msb": "the second router must leave an MSbit-set TAIL unshifted, which no-shift does too; a fault "
                     "that shifts it anyway would break EEP-10-EI-SHIFT, which no-shift already names",
}

# Other IDs a fault legitimately makes a case fail with, and why.
RELATED = {
    # P30: see UNCAUGHT
    "ot-without-oh": {"EEP-6H-DL-FITS"},
    # the capture cases' ERR steps compare the TE too, under the ERR's rule
    # (the router's capture case: under the path MTU's, whose ERR it is)
    "wrong-te": {"EEP-6E-ERR-TO-SA", "EEP-1B-PATH-MTU"},
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
    "no-forward": {"EEP-5B-SYMBOLS-MIXED", "EEP-1C-LEADING-L2RH", "EEP-5-HR-CONSUMES-L2RH", "EEP-5-SYMBOL-CONSUMED", "EEP-10-EI-SHIFT",
                   "EEP-10-EI-ERROR-LSBIT", "EEP-6J-RZ-IGNORED", "EEP-1B-PATH-MTU"},
    # the copy goes back out of interface 0 by its DT
    "route-by-dt": {"EEP-5-HR-CONSUMES-L2RH", "EEP-5B-SYMBOLS-MIXED"},
    # a kept symbol before a kept L2RH: the forward check names either rule
    "keep-symbol": {"EEP-5-HR-CONSUMES-L2RH"},
    "keep-l2rh": {"EEP-5-SYMBOL-CONSUMED"},
}


class Node(peerlib.Process):
    """One pktway-node on the loopback (its UDP ports from its event lines)."""

    def __init__(self, *args, addr="0x10", prefix=(), to_file=False):
        super().__init__(list(prefix) + [NODE, "--addr", addr] + list(args), r"^event=ready", name="pktway-node",
                         stdin=True, to_file=to_file)
        self.ports = [int(m.group(1)) for m in (re.search(r"kind=udp local=[0-9.]+:(\d+)", l)
                                                 for l in self.lines if l.startswith("event=interface")) if m]


# The node contract of pktway-node (docs/conformance.md, "The node under
# test"): an OH type it does not know (P8: none is known), the L2RH that
# sends a message out of its interface 1 (P13: routing byte 0 the
# interface), and that a router counts a malformed message as a detected
# error (P14).
END_CONTRACT = ["--eep-unknown-oh", "5"]
ROUTER_CONTRACT = ["--eep-l2rh", "1=01", "--offers", "error-lsbit", "--eep-unknown-oh", "5"]
CHAIN_CONTRACT = ["--offers", "error-lsbit"]


def end_node(*extra):
    node = Node("--udp", "127.0.0.1:0", "--echo", *extra)
    return node, ["--target", "127.0.0.1:%d" % node.ports[0]] + END_CONTRACT


def router(*extra):
    t0, t1 = free_udp_port(), free_udp_port()
    node = Node("--router", "--udp", "127.0.0.1:0", "--udp", "127.0.0.1:0",
                "--peer", "1=127.0.0.1:%d@0" % t0, "--peer", "3=127.0.0.1:%d@0" % t0,
                "--peer", "2=127.0.0.1:%d@1" % t1, "--peer", "3=127.0.0.1:%d@1" % t1,
                "--peer", "hey-you=127.0.0.1:%d@1" % t1, "--mtu", "1:512", *extra)
    return node, ["--target", "127.0.0.1:%d" % node.ports[0], "--link", "0=127.0.0.1:%d" % t0,
                  "--link", "1=127.0.0.1:%d,127.0.0.1:%d" % (t1, node.ports[1]), "--eep-router"] + ROUTER_CONTRACT


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
                        "--link", "1=127.0.0.1:%d,127.0.0.1:%d" % (t1, b.ports[1]), "--eep-chain"] + CHAIN_CONTRACT


def run(args, *extra, capture=None):
    """vitcp-conform run: (exit status, JSON report, text)."""
    rc, report, _, text = peerlib.conform_run(["--protocol", "eep", "--slack", "1000"] +
                                              (["--capture", capture] if capture else ["--no-capture"]) +
                                              list(args) + list(extra), CASES, conform=CONFORM)
    return rc, report, text


CONTRACTS = {"end": END_CONTRACT, "router": ROUTER_CONTRACT, "chain": CHAIN_CONTRACT}


def eth_run(topology, node_cmds, log, capture=None, contract=None):
    """vitcp-conform run --topology: the tester makes the namespaces and
    veth pairs itself and starts the node(s) in them (C54)."""
    args = ["--topology", topology, "--node-ready", "^event=ready", "--node-log", log] + \
        (CONTRACTS.get(topology, []) if contract is None else list(contract))
    for c in node_cmds:
        args += ["--node-cmd", c]
    return run(args, capture=capture)


def tester_ends():
    """The tester-side veth ends of --topology runs that exist now."""
    out = subprocess.run(["ip", "-o", "link"], stdout=subprocess.PIPE, text=True).stdout
    return set(re.findall(r"^\d+: (vce\d+t[01])\b", out, re.M))


def left_behind(before):
    """Tester ends made since `before` whose vitcp-conform has ended (vce<PID>t<N>):
    those of a run still going are another test's (several may run on one host)."""
    def running(end):
        try:
            with open("/proc/%s/cmdline" % re.match(r"vce(\d+)t", end).group(1), "rb") as f:
                return b"vitcp-conform" in f.read()
        except OSError:
            return False
    return {e for e in tester_ends() - before if not running(e)}


END_NODE_CMD = "%s --addr 0x10 --iface {if0} --echo" % NODE
ROUTER_CMD = ("%s --addr 0x10 --router --iface {if0} --iface {if1} --peer 1={peer0}@0 --peer 3={peer0}@0 "
              "--peer 2={peer1}@1 --peer 3={peer1}@1 --peer hey-you={peer1}@1 --mtu 1:512" % NODE)
CHAIN_CMDS = ["%s --addr 0x10 --router --iface {if0} --iface {if1} --peer 1={peer0}@0 --peer 2={peer1}@1" % NODE,
              "%s --addr 0x11 --router --iface {if0} --iface {if1} --peer 1={peer0}@0 --peer 2={peer1}@1" % NODE]


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

    def eth_suite(self, topology, node_cmds, expect_pass, capture=None):
        """Run the cases over raw Ethernet in a topology vitcp-conform makes;
        skipped (by vitcp-conform, with the reason) where it cannot make
        namespaces. Returns (report, the nodes' log lines)."""
        before = tester_ends()
        with tempfile.TemporaryDirectory() as d:
            log = os.path.join(d, "node.log")
            rc, rep, text = eth_run(topology, node_cmds, log, capture=capture)
            lines = []
            for f in sorted(os.listdir(d)):
                if f.startswith("node.log"):
                    with open(os.path.join(d, f)) as fh:
                        lines += fh.read().splitlines()
        self.assertEqual(rep["summary"]["target"], "topology " + topology, text)
        if all(c["verdict"] == "skip" for c in rep["cases"]):
            self.assertEqual(rc, 0, text)
            reasons = {c["message"] for c in rep["cases"]}
            self.assertEqual(len(reasons), 1, reasons)
            self.skipTest(reasons.pop())
        # nothing left behind: the tester's veth ends are gone with the nodes
        self.assertEqual(left_behind(before), set())
        by_id = {c["id"]: c for c in rep["cases"]}
        self.assertEqual(set(by_id), EEP_CASES, text)
        for cid, c in by_id.items():
            want = "pass" if cid in expect_pass else "skip"
            self.assertEqual(c["verdict"], want, "%s: %s" % (cid, c["message"]))
        self.assertEqual(rc, 0, text)
        self.assertNotIn("Sanitizer", text)
        return rep, lines

    def test_router_over_ethernet(self):
        rep, lines = self.eth_suite("router", [ROUTER_CMD], ROUTER_CASES | ANY_NODE_CASES)
        log = "\n".join(lines)
        self.assertRegex(log, r"event=ready .*role=router.*interfaces=2")
        self.assertRegex(log, r"event=refused .*reason=EEP-1B-PATH-MTU")

    def test_chain_over_ethernet(self):
        """Two routers in a row over raw Ethernet (tester - A - B - tester):
        both forward each chain case's message once."""
        rep, lines = self.eth_suite("chain", CHAIN_CMDS, CHAIN_CASES)
        self.assertEqual(len([l for l in lines if l.startswith("event=ready")]), 2, lines)
        self.assertEqual(len([l for l in lines if l.startswith("event=forwarded")]), 2 * len(CHAIN_CASES), lines)

    def test_end_node_over_ethernet(self):
        with tempfile.TemporaryDirectory() as d:
            cap = os.path.join(d, "eth.pcapng")
            rep, lines = self.eth_suite("end", [END_NODE_CMD], END_CASES - {"eep-not-whole-words-dropped"},
                                        capture=cap)
            lint = subprocess.run([CONFORM, "lint", "--json", cap], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, timeout=60)
        full = json.loads(lint.stdout)
        # the frames are Ethernet (Ethertype 0x88B5), both sides' messages
        self.assertGreater(full["summary"]["eep_messages"], 20, lint.stdout[:500])
        errors = [i["requirement"] for i in full["issues"] if i["severity"] == "error"]
        self.assertEqual(errors, ["EEP-6H-DL-FITS"], lint.stdout[:3000])  # the tester's cut message (061)

    def test_topology_removed_on_signals(self):
        """Killed (SIGKILL, SIGTERM, SIGINT) while its two nodes run, the
        tester leaves nothing: no veth end, no node process, no log file."""
        if os.geteuid() != 0:
            self.skipTest("the topology needs root")
        for sig in (signal.SIGKILL, signal.SIGTERM, signal.SIGINT):
            with self.subTest(signal=sig), tempfile.TemporaryDirectory() as d:
                mark = "0.0%d%d" % (os.getpid(), sig)  # sleep adds its arguments: 300.0...
                p = subprocess.Popen([CONFORM, "run", "--protocol", "eep", "--cases", CASES, "--no-capture",
                                      "--topology", "chain", "--node-ready", "^never", "--node-wait", "60",
                                      "--node-cmd", "exec sleep 300 %s1" % mark,
                                      "--node-cmd", "exec sleep 300 %s2" % mark],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ, TMPDIR=d))
                ends = {"vce%dt0" % (p.pid % 10000000), "vce%dt1" % (p.pid % 10000000)}
                end = time.time() + 20
                while time.time() < end and not (ends <= tester_ends() and len(self.procs(mark)) == 2):
                    time.sleep(0.1)
                self.assertEqual(len(self.procs(mark)), 2, "both nodes run")
                self.assertLessEqual(ends, tester_ends())
                p.send_signal(sig)
                self.assertEqual(p.wait(20), -sig)
                end = time.time() + 10
                while time.time() < end and (self.procs(mark) or ends & tester_ends()):
                    time.sleep(0.1)
                self.assertEqual(self.procs(mark), [])
                self.assertEqual(ends & tester_ends(), set())
                self.assertEqual(os.listdir(d), [])

    @staticmethod
    def procs(mark):
        """The node processes (sleep 300 MARK1, MARK2) of one run."""
        found = []
        for pid in os.listdir("/proc"):
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if f.read().startswith(b"sleep\x00300\x00" + mark.encode()):
                        found.append(pid)
            except (OSError, ValueError):
                pass
        return found

    def test_topology_skips_without_namespaces(self):
        """Where no namespace can be made (here: run as nobody), every case
        is skipped with the reason, and the node is never started."""
        if os.geteuid() != 0:
            rc, rep, text = eth_run("end", ["touch /nonexistent-dir/started"], os.devnull)
        else:
            with tempfile.TemporaryDirectory() as d:
                os.chmod(d, 0o777)
                js, mark = os.path.join(d, "r.json"), os.path.join(d, "started")
                # nobody cannot read a build tree under /root (the fresh-root
                # CI's clone): run copies of the program and the cases
                conform, cases = os.path.join(d, "vitcp-conform"), os.path.join(d, "cases")
                shutil.copy(CONFORM, conform)
                shutil.copytree(CASES, cases)
                for top, dirs, files in os.walk(cases):
                    os.chmod(top, 0o755)
                    for f in files:
                        os.chmod(os.path.join(top, f), 0o644)
                p = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", conform, "run",
                                    "--protocol", "eep", "--cases", cases, "--json", js, "--no-capture",
                                    "--topology", "end", "--node-cmd", "touch " + mark],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
                rc, text = p.returncode, p.stdout + p.stderr
                self.assertTrue(os.path.exists(js), text)
                with open(js) as f:
                    rep = json.load(f)
                self.assertFalse(os.path.exists(mark))
        self.assertEqual(rc, 0, text)
        self.assertEqual({c["id"] for c in rep["cases"]}, EEP_CASES)
        for c in rep["cases"]:
            self.assertEqual(c["verdict"], "skip")
            self.assertIn("--topology end: cannot create a network namespace", c["message"])

    def test_capture_case_replays_to_another_address(self):
        """The recorded node was 0x10; replayed to a node 0x22 (--eep-address),
        the recorded messages go to it, and its answers match."""
        node = Node("--udp", "127.0.0.1:0", "--echo", addr="0x22")
        try:
            rc, rep, text = run(["--target", "127.0.0.1:%d" % node.ports[0], "--eep-address", "0x22",
                                 "--only", "eep-capture-exchange"] + END_CONTRACT)
        finally:
            node.stop()
        self.assertEqual([(c["id"], c["verdict"]) for c in rep["cases"]], [("eep-capture-exchange", "pass")], text)
        self.assertRegex("\n".join(node.lines), r"event=dropped .*reason=EEP-6A-VERSION")
        # the four answers of the recording, and the echo, the Hey-You!
        # answer and the ERR of the probes the capture case needs (C70, P38)
        self.assertEqual(len([l for l in node.lines if l.startswith("event=sent")]), 7, "\n".join(node.lines))

    def test_chain_passes_every_chain_case(self):
        node = self.check_clean_run(chain, CHAIN_CASES, END_CASES | ROUTER_CASES)
        self.assertEqual(len([l for l in node.lines if l.startswith("event=forwarded")]), 2 * len(CHAIN_CASES))

    def test_router_passes_every_router_case(self):
        node = self.check_clean_run(router, ROUTER_CASES | ANY_NODE_CASES, (END_CASES - ANY_NODE_CASES) | CHAIN_CASES)
        log = "\n".join(node.lines)
        self.assertRegex(log, r"event=refused .*reason=EEP-1B-PATH-MTU")
        self.assertRegex(log, r"event=forwarded .*records=1 consumed=1")

    def test_each_fault_fails_a_case_under_its_id(self):
        faults = peerlib.list_faults(NODE, strict=False)

        def one(job):
            fault, start = job
            node, args = start("--fault", fault)
            try:
                # pktway-node reports errors (P15): declared, so that a
                # missing ERR fails instead of making the ERR cases not
                # applicable (P38)
                rc, rep, text = run(args + ["--offers", "err-report"])
                return rc, rep, None, text
            finally:
                node.stop()

        jobs = [(f, router if f in ROUTER_FAULTS else end_node) for f in faults] + \
            [(f, router) for f in BOTH_FAULTS] + [(f, chain) for f in CHAIN_FAULTS]
        results = peerlib.fault_runs(jobs, one, 2)
        # an advisory verdict (C35: a case whose first rule is a project
        # decision, e.g. an unsubscribed logical address) is how such a case
        # says the fault broke its rule: counted as caught
        for runs in results.values():
            for r in runs:
                for c in (r[1] or {}).get("cases", []):
                    if c["verdict"] == "advisory":
                        c["verdict"] = "fail"
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

    def test_catalog_active_entries_name_their_cases(self):
        reqs = peerlib.list_requirements("EEP", CASES, conform=CONFORM)
        self.assertGreaterEqual(len(reqs), 58)
        # every case (scripts and capture cases' metadata) and the IDs it names
        case_reqs = {}
        for f in os.listdir(os.path.join(CASES, "eep")):
            if f.endswith((".case", ".meta")):
                with open(os.path.join(CASES, "eep", f)) as fh:
                    text = fh.read()
                cid = re.search(r"^case\s+(\S+)", text, re.M).group(1)
                case_reqs[cid] = set(re.findall(r"EEP-[A-Z0-9-]*[A-Z0-9]", text))
        self.assertEqual(set(case_reqs), EEP_CASES)
        for r in reqs:
            if "active" in r["checks"]:
                self.assertTrue(r["status"].startswith("active ("), "%s: %s" % (r["id"], r["status"]))
        peerlib.check_catalog_claims(self, reqs, case_reqs, active=lambda r: "active" in r["checks"])
        self.assertFalse([r["id"] for r in reqs if r["status"] == "NOT COVERED"])


# pktway-node's event line for a delivered message, its delivery log (P40)
DELIVERY_LOG = ["--eep-delivery-log", r"^event=delivered .* data_len=([0-9]+) "]


def logged_node(*extra):
    """An end node without --echo, its output in a file read as its delivery log."""
    node = Node("--udp", "127.0.0.1:0", *extra, to_file=True)
    return node, ["--target", "127.0.0.1:%d" % node.ports[0]] + END_CONTRACT + DELIVERY_LOG + \
        ["--eep-node-log", node.log.name]


def own_cases(cases, args):
    """vitcp-conform run with the test's own EEP cases: (rc, report, text)."""
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "eep"))
        for name, text in cases.items():
            with open(os.path.join(d, "eep", name), "w") as f:
                f.write(text)
        rc, rep, _, text = peerlib.conform_run(["--protocol", "eep", "--slack", "800", "--no-capture"] + args, d,
                                               conform=CONFORM)
    return rc, rep, text


class DeliveryLog(unittest.TestCase):
    """Delivery seen in the node's own output (P40, C90): the receiving
    faults are caught through it as through the echo, and the steps judge
    what the line says."""

    @classmethod
    def setUpClass(cls):
        peerlib.require_paths(PKTWAY_NODE=NODE, VITCP_CONFORM=CONFORM, VITCP_CASES=CASES)

    def test_receiving_faults_fail_through_the_log(self):
        faults = {"accept-version": ("eep-version-dropped", "EEP-6A-VERSION"),
                  "accept-reserved": ("eep-reserved-dt-dropped", "EEP-6C-DT-KIND"),
                  "accept-logical": ("eep-logical-not-subscribed", "EEP-6C-LOGICAL"),
                  "accept-mandatory": ("eep-mandatory-oh-not-delivered", "EEP-7-MANDATORY-UNKNOWN"),
                  "drop-optional": ("eep-optional-oh-delivered", "EEP-7-OPTIONAL-MAY-DROP"),
                  "drop-rz": ("eep-rz-ignored", "EEP-6J-RZ-IGNORED")}

        def one(fault):
            node, args = logged_node("--fault", fault)
            try:
                return run(args + ["--only", faults[fault][0]])
            finally:
                node.stop()
        results = peerlib.parallel(one, list(faults), 3)
        for fault, (rc, rep, text) in zip(faults, results):
            with self.subTest(fault=fault):
                cid, rule = faults[fault]
                c = [c for c in rep["cases"] if c["id"] == cid][0]
                self.assertIn(c["verdict"], ("fail", "timeout", "advisory"), c["message"])
                self.assertEqual(c["failed_requirement"], rule, c["message"])

    def test_steps_judge_the_line(self):
        cases = {
            "a.case": "protocol eep\ncase log-delivered\nrequire EEP-4B-BIG-ENDIAN\nconnect\n"
                      "send RRP dt=node payload=21\nexpect-log\n",
            "b.case": "protocol eep\ncase log-dropped\nrequire EEP-6A-VERSION\nconnect\n"
                      "send RRP dt=node v=1 payload=8\nexpect-no-log 500\n",
            "c.case": "protocol eep\ncase log-not-dropped\nrequire EEP-6A-VERSION\nconnect\n"
                      "send RRP dt=node payload=8\nexpect-no-log 500\n",
            "d.case": "protocol eep\ncase echo-unsized\nrequire EEP-4B-BIG-ENDIAN\nconnect\n"
                      "send RRP dt=node payload=8\nexpect RRP data=echo\n",
        }
        node, args = logged_node()
        try:
            rc, rep, text = own_cases(cases, args)
            # a pattern whose number is not the data length
            rc2, rep2, text2 = own_cases({"a.case": cases["a.case"]},
                                         args[:-4] + ["--eep-delivery-log", r"^event=delivered .* dl=([0-9]+) ",
                                                      "--eep-node-log", node.log.name])
        finally:
            node.stop()
        got = {c["id"]: c for c in rep["cases"]}
        self.assertEqual(got["log-delivered"]["verdict"], "pass", text)
        self.assertEqual(got["log-dropped"]["verdict"], "pass", text)
        self.assertEqual(got["log-not-dropped"]["verdict"], "fail", text)
        self.assertIn("where none was expected", got["log-not-dropped"]["message"])
        # P39: data=echo without payload=N is refused, not run
        self.assertEqual(got["echo-unsized"]["verdict"], "skip", text)
        self.assertIn("data=echo without payload=N", got["echo-unsized"]["message"])
        c = rep2["cases"][0]
        self.assertEqual(c["verdict"], "fail", text2)
        self.assertIn("says 3 data bytes, the tester's last message had 21", c["message"])

    def test_without_pattern_or_output_not_applicable(self):
        case = {"a.case": "protocol eep\ncase log-delivered\nrequire EEP-4B-BIG-ENDIAN\nconnect\n"
                          "send RRP dt=node payload=8\nexpect-log\n"}
        node = Node("--udp", "127.0.0.1:0")
        try:
            target = ["--target", "127.0.0.1:%d" % node.ports[0]]
            _, rep1, t1 = own_cases(case, target)
            _, rep2, t2 = own_cases(case, target + DELIVERY_LOG)
        finally:
            node.stop()
        self.assertEqual(rep1["cases"][0]["verdict"], "not-applicable", t1)
        self.assertIn("pattern", rep1["cases"][0]["message"])
        self.assertEqual(rep2["cases"][0]["verdict"], "not-applicable", t2)
        self.assertIn("the node's output", rep2["cases"][0]["message"])

    def test_bad_options_and_steps_are_refused(self):
        for args, words in ((["--eep-delivery-log", "("], "bad --eep-delivery-log"),
                            (["--eep-node-log", "/nonexistent/x.log"], "--eep-node-log")):
            p = subprocess.run([CONFORM, "run", "--protocol", "eep", "--target", "127.0.0.1:9", "--cases", CASES]
                               + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, p.stderr)
            self.assertIn(words, p.stderr)
        for step in ("expect-log x", "expect-no-log 5 6"):
            with tempfile.TemporaryDirectory() as d:
                os.mkdir(os.path.join(d, "eep"))
                with open(os.path.join(d, "eep", "x.case"), "w") as f:
                    f.write("protocol eep\ncase x\nrequire EEP-6A-VERSION\nconnect\n%s\n" % step)
                p = subprocess.run([CONFORM, "list", "--cases", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, timeout=30)
            self.assertEqual(p.returncode, 2, step)
            self.assertIn("takes at most a time in ms", p.stderr)


if __name__ == "__main__":
    unittest.main()
