# Debian 12's libxnnpack-dev ships neither a CMake config nor a pkg-config
# file, and no static library: find the header and shared libraries and wrap
# them in IMPORTED targets.
#   XNNPACK::XNNPACK       (links pthreadpool too; the header includes it)
#   XNNPACK::pthreadpool
find_path(XNNPACK_INCLUDE_DIR xnnpack.h)
find_path(PTHREADPOOL_INCLUDE_DIR pthreadpool.h)
find_library(XNNPACK_LIBRARY NAMES XNNPACK xnnpack)
find_library(PTHREADPOOL_LIBRARY NAMES pthreadpool)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(XNNPACK
  REQUIRED_VARS XNNPACK_LIBRARY XNNPACK_INCLUDE_DIR PTHREADPOOL_LIBRARY PTHREADPOOL_INCLUDE_DIR)

if(XNNPACK_FOUND AND NOT TARGET XNNPACK::XNNPACK)
  add_library(XNNPACK::pthreadpool UNKNOWN IMPORTED)
  set_target_properties(XNNPACK::pthreadpool PROPERTIES
    IMPORTED_LOCATION "${PTHREADPOOL_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${PTHREADPOOL_INCLUDE_DIR}")
  add_library(XNNPACK::XNNPACK UNKNOWN IMPORTED)
  set_target_properties(XNNPACK::XNNPACK PROPERTIES
    IMPORTED_LOCATION "${XNNPACK_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${XNNPACK_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES XNNPACK::pthreadpool)
endif()
mark_as_advanced(XNNPACK_INCLUDE_DIR PTHREADPOOL_INCLUDE_DIR XNNPACK_LIBRARY PTHREADPOOL_LIBRARY)
