#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (as root) and for CI:
#   scripts/run.sh demo   install what is missing, build, run the main demo
#   scripts/run.sh test   install what is missing, build with sanitizers, run every test
#   scripts/run.sh deps   only install what is missing
# Both are idempotent: packages already present are not reinstalled and the
# build directories are reused.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$here"

packages=(
  build-essential cmake pkg-config git ca-certificates
  zlib1g-dev libcmocka-dev libpcap-dev libnet1-dev libglib2.0-dev
  libwireshark-dev wireshark-dev tshark
  python3 python3-scapy iproute2 util-linux procps
)

install_deps() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "run.sh: missing packages (${missing[*]}); run as root to install them" >&2
    exit 2
  fi
  echo "run.sh: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # tshark asks whether non-root users may capture; answer no without a prompt.
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
}

jobs=$(nproc 2>/dev/null || echo 2)

build() { # build DIR CMAKE-ARGS...
  local dir=$1; shift
  cmake -S "$here" -B "$dir" "$@"
  cmake --build "$dir" -j"$jobs"
}

case "${1:-}" in
  deps)
    install_deps
    ;;
  demo)
    install_deps
    build "$here/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo
    bash "$here/scripts/demo.sh" "$here/build"
    ;;
  test)
    install_deps
    build "$here/build-test" -DCMAKE_BUILD_TYPE=Debug -DVITCP_SANITIZE=ON -DVITCP_WERROR=ON
    cd "$here/build-test"
    ctest --output-on-failure -j"$jobs" ${VITCP_CTEST_ARGS:-}
    ;;
  *)
    echo "usage: scripts/run.sh demo|test|deps" >&2
    exit 2
    ;;
esac
