#!/usr/bin/env bash
# Long fuzzing runs (docs/robustness.md, "Fuzzing campaign"):
#   scripts/fuzz.sh list                 the harnesses
#   scripts/fuzz.sh HARNESS [SECONDS]    libFuzzer on one harness (default 3600 s)
#   scripts/fuzz.sh all [SECONDS]        every harness in turn, SECONDS each
#   scripts/fuzz.sh plugin [SECONDS]     the tshark campaign over the plugin
# libFuzzer needs clang (Debian 12: clang, libclang-rt-14-dev); as root the
# script installs them when missing. Without clang it runs the gcc replayer
# and mutator (the CI build) with a new seed each round until the time is up
# (VITCP_FUZZ_GCC=1 chooses it even where clang is installed).
# Corpora, crashes and logs live outside the repository, in
# $VITCP_FUZZ_DIR (default ~/.cache/vitcp-fuzz): a corpus grows from run to
# run. A crash reproducer is written to $VITCP_FUZZ_DIR/crashes/ and the
# script exits 1; replay it with build-fuzz/fuzz/fuzz_HARNESS FILE.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

harnesses=(vitcp_segment vitcp_options vitcp_framer ift_decode ift_stream eep warp_chunk warp_framer
           pcap_reader case_parse trafgen_script)
work=${VITCP_FUZZ_DIR:-$HOME/.cache/vitcp-fuzz}
jobs=${VITCP_FUZZ_JOBS:-2}

usage() { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[[ $# -ge 1 ]] || usage
what=$1
secs=${2:-3600}
[[ $secs =~ ^[0-9]+$ && $secs -gt 0 ]] || { echo "fuzz.sh: bad SECONDS '$secs'" >&2; exit 2; }
if [[ $what == list ]]; then printf '%s\n' "${harnesses[@]}" plugin; exit 0; fi
if [[ $what != all && $what != plugin && ! " ${harnesses[*]} " =~ " $what " ]]; then
  echo "fuzz.sh: unknown harness '$what' (scripts/fuzz.sh list)" >&2; exit 2
fi
mkdir -p "$work/crashes" "$work/logs"

have_libfuzzer() {
  [[ -z ${VITCP_FUZZ_GCC:-} ]] && command -v clang >/dev/null &&
    [[ -e $(clang -print-file-name=libclang_rt.fuzzer-x86_64.a) && $(clang -print-file-name=libclang_rt.fuzzer-x86_64.a) == /* ]]
}
if [[ -z ${VITCP_FUZZ_GCC:-} && $what != plugin && $(id -u) == 0 ]] && ! have_libfuzzer; then
  echo "fuzz.sh: installing clang and libclang-rt-14-dev (libFuzzer)"
  apt-get update -qq >"$work/logs/apt.log" 2>&1 &&
    apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >>"$work/logs/apt.log" 2>&1 ||
    echo "fuzz.sh: could not install clang (see $work/logs/apt.log); using the gcc replayer" >&2
fi

# The gcc sanitizer build (the CI one): the seeding tool, the replayer, the plugin.
build_gcc() {
  echo "fuzz.sh: building build-test (gcc, ASan+UBSan)"
  cmake -S . -B build-test -DCMAKE_BUILD_TYPE=Debug -DVITCP_SANITIZE=ON >"$work/logs/cmake-gcc.log" 2>&1
  cmake --build build-test -j"$jobs" >>"$work/logs/cmake-gcc.log" 2>&1 ||
    { tail -n 40 "$work/logs/cmake-gcc.log" >&2; exit 1; }
  build-test/fuzz/fuzz-seed "$work/seed" captures build-test/captures >/dev/null
}

# The libFuzzer build: every library compiled with coverage and sanitizers.
build_clang() {
  echo "fuzz.sh: building build-fuzz (clang, libFuzzer, ASan+UBSan)"
  local flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g"
  CC=clang cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVITCP_FUZZ_LIBFUZZER=ON \
    -DVITCP_WERROR=OFF -DVITCP_BUILD_DISSECTOR=OFF -DVITCP_BUILD_BENCH=OFF \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    >"$work/logs/cmake-clang.log" 2>&1
  local targets=(vitcp_captures fuzz-seed)
  for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
  cmake --build build-fuzz -j"$jobs" --target "${targets[@]}" >>"$work/logs/cmake-clang.log" 2>&1 ||
    { tail -n 40 "$work/logs/cmake-clang.log" >&2; exit 1; }
  build-fuzz/fuzz/fuzz-seed "$work/seed" captures build-fuzz/captures >/dev/null
}

seed_dir() { # the read-only seeds of a harness
  case $1 in
    case_parse) echo "$here/conformance/cases" ;;
    trafgen_script) echo "$here/fuzz/seeds/scripts" ;;
    *) echo "$work/seed/$1" ;;
  esac
}

run_libfuzzer() { # HARNESS SECONDS
  local h=$1 s=$2 corpus=$work/corpus/$1
  mkdir -p "$corpus"
  echo "fuzz.sh: libFuzzer $h for $s s (corpus $corpus, log $work/logs/$h.log)"
  local rc=0
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    build-fuzz/fuzz/fuzz_"$h" -max_total_time="$s" -max_len=262144 -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$work/crashes/$h-" "$corpus" "$(seed_dir "$h")" \
    >"$work/logs/$h.log" 2>&1 || rc=$?
  grep -E '^stat::number_of_executed_units|^stat::average_exec_per_sec|^#[0-9]+.*DONE' "$work/logs/$h.log" | sed "s/^/  $h: /" || true
  if [[ $rc != 0 ]]; then
    echo "fuzz.sh: $h FOUND A PROBLEM (exit $rc); reproducer in $work/crashes/, stack in $work/logs/$h.log" >&2
    grep -m1 -A12 -E 'ERROR: |runtime error|FUZZ CHECK FAILED' "$work/logs/$h.log" >&2 || true
    return 1
  fi
}

run_replayer() { # HARNESS SECONDS: new seeds until the time is up
  local h=$1 s=$2 end=$((SECONDS + $2)) round=0
  echo "fuzz.sh: gcc replayer $h for $s s (no libFuzzer)"
  while ((SECONDS < end)); do
    round=$((round + 1))
    VITCP_ROBUST_SEED=$(( $(date +%s) * 1000 + round )) VITCP_FUZZ_CRASH_DIR="$work/crashes" \
      build-test/fuzz/fuzz_"$h" --runs 200000 "$(seed_dir "$h")" >>"$work/logs/$h.log" 2>&1 ||
      { echo "fuzz.sh: $h FOUND A PROBLEM; see $work/logs/$h.log and $work/crashes/" >&2; tail -n 30 "$work/logs/$h.log" >&2; return 1; }
  done
  tail -n 1 "$work/logs/$h.log"
}

run_one() {
  if have_libfuzzer; then run_libfuzzer "$1" "$2"; else run_replayer "$1" "$2"; fi
}

if [[ $what == plugin ]]; then
  build_gcc
  asan=$(gcc -print-file-name=libasan.so) ubsan=$(gcc -print-file-name=libubsan.so)
  VITCP_PLUGIN=$here/build-test/plugins/epan/vitcp.so VITCP_PRELOAD=$asan:$ubsan \
    VITCP_FUZZ_SEED=${VITCP_FUZZ_SEED:-$(date +%s)} PYTHONDONTWRITEBYTECODE=1 \
    python3 fuzz/plugin_campaign.py --damage build-test/fuzz/fuzz-pcap-damage --captures captures \
      --seconds "$secs" --jobs "$jobs" --keep "$work/crashes/plugin"
  exit
fi

if have_libfuzzer; then build_clang; else build_gcc; fi
status=0
if [[ $what == all ]]; then
  for h in "${harnesses[@]}"; do run_one "$h" "$secs" || status=1; done
else
  run_one "$what" "$secs" || status=1
fi
exit $status
