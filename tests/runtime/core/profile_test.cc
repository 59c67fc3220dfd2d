// Profile and ProfileScope: counters accumulate per part, a null Profile
// records nothing, and a translate() on the bundled model fills every part
// that must run, with the nested parts inside their parents. Bounds are
// structural (a part inside another cannot take longer), never timings.
#include "core/profile.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "edgemt/translator.h"
#include "support/reference_data.h"
#include "models/transformer/config.h"

using namespace edgemt::transformer;  // the family under test

namespace edgemt {
namespace {

uint64_t sum(const Profile& profile, std::initializer_list<ProfilePart> parts) {
  uint64_t total = 0;
  for (ProfilePart part : parts) total += profile.ns(part);
  return total;
}

TEST_CASE("core/profile: every part has a distinct name") {
  for (size_t i = 0; i < kProfilePartCount; ++i) {
    const std::string name = profile_part_name(static_cast<ProfilePart>(i));
    CHECK(name != "unknown");
    for (size_t j = 0; j < i; ++j) CHECK(name != profile_part_name(static_cast<ProfilePart>(j)));
  }
}

TEST_CASE("core/profile: a scope adds one call and its time - a null profile reads nothing") {
  Profile profile;
  for (int i = 0; i < 3; ++i) {
    ProfileScope timed(&profile, ProfilePart::kSearch);
    const uint64_t start = monotonic_ns();
    while (monotonic_ns() == start) {
    }
  }
  CHECK(profile.count(ProfilePart::kSearch) == 3);
  CHECK(profile.ns(ProfilePart::kSearch) >= 3);
  for (size_t i = 0; i < kProfilePartCount; ++i) {
    if (static_cast<ProfilePart>(i) != ProfilePart::kSearch) CHECK(profile.calls[i] == 0);
  }
  { ProfileScope off(nullptr, ProfilePart::kSearch); }
  CHECK(profile.count(ProfilePart::kSearch) == 3);
  profile.reset();
  CHECK(profile.count(ProfilePart::kSearch) == 0);
  CHECK(profile.ns(ProfilePart::kSearch) == 0);
}

TEST_CASE("core/profile: translate() fills every part - nested parts fit in their parents") {
  std::unique_ptr<Model> model;
  REQUIRE_MESSAGE(Model::load(EDGEMT_BUNDLED_MODEL, &model).is_ok(),
                  "bundled model missing: " EDGEMT_BUNDLED_MODEL);
  const std::vector<std::vector<int32_t>> sources =
      testing::read_id_lines(testing::reference_path("test_2016_flickr.en.ids"));
  REQUIRE(sources.size() >= 4);

  for (size_t beam : {size_t{1}, size_t{4}}) {
    CAPTURE(beam);
    std::unique_ptr<Translator> translator;
    REQUIRE(Translator::create(*model, TranslatorOptions(), &translator).is_ok());
    Limits limits;
    limits.max_batch = 4;
    limits.max_beam = beam;
    limits.max_source_len = 256;
    limits.max_target_len = 256;
    REQUIRE(translator->prepare(limits).is_ok());
    std::vector<TokenSpan> spans(4);
    std::vector<std::vector<int32_t>> buffers(4, std::vector<int32_t>(256));
    std::vector<Translation> results(4);
    for (size_t i = 0; i < 4; ++i) {
      spans[i] = {sources[i].data(), sources[i].size()};
      results[i].tokens = buffers[i].data();
      results[i].capacity = buffers[i].size();
    }
    DecodeOptions decode;
    decode.beam_size = beam;

    Profile profile;
    translator->set_profile(&profile);
    const uint64_t start = monotonic_ns();
    REQUIRE(translator->translate(spans.data(), spans.size(), decode, results.data()).is_ok());
    const uint64_t wall = monotonic_ns() - start;

    // Counts follow the structure: one translate, one encoder, one decoder
    // step per generated position, which is at least the longest output.
    size_t longest = 0;
    for (const Translation& result : results) longest = std::max(longest, result.length);
    const uint64_t steps = profile.count(ProfilePart::kDecoderStep);
    CHECK(profile.count(ProfilePart::kTranslate) == 1);
    CHECK(profile.count(ProfilePart::kEncoder) == 1);
    CHECK(steps >= longest);
    CHECK(profile.count(ProfilePart::kEmbedding) == steps);
    CHECK(profile.count(ProfilePart::kOutputProjection) == steps);
    const uint64_t layers = transformer_config(*model).decoder_layers;
    CHECK(profile.count(ProfilePart::kDecoderState) == steps * layers);
    CHECK(profile.count(ProfilePart::kSourceAttention) == steps * layers);
    CHECK(profile.count(ProfilePart::kAttentionGemm) == steps * layers * 4);
    CHECK(profile.count(ProfilePart::kFeedForwardGemm) == steps * layers * 2);
    CHECK(profile.count(ProfilePart::kSearch) == steps + 1);

    // Every part that must run took some time.
    for (size_t i = 0; i < kProfilePartCount; ++i) {
      CAPTURE(profile_part_name(static_cast<ProfilePart>(i)));
      CHECK(profile.nanoseconds[i] > 0);
    }
    // Nested parts fit in their parents; the parents in the caller's clock.
    const uint64_t translate = profile.ns(ProfilePart::kTranslate);
    CHECK(translate <= wall);
    CHECK(sum(profile, {ProfilePart::kEncoder, ProfilePart::kDecoderStep, ProfilePart::kSearch}) <=
          translate);
    CHECK(sum(profile, {ProfilePart::kEmbedding, ProfilePart::kLayerNorm,
                        ProfilePart::kAttentionGemm, ProfilePart::kDecoderState,
                        ProfilePart::kSourceAttention, ProfilePart::kFeedForwardGemm,
                        ProfilePart::kOutputProjection}) <= profile.ns(ProfilePart::kDecoderStep));
    // And they account for most of it (loose: untimed glue is a few loops).
    CHECK(sum(profile, {ProfilePart::kEncoder, ProfilePart::kDecoderStep, ProfilePart::kSearch}) >=
          translate / 2);

    // Detached: nothing more is added.
    translator->set_profile(nullptr);
    const Profile before = profile;
    REQUIRE(translator->translate(spans.data(), spans.size(), decode, results.data()).is_ok());
    for (size_t i = 0; i < kProfilePartCount; ++i) {
      CHECK(profile.calls[i] == before.calls[i]);
      CHECK(profile.nanoseconds[i] == before.nanoseconds[i]);
    }
  }
}

}  // namespace
}  // namespace edgemt
