#!/usr/bin/env bash
# Smoke check of one benchmark (ctest, label unit): run it in its tiny
# --smoke size and assert that it exits 0 and prints exactly N ratio lines of
# the house format
#   ratio <what> = N.NNx (target <op> N.NNx) OK|MISS
# Timing is NOT asserted (MISS is fine here): only that the benchmark still works.
#
# usage: smoke-check.sh N COMMAND [ARGS...]
set -uo pipefail
want=${1:?usage: smoke-check.sh N COMMAND [ARGS...]}
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -ne 0 ]; then
  echo "smoke-check: '$*' exited $rc" >&2
  exit 1
fi
re='^ratio .+ = [0-9]+\.[0-9]{2}x \(target (<=|>=|<) [0-9]+(\.[0-9]+)?x?\) (OK|MISS)$'
got=$(printf '%s\n' "$out" | grep -Ec "$re" || true)
if [ "$got" -ne "$want" ]; then
  echo "smoke-check: expected $want ratio lines, got $got" >&2
  exit 1
fi
bad=$(printf '%s\n' "$out" | grep '^ratio ' | grep -Evc "$re" || true)
if [ "$bad" -ne 0 ]; then
  echo "smoke-check: $bad malformed ratio line(s)" >&2
  exit 1
fi
echo "smoke-check: $got ratio lines"
