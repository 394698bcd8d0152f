#include "ss/policy_gen.h"

#include "ss/error.h"

namespace locksim::ss {

Policydb policy_generate(const GenOptions &) {
    throw UserError("policy gen: not available yet");
}

}  // namespace locksim::ss
