#!/usr/bin/env python3
"""`vitcp-conform lint` output of every capture we have, to prove a change of
the lint's structure changes none of its output (issue 32: lint as modules).

  lint_outputs.py collect CORPUS -- CMD...   run CMD (a test) with VITCP_CONFORM
                                             set to a wrapper that keeps a copy
                                             of each capture the test lints, and
                                             the arguments it was linted with
  lint_outputs.py record CONFORM OUT [CORPUS...]
                                             lint every shipped capture with
                                             each option set, each kept
                                             capture with its own arguments
                                             (and the captures in CORPUS with
                                             the first two option sets):
                                             one file per run (stdout, stderr,
                                             exit status) in OUT
  lint_outputs.py compare OLD NEW            the runs whose output differs

The shipped captures are captures/, conformance/cases/**/*.pcapng and
tests/**/fixtures/**. The only thing normalised is the lint's own run time
("(0.012 s)", "seconds": 0.012), which differs from run to run.
"""
import glob
import os
import re
import shutil
import stat
import subprocess
import sys

SOURCE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# the options the tests and the docs use, on every shipped capture
OPTION_SETS = [
    [],
    ["--json"],
    ["--json", "--port", "5996"],
    ["--port", "6000", "--ift-port", "5995", "--warp-port", "5996"],
    ["--json", "--ift-port", "5997", "--warp-port", "5996"],
    ["--json", "--eep-port", "5995"],
    ["--json", "--eep-router", "02:00:00:00:00:01,10.0.0.1,fe80::1"],
    ["--eep-router", "10.0.0.2"],
]

TIME = re.compile(rb'\(\d+\.\d+ s\)|"seconds": \d+\.\d+')

WRAPPER = """#!/bin/sh
# keeps a copy of what a test lints (lint_outputs.py collect)
if [ "$1" = lint ]; then
  d=$(mktemp -d "%(corpus)s/run.XXXXXX")
  for a in "$@"; do
    if [ -f "$a" ]; then cp "$a" "$d/capture"; printf '%%s\\n' @CAPTURE@ >>"$d/args"
    else printf '%%s\\n' "$a" >>"$d/args"; fi
  done
fi
exec "%(real)s" "$@"
"""


def shipped():
    found = sorted(glob.glob(os.path.join(SOURCE, "captures", "*.pcap*")))
    found += sorted(glob.glob(os.path.join(SOURCE, "conformance", "cases", "**", "*.pcapng"), recursive=True))
    found += sorted(p for p in glob.glob(os.path.join(SOURCE, "tests", "**", "fixtures", "**", "*"), recursive=True)
                    if os.path.isfile(p) and re.search(r"\.pcap(ng)?$", p))
    return found


def run(conform, args, out_path):
    p = subprocess.run([conform] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    with open(out_path, "wb") as f:
        f.write(b"exit %d\n--- stdout\n" % p.returncode)
        f.write(TIME.sub(b"(TIME)", p.stdout))
        f.write(b"--- stderr\n")
        f.write(TIME.sub(b"(TIME)", p.stderr))


def record(conform, out, corpora):
    os.makedirs(out, exist_ok=True)
    n = 0
    for path in shipped():
        rel = os.path.relpath(path, SOURCE).replace("/", "_")
        for k, opts in enumerate(OPTION_SETS):
            run(conform, ["lint"] + opts + [path], os.path.join(out, "%s.%d" % (rel, k)))
            n += 1
    for corpus in corpora:
        # a folder of captures a test made (not by collect): the first two option sets
        for path in sorted(glob.glob(os.path.join(corpus, "*.pcap*"))):
            for k, opts in enumerate(OPTION_SETS[:2]):
                run(conform, ["lint"] + opts + [path], os.path.join(out, "%s_%s.%d" % (
                    os.path.basename(corpus), os.path.basename(path), k)))
                n += 1
        for d in sorted(glob.glob(os.path.join(corpus, "run.*"))):
            with open(os.path.join(d, "args")) as f:
                args = [a if a != "@CAPTURE@" else os.path.join(d, "capture") for a in f.read().splitlines()]
            run(conform, args, os.path.join(out, "%s_%s" % (os.path.basename(corpus), os.path.basename(d))))
            n += 1
    print("lint_outputs: %d runs recorded in %s" % (n, out))


def compare(old, new):
    a, b = set(os.listdir(old)), set(os.listdir(new))
    bad = sorted(a ^ b)
    for name in sorted(a & b):
        with open(os.path.join(old, name), "rb") as f1, open(os.path.join(new, name), "rb") as f2:
            if f1.read() != f2.read():
                bad.append(name)
    for name in bad:
        print("differs: %s" % name)
    print("lint_outputs: %d runs compared, %d differ" % (len(a | b), len(bad)))
    return 1 if bad else 0


def collect(corpus, cmd):
    corpus = os.path.abspath(corpus)
    os.makedirs(corpus, exist_ok=True)
    real = os.environ.get("VITCP_CONFORM") or os.path.join(SOURCE, "build-test", "conformance", "vitcp-conform")
    wrapper = os.path.join(corpus, "vitcp-conform")
    with open(wrapper, "w") as f:
        f.write(WRAPPER % {"corpus": corpus, "real": os.path.abspath(real)})
    os.chmod(wrapper, os.stat(wrapper).st_mode | stat.S_IEXEC | stat.S_IXGRP | stat.S_IXOTH)
    os.chmod(corpus, 0o777)  # tests may run their tools as nobody
    env = dict(os.environ, VITCP_CONFORM=wrapper)
    return subprocess.run(cmd, env=env).returncode


def main(argv):
    if len(argv) >= 4 and argv[1] == "collect" and argv[3] == "--":
        return collect(argv[2], argv[4:])
    if len(argv) >= 4 and argv[1] == "record":
        record(argv[2], argv[3], argv[4:])
        return 0
    if len(argv) == 4 and argv[1] == "compare":
        return compare(argv[2], argv[3])
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
