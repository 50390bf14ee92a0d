"""conform_datagram: the core's datagram transport (C47) and the EEP
module's vocabulary, against a tiny UDP responder written here (not a
PacketWay node: it answers every message whose header it reads, swapping
DT and SA, and passes a message for address 2 to the tester's link 1 with
its TAIL shifted; a message with RZ 0x55 it answers twice, one with V 0x1
not at all).

1. Sends go out of the named link, expects take what came in on theirs,
   expect-nothing fails on a message and passes on silence, data=echo
   compares the data block; a case that needs link 1 is skipped without
   --link 1=...; the capture holds the datagrams as UDP.
2. A case's EEP rule broken by the responder (an odd datagram length) fails
   it under that rule's ID.
3. The parser refuses link=, 'links' and expect-nothing misuse: link= on a
   TCP protocol, close in a datagram case, link=1 without 'links 2'.

Environment: VITCP_CONFORM (program).
"""
import os
import socket
import struct
import subprocess
import tempfile
import threading
import json
import unittest

from peerlib import free_udp_port

CONFORM = os.environ.get("VITCP_CONFORM", "")
NODE = 0x10


class Responder:
    def __init__(self, odd=False, mute=False):
        self.mute = mute  # answers nothing (a node that offers no echo)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.far = None  # the tester's link 1
        self.odd = odd
        self.stop = False
        self.sock.settimeout(0.1)
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            try:
                data, src = self.sock.recvfrom(65536)
            except socket.timeout:
                continue
            if len(data) < 24:
                continue
            vp, dt_hi, dt_lo, te, pt, edl, hrz, sa_hi, sa_lo = struct.unpack(">BBHHHIBBH", data[:16])
            dt = (dt_hi << 16) | dt_lo
            sa = (sa_hi << 16) | sa_lo
            if vp >> 6 or self.mute:
                continue
            body = data[16:-8]
            ei = struct.unpack(">Q", data[-8:])[0]
            if dt == 2 and self.far:
                out = data[:-8] + struct.pack(">Q", (ei << 1) & 0xFFFFFFFFFFFFFFFF)
                self.sock.sendto(out, self.far)
                continue
            hdr = struct.pack(">BBHHHIBBH", vp, sa >> 16, sa & 0xFFFF, te, pt, edl, hrz & 0x7F, NODE >> 16,
                              NODE & 0xFFFF)
            out = hdr + body + struct.pack(">Q", 0)
            if self.odd:
                out += b"\0\0\0\0"
            self.sock.sendto(out, src)
            if hrz & 0x7F == 0x55:
                self.sock.sendto(out, src)

    def close(self):
        self.stop = True
        self.thread.join(5)
        self.sock.close()


CASES = {
    "a-echo.case": """protocol eep
case dg-echo
require EEP-4B-BIG-ENDIAN
connect
send RRP dt=node payload=21
expect RRP dt=1 sa=node payload=21 data=echo
check RRP ei=0 [EEP-10-EI-SOURCE-ZERO]
""",
    "b-silence.case": """protocol eep
case dg-silence
require EEP-6A-VERSION
connect
send RRP dt=node v=1
expect-nothing 300
""",
    "c-twice.case": """protocol eep
case dg-twice
require EEP-6J-RZ-IGNORED
connect
send RRP dt=node rz=0x55
expect RRP
expect-nothing 300
""",
    "d-far.case": """protocol eep
case dg-far
require EEP-1A-HR-FORWARDS
links 2
connect
send RRP dt=2 ei=3 payload=8 link=0
expect RRP link=1 ei=6 payload=8 data=echo
expect-nothing 200 link=0
""",
    "e-wrong-link.case": """protocol eep
case dg-wrong-link
require EEP-1A-HR-FORWARDS
links 2
connect
send RRP dt=2 payload=8
expect RRP link=0 [EEP-1C-LEADING-L2RH]
""",
}


def run(port, cases, *extra):
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "eep"))
        for name, text in cases.items():
            with open(os.path.join(d, "eep", name), "w") as f:
                f.write(text)
        js, cap = os.path.join(d, "r.json"), os.path.join(d, "r.pcapng")
        p = subprocess.run([CONFORM, "run", "--protocol", "eep", "--target", "127.0.0.1:%d" % port, "--cases", d,
                            "--json", js, "--capture", cap, "--slack", "700"] + list(extra),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
        rep = None
        if os.path.exists(js):
            with open(js) as f:
                rep = json.load(f)
        capture = b""
        if os.path.exists(cap):
            with open(cap, "rb") as f:
                capture = f.read()
    return p.returncode, rep, p.stdout + p.stderr, capture


class Datagram(unittest.TestCase):
    def test_links_expects_and_silence(self):
        r = Responder()
        far = free_udp_port()
        r.far = ("127.0.0.1", far)
        try:
            rc, rep, text, cap = run(r.port, CASES, "--link", "1=127.0.0.1:%d" % far)
        finally:
            r.close()
        got = {c["id"]: c for c in rep["cases"]}
        self.assertEqual(got["dg-echo"]["verdict"], "pass", got["dg-echo"]["message"])
        self.assertEqual(got["dg-silence"]["verdict"], "pass", got["dg-silence"]["message"])
        self.assertEqual(got["dg-twice"]["verdict"], "fail", text)
        self.assertIn("nothing was expected", got["dg-twice"]["message"])
        self.assertEqual(got["dg-far"]["verdict"], "pass", got["dg-far"]["message"])
        self.assertEqual(got["dg-wrong-link"]["verdict"], "timeout", got["dg-wrong-link"]["message"])
        self.assertEqual(got["dg-wrong-link"]["failed_requirement"], "EEP-1C-LEADING-L2RH")
        self.assertIn("on link 0", got["dg-wrong-link"]["message"])
        self.assertEqual(rep["summary"]["protocol"], "eep")
        # UDP datagrams in the capture: the far link's port and the target's
        self.assertIn(struct.pack(">H", far), cap)
        self.assertIn(struct.pack(">H", r.port), cap)
        self.assertNotEqual(rc, 0)
        self.assertNotIn("Sanitizer", text)

    def test_missing_link_skips(self):
        r = Responder()
        try:
            rc, rep, text, _ = run(r.port, {k: CASES[k] for k in ("a-echo.case", "d-far.case")})
        finally:
            r.close()
        got = {c["id"]: c for c in rep["cases"]}
        self.assertEqual(got["dg-echo"]["verdict"], "pass", text)
        self.assertEqual(got["dg-far"]["verdict"], "skip", text)
        self.assertIn("--link 1=", got["dg-far"]["message"])

    def test_rule_broken_by_responder_fails_under_its_id(self):
        r = Responder(odd=True)
        try:
            rc, rep, text, _ = run(r.port, {"a-echo.case": CASES["a-echo.case"]})
        finally:
            r.close()
        c = rep["cases"][0]
        self.assertEqual(c["verdict"], "fail", text)
        self.assertEqual(c["failed_requirement"], "EEP-1B-8B-WORDS", c["message"])

    def check_refused(self, text, words):
        with tempfile.TemporaryDirectory() as d:
            sub = os.path.join(d, "eep") if "protocol eep" in text else d
            os.makedirs(sub, exist_ok=True)
            with open(os.path.join(sub, "x.case"), "w") as f:
                f.write(text)
            p = subprocess.run([CONFORM, "list", "--cases", d], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, timeout=30)
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn(words, p.stderr)

    def test_parser_refuses_misuse(self):
        self.check_refused("protocol warp\ncase x\nrequire WARP-A-TRUNCATED\nconnect\nsend Send link=1\n",
                           "link= is for datagram protocols")
        self.check_refused("protocol eep\ncase x\nrequire EEP-6A-VERSION\nconnect\nclose\n",
                           "no connection to close")
        self.check_refused("protocol eep\ncase x\nrequire EEP-6A-VERSION\nconnect\nexpect RRP link=1\n",
                           "needs 'links 2'")
        self.check_refused("protocol eep\ncase x\nrequire EEP-6A-VERSION\nconnect\nsend RRP route=l2rh:zz\n",
                           "route= takes")
        self.check_refused("protocol eep\ncase x\nrequire EEP-6A-VERSION\nconnect\nsend RRP split=3\n",
                           "sent whole")
        self.check_refused("protocol eep\ncase x\nrequire EEP-6A-VERSION\nrole passive\naccept\n",
                           "no role passive")

    def test_capture_case_mistakes_are_refused(self):
        here = os.path.dirname(os.path.abspath(__file__))
        pcap = os.path.join(here, "..", "..", "conformance", "cases", "eep", "300-capture-exchange.pcapng")
        good = "case x\nrequire EEP-6A-VERSION\nnode 0x10\n"
        for meta, pcap_bytes, words in (
                (good + "colour blue\n", None, "unknown line 'colour'"),
                (good + "frame 3\n", None, "'frame' takes a frame number and an EEP requirement ID"),
                (good + "frame x EEP-6A-VERSION\n", None, "'frame' takes"),
                ("case x\nrequire VITCP-3.2-VERSION\n", None, "not an EEP requirement ID"),
                ("case x\nnode 0x10\n", None, "needs 'case ID' and 'require ID...'"),
                (good + "node 0x7FFFFE\n", None, "node takes"),
                (good, b"", "x.pcap"),
                (good, b"\xd4\xc3\xb2\xa1" + b"\0" * 7, "x.pcap")):
            with tempfile.TemporaryDirectory() as d:
                os.mkdir(os.path.join(d, "eep"))
                with open(os.path.join(d, "eep", "x.meta"), "w") as f:
                    f.write(meta)
                if pcap_bytes is None:
                    with open(pcap, "rb") as src, open(os.path.join(d, "eep", "x.pcapng"), "wb") as dst:
                        dst.write(src.read())
                else:
                    with open(os.path.join(d, "eep", "x.pcap"), "wb") as dst:
                        dst.write(pcap_bytes)
                p = subprocess.run([CONFORM, "list", "--protocol", "EEP", "--cases", d], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, (meta, p.stdout[-300:]))
            self.assertIn(words, p.stderr, meta)
            self.assertNotIn("Sanitizer", p.stderr)

    def test_show_prints_capture_case_steps(self):
        """`show` describes EEP's capture cases (it refused them with "unknown directive 'node'") as IFT's:
        the module's names, the recorded sends and the frames' IDs."""
        here = os.path.dirname(os.path.abspath(__file__))
        cases = os.path.join(here, "..", "..", "conformance", "cases")
        for meta, words in (("eep/300-capture-exchange.meta", ["protocol eep", "(recorded, frame 1,",
                                                             "[EEP-6C-LOCAL-ONLY]", "expect-nothing"]),
                            ("eep/310-capture-router.meta", ["protocol eep", "(recorded, frame"]),
                            ("ift/400-capture-exchange.meta", ["protocol ift", "(recorded, frame"])):
            p = subprocess.run([CONFORM, "show", os.path.join(cases, meta)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=30)
            self.assertEqual(p.returncode, 0, (meta, p.stderr))
            for w in words:
                self.assertIn(w, p.stdout, meta)

    def test_bad_link_option(self):
        for bad in ("1", "4=5000", "1=x:y", "1=5000,nohost", "1=eth:", "1=eth:lo,01:02", "1=eth:lo,1:2:3:4:5:600"):
            p = subprocess.run([CONFORM, "run", "--protocol", "eep", "--target", "127.0.0.1:5998", "--link", bad],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, bad)
            self.assertIn("bad --link", p.stderr, bad)
        for addr, words in (("2", "the tester's addresses"), ("0x7FFFFE", "bad --eep-address"), ("x", "bad --eep")):
            p = subprocess.run([CONFORM, "run", "--protocol", "eep", "--target", "127.0.0.1:5998", "--eep-address",
                                addr], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
            self.assertEqual(p.returncode, 2, addr)
            self.assertIn(words, p.stderr, addr)

    def test_listen_only_link_cannot_send(self):
        r = Responder()
        far = free_udp_port()
        case = {"f.case": """protocol eep
case dg-far-send
require EEP-1A-HR-FORWARDS
links 2
connect
send RRP dt=2 link=1
"""}
        try:
            rc, rep, text, _ = run(r.port, case, "--link", "1=127.0.0.1:%d" % far)
        finally:
            r.close()
        c = rep["cases"][0]
        self.assertEqual(c["verdict"], "skip", text)
        self.assertIn("link 1 has nowhere to send", c["message"])


if __name__ == "__main__":
    unittest.main()
