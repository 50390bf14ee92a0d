#!/usr/bin/env python3
"""warp-peer against its own client mode over loopback.

Every server listens on port 0 (the event=listening line says where), so
tests run in parallel. Asserts real outputs: event lines, rule IDs, exit
codes, and the bytes a raw socket gets back.
"""
import os
import random
import shutil
import re
import socket
import struct
import subprocess
import tempfile
import threading
import time
import unittest
import zlib

PEER = os.environ.get("WARP_PEER", "warp-peer")


def adler(b):
    return zlib.adler32(b) & 0xFFFFFFFF


def chunk(word, fields, payload=b"", length=None, good_adler=True):
    """A chunk by hand: first word, type fields, payload, Adler-32 (W2, W3)."""
    n = 4 + len(fields) + len(payload) + 4 if length is None else length
    body = struct.pack(">HH", word, n & 0xFFFF) + fields + payload
    a = adler(body)
    return body + struct.pack(">I", a if good_adler else a ^ 0xFFFFFFFF)


def send_chunk(ssn, off, payload, flags=0x3):
    return chunk(flags, struct.pack(">II", ssn, off), payload)


class Server:
    def __init__(self, *args):
        self.proc = subprocess.Popen([PEER, "--port", "0", "--bind", "127.0.0.1"] + list(args),
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        line = self.wait_for(r"event=listening port=(\d+)")
        self.port = int(re.search(r"port=(\d+)", line).group(1))
        reg = self.wait_for(r"event=region ")
        m = re.search(r"addr=0x([0-9a-f]+) handle=(\d+) len=(\d+)", reg)
        self.region = "%s:%x:%s" % (m.group(1), int(m.group(2)), m.group(3))

    def _read(self):
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append(line.rstrip("\n"))
                self.cond.notify_all()

    def wait_for(self, pattern, timeout=10):
        end = time.time() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if re.search(pattern, line):
                        return line
                left = end - time.time()
                if left <= 0 or self.proc.poll() is not None and not self.cond.wait(0.2):
                    raise AssertionError("no line matching %r in:\n%s" % (pattern, "\n".join(self.lines[-30:])))
                self.cond.wait(min(left, 0.2))

    def text(self):
        with self.cond:
            return "\n".join(self.lines)

    def stop(self):
        self.proc.terminate()
        _, err = self.proc.communicate(timeout=20)
        assert self.proc.returncode == 0, "warp-peer exit %d: %s" % (self.proc.returncode, err)
        assert "ERROR: AddressSanitizer" not in err and "runtime error" not in err, err


def client(server, *args, timeout=60):
    cmd = [PEER, "--connect", "127.0.0.1:%d" % server.port] + list(args)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    assert "AddressSanitizer" not in r.stderr and "runtime error" not in r.stderr, r.stderr
    return r


def count(text, pattern):
    return len(re.findall(pattern, text, re.M))


class Operations(unittest.TestCase):
    SIZES = [0, 1, 99, 100, 101, 200, 201, 65515, 65516, 70000]

    def run_ops(self, extra, ops, server_args=()):
        s = Server("--frag", "100", *server_args)
        try:
            r = client(s, "--region", s.region, "--frag", "100", *ops, *extra)
            self.assertEqual(r.returncode, 0, r.stdout[-3000:] + r.stderr)
            s.wait_for(r"event=closed conn=1 reason=eof")
        finally:
            s.stop()
        return r.stdout, s.text()

    def test_every_size_across_fragment_boundaries(self):
        ops = []
        for n in self.SIZES:
            ops += ["--send", str(n), "--rdma", str(n)]
        out, srv = self.run_ops(["--completion", "2"], ops)
        self.assertEqual(count(out, r"^event=echo conn=0 op=send .* ok=1$"), len(self.SIZES))
        self.assertEqual(count(out, r"^event=echo conn=0 op=rdma .* ok=1$"), len(self.SIZES))
        for n in self.SIZES:
            self.assertRegex(srv, r"event=send conn=1 ssn=\d+ len=%d " % n)
            self.assertRegex(srv, r"event=rdma conn=1 rid=0x1 offset=0x[0-9a-f]+ len=%d " % n)
        # C on every second operation: 10 of 20, on both sides, and only there
        self.assertEqual(count(srv, r"^event=completion conn=1 "), len(self.SIZES))
        self.assertEqual(count(srv, r"^event=completion "), count(srv, r" c=1 "))
        self.assertIn("completions=%d ok=1" % len(self.SIZES), out)
        self.assertEqual(count(srv, r"event=(error|finding)"), 0)

    def test_mixed_split_and_repeated(self):
        out, srv = self.run_ops(["--mix", "--split", "7", "--count", "3"], ["--send", "250", "--rdma", "333", "--send", "1"])
        self.assertIn("event=done conn=0 sends=6 rdma=3 mismatches=0 errors=0 warnings=0 completions=9 ok=1", out)
        self.assertEqual(count(srv, r"^event=send conn=1 ssn=\d+ len=250 c=1"), 3)

    def test_zero_based_region(self):
        s = Server("--zero-based", "--handle", "7", "--region-size", "4096")
        try:
            self.assertRegex(s.text(), r"event=region addr=0x0 handle=7 len=4096 based=zero")
            r = client(s, "--region", s.region, "--rdma", "4096", "--rdma", "10")
            self.assertEqual(r.returncode, 0, r.stdout)
            self.assertRegex(r.stdout, r"event=echo conn=0 op=rdma n=1 offset=0x0 len=10 ok=1")
            # outside the region: the client's own fault moves writes past it
            r = client(s, "--region", s.region, "--rdma", "10", "--fault", "out-of-region", "--timeout", "1000")
            self.assertEqual(r.returncode, 1)
            s.wait_for(r"event=error conn=2 rule=WARP-INTRO-REGION-BOUNDS")
        finally:
            s.stop()

    def test_reserved_bits_accepted(self):
        """WARP-A-RSVD-IGNORED: a receiver accepts them (a note, every echo back)."""
        s = Server()
        try:
            r = client(s, "--region", s.region, "--send", "10", "--rdma", "10", "--fault", "reserved-bits")
            self.assertEqual(r.returncode, 0, r.stdout)
            s.wait_for(r"event=finding conn=1 rule=WARP-A-RSVD-ZERO severity=note")
        finally:
            s.stop()


class Iscsi(unittest.TestCase):
    def test_reads_and_writes(self):
        s = Server("--iscsi", "--frag", "1000")
        try:
            sizes = [0, 1, 511, 512, 4096, 100000]
            args = []
            for n in sizes:
                args += ["--read", str(n), "--write", str(n)]
            r = client(s, "--iscsi", "--frag", "1000", *args)
            self.assertEqual(r.returncode, 0, r.stdout[-3000:])
            self.assertIn("event=done conn=0 tasks=12 failed=0 errors=0 warnings=0", r.stdout)
            self.assertEqual(count(r.stdout, r"^event=rdma conn=0 "), 5)  # no Data-In for the empty READ
            srv = s.wait_for(r"event=closed conn=1 reason=eof") and s.text()
            for n in sizes:
                self.assertRegex(srv, re.compile(r"^event=iscsi conn=1 op=read itt=0x[0-9a-f]+ len=%d$" % n, re.M))
            # a WRITE's data came by RDMA Write to RID = the R2T's TTT (--handle 1)
            self.assertRegex(srv, r"event=rdma conn=1 rid=0x1 offset=0x0 len=100000 c=0")
            self.assertEqual(count(srv, r"event=iscsi conn=1 op=write itt=0x[0-9a-f]+ len=\d+ ok=1"), 5)
            # READ data landed by RDMA Write in the client's region, RID = ITT, without C
            self.assertRegex(r.stdout, r"event=rdma conn=0 rid=0x10[0-9a-f] offset=0x0 len=100000 c=0")
        finally:
            s.stop()


# Receiving faults (warp-peer takes a broken rule instead of closing): the
# sending fault that makes a conforming client break that rule, and the rule
# the faulted target then prints as ignored. vitcp-conform's hostile WARP
# cases catch each of them under the fault's own ID (warp_peer_suite).
RECEIVING = {
    "place-bad-adler": ("bad-adler", "WARP-A-ADLER-VALID"),
    "keep-unframed": ("short-chunk-len", "WARP-A-CHUNK-LEN"),
    "keep-c-without-l": ("c-without-l", "WARP-SUMMARY-C-ONLY-WITH-L"),
    "keep-send-offset": ("send-offset", "WARP-A.1.2-SEND-OFFSET"),
    "keep-no-last": ("no-last", "WARP-SUMMARY-L-LAST"),
    "keep-rdma-gap": ("rdma-gap", "WARP-A.1.1-RDMA-CONTIGUOUS"),
    "keep-rid-unknown": ("rid-unknown", "WARP-INTRO-RDMA-RID-ALLOCATED"),
    "keep-out-of-region": ("out-of-region", "WARP-INTRO-REGION-BOUNDS"),
    "keep-iscsi-ttt": ("iscsi-write-ttt", "WARP-B.4.1-RID-IS-TTT"),
    # warp-peer's initiator sends no unsolicited Data-Out: only
    # vitcp-conform's case warp-iscsi-immediate-by-rdma provokes the rule.
    "keep-iscsi-immediate": (None, "no warp-peer client fault sends immediate data by RDMA"),
}


class Faults(unittest.TestCase):
    """Every fault of --list-faults is caught by the wire library's checks
    in the peer that receives what the faulty one sent."""

    def test_every_fault_is_detected(self):
        faults = subprocess.run([PEER, "--list-faults"], capture_output=True, text=True, check=True).stdout.split("\n")
        faults = [f.split() for f in faults if f]
        self.assertGreaterEqual(len(faults), 20)
        results = {}

        def one(name, rid):
            if name in RECEIVING:  # a faulted receiver, fed what the sending fault sends
                sender, ignored = RECEIVING[name]
                if sender is None:
                    return None, ""
                iscsi = name.startswith("keep-iscsi-")
                s = Server("--fault", name, "--frag", "100", *(["--iscsi"] if iscsi else []))
                try:
                    ops = ["--iscsi", "--write", "3000"] if iscsi else \
                        ["--region", s.region, "--send", "300", "--send", "250", "--rdma", "300", "--send", "1"]
                    client(s, *ops, "--frag", "100", "--fault", sender, "--timeout", "1500")
                    s.wait_for(r"event=closed conn=1")
                    return None, s.text()
                finally:
                    s.stop()
            if name == "iscsi-write-ttt":  # the initiator's fault: the target's checks see it
                s = Server("--iscsi")
                try:
                    r = client(s, "--iscsi", "--write", "3000", "--fault", name, "--timeout", "1500")
                    s.wait_for(r"event=closed conn=1")
                    return r.returncode, s.text()
                finally:
                    s.stop()
            iscsi = name.startswith("iscsi-")
            s = Server("--fault", name, "--frag", "100", *(["--iscsi"] if iscsi else []))
            try:
                ops = ["--iscsi", "--read", "4096", "--read", "1024"] if iscsi else \
                    ["--region", s.region, "--send", "300", "--send", "250", "--rdma", "300", "--send", "1"]
                r = client(s, *ops, "--timeout", "1500")
                return r.returncode, r.stdout
            finally:
                s.stop()

        threads = []
        for name, rid in faults:
            t = threading.Thread(target=lambda n=name, i=rid: results.__setitem__(n, one(n, i)))
            t.start()
            threads.append(t)
        for t in threads:
            t.join()
        for name, rid in faults:
            rc, text = results[name]
            with self.subTest(fault=name):
                if name in RECEIVING:
                    sender, ignored = RECEIVING[name]
                    if sender is None:
                        continue  # ignored is the reason
                    # the rule is seen, printed as ignored, and does not close the connection
                    self.assertRegex(text, r"event=finding conn=1 rule=%s severity=ignored " % re.escape(ignored),
                                     text[-2000:])
                    self.assertNotRegex(text, r"event=error conn=1 rule=%s " % re.escape(ignored), text[-2000:])
                    continue
                self.assertRegex(text, r"event=(error|finding) conn=\d+ rule=%s " % re.escape(rid), text[-2000:])
                if name != "reserved-bits":  # a note: "not checked on receive"
                    self.assertNotEqual(rc, 0)


class BadInput(unittest.TestCase):
    def setUp(self):
        self.s = Server("--idle", "2000")

    def tearDown(self):
        self.s.stop()

    def closed_after(self, data, rule, conn):
        """Send raw bytes: the server names the rule and closes."""
        with socket.create_connection(("127.0.0.1", self.s.port)) as sock:
            sock.sendall(data)
            sock.settimeout(5)
            got = b""
            try:
                while True:
                    b = sock.recv(65536)
                    if not b:
                        break
                    got += b
            except ConnectionResetError:
                pass
        line = self.s.wait_for(r"event=error conn=%d " % conn)
        self.assertIn("rule=%s " % rule, line)
        self.s.wait_for(r"event=closed conn=%d reason=error" % conn)
        return got

    def test_bad_chunks_close_the_connection(self):
        good = send_chunk(1, 0, b"first")
        cases = [
            (send_chunk(1, 0, b"x")[:-1] + b"\x00", "WARP-A-ADLER-VALID"),
            (chunk(0x2001, struct.pack(">II", 0, 0), b"zz"), "WARP-A-TYPE-KNOWN"),
            (struct.pack(">HH", 0x1001, 12) + bytes(8), "WARP-A-CHUNK-LEN"),
            (good + send_chunk(1, 0, b"again"), "WARP-A.1.2-SSN-NEXT"),
            (chunk(0x1001, struct.pack(">IQ", 99, 0), b"rdma"), "WARP-INTRO-RDMA-RID-ALLOCATED"),
            (send_chunk(1, 0, b"a", flags=0x2), "WARP-SUMMARY-C-ONLY-WITH-L"),
            (send_chunk(1, 0, b"a", flags=0) + send_chunk(2, 0, b"b"), "WARP-SUMMARY-L-LAST"),
        ]
        base = int(self.s.region.split(":")[0], 16)
        cases.append((chunk(0x1001, struct.pack(">IQ", 1, base), b"data", good_adler=False), "WARP-A-ADLER-VALID"))
        for i, (data, rule) in enumerate(cases, 1):
            with self.subTest(rule=rule):
                got = self.closed_after(data, rule, i)
                if rule == "WARP-A.1.2-SSN-NEXT":
                    # the good first Send still came back, as one Send with SSN 1, before the close
                    self.assertEqual(got, send_chunk(1, 0, b"first"))
                elif rule != "WARP-A-ADLER-VALID":
                    self.assertEqual(got, b"")
        # WARP-INTRO-NO-PLACE-INVALID: no RDMA Write was placed, the bad one included
        self.assertNotIn("event=rdma", self.s.text())

    def test_truncated_chunk_at_close(self):
        with socket.create_connection(("127.0.0.1", self.s.port)) as sock:
            sock.sendall(send_chunk(1, 0, b"whole") + send_chunk(2, 0, b"cut")[:9])
            sock.shutdown(socket.SHUT_WR)
            sock.settimeout(5)
            echo = sock.recv(65536)
        self.assertEqual(echo[12:17], b"whole")
        self.s.wait_for(r"event=error conn=1 rule=WARP-A-TRUNCATED detail=stream ended 9 bytes into a chunk")

    def test_random_bytes_never_crash(self):
        rnd = random.Random(20)
        for i in range(1, 31):
            data = bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(1, 400)))
            with socket.create_connection(("127.0.0.1", self.s.port)) as sock:
                sock.sendall(data)
                sock.shutdown(socket.SHUT_WR)
                sock.settimeout(5)
                try:
                    while sock.recv(65536):
                        pass
                except ConnectionResetError:
                    pass
            self.s.wait_for(r"event=closed conn=%d " % i)
        self.assertEqual(self.s.proc.poll(), None)

    def test_slow_client_does_not_block_and_idles_out(self):
        slow = socket.create_connection(("127.0.0.1", self.s.port))
        slow.sendall(send_chunk(1, 0, b"half of a chunk")[:10])
        r = client(self.s, "--region", self.s.region, "--send", "5000", "--rdma", "5000", timeout=20)
        self.assertEqual(r.returncode, 0, r.stdout)
        self.s.wait_for(r"event=closed conn=1 reason=idle", timeout=10)
        slow.close()


def read_chunks(sock, want_sends):
    """WARP chunks from sock until want_sends Send ULP PDUs are whole:
    (list of Send payloads, bytes placed by RDMA Writes keyed by RID)."""
    buf, sends, cur, rdma = b"", [], b"", {}
    sock.settimeout(10)
    while len(sends) < want_sends:
        while len(buf) >= 4 and len(buf) >= struct.unpack(">H", buf[2:4])[0]:
            n = struct.unpack(">H", buf[2:4])[0]
            c, buf = buf[:n], buf[n:]
            assert struct.unpack(">I", c[-4:])[0] == adler(c[:-4])
            if c[0] >> 4 == 0:
                cur += c[12:-4]
                if c[1] & 1:
                    sends.append(cur)
                    cur = b""
            else:
                rid, off = struct.unpack(">IQ", c[4:16])
                rdma.setdefault(rid, {})[off] = c[16:-4]
        if len(sends) >= want_sends:
            break
        b = sock.recv(65536)
        assert b, "closed early"
        buf += b
    return sends, rdma


def pcap_tcp(path, segments):
    """A pcap of one TCP conversation 10.0.0.1:40000 <-> 10.0.0.2:3260:
    segments is a list of (from_initiator, payload)."""
    def csum(b):
        if len(b) % 2:
            b += b"\0"
        t = sum(struct.unpack(">%dH" % (len(b) // 2), b))
        while t >> 16:
            t = (t & 0xFFFF) + (t >> 16)
        return ~t & 0xFFFF
    seq = {True: 1000, False: 5000}
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, (up, data) in enumerate(segments):
            src, dst = (b"\x0a\0\0\x01", b"\x0a\0\0\x02") if up else (b"\x0a\0\0\x02", b"\x0a\0\0\x01")
            sport, dport = (40000, 3260) if up else (3260, 40000)
            tcp = struct.pack(">HHIIBBHHH", sport, dport, seq[up], seq[not up], 5 << 4, 0x18, 65535, 0, 0) + data
            seq[up] += len(data)
            ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), i, 0, 64, 6, 0, src, dst)
            ip = ip[:10] + struct.pack(">H", csum(ip)) + ip[12:]
            frame = b"\x02" * 6 + b"\x04" * 6 + b"\x08\x00" + ip + tcp
            f.write(struct.pack("<IIII", 1000000000 + i, 0, len(frame), len(frame)) + frame)


@unittest.skipIf(not shutil.which("tshark"), "tshark not installed")
class IscsiDecodesInWireshark(unittest.TestCase):
    """The iSCSI PDUs warp-peer --iscsi sends are valid: Wireshark's own iSCSI
    dissector decodes them (put back on TCP port 3260 with their data)."""

    def test_read_pdus_decode(self):
        s = Server("--iscsi")
        try:
            cmd = struct.pack(">BBHB3s8sIIII", 0x01, 0xC1, 0, 0, b"\0\0\0", bytes(8), 0x42, 1024, 1, 0)
            cmd += bytes([0x28, 0, 0, 0, 0, 0, 0, 0, 2, 0]) + bytes(6)
            with socket.create_connection(("127.0.0.1", s.port)) as sock:
                sock.sendall(send_chunk(1, 0, cmd))
                sends, rdma = read_chunks(sock, 2)
        finally:
            s.stop()
        data = rdma[0x42][0]  # B.4.2: RID = the ITT, zero-based
        self.assertEqual(len(data), 1024)
        self.assertEqual([len(x) for x in sends], [48, 48])
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "iscsi.pcap")
            pcap_tcp(path, [(True, cmd), (False, sends[0] + data), (False, sends[1])])
            r = subprocess.run(["tshark", "-r", path, "-Y", "iscsi", "-T", "fields", "-e", "iscsi.opcode",
                                "-e", "iscsi.initiatortasktag", "-e", "iscsi.datasegmentlength",
                                "-e", "iscsi.bufferOffset", "-e", "iscsi.scsiresponse.status",
                                "-e", "_ws.expert.severity"],
                               capture_output=True, text=True, timeout=60)
        rows = [line.split("\t") for line in r.stdout.splitlines()]
        self.assertEqual([row[0] for row in rows], ["0x01", "0x25", "0x21"], r.stdout + r.stderr)
        self.assertEqual({row[1] for row in rows}, {"0x00000042"})
        self.assertEqual(rows[1][2], "1024")
        self.assertEqual(rows[1][3], "0")
        self.assertEqual(rows[2][4], "0x00")


class CommandLine(unittest.TestCase):
    def test_once_and_default_region(self):
        """--once exits after its first connection; a client without --region
        writes to RID 1, zero-based, which --zero-based announces."""
        s = Server("--once", "--zero-based")
        try:
            r = client(s, "--send", "10", "--rdma", "10")
            self.assertEqual(r.returncode, 0, r.stdout)
            self.assertEqual(s.proc.wait(timeout=10), 0)
            s.wait_for(r"event=closed conn=1 reason=eof")
        finally:
            s.stop()

    def test_help_list_and_bad_options(self):
        r = subprocess.run([PEER, "--help"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0)
        self.assertIn("--connect HOST:PORT", r.stdout)
        self.assertEqual(r.stderr, "")
        h = subprocess.run([PEER, "-h"], capture_output=True, text=True)
        self.assertEqual((h.returncode, h.stdout, h.stderr), (0, r.stdout, ""))
        lines = subprocess.run([PEER, "--list-faults"], capture_output=True, text=True).stdout.splitlines()
        self.assertIn("bad-adler WARP-A-ADLER-VALID", lines)
        for bad in (["--fault", "nope"], ["--frag", "0"], ["--port", "70000"], ["--send", "5"],
                    ["--connect", "127.0.0.1:1"], ["--region", "zz"], ["--bogus"], ["-x"], ["--port"]):
            r = subprocess.run([PEER] + bad, capture_output=True, text=True)
            self.assertEqual(r.returncode, 2, bad)
            self.assertTrue(r.stderr.startswith("warp-peer: "), r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
