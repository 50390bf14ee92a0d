#!/usr/bin/env bash
# Dissection-cost benchmark (issue 22): for each of VI/TCP, IFT, WARP and
# PacketWay EEP, tshark with the vitcp plugin in two passes (-2, as Wireshark
# loads a file) on a long clean stream and on the same stream damaged two ways:
#   length  one broken length early (vitcp-trafgen --break <length rule> --target 0)
#   flips   random byte damage (editcap -E with a fixed --seed, headers kept)
# at two lengths N and 4N, all in one run. Printed per protocol and damage kind:
# the CPU time per frame of the damaged stream against the clean stream of the
# same length (start-up subtracted), at N and at 4N, and a verdict: within 2x,
# and not growing from N to 4N (a cost superlinear in the stream shows as a
# ratio that grows with the length); and the clean stream's own cost per frame
# at 4N against N. Benchmarks print; they do not fail on timing.
#
# usage: bench/cost/run.sh BUILD_DIR [--smoke]
#   BUILD_DIR needs trafgen/vitcp-trafgen and plugins/epan/vitcp.so
#   (cmake --build BUILD_DIR --target bench_cost builds them and runs this).
#   Use a Release build without sanitizers for figures; --smoke only proves it works.
#   Environment: REPS (default 3), BENCH_TMP (default $TMPDIR or /tmp),
#   COST_LIMIT (seconds one tshark run may take before it is cut off, default 300),
#   COST_PROTOS (default "vitcp ift warp eep eep-router"; eep-router: both hops of
#   every message through a router, paired by content, P31).
set -euo pipefail
. "$(dirname "$0")/../lib.sh"
bench_args "$@"
here=$(cd "$(dirname "$0")" && pwd)
tshark_sh="$here/../../scripts/tshark-vitcp.sh"
trafgen="$build/trafgen/vitcp-trafgen"
bench_need bench_cost -e "$trafgen" "$build/plugins/epan/vitcp.so"
for tool in tshark editcap capinfos timeout; do
  command -v $tool >/dev/null || { echo "bench_cost: $tool is not installed" >&2; exit 2; }
done

load0=$(cut -d' ' -f1-3 /proc/loadavg)
limit=${COST_LIMIT:-300}
protos=(${COST_PROTOS:-vitcp ift warp eep eep-router})
tmp=$(mktemp -d "${BENCH_TMP:-${TMPDIR:-/tmp}}/bench-cost.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
chmod a+rx "$tmp"

# Per protocol: scenario, the rule whose length field is broken, the display
# filter prefix of its findings, the editcap -o offset that keeps link, IP and
# TCP headers (Ethernet 14 + IPv4 20 + TCP 20; EEP sits right on Ethernet), and
# the --count giving N (~28,000 frames; the smoke size is tiny).
declare -A scen rule filt off count
scen[vitcp]=vitcp-full   rule[vitcp]=VITCP-3.2-SEG-LEN-MIN   filt[vitcp]=vitcp  off[vitcp]=54 count[vitcp]=1500
scen[ift]=ift-session    rule[ift]=IFT-5.1-DDP-HDR-PRESENT   filt[ift]=ift      off[ift]=54   count[ift]=4000
scen[warp]=warp-session  rule[warp]=WARP-A-CHUNK-LEN         filt[warp]=warp    off[warp]=54  count[warp]=3500
scen[eep]=eep-frames     rule[eep]=EEP-6H-DL-FITS            filt[eep]=pktway   off[eep]=14   count[eep]=2500
scen[eep-router]=eep-router rule[eep-router]=EEP-6H-DL-FITS   filt[eep-router]=pktway off[eep-router]=14 count[eep-router]=2500
flip_prob=0.00001 flip_seed=22
reps=${REPS:-3}
if [ $smoke -eq 1 ]; then
  for p in "${protos[@]}"; do count[$p]=10; done
  reps=1 flip_prob=0.001
fi

# Captures: <proto>-<size>-<kind>.pcap, size n or 4n, kind clean, length, flips.
for p in "${protos[@]}"; do
  [ -n "${scen[$p]:-}" ] || { echo "bench_cost: unknown protocol '$p' in COST_PROTOS" >&2; exit 2; }
  for size in n 4n; do
    c=${count[$p]}
    [ $size = 4n ] && c=$((c * 4))
    base=$tmp/$p-$size
    "$trafgen" --seed 1 -q --no-meta --count $c -w "$base-clean.pcap" "${scen[$p]}"
    "$trafgen" --seed 1 -q --no-meta --count $c --break "${rule[$p]}" --target 0 -w "$base-length.pcap" "${scen[$p]}"
    editcap -E $flip_prob --seed $flip_seed -o "${off[$p]}" "$base-clean.pcap" "$base-flips.pcap" >/dev/null
  done
done
"$trafgen" --seed 1 -q --no-meta -w "$tmp/startup.pcap" vitcp-connect

frames_of() { capinfos -c -M "$1" 2>/dev/null | awk -F: '/Number of packets/ { gsub(/ /, "", $2); print $2 }'; }

# tshark through the wrapper (which copies the file where tshark, run as
# nobody, can read it: two passes cannot read a pipe). A sanitizer build of
# the plugin may lose the wrapper's ASan preload race: retried (B9).
tshark_out() { # file [tshark options]: tshark's stdout
  local file=$1 try
  shift
  for try in 1 2 3; do
    "$tshark_sh" "$build" -2 "$@" -r "$file" 2>"$tmp/err" && return 0
    grep -q "ASan runtime does not come first" "$tmp/err" || break
  done
  echo "bench_cost: tshark failed on $file:" >&2
  cat "$tmp/err" >&2
  return 1
}

# Each capture is what it stands for: the clean stream decodes as the protocol
# without the broken rule, the length-broken one shows that rule, the flipped
# one differs from the clean one.
for p in "${protos[@]}"; do
  base=$tmp/$p-n
  n=$(tshark_out "$base-clean.pcap" -Y "${filt[$p]}" -T fields -e frame.number | wc -l)
  [ "$n" -gt 0 ] || { echo "bench_cost: $p clean stream does not decode as ${filt[$p]}" >&2; exit 1; }
  n=$(tshark_out "$base-clean.pcap" -Y "${filt[$p]}.rule == \"${rule[$p]}\"" -T fields -e frame.number | wc -l)
  [ "$n" -eq 0 ] || { echo "bench_cost: $p clean stream already breaks ${rule[$p]}" >&2; exit 1; }
  n=$(tshark_out "$base-length.pcap" -Y "${filt[$p]}.rule == \"${rule[$p]}\"" -T fields -e frame.number | wc -l)
  [ "$n" -gt 0 ] || { echo "bench_cost: $p length-broken stream does not show ${rule[$p]}" >&2; exit 1; }
  if cmp -s "$base-clean.pcap" "$base-flips.pcap"; then
    echo "bench_cost: $p: editcap -E flipped nothing" >&2
    exit 1
  fi
done

# One timed run: CPU seconds (user + system) and wall seconds, in $tmp/time.
# Cut off after $limit seconds (the figure then is a lower bound, flagged).
declare -A cpu wall cut
run_once() { # subject file
  local s=$1 file=$2 try rc
  for try in 1 2 3; do
    rc=0
    /usr/bin/time -f '%e %U %S' -o "$tmp/time" timeout -s KILL "$limit" \
      "$tshark_sh" "$build" -2 -r "$file" >/dev/null 2>"$tmp/err" || rc=$?
    [ $rc -eq 0 ] && break
    grep -q "ASan runtime does not come first" "$tmp/err" && continue
    if grep -q "Command terminated by signal 9\|Command exited with non-zero status 137" "$tmp/time"; then
      cut[$s]=1
      break
    fi
    echo "bench_cost: tshark failed on $file:" >&2
    cat "$tmp/err" >&2
    exit 1
  done
  local sec usr sys
  read -r sec usr sys < <(grep -E '^[0-9.]+ [0-9.]+ [0-9.]+$' "$tmp/time")
  local c
  c=$(awk -v u="$usr" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  if awk -v a="$c" -v b="${cpu[$s]:-999999}" 'BEGIN { exit !(a < b) }'; then cpu[$s]=$c; fi
  if awk -v a="$sec" -v b="${wall[$s]:-999999}" 'BEGIN { exit !(a < b) }'; then wall[$s]=$sec; fi
}

subjects=(startup)
for p in "${protos[@]}"; do
  for size in n 4n; do
    for kind in clean length flips; do subjects+=("$p-$size-$kind"); done
  done
done
declare -A frames
for s in "${subjects[@]}"; do frames[$s]=$(frames_of "$tmp/$s.pcap"); done
for ((r = 0; r < reps; r++)); do
  for s in "${subjects[@]}"; do run_once "$s" "$tmp/$s.pcap"; done
done

printf 'tshark %s -2, plugin %s, best of %d run(s), load average at start %s\n' \
  "$(tshark --version 2>/dev/null | head -1 | awk '{print $3}')" "$build/plugins/epan/vitcp.so" "$reps" "$load0"
printf 'editcap -E %s --seed %s (bytes after the headers); runs cut off after %s s\n' "$flip_prob" "$flip_seed" "$limit"
echo "start-up (tshark -2 on a capture of ${frames[startup]} frames): ${cpu[startup]} CPU s, subtracted below"
printf '%-16s %9s %9s %9s %12s\n' capture frames "CPU s" "wall s" "us/frame"
per_frame() { # subject: net CPU microseconds per frame
  awk -v c="${cpu[$1]}" -v s="${cpu[startup]}" -v f="${frames[$1]}" 'BEGIN {
    n = c - s; if (n < 0.01) n = 0.01; printf "%.3f", n / f * 1e6 }'
}
for s in "${subjects[@]:1}"; do
  printf '%-16s %9s %9.2f %9.2f %12s%s\n' "$s" "${frames[$s]}" "${cpu[$s]}" "${wall[$s]}" "$(per_frame "$s")" \
    "${cut[$s]:+  (cut off at ${limit} s: a lower bound)}"
done

# ratio lines: damaged / clean CPU time per frame, start-up subtracted.
declare -A ratio
for p in "${protos[@]}"; do
  for kind in length flips; do
    for size in n 4n; do
      r=$(awk -v a="$(per_frame "$p-$size-$kind")" -v b="$(per_frame "$p-$size-clean")" 'BEGIN { printf "%.2f", a / b }')
      ratio[$p-$kind-$size]=$r
      label=N
      [ $size = 4n ] && label=4N
      printf 'ratio %s %s/clean CPU per frame at %s (%s frames) = %sx (target <= 2.00x) %s\n' "$p" "$kind" "$label" \
        "${frames[$p-$size-clean]}" "$r" "$(awk -v r="$r" 'BEGIN { print (r <= 2.0 ? "OK" : "MISS") }')"
    done
  done
done

# The clean stream itself: CPU time per frame at 4N against N (B13). A cost
# superlinear in the stream's length, damaged or not, shows here, where the
# damaged/clean ratios above cannot see it (it cancels out).
for p in "${protos[@]}"; do
  r=$(awk -v a="$(per_frame "$p-4n-clean")" -v b="$(per_frame "$p-n-clean")" 'BEGIN { printf "%.2f", a / b }')
  printf 'ratio %s clean CPU per frame at 4N/at N = %sx (target <= 1.50x) %s\n' "$p" "$r" \
    "$(awk -v r="$r" 'BEGIN { print (r <= 1.5 ? "OK" : "MISS") }')"
done

# Verdicts: within 2x at both lengths; "grows" when the ratio at 4N exceeds
# the ratio at N by more than half (B12: a cost quadratic in the stream would
# multiply it by about 4; measurement noise stays well under 1.5x).
for p in "${protos[@]}"; do
  for kind in length flips; do
    rn=${ratio[$p-$kind-n]} r4=${ratio[$p-$kind-4n]}
    awk -v p="$p" -v k="$kind" -v a="$rn" -v b="$r4" -v cutn="${cut[$p-n-$kind]:-}${cut[$p-n-clean]:-}" \
        -v cut4="${cut[$p-4n-$kind]:-}${cut[$p-4n-clean]:-}" 'BEGIN {
      g = b / a
      within = (a <= 2.0 && b <= 2.0 && cutn == "" && cut4 == "")
      grows = (g > 1.5 || (cut4 != "" && cutn == ""))
      printf "verdict %s %s: %s (N %.2fx, 4N %.2fx); %s from N to 4N (4N/N %.2fx)\n", p, k,
        within ? "within 2x" : "ABOVE 2x", a, b, grows ? "GROWS" : "does not grow", g
    }'
  done
done
