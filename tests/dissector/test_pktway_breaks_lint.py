"""The vitcp-trafgen EEP mutations added for issue 22 (EEP-1B-8B-WORDS,
EEP-5A-L2RH-LEN, EEP-5B-SYMBOL-LEN and, on eep-router's router copies,
EEP-10-EI-SHIFT, EEP-8-DB-UNMODIFIED, EEP-5-HR-CONSUMES-L2RH), over
Ethernet and UDP: `vitcp-conform lint` and tshark with the plugin both flag
the mutated frame with the mutation's ID and nothing else at warning or
above, and give every frame the same IDs."""
import json
import os
import subprocess
import tempfile
import unittest

import tsharklib

BUILD = os.environ.get("VITCP_BUILD_DIR", "")
TRAFGEN = os.path.join(BUILD, "trafgen", "vitcp-trafgen")
CONFORM = os.path.join(BUILD, "conformance", "vitcp-conform")

BREAKS = {
    "EEP-1B-8B-WORDS": "eep-frames",
    "EEP-5A-L2RH-LEN": "eep-frames",
    "EEP-5B-SYMBOL-LEN": "eep-frames",
    "EEP-10-EI-SHIFT": "eep-router",
    "EEP-8-DB-UNMODIFIED": "eep-router",
    "EEP-5-HR-CONSUMES-L2RH": "eep-router",
}


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


class TrafgenBreaksInLintAndPlugin(unittest.TestCase):
    def test_each_break_flagged_by_both(self):
        tmp = tempfile.mkdtemp(prefix="vitcp-eep-breaks-")
        problems = []
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
                if list(serious.values()) != [{rule}]:
                    problems.append("%s: lint's warnings and errors %s" % (path, serious))
        self.assertEqual(problems, [])


if __name__ == "__main__":
    unittest.main()
