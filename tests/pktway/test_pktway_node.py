#!/usr/bin/env python3
"""pktway-node on real links: two end nodes and a router.

  test_pktway_node.py udp     loopback UDP (pktway_node_udp)
  test_pktway_node.py netns   raw Ethernet over veth pairs in network
                              namespaces the test creates and always
                              removes (pktway_node_netns; exit 77 = skip
                              when namespaces cannot be made)

Topology: A (0x000001) -- if 0 [router R 0x000010] if 1 -- B (0x000002).
Everything is checked from the event lines of the three nodes and from
the router's capture (--pcap, it sees both hops) read by vitcp-conform
lint: clean for the fault-free run, each fault's rule (or, where lint
cannot see it, its effect on the events) visible in its own run.
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

NODE = os.environ.get("PKTWAY_NODE", "pktway-node")
CONFORM = os.environ.get("VITCP_CONFORM", "vitcp-conform")
MODE = sys.argv[1] if len(sys.argv) > 1 else "udp"
TMP = tempfile.mkdtemp(prefix="pktway-node-")
FAILS = []


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL:", what, flush=True)
    return cond


class Node:
    def __init__(self, name, args, netns=None):
        self.name = name
        cmd = [NODE] + args
        if netns:
            cmd = ["ip", "netns", "exec", netns] + cmd
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        self.lines = []
        self.cond = threading.Condition()
        self.err = ""
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()
        self.wait_for(r"^event=ready ", timeout=30.0)  # ASan start-up on busy cores

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def _read_err(self):
        self.err = self.proc.stderr.read()

    def wait_for(self, pattern, timeout=10.0, start=0):
        """The first line from index start matching pattern (raises if none)."""
        rx = re.compile(pattern)
        end = time.time() + timeout
        with self.cond:
            while True:
                for line in self.lines[start:]:
                    if rx.search(line):
                        return line
                left = end - time.time()
                if left <= 0 or self.proc.poll() is not None and not self._more():
                    raise AssertionError("%s: no line /%s/ in:\n  %s\nstderr: %s" % (
                        self.name, pattern, "\n  ".join(self.lines[start:]), self.err))
                self.cond.wait(min(left, 0.2))

    def _more(self):
        return False

    def mark(self):
        with self.cond:
            return len(self.lines)

    def since(self, mark):
        with self.cond:
            return list(self.lines[mark:])

    def cmd(self, text):
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def stop(self):
        if self.proc.poll() is None:
            try:
                self.cmd("quit")
            except (BrokenPipeError, OSError):
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)
                self.proc.wait()
        time.sleep(0.05)
        check(self.proc.returncode == 0, "%s exits 0 (got %s, stderr %r)" % (self.name, self.proc.returncode, self.err))
        check("ERROR: AddressSanitizer" not in self.err and "runtime error" not in self.err,
              "%s: sanitizer report: %s" % (self.name, self.err))


def field(line, key):
    m = re.search(r"(?:^| )%s=(\S+)" % re.escape(key), line)
    return m.group(1) if m else None


class Topology:
    """A -- R -- B over UDP on loopback or Ethernet in namespaces."""

    def __init__(self, tag, fault_a=None, fault_r=None, fault_b=None, router_extra=(), b_extra=()):
        self.tag = tag
        self.pcap = os.path.join(TMP, tag + ".pcap")
        f = lambda x: ["--fault", x] if x else []
        if MODE == "udp":
            base = NET.base
            a, r, b = base + ".1", base + ".2", base + ".3"
            self.r = Node("R[%s]" % tag, ["--addr", "0x10", "--router", "--udp", r + ":5998", "--udp", r + ":5999",
                                          "--peer", "1=%s:5998@0" % a, "--peer", "2=%s:5998@1" % b, "--mtu", "1:200",
                                          "--pcap", self.pcap] + f(fault_r) + list(router_extra))
            self.b = Node("B[%s]" % tag, ["--addr", "2", "--udp", b + ":5998", "--peer", "default=%s:5999" % r,
                                          "--echo"] + f(fault_b) + list(b_extra))
            self.a = Node("A[%s]" % tag, ["--addr", "1", "--udp", a + ":5998", "--peer",
                                          "default=%s:5998" % r] + f(fault_a))
        else:
            n = NET
            self.r = Node("R[%s]" % tag, ["--addr", "0x10", "--router", "--iface", "r0", "--iface", "r1",
                                          "--peer", "1=%s@0" % n.mac["a0"], "--peer", "2=%s@1" % n.mac["b0"],
                                          "--mtu", "1:200", "--pcap", self.pcap] + f(fault_r) + list(router_extra),
                          netns=n.ns["r"])
            self.b = Node("B[%s]" % tag, ["--addr", "2", "--iface", "b0", "--peer", "default=%s" % n.mac["r1"],
                                          "--echo"] + f(fault_b) + list(b_extra), netns=n.ns["b"])
            self.a = Node("A[%s]" % tag, ["--addr", "1", "--iface", "a0", "--peer", "default=%s" % n.mac["r0"]]
                          + f(fault_a), netns=n.ns["a"])
        self.nodes = [self.a, self.r, self.b]

    def send(self, spec, expect_r=None, expect_b=None, expect_a=None, quiet=False):
        """A sends spec; wait for the patterns at R, B and A (after the
        send); returns the new lines of each."""
        marks = [n.mark() for n in self.nodes]
        self.a.cmd("send " + spec)
        self.a.wait_for(r"^event=(sent .*kind=send|error)", start=marks[0])
        got = {}
        for node, mark, pat in zip(self.nodes, marks, (expect_a, expect_r, expect_b)):
            if pat:
                for p in pat if isinstance(pat, (list, tuple)) else [pat]:
                    try:
                        node.wait_for(p, start=mark)
                    except AssertionError as e:
                        check(False, "%s: %s" % (self.tag, e))
        if quiet:
            time.sleep(0.3)
        for node, mark in zip(self.nodes, marks):
            got[node.name[0]] = node.since(mark)
        return got

    def close(self):
        for n in (self.a, self.b, self.r):
            n.stop()
        return lint(self.pcap)


def lint(path):
    p = subprocess.run([CONFORM, "lint", path], capture_output=True, text=True)
    out = p.stdout + p.stderr
    m = re.search(r"(\d+) EEP messages: (\d+) errors, (\d+) warnings", out)
    return {"out": out, "rc": p.returncode, "messages": int(m.group(1)) if m else -1,
            "errors": int(m.group(2)) if m else -1, "warnings": int(m.group(3)) if m else -1}


class Loopback:
    def __init__(self):
        self.base = "127.%d.%d" % (random.randint(1, 254), random.randint(1, 254))

    def close(self):
        pass


class Namespaces:
    """nsA:a0 -- r0:nsR:r1 -- b0:nsB, fixed MACs; removed on close. The
    router has one MAC on both links (a host-wide MAC, as some routers
    use): lint pairs a router's two hops by the MAC the first went to and
    the second came from (P11), which a MAC per interface would hide."""

    def __init__(self):
        tag = "pw%d" % os.getpid()
        self.ns = {k: "%s%s" % (tag, k) for k in ("a", "r", "b")}
        self.mac = {"a0": "02:50:00:00:00:01", "r0": "02:50:00:00:01:00", "r1": "02:50:00:00:01:00",
                    "b0": "02:50:00:00:00:02"}
        self.made = []

    def setup(self):
        # namespaces of an earlier run that was killed (its pid is gone)
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split()
        for name in listed:
            m = re.fullmatch(r"pw(\d+)[arb]", name)
            if m and not os.path.exists("/proc/" + m.group(1)):
                subprocess.run(["ip", "netns", "del", name], capture_output=True)
        for ns in self.ns.values():
            self.run("ip", "netns", "add", ns)
            self.made.append(ns)
        for x, y, nx, ny in (("a0", "r0", "a", "r"), ("r1", "b0", "r", "b")):
            self.run("ip", "link", "add", x, "netns", self.ns[nx], "address", self.mac[x], "type", "veth",
                     "peer", "name", y, "netns", self.ns[ny], "address", self.mac[y])
        for ifname, ns in (("a0", "a"), ("r0", "r"), ("r1", "r"), ("b0", "b")):
            self.run("ip", "-n", self.ns[ns], "link", "set", ifname, "up")
            self.run("ip", "-n", self.ns[ns], "link", "set", "lo", "up")

    @staticmethod
    def run(*cmd):
        subprocess.run(cmd, check=True, capture_output=True, text=True)

    def close(self):
        for ns in self.made:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        check(not any(ns in left for ns in self.made), "namespaces removed")


def default_run():
    t = Topology("default")
    # data A -> B through R, echoed back (P16)
    # R's line for the echo is waited for too: read late, it would fall after the next send's mark
    g = t.send("dt=2,pt=0x800,data=0102030405", expect_r=[r"^event=forwarded if=0 .*dt=0x000002",
                                                        r"^event=forwarded if=1 .*dt=0x000001"],
               expect_b=[r"^event=delivered .*sa=0x000001 .*data=0102030405", r"^event=sent .*kind=echo"],
               expect_a=r"^event=delivered .*sa=0x000002 .*data=0102030405")
    # Hey-You! to the router: answered with its address, not forwarded (P7, P16)
    g = t.send("dt=hey-you,pt=0x800,data=cafe", expect_r=[r"^event=delivered .*dt=0x7ffffe",
                                                        r"^event=sent if=0 .*kind=answer .*dt=0x000001 sa=0x000010"],
               expect_a=r"^event=delivered .*sa=0x000010 .*data=cafe", quiet=True)
    check(not any("event=forwarded" in line and "dt=0x7ffffe" in line for line in g["R"]), "Hey-You! not forwarded")
    check(not any("event=delivered" in line for line in g["B"]), "Hey-You! not at B")
    # TAIL shifted (P6): 0x5 -> 0xa at B
    t.send("dt=2,pt=0x800,ei=0x5,len=8", expect_r=r"^event=forwarded .*ei=0x0000000000000005 ei_out=0x000000000000000a",
           expect_b=r"^event=delivered .*ei=0x000000000000000a")
    t.send("dt=2,pt=0x800,ei=0x8000000000000001,len=8", expect_b=r"^event=delivered .*ei=0x8000000000000001")
    # leading symbol + L2RH consumed by R (P13), B receives none
    t.send("dt=2,pt=0x800,sym=5:01,l2rh=01,len=16", expect_r=r"^event=forwarded .*records=2 consumed=2",
           expect_b=r"^event=delivered .*records=0 consumed=0")
    # unknown destination: ERR TE 1 to the SA (P15)
    t.send("dt=0x55,pt=0x800,len=8", expect_r=[r"^event=dropped .*reason=unreachable", r"^event=sent if=0 .*kind=err .*te=0x0001"],
           expect_a=r"^event=delivered .*sa=0x000010 pt=0x0002 te=0x0001")
    # over the MTU of R's if 1 (200): refused, ERR TE 2
    g = t.send("dt=2,pt=0x800,len=300", expect_r=[r"^event=refused .*reason=EEP-1B-PATH-MTU", r"^event=sent if=0 .*kind=err .*te=0x0002"],
               expect_a=r"^event=delivered .*pt=0x0002 te=0x0002", quiet=True)
    check(not any("event=delivered" in line for line in g["B"]), "over-MTU message not at B")
    # unknown mandatory OH at B: dropped, ERR TE 3 back through R
    t.send("dt=2,pt=0x800,moh=3:01,len=8", expect_b=[r"^event=dropped .*reason=EEP-7-MANDATORY-UNKNOWN",
                                                     r"^event=sent .*kind=err .*te=0x0003"],
           expect_a=r"^event=delivered .*sa=0x000002 pt=0x0002 te=0x0003")
    # unknown optional OH: delivered
    t.send("dt=2,pt=0x800,oh=3:01,len=8", expect_b=r"^event=delivered .*oh=1")
    lt = t.close()
    check(lt["errors"] == 0 and lt["warnings"] == 0 and lt["messages"] >= 25,
          "default run lints clean with every message: %s" % lt["out"][-400:])
    # a detected error (P14): shifted, LSbit set; lint sees the logical SA
    t = Topology("detected-error")
    t.send("dt=2,pt=0x800,sa=0xE00001,ei=0x2,len=8", expect_r=r"^event=forwarded .*ei_out=0x0000000000000005",
           expect_b=r"^event=dropped .*reason=EEP-6K-SA-PHYSICAL")
    # V not 0 at an end node: dropped (P5); the router forwards it (lint warns)
    t.send("dt=2,v=1,len=8", expect_r=r"^event=forwarded", expect_b=r"^event=dropped .*reason=EEP-6A-VERSION")
    lt = t.close()
    check("EEP-6K-SA-PHYSICAL" in lt["out"] and "EEP-6A-VERSION" in lt["out"] and "EEP-10-EI" not in lt["out"].replace("EEP-10-EI-ERROR ", ""),
          "detected-error run: the SA and version rules, no TAIL rule: %s" % lt["out"][-600:])


# fault -> (which node has it, send spec, router extra args, how it shows)
# "lint": the rule's ID must be in the lint of R's capture;
# a regex for the events of node X: ("R"|"A"|"B", pattern).
FAULTS = {
    "ei-nonzero": ("A", "dt=2,pt=0x800,len=8", (), [("lint", "EEP-10-EI-ERROR"), ("A", r"kind=send .*ei=0x0000000000000001")]),
    "rz-nonzero": ("A", "dt=2,pt=0x800,len=8", (), [("lint", "EEP-6J-RZ-ZERO")]),
    "pl-no-data": ("A", "dt=2,pt=0x800", (), [("lint", "EEP-6G-PL-ZERO-NO-DATA")]),
    "odd-length": ("A", "dt=2,pt=0x800,len=8", (), [("lint", "EEP-1B-8B-WORDS")]),
    "ot-without-oh": ("A", "dt=2,pt=0x800,len=8", (), [("lint", "EEP-9-OT-NEEDS-OH")]),
    "sa-logical": ("A", "dt=2,pt=0x800,len=8", (), [("lint", "EEP-6K-SA-PHYSICAL")]),
    "no-shift": ("R", "dt=2,pt=0x800,ei=3,len=8", (), [("lint", "EEP-10-EI-SHIFT")]),
    "no-error-bit": ("R", "dt=2,pt=0x800,sa=0xE00001,ei=2,len=8", (), [("R", r"^event=forwarded .*ei_out=0x0000000000000004")]),
    "modify-db": ("R", "dt=2,pt=0x800,len=8", (), [("lint", "EEP-8-DB-UNMODIFIED")]),
    "modify-header": ("R", "dt=2,pt=0x800,len=8", (), [("lint", "EEP-4B-ONLY-TAIL-MODIFIED")]),
    "keep-l2rh": ("R", "dt=2,pt=0x800,l2rh=01,len=8", (), [("lint", "EEP-5-HR-CONSUMES-L2RH")]),
    "keep-symbol": ("R", "dt=2,pt=0x800,sym=4:01,len=8", (), [("lint", "EEP-5-SYMBOL-CONSUMED")]),
    "route-by-dt": ("R", "dt=2,pt=0x800,l2rh=00,len=8", ("--peer", "default=@A0"),
                    [("R", r"^event=sent if=1 .*kind=forward")]),
    "forward-local": ("R", "dt=hey-you,pt=0x800,len=8", ("--peer", "hey-you=@B1"), [("lint", "EEP-6C-LOCAL-ONLY")]),
    "ignore-mtu": ("R", "dt=2,pt=0x800,len=300", (), [("B", r"^event=delivered .*data_len=300")]),
    "segment": ("R", "dt=2,pt=0x800,len=300", (), [("B", r"^event=delivered .*data_len=(144|152|156)")]),
    "no-forward": ("R", "dt=2,pt=0x800,len=8", (), [("R", r"^event=dropped .*reason=fault")]),
    "no-err": ("R", "dt=0x55,pt=0x800,len=8", (), [("R", r"^event=dropped .*reason=unreachable"), ("!R", r"kind=err")]),
    "wrong-te": ("R", "dt=0x55,pt=0x800,len=8", (), [("lint", "EEP-6E-ERR-TE"), ("A", r"pt=0x0002 te=0x00ff")]),
    "accept-version": ("B", "dt=2,v=1,pt=0x800,len=8", (), [("B", r"^event=delivered .*v=1")]),
    "accept-reserved": ("R", "dt=0xC00002,pt=0x800,len=8", ("--peer", "0xC00002=@B1"), [("R", r"^event=forwarded .*dt=0xc00002")]),
    "accept-logical": ("B", "dt=0xE00009,pt=0x800,len=8", ("--peer", "0xE00009=@B1"), [("B", r"^event=delivered .*dt=0xe00009")]),
    "accept-mandatory": ("B", "dt=2,pt=0x800,moh=3:01,len=8", (), [("B", r"^event=delivered .*oh=1"), ("!B", r"kind=err")]),
    "drop-optional": ("B", "dt=2,pt=0x800,oh=3:01,len=8", (), [("B", r"^event=dropped .*reason=EEP-7-OPTIONAL-MAY-DROP")]),
    "drop-rz": ("B", "dt=2,pt=0x800,rz=1,len=8", (), [("B", r"^event=dropped .*reason=EEP-6J-RZ-IGNORED")]),
    "err-to-sa-zero": ("B", "dt=2,sa=0,pt=0x800,moh=3:01,len=8", (), [("B", r"^event=sent .*kind=err .*dt=0x000000")]),
    # the router answers a Hey-You! itself; cut short, only with the fault
    "answer-cut": ("R", "dt=hey-you,pt=1,len=32,cut=16", (), [("R", r"^event=sent .*kind=answer")]),
    "drop-mixed": ("B", "dt=2,pt=0x800,l2rh=01,sym=5,l2rh=,len=8", (),
                   [("B", r"^event=dropped .*reason=EEP-5B-SYMBOLS-MIXED")]),
}


def hop_of(which):
    """'@A0' -> A's address on R's interface 0 (the peer syntax), '@B1' B's on 1."""
    if MODE == "udp":
        return {"A0": NET.base + ".1:5998@0", "B1": NET.base + ".3:5998@1"}[which]
    return {"A0": NET.mac["a0"] + "@0", "B1": NET.mac["b0"] + "@1"}[which]


def fault_runs(only=None):
    listed = subprocess.run([NODE, "--list-faults"], capture_output=True, text=True, check=True).stdout.split("\n")
    names = [line.split()[0] for line in listed if line.strip()]
    check(sorted(names) == sorted(FAULTS), "every fault has a run here: %s" % sorted(set(names) ^ set(FAULTS)))
    for name in names:
        if only and name not in only or name not in FAULTS:
            continue
        who, spec, extra, shows = FAULTS[name]
        extra = [x if not x.startswith("default=@") and "=@" not in x else x.split("=@")[0] + "=" + hop_of(x.split("=@")[1])
                 for x in extra]
        t = Topology(name, fault_a=name if who == "A" else None, fault_r=name if who == "R" else None,
                     fault_b=name if who == "B" else None, router_extra=extra)
        waits = [p for w, p in shows if w == "R"], [p for w, p in shows if w == "B"], [p for w, p in shows if w == "A"]
        g = t.send(spec, expect_r=waits[0] or None, expect_b=waits[1] or None, expect_a=waits[2] or None, quiet=True)
        for w, p in shows:
            if w.startswith("!"):
                check(not any(re.search(p, line) for line in g[w[1]]), "%s: %s shows no /%s/" % (name, w[1], p))
        lt = t.close()
        for w, p in shows:
            if w == "lint":
                check(p in lt["out"], "%s: lint names %s: %s" % (name, p, lt["out"][-500:]))


def bad_command_lines():
    for args in (["--addr", "0"], [], ["--addr", "1", "--udp", "nope"], ["--addr", "1", "--peer", "1=1.2.3.4"],
                 ["--addr", "1", "--mtu", "3"], ["--addr", "1", "--fault", "bogus"], ["--addr", "1", "--send", "pt=1"],
                 ["--addr", "1", "--subscribe", "5"], ["--addr", "1", "--mtu", "2:100"], ["--addr", "1", "extra"],
                 ["--addr", "1", "--bogus"]):
        p = subprocess.run([NODE] + args, capture_output=True, text=True, timeout=10)
        check(p.returncode == 2 and p.stderr.startswith("pktway-node: ") and p.stdout == "",
              "bad command line %s: exit 2 and one message (got %d %r)" % (args, p.returncode, p.stderr))


def full_stdout():
    """Output that cannot be written is an error, said once on stderr."""
    for args in (["--list-faults"], ["--help"]):
        with open("/dev/full", "w") as full:
            p = subprocess.run([NODE] + args, stdout=full, stderr=subprocess.PIPE, text=True, timeout=10)
        check(p.returncode == 1 and "writing standard output failed" in p.stderr,
              "%s > /dev/full: exit 1 and a message (got %d %r)" % (args, p.returncode, p.stderr))


def garbage():
    """Raw datagrams of random bytes and bad stdin commands: no crash."""
    import socket
    base = NET.base
    n = Node("G", ["--addr", "7", "--router", "--udp", base + ".9:5998", "--peer", "default=%s.10:5998" % base])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rnd = random.Random(19)
    for i in range(300):
        s.sendto(bytes(rnd.randrange(256) for _ in range(rnd.randrange(0, 120))), (base + ".9", 5998))
    s.close()
    for c in ("send", "send dt=", "peer x", "bogus", "send dt=1,len=70000", "send " + "a" * 5000):
        n.cmd(c)
    n.cmd("send dt=0x7ffffe,to=%s.9:5998" % base)
    n.wait_for(r"^event=delivered .*dt=0x7ffffe", timeout=10)
    n.stop()
    check(sum("event=error" in line for line in n.lines) == 6, "six bad commands, six event=error lines")


def main():
    global NET
    if MODE == "netns":
        if os.geteuid() != 0 or not shutil.which("ip"):
            print("SKIP: raw Ethernet in namespaces needs root and iproute2")
            return 77
        NET = Namespaces()
        try:
            NET.setup()
        except subprocess.CalledProcessError as e:
            print("SKIP: cannot create network namespaces / veth pairs here: %s" % str(e.stderr or e).strip())
            NET.close()
            return 77
    else:
        NET = Loopback()
    try:
        default_run()
        fault_runs()
        if MODE == "udp":
            bad_command_lines()
            full_stdout()
            garbage()
    except AssertionError as e:
        check(False, str(e))
    finally:
        NET.close()
        shutil.rmtree(TMP, ignore_errors=True)
    print("%d failure(s)" % len(FAILS))
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
