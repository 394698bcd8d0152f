// libFuzzer target over the context parser: any input either parses or is refused with
// -EINVAL, never a crash. What parses must print back to a string that parses to the same
// context and names the same SID.
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ss/context_string.h"
#include "ss/policy_gen.h"
#include "ss/services.h"

namespace {

locksim::ss::PolicyState &fuzz_state() {
    static locksim::ss::PolicyState st = [] {
        locksim::ss::GenOptions o;
        o.types = 40;
        o.booleans = 4;
        o.categories = 1024;
        o.sensitivities = 4;
        return locksim::ss::policy_state_create(locksim::ss::policy_generate(o), 16);
    }();
    return st;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace locksim::ss;
    PolicyState &st = fuzz_state();
    std::string_view in(reinterpret_cast<const char *>(data), size);
    Context c;
    int rc = context_parse(st.p(), in, c);
    if (rc != 0 && rc != -EINVAL) __builtin_trap();
    if (rc) return 0;
    std::string text = context_to_string(st.p(), c);
    Context back;
    if (context_parse(st.p(), text, back) != 0 || !context_equal(c, back)) __builtin_trap();
    uint32_t sid1, sid2;
    int v1 = context_to_sid(st, in, &sid1);
    int v2 = context_to_sid(st, text, &sid2);
    if (v1 != v2 || (v1 == 0 && sid1 != sid2)) __builtin_trap();
    if (v1 == 0) {
        std::string out;
        if (sid_to_context(st, sid1, &out) != 0 || out != text) __builtin_trap();
    }
    return 0;
}
