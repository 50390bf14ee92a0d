#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (as root) and for CI:
#   scripts/run.sh demo      install what is missing, build, run the main demo
#   scripts/run.sh test      install what is missing, build with sanitizers, run every test
#   scripts/run.sh package   install what is missing, build the vitcp .deb (build-pkg/)
#   scripts/run.sh ci        demo and test on a fresh Debian 12 root, then the .deb
#                            installed in another (scripts/ci.sh)
#   scripts/run.sh deps      only install what is missing
# All are idempotent: packages already present are not reinstalled and the
# build directories are reused. apt's and cmake's output go to log files;
# each step prints one line, and a failing step prints its log's end.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

# Every program the scripts, the build and the tests call comes from one of
# these (a fresh root is the only proof: scripts/ci.sh).
packages=(
  build-essential cmake pkg-config git ca-certificates
  zlib1g-dev libcmocka-dev libpcap-dev libnet1-dev libglib2.0-dev
  libwireshark-dev wireshark-dev tshark scdoc man-db
  python3 python3-scapy iproute2 util-linux procps time
  wireshark-qt xvfb imagemagick x11-utils xdotool   # the plugin in the real GUI (ctest -L gui)
)
package_packages=(dpkg-dev file)   # cpack's DEB generator: dpkg-shlibdeps, file

logs=$here/build-logs
mkdir -p "$logs"

# quietly LOG CMD...: run CMD with its output in LOG; on failure show the end.
quietly() {
  local log=$1; shift
  if ! "$@" >"$log" 2>&1; then
    echo "run.sh: failed: $* (last lines of $log follow)" >&2
    tail -n 60 "$log" >&2
    return 1
  fi
}

install_deps() { # install_deps PACKAGE...
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "run.sh: missing packages (${missing[*]}); run as root to install them" >&2
    exit 2
  fi
  export DEBIAN_FRONTEND=noninteractive
  # tshark asks whether non-root users may capture; answer no without a prompt.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  echo "run.sh: apt-get update (log: $logs/apt-update.log)"
  quietly "$logs/apt-update.log" apt-get update
  echo "run.sh: installing ${#missing[@]} packages: ${missing[*]}"
  quietly "$logs/apt.log" apt-get install -y --no-install-recommends "${missing[@]}"
}

jobs=$(nproc 2>/dev/null || echo 2)

build() { # build DIR CMAKE-ARGS...
  local dir=$1; shift
  local name; name=$(basename "$dir")
  echo "run.sh: configuring $name (log: $logs/$name-configure.log)"
  quietly "$logs/$name-configure.log" cmake -S "$here" -B "$dir" "$@"
  echo "run.sh: building $name (log: $logs/$name-build.log)"
  quietly "$logs/$name-build.log" cmake --build "$dir" -j"$jobs"
}

case "${1:-}" in
  deps)
    install_deps "${packages[@]}"
    ;;
  demo)
    install_deps "${packages[@]}"
    build "$here/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
    bash "$here/scripts/demo.sh" "$here/build"
    ;;
  test)
    install_deps "${packages[@]}"
    build "$here/build-test" -DCMAKE_BUILD_TYPE=Debug -DVITCP_SANITIZE=ON -DVITCP_WERROR=ON
    cd "$here/build-test"
    ctest --output-on-failure -j"$jobs" ${VITCP_CTEST_ARGS:-}
    ;;
  package)
    install_deps "${packages[@]}" "${package_packages[@]}"
    build "$here/build-pkg" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
      -DBUILD_TESTING=OFF -DVITCP_BUILD_BENCH=OFF
    echo "run.sh: cpack -G DEB (log: $logs/cpack.log)"
    (cd "$here/build-pkg" && quietly "$logs/cpack.log" cpack -G DEB)
    ls "$here"/build-pkg/vitcp_*.deb
    ;;
  ci)
    exec bash "$here/scripts/ci.sh"
    ;;
  *)
    echo "usage: scripts/run.sh demo|test|package|ci|deps" >&2
    exit 2
    ;;
esac
