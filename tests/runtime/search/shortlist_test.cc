// A batch's shortlist candidates (search/shortlist.h) against a direct
// statement of Marian's rules with std::set: first ids, every source id's
// list, the source ids themselves when asked, EOS, then the smallest unused
// ids >= first up to a multiple of 8; ascending.
#include "search/shortlist.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <vector>

#include "support/kernel_testing.h"

namespace edgemt {
namespace {

struct Lists {
  std::vector<uint32_t> offsets;
  std::vector<uint32_t> targets;
  LexicalShortlist view;
};

// S source ids, each listing up to `best` random ascending ids < vocab
// (some none).
Lists random_lists(testing::Random& rng, size_t sources, size_t vocab, size_t best) {
  Lists l;
  l.offsets.push_back(0);
  for (size_t s = 0; s < sources; ++s) {
    std::set<uint32_t> ids;
    const size_t count = std::min(rng.index(0, best), vocab);
    while (ids.size() < count) ids.insert(static_cast<uint32_t>(rng.index(0, vocab - 1)));
    l.targets.insert(l.targets.end(), ids.begin(), ids.end());
    l.offsets.push_back(static_cast<uint32_t>(l.targets.size()));
  }
  l.view.offsets = l.offsets.data();
  l.view.targets = l.targets.data();
  l.view.source_ids = sources;
  return l;
}

std::vector<int32_t> expected(const LexicalShortlist& list, const std::vector<int32_t>& ids,
                              int32_t eos, size_t vocab) {
  std::set<int32_t> chosen;
  for (uint32_t id = 0; id < list.first && id < vocab; ++id) chosen.insert(static_cast<int32_t>(id));
  for (int32_t source : ids) {
    if (static_cast<size_t>(source) < list.source_ids) {
      for (uint32_t i = list.offsets[source]; i < list.offsets[source + 1]; ++i) {
        chosen.insert(static_cast<int32_t>(list.targets[i]));
      }
    }
    if (list.add_source_ids && static_cast<size_t>(source) < vocab) chosen.insert(source);
  }
  chosen.insert(eos);
  for (size_t id = list.first; chosen.size() % 8 != 0 && id < vocab; ++id) {
    chosen.insert(static_cast<int32_t>(id));
  }
  return std::vector<int32_t>(chosen.begin(), chosen.end());
}

TEST_CASE("search/shortlist: candidates follow Marian's rules, ascending, whatever the marks held") {
  testing::Random rng(4203);
  for (int trial = 0; trial < 200; ++trial) {
    const size_t vocab = rng.index(1, 300);
    const size_t sources = rng.index(1, 80);
    Lists l = random_lists(rng, sources, vocab, rng.index(0, 12));
    l.view.first = static_cast<uint32_t>(rng.index(0, vocab));
    l.view.add_source_ids = rng.index(0, 1) == 1;
    // Source ids up to 100: some past the lists (they list nothing).
    std::vector<int32_t> ids(rng.index(1, 20));
    for (int32_t& id : ids) id = static_cast<int32_t>(rng.index(0, 99));
    const int32_t eos = static_cast<int32_t>(rng.index(0, vocab - 1));
    std::vector<uint8_t> marks(vocab, 0xAB);  // scratch: any contents
    std::vector<int32_t> out(vocab, -1);
    const size_t count =
        shortlist_candidates(l.view, ids.data(), ids.size(), eos, vocab, marks.data(), out.data());
    const std::vector<int32_t> want = expected(l.view, ids, eos, vocab);
    CAPTURE(trial);
    REQUIRE(count == want.size());
    CHECK(std::vector<int32_t>(out.begin(), out.begin() + count) == want);
    CHECK((count % 8 == 0 || count == vocab || l.view.first == vocab));
  }
}

TEST_CASE("search/shortlist: padding takes the smallest unused ids from first on") {
  // first 2: {0, 1}; source 0 lists {9}; EOS 1: 3 ids, padded with 2, 3, 4, 5, 6.
  const std::vector<uint32_t> offsets = {0, 1};
  const std::vector<uint32_t> targets = {9};
  LexicalShortlist list;
  list.first = 2;
  list.offsets = offsets.data();
  list.targets = targets.data();
  list.source_ids = 1;
  const int32_t source = 0;
  std::vector<uint8_t> marks(20, 0);
  std::vector<int32_t> out(20);
  const size_t count = shortlist_candidates(list, &source, 1, 1, 20, marks.data(), out.data());
  CHECK(std::vector<int32_t>(out.begin(), out.begin() + count) ==
        std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 9});
}

}  // namespace
}  // namespace edgemt
