// A batch's candidate target ids under a lexical shortlist (the model file's
// Shortlist, edgemt/model.h LexicalShortlist), as Marian's shortlist
// generators make them (docs/marian-formats.md, section 3.3):
//   1. ids 0 .. first-1;
//   2. the list of every source id of the batch (ids the lists do not
//      cover list nothing) and, with add_source_ids, the source id itself;
//   3. EOS, so that every sentence can end (Marian's set holds it whenever
//      first >= 1 with EOS 0, or its vocabulary is shared);
//   4. the smallest ids >= first not yet in, until the count is a multiple
//      of 8 (or every id is in);
// ascending. The decoder's output and the search then cover these ids only
// (EncoderDecoder::select_output_columns); the log-softmax normalizes over
// them, as Marian's.
//
// Run phase: no allocation; `marks` [V] is scratch (any contents).
#pragma once

#include <cstddef>
#include <cstdint>

#include "edgemt/model.h"

namespace edgemt {

// ids [count] (the batch's packed source ids, each < the source
// vocabulary); writes the candidates to out [vocab] and returns how many.
size_t shortlist_candidates(const LexicalShortlist& shortlist, const int32_t* ids, size_t count,
                            int32_t eos, size_t vocab, uint8_t* marks, int32_t* out);

}  // namespace edgemt
