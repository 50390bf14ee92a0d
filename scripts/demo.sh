#!/usr/bin/env bash
# The main job, grown as components land. Usage: scripts/demo.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: demo.sh BUILD_DIR}
echo "vitcp demo: wire library catalog has $(grep -c '^VW_REQ(' "$(dirname "$0")/../wire/catalog/"*.def | awk -F: '{s+=$2} END {print s}') requirements"
