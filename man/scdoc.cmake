# cmake -DSCDOC=... -DSOURCE=page.1.scd -DOUTPUT=page.1 -DVERSION=x.y.z -P scdoc.cmake
# @VERSION@ in the source becomes the project's version (the pages' footer);
# scdoc reads stdin and writes stdout. The page is written beside OUTPUT and
# renamed at the end, so a failed run leaves no half page for make to trust.
file(READ ${SOURCE} text)
string(CONFIGURE "${text}" text @ONLY)
file(WRITE ${OUTPUT}.scd "${text}")
execute_process(COMMAND ${SCDOC} INPUT_FILE ${OUTPUT}.scd OUTPUT_FILE ${OUTPUT}.tmp
                ERROR_VARIABLE errors RESULT_VARIABLE status)
file(REMOVE ${OUTPUT}.scd)
if(NOT status EQUAL 0)
  file(REMOVE ${OUTPUT}.tmp)
  message(FATAL_ERROR "scdoc failed on ${SOURCE}: ${errors}")
endif()
file(RENAME ${OUTPUT}.tmp ${OUTPUT})
