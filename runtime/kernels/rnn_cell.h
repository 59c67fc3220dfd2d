// Recurrent cells, one row at a time, with PyTorch's arithmetic (nn.LSTM
// and nn.GRU on CPU, aten/src/ATen/native/RNN.cpp): the gate pre-activations
// come from two GEMMs, gx = x·W_ihᵀ + b_ih and gh = h·W_hhᵀ + b_hh, each
// [G·U] with the gates stacked in PyTorch's order (U units).
//
//   LSTM (i, f, g, o):  i = σ(gx_i + gh_i), f = σ(..), g = tanh(..), o = σ(..)
//                       c' = f·c + i·g       (two products, then one sum)
//                       h' = o·tanh(c')
//   GRU (r, z, n):      r = σ(gh_r + gx_r), z = σ(gh_z + gx_z)
//                       n = tanh(gx_n + r·gh_n)
//                       h' = (h - n)·z + n
// σ and tanh are kernels/portable_math.h's (the same bits on every CPU).
#pragma once

#include <cstddef>

namespace edgemt::kernels {

// gx, gh: [4U]; c: [U] in/out; h: [U] out (may not alias c).
void lstm_cell(const float* gx, const float* gh, size_t units, float* c, float* h);

// gx, gh: [3U]; h: [U] in/out.
void gru_cell(const float* gx, const float* gh, size_t units, float* h);

}  // namespace edgemt::kernels
