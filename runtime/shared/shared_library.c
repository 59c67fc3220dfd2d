/* libedgemt.so is the objects of libedgemt_core.a and libedgemt_text.a
 * (linked whole) behind the version script edgemt.map; a shared library
 * target needs a source of its own, and this one only checks that the C
 * header compiles as C in the library's build. */
#include "edgemt/edgemt.h"

typedef int edgemt_shared_library_has_no_code_of_its_own;
