#include "search/shortlist.h"

#include <cstdint>
#include <cstring>

namespace edgemt {

size_t shortlist_candidates(const LexicalShortlist& shortlist, const int32_t* ids, size_t count,
                            int32_t eos, size_t vocab, uint8_t* marks, int32_t* out) {
  std::memset(marks, 0, vocab);  // arena memory: whatever the last step left
  size_t chosen = 0;
  auto mark = [&](size_t id) {
    chosen += marks[id] == 0;
    marks[id] = 1;
  };
  const size_t first = shortlist.first < vocab ? shortlist.first : vocab;
  for (size_t id = 0; id < first; ++id) mark(id);
  for (size_t i = 0; i < count; ++i) {
    const size_t source = static_cast<size_t>(ids[i]);
    if (source < shortlist.source_ids) {
      const uint32_t* list = shortlist.targets + shortlist.offsets[source];
      const size_t length = shortlist.offsets[source + 1] - shortlist.offsets[source];
      for (size_t j = 0; j < length; ++j) mark(list[j]);  // verified < vocab
    }
    if (shortlist.add_source_ids && source < vocab) mark(source);
  }
  mark(static_cast<size_t>(eos));
  for (size_t id = first; chosen % 8 != 0 && id < vocab; ++id) mark(id);
  // A few hundred marks among tens of thousands: 8 at a time past the
  // zeros (a byte at a time was ~1.7% of a tiny11-shaped int8 sentence at
  // batch 1, with a 32k vocabulary).
  size_t written = 0;
  size_t id = 0;
  for (; id + 8 <= vocab && written < chosen; id += 8) {
    uint64_t eight;
    std::memcpy(&eight, marks + id, sizeof eight);
    if (eight == 0) continue;
    for (size_t k = id; k < id + 8; ++k) {
      if (marks[k] != 0) out[written++] = static_cast<int32_t>(k);
    }
  }
  for (; id < vocab && written < chosen; ++id) {
    if (marks[id] != 0) out[written++] = static_cast<int32_t>(id);
  }
  return written;
}

}  // namespace edgemt
