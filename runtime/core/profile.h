// ProfileScope: adds the time of a C++ scope to one part of a Profile
// (edgemt/profile.h). With a null Profile it reads no clock: one branch on
// entry and one on exit. No allocation either way.
//
//   {
//     ProfileScope timed(c.profile, ProfilePart::kFeedForwardGemm);
//     EDGEMT_RETURN_IF_ERROR(layer.ffn_in.run(...));   // early returns are timed too
//   }
#pragma once

#include <cstdint>

#include "edgemt/profile.h"

namespace edgemt {

// CLOCK_MONOTONIC in nanoseconds.
uint64_t monotonic_ns();

class ProfileScope {
 public:
  ProfileScope(Profile* profile, ProfilePart part)
      : profile_(profile), part_(part), start_(profile != nullptr ? monotonic_ns() : 0) {}
  ~ProfileScope() {
    if (profile_ != nullptr) profile_->add(part_, monotonic_ns() - start_);
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

 private:
  Profile* profile_;
  ProfilePart part_;
  uint64_t start_;
};

}  // namespace edgemt
