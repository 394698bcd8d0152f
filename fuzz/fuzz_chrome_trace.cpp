// libFuzzer over the Chrome/Perfetto JSON trace parser: any bytes give a Measurement or a UserError naming the place, never a
// crash, a hang or another exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/measured/measurement.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    try {
        locksim::analysis::measured::parse_chrome_trace(text, "fuzz.input");
    } catch (const locksim::UserError &) {
    }
    return 0;
}
