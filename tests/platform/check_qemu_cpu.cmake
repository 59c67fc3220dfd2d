# cmake -P script for the cross-build test platform.qemu_cpu
# (tests/CMakeLists.txt): runs PROBE (hwcap_probe.cc) through EMULATOR
# ("|"-separated) and checks that the CPU qemu emulates has the fp16 and
# dot-product features expected of it, so that a run meant for cortex-a53
# really lacks them. The CPU is resolved as platforms/cmake/qemu-aarch64-run
# does: $EDGEMT_QEMU_CPU, else DEFAULT_CPU. Prints SKIPPED for a CPU this
# table does not know.
foreach(var EMULATOR PROBE DEFAULT_CPU)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_qemu_cpu: -D${var}=... missing")
  endif()
endforeach()
string(REPLACE "|" ";" emulator "${EMULATOR}")
if(DEFINED ENV{EDGEMT_QEMU_CPU} AND NOT "$ENV{EDGEMT_QEMU_CPU}" STREQUAL "")
  set(cpu "$ENV{EDGEMT_QEMU_CPU}")
else()
  set(cpu "${DEFAULT_CPU}")
endif()

execute_process(COMMAND ${emulator} "${PROBE}" RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "hwcap probe failed (${rc}) on ${cpu}:\n${out}${err}")
endif()
string(REPLACE "\n" "; " shown "${out}")
message(STATUS "cpu ${cpu}: ${shown}")

# ARMv8.0 cores: no fp16 arithmetic, no dot product. ARMv8.2+ cores (and
# qemu's "max"): both.
if(cpu MATCHES "^cortex-a(35|53|57|72)$")
  set(want 0)
elseif(cpu MATCHES "^(cortex-a76|neoverse-n1|max)$")
  set(want 1)
else()
  message(STATUS "SKIPPED: no expected features recorded for CPU ${cpu}")
  return()
endif()
foreach(feature asimd fphp asimdhp asimddp)
  set(expected ${want})
  if(feature STREQUAL "asimd")
    set(expected 1)
  endif()
  if(NOT out MATCHES "(^|\n)${feature} ${expected}\n")
    message(FATAL_ERROR "cpu ${cpu}: expected ${feature} ${expected}, probe printed: ${shown}")
  endif()
endforeach()
