"""vitcp-trafgen's EEP mutations (issue 22's and issue 19's: one for every
EEP rule a capture can show), over Ethernet and UDP: `vitcp-conform lint`
and tshark with the plugin both flag the mutated frame with the mutation's
ID and nothing else at warning or above, give every frame the same IDs,
and the mutation adds its ID to that one frame and nothing else to any
frame but the notes in ALSO_NOTED (compared with the same scenario
unmutated). A rule checked at note
level (NOTED) is flagged as a note with no warning or error anywhere.

Also: the EEP catalog entries checked passively that have no mutation are
exactly the ones docs/trafgen.md lists with a reason (NO_MUTATION), so a
new passive rule needs a mutation or a documented reason."""
import json
import os
import re
import subprocess
import tempfile
import unittest

import tsharklib

BUILD = os.environ.get("VITCP_BUILD_DIR", "")
TRAFGEN = os.path.join(BUILD, "trafgen", "vitcp-trafgen")
CONFORM = os.path.join(BUILD, "conformance", "vitcp-conform")
SOURCE = os.environ.get("VITCP_SOURCE_DIR", "")

BREAKS = {
    "EEP-1B-8B-WORDS": "eep-frames",
    "EEP-5A-L2RH-LEN": "eep-frames",
    "EEP-5B-SYMBOL-LEN": "eep-frames",
    "EEP-10-EI-SHIFT": "eep-router",
    "EEP-8-DB-UNMODIFIED": "eep-router",
    "EEP-5-HR-CONSUMES-L2RH": "eep-router",
    # issue 19
    "EEP-6C-DT-KIND": "eep-frames",
    "EEP-6G-PL-ZERO-NO-DATA": "eep-frames",
    "EEP-4A-TRUNCATED": "eep-frames",
    "EEP-6I-H-FLAG": "eep-frames",
    "EEP-9-OT-UNSIZED": "eep-frames",
    "EEP-7-MANDATORY-UNKNOWN": "eep-frames",
    "EEP-5B-SYMBOL-PRIORITY": "eep-frames",
    "EEP-6E-ERR-TE": "eep-frames",
    "EEP-5-SYMBOL-CONSUMED": "eep-router",
    "EEP-4B-ONLY-TAIL-MODIFIED": "eep-router",
}

# Rules whose check is a note by the catalog's own reading (SHOULD NOT
# where nothing is known to say more, P8's trailer and enumeration, P4's
# priority): the mutation is flagged as a note, never a warning.
NOTED = {
    "EEP-9-OT-UNSIZED", "EEP-7-MANDATORY-UNKNOWN", "EEP-5B-SYMBOL-PRIORITY", "EEP-6E-ERR-TE",
}

# Notes a mutation brings along on its frame, and why: a router's copy that
# kept its records still carries records not yet consumed (4B, a note).
ALSO_NOTED = {
    "EEP-5-HR-CONSUMES-L2RH": {"EEP-4B-ROUTES-CONSUMED"},
    "EEP-5-SYMBOL-CONSUMED": {"EEP-4B-ROUTES-CONSUMED"},
    # P30: OH fields with h=0 read as trailer fields would need an OH (the symptom)
    "EEP-6I-H-FLAG": {"EEP-9-OT-NEEDS-OH"},
}

# The heading of docs/trafgen.md's list of EEP passive rules without a mutation.
NO_MUTATION_HEADING = "EEP passive rules without a mutation"


def lint_ids(path):
    proc = subprocess.run([CONFORM, "lint", "--json", path], capture_output=True, text=True, timeout=60)
    if proc.returncode not in (0, 1):
        raise RuntimeError(proc.stderr)
    all_ids, serious = {}, {}
    for i in json.loads(proc.stdout)["issues"]:
        if i["requirement"]:
            all_ids.setdefault(i["frame"], set()).add(i["requirement"])
            if i["severity"] != "note":
                serious.setdefault(i["frame"], set()).add(i["requirement"])
    return all_ids, serious


def documented_no_mutation():
    """IDs listed (as `- ID:` items) under NO_MUTATION_HEADING in docs/trafgen.md."""
    with open(os.path.join(SOURCE, "docs", "trafgen.md")) as f:
        text = f.read()
    start = text.index(NO_MUTATION_HEADING)
    section = text[start:]
    end = re.search(r"\n#", section)
    section = section[:end.start()] if end else section
    return re.findall(r"^- (EEP-[A-Z0-9-]+[A-Z0-9]):", section, re.M)


class TrafgenBreaksInLintAndPlugin(unittest.TestCase):
    def test_each_break_flagged_by_both(self):
        tmp = tempfile.mkdtemp(prefix="vitcp-eep-breaks-")
        problems = []
        baseline = {}
        for scenario in set(BREAKS.values()):
            for udp in (False, True):
                path = os.path.join(tmp, "%s-%s.pcap" % (scenario, "udp" if udp else "eth"))
                args = [TRAFGEN, scenario, "--count", "2", "-q", "--no-meta", "-w", path] + (["--eep-udp"] if udp else [])
                subprocess.run(args, check=True, capture_output=True, timeout=60)
                baseline[(scenario, udp)] = lint_ids(path)[0]
        for rule, scenario in BREAKS.items():
            for udp in (False, True):
                path = os.path.join(tmp, "%s-%s.pcap" % (rule, "udp" if udp else "eth"))
                args = [TRAFGEN, scenario, "--break", rule, "--target", "1", "--count", "2", "-q", "--no-meta",
                        "-w", path] + (["--eep-udp"] if udp else [])
                subprocess.run(args, check=True, capture_output=True, timeout=60)
                all_ids, serious = lint_ids(path)
                rows = tsharklib.fields(path, ["frame.number", "pktway.rule"])
                plugin = {int(r[0]): set(r[1].split(",")) for r in rows if r[1]}
                if plugin != all_ids:
                    problems.append("%s: lint %s, plugin %s" % (path, all_ids, plugin))
                want_serious = [] if rule in NOTED else [{rule}]
                if list(serious.values()) != want_serious:
                    problems.append("%s: lint's warnings and errors %s" % (path, serious))
                base = baseline[(scenario, udp)]
                added = {f: ids - base.get(f, set()) for f, ids in all_ids.items() if ids - base.get(f, set())}
                if list(added.values()) != [{rule} | ALSO_NOTED.get(rule, set())]:
                    problems.append("%s: IDs added to the unmutated capture's frames %s" % (path, added))
        self.assertEqual(problems, [], "\n".join(problems))

    def test_passive_rules_without_mutation_are_documented(self):
        listing = subprocess.run([CONFORM, "list", "--json", "--protocol", "EEP"], capture_output=True, text=True,
                                 check=True, timeout=60).stdout
        passive = {r["id"] for r in json.loads(listing)["requirements"] if "passive" in r["checks"]}
        mutations = subprocess.run([TRAFGEN, "--list-mutations"], capture_output=True, text=True, check=True,
                                   timeout=60).stdout
        mutated = {line.split()[0] for line in mutations.splitlines() if line.strip().startswith("EEP-")}
        documented = documented_no_mutation()
        self.assertEqual(len(documented), len(set(documented)), "an ID listed twice in docs/trafgen.md")
        self.assertEqual(sorted(passive - mutated), sorted(documented))
        self.assertEqual(set(BREAKS) - mutated, set())


if __name__ == "__main__":
    unittest.main()
