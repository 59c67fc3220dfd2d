#include "models/relu_units.h"

#include <algorithm>
#include <cmath>

namespace edgemt {

void relu_unit_order(const int8_t* codes, const float* scale, const float* bias, size_t units,
                     size_t depth, uint32_t* order, double* scores) {
  for (size_t j = 0; j < units; ++j) {
    int64_t squares = 0;  // Σ q² of row j, exact (integers: the loop vectorizes)
    const int8_t* row = codes + j * depth;
    for (size_t k = 0; k < depth; ++k) squares += int32_t{row[k]} * row[k];
    const double norm =
        std::sqrt(static_cast<double>(squares)) * std::fabs(static_cast<double>(scale[j]));
    const double b = bias != nullptr ? static_cast<double>(bias[j]) : 0.0;
    scores[j] = norm > 0.0 ? b / norm : b;
    order[j] = static_cast<uint32_t>(j);
  }
  std::stable_sort(order, order + units,
                   [scores](uint32_t a, uint32_t b) { return scores[a] > scores[b]; });
}

}  // namespace edgemt
