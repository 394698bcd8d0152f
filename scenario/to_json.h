// The scenario as a results file records it: every setting the run used, defaults included, so
// that a results file says what ran.
#pragma once

#include <nlohmann/json.hpp>

#include "scenario/scenario.h"

namespace locksim {

nlohmann::json scenario_json(const Scenario &s);

}  // namespace locksim
