#!/usr/bin/python3
"""The scapy baseline of the trafgen benchmark: the scenario bench/trafgen/run.sh
gives vitcp-trafgen, written with scapy the way a user would script it.

Scenario (what `vitcp-trafgen -f` makes of "connect / send c2s M / send s2c M"
repeated, --seg-payload S): TCP handshake, ConnectRequest and ConnectAccept
without CRC, then per repetition one M-byte Send from the client and one from
the server, each in S-byte VI/TCP segments (one TCP segment each), then the
FIN close. Same addresses, ports, ISNs, header values and segment sizes as
trafgen; payload bytes come from Python's PRNG (trafgen's differ).

usage: scapy_vitcp.py OUT.pcap REPEATS [MSG_SIZE [SEG_PAYLOAD]]
Prints "pdus N bytes N seconds S" where seconds covers building and writing
only (importing scapy is excluded, which favours scapy).
"""
import random
import struct
import sys
import time

from scapy.layers.inet import IP, TCP
from scapy.layers.l2 import Ether
from scapy.packet import Raw
from scapy.utils import PcapWriter

CLIENT = ("02:00:0a:00:00:01", "10.0.0.1", 40000, 1000)
SERVER = ("02:00:0a:00:00:02", "10.0.0.2", 5995, 5000)
HDR = struct.Struct(">BBHIIIIHH")  # version, type/flags, seg len, offset, imm, msg num, msg ack, rx posted, err
EOM = 0x80
SEND, CONNECT_REQUEST, CONNECT_ACCEPT = 0, 5, 6


def ce_body(attrs, calling, called):
    pad = lambda s: s.encode() + bytes(64 - len(s))
    return struct.pack(">HHI", attrs, len(calling), 65536) + pad(calling) + \
        struct.pack(">HH", 0, len(called)) + pad(called)


def main():
    if len(sys.argv) not in (3, 4, 5):
        sys.exit(__doc__.strip().splitlines()[-3])
    out = sys.argv[1]
    try:
        repeats = int(sys.argv[2])
        msg_size = int(sys.argv[3]) if len(sys.argv) > 3 else 14000
        seg_payload = int(sys.argv[4]) if len(sys.argv) > 4 else 1400
    except ValueError:
        sys.exit("scapy_vitcp.py: REPEATS, MSG_SIZE and SEG_PAYLOAD are numbers")
    if repeats < 0 or msg_size < 1 or not 1 <= seg_payload <= 1436:
        sys.exit("scapy_vitcp.py: REPEATS >= 0, MSG_SIZE >= 1, SEG_PAYLOAD 1..1436")

    rng = random.Random(1)
    start = time.perf_counter()
    w = PcapWriter(out, linktype=1, sync=False)
    ends = [CLIENT, SERVER]
    nxt = [CLIENT[3] + 1, SERVER[3] + 1]
    ip_id = [1, 1]
    clock = [1000000000.0]
    counts = {"pdus": 0, "bytes": 0}
    msg_num = [0x89025cc1, 0x658eec67]
    last_rx = [0, 0]

    def frame(side, flags, payload=b"", seq=None, ack=None):
        s, d = ends[side], ends[1 - side]
        pkt = Ether(src=s[0], dst=d[0]) / IP(src=s[1], dst=d[1], id=ip_id[side], flags="DF") / \
            TCP(sport=s[2], dport=d[2], flags=flags, window=65535,
                seq=nxt[side] if seq is None else seq, ack=nxt[1 - side] if ack is None else ack,
                options=[("MSS", 1460)] if "S" in flags else [])
        if payload:
            pkt = pkt / Raw(payload)
        pkt.time = clock[0]
        clock[0] += 0.0001
        ip_id[side] += 1
        w.write(pkt)

    def pdu(side, type_flags, offset, body):
        seg = HDR.pack(1, type_flags, 24 + len(body), offset, 0, msg_num[side], last_rx[side], 64, 0) + body
        frame(side, "PA", seg)
        nxt[side] += len(seg)
        counts["pdus"] += 1
        counts["bytes"] += len(seg)

    # handshake
    frame(0, "S", seq=CLIENT[3], ack=0)
    frame(1, "SA", seq=SERVER[3], ack=CLIENT[3] + 1)
    frame(0, "A")
    # CE exchange
    pdu(0, EOM | CONNECT_REQUEST, 0, ce_body(0x0002, "client-vi-0", "storage-vi-7"))
    last_rx[1] = msg_num[0]
    pdu(1, EOM | CONNECT_ACCEPT, 0, ce_body(0x0002, "client-vi-0", "storage-vi-7"))
    last_rx[0] = msg_num[1]
    for _ in range(repeats):
        for side in (0, 1):
            msg_num[side] += 1
            data = rng.randbytes(msg_size)
            for off in range(0, msg_size, seg_payload):
                chunk = data[off:off + seg_payload]
                pdu(side, (EOM if off + seg_payload >= msg_size else 0) | SEND, off, chunk)
            last_rx[1 - side] = msg_num[side]
    # close
    frame(0, "FA")
    nxt[0] += 1
    frame(1, "A")
    frame(1, "FA")
    nxt[1] += 1
    frame(0, "A")
    w.close()
    print("pdus %d bytes %d seconds %.3f" % (counts["pdus"], counts["bytes"], time.perf_counter() - start))


if __name__ == "__main__":
    main()
