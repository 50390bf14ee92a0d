#!/usr/bin/env bash
# Record the IFT capture cases (conformance/cases/ift/NAME.pcapng, I19)
# with the project's own tools: ift-peer --listen (node B) and ift-peer
# --connect (node A) over the loopback, captured by dumpcap on lo
# (root, or a user dumpcap may capture as). Each NAME.meta beside its
# recording says what the replay expects; rerun this after a change of
# what ift-peer sends, then check the replays (ctest -R ift_peer_suite).
#   scripts/record-ift-captures.sh BUILD_DIR [OUT_DIR]
# OUT_DIR defaults to conformance/cases/ift.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:?usage: record-ift-captures.sh BUILD_DIR [OUT_DIR]}
out=${2:-$here/conformance/cases/ift}
peer=$build/ift-ref/ift-peer
[ -x "$peer" ] || { echo "record-ift-captures: no $peer (build the ift-peer target)" >&2; exit 2; }
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

# record NAME PORT CONNECT-ARGS...: one connection of node A to node B.
# The VTags are fixed (--vtag) so that a new recording differs from the
# old one only where what ift-peer sends changed; the replay rebuilds the
# tester's frames with the live target's VTag anyway.
record() {
  local name=$1 port=$2; shift 2
  "$peer" --listen "$port" --bind 127.0.0.1 --once --vtag 0x4242 >"$tmp/$name.b.log" 2>&1 &
  local b=$!; pids+=("$b")
  for _ in $(seq 50); do grep -q event=listening "$tmp/$name.b.log" && break; sleep 0.1; done
  dumpcap -q -i lo -f "tcp port $port" -w "$tmp/$name.pcapng" >"$tmp/$name.dumpcap.log" 2>&1 &
  local d=$!; pids+=("$d")
  for _ in $(seq 50); do grep -q "File:" "$tmp/$name.dumpcap.log" 2>/dev/null && break; sleep 0.1; done
  sleep 0.5
  "$peer" --connect "127.0.0.1:$port" --vtag 0x1717 "$@" >"$tmp/$name.a.log" 2>&1 || true
  sleep 0.5
  kill "$d"; wait "$d" 2>/dev/null || true
  kill "$b" 2>/dev/null || true; wait "$b" 2>/dev/null || true
  cp "$tmp/$name.pcapng" "$out/$name.pcapng"
  echo "record-ift-captures: $out/$name.pcapng ($(stat -c %s "$out/$name.pcapng") bytes)"
}

# 400: A sends, writes and reads back through B (the target as B)
record 400-capture-exchange 47011 --send 100 --write 3000 --read 3000 --send 20
# 401: A reads 16 bytes (the suite's connect command; the target as A)
record 401-capture-listen 47012 --read 16 --timeout 2000
# 402: A's Send carries a bad payload CRC: B closes and places nothing (I8)
record 402-capture-bad-crc 47013 --send 64 --fault bad-payload-crc --timeout 2000
