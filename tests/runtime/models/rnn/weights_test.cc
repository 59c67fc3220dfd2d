// weights.cc: the RNN's layer weights are allocated for the layers its file
// has (rnn_test.cc loads and runs models of 2 layers, bidirectional too).
#include "models/rnn/weights.h"

#include <doctest/doctest.h>

namespace edgemt::rnn {
namespace {

TEST_CASE("models/rnn/weights: no room held for layers a model does not have") {
  // Three fixed arrays of kMaxRnnLayers layers made every loaded RNN 278 KB
  // larger, whatever its size.
  CHECK(sizeof(RnnWeights) < 16 * 1024);
}

}  // namespace
}  // namespace edgemt::rnn
