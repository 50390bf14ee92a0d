#!/usr/bin/env bash
# Conformance benchmark, two measurements:
#   1. the whole active VI/TCP suite (vitcp-conform run) against the reference
#      provider's target vipl-peer on loopback, without the Incoming-timeout
#      case that waits 32 s by design (C7): seconds against the 60 s budget;
#      and the WARP suite (vitcp-conform run --protocol warp, echo cases
#      against warp-peer --zero-based, then --iscsi against warp-peer
#      --iscsi; docs/conformance.md C42): seconds against a 10 s budget;
#      and the IFT suite (vitcp-conform run --protocol ift, the active cases
#      against ift-peer --listen, then the listen-mode ones with ift-peer
#      --connect as node A): seconds against the same 60 s budget;
#   2. vitcp-conform lint on a ~200 MB vitcp-trafgen capture (vitcp-full, CRC
#      on) and on the same scenario without CRC (~130 MB): MB/s against the
#      100 MB/s target, with `cat FILE >/dev/null` read speed of the same
#      (cached) file measured in the same run as yardstick.
# Verdicts of the suite do not matter here (only its time); exit 2 of
# vitcp-conform (usage or input error) does.
#
# usage: bench/conformance/run.sh BUILD_DIR [--smoke]
#   Environment: REPS (default 3: best lint and cat time), CASES (a cases
#   directory for vitcp-conform run --cases; default: its own).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
bench_args "$@"
conform="$build/conformance/vitcp-conform"
peer="$build/vipl-ref/vipl-peer"
wpeer="$build/warp-ref/warp-peer"
ipeer="$build/ift-ref/ift-peer"
trafgen="$build/trafgen/vitcp-trafgen"
bench_need bench_conformance -x "$conform" "$peer" "$wpeer" "$ipeer" "$trafgen"
if [ $smoke -eq 1 ]; then count=20 reps=1; else count=4250 reps=${REPS:-3}; fi
bench_load
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bench-conformance.XXXXXX")
peer_pid=
cleanup() {
  if [ -n "$peer_pid" ]; then kill "$peer_pid" 2>/dev/null || true; wait "$peer_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# 1. active suite
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$peer" --port "$port" >"$tmp/peer.log" 2>&1 &
peer_pid=$!
for _ in $(seq 100); do ss -Hltn "sport = :$port" | grep -q . && break; sleep 0.05; done
ss -Hltn "sport = :$port" | grep -q . || { echo "bench_conformance: vipl-peer does not listen on $port" >&2; exit 1; }
# The RDMA cases use vipl-peer's region (its event=region line), and the
# listen-mode cases let vipl-peer --connect dial the tester: the whole suite.
region=10000000:1:65536
if line=$(grep -m1 '^event=region' "$tmp/peer.log"); then
  read -r _ raddr rhandle rlen <<<"$line"
  region=${raddr#addr=0x}:$(printf '%x' "${rhandle#handle=}"):${rlen#len=}
fi
full=(--no-announce --region "$region" --listen 0
      --connect-cmd "$(printf '%q' "$peer") --connect {host}:{port} --linger 3000")
skip=()
"$conform" list 2>/dev/null | grep '^VITCP-4.3-INCOMING-TIMEOUT' >/dev/null && skip=(--skip VITCP-4.3-INCOMING-TIMEOUT)
cases=()
[ -n "${CASES:-}" ] && cases=(--cases "$CASES")
if [ $smoke -eq 1 ]; then only=(--only accept-basic); full=(); else only=(); fi
t0=$(now)
rc=0
"$conform" run --target "127.0.0.1:$port" "${full[@]}" "${cases[@]}" "${skip[@]}" "${only[@]}" --quiet >"$tmp/suite.txt" 2>&1 || rc=$?
t_suite=$(secs "$t0" "$(now)")
if [ $rc -gt 1 ]; then
  echo "bench_conformance: vitcp-conform run exited $rc:" >&2
  cat "$tmp/suite.txt" >&2
  exit 1
fi
summary=$(grep -E '^Ran [0-9]+' "$tmp/suite.txt" | tail -1 || true)
[ -n "$summary" ] || { echo "bench_conformance: no summary from vitcp-conform run:" >&2; cat "$tmp/suite.txt" >&2; exit 1; }
kill "$peer_pid" 2>/dev/null || true
wait "$peer_pid" 2>/dev/null || true
peer_pid=

# 1b. the WARP suite, both target modes, timed together
wonly=()
[ $smoke -eq 1 ] && wonly=(--only warp-send-echo)
t_warp=0
warp_sum=()
for mode in echo iscsi; do
  if [ "$mode" = echo ]; then margs=(--zero-based) rargs=("${wonly[@]}")
  else margs=(--iscsi) rargs=(--iscsi); fi
  [ $smoke -eq 1 ] && [ "$mode" = iscsi ] && continue
  "$wpeer" --port 0 --bind 127.0.0.1 "${margs[@]}" >"$tmp/wpeer.log" 2>&1 &
  peer_pid=$!
  for _ in $(seq 100); do grep -q '^event=listening' "$tmp/wpeer.log" && break; sleep 0.05; done
  wport=$(sed -n 's/^event=listening port=\([0-9]*\).*/\1/p' "$tmp/wpeer.log")
  [ -n "$wport" ] || { echo "bench_conformance: warp-peer does not listen:" >&2; cat "$tmp/wpeer.log" >&2; exit 1; }
  t0=$(now)
  rc=0
  "$conform" run --protocol warp --target "127.0.0.1:$wport" "${cases[@]}" "${rargs[@]}" --quiet >"$tmp/warp.txt" 2>&1 || rc=$?
  t_warp=$(awk -v a="$t_warp" -v b="$(secs "$t0" "$(now)")" 'BEGIN { printf "%.3f", a + b }')
  [ $rc -le 1 ] || { echo "bench_conformance: vitcp-conform run --protocol warp exited $rc:" >&2; cat "$tmp/warp.txt" >&2; exit 1; }
  line=$(grep -E '^Ran [0-9]+' "$tmp/warp.txt" | tail -1 || true)
  [ -n "$line" ] || { echo "bench_conformance: no summary from the WARP run:" >&2; cat "$tmp/warp.txt" >&2; exit 1; }
  warp_sum+=("$mode: $line")
  kill "$peer_pid" 2>/dev/null || true
  wait "$peer_pid" 2>/dev/null || true
  peer_pid=
done

# the IFT suite: node B (active cases), then node A (listen-mode cases)
ionly=()
[ $smoke -eq 1 ] && ionly=(--only ift-send-echo)
ibind=(--bind 127.0.0.1)
[ "$(id -u)" = 0 ] && ibind=() # as root the relay cases run too (the relay reaches the target at its address)
"$ipeer" --listen 0 "${ibind[@]}" >"$tmp/ipeer.log" 2>&1 &
peer_pid=$!
for _ in $(seq 100); do grep -q '^event=listening' "$tmp/ipeer.log" && break; sleep 0.05; done
iport=$(sed -n 's/^event=listening port=\([0-9]*\).*/\1/p' "$tmp/ipeer.log")
[ -n "$iport" ] || { echo "bench_conformance: ift-peer does not listen:" >&2; cat "$tmp/ipeer.log" >&2; exit 1; }
t0=$(now)
rc=0
"$conform" run --protocol ift --target "127.0.0.1:$iport" "${cases[@]}" "${ionly[@]}" --quiet >"$tmp/ift.txt" 2>&1 || rc=$?
[ $rc -le 1 ] || { echo "bench_conformance: vitcp-conform run --protocol ift exited $rc:" >&2; cat "$tmp/ift.txt" >&2; exit 1; }
kill "$peer_pid" 2>/dev/null || true
wait "$peer_pid" 2>/dev/null || true
peer_pid=
ift_sum=("B: $(grep -E '^Ran [0-9]+' "$tmp/ift.txt" | tail -1 || true)")
if [ $smoke -eq 0 ]; then
  rc=0
  "$conform" run --protocol ift --listen 0 "${cases[@]}" --quiet \
    --connect-cmd "$(printf %q "$ipeer") --connect {host}:{port} --read 16 --timeout 2000" >"$tmp/ift.txt" 2>&1 || rc=$?
  [ $rc -le 1 ] || { echo "bench_conformance: vitcp-conform run --protocol ift --listen exited $rc:" >&2; cat "$tmp/ift.txt" >&2; exit 1; }
  ift_sum+=("A: $(grep -E '^Ran [0-9]+' "$tmp/ift.txt" | tail -1 || true)")
fi
t_ift=$(secs "$t0" "$(now)")

# 2. lint speed, on a CRC capture (the usual case) and on the same scenario
# without CRC (where the decoder looks for an unnegotiated trailer in every segment)
lint_best() { # file -> best seconds in $t_lint, lint exit in $lint_rc
  local r t t0
  t_lint=999999
  for ((r = 0; r < reps; r++)); do
    t0=$(now)
    lint_rc=0
    "$conform" lint "$1" >"$tmp/lint.txt" 2>&1 || lint_rc=$?
    t=$(secs "$t0" "$(now)")
    [ $lint_rc -le 1 ] || { echo "bench_conformance: lint exited $lint_rc:" >&2; head -20 "$tmp/lint.txt" >&2; exit 1; }
    awk -v a="$t" -v b="$t_lint" 'BEGIN { exit !(a < b) }' && t_lint=$t
  done
  grep -q ' segments: ' "$tmp/lint.txt" || { echo "bench_conformance: no lint summary:" >&2; head "$tmp/lint.txt" >&2; exit 1; }
  return 0
}
tg=(--seed 1 --msg-size 14000 --seg-payload 1400 -q --no-meta)
"$trafgen" "${tg[@]}" --count $count -w "$tmp/cap.pcap" vitcp-full
"$trafgen" "${tg[@]}" --count $count -w "$tmp/nocrc.pcap" vitcp-full-nocrc
bytes=$(stat -c %s "$tmp/cap.pcap")
bytes_nocrc=$(stat -c %s "$tmp/nocrc.pcap")
cat "$tmp/cap.pcap" "$tmp/nocrc.pcap" >/dev/null # page cache: every reader reads from memory
t_cat=999999
for ((r = 0; r < reps; r++)); do
  t0=$(now); cat "$tmp/cap.pcap" >/dev/null; t=$(secs "$t0" "$(now)")
  awk -v a="$t" -v b="$t_cat" 'BEGIN { exit !(a < b) }' && t_cat=$t
done
lint_best "$tmp/cap.pcap"
rc=$lint_rc t_lint_crc=$t_lint
lint_sum=$(grep ' segments: ' "$tmp/lint.txt" | sed 's/^lint [^:]*: //')
lint_best "$tmp/nocrc.pcap"
t_lint_nocrc=$t_lint rc_nocrc=$lint_rc

echo "active suite: ${summary} in ${t_suite} s$([ ${#skip[@]} -gt 0 ] && echo ', VITCP-4.3-INCOMING-TIMEOUT skipped')$([ $smoke -eq 1 ] && echo ', smoke: accept-basic only')"
printf 'WARP suite: %s in %s s\n' "$(IFS=';'; echo "${warp_sum[*]}")" "$t_warp"
printf 'IFT suite: %s in %s s\n' "$(IFS=';'; echo "${ift_sum[*]}")" "$t_ift"
echo "lint: $(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }') MB capture (vitcp-full, CRC on): $lint_sum, exit $rc; best of $reps"
echo "      $(awk -v b="$bytes_nocrc" 'BEGIN { printf "%.1f", b / 1e6 }') MB capture (vitcp-full-nocrc), exit $rc_nocrc"
mbps_lint=$(awk -v b="$bytes" -v t="$t_lint_crc" 'BEGIN { printf "%.1f", b / 1e6 / t }')
mbps_nocrc=$(awk -v b="$bytes_nocrc" -v t="$t_lint_nocrc" 'BEGIN { printf "%.1f", b / 1e6 / t }')
mbps_cat=$(awk -v b="$bytes" -v t="$t_cat" 'BEGIN { if (t < 0.001) t = 0.001; printf "%.1f", b / 1e6 / t }')
printf '%-34s %9s s %10s MB/s\n' "vitcp-conform lint, CRC" "$t_lint_crc" "$mbps_lint" \
  "vitcp-conform lint, no CRC" "$t_lint_nocrc" "$mbps_nocrc" "cat FILE >/dev/null (cached)" "$t_cat" "$mbps_cat"
echo "  lint / cat read speed = $(awk -v a="$mbps_lint" -v b="$mbps_cat" 'BEGIN { printf "%.3f", a / b }')x (CRC), $(awk -v a="$mbps_nocrc" -v b="$mbps_cat" 'BEGIN { printf "%.3f", a / b }')x (no CRC)"
awk -v s="$t_suite" 'BEGIN { r = s / 60
  printf "ratio active suite seconds/60 s = %.2fx (target < 1.00x) %s\n", r, (r < 1 ? "OK" : "MISS") }'
awk -v s="$t_warp" 'BEGIN { r = s / 10
  printf "ratio WARP suite seconds/10 s = %.2fx (target < 1.00x) %s\n", r, (r < 1 ? "OK" : "MISS") }'
awk -v s="$t_ift" 'BEGIN { r = s / 60
  printf "ratio IFT suite seconds/60 s = %.2fx (target < 1.00x) %s\n", r, (r < 1 ? "OK" : "MISS") }'
awk -v m="$mbps_lint" 'BEGIN { r = m / 100
  printf "ratio lint MB/s / 100 MB/s, CRC capture = %.2fx (target >= 1.00x) %s\n", r, (r >= 1 ? "OK" : "MISS") }'
awk -v m="$mbps_nocrc" 'BEGIN { r = m / 100
  printf "ratio lint MB/s / 100 MB/s, no-CRC capture = %.2fx (target >= 1.00x) %s\n", r, (r >= 1 ? "OK" : "MISS") }'
