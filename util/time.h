// Time is integer nanoseconds everywhere (docs/design.md, decision 3): in the kernel API, the
// engines and the run's record.
#pragma once

#include <cstdint>

namespace locksim {

using Time = int64_t;
inline constexpr Time kNsec = 1;
inline constexpr Time kUsec = 1000;
inline constexpr Time kMsec = 1000 * kUsec;
inline constexpr Time kSec = 1000 * kMsec;

}  // namespace locksim
