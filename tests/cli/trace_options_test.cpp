// The `--trace*` options of `locksim run` (cli/trace_options.h): parsed into the simulator's
// trace options, and the windows that hold nothing refused.
#include "cli/trace_options.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "util/error.h"

using namespace locksim;
using kernel::kMsec;
using sim::TraceOptions;

namespace {

TEST(TraceOptions, CommandLineOptions) {
    CLI::App app;
    cli::TraceArgs args;
    cli::add_trace_options(&app, args);
    app.parse(std::vector<std::string>{"50000", "--trace-max-events", "3ms", "--trace-to", "2ms",
                                       "--trace-from", "t.json", "--trace"});
    EXPECT_EQ(args.path, "t.json");
    TraceOptions o = cli::trace_options(args, 10 * kMsec);
    EXPECT_EQ(o.from, 2 * kMsec);
    EXPECT_EQ(o.to, 3 * kMsec);
    EXPECT_EQ(o.max_events, 50000u);
    // A window after the run's end, or empty, holds nothing: refused.
    EXPECT_THROW(cli::trace_options(args, 2 * kMsec), UserError);
    args.to = "1ms";
    EXPECT_THROW(cli::trace_options(args, 10 * kMsec), UserError);
    args.to = "soon";
    EXPECT_THROW(cli::trace_options(args, 10 * kMsec), UserError);
}

TEST(TraceOptions, WorstWakeupOption) {
    CLI::App app;
    cli::TraceArgs args;
    cli::add_trace_options(&app, args);
    app.parse(std::vector<std::string>{"1ms", "--trace-worst-wakeup", "t.json", "--trace"});
    EXPECT_EQ(cli::trace_options(args, 10 * kMsec).worst_wakeup_margin, 1 * kMsec);
    args.worst_wakeup = "0ms";
    EXPECT_THROW(cli::trace_options(args, 10 * kMsec), UserError);
    args.worst_wakeup = "1ms";
    args.from = "2ms";  // the option chooses the window itself
    EXPECT_THROW(cli::trace_options(args, 10 * kMsec), UserError);
}

}  // namespace
