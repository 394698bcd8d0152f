// A host-side memo of the TE-rule searches of context_struct_compute_av, for the simulator's
// counted cost model only.
//
// The kernel searches both avtabs for every (attribute of the source type, attribute of the
// target type) pair on every AVC miss. Under the counted cost model the simulated time of that
// work comes from the units counted, not from the host's time, so the host can do the searches
// once per (source type, target type, class) and table generation, and replay them: the memo
// keeps the work counted by the searches (charged again, unit for unit, on every replay), what
// the unconditional rules grant, and the conditional nodes found, whose ENABLED bit is read
// again at each replay (a boolean change flips it in place). Entries belong to a pair of table
// layouts (Avtab::layout): a table whose nodes change gets a new one, and a copy that repeats
// its original node for node (a duplicated conditional table, a policy written and read back)
// shares the original's, so the entries made before a boolean commit serve after it; the
// conditional nodes are kept by position and found again in the table at hand. Where the
// caller records the lines it reads (the cache model names them after the table's generation)
// entries belong to a pair of generations instead.
//
// The simulated decision and its charged cost are those of the full search; only the host's
// work is saved. Nothing installs a memo where host time is what is measured (the real-thread
// platform, the measured cost model), so there the searches run every time, as in the kernel.
// A memo belongs to one thread (a simulation runs on one host thread).
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "ss/avtab.h"
#include "util/line_set.h"
#include "util/work_meter.h"

namespace locksim::ss {

class TeRulesMemo {
  public:
    struct Entry {
        WorkCounts work;  // counted by the searches
        uint32_t allowed = 0;
        uint32_t auditallow = 0;
        uint32_t auditdeny = 0xffffffff;
        // Conditional nodes found, in search order, by their place in the conditional table.
        std::vector<Avtab::Position> cond;
    };

    // The entries for one pair of tables: by layouts, or by generations where `lines` (the
    // caller records lines).
    std::unordered_map<uint64_t, Entry> &table(const Avtab &te, const Avtab &cond, bool lines) {
        const uint32_t te_id = lines ? te.generation() : te.layout();
        const uint32_t cond_id = lines ? cond.generation() : cond.layout();
        for (Generation &g : gens_)
            if (g.te == te_id && g.cond == cond_id && g.lines == lines) return g.entries;
        // A pair not seen: replace the oldest (policies in use at once are few: the current
        // one and those readers still hold across a change).
        Generation &g = gens_[next_++ % gens_.size()];
        g.te = te_id;
        g.cond = cond_id;
        g.lines = lines;
        g.entries.clear();
        return g.entries;
    }
    // Entries made so far (searches done), for the tests.
    uint64_t filled() const { return filled_; }
    void note_filled() { ++filled_; }

    // Scratch space for a new entry's lines: all it reads, and the set that counts the distinct.
    struct LineScratch {
        std::vector<uint64_t> lines;
        LineSet seen;
    };
    LineScratch &line_scratch() { return lines_; }

    static uint64_t key(uint32_t stype, uint32_t ttype, uint32_t tclass) {
        return (uint64_t{stype} << 32) | (uint64_t{ttype} << 16) | tclass;
    }

  private:
    struct Generation {
        uint32_t te = 0;
        uint32_t cond = 0;
        bool lines = false;
        std::unordered_map<uint64_t, Entry> entries;
    };
    std::array<Generation, 4> gens_;
    uint64_t next_ = 0;
    uint64_t filled_ = 0;
    LineScratch lines_;
};

// Installs a memo as this thread's for the scope's lifetime (nesting restores).
using TeRulesMemoScope = ThreadSlotScope<TeRulesMemo>;

}  // namespace locksim::ss
