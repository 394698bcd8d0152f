// The median of a set of measurements (timing rounds, validation rounds): the middle value, or
// the mean of the two middle ones; 0 for none.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace locksim {

inline double median(std::vector<double> v) {
    if (v.empty()) return 0;
    const size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    if (v.size() % 2) return v[mid];
    return (v[mid] + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid))) /
           2;
}

}  // namespace locksim
