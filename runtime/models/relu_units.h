// The hidden units of a ReLU feed-forward block in an order that gathers the
// mostly-zero ones, for int8 files (MatrixLoader::relu_block).
//
// A ReLU's output, the second product's input, is mostly zeros, and the int8
// kernels skip the groups of 4 consecutive units that are zero in every row
// of a tile. Which units are zero is a property of the units more than of
// the rows: in the trained tiny11 student 85% of the codes are zero but only
// half of a row pair's groups. Units ordered by their chance of being
// positive make more whole groups zero (tiny11's encoder, 2,000 rows: a row
// pair's nonzero groups 0.74 -> 0.66 in the first layer, 0.42 -> 0.27 in the
// fourth). Without data that chance comes from the weights: unit j's
// pre-activation is w_j · x + b_j with x a layer-normalized row, whose
// spread is about |w_j|, so the units go by b_j / |w_j| descending (stable:
// ties, and a block without biases, keep the file's order).
//
// Exact for int8 products: their sums are integers in any order, and the
// activation ranges (per row, per product or fixed) are the same over
// permuted units. Float products would round in another order: not used.
#pragma once

#include <cstddef>
#include <cstdint>

namespace edgemt {

// order[0, units): the units of a block whose first matrix has int8 codes
// [units, depth] with row scales `scale` [units] and `bias` [units]
// (nullptr: none), most likely positive first. Scores in double, so the
// order is the same on every CPU.
void relu_unit_order(const int8_t* codes, const float* scale, const float* bias, size_t units,
                     size_t depth, uint32_t* order, double* scores);

}  // namespace edgemt
