#!/usr/bin/env bash
# The main job: everything vitcp does, end to end, on this machine.
#  1. the traffic generator writes a VI/TCP session with every feature to a
#     pcap, and the stock tshark decodes it with the freshly built plugin;
#  2. two reference VI providers (vipl-pingpong) talk VI/TCP over loopback
#     while dumpcap records them; tshark decodes the recording, and
#     vitcp-conform lints it against every passively checkable rule;
#  3. vitcp-conform drives the reference provider's conformance target
#     (vipl-peer) through the active suite and prints the verdicts.
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
  dumpcap -q -B 64 -i lo -f "tcp port $port" -w "$live" 2>/dev/null &
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
"$pingpong" --client 127.0.0.1 --port "$port" --sizes 4,1024,65536 --op send --crc on --iters 20 --csv
"$pingpong" --client 127.0.0.1 --port "$port" --sizes 65536 --op write --crc on --iters 20 --csv | tail -n +2
if [ "$capturing" = 1 ]; then
  sleep 1
  kill "${pids[0]}" 2>/dev/null || true
  wait "${pids[0]}" 2>/dev/null || true
  echo "... the recording, decoded (first segments):"
  tshark_vitcp -r "$live" -d "tcp.port==$port,vitcp" -Y vitcp | head -12 || true
  step "2b. vitcp-conform lint of the recording"
  "$conform" lint --port "$port" "$live" | tail -15 || true
fi

step "3. vitcp-conform runs the active VI/TCP suite against vipl-peer"
pport=$((port + 1))
"$peer" --port "$pport" >"$out/vipl-peer.log" 2>&1 &
pids+=($!)
sleep 0.5
"$conform" run --target "127.0.0.1:$pport" --skip VITCP-4.3-INCOMING-TIMEOUT \
  --json "$out/conformance.json" --junit "$out/conformance.xml" --capture "$out/conformance.pcap" || true
echo
echo "Demo outputs are in $out (captures, conformance.json, conformance.xml)."
