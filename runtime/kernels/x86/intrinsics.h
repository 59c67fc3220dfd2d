// <immintrin.h> for the x86 kernels, without GCC 12's false warnings: its
// avx512fintrin.h initializes its "undefined" vectors from themselves, which
// -Wuninitialized reports wherever they are inlined (GCC bug 105593), and
// whichever header first includes immintrin.h in an AVX-512 file decides
// whether they are reported. The warning is about the header, not the
// kernels. Include this rather than <immintrin.h> where a file is compiled
// for AVX-512 (or shares a header with one that is).
#pragma once

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#if !defined(__clang__)  // a GCC-only warning; clang rejects unknown ones
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#pragma GCC diagnostic pop
