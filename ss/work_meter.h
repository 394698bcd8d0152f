// The work meter (util/work_meter.h) under the names the callers outside the core spelled before
// it moved below the core and the kernel API: ss::WorkCounts, ss::Work ... Kept for the code that
// still spells them so (calibrate/calibrate.*, cli/calibrate_cmd.cpp, sim/accounting.cpp); the core
// itself and new code use the util/ names.
#pragma once

#include "util/work_meter.h"

namespace locksim::ss {

using locksim::count_work;
using locksim::kWorkKinds;
using locksim::kWorkNames;
using locksim::mem_line;
using locksim::MemRegion;
using locksim::Work;
using locksim::WorkCounts;
using locksim::WorkMeterScope;

}  // namespace locksim::ss
