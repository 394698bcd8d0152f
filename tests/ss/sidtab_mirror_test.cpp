// 5.10.0-5.10.29 publish a load without freezing the old SID table: the old table goes on
// mirroring its inserts into the new one, which by then adds SIDs of its own. Where both claim a
// SID, the new table keeps its entry and the collision is counted where every table of the
// server sees it (its SidtabLocking); with the freeze, the old table refuses the insert instead.
#include <gtest/gtest.h>

#include <cerrno>

#include "sidtab_test_util.h"
#include "ss/sidtab.h"

namespace locksim::ss {
namespace {

TEST(SidtabMirror, WithoutTheFreezeACollisionIsCountedAndTheNewEntryKept) {
    for (bool freeze : {false, true}) {
        SCOPED_TRACE(freeze ? "freeze" : "no freeze");
        Sidtab old(0, SidtabEra::Hash);
        Sidtab fresh(0, SidtabEra::Hash, old.locking());
        for (Sidtab *t : {&old, &fresh})
            ASSERT_EQ(t->set_initial(SECINITSID_UNLABELED, testing::typed_context(1)), 0);
        uint32_t sid = 0;
        for (uint32_t i = 0; i < 5; ++i)
            ASSERT_EQ(old.context_to_sid(testing::typed_context(100 + i), &sid), 0);
        ASSERT_EQ(old.convert(fresh,
                              [](const Context &o, Context &n) {
                                  n = o;
                                  return 0;
                              }),
                  0);
        if (freeze) old.freeze();
        // Published: the new table adds a SID of its own.
        uint32_t mine = 0;
        ASSERT_EQ(fresh.context_to_sid(testing::typed_context(200), &mine), 0);
        EXPECT_EQ(mine, sid + 1);
        // A reader still on the old policy adds another context: the same next SID.
        uint32_t theirs = 0;
        const int rc = old.context_to_sid(testing::typed_context(300), &theirs);
        if (freeze) {
            EXPECT_EQ(rc, -ESTALE);
            EXPECT_EQ(old.locking()->mirror_collisions(), 0u);
        } else {
            EXPECT_EQ(rc, 0);
            EXPECT_EQ(theirs, mine);
            EXPECT_EQ(old.locking()->mirror_collisions(), 1u);
            EXPECT_EQ(fresh.locking()->mirror_collisions(), 1u);  // one count for the server
        }
        EXPECT_EQ(fresh.search(mine)->type, 200u);  // the new table's entry stands
    }
}

}  // namespace
}  // namespace locksim::ss
