// The simulator's self-checks on strategies: the shipped ones run clean under toggles and a
// reload (replay_test.cpp asserts that too); deliberately broken ones, written here against
// the same base class, are reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "broken_strategy.h"
#include "kernel/mutex.h"
#include "kernel/rwlock.h"
#include "strategies/catalog.h"
#include "strategies/strategy.h"
#include "strategy_test_util.h"
#include "util/error.h"

namespace locksim::strategies::test {
namespace {

using kernel::kMsec;
using kernel::kUsec;

// rwlock whose writer takes a sleeping lock inside its spinning section.
class SleepsUnderSpinlock final : public StrategyBase {
  public:
    SleepsUnderSpinlock(ss::PolicyState st, const CoreConfig &core)
        : StrategyBase("broken-sleep-in-atomic", std::move(st), core, false), lock_("broken") {}

  protected:
    int read_section(ReadFn fn) override {
        kernel::read_lock(lock_);
        int rc = fn(policy_locked()->st);
        kernel::read_unlock(lock_);
        return rc;
    }
    int write_bools(std::span<const int> values, uint32_t *seqno) override {
        return set_bools_exclusive(values, seqno, [&](FunctionRef<void()> update) {
            kernel::write_lock_irq(lock_);
            kernel::mutex_lock(extra_);  // BUG: may sleep with a spinning lock held
            update();
            kernel::mutex_unlock(extra_);
            kernel::write_unlock_irq(lock_);
        });
    }
    int write_load(std::span<const uint8_t>, uint32_t *) override { return -EINVAL; }

  private:
    kernel::RwLock lock_;
    kernel::Mutex extra_{"broken_extra"};
};

TEST(Checks, FreeWithoutGracePeriodIsReported) {
    CoreConfig core;
    kernel::RunResults r = run_toggles(
        [&] { return std::make_unique<FreesWithoutGracePeriod>(fixture_state(core), core); });
    EXPECT_GT(r.count_violations("rcu_free_in_use"), 0u) << violations_text(r);
}

TEST(Checks, SleepUnderSpinlockIsReported) {
    CoreConfig core;
    kernel::RunResults r = run_toggles(
        [&] { return std::make_unique<SleepsUnderSpinlock>(fixture_state(core), core); });
    EXPECT_GT(r.count_violations("sleep_in_atomic"), 0u) << violations_text(r);
}

class Shipped : public ::testing::TestWithParam<StrategyCase> {};

TEST_P(Shipped, RunsCleanWithLongReaders) {
    CoreConfig core;
    kernel::RunResults r = run_toggles([&] {
        return make_security_server(GetParam().name, GetParam().options, fixture_state(core), core);
    });
    EXPECT_TRUE(r.violations.empty()) << violations_text(r);
    EXPECT_GT(r.ops["set_bools"].completed, 3u);
}

INSTANTIATE_TEST_SUITE_P(Strategies, Shipped, ::testing::ValuesIn(all_strategy_cases()),
                         [](const auto &info) { return info.param.label(); });

// A reader that finds the SID table frozen under it (-ESTALE) runs again on the new policy.
TEST(ReadSide, StaleIsRetried) {
    sim::SimPlatform sim(sim_config(2, kMsec));
    kernel::PlatformScope scope(sim);
    CoreConfig core;
    auto server = make_security_server("rcu-cond-dup", {}, fixture_state(core), core);
    int calls = 0, rc = 0;
    sim.create_task({"reader"}, [&] {
        rc = server->read_policy(
            [&](const ss::PolicyState &) { return ++calls == 1 ? -ESTALE : 7; });
    });
    kernel::RunResults r = sim.run();
    EXPECT_EQ(rc, 7);
    EXPECT_EQ(calls, 2);
    EXPECT_TRUE(r.violations.empty()) << violations_text(r);
}

// --- the registry ---------------------------------------------------------------------------

TEST(Registry, EveryCatalogEntryBuildsAndNamesItself) {
    sim::SimPlatform sim(sim_config(2, kMsec));
    kernel::PlatformScope scope(sim);
    CoreConfig core;
    for (const auto &info : strategy_catalog()) {
        auto server = make_security_server(info.name, {}, fixture_state(core), core);
        EXPECT_EQ(server->name(), info.name);
    }
}

// One entry per strategy: a unique name, its documentation and a maker, each option with a
// default its own check accepts.
TEST(Registry, EveryEntryIsCompleteAndUnique) {
    std::set<std::string> names;
    for (const auto &info : strategy_catalog()) {
        EXPECT_TRUE(names.insert(info.name).second) << info.name;
        EXPECT_FALSE(info.summary.empty()) << info.name;
        EXPECT_FALSE(info.models.empty()) << info.name;
        EXPECT_NE(info.make, nullptr) << info.name;
        for (const auto &spec : info.options) {
            EXPECT_FALSE(spec.doc.empty()) << info.name << "." << spec.name;
            EXPECT_FALSE(check_param(spec, spec.default_value).has_value())
                << info.name << "." << spec.name;
        }
        EXPECT_EQ(find_strategy_info(info.name), &info);
    }
}

// An experimental design stays out of `strategies = "all"` (the main job's table), in the
// catalog's order for the others; a scenario that names it finds it in the catalog.
TEST(Registry, ExperimentalEntriesAreLeftOutOfAll) {
    const std::vector<StrategyInfo> catalog = {
        {.name = "a"}, {.name = "tried", .experimental = true}, {.name = "c"}};
    std::vector<std::string> names;
    for (const StrategyInfo *s : all_strategies(catalog))
        names.push_back(s->name);
    EXPECT_EQ(names, (std::vector<std::string>{"a", "c"}));
    for (const StrategyInfo &info : strategy_catalog()) {
        const auto all = all_strategies();
        EXPECT_EQ(std::count(all.begin(), all.end(), &info), info.experimental ? 0 : 1)
            << info.name;
    }
}

TEST(Registry, BadNamesAndOptionsAreUserErrors) {
    sim::SimPlatform sim(sim_config(2, kMsec));
    kernel::PlatformScope scope(sim);
    CoreConfig core;
    EXPECT_THROW(make_security_server("rcu-ful-copy", {}, fixture_state(core), core), UserError);
    Params unknown;
    unknown.set("grace", std::string("normal"));
    EXPECT_THROW(make_security_server("rcu-cond-dup", unknown, fixture_state(core), core),
                 UserError);
    Params bad;
    bad.set("copy", std::string("lazy"));
    EXPECT_THROW(make_security_server("rcu-full-copy", bad, fixture_state(core), core), UserError);
    Params range;
    range.set("max_retries", int64_t{0});
    EXPECT_THROW(make_security_server("seqlock", range, fixture_state(core), core), UserError);
}

// A scenario's core.avc_slots is checked where it is read (with its place); a CoreConfig built
// in code with a count that is not a power of two is misuse, not a user's error.
TEST(Registry, AnAvcSlotCountNotAPowerOfTwoIsMisuse) {
    sim::SimPlatform sim(sim_config(2, kMsec));
    kernel::PlatformScope scope(sim);
    CoreConfig odd;
    odd.avc_slots = 100;
    EXPECT_THROW(make_security_server("rwlock", {}, fixture_state(odd), odd),
                 std::invalid_argument);
}

}  // namespace
}  // namespace locksim::strategies::test
