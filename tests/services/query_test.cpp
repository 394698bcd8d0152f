// `locksim query` run as a user runs it: a file of queries piped in, one line out per line in,
// each compared with libsepol's answer.
#include <fmt/core.h>

#include <cstdlib>
#include <fstream>

#include "sepol_oracle.h"
#include "ss/avtab.h"
#include "svc_test_util.h"
#include "tests/temp_dir.h"
#include "util/sanitizers.h"

namespace locksim::ss::test {
namespace {

#if LOCKSIM_ASAN
constexpr uint32_t kQueries = 1500;
#else
constexpr uint32_t kQueries = 6000;
#endif

std::string errno_token(int rc) {
    if (rc == -EACCES) return "error=EACCES";
    if (rc == -EINVAL) return "error=EINVAL";
    return fmt::format("error=E{}", -rc);
}

void run_query_check(const std::string &policy) {
    SCOPED_TRACE(policy);
    PolicyState st = policy_state_create(policydb_read_file(policy));
    const PolicyBase &p = st.p();
    ContextGen gen(p, 777);
    ASSERT_EQ(so_load(policy.c_str()), 0);
    std::vector<AvtabKey> rules;
    p.te_avtab.for_each([&](const AvtabNode &n) {
        if (n.key.specified & (AVTAB_ALLOWED | AVTAB_TRANSITION)) rules.push_back(n.key);
    });

    std::vector<std::string> in, expected;  // an expected "error=" alone: any error line
    auto pair_for_rule = [&](std::string &s, std::string &t, std::string &cls) {
        const AvtabKey &k = rules[gen.uniform(static_cast<uint32_t>(rules.size()))];
        uint32_t st0 = gen.concrete(k.source_type), tt0 = gen.concrete(k.target_type);
        s = gen.str(gen.subject(st0 ? st0 : gen.random_type(), false));
        t = gen.str(gen.object(tt0 ? tt0 : gen.random_type(), false));
        cls = std::string(p.classes.name_of(k.target_class));
    };
    std::vector<int> values = get_bools(st);
    for (uint32_t i = 0; i < kQueries; ++i) {
        uint32_t kind = gen.uniform(20);
        std::string s, t, cls;
        if (kind < 10) {
            pair_for_rule(s, t, cls);
            unsigned a, aa, ad;
            int rc = so_compute_av(s.c_str(), t.c_str(), so_class_value(cls.c_str()), &a, &aa, &ad);
            in.push_back("av " + s + " " + t + " " + cls);
            expected.push_back(
                rc ? "error="
                   : fmt::format("allowed=0x{:08x} auditallow=0x{:08x} auditdeny=0x{:08x}", a, aa,
                                 ad));
        } else if (kind < 14) {
            pair_for_rule(s, t, cls);
            char *out = nullptr;
            int rc = so_create(s.c_str(), t.c_str(), so_class_value(cls.c_str()), &out);
            in.push_back("create " + s + "  " + t + "\t" + cls);
            expected.push_back(rc == -1 ? "error="
                               : rc     ? errno_token(rc)
                                        : std::string("context=") + out);
            free(out);
        } else if (kind < 17) {
            std::vector<std::string> bad = gen.invalid_variants();
            std::string con = gen.uniform(2) ? gen.str(gen.random_context())
                                             : bad[gen.uniform(static_cast<uint32_t>(bad.size()))];
            if (con.empty() || con.find_first_of(" \t") != std::string::npos) continue;
            in.push_back("valid " + con);
            expected.push_back(so_valid(con.c_str()) ? "valid=1" : "valid=0");
        } else if (kind < 18 && !values.empty()) {
            uint32_t b = gen.uniform(static_cast<uint32_t>(values.size()));
            values[b] = !values[b];
            std::string name(st.db.cond->bools.name_of(b + 1));
            ASSERT_EQ(so_set_bool(name.c_str(), values[b]), 0);
            in.push_back(fmt::format("setbool {} {}", name, values[b]));
            expected.push_back("ok");
        } else {
            // Mistakes: each must give one error line and leave the session going.
            const char *bad[] = {
                "",      "av",          "frobnicate x", "setbool no_such_bool 1", "setbool x 2",
                "valid", "av a b c d e"};
            std::string line = bad[gen.uniform(7)];
            if (gen.uniform(2)) {
                pair_for_rule(s, t, cls);
                line = "av " + s + " " + t + " fille";
            }
            in.push_back(line);
            expected.push_back("error=");
        }
    }
    so_unload();

    const locksim::testing::TestTempDir dir;
    const std::string qin = (dir / "query_in.txt").string(),
                      qout = (dir / "query_out.txt").string();
    {
        std::ofstream f(qin);
        for (const std::string &l : in)
            f << l << "\n";
    }
    std::string cmd =
        fmt::format("'{}' query --policy '{}' < '{}' > '{}'", LOCKSIM_EXE, policy, qin, qout);
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream f(qout);
    std::vector<std::string> out;
    for (std::string l; std::getline(f, l);)
        out.push_back(l);
    ASSERT_EQ(out.size(), in.size()) << "one output line per input line";
    size_t errors = 0;
    for (size_t i = 0; i < in.size(); ++i) {
        if (expected[i] == "error=") {
            ++errors;
            EXPECT_EQ(out[i].rfind("error=", 0), 0u) << in[i] << " -> " << out[i];
        } else if (expected[i].rfind("error=", 0) == 0) {
            EXPECT_EQ(out[i].rfind(expected[i], 0), 0u) << in[i] << " -> " << out[i];
        } else {
            EXPECT_EQ(out[i], expected[i]) << in[i];
        }
    }
    EXPECT_GT(errors, 0u);
}

TEST(Query, MatchesLibsepolOnEveryPolicy) {
    for (const std::string &policy : oracle_policies())
        run_query_check(policy);
}

TEST(Query, UnknownClassMessage) {
    const locksim::testing::TestTempDir dir;
    const std::string qin = (dir / "q1.txt").string(), qout = (dir / "q1.out").string();

    std::ofstream(qin) << "av system_u:system_r:kernel_t:s0 system_u:object_r:etc_t:s0 fille\n";
    std::string cmd = fmt::format("'{}' query --policy '{}' < '{}' > '{}'", LOCKSIM_EXE,
                                  debian_policy("default"), qin, qout);
    ASSERT_EQ(std::system(cmd.c_str()), 0);
    std::string line;
    std::getline(std::ifstream(qout) >> std::ws, line);
    EXPECT_EQ(line, "error=EINVAL unknown class 'fille'");
}

}  // namespace
}  // namespace locksim::ss::test
