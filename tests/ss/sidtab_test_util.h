// Shared helper of the SID table tests: a context that differs from another only by its type.
#pragma once

#include <cstdint>

#include "ss/context.h"

namespace locksim::ss::testing {

inline Context typed_context(uint32_t type) {
    Context c;
    c.user = 1;
    c.role = 1;
    c.type = type;
    return c;
}

}  // namespace locksim::ss::testing
