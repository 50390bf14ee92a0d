#!/bin/sh
# Every long option of `vitcp-trafgen --help` is documented in the man page,
# and the man page documents no option --help does not know.
# Usage: check_manpage.sh TRAFGEN MANPAGE
set -eu
trafgen=$1 man=$2
help_opts=$("$trafgen" --help | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
man_opts=$(sed 's/\\-/-/g' "$man" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u)
[ -n "$help_opts" ] || { echo "no options in --help"; exit 1; }
status=0
for o in $help_opts; do
  echo "$man_opts" | grep -qx -- "$o" || { echo "missing from $man: $o"; status=1; }
done
for o in $man_opts; do
  echo "$help_opts" | grep -qx -- "$o" || { echo "not in --help: $o"; status=1; }
done
exit $status
