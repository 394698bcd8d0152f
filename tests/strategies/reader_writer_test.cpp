// The designs written over ReaderWriterServer (strategies/reader_writer.h) keep their lock calls
// in their own file: the sections a run records name that file, so a reader of the results
// learns which design took the lock.
#include <gtest/gtest.h>

#include <string>

#include "strategy_test_util.h"

namespace locksim::strategies::test {
namespace {

// Whether `site` ("read_lock @ rwlock.cpp:38") is `call` in `file`.
bool is_call_in(const std::string &site, const std::string &call, const std::string &file) {
    return site.rfind(call + " @ " + file + ":", 0) == 0;
}

TEST(ReaderWriter, SectionsNameTheDesignsFile) {
    CoreConfig core;
    kernel::RunResults r =
        run_toggles([&] { return make_security_server("rwlock", {}, fixture_state(core), core); });
    EXPECT_TRUE(r.violations.empty()) << violations_text(r);
    bool reader = false, writer = false;
    for (const auto *stats : {&r.preempt_off, &r.irqs_off})
        for (const kernel::AtomicInterval &iv : stats->longest) {
            EXPECT_EQ(iv.start_site.find("reader_writer.h"), std::string::npos) << iv.start_site;
            EXPECT_EQ(iv.end_site.find("reader_writer.h"), std::string::npos) << iv.end_site;
            reader = reader || (is_call_in(iv.start_site, "read_lock", "rwlock.cpp") &&
                                is_call_in(iv.end_site, "read_unlock", "rwlock.cpp"));
            writer = writer || (is_call_in(iv.start_site, "write_lock_irq", "rwlock.cpp") &&
                                is_call_in(iv.end_site, "write_unlock_irq", "rwlock.cpp"));
        }
    EXPECT_TRUE(reader) << "a reader's preempt-off section from read_lock to read_unlock";
    EXPECT_TRUE(writer) << "a commit's irqs-off section from write_lock_irq to write_unlock_irq";
}

}  // namespace
}  // namespace locksim::strategies::test
