// libFuzzer target over the binary policy reader: any input either reads or ends in a
// UserError. What reads must also write and read back (versions the writer supports).
#include <cstddef>
#include <cstdint>
#include <span>

#include "ss/policydb.h"
#include "util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    using namespace locksim::ss;
    Policydb db;
    try {
        db = policydb_read(std::span<const uint8_t>(data, size), "fuzz");
    } catch (const locksim::UserError &) {
        return 0;
    }
    if (db.version() >= kPolicyVersionWriteMin) {
        std::vector<uint8_t> out = policydb_write(db);
        Policydb back = policydb_read(out, "fuzz rewrite");  // must not throw
        if (policydb_write(back) != out) __builtin_trap();
    }
    return 0;
}
