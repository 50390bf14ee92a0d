#!/usr/bin/env python3
"""Every IFT and EEP catalog entry quotes its draft word for word, so a
reader can grep the draft for it: each quote (pieces separated by "...")
occurs in the draft once line breaks and runs of spaces are folded.

Usage: check_quotes.py SOURCE_DIR [SEEDS_DIR]
SEEDS_DIR defaults to SOURCE_DIR/../shared/seeds (where README.md says the
drafts are); without the drafts the test is skipped (exit 77).
"""
import os
import re
import sys

DRAFTS = {
    "ift.def": "ift-draft-williams-iwarp-ift-01.txt",
    "eep.def": "pktway-eep-draft-03.txt",
}
ENTRY = re.compile(r'(?m)^VW_REQ\(\s*\w+\s*,\s*"([^"]+)"\s*,\s*\w+\s*,\s*"[^"]*"\s*,\s*[\w|() ]+,\s*"((?:[^"\\]|\\.)*)"')
SKIP = 77


def fold(text):
    return re.sub(r"\s+", " ", text).strip()


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    seeds = sys.argv[2] if len(sys.argv) > 2 else os.path.join(src, "..", "shared", "seeds")
    bad = checked = 0
    for def_name, draft_name in DRAFTS.items():
        draft_path = os.path.join(seeds, draft_name)
        if not os.path.exists(draft_path):
            print("skipped: %s not found" % draft_path)
            return SKIP
        with open(draft_path, encoding="utf-8", errors="replace") as f:
            draft = fold(f.read())
        with open(os.path.join(src, "wire", "catalog", def_name), encoding="utf-8") as f:
            entries = ENTRY.findall(f.read())
        for rid, quote in entries:
            checked += 1
            pieces = [p for p in re.split(r"\s*\.\.\.\s*", quote.replace('\\"', '"')) if p]
            missing = [p for p in pieces if fold(p) not in draft]
            if not pieces or missing:
                bad += 1
                print("%s: not in %s: %s" % (rid, draft_name, " | ".join(missing) or "(empty quote)"))
    print("%d quotes checked, %d not found in the drafts" % (checked, bad))
    return 1 if bad or checked < 100 else 0


if __name__ == "__main__":
    sys.exit(main())
