"""pktway_node_choices: the EEP suite judges the draft, not pktway-node.

pktway-node's allowed-choice switches (`--choice`, docs/pktway-node.md
"Choices"; decisions P19) make choices the EEP draft leaves to a node: no
answer to a Hey-You!, dropping an L2RH left at the destination, another
L2RH format, known OH types, a shorter ERR quote, no error detection as a
router, Ethernet padding; and without `--echo` the node does not echo. The
whole EEP suite runs against each choice alone and in combinations, in every
topology (end node, router, two routers in a row) and on both links (UDP on
the loopback; raw Ethernet in the network `run --topology` makes, as root),
each run told the node contract the choices need (docs/conformance.md, "The
node under test": `--eep-l2rh`, `--eep-unknown-oh`, `--offers`). In every
run:

- every case passes, is skipped because it is another topology's (or a UDP
  case on Ethernet), or is not applicable with a reason; never fails, times
  out or gets an advisory verdict;
- the not-applicable cases are exactly the ones the choice (or the missing
  piece of contract) makes so (the sets below), so a switch that did
  nothing, or a case that hides behind 'not applicable', fails the test;
- vitcp-conform exits 0.

Runs are independent and run in parallel (EEP_CHOICE_JOBS, default 4).
"""
import os
import tempfile
import time
import unittest

import peerlib
import test_pktway_node_suite as suite

JOBS = int(os.environ.get("EEP_CHOICE_JOBS", "4"))

# The cases a missing convention or piece of contract makes not applicable.
ECHO = {"eep-probe-echo", "eep-delivered-echo", "eep-records-consumed", "eep-version-dropped", "eep-reserved-dt-dropped",
        "eep-logical-not-subscribed", "eep-mandatory-oh-not-delivered", "eep-optional-oh-delivered",
        "eep-rz-ignored", "eep-padding-unchecked", "eep-capture-exchange"}
# With a delivery log instead of the echo (P40): only what needs the echo's
# bytes (its probe, the capture case comparing them)
ECHO_ONLY = {"eep-probe-echo", "eep-capture-exchange"}
# pktway-node's event line for a delivered message is its delivery log; the
# subexpression is the delivered data length
DELIVERY_LOG = ["--eep-delivery-log", r"^event=delivered .* data_len=([0-9]+) "]
HEY_YOU = {"eep-probe-hey-you", "eep-hey-you-answered", "eep-answer-no-data", "eep-capture-exchange"}
UNKNOWN_OH = {"eep-probe-err", "eep-mandatory-oh-err", "eep-mandatory-oh-not-delivered", "eep-sa-zero-no-err",
              "eep-capture-exchange"}
L2RH = {"eep-router-leading-l2rh", "eep-router-symbols-mixed"}
LSBIT_ROUTER = {"eep-router-error-lsbit"}
# No ERR seen by the probe (P38): the node sends none, or the run names no
# OH type the node does not know, which the probe needs
ERR_END = {"eep-probe-err", "eep-mandatory-oh-err"}
ERR_ROUTER = {"eep-probe-err", "eep-router-unreachable"}
LSBIT_CHAIN = {"eep-chain-lsbit"}

# Skips that are not verdicts: another topology's case, a UDP case on Ethernet.
SKIP_REASONS = ("a router case", "an end-node case", "two routers in a row", "a UDP case")

# (topology, pktway-node options, the run's node contract, not applicable).
# The default contract of each topology is suite.END_CONTRACT etc.
MATRIX = [
    ("end", ["--echo"], suite.END_CONTRACT, set()),
    ("end", [], suite.END_CONTRACT, ECHO),                                             # no echo (P16 is a convention)
    ("end", ["--echo", "--choice", "no-hey-you-answer"], suite.END_CONTRACT, HEY_YOU),  # 683-689
    ("end", ["--echo", "--choice", "drop-leftover-l2rh"], suite.END_CONTRACT, set()),   # 412-413, 449-451
    ("end", ["--echo", "--choice", "known-oh=5:9"], ["--eep-unknown-oh", "6"], set()),  # 805, 814
    ("end", ["--echo"], [], UNKNOWN_OH),                                                # no unknown type declared
    ("end", ["--echo", "--choice", "err-quote=0"], suite.END_CONTRACT, set()),          # 729-731
    ("end", ["--choice", "no-hey-you-answer"], suite.END_CONTRACT, ECHO | HEY_YOU),    # nothing to observe
    ("end", ["--echo", "--choice", "no-err-report"], suite.END_CONTRACT, ERR_END),     # 729-731, 785-786
    # no echo, delivery seen in the node's output (a file it writes, P40)
    ("end", [], suite.END_CONTRACT + DELIVERY_LOG + ["--eep-node-log", "{node-log}"], ECHO_ONLY),
    ("end", ["--choice", "no-hey-you-answer,no-err-report,drop-leftover-l2rh"],
     suite.END_CONTRACT + DELIVERY_LOG + ["--eep-node-log", "{node-log}"], ECHO_ONLY | HEY_YOU | ERR_END),
    ("end", ["--choice", "no-hey-you-answer,no-err-report"], suite.END_CONTRACT, ECHO | HEY_YOU | ERR_END),
    ("end", ["--echo", "--choice", "no-hey-you-answer,known-oh=5,drop-leftover-l2rh,err-quote=8"],
     ["--eep-unknown-oh", "7"], HEY_YOU),
    ("router", [], suite.ROUTER_CONTRACT, set()),
    ("router", ["--choice", "no-detect"], ["--eep-l2rh", "1=01"], LSBIT_ROUTER | ERR_ROUTER),  # 160-161, 880-883
    ("router", ["--choice", "l2rh-if-byte=2"], ["--eep-l2rh", "1=000001", "--offers", "error-lsbit",
                                               "--eep-unknown-oh", "5"], set()),
    ("router", [], ["--offers", "error-lsbit"], L2RH | ERR_ROUTER),                      # no L2RH in the contract
    ("router", ["--choice", "no-err-report"], suite.ROUTER_CONTRACT, ERR_ROUTER),         # 729-731, 785-786
    ("router", ["--choice", "no-hey-you-answer,err-quote=0,drop-leftover-l2rh,known-oh=5"],
     ["--eep-l2rh", "1=01", "--offers", "error-lsbit", "--eep-unknown-oh", "6"], set()),
    ("router", ["--choice", "l2rh-if-byte=3,no-detect,no-hey-you-answer,err-quote=16"],
     ["--eep-l2rh", "1=00000001"], LSBIT_ROUTER | ERR_ROUTER),
    ("chain", [], suite.CHAIN_CONTRACT, set()),
    ("chain", ["--choice", "no-detect"], [], LSBIT_CHAIN),
]

# Over raw Ethernet (run --topology, root): each topology with Ethernet
# padding (137-138, 193) and a few choices together.
ETH_MATRIX = [
    ("end", ["--echo", "--choice", "eth-pad"], suite.END_CONTRACT, set()),
    ("end", ["--choice", "eth-pad,no-hey-you-answer,known-oh=5,no-err-report"], ["--eep-unknown-oh", "6"],
     ECHO | HEY_YOU | ERR_END),
    # the output of the node the tester started (--node-log) as its delivery log (P40)
    ("end", ["--choice", "eth-pad,no-hey-you-answer"], suite.END_CONTRACT + DELIVERY_LOG, ECHO_ONLY | HEY_YOU),
    ("router", ["--choice", "eth-pad,l2rh-if-byte=2,no-hey-you-answer"],
     ["--eep-l2rh", "1=000001", "--offers", "error-lsbit"], ERR_ROUTER),
    ("router", ["--choice", "eth-pad,no-detect,no-err-report"], ["--eep-l2rh", "1=01", "--eep-unknown-oh", "5"],
     LSBIT_ROUTER | ERR_ROUTER),
    ("chain", ["--choice", "eth-pad"], suite.CHAIN_CONTRACT, set()),
]

# The routes of each topology's nodes over Ethernet (as the suite's commands).
ETH_ROUTES = {
    "end": ["--addr 0x10 --iface {if0}"],
    "router": ["--addr 0x10 --router --iface {if0} --iface {if1} --peer 1={peer0}@0 --peer 3={peer0}@0 "
               "--peer 2={peer1}@1 --peer 3={peer1}@1 --peer hey-you={peer1}@1 --mtu 1:512"],
    "chain": ["--addr 0x10 --router --iface {if0} --iface {if1} --peer 1={peer0}@0 --peer 2={peer1}@1",
              "--addr 0x11 --router --iface {if0} --iface {if1} --peer 1={peer0}@0 --peer 2={peer1}@1"],
}
START = {"end": suite.end_node, "router": suite.router, "chain": suite.chain}
DEFAULT_CONTRACT = {"end": suite.END_CONTRACT, "router": suite.ROUTER_CONTRACT, "chain": suite.CHAIN_CONTRACT}


def end_node(*extra, to_file=False):
    """An end node with exactly these options (suite.end_node adds --echo);
    to_file: its output into a file (its delivery log, P40)."""
    node = suite.Node("--udp", "127.0.0.1:0", *extra, to_file=to_file)
    return node, ["--target", "127.0.0.1:%d" % node.ports[0]] + suite.END_CONTRACT


START["end"] = end_node


def udp_run(job):
    topology, node_args, contract, _ = job
    logged = "{node-log}" in contract
    node, args = START[topology](*node_args, to_file=True) if logged else START[topology](*node_args)
    try:
        # the start functions append the topology's default contract: this run's instead
        args = args[:len(args) - len(DEFAULT_CONTRACT[topology])] + \
            [node.log.name if a == "{node-log}" else a for a in contract]
        rc, rep, text = suite.run(args)
    finally:
        node.stop()
    return rc, rep, text


def eth_run(job):
    topology, node_args, contract, _ = job
    cmds = ["%s %s %s" % (suite.NODE, routes, " ".join(node_args)) for routes in ETH_ROUTES[topology]]
    with tempfile.TemporaryDirectory() as d:
        return suite.eth_run(topology, cmds, os.path.join(d, "node.log"), contract=contract)


def describe(cases):
    return "\n".join("  %s %s: %s" % (c["id"], c["verdict"], c["message"][:300]) for c in cases)


class PktwayNodeChoices(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        peerlib.require_paths(PKTWAY_NODE=suite.NODE, VITCP_CONFORM=suite.CONFORM, VITCP_CASES=suite.CASES)

    def test_bad_choices_are_refused(self):
        import subprocess
        peerlib.check_bad_choices_refused(self, suite.NODE, ["--addr", "5"], (
            "no-such-choice", "l2rh-if-byte", "l2rh-if-byte=8", "known-oh=64", "known-oh=", "err-quote=65",
            "no-detect=1", ""))
        listed = subprocess.run([suite.NODE, "--list-choices"], stdout=subprocess.PIPE, text=True,
                                check=True).stdout
        for _, node_args, _, _ in MATRIX + ETH_MATRIX:
            if "--choice" in node_args:
                for c in node_args[node_args.index("--choice") + 1].split(","):
                    self.assertIn(c.split("=")[0], listed)
        # every choice names the draft lines that allow it
        for line in listed.splitlines():
            self.assertRegex(line, r"^\S+ lines [0-9,-]+: ")

    def check(self, name, job, result, problems):
        topology, _, _, expected = job
        rc, report, text = result
        if report is None:
            problems.append("%s: no JSON report (exit %d):\n%s" % (name, rc, text[-2000:]))
            return None
        bad = [c for c in report["cases"] if c["verdict"] not in ("pass", "not-applicable", "skip")]
        if bad:
            problems.append("%s: cases that neither pass nor are not applicable:\n%s" % (name, describe(bad)))
        skipped = [c for c in report["cases"] if c["verdict"] == "skip"
                   and not any(r in c["message"] for r in SKIP_REASONS)]
        if skipped:
            problems.append("%s: skipped cases:\n%s" % (name, describe(skipped)))
        na = {c["id"] for c in report["cases"] if c["verdict"] == "not-applicable"}
        silent = [c["id"] for c in report["cases"] if c["verdict"] == "not-applicable" and not c["message"]]
        if silent:
            problems.append("%s: not applicable without a reason: %s" % (name, silent))
        if na != expected:
            problems.append("%s: not applicable %s, expected %s (extra %s, missing %s)" % (
                name, sorted(na), sorted(expected), sorted(na - expected), sorted(expected - na)))
        if rc != 0:
            problems.append("%s: vitcp-conform exit %d" % (name, rc))
        passed = sum(1 for c in report["cases"] if c["verdict"] == "pass")
        print("%-100s %2d pass, %2d not applicable" % (name, passed, len(na)))
        return report

    def test_every_allowed_choice_gets_a_clean_report(self):
        t0 = time.monotonic()
        jobs = [("udp", j) for j in MATRIX] + [("eth", j) for j in ETH_MATRIX]
        results = peerlib.parallel(lambda j: (udp_run if j[0] == "udp" else eth_run)(j[1]), jobs, JOBS)
        problems = []
        for (link, job), result in zip(jobs, results):
            name = "%s %s: pktway-node %s; run %s" % (link, job[0], " ".join(job[1]) or "(defaults)",
                                                      " ".join(job[2]) or "(no contract)")
            report = result[1]
            if link == "eth" and report and all(c["verdict"] == "skip" for c in report["cases"]):
                print("%s: not checked: %s" % (name, report["cases"][0]["message"]))
                continue
            self.check(name, job, result, problems)
        print("matrix of %d runs: %.1f s" % (len(jobs), time.monotonic() - t0))
        self.assertEqual(problems, [], "\n".join(problems))


if __name__ == "__main__":
    unittest.main()
