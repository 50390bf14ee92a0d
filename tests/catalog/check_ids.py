#!/usr/bin/env python3
"""Every requirement ID written anywhere in the project exists in the one
catalog (wire/catalog/*.def): nothing else invents IDs, so a report line, an
expert item or a test can always be traced back to the spec text.

Usage: check_ids.py SOURCE_DIR
"""
import os
import re
import sys

ID = re.compile(r"\b(?:VITCP|IFT|EEP|WARP|VIA)-[0-9A-Z][0-9A-Za-z.]*(?:-[0-9A-Z]+)+\b")
DEF_ENTRY = re.compile(r'VW_REQ\(\s*\w+\s*,\s*"([^"]+)"')
SCAN_DIRS = ["wire", "dissector", "conformance", "trafgen", "vipl-ref", "warp-ref", "ift-ref", "netio", "tests", "bench", "captures"]
SCAN_EXT = (".c", ".h", ".py", ".sh", ".case", ".txt", ".cmake", ".meta", ".script")
# Prefixes that look like IDs but are not requirement IDs.
NOT_IDS = re.compile(r"^(?:VIA-1\.0|IFT-01|EEP-03|WARP-00)\b|NO-SUCH")


def catalog(src):
    ids = set()
    d = os.path.join(src, "wire", "catalog")
    for name in sorted(os.listdir(d)):
        if name.endswith(".def"):
            with open(os.path.join(d, name), encoding="utf-8") as f:
                ids.update(DEF_ENTRY.findall(f.read()))
    return ids


def main():
    src = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
    known = catalog(src)
    if len(known) < 100:
        print("catalog looks empty (%d IDs)" % len(known))
        return 1
    unknown = {}
    for top in SCAN_DIRS:
        root = os.path.join(src, top)
        for dirpath, _, files in os.walk(root):
            for name in files:
                path = os.path.join(dirpath, name)
                if not name.endswith(SCAN_EXT) or path.endswith(".def"):
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    for lineno, line in enumerate(f, 1):
                        for m in ID.finditer(line):
                            rid = m.group(0).rstrip(".")
                            if rid in known or NOT_IDS.search(rid):
                                continue
                            # IDs used as prefixes in patterns ("VITCP-3.2-") are fine
                            if any(k.startswith(rid + "-") for k in known):
                                continue
                            unknown.setdefault(rid, []).append("%s:%d" % (os.path.relpath(path, src), lineno))
    for rid, where in sorted(unknown.items()):
        print("unknown requirement ID %s used at %s" % (rid, ", ".join(where[:5])))
    print("%d catalog IDs; %d unknown IDs in sources" % (len(known), len(unknown)))
    return 1 if unknown else 0


if __name__ == "__main__":
    sys.exit(main())
