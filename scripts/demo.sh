#!/usr/bin/env bash
# The main job: everything vitcp does, end to end, on this machine.
#  1. the traffic generator writes a VI/TCP session with every feature to a
#     pcap, and the stock tshark decodes it with the freshly built plugin;
#  2. two reference VI providers (vipl-pingpong) talk VI/TCP over loopback
#     while dumpcap records them; tshark decodes the recording, and
#     vitcp-conform lints it against every passively checkable rule;
#  3. vitcp-conform drives the reference provider's conformance target
#     (vipl-peer) through the suite, active cases and listen-mode ones
#     (vipl-peer --connect), and prints the verdicts;
#  4. vitcp-conform runs the WARP suite against warp-peer (echo mode with
#     its address-based region given as --region, and iSCSI mode) and prints
#     each run's result line;
#  5. vitcp-conform runs the IFT suite against ift-peer, as node B (active
#     cases) and as node A (listen-mode cases, ift-peer --connect), and
#     prints each run's result line.
#  6. PacketWay EEP: two end nodes and a router (pktway-node) exchange
#     messages over loopback UDP; the router's recording of both hops is
#     decoded by tshark with the plugin and linted clean; then vitcp-conform
#     makes a network of its own (a namespace for the router, veth links,
#     raw Ethernet) and runs the router cases against pktway-node.
# Usage: scripts/demo.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: demo.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${VITCP_DEMO_OUT:-$build/demo}
mkdir -p "$out"
tshark_vitcp() { "$here/tshark-vitcp.sh" "$build" "$@"; }
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT
step() { printf '\n=== %s\n' "$*"; }

trafgen=$build/trafgen/vitcp-trafgen
pingpong=$build/vipl-ref/vipl-pingpong
peer=$build/vipl-ref/vipl-peer
conform=$build/conformance/vitcp-conform

step "1. vitcp-trafgen writes a VI/TCP session (seed 1) and tshark decodes it with the plugin"
"$trafgen" --seed 1 -w "$out/vitcp-full.pcap" vitcp-full
tshark_vitcp -r "$out/vitcp-full.pcap" -Y vitcp | head -20 || true
echo "... per-connection statistics:"
tshark_vitcp -q -r "$out/vitcp-full.pcap" -z vitcp,stat | sed -n '1,20p'

step "1b. the same scenario with a corrupted CRC: the plugin names the broken rule"
"$trafgen" --seed 1 --break VITCP-3.6-CRC-VALID -w "$out/vitcp-bad-crc.pcap" vitcp-full
tshark_vitcp -r "$out/vitcp-bad-crc.pcap" -Y 'vitcp.crc.status == "Bad"' -T fields -e frame.number -e _ws.col.Info -e _ws.expert.message | head -5 || true

port=$((20000 + RANDOM % 20000))
live=$out/pingpong-loopback.pcapng
step "2. two reference providers talk VI/TCP over loopback (port $port), recorded with dumpcap"
if [ "$(id -u)" -eq 0 ] && command -v dumpcap >/dev/null; then
  # A 128 MiB kernel buffer, and a recorded run small enough (--count 64
  # messages in the bandwidth phase instead of 256 MiB worth) that dumpcap
  # keeps up on 2 cores: the lint below must see no capture gap.
  dumpcap -q -B 128 -i lo -f "tcp port $port" -w "$live" 2>"$out/dumpcap.log" &
  pids+=($!)
  sleep 1
  capturing=1
else
  echo "(not root or no dumpcap: the exchange runs without a recording)"
  capturing=0
fi
"$pingpong" --server --port "$port" --crc on &
pids+=($!)
sleep 0.5
"$pingpong" --client 127.0.0.1 --port "$port" --sizes 4,1024,65536 --op send --crc on --iters 20 --count 64 --csv
"$pingpong" --client 127.0.0.1 --port "$port" --sizes 65536 --op write --crc on --iters 20 --count 64 --csv | tail -n +2
if [ "$capturing" = 1 ]; then
  sleep 1
  kill "${pids[0]}" 2>/dev/null || true
  wait "${pids[0]}" 2>/dev/null || true
  grep -h 'received/dropped' "$out/dumpcap.log" || true
  echo "... the recording, decoded (first segments):"
  tshark_vitcp -r "$live" -d "tcp.port==$port,vitcp" -Y vitcp | head -12 || true
  step "2b. vitcp-conform lint of the recording"
  "$conform" lint --port "$port" "$live" | tail -15 || true
fi

step "3. vitcp-conform runs the VI/TCP suite against vipl-peer: active cases (vipl-peer --port), passive ones (vipl-peer --connect)"
pport=$((port + 1))
"$peer" --port "$pport" >"$out/vipl-peer.log" 2>&1 &
pids+=($!)
# vipl-peer's first line names its RDMA region (0x10000000, handle 1, 64 KiB
# when that address is free; docs/vipl.md): the RDMA cases use it through
# --region (vipl-peer no longer announces it in a Send unless --announce).
region=10000000:1:65536
for _ in $(seq 1 100); do
  grep -q '^event=listening' "$out/vipl-peer.log" && break
  sleep 0.1
done
if line=$(grep -m1 '^event=region' "$out/vipl-peer.log"); then
  read -r _ raddr rhandle rlen <<<"$line"   # event=region addr=0x... handle=N len=N
  region=${raddr#addr=0x}:$(printf '%x' "${rhandle#handle=}"):${rlen#len=}
fi
echo "vipl-peer listens on $pport, region $region (ADDR:HANDLE:LEN, hex address and handle)"
# --linger: the implementation outlives its disconnect, so the listen-mode
# case active-disconnect-close sees whether the disconnect closed TCP.
"$conform" run --target "127.0.0.1:$pport" --skip VITCP-4.3-INCOMING-TIMEOUT \
  --no-announce --region "$region" \
  --listen 0 --connect-cmd "$(printf '%q' "$peer") --connect {host}:{port} --linger 3000" \
  --json "$out/conformance.json" --junit "$out/conformance.xml" --capture "$out/conformance.pcap" || true

step "4. vitcp-conform runs the WARP suite against warp-peer: echo cases (warp-peer address based, its event=region line as --region), then iSCSI ones (warp-peer --iscsi), each with its listen-mode case (warp-peer --connect as the initiator)"
wpeer=$build/warp-ref/warp-peer
for mode in echo iscsi; do
  wlog=$out/warp-peer-$mode.log
  if [ "$mode" = echo ]; then "$wpeer" --port 0 --bind 127.0.0.1 >"$wlog" 2>&1 &
  else "$wpeer" --port 0 --bind 127.0.0.1 --iscsi >"$wlog" 2>&1 &
  fi
  pids+=($!)
  for _ in $(seq 1 100); do
    grep -q '^event=listening' "$wlog" && break
    sleep 0.1
  done
  wport=$(sed -n 's/^event=listening port=\([0-9]*\).*/\1/p' "$wlog")
  # listen mode (C64): warp-peer --connect as the initiator under test
  extra=(--iscsi --listen 0 --connect-cmd "$(printf '%q' "$wpeer") --connect {host}:{port} --iscsi --write 2048")
  # the target's region (C50): event=region addr=0x... handle=N len=N, as ADDR:HANDLE:LEN
  if [ "$mode" = echo ] && line=$(grep -m1 '^event=region' "$wlog"); then
    read -r _ raddr rhandle rlen _ <<<"$line"
    wregion="${raddr#addr=0x}:$(printf '%x' "${rhandle#handle=}"):${rlen#len=}"
    extra=(--region "$wregion" --listen 0 --connect-cmd \
           "$(printf '%q' "$wpeer") --connect {host}:{port} --send 3000 --rdma 5000 --send 10 --frag 1000 --region $wregion")
  fi
  "$conform" run --protocol warp "${extra[@]}" --target "127.0.0.1:$wport" --quiet \
    --json "$out/conformance-warp-$mode.json" --no-capture | tail -1 || true
done

step "5. vitcp-conform runs the IFT suite against ift-peer: as node B (ift-peer --listen), then as node A (ift-peer --connect)"
ipeer=$build/ift-ref/ift-peer
ilog=$out/ift-peer.log
# as root the relay cases (speculative placement, C46) run too: the relay
# reaches the target at its own address, so it listens on all of them
ibind=(--bind 127.0.0.1)
[ "$(id -u)" = 0 ] && ibind=()
"$ipeer" --listen 0 "${ibind[@]}" >"$ilog" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
  grep -q '^event=listening' "$ilog" && break
  sleep 0.1
done
iport=$(sed -n 's/^event=listening port=\([0-9]*\).*/\1/p' "$ilog")
"$conform" run --protocol ift --target "127.0.0.1:$iport" --quiet \
  --json "$out/conformance-ift.json" --no-capture | tail -1 || true
"$conform" run --protocol ift --listen 0 --quiet \
  --connect-cmd "$(printf '%q' "$ipeer") --connect {host}:{port} --read 16 --timeout 2000" \
  --json "$out/conformance-ift-listen.json" --no-capture | tail -1 || true

step "6. PacketWay EEP: end nodes 0x1 and 0x2 and router 0x10 (pktway-node) over loopback UDP, recorded by the router"
node=$build/pktway-ref/pktway-node
net="127.$((RANDOM % 200 + 20)).$((RANDOM % 250 + 1))"
eep=$out/pktway-udp.pcap
rm -f "$eep"
"$node" --addr 0x10 --router --udp "$net.2:5998" --udp "$net.2:5999" --peer "1=$net.1:5998@0" \
  --peer "2=$net.3:5998@1" --mtu 1:256 --pcap "$eep" --duration 4000 </dev/null >"$out/pktway-router.log" 2>&1 &
pids+=($!)
"$node" --addr 2 --udp "$net.3:5998" --peer "default=$net.2:5999" --echo --duration 4000 \
  </dev/null >"$out/pktway-node2.log" 2>&1 &
pids+=($!)
sleep 1
# an IPv4 datagram (PT 0x0800, P8) echoed back by node 2, Hey-You! to the
# router, a TAIL shifted by the router, leading records consumed, an unknown
# destination and an over-MTU message (both answered with ERR), an unknown
# mandatory OH (ERR from node 2); PT 0x4242 is outside P8's list (a note)
ipv4=4500002b00010000401166bf0a0000010a000002000700070017000068656c6c6f205061636b6574576179
"$node" --addr 1 --udp "$net.1:5998" --peer "default=$net.2:5998" --duration 1500 \
  --send "dt=2,pt=0x800,data=$ipv4" --send dt=hey-you,pt=0x4242,data=cafe --send dt=2,pt=0x4242,ei=0x5,len=16 \
  --send dt=2,pt=0x4242,sym=5:01,l2rh=01,len=8 --send dt=0x55,pt=0x4242,len=8 --send dt=2,pt=0x4242,len=400 \
  --send dt=2,pt=0x4242,moh=3:01,len=8 </dev/null | grep -E 'event=(sent|delivered|dropped)' | cut -c1-150 || true
sleep 3
echo "... the router's events:"
cut -c1-150 "$out/pktway-router.log" | grep -E 'event=(forwarded|refused|dropped|delivered|sent)' || true
echo "... the recording, decoded:"
tshark_vitcp -r "$eep" -Y pktway | head -20 || true
step "6b. vitcp-conform lint of the PacketWay recording"
"$conform" lint "$eep" | tail -3 || true

step "6c. vitcp-conform makes the network itself: pktway-node as a router in a namespace of its own, a veth link to each side of the tester, raw Ethernet (Ethertype 0x88B5); the router cases, recorded"
# run --topology (C54): the command template is the contract; {ifN} are the
# node's interfaces, {peerN} the MACs at their other ends. Without root or
# network namespaces every case is skipped with the reason.
ethcap=$out/pktway-eth-router.pcapng
"$conform" run --protocol eep --topology router --quiet --node-ready '^event=ready' \
  --node-log "$out/pktway-eth-router.log" \
  --node-cmd "$(printf '%q' "$node") --addr 0x10 --router --iface {if0} --iface {if1} --peer 1={peer0}@0 --peer 3={peer0}@0 --peer 2={peer1}@1 --peer 3={peer1}@1 --peer hey-you={peer1}@1 --mtu 1:512" \
  --json "$out/conformance-eep-router.json" --capture "$ethcap" | tail -1 || true
echo "... the recording (both hops of each message), decoded:"
[ -s "$ethcap" ] && { tshark_vitcp -r "$ethcap" -Y pktway | head -8 || true; }

echo
echo "Demo outputs are in $out (captures, conformance.json, conformance.xml, conformance-warp-*.json, conformance-ift*.json, conformance-eep-router.json, pktway-udp.pcap, pktway-eth-router.pcapng)."
