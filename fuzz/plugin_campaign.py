#!/usr/bin/env python3
"""The editcap-style campaign over the Wireshark plugin (issue 18).

Damaged copies of the captures in captures/ (fuzz-pcap-damage: editcap -E
byte errors, or one of rb_pcap_mutate's structural damages; reproducible
from the seed) go through the stock tshark with the freshly built plugin,
as an unprivileged user (tests/dissector/tsharklib.py), twice each:

    tshark -r COPY -V -z vitcp,stat        one pass
    tshark -r COPY -2 -V -z vitcp,stat     two passes

A run fails when tshark is killed or exits non-zero (a sanitizer report in
the preloaded runtime aborts it) other than with its own file error (exit
2, "The file ... appears to have been cut short": the frames before the
damage are still dissected and checked), or its output shows a "Dissector bug" or
a "[Malformed Packet: P]" mark (an exception while dissecting) for P one
of our protocols: VI/TCP, IFT, PKTWAY, WARP. Wireshark 4.0's own
RPC-over-RDMA heuristic fails tvbuff.c:748 in two-pass runs on reassembled
untagged DDP messages; that one report (protocol RPCoRDMA, tvbuff.c:748)
is Wireshark's bug and is counted, not failed. Anything else is kept.

    plugin_campaign.py --damage BIN --captures DIR [--count N | --seconds S]
                       [--seed S] [--jobs J] [--keep DIR]

Needs VITCP_PLUGIN (and VITCP_PRELOAD for a sanitizer build), as the
dissector tests do. Exit 0 when every run passed, 1 otherwise.
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "dissector"))
import tsharklib  # noqa: E402

OURS = ("VI/TCP", "IFT", "PKTWAY", "WARP")
DISSECTOR_BUG = re.compile(r"Dissector bug, protocol ([^,:\]]+)[^\n]*")
MALFORMED = re.compile(r"\[Malformed Packet: ([^\]]+)\]")
MODES = (("one pass", ["-V", "-z", "vitcp,stat"]), ("two passes", ["-2", "-V", "-z", "vitcp,stat"]))


def wireshark_rpcordma_bug(line, proto):
    """Wireshark 4.0's RPCoRDMA heuristic on reassembled untagged DDP messages."""
    return proto == "RPCoRDMA" and "tvbuff.c:748" in line


def check_output(out):
    """(problems, frames, excluded) of one tshark -V output."""
    problems, excluded = [], 0
    for m in DISSECTOR_BUG.finditer(out):
        proto = m.group(1).strip()
        if wireshark_rpcordma_bug(m.group(0), proto):
            excluded += 1
        else:
            problems.append(m.group(0))
    for m in MALFORMED.finditer(out):
        if m.group(1).strip() in OURS:
            problems.append(m.group(0))
    frames = len(re.findall(r"^Frame \d+:", out, re.M))
    return problems, frames, excluded


# tshark's own verdict on a file it cannot read to the end: exit 2 with
# this message, after dissecting the frames before the damage.
FILE_ERROR = re.compile(r"^tshark: The file \"[^\"]*\" (appears to have been cut short|appears to be damaged or "
                        r"corrupt|isn't a capture file|contains record data that TShark doesn't support|"
                        r"has a packet with a network type that Wireshark doesn't support)", re.M)
SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|Sanitizer CHECK failed")


def run_tshark(capture, mode):
    """tshark with the plugin as tsharklib runs it, but keeping stdout and
    stderr of a run that ends with a file error. Returns (stdout, problem)."""
    home = tsharklib._setup_home()
    copy = tsharklib._readable_copy(capture)
    env = {"HOME": home, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
           "WIRESHARK_EXTCAP_DIR": os.path.join(home, "no-extcap")}
    os.makedirs(env["WIRESHARK_EXTCAP_DIR"], exist_ok=True)
    preload = os.environ.get("VITCP_PRELOAD", "")
    if preload:
        env["LD_PRELOAD"] = preload
        env["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=1:allocator_may_return_null=1"
        env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
    cmd = ["tshark", "-r", copy] + list(mode)
    if os.geteuid() == 0:
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "env"] + \
              ["%s=%s" % kv for kv in env.items()] + cmd
        env = None
    try:
        proc = subprocess.run(cmd, env=env, cwd=home, capture_output=True, text=True, errors="replace",
                              timeout=120)
    except subprocess.TimeoutExpired:
        return "", "timed out after 120 s"
    finally:
        os.unlink(copy)
    if SANITIZER.search(proc.stderr):
        return proc.stdout, "sanitizer report: " + proc.stderr[-3000:]
    # tshark also logs dissector bugs on stderr: ours fail there too
    problems, _, _ = check_output(proc.stderr)
    if problems:
        return proc.stdout, "on stderr: " + "; ".join(problems)
    if proc.returncode == 2 and FILE_ERROR.search(proc.stderr):
        return proc.stdout, None
    if proc.returncode != 0:
        return proc.stdout, "exit %d: %s" % (proc.returncode, proc.stderr[-3000:])
    return proc.stdout, None


def one_capture(args, workdir, capture, seed):
    damaged = os.path.join(workdir, "d%d-%s" % (seed, os.path.basename(capture)))
    desc = subprocess.run([args.damage, capture, damaged, str(seed)], check=True, capture_output=True,
                          text=True).stdout.strip()
    result = {"capture": capture, "seed": seed, "desc": desc, "runs": 0, "frames": 0, "excluded": 0,
              "problems": []}
    for name, mode in MODES:
        out, problem = run_tshark(damaged, mode)
        if problem:
            result["problems"].append("%s: %s" % (name, problem))
            continue
        result["runs"] += 1
        problems, frames, excluded = check_output(out)
        result["frames"] += frames
        result["excluded"] += excluded
        result["problems"] += ["%s: %s" % (name, p) for p in problems]
    if result["problems"] and args.keep:
        os.makedirs(args.keep, exist_ok=True)
        shutil.copy(damaged, args.keep)
    os.unlink(damaged)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--damage", required=True, help="the fuzz-pcap-damage binary")
    ap.add_argument("--captures", required=True, help="folder of .pcap/.pcapng files")
    ap.add_argument("--count", type=int, default=0, help="damaged captures to run")
    ap.add_argument("--seconds", type=float, default=0, help="or: run for this long")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("VITCP_FUZZ_SEED", "20261125")))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--keep", help="copy failing damaged captures here")
    args = ap.parse_args()
    if not args.count and not args.seconds:
        ap.error("give --count or --seconds")
    captures = sorted(os.path.join(args.captures, f) for f in os.listdir(args.captures)
                      if f.endswith((".pcap", ".pcapng")))
    if not captures:
        ap.error("no captures in %s" % args.captures)
    print("# plugin campaign: seed %d (replay one: fuzz-pcap-damage CAPTURE OUT SEED+i)" % args.seed, flush=True)
    tsharklib.run_raw(["-v"])  # sets up the private plugin folder once, before the threads
    assert args.jobs >= 1
    workdir = tempfile.mkdtemp(prefix="vitcp-plugin-campaign-")
    start = time.monotonic()
    totals = {"captures": 0, "runs": 0, "frames": 0, "excluded": 0}
    failures = []
    i = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        pending = set()

        def more():
            if args.count:
                return i < args.count
            return time.monotonic() - start < args.seconds

        while more() or pending:
            while more() and len(pending) < 2 * args.jobs:
                pending.add(pool.submit(one_capture, args, workdir, captures[i % len(captures)], args.seed + i))
                i += 1
            done, pending = concurrent.futures.wait(pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for f in done:
                r = f.result()
                totals["captures"] += 1
                for k in ("runs", "frames", "excluded"):
                    totals[k] += r[k]
                if r["problems"]:
                    failures.append(r)
                    print("FAIL %s seed %d (%s):\n  %s" % (os.path.basename(r["capture"]), r["seed"], r["desc"],
                                                          "\n  ".join(r["problems"][:5])), flush=True)
    shutil.rmtree(workdir, ignore_errors=True)
    secs = time.monotonic() - start
    print("plugin campaign: %d damaged captures, %d tshark runs (one and two passes, -V, -z vitcp,stat), "
          "%d frames dissected, %d Wireshark RPCoRDMA tvbuff.c:748 reports excluded, %d failing captures, "
          "%.0f s" % (totals["captures"], totals["runs"], totals["frames"], totals["excluded"], len(failures), secs))
    expected_runs = totals["captures"] * len(MODES)
    if failures or totals["runs"] != expected_runs or totals["captures"] == 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
