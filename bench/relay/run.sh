#!/usr/bin/env bash
# Network impairment benchmark (issue 33, C61), two measurements:
#   1. bench_relay: packets per second through the packet relay, clean and
#      impaired, against a UDP flood straight over loopback (same run) and
#      the 50,000 packets/s target;
#   2. the whole active VI/TCP suite against vipl-peer with every case
#      through the relay (--relay-all), then under `--impair lossy`:
#      impaired seconds against clean seconds, target at most 3x.
# Needs root (the relay's namespace); without it the ratios are printed as
# 0.00x MISS with the reason.
#
# usage: bench/relay/run.sh BUILD_DIR [--smoke]
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
bench_args "$@"
conform="$build/conformance/vitcp-conform"
peer="$build/vipl-ref/vipl-peer"
relay="$build/bench/relay/bench_relay"
bench_need bench_relay -x "$conform" "$peer" "$relay"
bench_load
smoke_arg=()
[ $smoke -eq 1 ] && smoke_arg=(--smoke)
"$relay" "${smoke_arg[@]}"

if [ "$(id -u)" != 0 ]; then
  echo "bench_relay: not root: no packet relay for the suite"
  echo "ratio VI/TCP suite impaired (lossy) vs clean through the relay = 0.00x (target <= 3.00x) MISS"
  exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-relay.XXXXXX")
peer_pid=
cleanup() {
  if [ -n "$peer_pid" ]; then kill "$peer_pid" 2>/dev/null || true; wait "$peer_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
now() { date +%s.%N; }
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$peer" --port "$port" >"$tmp/peer.log" 2>&1 &
peer_pid=$!
for _ in $(seq 100); do ss -Hltn "sport = :$port" | grep -q . && break; sleep 0.05; done
args=(--target "127.0.0.1:$port" --no-announce --region 10000000:1:65536 --skip VITCP-4.3-INCOMING-TIMEOUT --quiet)
[ $smoke -eq 1 ] && args+=(--only accept-basic --only send-numbering)
timed() { # seconds of one run in $t
  local t0 rc=0
  t0=$(now)
  "$conform" run "${args[@]}" "$@" >"$tmp/run.txt" 2>&1 || rc=$?
  t=$(awk -v a="$t0" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }')
  [ $rc -le 1 ] || { echo "bench_relay: vitcp-conform exited $rc:" >&2; cat "$tmp/run.txt" >&2; exit 1; }
  tail -1 "$tmp/run.txt"
}
timed --relay-all
clean=$t
timed --impair lossy
impaired=$t
echo "VI/TCP suite through the relay: clean $clean s, lossy $impaired s"
awk -v a="$impaired" -v b="$clean" 'BEGIN { r = b > 0 ? a / b : 0;
  printf "ratio VI/TCP suite impaired (lossy) vs clean through the relay = %.2fx (target <= 3.00x) %s\n", r, r <= 3 ? "OK" : "MISS" }'
