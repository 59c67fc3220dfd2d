# The WebAssembly build (platforms/wasm, issue 43) under ctest, label wasm
# (included by tests/CMakeLists.txt). Native host builds with the Python
# tests only: they compare with this build's CLI and libedgemt.so, and a
# sanitizer or cross build has nothing to add to a WebAssembly module.
#
#   wasm.build         platforms/wasm/build.sh into <build>/wasm, then the
#                      stamp <build>/wasm/built (fixture "wasm": runs first)
#   wasm.size          the .wasm without a model, gzip -9: at most 2 MB
#   wasm.kernels       the kernel tests built for WebAssembly, under Node
#                      (platforms/wasm/test_kernels.sh)
#   wasm.node_outputs.{int8,fp16,fp32}
#                      `node platforms/wasm/translate.mjs` == `edgemt
#                      translate`, line for line, greedy and beam 4, on the
#                      Multi30k test sources (wasm/test_node_outputs.py)
#   wasm.js_api        edgemt.mjs against the Python module and the CLI:
#                      results, per-text errors, alignment, attention
#                      (wasm/js_api_test.mjs)
#   wasm.page          the demo page in headless Chromium
#                      (platforms/wasm/test_page.py)
#
# Without emcc or node (platforms/debian12/install-deps.sh installs them,
# and chromium) wasm.build prints "SKIPPED: ..." and writes no stamp; the
# others then print "SKIPPED: ..." too. The speed target (node at 40% of
# native) is a benchmark, not a test: platforms/wasm/bench.mjs.
if(NOT (TARGET edgemt AND EDGEMT_BUILD_PYTHON_TESTS) OR CMAKE_CROSSCOMPILING
   OR CMAKE_CXX_FLAGS MATCHES "sanitize")
  return()
endif()

set(_wasm_tests "${CMAKE_CURRENT_LIST_DIR}/wasm")
set(_wasm_stamp "${CMAKE_BINARY_DIR}/wasm/built")

add_test(NAME wasm.build
         COMMAND bash ${_wasm_tests}/build_module.sh ${CMAKE_BINARY_DIR}/wasm)
set_tests_properties(wasm.build PROPERTIES FIXTURES_SETUP wasm TIMEOUT 1200)

add_test(NAME wasm.size COMMAND bash ${_wasm_tests}/check_size.sh ${_wasm_stamp})

add_test(NAME wasm.kernels COMMAND bash ${PROJECT_SOURCE_DIR}/platforms/wasm/test_kernels.sh)

foreach(_kind IN ITEMS int8 fp16 fp32)  # the classes Int8, Fp16, Fp32
  string(SUBSTRING "${_kind}" 0 1 _first)
  string(SUBSTRING "${_kind}" 1 -1 _rest)
  string(TOUPPER "${_first}" _first)
  set(_class "${_first}${_rest}")
  add_test(NAME wasm.node_outputs.${_kind}
           COMMAND ${EDGEMT_PYTHON} -m unittest discover -s ${_wasm_tests} -p test_node_outputs.py
                   -k ${_class} -v)
  set_tests_properties(wasm.node_outputs.${_kind} PROPERTIES TIMEOUT 900
    ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1;EDGEMT_CLI=$<TARGET_FILE:edgemt>;EDGEMT_WASM_BUILT=${_wasm_stamp}")
endforeach()

if(TARGET edgemt_shared)
  add_test(NAME wasm.js_api COMMAND node ${_wasm_tests}/js_api_test.mjs)
  set_tests_properties(wasm.js_api PROPERTIES TIMEOUT 600
    ENVIRONMENT "PYTHONDONTWRITEBYTECODE=1;PYTHONPATH=${PROJECT_SOURCE_DIR}/runtime/python;EDGEMT_LIBRARY=$<TARGET_FILE:edgemt_shared>;EDGEMT_CLI=$<TARGET_FILE:edgemt>;EDGEMT_PYTHON=${EDGEMT_PYTHON};EDGEMT_WASM_BUILT=${_wasm_stamp}")
endif()

# The demo page's test (it prints "SKIPPED: ..." without chromium or the
# build itself).
add_test(NAME wasm.page COMMAND /usr/bin/python3 platforms/wasm/test_page.py
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(wasm.page PROPERTIES TIMEOUT 600)

get_property(_wasm_all DIRECTORY PROPERTY TESTS)
list(FILTER _wasm_all INCLUDE REGEX "^wasm\\.")
set_tests_properties(${_wasm_all} PROPERTIES LABELS wasm SKIP_REGULAR_EXPRESSION "SKIPPED:")
list(REMOVE_ITEM _wasm_all wasm.build)
set_tests_properties(${_wasm_all} PROPERTIES FIXTURES_REQUIRED wasm)
