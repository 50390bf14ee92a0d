"""conform_impair_captures: passive judgement on real repairs for IFT, WARP
and PacketWay EEP (issue 33, "Passive judgement on real repairs"; C85;
VI/TCP's is test_conform_impair.py).

For each protocol the same scripted session (the protocol's whole active
suite against its reference peer) is recorded twice: on a clean wire and on
an impaired one. Then:

1. lint (`vitcp-conform lint --json`, the protocol's port) and the
   Wireshark plugin (tshark as nobody, one pass and two, `-d` on the
   target's port, tcp.reassemble_out_of_order on) find on the target's
   packets no error or warning of the protocol's rules (IFT-, WARP-, EEP-)
   in the impaired capture that the clean one does not show. Only the
   target's packets are compared: the tester's hostile cases send messages
   whose findings depend on random values and state, the same in both
   captures by kind but not by frame (as test_conform_impair.py does for
   VI/TCP).
2. ...and not because nothing was decoded: the plugin decodes at least 90%
   as many of the protocol's PDUs in the impaired capture as in the clean
   one, lint at least 90% as many messages.
3. The impaired capture holds real repairs: Wireshark's own TCP analysis
   (tcp.analysis.retransmission, .out_of_order, .duplicate_ack) flags
   packets in it, and those findings are TCP's: the frames it flags carry
   no error of the protocol's rules that the clean capture lacks (1).

The TCP protocols are impaired with one profile that makes every kind of
repair at once (loss, copies, reordering and tiny segments, so a lost piece
of a cut segment is retransmitted whole: overlapping retransmissions);
EEP over UDP with loss, copies, reordering and varying delay on the
tester's links (a datagram link has no repair: lost messages are missing,
copies twice there; the draft lets a node see both, C61, so neither may be
blamed on it).

Needs root (the packet relay) for IFT and WARP; EEP does not. The plugin's
part needs VITCP_PLUGIN (and VITCP_PRELOAD under the sanitizers).
Environment: VITCP_CONFORM, VITCP_CASES, IFT_PEER, WARP_PEER, PKTWAY_NODE.
"""
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "independent"))
sys.path.insert(0, os.path.join(HERE, "..", "dissector"))

import peerlib  # noqa: E402
import test_ift_peer_suite as ift  # noqa: E402
import test_pktway_node_suite as eep  # noqa: E402
import test_warp_peer_suite as warp  # noqa: E402

CONFORM = os.environ.get("VITCP_CONFORM", "")
# every kind of TCP repair at once (a lost piece of a cut segment comes back whole: an overlap)
TCP_PROFILE = "loss=3%,dup=2%,reorder=5%,resegment=1-100,seed=5"
EEP_PROFILE = "loss=10%,dup=10%,reorder=10%,delay=0-3ms,seed=3"
JUDGED = ("error", "warning")


def packets(path):
    """[(src port, dst port, transport)] per frame of a pcapng file (Ethernet,
    raw IP, Linux cooked or BSD loopback; IPv4), (None, None, None) for others."""
    out = []
    for link, pkt in peerlib.pcapng_frames(path):
        ip = peerlib.ipv4_of(link, pkt)
        row = (None, None, None)
        if ip is not None and len(ip) >= 28 and ip[9] in (6, 17):
            sport, dport = struct.unpack_from(">HH", ip, (ip[0] & 15) * 4)
            row = (sport, dport, "tcp" if ip[9] == 6 else "udp")
        out.append(row)
    return out


def target_frames(path, port):
    """Frame numbers (from 1) of the packets the target sent: from its port."""
    return {n for n, (sport, _, _) in enumerate(packets(path), 1) if sport == port}


def lint(path, args, prefix, frames):
    """({(ID, severity)} of the protocol's errors and warnings lint finds in
    `frames`, the summary)."""
    p = subprocess.run([CONFORM, "lint", "--json"] + list(args) + [path], capture_output=True, text=True,
                       timeout=120)
    if p.returncode not in (0, 1):
        raise RuntimeError("lint %s: %d %s" % (path, p.returncode, p.stderr))
    full = json.loads(p.stdout)
    # a finding under no rule (a stream lint could not follow) counts too, by its words without numbers
    return {(i["requirement"] or re.sub(r"[0-9]+", "N", i["message"]), i["severity"]) for i in full["issues"]
            if (i["requirement"] or prefix).startswith(prefix) and i["severity"] in JUDGED and i["frame"] in frames}, \
        full["summary"]


def plugin(path, decode_as, prefix, frames, two_pass, pdu_field):
    """({(ID, severity)} of the plugin's errors and warnings in `frames`,
    the number of PDUs decoded (pdu_field), {frame: TCP analysis flags},
    {frame: {(ID, severity)}} of every frame)."""
    import tcp_pcap
    args = ["-o", "tcp.reassemble_out_of_order:TRUE", "-d", decode_as]
    judged, extra = tcp_pcap.tshark(path, prefix, two_pass=two_pass, extra_args=args,
                                    extra_fields=[pdu_field, "tcp.analysis.retransmission",
                                                  "tcp.analysis.out_of_order", "tcp.analysis.duplicate_ack"])
    found = {f for frame, fs in judged.items() if frame in frames for f in fs if f[1] in JUDGED}
    pdus = sum(len([t for t in v[0].split("^") if t]) for v in extra.values() if v)
    flags = {frame: [name for name, v in zip(("retransmission", "out_of_order", "duplicate_ack"), vals[1:4]) if v]
             for frame, vals in extra.items()}
    return found, pdus, {f: v for f, v in flags.items() if v}, judged


class Compare:
    """What one protocol's clean and impaired captures must agree on."""

    def compare(self, clean, impaired, lint_args, prefix, decode_as, pdu_field, count_key, tcp=True):
        """clean, impaired: (path, the target's port); lint_args, decode_as: a port's lint options and tshark -d."""
        problems = []
        (cpath, cport), (ipath, iport) = clean, impaired
        cf, imf = target_frames(cpath, cport), target_frames(ipath, iport)
        self.assertGreater(len(cf), 20, "the target's packets in the clean capture")
        self.assertGreater(len(imf), 20, "the target's packets in the impaired capture")
        lc, sc = lint(cpath, lint_args(cport), prefix, cf)
        li, si = lint(ipath, lint_args(iport), prefix, imf)
        if li - lc:
            problems.append("lint: on the target's packets only the impaired capture shows %s" % sorted(li - lc))
        if si[count_key] < 0.9 * sc[count_key] or sc[count_key] < 20:
            problems.append("lint read %d %s in the impaired capture, %d in the clean one" % (
                si[count_key], count_key, sc[count_key]))
        print("%s lint: %d %s clean, %d impaired; the target's findings clean %s, impaired %s" % (
            prefix, sc[count_key], count_key, si[count_key], sorted(lc), sorted(li)))
        if not os.environ.get("VITCP_PLUGIN"):
            print("no plugin built: the plugin's part not run")
        else:
            for two in (False, True):
                pc, nc, _, _ = plugin(cpath, decode_as(cport), prefix, cf, two, pdu_field)
                pi, ni, flags, judged = plugin(ipath, decode_as(iport), prefix, imf, two, pdu_field)
                name = "plugin%s" % (" -2" if two else "")
                if pi - pc:
                    problems.append("%s: on the target's packets only the impaired capture shows %s" % (
                        name, sorted(pi - pc)))
                if ni < 0.9 * nc or nc < 20:
                    problems.append("%s decoded %d PDUs in the impaired capture, %d in the clean one" % (name, ni, nc))
                kinds = {k for v in flags.values() for k in v}
                if tcp:
                    if not {"retransmission", "duplicate_ack"} <= kinds:
                        problems.append("%s: Wireshark's TCP analysis sees no real repairs: %s" % (name, sorted(kinds)))
                    # TCP's findings are TCP's: no rule of the protocol on the frames it flags
                    blamed = {f for frame in flags if frame in imf for f in judged.get(frame, ()) if f[1] in JUDGED}
                    if blamed - pc:
                        problems.append("%s: frames TCP's analysis flags carry %s" % (name, sorted(blamed - pc)))
                print("%s %s: %d PDUs clean, %d impaired; the target's findings clean %s, impaired %s; TCP analysis "
                      "flags %d frames (%s)" % (prefix, name, nc, ni, sorted(pc), sorted(pi), len(flags),
                                                ", ".join(sorted(kinds))))
        self.assertEqual(problems, [], "\n".join(problems))


def stream_captures(test, start_peer, run, tmp):
    """Two runs of one peer kind, each against a fresh peer: through the
    clean relay and impaired. Returns ((clean path, port), (impaired path, port))."""
    out = []
    for name, args in (("clean", ["--relay-all"]), ("impaired", ["--impair", TCP_PROFILE])):
        path = os.path.join(tmp, name + ".pcapng")
        peer = start_peer()
        try:
            rc, rep, _, text = run(peer, args + ["--capture", path])
        finally:
            peer.stop()
        if any(c["verdict"] == "skip" and "packet relay" in c["message"] for c in rep["cases"]):
            test.skipTest("no packet relay here")
        test.assertTrue(os.path.exists(path), text)
        out.append((path, peer.port, rep))
    crep, irep = out[0][2], out[1][2]
    passing = {c["id"] for c in crep["cases"] if c["verdict"] == "pass"}
    test.assertGreater(len(passing), 10)
    worse = [c["id"] for c in irep["cases"] if c["id"] in passing and c["verdict"] not in ("pass", "advisory")]
    test.assertEqual(worse, [], "the same session's verdicts changed under the impairment")
    impaired = [c for c in irep["cases"] if c.get("impaired", "").split(" (seed")[0] not in ("", "nothing impaired")]
    test.assertGreater(len(impaired), 5, "hardly a case impaired")
    return out[0][:2], out[1][:2]


@unittest.skipUnless(os.geteuid() == 0, "the packet relay needs root")
class StreamCaptures(unittest.TestCase, Compare):
    def test_warp(self):
        peerlib.require_paths(WARP_PEER=warp.PEER, VITCP_CONFORM=CONFORM)
        with tempfile.TemporaryDirectory() as d:
            clean, impaired = stream_captures(self, lambda: warp.Peer("--zero-based", all_addresses=True),
                                              lambda peer, args: warp.run(peer, *args[:-2], relay=True, capture=args[-1]), d)
            self.compare(clean, impaired, lambda p: ["--warp-port", str(p)], "WARP-",
                         lambda p: "tcp.port==%d,warp" % p, "warp.type", "warp_chunks")

    def test_ift(self):
        peerlib.require_paths(IFT_PEER=ift.PEER, VITCP_CONFORM=CONFORM)
        with tempfile.TemporaryDirectory() as d:
            clean, impaired = stream_captures(
                self, lambda: ift.Peer(all_addresses=True),
                lambda peer, args: peerlib.conform_run(["--target", "127.0.0.1:%d" % peer.port, "--protocol", "ift"] + args,
                                                       ift.CASES, conform=CONFORM), d)
            self.compare(clean, impaired, lambda p: ["--ift-port", str(p)], "IFT-",
                         lambda p: "tcp.port==%d,ift" % p, "ift.payload_size", "ift_pdus")


class DatagramCaptures(unittest.TestCase, Compare):
    def test_eep_end_node(self):
        """The end node's suite over UDP: lost messages missing and copies twice in the impaired
        capture are no finding against the node (the draft lets a node see both)."""
        peerlib.require_paths(PKTWAY_NODE=eep.NODE, VITCP_CONFORM=CONFORM)
        out = []
        with tempfile.TemporaryDirectory() as d:
            for name, args in (("clean", []), ("impaired", ["--impair", EEP_PROFILE])):
                path = os.path.join(d, name + ".pcapng")
                node, run_args = eep.end_node()
                try:
                    # the node's conventions declared (C60, C70): an impaired probe would leave the
                    # cases needing them unrun, and the session would not be the same
                    rc, rep, text = eep.run(run_args, "--offers", "echo,hey-you-answer,err-report", *args, capture=path)
                finally:
                    node.stop()
                out.append((path, node.ports[0]))
                if args:
                    touched = [c for c in rep["cases"] if "datagrams: " in c.get("impaired", "")
                               and "none impaired" not in c["impaired"]]
                    self.assertGreater(len(touched), 3, text)
                    with open(path, "rb") as f:
                        self.assertIn(b"impairment (seed", f.read())
            self.compare(out[0], out[1], lambda p: ["--eep-port", str(p)], "EEP-",
                         lambda p: "udp.port==%d,pktway" % p, "pktway.dt", "eep_messages", tcp=False)


if __name__ == "__main__":
    unittest.main()
