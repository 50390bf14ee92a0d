"""PacketWay EEP captures from hand-written bytes (struct.pack), not from
wire/'s encoders: a second code path that builds messages the way the draft
and decisions P1-P12 describe them, a classic pcap writer, and the two
readers (tshark with the built plugin, `vitcp-conform lint --json`) reduced
to the same shape: {frame: {(requirement ID, severity)}}."""
import json
import os
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.environ.get("VITCP_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
                                "tests", "dissector"))
import tsharklib  # noqa: E402

ETHERTYPE_EEP = 0x88B5
UDP_PORT_EEP = 5998
MAC_A = bytes.fromhex("02000000000a")
MAC_R = bytes.fromhex("020000000001")
MAC_B = bytes.fromhex("02000000000b")
MAC_BROADCAST = b"\xff" * 6
IP_A, IP_R, IP_B = bytes([10, 9, 0, 10]), bytes([10, 9, 0, 1]), bytes([10, 9, 0, 11])


# ------------------------------------------------------------ EEP by hand

def header(dt, sa, pt=0x0800, te=0, dl=0, pl=0, version=0, priority=0, endian=0, h=False, rz=0):
    """The 16-byte EEP header: V(2) P(6) DT(24) | TE(16) PT(16) | E(4) PL(3) DL(25) | h(1) RZ(7) SA(24)."""
    return struct.pack(">B3sHHIB3s", (version << 6) | priority, dt.to_bytes(3, "big"), te, pt,
                       (endian << 28) | (pl << 25) | dl, (0x80 if h else 0) | rz, sa.to_bytes(3, "big"))


def l2rh(route, pad=None, version=0, priority=0):
    """An L2RH: 0b10 + 6-bit L, L routing bytes, padded to 8*[(L+9)/8] bytes (P2) unless pad says otherwise."""
    rec = struct.pack(">BB", (version << 6) | priority, 0x80 | len(route)) + route
    want = 8 * ((len(route) + 9) // 8) if pad is None else len(rec) + pad
    return rec + b"\0" * (want - len(rec))


def symbol(stype, data, pad=None):
    """A symbol: 0b1111 + 20-bit type, L, L data bytes, padded to 8*[(L+12)/8] bytes (P4) unless pad says otherwise."""
    rec = struct.pack(">BBHB", 0, 0xF0 | (stype >> 16), stype & 0xFFFF, len(data)) + data
    want = 8 * ((len(data) + 12) // 8) if pad is None else len(rec) + pad
    return rec + b"\0" * (want - len(rec))


def message(dt=0x000207, sa=0x000102, data=b"", ei=0, records=b"", pad_data=True, **hdr):
    """Records + header + data block (DL words, PL padding) + TAIL; pad_data=False leaves the block unpadded."""
    dl = (len(data) + 7) // 8
    pl = dl * 8 - len(data)
    block = data + (b"\0" * pl if pad_data else b"")
    hdr.setdefault("dl", dl)
    hdr.setdefault("pl", pl)
    return records + header(dt, sa, **hdr) + block + struct.pack(">Q", ei)


# ------------------------------------------------------- frames and pcap

def ether(payload, src=MAC_A, dst=MAC_B, vlan=None, pad=True):
    """An Ethernet frame (no FCS), padded with zeros to the 60-byte minimum as a NIC does."""
    if vlan is None:
        frame = dst + src + struct.pack(">H", ETHERTYPE_EEP) + payload
    else:
        frame = dst + src + struct.pack(">HHH", 0x8100, vlan, ETHERTYPE_EEP) + payload
    return frame + b"\0" * (60 - len(frame)) if pad and len(frame) < 60 else frame


def _ip_checksum(hdr):
    s = sum(struct.unpack(">%dH" % (len(hdr) // 2), hdr))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def udp(payload, src=IP_A, dst=IP_B, smac=MAC_A, dmac=MAC_B, sport=UDP_PORT_EEP, dport=UDP_PORT_EEP):
    """Ethernet + IPv4 (checksum right) + UDP (checksum 0: none, allowed over IPv4) carrying payload."""
    u = struct.pack(">HHHH", sport, dport, 8 + len(payload), 0) + payload
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(u), 1, 0x4000, 64, 17, 0, src, dst)
    ip = ip[:10] + struct.pack(">H", _ip_checksum(ip)) + ip[12:]
    frame = dmac + smac + struct.pack(">H", 0x0800) + ip + u
    return frame + b"\0" * (60 - len(frame)) if len(frame) < 60 else frame


def write_pcap(path, frames, times=None):
    """Classic pcap, microsecond timestamps, LINKTYPE_ETHERNET; frame i at times[i] microseconds after the
    start when given, else i seconds."""
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        for i, fr in enumerate(frames):
            t = times[i] if times else i * 1000000
            f.write(struct.pack("<IIII", 1700000000 + t // 1000000, t % 1000000, len(fr), len(fr)) + fr)
    return path


_tmp = None


def capture(name, frames, times=None):
    global _tmp
    if _tmp is None:
        _tmp = tempfile.mkdtemp(prefix="vitcp-independent-eep-")
    return write_pcap(os.path.join(_tmp, name), frames, times)


# ------------------------------------------------------------ the readers

_SEVERITY = {0x200000: "note", 0x400000: "note", 0x600000: "warning", 0x800000: "error"}


def lint(path):
    """{frame: {(ID, severity)}} from `vitcp-conform lint --json` (exit 0 or 1)."""
    proc = subprocess.run([os.environ["VITCP_CONFORM"], "lint", "--json", path], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode not in (0, 1):
        raise RuntimeError("vitcp-conform lint %s: %d %s" % (path, proc.returncode, proc.stderr))
    out = {}
    for issue in json.loads(proc.stdout)["issues"]:
        if issue["requirement"]:
            out.setdefault(issue["frame"], set()).add((issue["requirement"], issue["severity"]))
    return out


def tshark(path, extra_fields=()):
    """({frame: {(ID, severity)}}, {frame: [extra field values]}) from the plugin's EEP expert items."""
    args = ["-T", "fields", "-E", "separator=\t", "-E", "occurrence=a", "-E", "aggregator=^"]
    for name in ["frame.number", "_ws.expert.severity", "_ws.expert.message"] + list(extra_fields):
        args += ["-e", name]
    out, extra = {}, {}
    for line in tsharklib.run(path, args).splitlines():
        r = line.split("\t")
        frame = int(r[0])
        sevs = [int(s) for s in r[1].split("^") if s]
        msgs = r[2].split("^") if r[2] else []
        assert len(sevs) == len(msgs), r
        found = {(m[1:m.index("]")], _SEVERITY.get(s, "?")) for s, m in zip(sevs, msgs) if m.startswith("[EEP-")}
        if found:
            out[frame] = found
        extra[frame] = r[3:]
    return out, extra


def ids(judged, at_least="warning"):
    """{frame: {ID}} of the findings at or above a severity."""
    rank = {"note": 0, "warning": 1, "error": 2}
    out = {}
    for frame, found in judged.items():
        keep = {i for i, s in found if rank.get(s, 0) >= rank[at_least]}
        if keep:
            out[frame] = keep
    return out
