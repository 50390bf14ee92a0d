"""The built plugin is the one tshark loads, registers all four protocols,
carries the project's version, and its fields follow one naming scheme with
a description a user can follow on every field."""
import os
import re
import unittest
import tsharklib

PROTOS = ("vitcp", "ift", "pktway", "warp")


def project_version():
    with open(os.path.join(os.environ["VITCP_SOURCE_DIR"], "CMakeLists.txt")) as f:
        return re.search(r"project\(vitcp VERSION ([0-9.]+)", f.read()).group(1)


def our_fields():
    """(abbrev, name, blurb) of every field of the four protocols."""
    rows = []
    for line in tsharklib.run_raw(["-G", "fields"]).splitlines():
        col = line.split("\t")
        if col[0] == "F" and col[4] in PROTOS:
            rows.append((col[2], col[1], col[7] if len(col) > 7 else ""))
    return rows


class PluginLoads(unittest.TestCase):
    def test_protocols_registered(self):
        protos = tsharklib.run_raw(["-G", "protocols"])
        names = {line.split("\t")[2] for line in protos.splitlines() if line.count("\t") >= 2}
        for proto in PROTOS:
            self.assertIn(proto, names)

    def test_version_is_the_projects(self):
        line = [l for l in tsharklib.run_raw(["-G", "plugins"]).splitlines() if "vitcp.so" in l]
        self.assertEqual(len(line), 1)
        self.assertEqual(line[0].split("\t")[1], project_version())


class Conventions(unittest.TestCase):
    def test_every_field_has_a_description_without_internal_references(self):
        fields = [f for f in our_fields() if ".expert." not in f[0]]
        self.assertGreater(len(fields), 150)
        self.assertEqual([f[0] for f in fields if not f[2].strip()], [])
        internal = re.compile(r"spec-decisions|decisions\.md|\b[VPIW][0-9]{1,2}\b")
        self.assertEqual([f[0] for f in fields if internal.search(f[2])], [])

    def test_one_naming_scheme(self):
        abbrevs = {f[0] for f in our_fields()}
        for proto in PROTOS:
            if proto in ("vitcp", "warp"):  # the two that reassemble
                self.assertIn(proto + ".reassembled_in", abbrevs)
                self.assertIn(proto + ".reassembled.length", abbrevs)
            self.assertIn(proto + ".rule", abbrevs)
        self.assertFalse([a for a in abbrevs if a.endswith(".reassembled.in")])
        # <proto>.expert.<requirement ID without its protocol prefix>.<severity>
        expert = [a for a in abbrevs if ".expert." in a]
        pat = re.compile(r"^(vitcp|ift|pktway|warp)\.expert\.[a-z0-9_]+\.(error|warning|note)$")
        self.assertEqual([a for a in expert if not pat.match(a)], [])
        prefixed = re.compile(r"^(vitcp\.expert\.vitcp_|ift\.expert\.ift_|pktway\.expert\.eep_|warp\.expert\.warp_)")
        self.assertEqual([a for a in expert if prefixed.match(a)], [])
        for name in ("vitcp.expert.3_6_crc_valid.error", "ift.expert.5_1_hdr_crc.error",
                     "pktway.expert.6h_dl_fits.error", "warp.expert.a_adler_valid.error"):
            self.assertIn(name, abbrevs)

    def test_warp_and_eep_expert_summaries_are_sentences(self):
        names = {f[0]: f[1] for f in our_fields() if f[0].startswith(("warp.expert.", "pktway.expert."))}
        self.assertEqual(names["warp.expert.a_adler_valid.error"],
                         "[WARP-A-ADLER-VALID] Zlib Adler-32 over every byte before it, big-endian.")
        self.assertEqual(names["pktway.expert.6h_dl_fits.error"],
                         "[EEP-6H-DL-FITS] The data block of DL words must fit before the TAIL (and any trailer fields).")
        for abbrev, name in names.items():
            if ".other." in abbrev:
                continue
            text = name.split("] ", 1)[1]
            first = text.lstrip('"')  # a sentence may open by quoting the draft
            self.assertTrue((first[0].isupper() or first[0].isdigit()) and text.endswith("."), name)
            self.assertIsNone(re.search(r"^[VPIW][0-9]+: |\([VPIW][0-9]+\)", text), name)


if __name__ == "__main__":
    unittest.main()
