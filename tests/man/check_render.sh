#!/bin/sh
# A generated man page is well-formed roff that renders without a warning:
# with groff and tbl, as man-db runs them, or mandoc, whichever is installed; without
# either, it says so and checks the structure only (.TH, NAME, SYNOPSIS or
# DESCRIPTION). The installed PAGE.gz, when built, holds exactly PAGE.
# Usage: check_render.sh PAGE
set -eu
page=$1
title=$(basename "$page" | sed 's/\.[0-9]$//')
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

[ -s "$page" ] || { echo "FAIL: $page is missing or empty"; exit 1; }
grep -q "^\.TH \"$title\" \"[0-9]\"" "$page" || fail "$page has no .TH \"$title\" line"
grep -q '^\.SH NAME' "$page" || fail "$page has no NAME section"
grep -q '^\.SH \(SYNOPSIS\|DESCRIPTION\)' "$page" || fail "$page has neither SYNOPSIS nor DESCRIPTION"

if command -v groff >/dev/null 2>&1; then
  # -ww: every warning; -z: format, print nothing but the warnings.
  groff -t -man -Tutf8 -ww -z "$page" >"$tmp/warnings" 2>&1 || fail "groff fails on $page"
  [ -s "$tmp/warnings" ] && { fail "groff warns on $page:"; cat "$tmp/warnings"; }
  # grotty makes bold by overstriking (c BACKSPACE c): keep the plain text.
  LC_ALL=C.UTF-8 groff -t -man -Tutf8 "$page" 2>/dev/null | LC_ALL=C.UTF-8 sed 's/.\x08//g' >"$tmp/text"
  grep -q "^NAME" "$tmp/text" && grep -q "^ *$title" "$tmp/text" || fail "$page renders without its NAME section"
  renderer=groff
elif command -v mandoc >/dev/null 2>&1; then
  mandoc -man -Tlint -W warning "$page" >"$tmp/warnings" 2>&1 || true
  [ -s "$tmp/warnings" ] && { fail "mandoc warns on $page:"; cat "$tmp/warnings"; }
  renderer=mandoc
else
  echo "NOTE: neither groff nor mandoc is installed: $page checked for structure only, not rendered"
  renderer="no renderer"
fi
# man-db's index (whatis, apropos, man NAME) reads the NAME line.
if command -v lexgrog >/dev/null 2>&1; then
  lexgrog "$page" >"$tmp/whatis" 2>&1 || { fail "lexgrog cannot parse the NAME section of $page:"; cat "$tmp/whatis"; }
fi
if [ -e "$page.gz" ]; then
  gzip -dc "$page.gz" | cmp -s - "$page" || fail "$page.gz does not hold $page"
fi
[ $status -eq 0 ] && echo "$(basename "$page"): well-formed ($renderer)"
exit $status
