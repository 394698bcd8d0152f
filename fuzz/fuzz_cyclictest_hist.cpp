// libFuzzer over cyclictest's histogram parser (-h, --histfile): any bytes give a Measurement or a UserError naming the place, never a
// crash, a hang or another exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/measured/measurement.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    try {
        locksim::analysis::measured::parse_cyclictest_histogram(text, "fuzz.input");
    } catch (const locksim::UserError &) {
    }
    return 0;
}
