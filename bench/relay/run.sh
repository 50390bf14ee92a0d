#!/usr/bin/env bash
# Network impairment benchmark (issue 33, C61, C88), two measurements:
#   1. bench_relay: packets per second through the packet relay, clean and
#      impaired, against a UDP flood straight over loopback (same run) and
#      the 50,000 packets/s target;
#   2. each protocol's active suite against its reference peer, clean and
#      impaired, target at most 3x: VI/TCP (vipl-peer), WARP (warp-peer)
#      and IFT (ift-peer as node B) with every case through the relay
#      (--relay-all) as the clean run, then under each shipped profile
#      (lossy, reordering, jittery, tiny-segments); PacketWay EEP over UDP
#      (pktway-node --echo, its end-node cases) clean, then under the
#      profiles that act on a datagram link (lossy, reordering, jittery:
#      the tester impairs its own links; tiny-segments cuts nothing there).
#      One ratio line per protocol and profile: impaired seconds / clean.
# Needs root (the relay's namespace); without it the ratios are printed as
# 0.00x MISS with the reason. --smoke runs one case per protocol.
#
# usage: bench/relay/run.sh BUILD_DIR [--smoke]
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
bench_args "$@"
conform="$build/conformance/vitcp-conform"
vipl="$build/vipl-ref/vipl-peer"
warp="$build/warp-ref/warp-peer"
ift="$build/ift-ref/ift-peer"
node="$build/pktway-ref/pktway-node"
relay="$build/bench/relay/bench_relay"
cases="$(cd "$(dirname "$0")/../.." && pwd)/conformance/cases"
bench_need bench_relay -x "$conform" "$vipl" "$warp" "$ift" "$node" "$relay"
bench_need bench_relay -e "$cases"
bench_load
smoke_arg=()
[ $smoke -eq 1 ] && smoke_arg=(--smoke)
"$relay" "${smoke_arg[@]}"

TCP_PROFILES="lossy reordering jittery tiny-segments"
DGRAM_PROFILES="lossy reordering jittery"
ratio_line() { # NAME PROFILE IMPAIRED CLEAN
  awk -v n="$1" -v p="$2" -v a="$3" -v b="$4" 'BEGIN { r = b > 0 ? a / b : 0;
    printf "ratio %s suite impaired (%s) vs clean = %.2fx (target <= 3.00x) %s\n", n, p, r, (r <= 3 && r > 0) ? "OK" : "MISS" }'
}

if [ "$(id -u)" != 0 ]; then
  echo "bench_relay: not root: no packet relay for the suites"
  for n in VI/TCP WARP IFT; do for p in $TCP_PROFILES; do ratio_line "$n" "$p" 0 0; done; done
  for p in $DGRAM_PROFILES; do ratio_line EEP "$p" 0 0; done
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-relay.XXXXXX")
peer_pid=
stop_peer() {
  if [ -n "$peer_pid" ]; then kill "$peer_pid" 2>/dev/null || true; wait "$peer_pid" 2>/dev/null || true; fi
  peer_pid=
}
cleanup() { stop_peer; rm -rf "$tmp"; }
trap cleanup EXIT
now() { date +%s.%N; }
start_peer() { # REGEX-FOR-THE-PORT PROGRAM ARGS...: the peer's port in $port
  local re=$1
  shift
  "$@" >"$tmp/peer.log" 2>&1 &
  peer_pid=$!
  port=
  for _ in $(seq 200); do
    port=$(sed -nE "s/$re/\\1/p" "$tmp/peer.log" | head -1)
    [ -n "$port" ] && return 0
    sleep 0.05
  done
  echo "bench_relay: $1 did not start:" >&2
  cat "$tmp/peer.log" >&2
  exit 1
}
timed() { # seconds of one vitcp-conform run in $t
  local t0 rc=0
  t0=$(now)
  "$conform" run --cases "$cases" --no-capture --quiet "$@" >"$tmp/run.txt" 2>&1 || rc=$?
  t=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
  [ $rc -le 1 ] || { echo "bench_relay: vitcp-conform exited $rc:" >&2; cat "$tmp/run.txt" >&2; exit 1; }
  tail -1 "$tmp/run.txt"
}
suite() { # NAME CLEAN-ARG PROFILES -- RUN-ARGS...: clean once, then each profile
  local name=$1 clean_arg=$2 profiles=$3 clean figures=""
  shift 4
  timed "$@" $clean_arg
  clean=$t
  for p in $profiles; do
    timed "$@" --impair "$p"
    figures="$figures, $p $t s"
    ratio_line "$name" "$p" "$t" "$clean"
  done
  echo "$name suite: clean $clean s$figures"
}

# VI/TCP: the whole active and passive suite but the 60 s timeout case
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$vipl" --port "$port" >"$tmp/peer.log" 2>&1 &
peer_pid=$!
for _ in $(seq 100); do ss -Hltn "sport = :$port" | grep -q . && break; sleep 0.05; done
only=()
[ $smoke -eq 1 ] && only=(--only accept-basic)
suite VI/TCP --relay-all "$TCP_PROFILES" -- --target "127.0.0.1:$port" --no-announce --region 10000000:1:65536 \
  --skip VITCP-4.3-INCOMING-TIMEOUT "${only[@]}"
stop_peer

# WARP: the echo cases against warp-peer --zero-based
start_peer '^event=listening.* port=([0-9]+).*' "$warp" --port 0 --zero-based
[ $smoke -eq 1 ] && only=(--only warp-send-echo)
suite WARP --relay-all "$TCP_PROFILES" -- --protocol warp --target "127.0.0.1:$port" "${only[@]}"
stop_peer

# IFT: the active cases against ift-peer as node B
start_peer '^event=listening.* port=([0-9]+).*' "$ift" --listen 0
[ $smoke -eq 1 ] && only=(--only ift-send-echo)
suite IFT --relay-all "$TCP_PROFILES" -- --protocol ift --target "127.0.0.1:$port" "${only[@]}"
stop_peer

# PacketWay EEP over UDP: the end-node cases against pktway-node --echo (its node contract, C70;
# its conventions declared, so an impaired probe leaves no case unrun)
start_peer '^event=interface .*kind=udp local=[0-9.]+:([0-9]+).*' "$node" --addr 0x10 --udp 127.0.0.1:0 --echo
[ $smoke -eq 1 ] && only=(--only eep-delivered-echo)
suite EEP "" "$DGRAM_PROFILES" -- --protocol eep --target "127.0.0.1:$port" --slack 1000 --eep-unknown-oh 5 \
  --offers echo,hey-you-answer "${only[@]}"
stop_peer
