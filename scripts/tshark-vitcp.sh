#!/usr/bin/env bash
# Run the stock tshark with the vitcp plugin from a build directory, without
# installing it system-wide. tshark running as root ignores the personal
# plugin folder, so as root the plugin goes into a private HOME and tshark
# runs as 'nobody' (input files are copied where nobody can read them).
#
# Usage: scripts/tshark-vitcp.sh BUILD_DIR [tshark arguments...]
#   e.g. scripts/tshark-vitcp.sh build -r captures/vitcp-full.pcap -Y vitcp
set -euo pipefail
build=${1:?usage: tshark-vitcp.sh BUILD_DIR [tshark args...]}
shift
plugin="$build/plugins/epan/vitcp.so"
[ -f "$plugin" ] || { echo "tshark-vitcp: no plugin at $plugin (build first)" >&2; exit 2; }
command -v tshark >/dev/null || { echo "tshark-vitcp: tshark is not installed" >&2; exit 2; }

home=$(mktemp -d /tmp/vitcp-tshark.XXXXXX)
trap 'rm -rf "$home"' EXIT
mkdir -p "$home/.local/lib/wireshark/plugins/4.0/epan" "$home/no-extcap" "$home/in"
cp "$plugin" "$home/.local/lib/wireshark/plugins/4.0/epan/vitcp.so"

# Copy every readable input file named after -r so that nobody can read it.
args=()
prev=""
for a in "$@"; do
  if [ "$prev" = "-r" ] && [ -f "$a" ]; then
    cp "$a" "$home/in/$(basename "$a")"
    a="$home/in/$(basename "$a")"
  fi
  args+=("$a")
  prev=$a
done
chmod -R a+rX "$home"

env_vars=(HOME="$home" WIRESHARK_EXTCAP_DIR="$home/no-extcap" LANG=C.UTF-8 PATH=/usr/bin:/bin)
# A sanitizer build of the plugin needs its runtime loaded first.
# Not "ldd | grep -q": under pipefail grep's early exit can fail ldd (SIGPIPE).
plugin_deps=$(ldd "$plugin" 2>/dev/null || true)
if [[ $plugin_deps == *libasan* ]]; then
  cc=${CC:-cc}
  env_vars+=(LD_PRELOAD="$($cc -print-file-name=libasan.so):$($cc -print-file-name=libubsan.so)"
             ASAN_OPTIONS=detect_leaks=0)
fi
if [ "$(id -u)" -eq 0 ]; then
  cd "$home"
  setpriv --reuid=nobody --regid=nogroup --clear-groups env "${env_vars[@]}" tshark "${args[@]}"
else
  env "${env_vars[@]}" tshark "${args[@]}"
fi
