// A random stream of its own for one named source of a run (a workload's timer, an interrupt
// source on a CPU), derived from the run's seed, the source's name and an index: adding or
// removing another source, or drawing more from another stream, leaves it unchanged.
#pragma once

#include <cstdint>
#include <random>
#include <string_view>

namespace locksim {

inline std::mt19937_64 seed_stream(uint64_t seed, std::string_view name, uint64_t index) {
    // FNV-1a of the name: the same on every platform and build (std::hash is not).
    uint64_t h = 0xcbf29ce484222325u;
    for (unsigned char c : name)
        h = (h ^ c) * 0x100000001b3u;
    std::seed_seq seq{static_cast<uint32_t>(seed),  static_cast<uint32_t>(seed >> 32),
                      static_cast<uint32_t>(h),     static_cast<uint32_t>(h >> 32),
                      static_cast<uint32_t>(index), static_cast<uint32_t>(index >> 32)};
    return std::mt19937_64(seq);
}

// A draw in [0, n] from a stream (0 when n <= 0); the modulo keeps it the same with every
// standard library (std::uniform_int_distribution is not).
inline int64_t draw_upto(std::mt19937_64 &rng, int64_t n) {
    return n > 0 ? static_cast<int64_t>(rng() % (static_cast<uint64_t>(n) + 1)) : 0;
}

}  // namespace locksim
