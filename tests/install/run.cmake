# Steps of the install tests (tests/install/CMakeLists.txt), run as
#   cmake -DSTEP=<step> -D... -P run.cmake
#
#   install         cmake --install BUILD into WORK/staged, then move it to
#                   WORK/prefix (the installed tree must be relocatable);
#                   libedgemt.so: SONAME, symlinks, exports edgemt_* only
#   cmake_consumer  configure, build and run the consumer project SOURCE
#                   against WORK/prefix (find_package(edgemt))
#   pkgconfig       cc -std=c99 -Wall -Werror SOURCE $(pkg-config --cflags --libs edgemt)
#                   with PKG_CONFIG_PATH=WORK/prefix/LIBDIR/pkgconfig, and run it
#   no_build_paths  no installed library or executable (static archives
#                   included) holds SOURCE_DIR or BUILD_DIR, and no installed
#                   text file holds them or the staging prefix
#
# The consumers translate SENTENCE with MODEL and must print EXPECTED.
cmake_minimum_required(VERSION 3.21)

function(run_checked)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${command}\n${out}\n${err}")
  endif()
  set(run_output "${out}" PARENT_SCOPE)
endfunction()

function(check_translation program)
  run_checked(${program} "${MODEL}" "${SENTENCE}")
  string(REGEX REPLACE "\n$" "" got "${run_output}")
  if(NOT got STREQUAL EXPECTED)
    message(FATAL_ERROR "translation of '${SENTENCE}':\n  got      '${got}'\n  expected '${EXPECTED}'")
  endif()
  message(STATUS "${program}: ${got}")
endfunction()

set(prefix "${WORK}/prefix")

if(STEP STREQUAL "install")
  file(REMOVE_RECURSE "${WORK}")
  file(MAKE_DIRECTORY "${WORK}")
  run_checked("${CMAKE_COMMAND}" --install "${BUILD}" --prefix "${WORK}/staged")
  file(RENAME "${WORK}/staged" "${prefix}")
  set(lib "${prefix}/${LIBDIR}")
  foreach(file libedgemt.so libedgemt.so.0 libedgemt.so.${VERSION} libedgemt_core.a
               libedgemt_text.a pkgconfig/edgemt.pc cmake/edgemt/edgemtConfig.cmake
               cmake/edgemt/FindXNNPACK.cmake)
    if(NOT EXISTS "${lib}/${file}")
      message(FATAL_ERROR "not installed: ${LIBDIR}/${file}")
    endif()
  endforeach()
  foreach(header edgemt.h model.h translator.h tokenizer.h status.h limits.h)
    if(NOT EXISTS "${prefix}/include/edgemt/${header}")
      message(FATAL_ERROR "not installed: include/edgemt/${header}")
    endif()
  endforeach()
  file(READ_SYMLINK "${lib}/libedgemt.so" link)
  file(READ_SYMLINK "${lib}/libedgemt.so.0" soname_link)
  if(NOT link STREQUAL "libedgemt.so.0" OR NOT soname_link STREQUAL "libedgemt.so.${VERSION}")
    message(FATAL_ERROR "libedgemt.so -> ${link} -> ${soname_link}, expected "
            "libedgemt.so.0 -> libedgemt.so.${VERSION}")
  endif()
  run_checked("${READELF}" -d "${lib}/libedgemt.so.${VERSION}")
  if(NOT run_output MATCHES "\\(SONAME\\) +Library soname: \\[libedgemt\\.so\\.0\\]")
    message(FATAL_ERROR "libedgemt.so.${VERSION} has no SONAME libedgemt.so.0:\n${run_output}")
  endif()
  # Exported: edgemt_* (and the version node's own absolute symbol EDGEMT_0).
  run_checked("${NM}" -D --defined-only "${lib}/libedgemt.so.${VERSION}")
  string(REGEX REPLACE "\n$" "" symbols "${run_output}")
  string(REPLACE "\n" ";" symbols "${symbols}")
  set(count 0)
  foreach(line IN LISTS symbols)
    if(line MATCHES " A EDGEMT_0$")
      continue()
    endif()
    if(NOT line MATCHES " [TDRBVW] edgemt_[a-z0-9_]+@@EDGEMT_0$")
      message(FATAL_ERROR "libedgemt.so exports more than the C API: '${line}'")
    endif()
    math(EXPR count "${count} + 1")
  endforeach()
  foreach(required edgemt_version edgemt_translate edgemt_model_open_memory
                   edgemt_model_detokenize edgemt_translate_text edgemt_tokenizer_create)
    if(NOT run_output MATCHES " T ${required}@@EDGEMT_0\n")
      message(FATAL_ERROR "libedgemt.so does not export ${required}")
    endif()
  endforeach()
  message(STATUS "libedgemt.so: SONAME libedgemt.so.0, ${count} symbols exported, all edgemt_*")

elseif(STEP STREQUAL "cmake_consumer")
  get_filename_component(name "${SOURCE}" NAME)
  set(build "${WORK}/${name}")
  file(REMOVE_RECURSE "${build}")
  run_checked("${CMAKE_COMMAND}" -S "${SOURCE}" -B "${build}" "-DCMAKE_PREFIX_PATH=${prefix}"
              -DCMAKE_BUILD_TYPE=Release "-DCMAKE_C_COMPILER=${C_COMPILER}"
              "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}")
  run_checked("${CMAKE_COMMAND}" --build "${build}")
  check_translation("${build}/translate")

elseif(STEP STREQUAL "pkgconfig")
  set(ENV{PKG_CONFIG_PATH} "${prefix}/${LIBDIR}/pkgconfig")
  run_checked("${PKG_CONFIG}" --cflags --libs edgemt)
  string(STRIP "${run_output}" flags)
  separate_arguments(flags UNIX_COMMAND "${flags}")
  run_checked("${PKG_CONFIG}" --variable=libdir edgemt)
  string(STRIP "${run_output}" libdir)
  set(program "${WORK}/pkgconfig_translate")
  run_checked("${C_COMPILER}" -std=c99 -Wall -Wextra -Werror "${SOURCE}" -o "${program}"
              ${flags} "-Wl,-rpath,${libdir}")
  check_translation("${program}")

elseif(STEP STREQUAL "python")
  # The installed module finds the installed library by itself.
  set(ENV{PYTHONPATH} "${prefix}/${LIBDIR}/python3/dist-packages")
  unset(ENV{EDGEMT_LIBRARY})
  run_checked("${PYTHON}" -c
    "import sys, edgemt
print(edgemt.library_path(), file=sys.stderr)
print(edgemt.Translator(edgemt.Model(sys.argv[1])).translate([sys.argv[2]], beam_size=1)[0].text)"
    "${MODEL}" "${SENTENCE}")
  string(REGEX REPLACE "\n$" "" got "${run_output}")
  if(NOT got STREQUAL EXPECTED)
    message(FATAL_ERROR "import edgemt, translation of '${SENTENCE}':\n  got      '${got}'\n  expected '${EXPECTED}'")
  endif()
  message(STATUS "import edgemt: ${got}")

elseif(STEP STREQUAL "no_build_paths")
  file(GLOB_RECURSE installed LIST_DIRECTORIES false "${prefix}/*")
  set(checked 0)
  foreach(file IN LISTS installed)
    if(IS_SYMLINK "${file}")
      continue()
    endif()
    if(file MATCHES "\\.(h|cmake|pc)$")
      file(READ "${file}" text)
      set(forbidden "${SOURCE_DIR}" "${BUILD_DIR}" "${WORK}/staged")
    else()
      # Libraries, archives, executables: their printable strings.
      file(STRINGS "${file}" text)
      set(forbidden "${SOURCE_DIR}" "${BUILD_DIR}")
    endif()
    foreach(path IN LISTS forbidden)
      string(FIND "${text}" "${path}" at)
      if(NOT at EQUAL -1)
        file(RELATIVE_PATH shown "${prefix}" "${file}")
        message(FATAL_ERROR "${shown} holds the build machine's path ${path}")
      endif()
    endforeach()
    math(EXPR checked "${checked} + 1")
  endforeach()
  if(checked LESS 10)
    message(FATAL_ERROR "only ${checked} installed files found under ${prefix}")
  endif()
  message(STATUS "${checked} installed files hold no path of the build machine")

else()
  message(FATAL_ERROR "unknown STEP '${STEP}'")
endif()
