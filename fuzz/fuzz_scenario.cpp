// libFuzzer over the scenario loader: any text gives a Scenario or a UserError, never a crash,
// a hang or another exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scenario/scenario.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    try {
        locksim::parse_scenario(text, "fuzz.toml");
    } catch (const locksim::UserError &) {
    }
    return 0;
}
