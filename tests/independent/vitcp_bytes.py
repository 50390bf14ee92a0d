"""VI/TCP by hand (draft-dicecco-vitcp-01 as V1-V25 read it), packed with
struct and a bitwise CRC written here, never wire/'s encoders: the 24-byte
segment header, the 140-byte CE header with options, the trailer CRC."""
import struct

PORT = 5995
SEND, NOP, CONNECT_REQUEST, CONNECT_ACCEPT = 0, 4, 5, 6
EOM = 0x80
RELIABLE_DELIVERY, RELIABLE_RECEPTION = 0x0002, 0x0004


def crc_vitcp(data):
    """V3: reflected CRC-32 with generator 0xDB710641 (reflected 0x82608EDB), init and final XOR all ones."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82608EDB if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


assert crc_vitcp(b"123456789") == 0xE07E661E


def ce_header(attrs, mtu=65536, calling=b"client", called=b"svc", window=0, crc_option=True):
    """attrs | calling length | MTU | calling discriminator (64) | read window | called length | called (64) | options."""
    ce = struct.pack(">HHI", attrs, len(calling), mtu) + calling.ljust(64, b"\0") + \
        struct.pack(">HH", window, len(called)) + called.ljust(64, b"\0")
    return ce + (struct.pack(">HHH", 1, 4, 0) if crc_option else b"")  # CRC option, End of Option List (3.3)


def segment(stype, msg_num, msg_ack=0, payload=b"", ce=b"", flags=EOM, crc=True, bad_crc=False, rx_posted=8):
    """version 1 | flags+type | Segment Length (every byte, V2) | data offset | immediate | message number |
    message ACK | Rx descriptors posted | remote error, then CE header, payload, CRC (LSB first, V4)."""
    n = 24 + len(ce) + len(payload) + (4 if crc else 0)
    body = struct.pack(">BBHIIIIHH", 1, flags | stype, n, 0, 0, msg_num, msg_ack, rx_posted, 0) + ce + payload
    if not crc:
        return body
    return body + struct.pack("<I", crc_vitcp(body) ^ (0xFFFFFFFF if bad_crc else 0))
