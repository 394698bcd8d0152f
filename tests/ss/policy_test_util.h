// Shared helpers of the policy database tests: file loading, the policies under test, and a
// count-by-count comparison with libsepol.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "sepol_counts.h"
#include "ss/policy_info.h"
#include "ss/policydb.h"

namespace locksim::ss::testing {

inline std::vector<uint8_t> load_bytes(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every policy the database tests run on: the Debian builds and the compiled fixtures.
inline std::vector<std::string> all_policies() {
    std::vector<std::string> out;
    for (const char *p :
         {"default.policy.33", "mls.policy.33", "default.policy.24", "mls.policy.24"})
        out.push_back(std::string(LOCKSIM_POLICY_DIR) + "/" + p);
    std::vector<std::string> fixtures;
    for (const auto &e : std::filesystem::directory_iterator(LOCKSIM_FIXTURE_DIR)) {
        std::string ext = e.path().extension().string();  // ".<version>"
        if (e.is_regular_file() && ext.size() == 3 && std::isdigit(ext[1]) && std::isdigit(ext[2]))
            fixtures.push_back(e.path().string());
    }
    std::sort(fixtures.begin(), fixtures.end());
    out.insert(out.end(), fixtures.begin(), fixtures.end());
    return out;
}

// Compares our counts of a policy with libsepol's, key by key.
inline void expect_counts_equal(const Policydb &db, const std::vector<uint8_t> &bytes,
                                const std::string &what) {
    sepol_counts sc;
    ASSERT_EQ(sepol_policy_counts(bytes.data(), bytes.size(), &sc), 0)
        << "libsepol refuses " << what;
    PolicyInfo info = policy_info(db);
    EXPECT_EQ(info.version, sc.version) << what;
    EXPECT_EQ(info.mls, sc.mls != 0) << what;
    uint32_t hu = info.handle_unknown == "allow"    ? ALLOW_UNKNOWN
                  : info.handle_unknown == "reject" ? REJECT_UNKNOWN
                                                    : 0;
    EXPECT_EQ(hu, sc.handle_unknown) << what;
    ASSERT_EQ(static_cast<size_t>(sc.n), info.counts.size()) << what;
    for (int i = 0; i < sc.n; ++i)
        EXPECT_EQ(info.at(sc.key[i]), sc.value[i]) << what << ": " << sc.key[i];
}

}  // namespace locksim::ss::testing
