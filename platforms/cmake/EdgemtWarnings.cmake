# edgemt_set_warnings(target): the project's warning set; errors when
# EDGEMT_WERROR is on (CI turns it on).
function(edgemt_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                         -Wnon-virtual-dtor -Wcast-align -Wunused -Woverloaded-virtual
                         -Wnull-dereference -Wdouble-promotion -Wformat=2)
  if(EDGEMT_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
endfunction()

# edgemt_set_c_warnings(target): the same for C sources (the C API's users).
function(edgemt_set_c_warnings target)
  target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wpedantic
                         -Wshadow -Wcast-align -Wformat=2 -Wstrict-prototypes>)
  if(EDGEMT_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C>:-Werror>)
  endif()
endfunction()

# edgemt_no_exceptions(target): the runtime core is built as on firmware.
function(edgemt_no_exceptions target)
  target_compile_options(${target} PRIVATE -fno-exceptions)
endfunction()
