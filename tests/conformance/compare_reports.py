#!/usr/bin/env python3
"""Record and compare the VI/TCP suite's JSON reports before and after an
engine change (issue 32: the same verdicts, requirement IDs and frames per
case; timings may differ).

  compare_reports.py record DIR      run the configurations below against
                                     vipl-peer, one DIR/NAME.json each
  compare_reports.py compare OLD... NEW
                                     the differences per configuration and
                                     case; exit 1 when there are any. With
                                     several OLD recordings of one build, a
                                     case differs when NEW matches none of
                                     them (the relay cases' frames vary with
                                     timing: which of the last ACK and FIN
                                     is the recording's last packet)

Configurations: the base run (active and listen-mode cases, relay and
capture cases), the base run with every case through the relay
(--relay-all), a few choice combinations of vipl-peer and a few faults.
Each run records a capture (DIR/NAME.pcapng), so that the reports carry
frame numbers. A frame number depends on how many TCP segments the
recording of the cases before held (the tester records each read as one),
so frames are compared by what they hold: the TCP connection's ordinal in
the run, the direction, the TCP flags and the payload's length (tshark
reads them).

Environment as for test_vipl_peer_suite.py (VIPL_PEER, VITCP_CONFORM,
VITCP_CASES), VIPL_SUITE_JOBS (parallel runs, default 4).
"""
import json
import os
import subprocess
import sys

import peerlib
import test_vipl_peer_suite as suite

CONFIGS = [
    ("base", [], []),
    ("base-relay-all", [], ["--relay-all"]),
    ("choice-no-crc", ["--choice", "no-crc"], []),
    ("choice-seg-size", ["--choice", "seg-size=1400"], []),
    ("choice-level-rr", ["--choice", "level=rr"], []),
    ("choice-dfc", ["--choice", "dfc,credits=1,level=rr"], []),
    ("choice-mix-relay-all", ["--choice", "no-crc,seg-size=1400,mtu=32768,offer-urgent"], ["--relay-all"]),
    ("choice-no-rdma", ["--choice", "no-rdma,credits=1,read-window=1,crc-on-reject"], []),
    ("fault-omit-crc", ["--fault", "omit-crc"], []),
    ("fault-no-read-response", ["--fault", "no-read-response"], []),
    ("fault-bad-crc-accepted", ["--fault", "bad-crc-accepted"], []),
    ("fault-keep-malformed-open", ["--fault", "keep-malformed-open"], []),
    ("fault-urgent-mid", ["--fault", "urgent-mid"], []),
]


def record(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    jobs = int(os.environ.get("VIPL_SUITE_JOBS", "4"))

    def one(cfg):
        name, peer_args, conform_args = cfg
        rc, report, text, _, _ = suite.run_suite(peer_args, list(conform_args) +
                                                 ["--capture", os.path.join(out_dir, name + ".pcapng")])
        with open(os.path.join(out_dir, name + ".json"), "w") as f:
            json.dump({"exit": rc, "report": report, "text": text}, f, indent=1)
        return name, rc

    for name, rc in peerlib.parallel(one, CONFIGS, jobs):
        print("%-28s exit %d" % (name, rc))


def frame_contents(pcap):
    """{frame number: (connection ordinal, direction, TCP flags, payload length)}:
    not the payload's bytes, which hold the target's own initial numbers."""
    if not os.path.exists(pcap):
        return {}
    out = subprocess.run(["tshark", "-r", pcap, "-T", "fields", "-e", "frame.number", "-e", "tcp.stream",
                          "-e", "tcp.srcport", "-e", "tcp.dstport", "-e", "tcp.flags", "-e", "tcp.len"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, check=True).stdout
    frames, client = {}, {}
    for line in out.splitlines():
        no, stream, sport, dport, flags, length = (line.split("\t") + [""] * 6)[:6]
        client.setdefault(stream, sport)  # a connection's first packet is its client's SYN
        direction = "client" if sport == client[stream] else "server"
        frames[int(no)] = (stream, direction, flags, length)
    return frames


def key(case, frames):
    return (case["verdict"], case.get("failed_requirement"),
            tuple(frames.get(f, f) for f in case.get("frames", [])))


def load(run_dir, name):
    with open(os.path.join(run_dir, name + ".json")) as f:
        run = json.load(f)
    frames = frame_contents(os.path.join(run_dir, name + ".pcapng"))
    return run, {c["id"]: (c, key(c, frames)) for c in (run["report"] or {}).get("cases", [])}


def compare(old_dirs, new_dir):
    differences = 0
    for name, _, _ in CONFIGS:
        try:
            olds = [load(d, name) for d in old_dirs]
            new, after = load(new_dir, name)
        except OSError as e:
            print("%s: %s" % (name, e))
            differences += 1
            continue
        if new["exit"] not in [old["exit"] for old, _ in olds]:
            print("%s: exit %d, now %d" % (name, olds[0][0]["exit"], new["exit"]))
            differences += 1
        ids = set(after)
        for _, before in olds:
            ids |= set(before)
        for cid in sorted(ids):
            was = [before.get(cid) for _, before in olds]
            now = after.get(cid)
            if now is None or None in was:
                print("%s %s: %s" % (name, cid, "gone" if now is None else "new"))
                differences += 1
            elif now[1] not in [w[1] for w in was]:
                a, b = was[0][0], now[0]
                print("%s %s:\n  was %s %s %s %s\n  now %s %s %s %s" %
                      (name, cid, a["verdict"], a.get("failed_requirement"), a.get("frames"), a["message"],
                       b["verdict"], b.get("failed_requirement"), b.get("frames"), b["message"]))
                differences += 1
        print("%-28s %d cases compared" % (name, len(after)))
    print("%d difference(s)" % differences)
    return 1 if differences else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "record":
        record(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2:-1], sys.argv[-1]))
    else:
        sys.exit(__doc__)
