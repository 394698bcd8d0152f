// The periodic sources of a scenario and the note on those that keep their phase to the probe.
#include <gtest/gtest.h>

#include <string>

#include "scenario/phases.h"
#include "scenario/scenario.h"

using namespace locksim;

namespace {

Scenario with(const std::string &workloads) {
    return parse_scenario(
        "strategies = [\"rwlock\"]\nduration = \"1s\"\nwarmup = \"20ms\"\n" + workloads, "t.toml");
}

const char *kProbe = "[[workload]]\nkind = \"probe\"\nperiod = \"1333us\"\n";

}  // namespace

// 20 ms is 15 probe periods and 5 us: over the measured 980 ms the creations move 240 us along
// the probe's 1.333 ms, with their 50 us of jitter 290 us: 6 of its 26 bins of 51 us. At 47 a
// second they move 51 us a time and meet every bin.
TEST(Phases, NearlyCommensuratePeriodsAreNoted) {
    const Scenario in_step =
        with(std::string(kProbe) + "[[workload]]\nkind = \"new_contexts\"\nrate = 50\n");
    const auto sources = periodic_sources(in_step);
    ASSERT_EQ(sources.size(), 2u);
    const PhaseCover c = phase_cover(sources[0], sources[1], 980'000'000);
    EXPECT_EQ(c.bins, 26);
    EXPECT_EQ(c.possible, 26);
    EXPECT_EQ(c.visited, 6);
    EXPECT_EQ(phase_lock_note(in_step),
              "periods in step over the run: new_contexts every 20ms and probe every 1.33ms meet "
              "at 6 of 26 relative phases; the seed draws where they meet: run several seeds to "
              "explore the alignments");
    const Scenario apart =
        with(std::string(kProbe) + "[[workload]]\nkind = \"new_contexts\"\nrate = 47\n");
    EXPECT_EQ(phase_lock_note(apart), "");
}

// An exact multiple (100 probe periods) meets at one phase; a period that is not one (7 ms) meets
// most. Interrupts at nearly the probe's period drift 333 ns a period: in step too, unless their
// jitter spreads them over the period.
TEST(Phases, ExactMultiplesAndInterrupts) {
    const Scenario s = with(std::string(kProbe) +
                            "[[workload]]\nkind = \"setsebool\"\nperiod = \"133.3ms\"\n"
                            "[[workload]]\nkind = \"login\"\nperiod = \"7ms\"\nsched = \"fifo\"\n");
    const std::string note = phase_lock_note(s);
    EXPECT_NE(note.find("setsebool every 133ms and probe every 1.33ms meet at 1 of 7"),
              std::string::npos)
        << note;
    EXPECT_EQ(note.find("login"), std::string::npos) << note;
    const char *irq = "[[machine.irq]]\nkind = \"timer\"\nrate = 750\nhandler = \"1us\"\n";
    EXPECT_NE(phase_lock_note(with(std::string(irq) + kProbe)).find("irq timer every 1.33ms"),
              std::string::npos);
    const Scenario jittered = with(std::string(irq) + "jitter = \"700us\"\n" + kProbe);
    EXPECT_EQ(phase_lock_note(jittered), "");
}

// A SCHED_OTHER task's timer has the kernel's default slack; a real-time one none, unless the
// scenario gives a jitter; random setsebool commits are not periodic.
TEST(Phases, JitterDefaultsFollowTheSchedulingPolicy) {
    const Scenario s = with(
        "[[workload]]\nkind = \"login\"\n"
        "[[workload]]\nkind = \"login\"\nlabel = \"rt\"\nsched = \"fifo\"\n"
        "[[workload]]\nkind = \"login\"\nlabel = \"rtj\"\nsched = \"fifo\"\njitter = \"3us\"\n"
        "[[workload]]\nkind = \"setsebool\"\nmode = \"random\"\n" +
        std::string(kProbe));
    const auto sources = periodic_sources(s);
    ASSERT_EQ(sources.size(), 4u);
    EXPECT_EQ(sources[0].jitter_ns, 50'000);
    EXPECT_EQ(sources[1].jitter_ns, 0);
    EXPECT_EQ(sources[2].jitter_ns, 3'000);
    EXPECT_EQ(sources[3].name, "probe");
    EXPECT_EQ(sources[3].jitter_ns, 0);
    EXPECT_TRUE(sources[3].probe);
}
