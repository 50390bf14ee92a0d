#!/usr/bin/env bash
# CI: the README's two commands, exactly as written, as root, on a fresh
# Debian 12 root holding a clean clone of this commit; then the vitcp .deb
# built there is installed in another fresh root and checked as an ordinary
# user would use it (scripts/check-installed.sh). A missing install step fails
# here, as it would for a new user.
#
# Where no fresh root can be made (not root, no debootstrap, no Debian archive,
# no namespaces), the two commands run in place instead, and this says so
# loudly: that run cannot prove the README on a new machine.
# Usage: scripts/ci.sh          (scripts/run.sh ci; .ci/run)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
fresh_root=$here/scripts/fresh-root.sh
t0=$(date +%s)
timings=()
timed() { # timed NAME CMD...: run CMD, remember how long it took
  local name=$1 s rc=0; shift
  s=$(date +%s)
  "$@" || rc=$?
  timings+=("$name $(( $(date +%s) - s ))s")
  return $rc
}
report_time() {
  echo "ci: times: ${timings[*]:-}; total $(( $(date +%s) - t0 ))s"
}
# The tests' and the install check's counts, as the run's closing line.
report_counts() { # report_counts LOG...
  cat "$@" | awk '
    /tests passed, [0-9]+ tests failed out of [0-9]+/ { p += $NF - $4; f += $4 }
    /^[0-9]+ passed, [0-9]+ failed$/ { p += $1; f += $3 }
    END { printf "ci: %d passed, %d failed\n", p, f }'
}

loud() {
  printf '\n'
  printf '!%.0s' $(seq 1 78); printf '\n'
  printf '!! %s\n' "$@"
  printf '!%.0s' $(seq 1 78); printf '\n\n'
}

in_place() {
  loud "ci: NO FRESH ROOT: $1" \
       "ci: running the README's commands in place; this does NOT prove that they" \
       "ci: work on a new Debian 12 machine (packages installed by hand hide here)."
  cd "$here"
  timed demo bash scripts/run.sh demo
  timed test bash scripts/run.sh test
  report_time
  exit 0
}
# ctest's and check-installed's own closing lines stay the last of their steps.

# Can this machine make a fresh root at all?
[ "$(id -u)" -eq 0 ] || in_place "not root"
if ! command -v debootstrap >/dev/null; then
  echo "ci: apt-get install debootstrap (the fresh root's builder)"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; } >/dev/null 2>&1; then
    in_place "debootstrap cannot be installed"
  fi
fi
unshare --mount --pid --fork true 2>/dev/null || in_place "no mount/PID namespaces (unshare failed)"

work=$(mktemp -d /var/tmp/vitcp-ci.XXXXXX)
cleanup() {
  local rc=$?
  [ "$rc" -eq 0 ] || { echo "ci: FAILED (exit $rc)"; report_time; }
  bash "$fresh_root" remove "$work/root" || rc=1
  bash "$fresh_root" remove "$work/install-root" || rc=1
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT

if ! timed fresh-root bash "$fresh_root" new "$work/root"; then
  in_place "debootstrap could not build a Debian 12 root (no archive reachable?)"
fi
commit=$(git -C "$here" rev-parse HEAD)
git clone --quiet --no-local "$here" "$work/root/root/vitcp"
git -C "$work/root/root/vitcp" checkout --quiet --detach "$commit"
# The drafts beside the clone, where README.md says they are (the catalog's
# quote test reads them), as they are beside CI's own clone.
if [ -d "$here/../shared/seeds" ]; then
  mkdir -p "$work/root/root/shared"
  cp -r "$here/../shared/seeds" "$work/root/root/shared/"
fi
echo "ci: fresh Debian 12 root with a clean clone of $commit in /root/vitcp"

in_root() { bash "$fresh_root" exec "$work/root" bash -c "cd /root/vitcp && $1"; }
teed() { local log=$1; shift; "$@" 2>&1 | tee "$log"; }   # pipefail keeps "$@"'s status
echo "ci: # bash scripts/run.sh demo"
timed demo in_root 'bash scripts/run.sh demo'
echo "ci: # bash scripts/run.sh test"
timed test teed "$work/test.log" in_root 'bash scripts/run.sh test'
echo "ci: # bash scripts/run.sh package"
timed package in_root 'bash scripts/run.sh package'

# The package, in a second fresh root that never saw the sources.
debs=("$work"/root/root/vitcp/build-pkg/vitcp_*.deb)
[ -f "${debs[0]}" ] || { echo "ci: no .deb was built" >&2; exit 1; }
deb=$(basename "${debs[0]}")
cp "${debs[0]}" "$work/$deb"
bash "$fresh_root" remove "$work/root"
timed install-root bash "$fresh_root" new "$work/install-root"
cp "$work/$deb" "$here/scripts/check-installed.sh" "$work/install-root/root/"
mkdir -p "$work/install-root/root/compat" # issue 17's programs, built there with pkg-config
cp "$here"/tests/vipl/compat/compat_*.c "$work/install-root/root/compat/"
echo "ci: # apt install ./$deb in a fresh root, then check it as a user"
timed install-check teed "$work/install.log" \
  bash "$fresh_root" exec "$work/install-root" bash /root/check-installed.sh "/root/$deb"
report_time
report_counts "$work/test.log" "$work/install.log"
