# The conformance engine's core (CORE_DIR/src/core/*.c and the headers
# CORE_DIR/include/conform/*.h, not proto/) must not know any protocol:
# no wire format header of a protocol, no module header, no vw_vitcp_ /
# vw_warp_ / vw_ift_ / vw_eep_ name in code (comment lines are skipped). Protocol knowledge lives in
# src/proto/ (docs/conformance-engine.md). Fails with the offending lines.
# The offline lint's core (core/lint.c, conform/lint.h) is part of it: each
# protocol's capture rules are a lint module in src/proto/.
#
# Nor does the core name a protocol (issue 32), in code or comments: no
# "vitcp", "vi/tcp", "ift", "warp", "eep" or "pktway" (any case, "ift" and
# "eep" as words: "keep" and "sleep" are no protocol). Allowed are the
# tool's own name (vitcp-conform, its VITCP_CONFORM_ variables) and the
# project's paths (the library's "vitcp/..." headers, share/vitcp/cases).
if(NOT CORE_DIR)
  message(FATAL_ERROR "check_core_neutral: -DCORE_DIR=<conformance folder> needed")
endif()
file(GLOB core_files ${CORE_DIR}/src/core/*.c ${CORE_DIR}/src/core/*.h ${CORE_DIR}/include/conform/*.h)
if(NOT core_files)
  message(FATAL_ERROR "check_core_neutral: no core sources under ${CORE_DIR}/src/core")
endif()
set(forbidden
  "#include \"vitcp/vitcp\\.h\""
  "#include \"vitcp/vitcp_stream\\.h\""
  "#include \"vitcp/(warp|ift|pktway)[a-z_]*\\.h\""
  "#include \"conform/proto/"
  "vw_(vitcp|warp|ift|eep|pktway)_"
  "VW_(VITCP|WARP|IFT|EEP)_")
set(protocol_names "vitcp|vi/tcp|(^|[^a-z])ift([^a-z]|$)|warp|(^|[^a-z])eep|pktway")
set(leaks "")
set(named "")
foreach(f ${core_files})
  # one list item per line: ';' and unbalanced brackets would join lines
  file(READ ${f} content)
  string(REPLACE ";" "," content "${content}")
  string(REPLACE "[" "(" content "${content}")
  string(REPLACE "]" ")" content "${content}")
  string(REPLACE "\n" ";" lines "${content}")
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
    string(TOLOWER "${line}" lower)
    string(REGEX REPLACE "vitcp-conform|vitcp_conform|vitcp/" "" lower "${lower}")
    if(lower MATCHES "${protocol_names}")
      string(APPEND named "\n  ${f}:${n}: ${line}")
    endif()
    # comments may name what other parts do (the lint's functions): only
    # code and preprocessor lines count
    if(line MATCHES "^[ \t]*(/?\\*|//)")
      continue()
    endif()
    foreach(pat ${forbidden})
      if(line MATCHES "${pat}")
        string(APPEND leaks "\n  ${f}:${n}: ${line}")
      endif()
    endforeach()
  endforeach()
endforeach()
list(LENGTH core_files count)
if(leaks)
  message(FATAL_ERROR "the conformance core knows a protocol (move it into src/proto/):${leaks}")
endif()
if(named)
  message(FATAL_ERROR "the conformance core names a protocol (say it in the module, or neutrally):${named}")
endif()
message(STATUS "conformance core: ${count} files, no protocol knowledge, no protocol named")
