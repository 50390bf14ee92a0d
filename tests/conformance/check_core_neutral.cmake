# The conformance engine's core (CORE_DIR/src/core/*.c and the headers
# CORE_DIR/include/conform/*.h, not proto/) must not know any protocol:
# no wire format header of a protocol, no module header, no vw_vitcp_ /
# vw_warp_ / vw_ift_ / vw_eep_ name in code (comment lines are skipped). Protocol knowledge lives in
# src/proto/ (docs/conformance-engine.md). Fails with the offending lines.
# The offline lint's core (core/lint.c, conform/lint.h) is part of it: each
# protocol's capture rules are a lint module in src/proto/.
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
set(leaks "")
foreach(f ${core_files})
  file(STRINGS ${f} lines)
  set(n 0)
  foreach(line IN LISTS lines)
    math(EXPR n "${n} + 1")
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
message(STATUS "conformance core: ${count} files, no protocol knowledge")
