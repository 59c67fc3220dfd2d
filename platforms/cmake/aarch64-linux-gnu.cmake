# CMake toolchain file: cross-build edgemt for aarch64 Linux on Debian 12
# x86_64 and run its tests under qemu-user.
#
#   bash platforms/debian12/install-aarch64.sh      # compiler, qemu, arm64 sysroot
#   cmake -S . -B build-aarch64 -DCMAKE_TOOLCHAIN_FILE=platforms/cmake/aarch64-linux-gnu.cmake
#   cmake --build build-aarch64 && ctest --test-dir build-aarch64
#   EDGEMT_QEMU_CPU=cortex-a53 ctest --test-dir build-aarch64   # another CPU, same build
#
# Cache variables:
#   EDGEMT_AARCH64_SYSROOT  arm64 libraries and headers extracted from Debian
#                           .debs (default /opt/edgemt-aarch64-sysroot, or the
#                           environment variable of the same name)
#   EDGEMT_QEMU_CPU         CPU qemu emulates for tests (default cortex-a76:
#                           fp16 arithmetic and dot product; cortex-a53 has
#                           neither). The environment variable EDGEMT_QEMU_CPU,
#                           when set at test time, overrides it.
#
# Facts this follows (../shared/docs/DESIGN.md, "ARM (aarch64) on this x86
# machine"): the arm64 packages cannot be installed beside the amd64 ones, so
# they live in a sysroot of their own, and only libc6/libstdc++6/libgcc-s1:arm64
# are installed (Multi-Arch: same); qemu is called explicitly (binfmt is not
# mounted) with `-L /` (with libc6:arm64 installed, `-L /usr/aarch64-linux-gnu`
# makes pthreadpool hang) and LD_LIBRARY_PATH pointing into the sysroot;
# PKG_CONFIG_LIBDIR keeps the host's sentencepiece.pc out.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

if(DEFINED ENV{EDGEMT_AARCH64_SYSROOT} AND NOT "$ENV{EDGEMT_AARCH64_SYSROOT}" STREQUAL "")
  set(_edgemt_sysroot_default "$ENV{EDGEMT_AARCH64_SYSROOT}")
else()
  set(_edgemt_sysroot_default "/opt/edgemt-aarch64-sysroot")
endif()
set(EDGEMT_AARCH64_SYSROOT "${_edgemt_sysroot_default}" CACHE PATH
    "arm64 libraries and headers extracted by platforms/debian12/install-aarch64.sh")
set(EDGEMT_QEMU_CPU "cortex-a76" CACHE STRING
    "CPU qemu-aarch64 emulates for the tests (cortex-a76, cortex-a53, ...); EDGEMT_QEMU_CPU in the environment overrides it at test time")
# try_compile projects re-read this file: hand them the same values.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES EDGEMT_AARCH64_SYSROOT EDGEMT_QEMU_CPU)

if(NOT EXISTS "${EDGEMT_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu/libXNNPACK.so")
  message(FATAL_ERROR "No arm64 sysroot at ${EDGEMT_AARCH64_SYSROOT}: "
          "run platforms/debian12/install-aarch64.sh (as root) first")
endif()

set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
# No CMAKE_SYSROOT: libc, libstdc++ and their headers come from the cross
# compiler's own /usr/aarch64-linux-gnu; the sysroot holds only the extra
# libraries. Their transitive dependencies (libXNNPACK -> libcpuinfo,
# libpthreadpool) are resolved there at link time.
set(_edgemt_libdir "${EDGEMT_AARCH64_SYSROOT}/usr/lib/aarch64-linux-gnu")
string(APPEND CMAKE_EXE_LINKER_FLAGS_INIT " -Wl,-rpath-link,${_edgemt_libdir}")
string(APPEND CMAKE_SHARED_LINKER_FLAGS_INIT " -Wl,-rpath-link,${_edgemt_libdir}")

# Libraries, headers and CMake packages from the sysroot only; programs
# (flatc, pkg-config, python) from the host.
set(CMAKE_FIND_ROOT_PATH "${EDGEMT_AARCH64_SYSROOT}")
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(ENV{PKG_CONFIG_LIBDIR} "${_edgemt_libdir}/pkgconfig:${EDGEMT_AARCH64_SYSROOT}/usr/share/pkgconfig")
set(ENV{PKG_CONFIG_PATH} "")
set(ENV{PKG_CONFIG_SYSROOT_DIR} "${EDGEMT_AARCH64_SYSROOT}")

# Tests (and doctest's test discovery, which runs the test executables at
# build time) go through qemu-aarch64-run: qemu-aarch64 -L / -E
# LD_LIBRARY_PATH=<sysroot libs> -cpu <EDGEMT_QEMU_CPU>.
set(CMAKE_CROSSCOMPILING_EMULATOR
    "${CMAKE_CURRENT_LIST_DIR}/qemu-aarch64-run;${EDGEMT_AARCH64_SYSROOT};${EDGEMT_QEMU_CPU}")
