#!/usr/bin/env python3
"""eep_indie_node: a PacketWay EEP end node or router written from the
draft alone (draft-ietf-pktway-protocol-eep-spec-03, the seed's line
numbers), sharing nothing with wire/ or pktway-node: no echo, no answer to
a Hey-You!, no ERR (729-731 "usually sent", 785-786 "may be returned"), a
leftover L2RH at the destination dropped (412-413, 449-451 "should be
consumed"), its own L2RH format (455 "totally SAN dependent": routing bytes
"l" and the out interface's digit), no OH type known (814), no error
detection as a router (160-161). It prints one line per message it
delivered: "DELIVERED sa=0x.. pt=0x.. bytes=N" (its delivery log).

One EEP message per UDP datagram, or per raw Ethernet frame of Ethertype
0x88B5 (--iface, root); interfaces are numbered in the order given.

  eep_indie_node.py --addr A (--udp [HOST:]PORT | --iface IF)...
                    [--router --route DT=IF ... --neighbor IF=HOST:PORT ... --mtu IF=N ...]
                    [--echo] [--break NAME]

--echo answers each delivered message (not a Hey-You! or Broadcast) with
its data to its SA. --break NAME makes it break one rule on purpose (for
the test that a suite catches it): v (its echoes carry V 1), oh-no-h (an
OH field in its echoes with h 0), dl-short (its echoes' DL one word short),
keep-l2rh (a router's copy keeps the L2RH it routed by), forward-broadcast
(a router forwards a Broadcast).
"""
import argparse
import select
import socket
import struct
import sys

HEY_YOU, BROADCAST, UNDEFINED = 0x7FFFFE, 0x7FFFFF, 0
ETHERTYPE = 0x88B5
PACKET_OUTGOING = 4
MASK64 = (1 << 64) - 1
BREAKS = ("v", "oh-no-h", "dl-short", "keep-l2rh", "forward-broadcast")


class Bad(Exception):
    """A message this node cannot parse: dropped."""


def record_at(data, o):
    """The leading record at offset o: ('l2rh', routing bytes, size),
    ('symbol', None, size) or None when the EEP header starts there (4b:
    bits 9-10 0b10 an L2RH, bits 9-12 0b1111 a symbol)."""
    if o + 8 > len(data):
        raise Bad("records run past the message")
    b = data[o + 1]
    if b >> 6 == 0b10:
        n = b & 0x3F  # 5a: the length follows the two bits
        size = (n + 9) // 8 * 8
        return "l2rh", data[o + 2:o + 2 + n], size
    if b >> 4 == 0xF:
        n = data[o + 4]  # 5b1: the 5th byte is L
        size = (n + 12) // 8 * 8
        return "symbol", None, size
    return None


def parse(data):
    """The message's parts, or Bad."""
    if len(data) % 8 or len(data) < 24:
        raise Bad("not whole 8-byte words")  # 1b
    records, o = [], 0
    while True:
        r = record_at(data, o)
        if r is None:
            break
        records.append((r[0], r[1], o, r[2]))
        o += r[2]
    if o + 24 > len(data):
        raise Bad("no room for the header and TAIL")
    hdr = data[o:o + 16]
    w = struct.unpack(">I", hdr[8:12])[0]
    m = {
        "records": records, "hdr_off": o,
        "v": hdr[0] >> 6, "dt": int.from_bytes(hdr[1:4], "big"),
        "te": struct.unpack(">H", hdr[4:6])[0], "pt": struct.unpack(">H", hdr[6:8])[0],
        "e": w >> 28, "pl": (w >> 25) & 7, "dl": w & 0x1FFFFFF,
        "h": hdr[12] >> 7, "rz": hdr[12] & 0x7F, "sa": int.from_bytes(hdr[13:16], "big"),
        "ei": struct.unpack(">Q", data[-8:])[0], "oh": [],
    }
    p, end = o + 16, len(data) - 8
    if m["h"]:  # 7: OH fields until C=1
        while True:
            if p + 8 > end:
                raise Bad("OH fields run past the message")
            t, n = data[p], data[p + 1]
            m["oh"].append((t >> 7, t & 0x3F))
            p += (n + 9) // 8 * 8
            if (t >> 6) & 1:
                break
    if p + 8 * m["dl"] > end:
        raise Bad("DL past the TAIL")  # 6h
    net = 8 * m["dl"] - m["pl"]
    if net < 0:
        raise Bad("PL without data")
    m["data"] = data[p:p + net]
    if p + 8 * m["dl"] < end and not m["h"]:
        raise Bad("bytes before the TAIL no OH field announces")  # 9
    return m


def dt_kind(dt):
    """6c's table by the MSbits."""
    if dt >> 23 == 0:
        return "physical"
    if dt >> 22 == 0b10:
        return "l2rh"
    if dt >> 21 == 0b110:
        return "reserved"
    return "logical" if dt >> 20 == 0b1110 else "symbol"


def message(dt, sa, pt, te, data, e=0, v=0, oh_no_h=False, dl_short=False):
    """A message this node originates (EI 0, RZ 0)."""
    dl = (len(data) + 7) // 8
    pl = dl * 8 - len(data)
    body = data + b"\0" * pl
    oh = b""
    if oh_no_h:
        oh = bytes([0x40 | 9, 0]) + b"\0" * 6  # optional type 9, C=1, L 0: one word, h left 0
    if dl_short and dl:
        dl -= 1
    w = (e << 28) | (pl << 25) | dl
    hdr = bytes([v << 6]) + dt.to_bytes(3, "big") + struct.pack(">HHI", te, pt, w) + bytes([0]) + sa.to_bytes(3, "big")
    return hdr + oh + body + struct.pack(">Q", 0)


class Node:
    def __init__(self, a):
        self.addr = a.addr
        self.router = a.router
        self.echo = a.echo
        self.brk = a.brk
        self.routes = dict(a.route)
        self.neighbor = dict(a.neighbor)
        self.mtu = dict(a.mtu)
        self.socks, self.macs = [], []
        for kind, spec in a.links:
            if kind == "udp":
                host, _, port = spec.rpartition(":")
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                s.bind((host or "127.0.0.1", int(port)))
                self.macs.append(None)
            else:
                s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETHERTYPE))
                s.bind((spec, ETHERTYPE))
                self.macs.append(s.getsockname()[4])
            self.socks.append(s)

    def say(self, text):
        print(text, flush=True)

    def send(self, ifx, to, data):
        if ifx >= len(self.socks) or not to:
            return
        if self.macs[ifx] is None:
            self.socks[ifx].sendto(data, to)
        else:  # a frame to the MAC `to`
            self.socks[ifx].send(to + self.macs[ifx] + struct.pack(">H", ETHERTYPE) + data)

    def local(self, ifx, src, m):
        """A message for this node (6c: its address, Hey-You!, Broadcast)."""
        if any(kind == "l2rh" for kind, _, _, _ in m["records"]):
            return self.say("DROPPED leftover-l2rh")  # 412-413, 449-451
        if m["v"] != 0:
            return self.say("DROPPED version")  # 6a: not the working version
        if any(mand for mand, _ in m["oh"]):
            return self.say("DROPPED mandatory-oh")  # 7: no OH type is known here
        self.say("DELIVERED sa=0x%06x pt=0x%04x bytes=%d" % (m["sa"], m["pt"], len(m["data"])))
        if self.echo and m["dt"] == self.addr and dt_kind(m["sa"]) == "physical" and m["sa"] != UNDEFINED:
            out = message(m["sa"], self.addr, m["pt"], m["te"], m["data"], e=m["e"], v=1 if self.brk == "v" else 0,
                          oh_no_h=self.brk == "oh-no-h", dl_short=self.brk == "dl-short")
            self.send(ifx, src, out)

    def forward(self, data, m):
        """1a/1c/5/10: consume the leading symbols and the first L2RH, go by
        that L2RH or by the DT, shift the TAIL."""
        recs, cut, out_if = m["records"], 0, None
        for kind, routing, off, size in recs:
            if kind == "l2rh":
                if self.brk != "keep-l2rh":
                    cut = off + size
                else:
                    cut = off
                if len(routing) == 2 and routing[:1] == b"l" and routing[1:].isdigit():
                    out_if = int(routing[1:])
                break
            cut = off + size
        else:
            cut = m["hdr_off"]
        if out_if is None and not any(k == "l2rh" for k, _, _, _ in recs):
            out_if = self.routes.get(m["dt"])
        if out_if is None or out_if not in self.neighbor:
            return self.say("DROPPED unreachable")
        copy = bytearray(data[cut:])
        ei = m["ei"]
        if not ei >> 63:
            ei = (ei << 1) & MASK64
        copy[-8:] = struct.pack(">Q", ei)
        if len(copy) > self.mtu.get(out_if, 65507):
            return self.say("DROPPED too-long")  # 1b: never over the MTU, no SAR
        self.send(out_if, self.neighbor[out_if], bytes(copy))
        self.say("FORWARDED if=%d" % out_if)

    def handle(self, ifx, src, data):
        try:
            m = parse(data)
        except Bad as e:
            return self.say("DROPPED %s" % e)
        dt, kind = m["dt"], dt_kind(m["dt"])
        if dt in (HEY_YOU, BROADCAST):
            if self.router and self.brk == "forward-broadcast" and dt == BROADCAST and 1 in self.neighbor:
                self.send(1, self.neighbor[1], data)
            return self.local(ifx, src, m)  # "If you receive it, it's for you"
        if kind != "physical" or dt == UNDEFINED:
            return self.say("DROPPED dt-%s" % kind)  # no logical address subscribed; 110x reserved
        routed = any(k == "l2rh" for k, _, _, _ in m["records"])
        if dt == self.addr and not (self.router and routed):
            return self.local(ifx, src, m)
        if self.router:
            return self.forward(data, m)
        self.say("DROPPED not-mine")

    def run(self):
        self.say("READY addr=0x%06x interfaces=%d" % (self.addr, len(self.socks)))
        while True:
            ready, _, _ = select.select(self.socks, [], [])
            for s in ready:
                ifx = self.socks.index(s)
                data, src = s.recvfrom(65536)
                if self.macs[ifx] is not None:
                    if src[2] == PACKET_OUTGOING or len(data) < 14:
                        continue  # its own frames
                    data, src = data[14:], data[6:12]
                self.handle(ifx, src, data)


def pair(kind):
    def conv(text):
        k, _, v = text.partition("=")
        if kind == "route":
            return int(k, 0), int(v)
        if kind == "neighbor":
            if v.count(":") == 5:
                return int(k), bytes(int(x, 16) for x in v.split(":"))  # a MAC
            host, _, port = v.rpartition(":")
            return int(k), (host, int(port))
        return int(k), int(v)
    return conv


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", type=lambda t: int(t, 0), required=True)
    ap.add_argument("--udp", action="append", dest="links", type=lambda t: ("udp", t))
    ap.add_argument("--iface", action="append", dest="links", type=lambda t: ("eth", t))
    ap.add_argument("--router", action="store_true")
    ap.add_argument("--route", action="append", type=pair("route"), default=[])
    ap.add_argument("--neighbor", action="append", type=pair("neighbor"), default=[])
    ap.add_argument("--mtu", action="append", type=pair("mtu"), default=[])
    ap.add_argument("--echo", action="store_true")
    ap.add_argument("--break", dest="brk", choices=BREAKS)
    a = ap.parse_args()
    if not a.links:
        ap.error("give --udp or --iface")
    try:
        Node(a).run()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
