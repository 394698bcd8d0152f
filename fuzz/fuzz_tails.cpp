// libFuzzer over the histograms of a results file's run that a tail estimate reads (pick's tail
// source, analysis/pick.h: the sections, the probe wake-ups, the stretches that held the CPUs,
// analysis/held_tail.h): any bytes give estimates or a UserError naming the run, never a
// crash, a hang or another exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analysis/pick.h"
#include "analysis/results_file.h"
#include "util/error.h"
#include "util/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using locksim::analysis::TailMetric;
    std::string_view text(reinterpret_cast<const char *>(data), size);
    try {
        locksim::analysis::ResultsFile file;
        file.runs.push_back(locksim::parse_json_text(text, "fuzz.input"));
        const locksim::analysis::TailSource tails = locksim::analysis::tail_source(file);
        for (TailMetric m : {TailMetric::ProbeWakeup, TailMetric::PreemptOff, TailMetric::IrqsOff})
            tails(0, m, 1e-6);
    } catch (const locksim::UserError &) {
    }
    return 0;
}
