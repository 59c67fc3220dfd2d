# What a WebAssembly build (Emscripten) takes instead of the machine's
# packages: platforms/wasm/build.sh puts FlatBuffers' headers (header-only
# here) and SentencePiece, built for WebAssembly from its released sources,
# under EDGEMT_WASM_DEPS (include/, lib/libsentencepiece.a); the schema
# compiler flatc runs on the build machine.
set(EDGEMT_WASM_DEPS "" CACHE PATH "Prefix of the WebAssembly dependencies (platforms/wasm/build.sh)")
if(NOT EXISTS "${EDGEMT_WASM_DEPS}/lib/libsentencepiece.a")
  message(FATAL_ERROR "EDGEMT_WASM_DEPS='${EDGEMT_WASM_DEPS}' has no lib/libsentencepiece.a: "
          "build with platforms/wasm/build.sh")
endif()
add_library(flatbuffers::flatbuffers INTERFACE IMPORTED)
set_target_properties(flatbuffers::flatbuffers PROPERTIES
  INTERFACE_INCLUDE_DIRECTORIES "${EDGEMT_WASM_DEPS}/include")
find_program(EDGEMT_HOST_FLATC flatc REQUIRED NO_CMAKE_FIND_ROOT_PATH)
add_executable(flatbuffers::flatc IMPORTED)
set_target_properties(flatbuffers::flatc PROPERTIES IMPORTED_LOCATION "${EDGEMT_HOST_FLATC}")
add_library(PkgConfig::SentencePiece STATIC IMPORTED)
set_target_properties(PkgConfig::SentencePiece PROPERTIES
  IMPORTED_LOCATION "${EDGEMT_WASM_DEPS}/lib/libsentencepiece.a"
  INTERFACE_INCLUDE_DIRECTORIES "${EDGEMT_WASM_DEPS}/include")
