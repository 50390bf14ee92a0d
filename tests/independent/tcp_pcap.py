"""TCP captures for the stream protocols (VI/TCP, IFT, WARP) from
hand-written bytes (struct.pack), not from wire/'s encoders, and the two
readers reduced to one shape, as eep_pcap.py does for PacketWay EEP:
{frame: {(requirement ID, severity)}} from tshark with the built plugin and
from `vitcp-conform lint --json`.

A Conversation writes a real TCP exchange (handshake, data, pure ACKs,
FIN or RST) with right IPv4 and TCP checksums, so tshark's TCP analysis
and lint's stream reader see what a capture on loopback would show."""
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import eep_pcap  # noqa: E402  (pcap writer, lint reader, severity names)

tsharklib = eep_pcap.tsharklib
write_pcap = eep_pcap.write_pcap
ids = eep_pcap.ids

MAC_A = bytes.fromhex("02000000000a")
MAC_B = bytes.fromhex("02000000000b")
IP_A, IP_B = bytes([10, 9, 0, 10]), bytes([10, 9, 0, 11])
SYN, FIN, RST, PSH, ACK = 0x02, 0x01, 0x04, 0x08, 0x10


def _sum16(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(">%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def tcp_frame(src, dst, sport, dport, seq, ack, flags, payload=b"", smac=MAC_A, dmac=MAC_B, urgent=0):
    """Ethernet + IPv4 + TCP (20-byte header, no options), both checksums right."""
    off_flags = (5 << 12) | flags | (0x20 if urgent else 0)
    t = struct.pack(">HHIIHHHH", sport, dport, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, off_flags, 65535, 0, urgent)
    pseudo = src + dst + struct.pack(">BBH", 0, 6, len(t) + len(payload))
    csum = ~_sum16(pseudo + t + payload) & 0xFFFF
    t = t[:16] + struct.pack(">H", csum) + t[18:]
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(t) + len(payload), 1, 0x4000, 64, 6, 0, src, dst)
    ip = ip[:10] + struct.pack(">H", ~_sum16(ip) & 0xFFFF) + ip[12:]
    frame = dmac + smac + struct.pack(">H", 0x0800) + ip + t + payload
    return frame + b"\0" * (60 - len(frame)) if len(frame) < 60 else frame


class Conversation:
    """One TCP connection between A (the active opener, side 0) and B."""

    def __init__(self, port, client_port=40000, handshake=True):
        self.port = port
        self.cport = client_port
        self.seq = [1000, 5000]       # next sequence number of A, B
        self.frames = []
        if handshake:
            self._raw(0, SYN, b"", ack=0)
            self.seq[0] += 1
            self._raw(1, SYN | ACK, b"")
            self.seq[1] += 1
            self._raw(0, ACK, b"")

    def _raw(self, side, flags, payload, ack=None, seq=None):
        if side == 0:
            src, dst, sp, dp, sm, dm = IP_A, IP_B, self.cport, self.port, MAC_A, MAC_B
        else:
            src, dst, sp, dp, sm, dm = IP_B, IP_A, self.port, self.cport, MAC_B, MAC_A
        if ack is None:
            ack = self.seq[1 - side]
        self.frames.append(tcp_frame(src, dst, sp, dp, self.seq[side] if seq is None else seq, ack,
                                     flags | (ACK if ack else 0), payload, sm, dm))
        return len(self.frames)

    def send(self, side, payload, ack=True, push=True):
        """Data from side (0 = A, 1 = B), then (ack) the peer's pure ACK; returns the data's frame number.
        push=False: no PSH (a segment cut inside the sender's write)."""
        n = self._raw(side, PSH if push else 0, payload)
        self.seq[side] += len(payload)
        if ack:
            self._raw(1 - side, 0, b"")
        return n

    def fin(self, side):
        n = self._raw(side, FIN, b"")
        self.seq[side] += 1
        self._raw(1 - side, 0, b"")
        return n

    def rst(self, side):
        return self._raw(side, RST, b"")

    def close(self, first=0):
        """Both FINs, first from side first; returns the frame number of the second FIN."""
        self.fin(first)
        return self.fin(1 - first)


_tmp = None


def capture(name, frames):
    global _tmp
    if _tmp is None:
        _tmp = tempfile.mkdtemp(prefix="vitcp-independent-tcp-")
    return write_pcap(os.path.join(_tmp, name), frames)


def lint(path, args=()):
    """{frame: {(ID, severity)}} and the raw issues of `vitcp-conform lint --json`."""
    import json
    proc = subprocess.run([os.environ["VITCP_CONFORM"], "lint", "--json"] + list(args) + [path],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode not in (0, 1):
        raise RuntimeError("vitcp-conform lint %s: %d %s" % (path, proc.returncode, proc.stderr))
    out = {}
    issues = json.loads(proc.stdout)["issues"]
    for issue in issues:
        if issue["requirement"]:
            out.setdefault(issue["frame"], set()).add((issue["requirement"], issue["severity"]))
    return out, issues


def tshark(path, prefix, extra_fields=(), two_pass=False, extra_args=()):
    """({frame: {(ID, severity)}}, {frame: [extra field values]}) from the plugin's expert items whose
    ID starts with prefix ("WARP-", "IFT-", "VITCP-")."""
    args = ["-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=^"] + list(extra_args)
    if two_pass:
        args = ["-2"] + args
    for name in ["frame.number", "_ws.expert.severity", "_ws.expert.message"] + list(extra_fields):
        args += ["-e", name]
    out, extra = {}, {}
    for line in tsharklib.run(path, args).splitlines():
        r = line.split("\t")
        frame = int(r[0])
        sevs = [int(s) for s in r[1].split("^") if s]
        msgs = r[2].split("^") if r[2] else []
        found = {(m[1:m.index("]")], eep_pcap._SEVERITY.get(s, "?")) for s, m in zip(sevs, msgs)
                 if m.startswith("[" + prefix)}
        if found:
            out[frame] = found
        extra[frame] = r[3:]
    return out, extra


def only(judged, prefix_or_ids):
    """The findings whose ID is in prefix_or_ids (a set) or starts with it (a string)."""
    out = {}
    for frame, found in judged.items():
        keep = {(i, s) for i, s in found
                if (i.startswith(prefix_or_ids) if isinstance(prefix_or_ids, str) else i in prefix_or_ids)}
        if keep:
            out[frame] = keep
    return out
