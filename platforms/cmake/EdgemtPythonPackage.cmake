# The pip package (pyproject.toml, built by scikit-build-core): what CMake
# puts into the wheel, beside the Python sources scikit-build-core copies
# (runtime/python/edgemt, tools/edgemt_tools).
#
#   edgemt/libedgemt.so      the C API library the module loads (ctypes)
#   edgemt/bin/edgemt        the CLI (`edgemt`, `python -m edgemt` exec it)
#   edgemt_tools/project/    the project files the converter reads (limits
#                            headers, tensor tables: project_files.py), so
#                            each fact exists once, in the wheel too
#
# Only the file with the real name is installed, as libedgemt.so: a wheel
# cannot hold symlinks (the .so.0 and .so links would become two more copies),
# and ctypes opens it by path, whatever its SONAME says.
if(NOT TARGET edgemt_shared OR NOT TARGET edgemt)
  message(FATAL_ERROR "EDGEMT_PYTHON_PACKAGE needs EDGEMT_BUILD_SHARED and EDGEMT_BUILD_TOOLS")
endif()

install(FILES $<TARGET_FILE:edgemt_shared> DESTINATION edgemt RENAME libedgemt.so
        COMPONENT python)
install(PROGRAMS $<TARGET_FILE:edgemt> DESTINATION edgemt/bin COMPONENT python)

# The project files the converter reads (tools/edgemt_tools/project_files.py),
# with the checkout's layout.
install(FILES "${PROJECT_SOURCE_DIR}/runtime/include/edgemt/limits.h"
        DESTINATION edgemt_tools/project/runtime/include/edgemt COMPONENT python)
file(GLOB _edgemt_family_configs RELATIVE "${PROJECT_SOURCE_DIR}/runtime/models"
     "${PROJECT_SOURCE_DIR}/runtime/models/*/config.h")
foreach(_config IN LISTS _edgemt_family_configs)
  get_filename_component(_family "${_config}" DIRECTORY)
  install(FILES "${PROJECT_SOURCE_DIR}/runtime/models/${_config}"
          DESTINATION edgemt_tools/project/runtime/models/${_family} COMPONENT python)
endforeach()
file(GLOB _edgemt_tensor_tables "${PROJECT_SOURCE_DIR}/schema/*_tensors.def")
install(FILES ${_edgemt_tensor_tables} DESTINATION edgemt_tools/project/schema COMPONENT python)
