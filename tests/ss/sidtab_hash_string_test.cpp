// The 5.6-5.7 SID table (v5.6.4 services.c, context.h): the same hash table as 5.8 on, but a
// context is hashed by its string outside the table's lock: the string it was parsed from
// (string_to_context_struct), or for a context the server made its text, formatted for the
// purpose (context_add_hash); and a load hashes each converted entry while converting, so that
// the hash table section only links.
#include <gtest/gtest.h>

#include <string_view>

#include "sidtab_test_util.h"
#include "ss/sidtab.h"
#include "util/work_meter.h"

namespace locksim::ss {
namespace {

Context ctx(uint32_t type, uint32_t cats) {
    Context c = testing::typed_context(type);
    c.range.level[0].sens = 1;
    c.range.level[1].sens = 1;
    for (uint32_t i = 0; i < cats; ++i)
        c.range.level[1].cat.set_bit(i, true);
    return c;
}

WorkCounts insert(Sidtab &t, const Context &c, std::string_view spelled = {}) {
    WorkCounts w;
    WorkMeterScope s(&w);
    uint32_t sid = 0;
    EXPECT_EQ(t.context_to_sid(c, &sid, spelled), 0);
    return w;
}

// full_name_hash's steps over `bytes`: a word of eight at a time.
uint64_t hash_steps(size_t bytes) {
    return (bytes + 7) / 8;
}

TEST(SidtabHashString, AMadeContextIsFormattedAParsedOneHashesItsString) {
    Sidtab fields(0, SidtabEra::Hash), strings(0, SidtabEra::HashString);
    for (Sidtab *t : {&fields, &strings})
        ASSERT_EQ(t->set_initial(SECINITSID_UNLABELED, ctx(1, 0)), 0);
    const WorkCounts f = insert(fields, ctx(7, 10)), s = insert(strings, ctx(7, 10));
    EXPECT_EQ(f[Work::StringByte], 0u);
    // A made context: user:role:type, then the range as the kernel prints it (a run of
    // categories as "c0.c9"), written and then hashed.
    const size_t text = kContextNamesBytes + std::string_view(":s0-s0:c0.c9").size();
    EXPECT_EQ(s[Work::StringByte], text + hash_steps(text));
    EXPECT_EQ(s[Work::Alloc], f[Work::Alloc] + 1);
    EXPECT_EQ(s[Work::Free], f[Work::Free] + 1);
    // Found again: the string is formatted again (no hash is kept with the caller's context).
    const WorkCounts again = insert(strings, ctx(7, 10));
    EXPECT_EQ(again[Work::StringByte], s[Work::StringByte]);
    // Longer runs print as long (a run is its ends); more runs, a longer string.
    const WorkCounts hundred = insert(strings, ctx(8, 100));
    const size_t text100 = kContextNamesBytes + std::string_view(":s0-s0:c0.c99").size();
    EXPECT_EQ(hundred[Work::StringByte], text100 + hash_steps(text100));
    // ... but the formatting visits each of its bits twice: sizing the text, then writing it.
    EXPECT_EQ(hundred[Work::BitIteration], 200u);
    Context gaps = ctx(10, 0);
    for (uint32_t i = 0; i < 10; i += 2)
        gaps.range.level[1].cat.set_bit(i, true);
    const size_t gap_text = kContextNamesBytes + std::string_view(":s0-s0:c0,c2,c4,c6,c8").size();
    EXPECT_EQ(insert(strings, gaps)[Work::StringByte], gap_text + hash_steps(gap_text));
    // A context parsed from a string: that string hashed, nothing formatted, whatever its bits.
    const std::string_view spelled = "system_u:system_r:svirt_t:s0:c1,c2-s0:c0.c1023";
    const WorkCounts parsed = insert(strings, ctx(8, 100), spelled);
    EXPECT_EQ(parsed[Work::StringByte], hash_steps(spelled.size()));
    EXPECT_EQ(parsed[Work::BitIteration], 0u);
    EXPECT_EQ(parsed[Work::Alloc], 0u);
    EXPECT_EQ(parsed[Work::Free], 0u);
    // The same SIDs either way, made or parsed.
    insert(fields, ctx(8, 100));
    insert(fields, gaps);
    uint32_t a = 0, b = 0, c = 0;
    ASSERT_EQ(fields.context_to_sid(ctx(9, 3), &a), 0);
    ASSERT_EQ(strings.context_to_sid(ctx(9, 3), &b), 0);
    EXPECT_EQ(a, b);
    EXPECT_EQ(strings.lookup(ctx(9, 3), strings.era_hash(ctx(9, 3))), b);
    ASSERT_EQ(strings.context_to_sid(ctx(9, 3), &c, spelled), 0);
    EXPECT_EQ(c, b);
}

TEST(SidtabHashString, ConvertHashesOutsideTheHashtableSection) {
    // Counts the work done inside the ConvertHashtable section.
    struct Counting : SidtabLocking {
        WorkCounts *outer = nullptr;
        WorkCounts inside;
        std::unique_ptr<WorkMeterScope> scope;
        void lock(Section s) override {
            if (s == Section::ConvertHashtable) scope = std::make_unique<WorkMeterScope>(&inside);
        }
        void unlock(Section s) override {
            if (s == Section::ConvertHashtable) scope.reset();
        }
    };
    for (SidtabEra era : {SidtabEra::Hash, SidtabEra::HashString}) {
        auto locking = std::make_shared<Counting>();
        Sidtab old(0, era, locking), fresh(0, era, locking);
        ASSERT_EQ(old.set_initial(SECINITSID_UNLABELED, ctx(1, 0)), 0);
        ASSERT_EQ(fresh.set_initial(SECINITSID_UNLABELED, ctx(1, 0)), 0);
        for (uint32_t i = 0; i < 200; ++i)
            insert(old, ctx(100 + i, 5));
        WorkCounts all;
        {
            WorkMeterScope s(&all);
            ASSERT_EQ(old.convert(fresh,
                                  [](const Context &o, Context &n) {
                                      n = o;
                                      return 0;
                                  }),
                      0);
        }
        if (era == SidtabEra::HashString) {
            EXPECT_EQ(locking->inside[Work::StringByte], 0u);  // only links under the lock
            EXPECT_GE(all[Work::StringByte],
                      200u * (kContextNamesBytes + std::string_view(":s0-s0:c0.c4").size()));
        } else {
            EXPECT_EQ(all[Work::StringByte], 0u);
        }
        uint32_t sid = 0;
        ASSERT_EQ(fresh.context_to_sid(ctx(150, 5), &sid), 0);
        EXPECT_EQ(sid, old.lookup(ctx(150, 5), old.era_hash(ctx(150, 5))));
    }
}

}  // namespace
}  // namespace locksim::ss
