# Sourced by the bench/*/run.sh scripts: their shared start.
#   bench_args "$@"        BUILD_DIR [--smoke] -> $build (absolute), $smoke (0/1)
#   bench_need NAME -x|-e FILE...
#                          exit 2 naming the first FILE that is not
#                          executable (-x) or does not exist (-e)
#   bench_load             the load average line every figure is read against

bench_args() {
  build=$(cd "${1:?usage: run.sh BUILD_DIR [--smoke]}" && pwd)
  smoke=0
  [ "${2:-}" = "--smoke" ] && smoke=1
  return 0
}

bench_need() {
  local name=$1 test=$2 f
  shift 2
  for f in "$@"; do
    [ "$test" "$f" ] || { echo "$name: missing $f (build it first)" >&2; exit 2; }
  done
}

bench_load() {
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
}
