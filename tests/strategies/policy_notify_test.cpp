// The selinuxfs rebuild after a policy load, by kernel version: before 5.10 sel_write_load
// remakes the boolean, class and policy capability files; 5.10 on, sel_make_policy_nodes
// remakes only the boolean and class directories (the capability files are made at mount).
#include <gtest/gtest.h>

#include "strategies/policy_notify.h"
#include "strategy_test_util.h"

namespace locksim::strategies::test {
namespace {

TEST(PolicyNotify, RebuildBefore510RemakesCapabilityFilesAndSince510DoesNot) {
    const ss::Policydb db = ss::policydb_read(read_bytes(fixture("cond.33")));
    const SelinuxfsFiles files = PolicyNotifier::selinuxfs_files(db);
    ASSERT_GT(files.bools, 0u);
    ASSERT_GT(files.classes, 0u);
    const uint64_t since = PolicyNotifier::rebuild_nodes(files, db, PolicyChange::Full);
    const uint64_t before = PolicyNotifier::rebuild_nodes(files, db, PolicyChange::LoadBefore510);
    // Old and new booleans and classes, both ways.
    EXPECT_EQ(since, 2 * (files.bools + files.classes));
    // Before 5.10 the policy capability files too: each removed and made again.
    EXPECT_GT(before, since);
    EXPECT_EQ((before - since) % 2, 0u);
}

}  // namespace
}  // namespace locksim::strategies::test
