// MLS levels and ranges (the kernel's mls_types.h): a sensitivity value and a category bitmap,
// and a low/high pair of levels. Category c<n> is bit n of `cat`; sensitivity s<n> has value n+1.
#pragma once

#include <cstdint>

#include "ss/ebitmap.h"

namespace locksim::ss {

struct MlsLevel {
    uint32_t sens = 0;  // sensitivity value (1-based; 0 = unset)
    Ebitmap cat;        // categories (bit = value - 1)
};

struct MlsRange {
    MlsLevel level[2];  // [0] low, [1] high
};

inline bool mls_level_eq(const MlsLevel &l1, const MlsLevel &l2) {
    return l1.sens == l2.sens && ebitmap_cmp(l1.cat, l2.cat);
}

// l1 dominates l2.
inline bool mls_level_dom(const MlsLevel &l1, const MlsLevel &l2) {
    return l1.sens >= l2.sens && ebitmap_contains(l1.cat, l2.cat, 0);
}

inline bool mls_level_incomp(const MlsLevel &l1, const MlsLevel &l2) {
    return !mls_level_dom(l1, l2) && !mls_level_dom(l2, l1);
}

inline bool mls_level_between(const MlsLevel &l1, const MlsLevel &l2, const MlsLevel &l3) {
    return mls_level_dom(l1, l2) && mls_level_dom(l3, l1);
}

// r2 lies within r1.
inline bool mls_range_contains(const MlsRange &r1, const MlsRange &r2) {
    return mls_level_dom(r2.level[0], r1.level[0]) && mls_level_dom(r1.level[1], r2.level[1]);
}

inline bool mls_range_eq(const MlsRange &r1, const MlsRange &r2) {
    return mls_level_eq(r1.level[0], r2.level[0]) && mls_level_eq(r1.level[1], r2.level[1]);
}

}  // namespace locksim::ss
