# Install rules (EDGEMT_INSTALL; on by default at top level):
#
#   include/edgemt/*.h                  C API (edgemt.h) and C++ API
#   lib/libedgemt.so.0.2.0              core + text + C API; exports edgemt_* only
#   lib/libedgemt.so.0, libedgemt.so    SONAME and development links
#   lib/libedgemt_core.a, _text.a       the static libraries (C++ and C API)
#   lib/cmake/edgemt/                   find_package(edgemt): edgemt::edgemt
#                                       (shared), edgemt::core, edgemt::text
#                                       (static), with FindXNNPACK.cmake
#   lib/pkgconfig/edgemt.pc             pkg-config (shared library)
#   bin/edgemt                          the command-line tool
#
# (lib is CMAKE_INSTALL_LIBDIR: lib/x86_64-linux-gnu under /usr.) Nothing
# installed holds an absolute path: the CMake package finds itself through
# PACKAGE_PREFIX_DIR and edgemt.pc through ${pcfiledir}, so the tree can be
# moved (cmake --install build --prefix anywhere).
include(CMakePackageConfigHelpers)

set(EDGEMT_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/edgemt" CACHE STRING
    "Where the CMake package goes, relative to the prefix")
mark_as_advanced(EDGEMT_INSTALL_CMAKEDIR)

install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/include/edgemt"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}" COMPONENT development
        FILES_MATCHING PATTERN "*.h")

set(_edgemt_installed_libraries edgemt_core edgemt_text)
if(TARGET edgemt_shared)
  list(APPEND _edgemt_installed_libraries edgemt_shared)
endif()
install(TARGETS ${_edgemt_installed_libraries} EXPORT edgemtTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT development
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT runtime
                NAMELINK_COMPONENT development
        INCLUDES DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}")
if(TARGET edgemt)
  install(TARGETS edgemt RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT runtime)
endif()

# The Python module (ctypes over libedgemt.so): LIBDIR/python3/dist-packages,
# on /usr/bin/python3's path for the prefixes /usr/local and /usr; elsewhere
# add it to PYTHONPATH. It finds libedgemt.so.0 three folders up (LIBDIR).
if(TARGET edgemt_shared)
  install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/python/edgemt"
          DESTINATION "${CMAKE_INSTALL_LIBDIR}/python3/dist-packages" COMPONENT python
          PATTERN "__pycache__" EXCLUDE)
endif()

install(EXPORT edgemtTargets NAMESPACE edgemt:: FILE edgemtTargets.cmake
        DESTINATION "${EDGEMT_INSTALL_CMAKEDIR}" COMPONENT development)
configure_package_config_file("${CMAKE_CURRENT_LIST_DIR}/edgemtConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/package/edgemtConfig.cmake"
  INSTALL_DESTINATION "${EDGEMT_INSTALL_CMAKEDIR}")
# 0.x: a minor release may change the API, so only the same minor matches.
write_basic_package_version_file("${PROJECT_BINARY_DIR}/package/edgemtConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/package/edgemtConfig.cmake"
              "${PROJECT_BINARY_DIR}/package/edgemtConfigVersion.cmake"
              "${CMAKE_CURRENT_LIST_DIR}/FindXNNPACK.cmake"
        DESTINATION "${EDGEMT_INSTALL_CMAKEDIR}" COMPONENT development)

# edgemt.pc: the prefix relative to the .pc file's own folder.
file(RELATIVE_PATH EDGEMT_PC_PREFIX_FROM_PCFILEDIR
     "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
configure_file("${CMAKE_CURRENT_LIST_DIR}/edgemt.pc.in" "${PROJECT_BINARY_DIR}/package/edgemt.pc"
               @ONLY)
install(FILES "${PROJECT_BINARY_DIR}/package/edgemt.pc"
        DESTINATION "${CMAKE_INSTALL_LIBDIR}/pkgconfig" COMPONENT development)
