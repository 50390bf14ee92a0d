"""warp_peer_suite: the WARP cases (conformance/cases/warp/, protocol warp)
through `vitcp-conform run --protocol warp` against warp-peer, on the engine's
generic step runner.

1. `warp-peer --zero-based` (echo mode; C42: the suite writes into RID 1 of
   a zero-based region, its default) passes every echo case, so does
   `warp-peer` in its default address-based mode and with another RID when
   its `event=region` line is given as `run --region` (C50), and a region
   under 64 KiB skips the echo cases with the reason; `warp-peer --iscsi`
   every iSCSI case (`run --protocol warp --iscsi`); each run skips the
   other kind; the reports name the protocol and no VI/TCP case runs.
2. Every fault of `warp-peer --list-faults` (the iscsi ones against an
   iSCSI-mode target) fails at least one case under the fault's own
   requirement ID, and no case fails for another ID except those listed in
   RELATED; a fault no case can provoke is in UNCAUGHT with the reason, and
   one that a case does catch fails the test; the echo faults run against
   the address-based region given by --region (C50). Every case is failed by some
   fault or listed in NO_FAULT_FAILS with the reason.
3. The catalog's claims: every WARP entry whose check kind is active is
   named by a case, and every case a warp.def entry names ("vitcp-conform
   case(s) ...", read from `vitcp-conform list --json`) exists and names
   that entry's ID; no WARP entry is NOT COVERED.
4. `--protocol` with an unknown name is a usage error; the VI/TCP cases do
   not run under --protocol warp and the WARP cases not without it.

Environment: WARP_PEER, VITCP_CONFORM (programs), VITCP_CASES (case folder).
"""
import os
import re
import subprocess
import tempfile
import unittest

import peerlib

PEER = os.environ.get("WARP_PEER", "")
CONFORM = os.environ.get("VITCP_CONFORM", "")
CASES = os.environ.get("VITCP_CASES", "")

# The probes of the test conventions (C60): echo, rdma-echo, readback. A
# warp-peer in echo mode offers echo and rdma-echo (W6): the readback probe
# is not applicable, with the reason.
PROBE_CASES = {"warp-probe-echo", "warp-probe-rdma-echo", "warp-probe-readback"}
NOT_OFFERED = {"warp-probe-readback"}
ECHO_CASES = PROBE_CASES | {
    "warp-send-echo", "warp-multi-chunk-send", "warp-bad-adler-not-placed", "warp-rdma-write-echo",
    "warp-rdma-multi-chunk", "warp-mix-rdma-send", "warp-split-every-byte", "warp-coalesced",
    "warp-reserved-ignored", "warp-txerr-discarded", "warp-chunk-len-short", "warp-c-without-l",
    "warp-ssn-skip", "warp-send-offset-gap", "warp-retransmit", "warp-no-last", "warp-rdma-gap",
    "warp-rid-unknown", "warp-out-of-region",
}
# Through the packet relay (C46, C51): root and a target listening on all
# addresses; the fault runs and the other-RID run leave them out (--no-relay).
RELAY_CASES = {"warp-relay-split", "warp-relay-coalesced"}
ECHO_CASES |= RELAY_CASES
# Listen mode (role passive, C64): warp-peer --connect is the initiator under
# test, started per case by --connect-cmd with this traffic and the region
# the tester lends it (run --region).
PASSIVE_CASES = {"warp-initiator-sends"}
INITIATOR_TRAFFIC = ["--send", "3000", "--rdma", "5000", "--send", "10", "--frag", "1000"]
ECHO_CASES |= PASSIVE_CASES
ROOT = os.geteuid() == 0
ISCSI_CASES = {"warp-iscsi-read", "warp-iscsi-write", "warp-iscsi-immediate-by-rdma",
               "warp-iscsi-data-out-wrong-ttt"}
# Listen mode in iSCSI (C64): warp-peer --connect --iscsi is the initiator under test.
ISCSI_PASSIVE_CASES = {"warp-initiator-iscsi-write"}
ISCSI_INITIATOR_TASKS = ["--write", "2048"]
ISCSI_CASES |= ISCSI_PASSIVE_CASES
WARP_CASES = ECHO_CASES | ISCSI_CASES

# Faults that no case of the suite can provoke, with the reason.
UNCAUGHT = {
    # (iscsi-write-ttt, the initiator's fault, is caught by the listen-mode
    # case warp-initiator-iscsi-write since issue 28, C64.)
    # (rid-unknown and out-of-region: an RDMA Write echo's RID and offset are a
    # test convention (W6), not a rule, since issue 28; the listen-mode case
    # warp-initiator-sends catches both, where the tester lends the region.)
    # W8's decision that the Data-In header's Send carries C: a warning of
    # vw_warp_iscsi_check (lint, plugin), no longer a failure (C63)
    "iscsi-header-no-c": "W8 is the project's decision: a warning, not a failure of the draft's rules",
    # Dropping what cannot be placed and keeping the connection is what the
    # allowed choice no-close does (line 218 defines no reaction; W10's close
    # is the project's decision, C62): nothing is placed, nothing to catch.
    "keep-unframed": "dropping the rest of an unframeable stream is allowed (choice no-close, C62)",
    "keep-rid-unknown": "dropping a Write to an unknown RID is allowed (choice no-close, C62)",
    "keep-out-of-region": "dropping a Write outside the region is allowed (choice no-close, C62)",
    # warp-peer's iSCSI target ignores an unsolicited Data-Out (it takes no
    # immediate data), so taking one shows nothing on the wire
    "keep-iscsi-immediate": "warp-peer ignores unsolicited Data-Out: taking one is not visible",
}

# Cases no fault fails, and why (the test checks the list is exactly that).
NO_FAULT_FAILS = {
    # Since the probes (C60), a fault that breaks a rule in the echo fails the probe of the convention, and
    # the cases that need it are not applicable in that run: these cases were failed by such faults only.
    "warp-ssn-skip": "no receiving fault of warp-peer takes a skipped SSN; the echo's faults fail warp-probe-echo",
    "warp-retransmit": "no receiving fault of warp-peer takes a repeated SSN; the echo's faults fail warp-probe-echo",
    "warp-chunk-len-short": "keep-unframed drops the rest, as no-close may (C62); the echo's faults fail the probe",
    "warp-rid-unknown": "keep-rid-unknown drops the Write, as no-close may (C62); the echo's faults fail the probes",
    "warp-out-of-region": "keep-out-of-region drops the Write, as no-close may (C62); the echo's faults fail the "
                          "probes",
    "warp-split-every-byte": "its faults (bad-adler; rid-unknown, out-of-region) now fail the probes first or are "
                             "conventions (warp-initiator-sends catches them)",
    "warp-coalesced": "its faults (bad-adler) now fail the probes first",
    "warp-reserved-ignored": "reserved-bits now fails the probes first (the session checks reserved bits on "
                             "every case, C63)",
    "warp-mix-rdma-send": "no-last now fails warp-probe-echo first",
    "warp-rdma-write-echo": "the RID and offset of the echo are conventions (rid-unknown, out-of-region: warp-initiator-sends); "
                            "bad-adler fails the probes first",
    "warp-iscsi-immediate-by-rdma": "warp-peer's iSCSI target takes no immediate data: whether it takes an "
                                    "unsolicited Data-Out after RDMA Writes or not, it answers nothing "
                                    "(fault keep-iscsi-immediate)",
}
for _c in RELAY_CASES:
    NO_FAULT_FAILS[_c] = ("a relay case, run against the fault-free targets only (the fault runs use --no-relay): "
                          "warp-peer reads its TCP stream through a socket, so it receives in order whatever the "
                          "relay does to the segments; its framing and sequencing faults are caught by the "
                          "socket-level split and coalesced cases")

# Other IDs a fault legitimately makes a case fail with, and why.
RELATED = {
}


def iscsi_fault(name):
    return name.startswith("iscsi-") or name.startswith("keep-iscsi-")


class Peer(peerlib.Process):
    """One warp-peer on a free port of the loopback."""

    def __init__(self, *args, all_addresses=False):
        # the relay reaches the target at its own address (198.18.0.0/15): it must listen on all
        bind = [] if all_addresses else ["--bind", "127.0.0.1"]
        super().__init__([PEER, "--port", "0"] + bind + list(args), r"event=listening", name="warp-peer")
        try:
            self.port = peerlib.port_of(self.ready_line)
            reg = next(l for l in self.lines if "event=region" in l)
            m = re.search(r"addr=0x([0-9a-f]+) handle=(\d+) len=(\d+)", reg)
            # the format of vitcp-conform run --region: hex address, hex handle, decimal length
            self.region = "%s:%x:%s" % (m.group(1), int(m.group(2)), m.group(3))
            self.address_based = "based=address" in reg
        except BaseException:
            self.stop()
            raise


def initiator_args(peer, initiator, iscsi=False):
    """run's --listen and --connect-cmd for the listen-mode cases: warp-peer --connect with the
    initiator's arguments (a fault, choices), writing into peer's region (C64), or as an iSCSI initiator."""
    traffic = ["--iscsi"] + ISCSI_INITIATOR_TASKS if iscsi else INITIATOR_TRAFFIC + ["--region", peer.region]
    cmd = [PEER, "--connect", "{host}:{port}"] + traffic + list(initiator)
    return ["--listen", "0", "--connect-cmd", " ".join(cmd)]


def run(peer, *extra, protocol="warp", relay=False, capture=None, initiator=None):
    """vitcp-conform run against peer: (exit status, JSON report, JUnit root, text).
    relay: the relay cases may run (else --no-relay); capture: write the run's capture there;
    initiator: run the listen-mode cases too, against warp-peer --connect with these arguments."""
    args = ["--target", "127.0.0.1:%d" % peer.port] + (["--capture", capture] if capture else ["--no-capture"]) + \
        (["--protocol", protocol] if protocol else []) + ([] if relay else ["--no-relay"]) + \
        (initiator_args(peer, initiator, "--iscsi" in extra) if initiator is not None else []) + list(extra)
    return peerlib.conform_run(args, CASES, junit=True, timeout=120, conform=CONFORM)


def tcp_segments(path):
    """(src, dst, sport, dport, seq, payload length) of every IPv4 TCP packet
    of a pcapng file (Ethernet, raw IP, BSD loopback or Linux cooked links)."""
    import struct
    out = []
    for link, pkt in peerlib.pcapng_frames(path):
        ip = peerlib.ipv4_of(link, pkt)
        if ip is not None and len(ip) >= 40 and ip[9] == 6:
            ihl, total = (ip[0] & 15) * 4, struct.unpack_from(">H", ip, 2)[0]
            sport, dport, seq = struct.unpack_from(">HHI", ip, ihl)
            thl = (ip[ihl + 12] >> 4) * 4
            out.append(("%d.%d.%d.%d" % tuple(ip[12:16]), "%d.%d.%d.%d" % tuple(ip[16:20]), sport, dport,
                        seq, total - ihl - thl))
    return out


class WarpSuite(unittest.TestCase):
    def check_clean_run(self, peer_args, run_args, expect_pass, expect_skip, region=False, relay=False,
                        listen=True):
        # the relay cases pass through the relay as root, else they are skipped with the reason
        if not (relay and ROOT) and expect_pass & RELAY_CASES:
            expect_pass, expect_skip = expect_pass - RELAY_CASES, expect_skip | RELAY_CASES
        peer = Peer(*peer_args, all_addresses=relay)
        try:
            if region:
                self.assertTrue(peer.address_based, peer.lines)
                run_args = list(run_args) + ["--region", peer.region]
            passive = PASSIVE_CASES | ISCSI_PASSIVE_CASES
            if not listen:  # no listen mode: the passive cases are not run (nor reported)
                expect_pass, expect_skip = expect_pass - passive, expect_skip - passive
            rc, rep, junit, text = run(peer, *run_args, relay=relay, initiator=[] if listen else None)
        finally:
            peer.stop()
        na = expect_pass & NOT_OFFERED
        # an iSCSI run (--iscsi) offers none of the echo conventions: the echo cases are not applicable
        # (the module's hook_offered), the relay cases skipped without a relay
        by_id = peerlib.check_report(self, rep, text, "warp",
                                     WARP_CASES if listen else WARP_CASES - PASSIVE_CASES - ISCSI_PASSIVE_CASES,
                                     lambda c: ("not-applicable",) if c["id"] in na
                                     else ("pass",) if c["id"] in expect_pass else ("skip", "not-applicable"))
        self.assertEqual({i for i, c in by_id.items() if c["verdict"] in ("skip", "not-applicable")},
                         expect_skip | na)
        for i in expect_skip:
            if by_id[i]["verdict"] == "not-applicable":
                self.assertIn("its run options say so", by_id[i]["message"])
        for i in na:
            self.assertIn("the target does not offer readback", by_id[i]["message"])
        for i in expect_skip & RELAY_CASES:
            if by_id[i]["verdict"] == "skip" and not by_id[i]["message"].endswith("--iscsi runs the iSCSI cases only"):
                self.assertIn("needs the packet relay: ", by_id[i]["message"])
        self.assertEqual(rc, 0, text)
        classes = {tc.get("classname") for tc in junit.iter("testcase")}
        self.assertTrue(classes and all(c.startswith("warp.") for c in classes), classes)
        self.assertIn("] warp ", text)

    def test_normal_peer_passes_every_echo_case(self):
        self.check_clean_run(["--zero-based"], [], ECHO_CASES, ISCSI_CASES, relay=True)

    def test_address_based_peer_passes_every_echo_case_given_its_region(self):
        # warp-peer's default: offsets are the region's addresses (W5)
        self.check_clean_run([], [], ECHO_CASES, ISCSI_CASES, region=True, relay=True)

    def test_other_rid_passes_every_echo_case_given_its_region(self):
        self.check_clean_run(["--handle", "0x2a", "--region-size", "200000"], [], ECHO_CASES, ISCSI_CASES,
                             region=True)

    def test_without_listen_mode_no_passive_case_runs(self):
        self.check_clean_run(["--zero-based"], [], ECHO_CASES, ISCSI_CASES, listen=False)

    def test_without_its_region_the_rdma_cases_do_not_apply(self):
        # the same target without --region: the cases write at offset 0 of RID 1, outside its region
        peer = Peer()
        try:
            rc, rep, _, text = run(peer, "--only", "WARP-INTRO-REGION-BOUNDS")
        finally:
            peer.stop()
        # the probe of its RDMA echo writes outside its region: the target closes, so it offers no way to see
        # placement at those offsets and the RDMA cases are not applicable, saying why
        self.assertEqual(rc, 0, text)
        na = {c["id"]: c["message"] for c in rep["cases"] if c["verdict"] == "not-applicable"}
        self.assertIn("warp-rdma-write-echo", na, text)
        self.assertIn("the target closed the connection instead of sending RDMA Write", na["warp-rdma-write-echo"])

    def test_a_small_region_skips_the_echo_cases(self):
        peer = Peer("--zero-based", "--region-size", "4096")
        try:
            rc, rep, _, text = run(peer, "--region", peer.region)
        finally:
            peer.stop()
        # the probes are skipped, so the cases that need their conventions are not applicable with that reason
        for c in rep["cases"]:
            self.assertIn(c["verdict"], ("skip", "not-applicable"), c)
            if c["verdict"] == "not-applicable" or c["id"] in PROBE_CASES:
                self.assertIn("holds 4096 bytes; the echo cases need at least 65536 (C50)", c["message"])
        self.assertTrue(any("holds 4096 bytes; the echo cases need at least 65536 (C50)" in c["message"]
                            for c in rep["cases"]), text)

    def test_relay_cases_cut_and_coalesce_chunks(self):
        """The relay cases' segments are what their comments say: the
        tester's first transmissions cut the 316-byte and 520-byte chunks of
        warp-relay-split in pieces of 150 and 200 bytes, and put two or three
        56-byte and 80-byte chunks (or pieces) of warp-relay-coalesced in
        segments of 130 and 170 bytes; the relay dropped and duplicated the
        segments named (a retransmission and a second copy in the capture)."""
        peer = Peer("--zero-based", all_addresses=True)
        with tempfile.TemporaryDirectory() as d:
            cap = os.path.join(d, "relay.pcapng")
            try:
                rc, rep, _, text = run(peer, "--only", "warp-relay-split", "--only", "warp-relay-coalesced",
                                       relay=True, capture=cap)
            finally:
                peer.stop()
            by_id = {c["id"]: c for c in rep["cases"]}
            self.assertEqual(set(by_id), RELAY_CASES, text)
            if not ROOT:
                for c in by_id.values():
                    self.assertEqual(c["verdict"], "skip")
                    self.assertIn("needs the packet relay: ", c["message"])
                self.skipTest("the packet relay needs root")
            for c in by_id.values():
                self.assertEqual(c["verdict"], "pass", c["message"])
            self.assertEqual(rc, 0, text)
            flows = {}
            for src, dst, sport, dport, seq, n in tcp_segments(cap):
                if dport == peer.port and dst.startswith("198.1") and n:
                    flows.setdefault(sport, []).append((seq, n))
        self.assertEqual(len(flows), 2, flows)
        # the flows by their first data segment (the relay records each case's packets in order)
        by_first = {segs[0][1]: segs for segs in flows.values()}
        self.assertEqual(set(by_first), {150, 130}, flows)
        split, coalesced = by_first[150], by_first[130]

        def first(segs):
            seen, out, again = set(), [], []
            for seq, n in segs:
                (again if seq in seen else out).append((seq, n))
                seen.add(seq)
            return [n for _, n in sorted(out)], again

        lens, again = first(split)
        self.assertEqual(lens, [150] * 6 + [48] + [200] * 5 + [40], split)
        self.assertGreaterEqual(len(again), 3, "the drops of segments 2 and 9 and the duplicate of 4: %s" % split)
        lens, again = first(coalesced)
        self.assertEqual(lens, [130, 130, 76, 170, 170, 60], coalesced)
        self.assertGreaterEqual(len(again), 3, "the drops of segments 2 and 4 and the duplicate of 1: %s" % coalesced)

    def test_iscsi_peer_passes_every_iscsi_case(self):
        self.check_clean_run(["--iscsi"], ["--iscsi"], ISCSI_CASES, ECHO_CASES)

    def test_each_fault_fails_a_case_under_its_id(self):
        faults = peerlib.list_faults(PEER)

        def one(fault):
            iscsi = iscsi_fault(fault)
            # echo faults against the address-based region given by --region (C50)
            peer = Peer("--fault", fault, *(["--iscsi"] if iscsi else []))
            try:
                # the echo faults also as the initiator of the listen-mode cases (C64)
                return run(peer, *(["--iscsi"] if iscsi else ["--region", peer.region]), initiator=["--fault", fault])
            finally:
                peer.stop()

        results = peerlib.fault_runs(list(faults), one, 4)
        peerlib.check_faults(self, faults, results, WARP_CASES, RELATED, UNCAUGHT, NO_FAULT_FAILS, rc_ok=(1,))

    def test_catalog_claims_name_real_cases(self):
        reqs = peerlib.list_requirements("WARP", CASES, conform=CONFORM)
        self.assertGreaterEqual(len(reqs), 58)
        case_reqs = {}
        for text in peerlib.case_texts(os.path.join(CASES, "warp")):
            cid = re.search(r"^case\s+(\S+)", text, re.M).group(1)
            case_reqs[cid] = set(re.findall(r"WARP-[A-Z0-9.-]*[A-Z0-9]", text))
        self.assertEqual(set(case_reqs), WARP_CASES)
        for r in reqs:
            if "active" in r["checks"]:
                self.assertTrue(r["status"].startswith("active ("), "%s: %s" % (r["id"], r["status"]))
        peerlib.check_catalog_claims(self, reqs, case_reqs, active=lambda r: "active" in r["checks"])
        self.assertFalse([r["id"] for r in reqs if r["status"] == "NOT COVERED"])

    def test_generic_runner_fails_what_differs(self):
        """Cases written to fail against the normal peer: each fails as it
        should, with the step's ID, at the step's line."""
        cases = {
            "010-close.case": ("warp-x-close", "send Send ssn=1 payload=10\nexpect-close 1000 [WARP-INTRO-NO-PLACE-INVALID]",
                               "fail", "WARP-INTRO-NO-PLACE-INVALID", "instead of closing the connection"),
            "020-field.case": ("warp-x-field", "send Send ssn=1 payload=10\nexpect Send ssn=99 [WARP-A.1.2-SSN-NEXT]",
                               "fail", "WARP-A.1.2-SSN-NEXT", "expected Send ssn=99, got ssn=1"),
            "030-data.case": ("warp-x-data", "send Send ssn=1 payload=10 fill=1\nexpect Send payload=11 data=echo",
                              "fail", "WARP-SUMMARY-SEND-FIELDS", "expected Send payload=11, got payload=10"),
            "040-silence.case": ("warp-x-silence", "expect Send", "timeout", "WARP-SUMMARY-SEND-FIELDS",
                                 "no Send chunk within"),
        }
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "warp"))
            for name, (cid, steps, *_rest) in cases.items():
                with open(os.path.join(d, "warp", name), "w") as f:
                    f.write("protocol warp\ncase %s\nrequire WARP-SUMMARY-SEND-FIELDS\nconnect\n%s\n" % (cid, steps))
            peer = Peer()
            try:
                global CASES
                saved, CASES = CASES, d
                try:
                    rc, rep, _, text = run(peer)
                finally:
                    CASES = saved
            finally:
                peer.stop()
        by_id = {c["id"]: c for c in rep["cases"]}
        for name, (cid, _, verdict, rid, says) in cases.items():
            c = by_id[cid]
            self.assertEqual((c["verdict"], c["failed_requirement"]), (verdict, rid), c["message"])
            self.assertIn(says, c["message"])
            self.assertIn("warp/%s:" % name, c["message"])
        self.assertEqual(rc, 1, text)

    def test_protocol_selects_the_cases(self):
        peer = Peer()
        try:
            _, rep, _, text = run(peer, "--only", "VITCP-3.2-VERSION", "--no-survival", protocol=None)
        finally:
            peer.stop()
        # without --protocol the VI/TCP cases are selected: a WARP target fails them, no WARP case runs
        peerlib.check_protocol_selects(self, "warp", rep, text, CASES, conform=CONFORM)
        p = subprocess.run([CONFORM, "run", "--target", "127.0.0.1:1", "--protocol", "sctp"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("vitcp-conform: unknown --protocol 'sctp'", p.stderr)


if __name__ == "__main__":
    unittest.main()
