// libFuzzer over a results file's run summary (analysis/results_file.h), "priced" included: any
// bytes give a RunSummary or a UserError naming the run and the key, never a crash, a hang or
// another exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/results_file.h"
#include "util/error.h"
#include "util/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    std::string_view text(reinterpret_cast<const char *>(data), size);
    try {
        const nlohmann::json j = locksim::parse_json_text(text, "fuzz.input");
        locksim::analysis::summary_from_json(j, "fuzz.input: run 0");
    } catch (const locksim::UserError &) {
    }
    return 0;
}
