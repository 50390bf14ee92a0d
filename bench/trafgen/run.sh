#!/usr/bin/env bash
# Trafgen benchmark: vitcp-trafgen writing a ~1 GB VI/TCP capture, against two
# baselines measured in the same run:
#   - scapy (scapy_vitcp.py) writing the same scenario; scapy is ~1000x slower,
#     so it writes a ~20 MB slice and the comparison is in PDUs per second
#     (scapy's import time is excluded, which favours scapy);
#   - dd if=/dev/zero bs=1M conv=fdatasync of the same size: sequential write
#     speed of the disk. trafgen's time includes an fsync of its file as well.
# Scenario: "connect", then REPEATS x ("send c2s 14000", "send s2c 14000") in
# 1400-byte VI segments, no CRC (vitcp-trafgen -f). trafgen and dd run REPS
# times (default 2) alternating, the best of each counts; scapy runs once.
#
# usage: bench/trafgen/run.sh BUILD_DIR [--smoke]
#   Output files go to a new directory in BENCH_TMP (default $TMPDIR or /tmp;
#   the device is printed: measure on the disk you care about) and are deleted
#   at the end.
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
bench_args "$@"
here=$(cd "$(dirname "$0")" && pwd)
trafgen="$build/trafgen/vitcp-trafgen"
python=${PYTHON:-/usr/bin/python3}
bench_need bench_trafgen -x "$trafgen"
"$python" -c 'import scapy' 2>/dev/null || { echo "bench_trafgen: $python cannot import scapy (python3-scapy)" >&2; exit 2; }

# One repetition is 2 x 10 segments of 1424 bytes (28.5 KB of VI/TCP, 30 KB of pcap).
if [ $smoke -eq 1 ]; then reps_tg=70 reps_scapy=7 dd_mb=2 reps=1; else reps_tg=35000 reps_scapy=700 dd_mb=1024 reps=${REPS:-2}; fi
base=${BENCH_TMP:-${TMPDIR:-/tmp}}
bench_load
tmp=$(mktemp -d "$base/bench-trafgen.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
avail=$(df -Pk "$tmp" | awk 'NR == 2 { print $4 }')
need=$(( (reps_tg * 31 + dd_mb * 1049 + reps_scapy * 31) ))
[ "$avail" -gt $((need + 100000)) ] || { echo "bench_trafgen: $tmp has ${avail} KiB free, needs ~${need} KiB" >&2; exit 1; }

script() { # repeats file
  { echo connect; for ((i = 0; i < $1; i++)); do printf 'send c2s 14000\nsend s2c 14000\n'; done; } >"$2"
}
script $reps_tg "$tmp/big.scn"
script $reps_scapy "$tmp/small.scn"
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

best_of() { # current candidate -> the smaller
  awk -v a="$1" -v b="$2" 'BEGIN { print (a < b ? a : b) }'
}
# trafgen on the scapy slice: the check that both write the same scenario
"$trafgen" -f "$tmp/small.scn" --seg-payload 1400 --no-meta -q -w "$tmp/tg-small.pcap"

# trafgen (with the fsync that dd's conv=fdatasync does too) and dd of the
# same size, alternating, REPS times each; the best of each counts.
t_tg=999999 t_dd=999999
for ((r = 0; r < reps; r++)); do
  t0=$(now)
  line=$("$trafgen" -f "$tmp/big.scn" --seg-payload 1400 --no-meta -w "$tmp/tg.pcap")
  sync "$tmp/tg.pcap"
  t_tg=$(best_of "$(secs "$t0" "$(now)")" "$t_tg")
  pdus_tg=$(sed -n 's/.*: \([0-9]*\) PDUs.*/\1/p' <<<"$line")
  bytes_tg=$(stat -c %s "$tmp/tg.pcap")
  rm -f "$tmp/tg.pcap"
  t0=$(now)
  dd if=/dev/zero of="$tmp/dd.bin" bs=1M count=$dd_mb conv=fdatasync status=none
  t_dd=$(best_of "$(secs "$t0" "$(now)")" "$t_dd")
  rm -f "$tmp/dd.bin"
done
bytes_dd=$((dd_mb * 1048576))

# scapy, slice
out=$("$python" "$here/scapy_vitcp.py" "$tmp/scapy.pcap" $reps_scapy 14000 1400)
read -r _ pdus_sc _ _ _ t_sc <<<"$out"
bytes_sc=$(stat -c %s "$tmp/scapy.pcap")
# Same scenario? Same frame count and size (payload bytes differ).
size_tg_small=$(stat -c %s "$tmp/tg-small.pcap")
[ "$size_tg_small" -eq "$bytes_sc" ] ||
  { echo "bench_trafgen: scapy wrote $bytes_sc bytes, trafgen $size_tg_small for the same scenario" >&2; exit 1; }

mb() { awk -v b="$1" -v t="$2" 'BEGIN { printf "%.1f", b / 1e6 / t }'; }
rate() { awk -v n="$1" -v t="$2" 'BEGIN { printf "%.0f", n / t }'; }
printf 'output directory %s (%s), trafgen and dd best of %d\n' "$base" "$(df -P "$tmp" | awk 'NR == 2 { print $1 }')" "$reps"
printf '%-28s %10s %10s %9s %10s %12s\n' writer MB PDUs seconds MB/s PDUs/s
printf '%-28s %10.1f %10s %9s %10s %12s\n' "vitcp-trafgen (+fsync)" "$(awk -v b="$bytes_tg" 'BEGIN{print b/1e6}')" \
  "$pdus_tg" "$t_tg" "$(mb "$bytes_tg" "$t_tg")" "$(rate "$pdus_tg" "$t_tg")"
printf '%-28s %10.1f %10s %9s %10s %12s\n' "scapy 2.5 (slice, no import)" "$(awk -v b="$bytes_sc" 'BEGIN{print b/1e6}')" \
  "$pdus_sc" "$t_sc" "$(mb "$bytes_sc" "$t_sc")" "$(rate "$pdus_sc" "$t_sc")"
printf '%-28s %10.1f %10s %9s %10s %12s\n' "dd bs=1M conv=fdatasync" "$(awk -v b="$bytes_dd" 'BEGIN{print b/1e6}')" \
  - "$t_dd" "$(mb "$bytes_dd" "$t_dd")" -
awk -v a="$pdus_tg" -v ta="$t_tg" -v b="$pdus_sc" -v tb="$t_sc" 'BEGIN {
  r = (a / ta) / (b / tb)
  printf "ratio trafgen/scapy PDUs per second = %.2fx (target >= 100.00x) %s\n", r, (r >= 100 ? "OK" : "MISS") }'
awk -v a="$bytes_tg" -v ta="$t_tg" -v b="$bytes_dd" -v tb="$t_dd" 'BEGIN {
  r = (a / ta) / (b / tb)
  printf "ratio trafgen/dd MB per second = %.2fx (target >= 0.50x) %s\n", r, (r >= 0.5 ? "OK" : "MISS") }'
