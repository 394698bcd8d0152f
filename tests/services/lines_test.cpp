// The cache model's view of the security server: every structure a call reads or writes is
// recorded as lines named by what they hold, with the access's kind, so that a platform that
// models caches prices them (sim/cache_model.h). Each test records one call's lines exactly
// (no sampling) and checks them against the structure the call walked.
#include <algorithm>
#include <set>

#include "ss/avc.h"
#include "ss/conditional.h"
#include "ss/policy_dup.h"
#include "svc_test_util.h"
#include "util/work_meter.h"

namespace locksim::ss::test {
namespace {

PolicyState fresh_state() {
    return policy_state_create(policydb_read_file(debian_policy("default")));
}

// The lines `f` records, in order, with their kinds.
template <class F>
std::vector<uint64_t> lines_of(F &&f) {
    WorkCounts c;
    c.line_shift = 0;
    {
        WorkMeterScope meter(&c);
        f();
    }
    EXPECT_EQ(c.line_touches, c.lines.size());
    return c.lines;
}

size_t count(const std::vector<uint64_t> &lines, MemRegion r, int kind = -1) {
    return static_cast<size_t>(std::count_if(lines.begin(), lines.end(), [&](uint64_t l) {
        if (line_region(l) != r) return false;
        if (kind < 0) return true;
        const int k = line_written(l) ? 2 : line_dependent(l) ? 1 : 0;
        return k == kind;
    }));
}
constexpr int kIndependent = 0, kDependent = 1, kWritten = 2;

size_t distinct(const std::vector<uint64_t> &lines, MemRegion r) {
    std::set<uint64_t> s;
    for (uint64_t l : lines)
        if (line_region(l) == r) s.insert(line_tag(l));
    return s.size();
}

TEST(CoreLines, ACommitReadsEveryConditionalNodeAndTheRulesItToggles) {
    PolicyState st = fresh_state();
    CondPolicy &cond = *st.db.cond;
    size_t toggled = 0;
    for (const CondNode &n : cond.cond_list)
        toggled += n.true_list.size() + n.false_list.size();
    ASSERT_GT(toggled, 100u);
    const auto lines = lines_of([&] { cond_evaluate_nodes(cond, true); });
    // The node array (56 bytes a node), each expression's array and the booleans it names, and
    // every rule of both lists, once each: a rule's line is the one a search of the table names
    // (its slot and depth). No load waits for another node's (an array, not a list): none is
    // dependent.
    EXPECT_GE(count(lines, MemRegion::CondNode, kIndependent), 2 * cond.cond_list.size());
    EXPECT_EQ(count(lines, MemRegion::CondNode, kDependent), 0u);
    EXPECT_EQ(count(lines, MemRegion::AvtabNode, kIndependent), toggled);
    // 24-byte nodes in allocation order: a list's rules, read from one policy, share lines.
    EXPECT_LT(distinct(lines, MemRegion::AvtabNode), toggled * 2 / 3);
    EXPECT_GE(distinct(lines, MemRegion::AvtabNode), toggled * 24 / 64);
    // A search for a toggled rule reads the same line.
    const AvtabNode *rule = cond.cond_list.front().true_list.empty()
                                ? cond.cond_list.front().false_list.front()
                                : cond.cond_list.front().true_list.front();
    const auto search = lines_of([&] { cond.te_cond_avtab.search_node(rule->key); });
    std::set<uint64_t> commit_tags;
    for (uint64_t l : lines)
        commit_tags.insert(line_tag(l));
    size_t found = 0;
    for (uint64_t l : search)
        found += line_region(l) == MemRegion::AvtabNode && commit_tags.count(line_tag(l));
    EXPECT_GE(found, 1u) << "the searched rule's line is the committed one";
}

TEST(CoreLines, TheAvcReadsItsSlotAndChainAndWritesNewNodes) {
    AvcCache avc;
    AvDecision d;
    d.allowed = 1;
    const auto insert = lines_of([&] { avc_insert(avc, 5, 6, 7, d); });
    EXPECT_EQ(count(insert, MemRegion::AvcNode, kWritten), 1u);
    EXPECT_EQ(count(insert, MemRegion::AvcSlots, kIndependent), 1u);
    const auto hit = lines_of([&] { EXPECT_NE(avc_lookup(avc, 5, 6, 7), nullptr); });
    EXPECT_EQ(count(hit, MemRegion::AvcSlots, kIndependent), 1u);
    EXPECT_EQ(count(hit, MemRegion::AvcNode, kDependent), 1u);
    // The node read is the node written.
    auto node_of = [](const std::vector<uint64_t> &v) {
        for (uint64_t l : v)
            if (line_region(l) == MemRegion::AvcNode) return line_tag(l);
        return uint64_t{0};
    };
    EXPECT_EQ(node_of(hit), node_of(insert));
    // A second AVC names its lines apart.
    AvcCache other;
    avc_insert(other, 5, 6, 7, d);
    const auto other_hit = lines_of([&] { avc_lookup(other, 5, 6, 7); });
    EXPECT_NE(node_of(other_hit), node_of(hit));
}

TEST(CoreLines, AFullCopyReadsBackTheImageItWrote) {
    PolicyState st = fresh_state();
    size_t image_bytes = policydb_write(st.db).size();
    const auto lines = lines_of([&] { Policydb copy = policydb_full_copy(st.db); });
    std::set<uint64_t> written, read;
    for (uint64_t l : lines) {
        if (line_region(l) != MemRegion::Stream) continue;
        (line_written(l) ? written : read).insert(line_tag(l));
    }
    const size_t image_lines = (image_bytes + 63) / 64;
    EXPECT_EQ(written.size(), image_lines);
    // The writer reads the policy (as many lines) and the reader reads the image it wrote.
    EXPECT_EQ(read.size(), 2 * image_lines);
    size_t read_back = 0;
    for (uint64_t t : written)
        read_back += read.count(t);
    EXPECT_EQ(read_back, image_lines);
}

TEST(CoreLines, TheSidTableNamesItsEntriesAndTheirCategories) {
    PolicyState st = policy_state_create(policydb_read_file(debian_policy("mls")));
    uint32_t sid = 0;
    const std::string ctx = "system_u:object_r:etc_t:s0:c1,c7,c500";
    const auto insert = lines_of([&] { ASSERT_EQ(context_to_sid(st, ctx, &sid), 0); });
    // A miss in the hash era: the bucket's line, then the new entry and its categories written.
    EXPECT_GE(count(insert, MemRegion::SidtabSlots, kIndependent), 1u);
    EXPECT_GE(count(insert, MemRegion::SidtabEntry, kWritten), 2u);  // 104 bytes: two lines
    EXPECT_GE(count(insert, MemRegion::EbitmapNode, kWritten), 4u);  // two levels, two nodes each
    uint32_t again = 0;
    const auto lookup = lines_of([&] { ASSERT_EQ(context_to_sid(st, ctx, &again), 0); });
    EXPECT_EQ(again, sid);
    // The hit reads the entry and its categories through the chain: lines the insert wrote.
    std::set<uint64_t> wrote;
    for (uint64_t l : insert)
        if (line_written(l)) wrote.insert(line_tag(l));
    size_t entry_reads = 0, cat_reads = 0;
    for (uint64_t l : lookup) {
        if (!line_dependent(l) || !wrote.count(line_tag(l))) continue;
        entry_reads += line_region(l) == MemRegion::SidtabEntry;
        cat_reads += line_region(l) == MemRegion::EbitmapNode;
    }
    EXPECT_GE(entry_reads, 1u);
    EXPECT_GE(cat_reads, 2u);
}

}  // namespace
}  // namespace locksim::ss::test
