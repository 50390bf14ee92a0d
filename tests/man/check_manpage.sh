#!/bin/sh
# A program's man page and its --help agree:
# - PROG --help and PROG -h print the same usage on stdout and exit 0, and so
#   does PROG SUB --help / -h for each SUBCOMMAND given (its usage names SUB);
# - every long option those print is in the page, in bold (where the page
#   documents an option), and every long option in bold in the page is one
#   they print (--help itself is known: it was just run);
# - a program with --list-faults has every fault's name and ID in the page.
# Other programs' options (vipl-peer's in vitcp-conform's examples) are
# written without bold, so they are not taken for the program's own.
# Usage: check_manpage.sh PROG PAGE [SUBCOMMAND...]
set -eu
prog=$1 page=$2
shift 2
name=$(basename "$prog")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# run_help OUT ARGS...: run PROG ARGS, expect exit 0, usage on stdout, nothing on stderr.
run_help() {
  out=$1; shift
  if ! "$prog" "$@" >"$out" 2>"$tmp/err"; then
    fail "$name $* exits non-zero"; cat "$tmp/err"
  fi
  [ -s "$tmp/err" ] && { fail "$name $* writes to stderr:"; cat "$tmp/err"; }
  grep -qi '^usage: ' "$out" || fail "$name $* prints no 'usage:' line on stdout"
}

run_help "$tmp/help" --help
run_help "$tmp/h" -h
cmp -s "$tmp/help" "$tmp/h" || fail "$name -h differs from $name --help"
cat "$tmp/help" >"$tmp/all"
for sub in "$@"; do
  run_help "$tmp/$sub.help" "$sub" --help
  run_help "$tmp/$sub.h" "$sub" -h
  cmp -s "$tmp/$sub.help" "$tmp/$sub.h" || fail "$name $sub -h differs from $name $sub --help"
  grep -qi "^usage: $name $sub\b" "$tmp/$sub.help" || fail "$name $sub --help does not show $sub's usage"
  cat "$tmp/$sub.help" >>"$tmp/all"
done

[ -s "$page" ] || { echo "FAIL: no man page $page"; exit 1; }
{ grep -o -- '--[a-z][a-z0-9-]*' "$tmp/all"; echo --help; } | sort -u >"$tmp/help_opts"
# scdoc writes *--opt* as \fB--opt\fR; a hand-written page may spell - as \-.
sed 's/\\-/-/g' "$page" | grep -o -- '\\fB--[a-z][a-z0-9-]*' | sed 's/^\\fB//' | sort -u >"$tmp/man_opts"
[ "$(wc -l <"$tmp/help_opts")" -gt 1 ] || fail "no options in $name --help"
for o in $(comm -23 "$tmp/help_opts" "$tmp/man_opts"); do fail "$o ($name --help) is not in $page"; done
for o in $(comm -13 "$tmp/help_opts" "$tmp/man_opts"); do fail "$o is in $page but $name --help does not know it"; done

if grep -q -- '--list-faults' "$tmp/all"; then
  "$prog" --list-faults >"$tmp/faults" || fail "$name --list-faults exits non-zero"
  [ -s "$tmp/faults" ] || fail "$name --list-faults lists nothing"
  plain=$(sed 's/\\-/-/g; s/\\&//g' "$page")
  for word in $(cat "$tmp/faults"); do
    printf '%s\n' "$plain" | grep -qF -- "$word" || fail "fault $word ($name --list-faults) is not in $page"
  done
fi

[ $status -eq 0 ] && echo "$name: --help and $(basename "$page") agree ($(wc -l <"$tmp/help_opts") options)"
exit $status
