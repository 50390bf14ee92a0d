#!/usr/bin/env python3
"""Run the programs in the styles of the VIA code of the time (issue 17)
against the shared libvipl: on loopback (one host, several processes
sharing the host's VI/TCP port) and across two "hosts" made of network
namespaces (created here and always removed).

  run_compat.py --bin-dir DIR [--only loopback|netns]

Every case asserts the programs' exit status and the line each prints
about the data it checked. Exit 0 when all pass, 1 on a failure, 77 when
the namespace part cannot run here (not root, no 'ip netns').
"""
import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

SKIP = 77


class Failure(Exception):
    pass


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Runner:
    def __init__(self, bin_dir, env):
        self.bin_dir = bin_dir
        self.env = env
        self.procs = []

    def start(self, args, netns=None, delay=0.0):
        if delay:
            time.sleep(delay)
        cmd = [os.path.join(self.bin_dir, args[0])] + list(args[1:])
        if netns:
            cmd = ["ip", "netns", "exec", netns] + cmd
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env, text=True,
                             start_new_session=True)
        p.label = " ".join(args) + (f" (in {netns})" if netns else "")
        self.procs.append(p)
        return p

    def finish(self, expect, timeout=60):
        """Wait for every started process; each must exit 0 and print its
        expected text (expect: label substring -> regular expression)."""
        deadline = time.monotonic() + timeout
        results = []
        try:
            for p in self.procs:
                left = max(0.1, deadline - time.monotonic())
                out, err = p.communicate(timeout=left)
                results.append((p, out, err))
        except subprocess.TimeoutExpired:
            raise Failure(f"timed out after {timeout} s: " + ", ".join(p.label for p in self.procs if p.poll() is None))
        finally:
            self.kill_all()
        for p, out, err in results:
            if p.returncode != 0:
                raise Failure(f"{p.label}: exit {p.returncode}\n{out}{err}")
            for key, text in expect.items():
                if key in p.label and not re.search(text, out):
                    raise Failure(f"{p.label}: no '{text}' in its output:\n{out}{err}")
            print(f"  ok  {p.label}: {out.strip().splitlines()[-1] if out.strip() else ''}")

    def kill_all(self):
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)  # its own session: the program and 'ip netns exec'
                p.wait()
        self.procs = []


def ranks_case(run, hosts, order, gap, netns_of=None):
    for r in order:
        run.start(["compat_ranks", str(r)] + hosts, netns=netns_of(r) if netns_of else None, delay=gap)
    run.finish({f"compat_ranks {r} ": f"rank {r} of {len(hosts)}: {2 * (len(hosts) - 1)} messages exchanged"
                for r in order})


def loopback(bin_dir):
    env = dict(os.environ)
    # the host's VI/TCP port for this run: a free one, not 5995 (shared machine)
    env["VIPL_PORT"] = str(free_port())
    run = Runner(bin_dir, env)
    lo4 = ["127.0.0.1"] * 4
    print(f"loopback, VIPL_PORT={env['VIPL_PORT']}")
    print(" Developer's Guide spelling, client started 0.5 s before the server")
    run.start(["compat_devguide", "client", "127.0.0.1", "dg"])
    run.start(["compat_devguide", "server", "dg"], delay=0.5)
    run.finish({"client": "server answered 'sum 32640'", "server": "answered 'sum 32640'"})
    print(" Giganet spelling, server first")
    run.start(["compat_giganet", "server", "gn"])
    run.start(["compat_giganet", "client", "127.0.0.1", "gn"], delay=0.3)
    run.finish({"client": "8 echoes and a 2048-byte RDMA Read checked", "server": "echoed 8 messages"})
    print(" both styles at once on the host's one port (two servers, two clients)")
    run.start(["compat_giganet", "server", "gn2"])
    run.start(["compat_devguide", "server", "dg2"])
    run.start(["compat_devguide", "client", "127.0.0.1", "dg2"], delay=0.2)
    run.start(["compat_giganet", "client", "127.0.0.1", "gn2"])
    run.finish({"devguide client": "sum 32640", "giganet client": "RDMA Read checked"})
    print(" the process holding the host's port leaves; another takes it over")
    front = run.start(["compat_devguide", "server", "front-leaves"])
    time.sleep(0.3)
    run.start(["compat_giganet", "server", "stays"])
    time.sleep(0.3)
    os.killpg(front.pid, signal.SIGKILL)
    front.wait()
    run.procs.remove(front)
    run.start(["compat_giganet", "client", "127.0.0.1", "stays"], delay=0.2)
    run.finish({"client": "RDMA Read checked", "server": "echoed 8 messages"})
    print(" program with globals named like the library's helpers")
    run.start(["compat_helpers"])
    run.finish({"compat_helpers": "helpers untouched"})
    print(" 4 M-VIA-style ranks on one host, started last rank first")
    ranks_case(run, lo4, [3, 2, 1, 0], 0.3)
    print(" 4 ranks, first rank first")
    ranks_case(run, lo4, [0, 1, 2, 3], 0.3)
    print(" 4 ranks at once")
    ranks_case(run, lo4, [2, 0, 3, 1], 0.0)


def netns_available():
    if os.geteuid() != 0 or not shutil.which("ip"):
        return False
    name = f"vcprobe{os.getpid()}"
    ok = subprocess.run(["ip", "netns", "add", name], capture_output=True).returncode == 0
    subprocess.run(["ip", "netns", "del", name], capture_output=True)
    return ok


def sh(*args):
    r = subprocess.run(list(args), capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure(f"{' '.join(args)}: {r.stderr.strip()}")


def netns(bin_dir):
    if not netns_available():
        print("SKIP: network namespaces need root and 'ip netns'")
        return SKIP
    tag = os.getpid() % 100000
    a, b = f"vca{tag}", f"vcb{tag}"
    net = f"10.231.{tag % 250}"
    ha, hb = f"{net}.1", f"{net}.2"
    try:
        sh("ip", "netns", "add", a)
        sh("ip", "netns", "add", b)
        sh("ip", "link", "add", f"vcx{tag}", "netns", a, "type", "veth", "peer", "name", f"vcy{tag}", "netns", b)
        sh("ip", "-n", a, "addr", "add", f"{ha}/24", "dev", f"vcx{tag}")
        sh("ip", "-n", b, "addr", "add", f"{hb}/24", "dev", f"vcy{tag}")
        for ns, dev in ((a, f"vcx{tag}"), (b, f"vcy{tag}")):
            sh("ip", "-n", ns, "link", "set", "lo", "up")
            sh("ip", "-n", ns, "link", "set", dev, "up")
        env = dict(os.environ)
        env.pop("VIPL_PORT", None)  # fresh hosts: the default VI/TCP port 5995
        env.pop("VIPL_LISTEN", None)
        run = Runner(bin_dir, env)
        print(f"two hosts: {a} ({ha}) and {b} ({hb}), port 5995")
        print(" 4 ranks, two per host, started last rank first")
        hosts = [ha, hb, ha, hb]
        ranks_case(run, hosts, [3, 1, 2, 0], 0.3, lambda r: a if r % 2 == 0 else b)
        print(" 4 ranks at once")
        ranks_case(run, hosts, [0, 1, 2, 3], 0.0, lambda r: a if r % 2 == 0 else b)
        print(" 6 ranks: 4 on one host, 2 on the other, in mixed order")
        hosts6 = [ha, ha, ha, ha, hb, hb]
        ranks_case(run, hosts6, [5, 1, 3, 4, 0, 2], 0.2, lambda r: a if r < 4 else b)
        print(" Developer's Guide spelling across hosts, client first")
        run.start(["compat_devguide", "client", ha, "dg"], netns=b)
        run.start(["compat_devguide", "server", "dg"], netns=a, delay=0.5)
        run.finish({"client": "sum 32640", "server": "sum 32640"})
        print(" Giganet spelling across hosts, server first")
        run.start(["compat_giganet", "server", "gn"], netns=b)
        run.start(["compat_giganet", "client", hb, "gn"], netns=a, delay=0.3)
        run.finish({"client": "RDMA Read checked", "server": "echoed 8 messages"})
        print(" a host with no provider: VIP_TIMEOUT after the 3 s Timeout (VIA 9.4.4)")
        run.start(["compat_devguide", "client", hb, "nobody", "VIP_TIMEOUT"], netns=a)
        run.finish({"client": r"gave VIP_TIMEOUT after 3\d\d\d ms"})
        print(" a network with no route: VIP_NOT_REACHABLE at once")
        run.start(["compat_devguide", "client", "10.254.254.254", "x", "VIP_NOT_REACHABLE"], netns=a)
        run.finish({"client": r"gave VIP_NOT_REACHABLE after \d{1,3} ms"})
    finally:
        for ns in (a, b):
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--only", choices=["loopback", "netns"])
    o = ap.parse_args()
    rc = 0
    try:
        if o.only in (None, "loopback"):
            loopback(o.bin_dir)
        if o.only in (None, "netns"):
            rc = netns(o.bin_dir)
    except Failure as e:
        print(f"FAIL: {e}")
        return 1
    return rc


if __name__ == "__main__":
    sys.exit(main())
