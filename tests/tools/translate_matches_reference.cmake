# cmake -P script for the cross-build test tools.cli.translate_matches_reference
# (tests/CMakeLists.txt): translates the first LINES lines of SOURCE with
# EDGEMT (through EMULATOR, "|"-separated) and requires the output to equal
# the first LINES lines of EXPECTED. Leaves both in OUT_DIR on failure.
foreach(var EMULATOR EDGEMT MODEL SOURCE EXPECTED LINES OUT_DIR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "translate_matches_reference: -D${var}=... missing")
  endif()
endforeach()
string(REPLACE "|" ";" emulator "${EMULATOR}")
# A directory of its own, so that runs for several CPUs may share a build.
string(RANDOM LENGTH 8 run)
set(OUT_DIR "${OUT_DIR}/${run}")
file(MAKE_DIRECTORY "${OUT_DIR}")
set(input "${OUT_DIR}/input.en")
set(output "${OUT_DIR}/output.de")
set(expected "${OUT_DIR}/expected.de")
execute_process(COMMAND head -n "${LINES}" "${SOURCE}" OUTPUT_FILE "${input}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cannot read ${SOURCE}")
endif()
execute_process(COMMAND head -n "${LINES}" "${EXPECTED}" OUTPUT_FILE "${expected}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "cannot read ${EXPECTED}")
endif()

string(TIMESTAMP start "%s")
execute_process(COMMAND ${emulator} "${EDGEMT}" translate -m "${MODEL}" -i "${input}" -o "${output}"
                RESULT_VARIABLE rc ERROR_VARIABLE err)
string(TIMESTAMP stop "%s")
math(EXPR seconds "${stop} - ${start}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "edgemt translate failed (${rc}):\n${err}")
endif()

execute_process(COMMAND "${CMAKE_COMMAND}" -E compare_files "${output}" "${expected}" RESULT_VARIABLE same)
if(NOT same EQUAL 0)
  execute_process(COMMAND diff "${expected}" "${output}" OUTPUT_VARIABLE diff)
  message(FATAL_ERROR "edgemt translate output differs from ${EXPECTED} "
          "(first ${LINES} lines; < expected, > got; files in ${OUT_DIR}):\n${diff}")
endif()
message(STATUS "${LINES} translations identical to ${EXPECTED} (${seconds} s)")
file(REMOVE_RECURSE "${OUT_DIR}")
