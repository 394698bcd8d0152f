// The read/write hook from security_file_permission down (strategies/file_hook.h): its own work
// in each form, on the simulator with hand-set prices, and the checks it makes.
#include <gtest/gtest.h>

#include <utility>
#include <vector>

#include "sim/sim_platform.h"
#include "strategies/file_hook.h"

namespace locksim::strategies {
namespace {

struct HookRun {
    kernel::Time hook_ns = 0;                           // charged to the label "file_permission"
    std::vector<std::pair<uint32_t, uint32_t>> checks;  // (tsid, tclass) of each AVC check
};

// A call costs 1000 ns, a pointer followed 10 ns, a byte cleared 1 ns.
HookRun run_hook(FileHook hook, const FileCheck &f) {
    sim::SimConfig cfg;
    cfg.cpus = 1;
    cfg.duration = kernel::kMsec;
    cfg.profile.work_ps[static_cast<size_t>(Work::Call)] = 1'000'000;
    cfg.profile.work_ps[static_cast<size_t>(Work::BitIteration)] = 10'000;
    cfg.profile.work_ps[static_cast<size_t>(Work::BytesCopied)] = 1'000;
    sim::SimPlatform sim(cfg);
    HookRun out;
    sim.create_task({"reader", kernel::Sched::Other, 0, 0, false}, [&] {
        EXPECT_EQ(selinux_file_permission(hook, f,
                                          [&](uint32_t, uint32_t tsid, uint32_t tclass, uint32_t) {
                                              out.checks.emplace_back(tsid, tclass);
                                              return 0;
                                          }),
                  0);
    });
    kernel::RunResults r = sim.run();
    auto it = r.compute_ns.find("file_permission");
    out.hook_ns = it == r.compute_ns.end() ? 0 : it->second;
    return out;
}

TEST(FileHook, NestedCostsTheCallsTheFlatFormRemoved) {
    const FileCheck own{
        .tsid = 1, .fsid = 1, .isid = 7, .tclass = 6, .av = 3, .fd_class = 9, .fd_use = 1};
    // Nested: the hook, file_has_perm, inode_has_perm, the call into avc_has_perm; six pointers
    // (current->security twice) and the 56-byte audit data.
    EXPECT_EQ(run_hook(FileHook::Nested, own).hook_ns, 4 * 1000 + 6 * 10 + 56);
    // Flat: the hook and the call into avc_has_perm; five pointers and the audit data.
    EXPECT_EQ(run_hook(FileHook::Flat, own).hook_ns, 2 * 1000 + 5 * 10 + 56);
    EXPECT_EQ(run_hook(FileHook::None, own).hook_ns, 0);
    for (FileHook h : {FileHook::None, FileHook::Nested, FileHook::Flat})
        EXPECT_EQ(run_hook(h, own).checks, (std::vector<std::pair<uint32_t, uint32_t>>{{7, 6}}));
}

TEST(FileHook, AFileOpenedByAnotherDomainIsCheckedForDescriptorUseFirst) {
    const FileCheck other{
        .tsid = 1, .fsid = 2, .isid = 7, .tclass = 6, .av = 3, .fd_class = 9, .fd_use = 1};
    for (FileHook h : {FileHook::Nested, FileHook::Flat})
        EXPECT_EQ(run_hook(h, other).checks,
                  (std::vector<std::pair<uint32_t, uint32_t>>{{2, 9}, {7, 6}}));
}

}  // namespace
}  // namespace locksim::strategies
