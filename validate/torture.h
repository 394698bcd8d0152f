// A torture test of a lock strategy, after the kernel's rcutorture, written against kernel/ and
// SecurityServer so that it runs on either platform (its point is the real one).
//
// Readers run access decisions in the strategy's read-side section and check each against the
// generation (policy seqno) they read: a writer commits boolean states in a fixed alternation,
// so the decisions every generation must give are computed once, single-threaded, before the
// run. A decision that does not belong to the generation read, or a generation that changed
// under a reader, counts as a mixed read. At the end of each read section the reader records how
// many generations have been committed since the one it holds (the "reader pipe", as
// rcutorture's pipe counts grace periods since an element was removed). Freed policies are
// caught by the platform's self-checks (RealConfig::checks: rcu_free_in_use) and by the
// sanitizers; a run fails on any mixed read or any such violation.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "kernel/platform.h"
#include "record/run_results.h"
#include "scenario/scenario.h"
#include "strategies/security_server.h"

namespace locksim {

struct TortureConfig {
    // What a read section does: access decisions (checked against the generation read), or
    // context_to_sid of a context made before the run (checked against its SID).
    ValidateRead read = ValidateRead::Decisions;
    size_t sids = 0;  // Contexts: the contexts made before the run (MCS category pairs)
    int readers = 2;
    kernel::Time writer_period = 200 * kernel::kUsec;  // between two commits
    kernel::Time reader_hold = 20 * kernel::kUsec;     // busy time inside each read section
    size_t queries = 8;                                // decisions checked per read section
    // Decisions to draw them from (at random, per section); 0: the same `queries` every time.
    // A large pool keeps the reader's data out of the cache, as the kernel's AVC misses are.
    size_t pool = 0;
};

struct TortureStats {
    static constexpr size_t kPipe = 10;  // the last bucket counts ages of 9 and more
    uint64_t reads = 0;
    uint64_t decisions = 0;
    uint64_t mixed = 0;  // decisions of another generation, or a generation changed under a read
    uint64_t wrong_sids = 0;  // Contexts: a lookup that failed or gave another SID
    uint64_t commits = 0;
    std::array<uint64_t, kPipe> pipe{};
    size_t freed = 0;  // platform reports of a free under a reader (filled by finish())
    std::vector<std::string> failures;  // what failed, for the report

    bool failed() const { return !failures.empty(); }
    std::string pipe_text() const;  // "pipe: 120 15 0 0 ..."
};

// An access decision (source SID, target SID, class).
struct TortureQuery {
    uint32_t ssid, tsid, tclass;
};

// Up to `max` access decisions of `st` that differ between all booleans on and all off, from
// the conditional rules with system_u:system_r / object_r contexts (what the torture readers
// check, and what `calibrate` times for `validate`). `on` and `off` receive the two states.
std::vector<TortureQuery> boolean_dependent_queries(const ss::PolicyState &st, size_t max,
                                                    ss::PolicyState *on, ss::PolicyState *off);

class Torture {
  public:
    // Picks boolean-dependent queries and computes every generation's decisions on the server's
    // setup state (no task may be running). Throws UserError when the policy has no booleans.
    Torture(SecurityServer &server, TortureConfig cfg);

    // The readers and the writer, on the current platform.
    void create_tasks();
    // The counts, with the run's violations folded in; call after the run.
    TortureStats finish(const kernel::RunResults &results) const;

    size_t query_count() const { return queries_.size(); }

  private:
    using Query = TortureQuery;
    // Expected decision of query q at generation `seqno`.
    const ss::AvDecision &expected(uint32_t seqno, size_t q) const;
    void reader(int index);
    void context_reader();
    void writer();

    SecurityServer &server_;
    TortureConfig cfg_;
    uint32_t nbools_ = 0;
    uint32_t seq0_ = 0;  // the setup state's generation
    std::vector<Query> queries_;
    // [0]: the setup state's booleans; [1]: all on (odd commits); [2]: all off (even commits).
    std::array<std::vector<ss::AvDecision>, 3> expect_;
    std::atomic<uint32_t> latest_{0};
    // Contexts: each made before the run, with its SID.
    std::vector<std::pair<std::string, uint32_t>> contexts_;
    std::atomic<uint64_t> reads_{0}, decisions_{0}, mixed_{0}, commits_{0}, wrong_sids_{0};
    std::array<std::atomic<uint64_t>, TortureStats::kPipe> pipe_{};
};

}  // namespace locksim
