#!/usr/bin/env bash
# Dissector benchmark: time `tshark -r X` with the vitcp plugin (through
# scripts/tshark-vitcp.sh) on a ~200 MB VI/TCP capture and a ~200 MB IFT capture
# from vitcp-trafgen, against baselines measured in the same run:
#   - the same TCP segment sizes framed as iWARP MPA (markers off, CRC on),
#     decoded by Wireshark's own iwarp_mpa/iwarp_ddp_rdmap (bench_capconv mpa);
#   - the same TCP bytes on an unregistered port with the plugin's heuristics
#     off, i.e. plain TCP (bench_capconv plain).
# Each capture is decoded REPS times, interleaved; the best run counts. Ratios
# compare CPU time (user + system, which other jobs on a shared machine disturb
# far less than wall time) with tshark's start-up (a capture of a few frames:
# vitcp-connect) subtracted, so they compare dissection work only; wall times
# are printed too.
#
# usage: bench/dissector/run.sh BUILD_DIR [--smoke]
#   BUILD_DIR needs vitcp-trafgen, bench_capconv and plugins/epan/vitcp.so
#   (cmake --build BUILD_DIR --target bench_dissector builds them and runs this).
#   Use a Release build without sanitizers for figures; --smoke only proves it works.
#   Environment: REPS (default 3), BENCH_TMP (default $TMPDIR or /tmp).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
bench_args "$@"
here=$(cd "$(dirname "$0")" && pwd)
tshark_sh="$here/../../scripts/tshark-vitcp.sh"
trafgen="$build/trafgen/vitcp-trafgen"
capconv="$build/bench/dissector/bench_capconv"
bench_need bench_dissector -e "$trafgen" "$capconv" "$build/plugins/epan/vitcp.so"
command -v tshark >/dev/null || { echo "bench_dissector: tshark is not installed" >&2; exit 2; }

load0=$(cut -d' ' -f1-3 /proc/loadavg)
if [ $smoke -eq 1 ]; then vcount=5 icount=8 reps=1; else vcount=4250 icount=7000 reps=${REPS:-3}; fi
tmp=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/bench-dissector.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod a+rx "$tmp"

# Scenario parameters: 14000-byte messages in 1400-byte VI segments / IFT
# frames, so one PDU fits one 1460-byte TCP segment (the MPA baseline frames
# one FPDU per TCP segment, as RFC 5044 senders do).
params=(--seed 1 --msg-size 14000 --seg-payload 1400 -q --no-meta)
"$trafgen" "${params[@]}" --count $vcount -w "$tmp/vitcp.pcap" vitcp-full
"$trafgen" "${params[@]}" --count $icount -w "$tmp/ift.pcap" ift-session
"$trafgen" "${params[@]}" -w "$tmp/startup.pcap" vitcp-connect
for p in vitcp ift; do
  "$capconv" mpa "$tmp/$p.pcap" "$tmp/$p-mpa.pcap" >/dev/null
  "$capconv" plain "$tmp/$p.pcap" "$tmp/$p-plain.pcap" >/dev/null
done
plain_opts=(--disable-heuristic vitcp_tcp --disable-heuristic ift_tcp)

# tshark through the wrapper, reading the capture from stdin (so the wrapper
# does not copy 200 MB for nobody to read). With a sanitizer build of the
# plugin the wrapper's "ldd | grep -q libasan" test can lose the race with
# pipefail and start tshark without the ASan preload: retried (see docs/bench.md).
tshark_in() { # file [tshark options]: stdout as tshark's, stderr to $tmp/err
  local file=$1 try
  shift
  for try in 1 2 3; do
    "$tshark_sh" "$build" "$@" -r - <"$file" 2>"$tmp/err" && return 0
    grep -q "ASan runtime does not come first" "$tmp/err" || break
  done
  echo "bench_dissector: tshark failed on $file:" >&2
  cat "$tmp/err" >&2
  return 1
}

# Check that each capture decodes as the protocol it stands for (first frames).
check() { # file expected-protocol forbidden-protocol [tshark options]
  local file=$1 want=$2 forbid=$3
  shift 3
  local protos
  protos=$(tshark_in "$file" "$@" -c 3000 -T fields -e frame.protocols) || exit 1
  grep -q ":$want" <<<"$protos" || { echo "bench_dissector: $file does not decode as $want" >&2; exit 1; }
  if grep -q -E ":($forbid)(:|$)" <<<"$protos"; then
    echo "bench_dissector: $file decodes as $forbid" >&2
    exit 1
  fi
}
check "$tmp/vitcp.pcap" vitcp "iwarp_mpa|_ws.malformed"
check "$tmp/ift.pcap" ift "iwarp_mpa|_ws.malformed"
check "$tmp/vitcp-mpa.pcap" iwarp_ddp_rdmap "vitcp|ift|_ws.malformed"
check "$tmp/ift-mpa.pcap" iwarp_ddp_rdmap "vitcp|ift|_ws.malformed"
check "$tmp/vitcp-plain.pcap" "tcp:data" "vitcp|ift|iwarp_mpa" "${plain_opts[@]}"
check "$tmp/ift-plain.pcap" "tcp:data" "vitcp|ift|iwarp_mpa" "${plain_opts[@]}"

# One timed tshark run: wall, user and system seconds and peak RSS (KiB) of the
# largest process, in $tmp/time.
run_once() { # file [tshark options]
  local file=$1 try
  shift
  for try in 1 2 3; do
    /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$tshark_sh" "$build" "$@" -r - <"$file" >/dev/null 2>"$tmp/err" && return 0
    grep -q "ASan runtime does not come first" "$tmp/err" || break
  done
  echo "bench_dissector: tshark failed on $file:" >&2
  cat "$tmp/err" >&2
  exit 1
}

# vitcp-noreasm: the VI/TCP capture with message reassembly off, to show what
# reassembly costs (MPA's DDP does not reassemble); printed, not a target.
subjects=(startup vitcp vitcp-noreasm vitcp-mpa vitcp-plain ift ift-mpa ift-plain)
declare -A best wall mem
for s in "${subjects[@]}"; do best[$s]=999999; wall[$s]=999999; mem[$s]=0; done
for ((r = 0; r < reps; r++)); do
  for s in "${subjects[@]}"; do
    opts=()
    file=$tmp/$s.pcap
    [[ $s == *-plain ]] && opts=("${plain_opts[@]}")
    [ "$s" = vitcp-noreasm ] && opts=(-o vitcp.reassemble:FALSE) file=$tmp/vitcp.pcap
    run_once "$file" "${opts[@]}"
    read -r sec usr sys kib <"$tmp/time"
    cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
    if awk -v a="$cpu" -v b="${best[$s]}" 'BEGIN { exit !(a < b) }'; then best[$s]=$cpu; fi
    if awk -v a="$sec" -v b="${wall[$s]}" 'BEGIN { exit !(a < b) }'; then wall[$s]=$sec; fi
    [ "$kib" -gt "${mem[$s]}" ] && mem[$s]=$kib
  done
done

printf 'tshark %s, plugin %s, best of %d run(s), load average at start %s\n' \
  "$(tshark --version 2>/dev/null | head -1 | awk '{print $3}')" "$build/plugins/epan/vitcp.so" "$reps" "$load0"
printf '%-13s %9s %9s %9s %9s %10s\n' capture MB frames "CPU s" "wall s" "peak MiB"
for s in "${subjects[@]}"; do
  file=$tmp/$s.pcap
  [ "$s" = vitcp-noreasm ] && file=$tmp/vitcp.pcap
  bytes=$(stat -c %s "$file")
  frames=$(capinfos -c -M "$file" 2>/dev/null | awk -F: '/Number of packets/ { gsub(/ /, "", $2); print $2 }')
  printf '%-13s %9.1f %9s %9.2f %9.2f %10.1f\n' "$s" "$(awk -v b="$bytes" 'BEGIN { print b / 1e6 }')" "${frames:-?}" \
    "${best[$s]}" "${wall[$s]}" "$(awk -v k="${mem[$s]}" 'BEGIN { print k / 1024 }')"
done

# ratio NAME SUBJECT BASELINE TARGET: CPU time (user + system) of the dissection,
# start-up subtracted; CPU time because other jobs on a shared machine stretch
# wall time far more than CPU time. Wall-time ratios are printed for reference.
ratio() {
  awk -v name="$1" -v a="${best[$2]}" -v b="${best[$3]}" -v s="${best[startup]}" -v t="$4" \
      -v wa="${wall[$2]}" -v wb="${wall[$3]}" 'BEGIN {
    na = a - s; nb = b - s
    if (na < 0.01) na = 0.01
    if (nb < 0.01) nb = 0.01
    r = na / nb
    printf "  wall time incl. start-up: %.2fs / %.2fs = %.2fx\n", wa, wb, wa / wb
    printf "ratio %s = %.2fx (target <= %.2fx) %s\n", name, r, t, (r <= t ? "OK" : "MISS")
  }'
}
echo "start-up (tshark on a capture of a few frames): ${best[startup]} CPU s, subtracted below"
ratio "vitcp/mpa tshark CPU time" vitcp vitcp-mpa 1.0
awk -v a="${best[vitcp-noreasm]}" -v b="${best[vitcp-mpa]}" -v s="${best[startup]}" 'BEGIN {
  na = a - s; nb = b - s; if (na < 0.01) na = 0.01; if (nb < 0.01) nb = 0.01
  printf "  (vitcp with -o vitcp.reassemble:FALSE / mpa = %.2fx: what message reassembly costs)\n", na / nb }'
ratio "vitcp/plain-tcp tshark CPU time" vitcp vitcp-plain 1.3
ratio "ift/mpa tshark CPU time" ift ift-mpa 1.0
ratio "ift/plain-tcp tshark CPU time" ift ift-plain 1.3
