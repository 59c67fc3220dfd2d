// Weight values the runtime cannot compute with, found at load.
//
// The verifier scans every stored tensor once (aliases once) so that a file
// is refused at load, naming the tensor and element, instead of translating
// into NaN:
//   f32 / f16   NaN or ±inf (an exponent of all ones). A non-finite weight
//               turns every activation it touches into NaN; the search
//               would then fail sentence after sentence, or, where a -inf
//               bias meets a ReLU, quietly compute something else.
//   i8          -128. Int8PerRowDynamic codes are symmetric, [-127, 127];
//               the int8 GEMMs' exactness proofs assume it.
//
// Each scan is branch-free over blocks (an OR of a per-element predicate, so
// it vectorizes) and looks for the exact index only inside a block that
// flagged: ~memory speed, a few ms for a 30 MB model.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt {

// Index of the first non-finite value among `count` float32 (resp. binary16)
// values, or `count` when all are finite. `data` needs no alignment.
size_t find_non_finite_f32(const void* data, size_t count);
size_t find_non_finite_f16(const void* data, size_t count);

// Index of the first -128 among `count` int8 values, or `count`.
size_t find_int8_min(const void* data, size_t count);

}  // namespace edgemt
