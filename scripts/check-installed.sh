#!/usr/bin/env bash
# Installs a vitcp .deb with apt on a fresh Debian 12 (as root) and checks it
# the way an ordinary user meets it: the plugin loads in the system tshark and
# decodes an installed sample capture, vitcp-conform finds its installed cases
# and passes against vipl-peer, the man pages render, every program and
# subcommand answers --help, warp-peer's and ift-peer's clients pass against their targets, and a VIPL program builds with pkg-config and runs
# against libvipl.so, as do the programs of tests/vipl/compat. Prints "N passed, M failed" last; exit 1 on any failure.
# Usage (as root, in the fresh root): check-installed.sh ./vitcp_VERSION_ARCH.deb
set -uo pipefail   # (so grep -q, which closes its input early, is not used on pipes)
deb=${1:?usage: check-installed.sh VITCP.deb}
user=vitcpuser
passed=0 failed=0
logs=/var/log/vitcp-check-installed
mkdir -p "$logs"
log=$logs/apt.log
n=0

check() { # check NAME CMD...: one verdict line; the check's own log's end on failure
  local name=$1 clog; shift
  n=$((n + 1)); clog=$logs/check-$n.log
  if "$@" >"$clog" 2>&1; then
    echo "check-installed: PASS $name"; passed=$((passed + 1))
  else
    echo "check-installed: FAIL $name (log: $clog)"; failed=$((failed + 1))
    tail -n 15 "$clog" | sed 's/^/    /'
  fi
}
as_user() { setpriv --reuid="$user" --regid="$user" --init-groups env -i HOME="/home/$user" \
  PATH=/usr/bin:/bin LANG=C.UTF-8 "$@"; }

export DEBIAN_FRONTEND=noninteractive
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
echo "check-installed: apt install $deb, and gcc + pkg-config for a VIPL program"
apt-get update >"$log" 2>&1 || { tail "$log"; exit 1; }
if ! apt-get install -y "$deb" gcc libc6-dev pkg-config >>"$log" 2>&1; then
  tail -n 30 "$log"; echo "0 passed, 1 failed"; exit 1
fi
useradd --create-home "$user"
home=/home/$user

plugin_listed() { as_user tshark -G plugins | grep -E '^vitcp\.so.*/usr/lib/.*/wireshark/plugins/4\.0/epan/vitcp\.so'; }
check "tshark -G plugins lists the installed vitcp.so" plugin_listed

decodes() {
  local out
  out=$(as_user tshark -r /usr/share/vitcp/captures/vitcp-full.pcap -Y vitcp) || return 1
  echo "$out" | head -5
  [ "$(echo "$out" | grep -c 'VI/TCP')" -ge 10 ] && ! echo "$out" | grep -q 'Dissector bug'
}
check "tshark decodes /usr/share/vitcp/captures/vitcp-full.pcap" decodes

conform_passes() {
  local port=$((20000 + RANDOM % 20000)) plog=$home/vipl-peer.log pidf=$home/vipl-peer.pid rc
  # the program's own PID (a backgrounded as_user is a subshell's)
  as_user sh -c "echo \$\$ >$pidf; exec vipl-peer --port $port" >"$plog" 2>&1 &
  for _ in $(seq 1 100); do grep -q '^event=listening' "$plog" && break; sleep 0.1; done
  local pid; pid=$(cat "$pidf")
  local region line raddr rhandle rlen
  line=$(grep -m1 '^event=region' "$plog") || { kill "$pid"; return 1; }
  read -r _ raddr rhandle rlen <<<"$line"
  region=${raddr#addr=0x}:$(printf '%x' "${rhandle#handle=}"):${rlen#len=}
  # No --cases: the installed program must find /usr/share/vitcp/cases itself.
  (cd "$home" && as_user vitcp-conform run --target "127.0.0.1:$port" --region "$region" \
     --no-announce --skip VITCP-4.3-INCOMING-TIMEOUT --json "$home/report.json")
  rc=$?
  kill "$pid" 2>/dev/null
  for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  return $rc
}
check "vitcp-conform run (installed cases) passes against vipl-peer" conform_passes

cases_found() { as_user vitcp-conform list | grep 'VITCP-3.6-CRC-ONLY-IF-NEGOTIATED' >/dev/null &&
  [ -f /usr/share/vitcp/cases/010-accept-basic.case ] &&
  [ -f /usr/share/vitcp/cases/warp/010-send-echo.case ] &&
  as_user vitcp-conform list --protocol warp | grep -E '^WARP-A-ADLER-VALID .*active \(' >/dev/null; }
check "the conformance cases (and cases/warp/) are installed under /usr/share/vitcp/cases" cases_found

man_renders() {
  local p
  for p in vitcp-conform vitcp-trafgen vipl-peer vipl-pingpong warp-peer ift-peer pktway-node "7 vitcp" "7 vipl"; do
    # shellcheck disable=SC2086
    as_user env MANPAGER=cat MANWIDTH=80 man $p | grep "^NAME" >/dev/null || { echo "man $p"; return 1; }
  done
}
check "man pages render (vitcp-conform, vitcp-trafgen, vipl-peer, vipl-pingpong, warp-peer, ift-peer, pktway-node, vitcp(7), vipl(7))" man_renders

help_everywhere() {
  local c
  for c in "vitcp-conform --help" "vitcp-conform run --help" "vitcp-conform lint --help" \
           "vitcp-conform list --help" "vitcp-conform show --help" "vitcp-trafgen --help" \
           "vipl-peer --help" "vipl-pingpong --help" "warp-peer --help" "ift-peer --help" "pktway-node --help"; do
    # shellcheck disable=SC2086
    as_user $c | grep -i 'usage' >/dev/null || { echo "no usage from: $c"; return 1; }
  done
}
check "--help on every program and subcommand" help_everywhere

# warp-peer's client against its target: a Send and a multi-chunk RDMA Write
# into the region the target announced (not zero based: --region is needed),
# every echo back and matched. sh writes the target's own PID (it execs
# warp-peer), so the kill reaches warp-peer, not the subshell around it.
warp_peer_works() {
  local wlog=$home/warp-peer.log pidf=$home/warp-peer.pid line wport raddr rhandle rlen region rc trc
  rm -f "$pidf"
  as_user sh -c 'echo $$ >"$HOME/warp-peer.pid"; exec warp-peer --port 0' >"$wlog" 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do grep -q '^event=listening' "$wlog" && break; sleep 0.1; done
  if ! line=$(grep -m1 '^event=listening' "$wlog") || [ ! -s "$pidf" ]; then
    cat "$wlog"; kill "$(cat "$pidf" 2>/dev/null)" $pid 2>/dev/null; return 1
  fi
  read -r _ wport _ <<<"$line"
  line=$(grep -m1 '^event=region' "$wlog")
  read -r _ raddr rhandle rlen _ <<<"$line"
  region=${raddr#addr=0x}:$(printf '%x' "${rhandle#handle=}"):${rlen#len=}
  as_user warp-peer --connect "127.0.0.1:${wport#port=}" --send 3000 --rdma 70000 --region "$region"
  rc=$?
  kill "$(cat "$pidf")"; wait $pid; trc=$?  # SIGTERM: the target stops and exits 0
  cat "$wlog"
  [ "$rc" -eq 0 ] && [ "$trc" -eq 0 ]
}
check "warp-peer --connect: a Send and an RDMA Write echoed by warp-peer --port 0" warp_peer_works

# ift-peer's client against its target: a Send echoed, an RDMA Write read
# back by an RDMA Read (the default region needs no --region).
ift_peer_works() {
  local ilog=$home/ift-peer.log pidf=$home/ift-peer.pid line iport rc trc
  rm -f "$pidf"
  as_user sh -c 'echo $$ >"$HOME/ift-peer.pid"; exec ift-peer --listen 0' >"$ilog" 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do grep -q '^event=listening' "$ilog" && break; sleep 0.1; done
  if ! line=$(grep -m1 '^event=listening' "$ilog") || [ ! -s "$pidf" ]; then
    cat "$ilog"; kill "$(cat "$pidf" 2>/dev/null)" $pid 2>/dev/null; return 1
  fi
  read -r _ iport _ <<<"$line"
  as_user ift-peer --connect "127.0.0.1:${iport#port=}" --send 3000 --write 5000 --read 5000
  rc=$?
  kill "$(cat "$pidf")"; wait $pid; trc=$?  # SIGTERM: the target stops and exits 0
  cat "$ilog"
  [ "$rc" -eq 0 ] && [ "$trc" -eq 0 ]
}
check "ift-peer --connect: a Send echoed, an RDMA Write read back from ift-peer --listen 0" ift_peer_works

vipl_program() {
  cat >"$home/hello_vipl.c" <<'EOF'
#include <stdio.h>
#include <vipl.h>
int main(void)
{
    VIP_NIC_HANDLE nic;
    VIP_NIC_ATTRIBUTES attrs;
    VIP_PROTECTION_HANDLE ptag;
    VIP_VI_HANDLE vi;
    if (VipOpenNic("127.0.0.1:0", &nic) != VIP_SUCCESS) return 1;
    if (VipQueryNic(nic, &attrs) != VIP_SUCCESS) return 2;
    if (VipCreatePtag(nic, &ptag) != VIP_SUCCESS) return 3;
    VIP_VI_ATTRIBUTES va = {VIP_SERVICE_RELIABLE_DELIVERY, 65536, 0, ptag, VIP_TRUE, VIP_TRUE};
    VIP_RETURN r = VipCreateVi(nic, &va, NULL, NULL, &vi);
    if (r != VIP_SUCCESS) { printf("VipCreateVi: %s\n", ViplReturnName(r)); return 4; }
    printf("nic %s mtu %lu levels 0x%x\n", attrs.Name, (unsigned long)attrs.NativeMTU,
           (unsigned)attrs.ReliabilityLevelSupport);
    VipDestroyVi(vi);
    VipDestroyPtag(nic, ptag);
    return VipCloseNic(nic) == VIP_SUCCESS ? 0 : 5;
}
EOF
  chown "$user:" "$home/hello_vipl.c"
  as_user sh -c 'cd ~ && cc -Wall -Werror hello_vipl.c $(pkg-config --cflags --libs vipl) -o hello_vipl && ./hello_vipl' &&
    as_user sh -c 'ldd ~/hello_vipl' | grep -E 'libvipl\.so\.1 => (/usr)?/lib/.*libvipl\.so\.1'
}
check "a VIPL program builds with pkg-config vipl and runs on libvipl.so.1" vipl_program

# The programs of tests/vipl/compat (issue 17), copied beside this script by
# ci.sh: built as their users would, with pkg-config, and run on loopback.
compat_programs() {
  local src=/root/compat port=$((20000 + RANDOM % 20000)) p pids=() r rc=0
  [ -d "$src" ] || { echo "no $src"; return 1; }
  mkdir -p "$home/compat" && cp "$src"/compat_*.c "$home/compat/" && chown -R "$user:" "$home/compat" || return 1
  for p in compat_devguide compat_giganet compat_ranks compat_helpers; do
    as_user sh -c "cd ~/compat && cc -std=c11 -Wall -Wextra -Wpedantic -Werror -D_POSIX_C_SOURCE=200809L \
      $p.c \$(pkg-config --cflags --libs vipl) -o $p" || return 1
  done
  as_user "$home/compat/compat_helpers" || return 1
  # a Developer's Guide client started before its server (VIA 9.4.4: it waits)
  as_user env VIPL_PORT="$port" "$home/compat/compat_devguide" client 127.0.0.1 dg & pids=($!)
  sleep 0.5
  as_user env VIPL_PORT="$port" "$home/compat/compat_devguide" server dg || rc=1
  wait "${pids[0]}" || rc=1
  # four ranks on one host, last rank first, sharing the host's port
  pids=()
  for r in 3 2 1 0; do
    as_user env VIPL_PORT="$port" "$home/compat/compat_ranks" "$r" 127.0.0.1 127.0.0.1 127.0.0.1 127.0.0.1 & pids+=($!)
    sleep 0.3
  done
  for p in "${pids[@]}"; do wait "$p" || rc=1; done
  return "$rc"
}
check "the compat programs (tests/vipl/compat) build with pkg-config vipl and run" compat_programs

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
