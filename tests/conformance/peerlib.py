"""peerlib: what the peer suites (test_*_peer_suite.py, test_pktway_node_suite.py,
test_vipl_peer_choices.py) share: a reference peer started and stopped
(Process), vitcp-conform runs and their reports (conform_run, failing,
list_requirements, case_texts), the programs' --list-faults and
--list-choices (list_faults, list_choices), runs side by side (parallel),
and the proof that every fault fails a case under its own requirement ID
(check_faults).

Every wait is bounded, and a process this module starts is stopped on every
path: a peer that does not become ready is stopped before the error is
raised, and stop() may be called any number of times.
"""
import concurrent.futures
import json
import os
import re
import socket
import subprocess
import tempfile
import threading
import time
import xml.etree.ElementTree as ET

CONFORM = os.environ.get("VITCP_CONFORM", "")

# Verdicts that fail a case (a fault's run is judged on these).
FAILED = ("fail", "timeout")


class Process:
    """One program under test, its output (stdout and stderr) in `lines`:
    read line by line from a pipe by a thread, or with to_file=True written
    to a temporary file (a write to it never blocks the program, however
    busy the test is) and read from there. The constructor returns once a
    line matches the regular expression `ready` (then self.ready_line), or
    stops the program and raises RuntimeError when it exits or `timeout`
    seconds pass first."""

    def __init__(self, argv, ready, name=None, timeout=10, stdin=False, to_file=False):
        self.name = name or os.path.basename(argv[0])
        self.log = tempfile.NamedTemporaryFile(mode="w+", prefix="peer-", suffix=".log") if to_file else None
        self.proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE if stdin else None,
                                     stdout=self.log or subprocess.PIPE, stderr=subprocess.STDOUT,
                                     text=True, errors="replace")
        self._lines = []
        self.cond = threading.Condition()
        self.reader = None
        if not to_file:
            self.reader = threading.Thread(target=self._read, daemon=True)
            self.reader.start()
        self.stopped = False
        try:
            self.ready_line = self.wait_for(ready, timeout)
        except BaseException:
            self.stop()
            raise

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self._lines.append(line.rstrip("\n"))
                self.cond.notify_all()

    @property
    def lines(self):
        """What it printed so far, a string a line."""
        if self.log and not self.stopped:
            with open(self.log.name, errors="replace") as f:
                return f.read().splitlines()
        with self.cond:
            return list(self._lines)

    def wait_for(self, pattern, timeout=10):
        """The first line matching `pattern`, waiting at most `timeout` seconds."""
        end = time.monotonic() + timeout
        while True:
            exited = self.proc.poll() is not None
            if exited and self.reader:
                self.reader.join(2)  # what it printed before it exited
            line = next((l for l in self.lines if re.search(pattern, l)), None)
            if line is not None:
                return line
            if exited or time.monotonic() > end:
                raise RuntimeError("%s did not start:\n%s" % (self.name, "\n".join(self.lines)))
            if self.reader:
                with self.cond:
                    self.cond.wait(0.2)
            else:
                time.sleep(0.05)

    def output(self):
        """Everything it printed so far, one line each."""
        return "".join(l + "\n" for l in self.lines)

    def stop(self):
        """SIGTERM, then SIGKILL after 10 s; its exit status (negative: the
        signal). Its output stays in `lines`; the temporary file is removed."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        if not self.stopped:
            if self.reader:
                self.reader.join(10)
                self.proc.stdout.close()
            else:
                self._lines = self.lines
            self.stopped = True
            if self.log:
                self.log.close()
            if self.proc.stdin:
                self.proc.stdin.close()
        return self.proc.returncode


def free_port(kind=socket.SOCK_STREAM):
    """A port of 127.0.0.1 free a moment ago (TCP, or kind=socket.SOCK_DGRAM)."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_udp_port():
    return free_port(socket.SOCK_DGRAM)


def port_of(line):
    """The port of an `event=listening ... port=N` line."""
    return int(re.search(r"port=(\d+)", line).group(1))


def conform_run(args, cases, junit=False, timeout=240, conform=None):
    """`vitcp-conform run ARGS --cases CASES --json ...` (and --junit): its
    (exit status, JSON report, JUnit root or None, stdout and stderr)."""
    with tempfile.TemporaryDirectory() as d:
        js, ju = os.path.join(d, "r.json"), os.path.join(d, "r.xml")
        cmd = [conform or CONFORM, "run"] + list(args) + ["--cases", cases, "--json", js] + \
            (["--junit", ju] if junit else [])
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout)
        with open(js) as f:
            report = json.load(f)
        root = ET.parse(ju).getroot() if junit else None
    return p.returncode, report, root, p.stdout + p.stderr


def failing(report):
    """The cases of a report that failed or timed out."""
    return [c for c in report["cases"] if c["verdict"] in FAILED]


def check_report(test, rep, text, protocol, cases, allowed):
    """The report holds exactly `cases`, each with a verdict in allowed(case),
    of `protocol`, naming only that protocol's requirement IDs; its summary
    names the protocol. Returns the cases by ID."""
    prefix = protocol.upper() + "-"
    by_id = {c["id"]: c for c in rep["cases"]}
    test.assertEqual(set(by_id), cases, text)
    for c in rep["cases"]:
        test.assertIn(c["verdict"], allowed(c), "%s: %s" % (c["id"], c["message"]))
        test.assertEqual(c["protocol"], protocol)
        test.assertTrue(all(r.startswith(prefix) for r in c["requirements"]), c)
    test.assertEqual(rep["summary"]["protocol"], protocol)
    return by_id


def list_requirements(protocol, cases, conform=None):
    """The requirements of `vitcp-conform list --json --protocol P`."""
    p = subprocess.run([conform or CONFORM, "list", "--json", "--protocol", protocol, "--cases", cases],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, check=True, timeout=60)
    return json.loads(p.stdout)["requirements"]


def case_texts(folder):
    """The text of every .case file below folder."""
    for d, _, files in os.walk(folder):
        for f in sorted(files):
            if f.endswith(".case"):
                with open(os.path.join(d, f)) as fh:
                    yield fh.read()


# Bytes before the IP header per pcapng link type: Ethernet, BSD loopback,
# Linux cooked, raw IP (two numbers)
_LINK_HEADER = {1: 14, 0: 4, 113: 16, 101: 0, 228: 0}


def pcapng_frames(path):
    """(link type, packet bytes) of every enhanced packet block of a pcapng
    file, in order (frame n is the n-th), in either byte order."""
    import struct
    with open(path, "rb") as f:
        data = f.read()
    links, at, endian = [], 0, "<"
    while at + 12 <= len(data):
        btype, blen = struct.unpack_from(endian + "II", data, at)
        if btype == 0x0A0D0D0A:  # section header: its byte order
            endian = "<" if data[at + 8:at + 12] == b"\x4d\x3c\x2b\x1a" else ">"
            blen = struct.unpack_from(endian + "I", data, at + 4)[0]
            links = []
        elif btype == 1:
            links.append(struct.unpack_from(endian + "H", data, at + 8)[0])
        elif btype == 6:
            iface, _, _, caplen = struct.unpack_from(endian + "IIII", data, at + 8)
            yield (links[iface] if iface < len(links) else -1), data[at + 28:at + 28 + caplen]
        if blen < 12:
            break
        at += blen


def ipv4_of(link, pkt):
    """The IPv4 packet in a frame of that link type, or None."""
    skip = _LINK_HEADER.get(link)
    if skip is None or len(pkt) < skip + 20 or pkt[skip] >> 4 != 4:
        return None
    return pkt[skip:]


def check_bad_choices_refused(test, program, args, bad):
    """`program ARGS --choice B` refuses each bad B as a usage error (exit 2)
    with a message that starts with the program's name."""
    name = os.path.basename(program)
    for arg in bad:
        p = subprocess.run([program] + list(args) + ["--choice", arg], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=30)
        test.assertEqual(p.returncode, 2, "%r: %s" % (arg, p.stderr))
        test.assertTrue(p.stderr.startswith(name + ": "), "%r: %s" % (arg, p.stderr))


def check_catalog_claims(test, reqs, case_reqs, active=lambda r: r["status"].startswith("active")):
    """The links between the catalog and the cases cannot rot: every entry
    checked actively names its case(s) in its "how checked" text
    ("vitcp-conform cases ID, ..."), and every case a text names exists and
    names that entry. reqs: `vitcp-conform list --json`'s requirements;
    case_reqs: {case id: the IDs it names}; active(r): whether r counts as
    checked actively. Returns how many do."""
    count = 0
    for r in reqs:
        named = re.search(r"vitcp-conform cases? ([a-z0-9, -]+)", r["reason"])
        if active(r):
            count += 1
            test.assertTrue(named, "%s is checked actively but its text names no case" % r["id"])
        if named:
            for cid in [c.strip() for c in named.group(1).split(",")]:
                test.assertIn(cid, case_reqs, "%s names case %s, which does not exist" % (r["id"], cid))
                test.assertIn(r["id"], case_reqs[cid], "%s names %s, which does not test it" % (r["id"], cid))
    return count


def list_faults(program, strict=True):
    """{name: requirement ID} from `program --list-faults` ("NAME ID" lines;
    strict: a line with other fields is an error)."""
    out = subprocess.run([program, "--list-faults"], stdout=subprocess.PIPE, text=True, check=True,
                         timeout=30).stdout
    faults = {}
    for line in out.splitlines():
        fields = line.split()
        if strict and len(fields) != 2:
            raise ValueError("%s --list-faults: not NAME ID: %r" % (program, line))
        faults[fields[0]] = fields[1]
    return faults


def list_choices(program):
    """The first word of every line of `program --list-choices`."""
    out = subprocess.run([program, "--list-choices"], stdout=subprocess.PIPE, text=True, check=True,
                         timeout=30).stdout
    return [l.split()[0] for l in out.splitlines() if l.strip()]


def parallel(fn, items, workers):
    """[fn(item) for item in items], `workers` at a time."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))


def fault_runs(jobs, one, workers):
    """Runs one(job) for every job (a fault's name, or a tuple whose first
    item is it) side by side; {fault: [(rc, report, junit, text), ...]} in
    the order of the jobs (a fault run against several targets has several)."""
    results = {}
    for job, outcome in zip(jobs, parallel(one, jobs, workers)):
        results.setdefault(job[0] if isinstance(job, tuple) else job, []).append(outcome)
    return results


def check_protocol_selects(test, protocol, rep, text, cases, conform=None):
    """rep (text): a run without --protocol, --only VITCP-3.2-VERSION, against
    the peer: only VI/TCP cases ran. With --protocol P the same selection
    matches no case of P: a usage error."""
    test.assertTrue(rep["cases"])
    test.assertTrue(all(c["protocol"] == "vitcp" for c in rep["cases"]), text)
    p = subprocess.run([conform or CONFORM, "run", "--target", "127.0.0.1:1", "--protocol", protocol, "--cases",
                        cases, "--only", "VITCP-3.2-VERSION"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    test.assertEqual(p.returncode, 2, p.stderr)
    test.assertIn("matches no case", p.stderr)


def check_faults(test, faults, results, all_cases, related, uncaught, no_fault_fails, rc_ok=None,
                 counts=lambda c: True):
    """Every fault's runs (fault_runs) fail at least one case under the
    fault's own requirement ID, which the case names, and no case under an ID
    other than those related[fault]; a fault in `uncaught` (printed with its
    reason) fails none under its ID. rc_ok: the exit statuses a caught
    fault's runs may have (None: any). Every case of all_cases is failed by
    some fault (counts(case): a failing case that counts as failed) or is a
    key of no_fault_fails, and no other case is."""
    failed_by_some = set()
    for fault, runs in results.items():
        with test.subTest(fault=fault):
            rid = faults[fault]
            caught = []
            for rc, rep, _, text in runs:
                bad = failing(rep)
                failed_by_some |= {c["id"] for c in bad if counts(c)}
                for c in bad:
                    test.assertIn(c["failed_requirement"], {rid} | related.get(fault, set()),
                                  "%s: %s %s" % (fault, c["id"], c["message"]))
                caught += [c["id"] for c in bad if c["failed_requirement"] == rid and rid in c["requirements"]]
            if fault in uncaught:
                print("fault %s not caught: %s" % (fault, uncaught[fault]))
                test.assertEqual(caught, [], "%s is in UNCAUGHT but %s catch it" % (fault, caught))
                continue
            text = "\n".join(r[3] for r in runs)
            test.assertTrue(caught, "%s (%s) fails no case naming it:\n%s" % (fault, rid, text))
            for rc, *_ in runs:
                if rc_ok is not None:
                    test.assertIn(rc, rc_ok, text)
    test.assertEqual(all_cases - failed_by_some, set(no_fault_fails),
                     "cases no fault fails must be listed in NO_FAULT_FAILS, and only those")


def require_paths(**paths):
    """Each keyword (an environment variable's name) names an existing program or folder."""
    for what, path in paths.items():
        if not path or not os.path.exists(path):
            raise RuntimeError("%s must name the built program or case folder (got %r)" % (what, path))


class Pair:
    """Two nodes of a chain stopped together (the second first); lines are both's."""

    def __init__(self, a, b):
        self.a, self.b = a, b

    @property
    def lines(self):
        return self.a.lines + self.b.lines

    def stop(self):
        self.b.stop()
        return self.a.stop()
