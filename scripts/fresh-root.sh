#!/usr/bin/env bash
# A fresh Debian 12 root, to run commands in as on a new machine (as root).
#   fresh-root.sh new DIR          DIR becomes a copy of the pristine root
#                                  (debootstrap'd once, cached outside any clone)
#   fresh-root.sh exec DIR CMD...  run CMD as root inside DIR
#   fresh-root.sh remove DIR       delete DIR
#
# The pristine root is Debian 12 "minbase" plus git and ca-certificates, the
# least a user needs to clone the project: everything else must come from
# scripts/run.sh's package lists. It uses this host's Debian mirror and apt
# sources, and lives in $VITCP_ROOT_CACHE (default /var/cache/vitcp).
#
# exec runs CMD in private mount and PID namespaces: /proc, /sys and /dev are
# mounted into DIR only inside them, so they disappear with the namespaces
# however CMD ends (crash, kill, timeout), and so does every process CMD left
# running. The network is the host's (apt, loopback tests, ip netns).
set -euo pipefail

cache=${VITCP_ROOT_CACHE:-/var/cache/vitcp}
suite=bookworm
include=git,ca-certificates
pristine=$cache/debian12-minbase
stamp="$suite minbase $include v1"

die() { echo "fresh-root: $*" >&2; exit 1; }

# The host's Debian mirror (first URI of a Debian suite in its apt sources).
host_mirror() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -e "$f" ] || continue
    awk '/^URIs:/ {u=$2} /^Suites:/ && /bookworm( |$)/ && u ~ /\/debian\/?$/ {print u; exit}' "$f"
  done | head -n 1 | grep . && return 0
  [ -e /etc/apt/sources.list ] &&
    awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list | grep .
}

# Copy the host's Debian apt sources (main, updates, security) into ROOT, so
# the root installs the same versions a fresh machine here would.
copy_apt_sources() {
  local root=$1 f copied=0
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -s "$f" ] || continue
    grep -qE '^[[:space:]]*(deb|URIs:)[[:space:]].*/debian(-security)?/?([[:space:]]|$)' "$f" || continue
    cp "$f" "$root$f"
    copied=1
  done
  # debootstrap's own sources.list stays only when the host has none of its own.
  if [ "$copied" = 1 ] && [ ! -e /etc/apt/sources.list ]; then rm -f "$root/etc/apt/sources.list"; fi
}

make_pristine() {
  [ -f "$pristine/.vitcp-stamp" ] && [ "$(cat "$pristine/.vitcp-stamp")" = "$stamp" ] && return 0
  command -v debootstrap >/dev/null || die "debootstrap is not installed"
  local mirror tmp="$pristine.tmp.$$"
  mirror=$(host_mirror || true)
  mkdir -p "$cache"
  rm -rf "$pristine" "$tmp"
  echo "fresh-root: debootstrap $suite (minbase + $include) into $pristine (log: $cache/debootstrap.log)"
  if ! debootstrap --variant=minbase --include="$include" "$suite" "$tmp" ${mirror:+"$mirror"} \
      >"$cache/debootstrap.log" 2>&1; then
    tail -n 20 "$cache/debootstrap.log" >&2
    rm -rf "$tmp"
    die "debootstrap failed"
  fi
  copy_apt_sources "$tmp"
  echo "$stamp" >"$tmp/.vitcp-stamp"
  mv "$tmp" "$pristine"
}

# Nothing of the host may be mounted below DIR when it is deleted.
assert_unmounted() {
  local dir; dir=$(realpath "$1")
  if awk -v d="$dir" '$5 == d || index($5, d "/") == 1 {found=1} END {exit !found}' /proc/self/mountinfo; then
    die "something is still mounted below $dir; not deleting it"
  fi
}

cmd=${1:-}
case "$cmd" in
  new)
    dir=${2:?usage: fresh-root.sh new DIR}
    [ "$(id -u)" -eq 0 ] || die "needs root"
    make_pristine
    [ ! -e "$dir" ] || die "$dir exists"
    cp -a "$pristine" "$dir"
    rm -f "$dir/.vitcp-stamp"
    ;;
  exec)
    dir=${2:?usage: fresh-root.sh exec DIR CMD...}
    shift 2
    [ -d "$dir/etc" ] || die "$dir is not a root"
    cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
    # PID 1 of the new PID namespace mounts, then becomes CMD; when it exits
    # the kernel ends every process and mount that the run left behind.
    exec unshare --mount --pid --fork --propagation private -- bash -c '
      set -e
      root=$1; shift
      # the root a mount point of its own, as / is on a machine: tools that
      # remount / (ip netns exec: mount --make-rslave /) fail on a plain dir
      mount --bind "$root" "$root"
      mount -t proc proc "$root/proc"
      mount --rbind /sys "$root/sys"
      mount --rbind /dev "$root/dev"
      mount -t tmpfs -o mode=0755 tmpfs "$root/run"
      exec chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin ${CI:+CI=$CI} "$@"
    ' fresh-root "$dir" "$@"
    ;;
  remove)
    dir=${2:?usage: fresh-root.sh remove DIR}
    [ -e "$dir" ] || exit 0
    assert_unmounted "$dir"
    rm -rf --one-file-system "$dir"
    ;;
  *)
    echo "usage: fresh-root.sh new DIR | exec DIR CMD... | remove DIR" >&2
    exit 2
    ;;
esac
