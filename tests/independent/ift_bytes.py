"""IFT by hand (draft-williams-iwarp-ift-01 as I1-I10 read it), packed with
struct and a bitwise CRC-32C written here, never wire/'s encoders: the
64-byte adaption indication and frames carrying an RFC 5041 DDP header."""
import struct

PORT = 5996
MAGIC = 0x52444450
PH, R, HC, PC = 1 << 31, 1 << 30, 1 << 29, 1 << 28


def crc32c(data):
    """CRC-32C (Castagnoli, reflected 0x82F63B78), init and final XOR all ones."""
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def indication(flags, vtag, version=1, bc_version=1, magic=MAGIC):
    """magic | version BC-version | flags | VTag, marker interval | 44 reserved | CRC-32C of 0..59, LSB first (I3)."""
    body = struct.pack(">IHHIHH", magic, version, bc_version, flags, vtag, 0) + b"\0" * 44
    return body + struct.pack("<I", crc32c(body))


def ddp_tagged(stag=0x1234, to=0, last=True, rdmap=0x40):
    """RFC 5041 tagged header (14 bytes): T=1, L, DV=1; RDMAP control byte (RV=1, opcode 0: RDMA Write); STag; TO."""
    return struct.pack(">BBIQ", 0x80 | (0x40 if last else 0) | 0x01, rdmap, stag, to)


def frame(vtag, ddp, payload, hc=True, pc=True, header_size=None, payload_size=None, bad_hcrc=False):
    """header_size | payload_size | receiver's VTag | DDP header | [header CRC] | payload | [payload CRC] (I4, I6)."""
    hs = len(ddp) if header_size is None else header_size
    ps = len(payload) if payload_size is None else payload_size
    out = struct.pack(">HHH", hs, ps, vtag) + ddp
    if hc:
        out += struct.pack("<I", crc32c(out) ^ (0xFFFFFFFF if bad_hcrc else 0))
    out += payload
    if pc:
        out += struct.pack("<I", crc32c(payload))
    return out
