"""conform_hooks: test conventions (C60) in the core, through the EEP
module's vocabulary and the tiny UDP responder of test_conform_datagram
(it answers each message back to its sender, or, muted, nothing).

An echo is no rule of a draft: a case that needs one ('needs echo') is
not applicable against a target that offers none, with the reason; the
probe case ('provides echo') finds out and runs before the first case
that needs it, also when the run did not select it; `run --offers`
declares a convention, and a declared one that the target then does not
keep fails the run; 'when [!]HOOK' steps run for one kind of target only.

Environment: VITCP_CONFORM (program).
"""
import os
import subprocess
import tempfile
import unittest

from test_conform_datagram import CONFORM, Responder, run

CASES = {
    "p-probe.case": """protocol eep
case hk-probe
provides echo
require EEP-4B-BIG-ENDIAN
connect
send RRP dt=node payload=12
expect RRP payload=12 data=echo
""",
    "q-needs.case": """protocol eep
case hk-needs
needs echo
require EEP-6J-RZ-IGNORED
connect
send RRP dt=node rz=0x12 payload=20 fill=3
expect RRP payload=20 data=echo
""",
    "r-when.case": """protocol eep
case hk-when
require EEP-6J-RZ-IGNORED
connect
send RRP dt=node payload=8
when echo expect RRP payload=8 data=echo
when !echo expect-nothing 300
""",
    "s-alt.case": """protocol eep
case hk-alt
needs hey-you-answer|echo
require EEP-6J-RZ-IGNORED
connect
send RRP dt=node payload=4
expect RRP payload=4 data=echo
""",
}


M64 = (1 << 64) - 1


def first_send_lost(profile_seed, case_id, loss_ppm):
    """Does the impairment (core/impair.c, runner.c) lose the tester's first datagram of the case?"""
    h = 0xcbf29ce484222325
    for b in case_id.encode():
        h = ((h ^ b) * 0x100000001b3) & M64
    seed = (h ^ ((profile_seed * 0x9E3779B97F4A7C15) & M64)) or 1
    state = ((seed ^ 0x7465737465720000) + 0x9E3779B97F4A7C15) & M64  # the tester's stream, one step on
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return (z ^ (z >> 31)) % 1000000 < loss_ppm


def verdicts(rep):
    return {c["id"]: c for c in rep["cases"]}


class Hooks(unittest.TestCase):
    def run_against(self, mute, cases=CASES, *extra):
        r = Responder(mute=mute)
        try:
            return run(r.port, cases, *extra)
        finally:
            r.close()

    def test_probe_finds_an_echo_and_the_cases_run(self):
        rc, rep, text, _ = self.run_against(False)
        got = verdicts(rep)
        for cid in ("hk-probe", "hk-needs", "hk-when", "hk-alt"):
            self.assertEqual(got[cid]["verdict"], "pass", (cid, got[cid]["message"]))
        self.assertEqual(rc, 0, text)
        hooks = rep["summary"]["hooks"]
        self.assertTrue(hooks["echo"]["offered"], hooks)
        self.assertIn("probe hk-probe passed", hooks["echo"]["how"])
        # hey-you-answer has no probe here: not offered, and the case took its alternative
        self.assertFalse(hooks["hey-you-answer"]["offered"], hooks)
        self.assertIn("no probe case", hooks["hey-you-answer"]["how"])
        self.assertIn("Test convention echo: offered", text)

    def test_no_echo_is_not_a_failure(self):
        rc, rep, text, _ = self.run_against(True)
        got = verdicts(rep)
        self.assertEqual(got["hk-probe"]["verdict"], "not-applicable", got["hk-probe"]["message"])
        self.assertIn("does not offer echo", got["hk-probe"]["message"])
        self.assertIsNone(got["hk-probe"]["failed_requirement"])
        for cid in ("hk-needs", "hk-alt"):
            self.assertEqual(got[cid]["verdict"], "not-applicable", (cid, got[cid]["message"]))
            self.assertIn("needs the target's", got[cid]["message"])
            self.assertIn("not a rule of the draft", got[cid]["message"])
        self.assertIn("hey-you-answer or echo", got["hk-alt"]["message"])
        # the when steps: a target without echo is checked for silence instead
        self.assertEqual(got["hk-when"]["verdict"], "pass", got["hk-when"]["message"])
        self.assertFalse(rep["summary"]["hooks"]["echo"]["offered"])
        self.assertEqual(rc, 0, text)
        # the probe ran first, before the case that needed it
        ids = [c["id"] for c in rep["cases"]]
        self.assertLess(ids.index("hk-probe"), ids.index("hk-needs"))

    def test_declared_echo_that_never_comes_fails(self):
        rc, rep, text, _ = self.run_against(True, CASES, "--offers", "echo")
        got = verdicts(rep)
        self.assertEqual(got["hk-probe"]["verdict"], "timeout", got["hk-probe"]["message"])
        self.assertEqual(got["hk-needs"]["verdict"], "timeout", got["hk-needs"]["message"])
        self.assertEqual(got["hk-when"]["verdict"], "timeout", got["hk-when"]["message"])
        self.assertNotEqual(rc, 0, text)
        self.assertIn("declared offered", rep["summary"]["hooks"]["echo"]["how"])

    def test_declared_not_offered_runs_nothing_of_it(self):
        cases = {k: CASES[k] for k in ("p-probe.case", "q-needs.case")}
        rc, rep, text, _ = self.run_against(False, cases, "--offers", "-echo")
        got = verdicts(rep)
        for cid in ("hk-probe", "hk-needs"):
            self.assertEqual(got[cid]["verdict"], "not-applicable", (cid, got[cid]["message"]))
        self.assertIn("declared", got["hk-needs"]["message"])
        self.assertEqual(rc, 0, text)
        rc, rep, text, _ = self.run_against(False, cases, "--offers", "none")
        self.assertEqual({c["verdict"] for c in rep["cases"]}, {"not-applicable"}, text)

    def test_probe_runs_when_not_selected(self):
        rc, rep, text, _ = self.run_against(False, CASES, "--only", "hk-needs")
        self.assertEqual([c["id"] for c in rep["cases"]], ["hk-needs"], text)
        self.assertEqual(rep["cases"][0]["verdict"], "pass", text)
        self.assertTrue(rep["summary"]["hooks"]["echo"]["offered"])
        rc, rep, text, _ = self.run_against(True, CASES, "--only", "hk-needs")
        self.assertEqual(rep["cases"][0]["verdict"], "not-applicable", text)
        self.assertIn("probe hk-probe", rep["cases"][0]["message"])

    def test_a_probe_the_impairment_spoilt_leaves_its_cases_inconclusive(self):
        """run --impair (C61) on a datagram link: a probe whose datagram was lost does not say the target
        offers nothing; it and the cases that need its convention are inconclusive."""
        seed = next(s for s in range(1, 200) if first_send_lost(s, "hk-probe", 500000))
        cases = {k: CASES[k] for k in ("p-probe.case", "q-needs.case")}
        rc, rep, text, _ = self.run_against(False, cases, "--impair", "loss=50%%,seed=%d" % seed)
        got = verdicts(rep)
        self.assertEqual(got["hk-probe"]["verdict"], "inconclusive", got["hk-probe"]["message"])
        self.assertEqual(got["hk-needs"]["verdict"], "inconclusive", got["hk-needs"]["message"])
        self.assertIn("needs the target's echo", got["hk-needs"]["message"])
        self.assertEqual(rc, 0, text)

    def test_bad_offers_and_bad_cases_are_refused(self):
        for bad, words in (("nosuch", "no test convention of PacketWay EEP"), ("", "bad --offers"),
                           ("echo,,-", "bad --offers word")):
            p = subprocess.run([CONFORM, "run", "--protocol", "eep", "--target", "127.0.0.1:5998", "--offers", bad],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, (bad, p.stderr))
            self.assertIn(words, p.stderr, bad)
        head = "protocol eep\ncase x\nrequire EEP-6A-VERSION\n"
        for text, words in ((head + "needs nosuch\nconnect\n", "'nosuch' is no test convention of PacketWay EEP"),
                            (head + "needs region|echo\nconnect\n", "'region' has no alternatives"),
                            (head + "needs a|b|c|d\nconnect\n", "bad 'needs' word"),
                            (head + "provides echo\nprovides hey-you-answer\nconnect\n", "one test convention"),
                            (head + "connect\nwhen echo connect\n", "other than connect and accept"),
                            (head + "connect\nwhen nosuch expect RRP\n", "'nosuch' is no test convention"),
                            ("case x\nrequire VITCP-3.2-VERSION\nneeds echo\nconnect\n",
                             "no test convention of VI/TCP (it has none)")):
            with tempfile.TemporaryDirectory() as d:
                sub = os.path.join(d, "eep") if "protocol eep" in text else d
                os.makedirs(sub, exist_ok=True)
                with open(os.path.join(sub, "x.case"), "w") as f:
                    f.write(text)
                p = subprocess.run([CONFORM, "list", "--cases", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, timeout=30)
            self.assertEqual(p.returncode, 2, (text, p.stdout[-300:]))
            self.assertIn(words, p.stderr, text)
            self.assertNotIn("Sanitizer", p.stderr)


if __name__ == "__main__":
    unittest.main()
