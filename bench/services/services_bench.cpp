// Security-server service costs on the Debian default policy:
//   ComputeAv/{ours,libsepol}          the same 4096 (source, target, class) queries, mostly aimed
//                                      at allow rules; ComputeAv/ours_metered with a work meter
//                                      installed (bench_services_nometer: compiled out)
//   AvcHit/{needed,always}/{inline,outofline}   avc_has_perm on cached entries
//   SidToContext/{cats1024,cats512}/{cache,nocache}   sid_to_context, cache on vs off
//   GetUserSids/{candidates,full}      unconfined_u from unconfined_t
//   SetBools/{full_copy,cond_dup,in_place}/{1,10}   security_set_bools of 1 and 10 booleans
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "sepol_oracle.h"
#include "ss/avc.h"
#include "ss/avtab.h"
#include "ss/context_string.h"
#include "ss/services.h"
#include "util/work_meter.h"

namespace {

using namespace locksim::ss;
using locksim::Work;
using locksim::WorkCounts;
using locksim::WorkMeterScope;

std::string policy_path() {
    return std::string(LOCKSIM_POLICY_DIR) + "/default.policy.33";
}

PolicyState &state() {
    static PolicyState st = policy_state_create(policydb_read_file(policy_path()));
    return st;
}

struct Query {
    uint32_t ssid, tsid, tclass;
    unsigned sepol_ssid, sepol_tsid;
};

// Queries built from allow rules (a member type of each side) plus some random pairs; the same
// contexts get SIDs on both sides.
const std::vector<Query> &queries() {
    static const std::vector<Query> q = [] {
        PolicyState &st = state();
        const PolicyBase &p = st.p();
        if (so_load(policy_path().c_str())) throw std::runtime_error("libsepol load");
        std::mt19937_64 rng(42);
        std::vector<AvtabKey> rules;
        p.te_avtab.for_each([&](const AvtabNode &n) {
            if (n.key.specified == AVTAB_ALLOWED) rules.push_back(n.key);
        });
        auto member = [&](uint32_t v) -> uint32_t {
            if (!p.types.by_value(v)->attribute) return v;
            std::vector<uint32_t> m;
            for (uint32_t b : p.attr_type_map[v - 1].bits())
                if (!p.types.by_value(b + 1)->attribute) m.push_back(b + 1);
            return m.empty() ? 0 : m[rng() % m.size()];
        };
        auto context_for = [&](uint32_t type, bool subject) -> std::string {
            std::string t(p.types.name_of(type));
            return subject ? "system_u:system_r:" + t + ":s0" : "system_u:object_r:" + t + ":s0";
        };
        std::vector<Query> out;
        while (out.size() < 4096) {
            const AvtabKey &k = rules[rng() % rules.size()];
            uint32_t s = member(k.source_type), t = member(k.target_type);
            if (!s || !t) continue;
            std::string sc = context_for(s, true), tc = context_for(t, false);
            Query qq{};
            qq.tclass = k.target_class;
            if (out.size() % 4 == 3) qq.tclass = 1 + rng() % p.classes.nprim;
            // Types a role does not have fall back to object contexts for the source too.
            if (context_to_sid(st, sc, &qq.ssid)) sc = context_for(s, false);
            if (context_to_sid(st, sc, &qq.ssid) || context_to_sid(st, tc, &qq.tsid)) continue;
            qq.sepol_ssid = so_sid(sc.c_str());
            qq.sepol_tsid = so_sid(tc.c_str());
            if (!qq.sepol_ssid || !qq.sepol_tsid) continue;
            out.push_back(qq);
        }
        return out;
    }();
    return q;
}

void BM_ComputeAvOurs(benchmark::State &s) {
    const auto &q = queries();
    PolicyState &st = state();
    WorkCounts counts;
    std::unique_ptr<WorkMeterScope> scope;
    if (s.range(0)) scope = std::make_unique<WorkMeterScope>(&counts);
    size_t i = 0;
    for (auto _ : s) {
        const Query &x = q[i++ & 4095];
        AvDecision avd;
        compute_av(st, x.ssid, x.tsid, x.tclass, &avd);
        benchmark::DoNotOptimize(avd.allowed);
    }
}
BENCHMARK(BM_ComputeAvOurs)->Name("ComputeAv/ours")->Arg(0);
BENCHMARK(BM_ComputeAvOurs)->Name("ComputeAv/ours_metered")->Arg(1);

void BM_ComputeAvSepol(benchmark::State &s) {
    const auto &q = queries();
    size_t i = 0;
    for (auto _ : s) {
        const Query &x = q[i++ & 4095];
        unsigned a, aa, ad;
        so_compute_av_sid(x.sepol_ssid, x.sepol_tsid, x.tclass, &a, &aa, &ad);
        benchmark::DoNotOptimize(a);
    }
}
BENCHMARK(BM_ComputeAvSepol)->Name("ComputeAv/libsepol");

void BM_AvcHit(benchmark::State &s) {
    const auto &q = queries();
    PolicyState &st = state();
    AvcConfig cfg;
    cfg.audit = s.range(0) ? AvcAudit::Always : AvcAudit::Needed;
    cfg.path = s.range(1) ? AvcPath::OutOfLine : AvcPath::Inline;
    AvcCache avc;
    // 256 keys whose read check is allowed, all cached (under the 512 threshold).
    std::vector<std::pair<const Query *, uint32_t>> keys;
    for (const Query &x : q) {
        AvDecision d;
        compute_av(st, x.ssid, x.tsid, x.tclass, &d);
        if (d.allowed) keys.emplace_back(&x, d.allowed & -d.allowed);
        if (keys.size() == 256) break;
    }
    for (auto &[x, perm] : keys)
        avc_has_perm(avc, st, x->ssid, x->tsid, x->tclass, perm, cfg);
    size_t i = 0;
    for (auto _ : s) {
        auto &[x, perm] = keys[i++ & 255];
        benchmark::DoNotOptimize(avc_has_perm(avc, st, x->ssid, x->tsid, x->tclass, perm, cfg));
    }
    s.counters["misses"] = static_cast<double>(avc.stats.misses);
}
BENCHMARK(BM_AvcHit)->Name("AvcHit/needed/inline")->Args({0, 0});
BENCHMARK(BM_AvcHit)->Name("AvcHit/always/inline")->Args({1, 0});
BENCHMARK(BM_AvcHit)->Name("AvcHit/needed/outofline")->Args({0, 1});
BENCHMARK(BM_AvcHit)->Name("AvcHit/always/outofline")->Args({1, 1});

void BM_SidToContext(benchmark::State &s) {
    PolicyState st = policy_state_create(policydb_read_file(policy_path()), s.range(1) ? 256 : 0);
    std::string con = "unconfined_u:unconfined_r:unconfined_t:s0-s0:";
    if (s.range(0) == 1024) {
        con += "c0.c1023";
    } else {
        for (int c = 0; c < 1024; c += 2)
            con += (c ? ",c" : "c") + std::to_string(c);
    }
    uint32_t sid;
    if (context_to_sid(st, con, &sid)) {
        s.SkipWithError("context rejected");
        return;
    }
    std::string out;
    for (auto _ : s) {
        sid_to_context(st, sid, &out);
        benchmark::DoNotOptimize(out.data());
    }
    s.counters["bytes"] = static_cast<double>(out.size());
}
BENCHMARK(BM_SidToContext)->Name("SidToContext/cats1024/cache")->Args({1024, 1});
BENCHMARK(BM_SidToContext)->Name("SidToContext/cats1024/nocache")->Args({1024, 0});
BENCHMARK(BM_SidToContext)->Name("SidToContext/cats512/cache")->Args({512, 1});
BENCHMARK(BM_SidToContext)->Name("SidToContext/cats512/nocache")->Args({512, 0});

void BM_GetUserSids(benchmark::State &s) {
    PolicyState &st = state();
    uint32_t from;
    context_to_sid(st, "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023", &from);
    std::vector<uint32_t> sids;
    for (auto _ : s) {
        if (s.range(0))
            get_user_sids(st, from, "unconfined_u", &sids);
        else
            get_user_sids_candidates(st, from, "unconfined_u", &sids);
        benchmark::DoNotOptimize(sids.data());
    }
    s.counters["sids"] = static_cast<double>(sids.size());
}
BENCHMARK(BM_GetUserSids)->Name("GetUserSids/candidates")->Arg(0)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GetUserSids)->Name("GetUserSids/full")->Arg(1)->Unit(benchmark::kMicrosecond);

// set_bools of n booleans (the first n flipped each iteration), three ways.
void BM_SetBools(benchmark::State &s) {
    PolicyState st = policy_state_create(policydb_read_file(policy_path()));
    int how = static_cast<int>(s.range(0));
    int n = static_cast<int>(s.range(1));
    std::vector<int> values = get_bools(st);
    WorkCounts counts;
    WorkMeterScope scope(&counts);
    for (auto _ : s) {
        for (int i = 0; i < n; ++i)
            values[i * 7 % values.size()] ^= 1;
        PolicyState next;
        if (how == 0)
            set_bools_full_copy(st, values, &next);
        else if (how == 1)
            set_bools_cond_dup(st, values, &next);
        else
            set_bools_inplace(st, values);
        if (how != 2) st = std::move(next);
    }
    s.counters["allocs"] = benchmark::Counter(static_cast<double>(counts[Work::Alloc]),
                                              benchmark::Counter::kAvgIterations);
    s.counters["avtab_nodes"] = benchmark::Counter(static_cast<double>(counts[Work::AvtabNode]),
                                                   benchmark::Counter::kAvgIterations);
    s.counters["bytes_copied"] = benchmark::Counter(static_cast<double>(counts[Work::BytesCopied]),
                                                    benchmark::Counter::kAvgIterations);
}
BENCHMARK(BM_SetBools)->Name("SetBools/full_copy/1")->Args({0, 1})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SetBools)->Name("SetBools/full_copy/10")->Args({0, 10})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SetBools)->Name("SetBools/cond_dup/1")->Args({1, 1})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SetBools)->Name("SetBools/cond_dup/10")->Args({1, 10})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SetBools)->Name("SetBools/in_place/1")->Args({2, 1})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SetBools)->Name("SetBools/in_place/10")->Args({2, 10})->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
