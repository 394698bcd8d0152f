// Security contexts as strings, the way the kernel reads and writes them:
// `user:role:type` followed on an MLS policy by `:low[-high]`, each level `sens[:cats]` with
// cats a comma-separated list of names and `first.last` ranges (string_to_context_struct,
// mls_context_to_sid, context_struct_to_string, mls_sid_to_context).
#pragma once

#include <string>
#include <string_view>

#include "ss/context.h"
#include "ss/policydb.h"
#include "util/work_meter.h"

namespace locksim::ss {

// The MLS part of a context's text (`:s0-s0:c0.c1023`, with its leading ':') as the kernel's
// context_struct_to_string makes it (v4.15.1 - v6.6.0 mls.c): mls_compute_context_len sizes it
// for the allocation, then mls_sid_to_context writes it, and each visits every set category bit
// (ebitmap_for_each_positive_bit: the range form proposed in 2019 was not merged), a
// BitIteration per bit and pass (counted by the bit iterator). `sens(s)` names sensitivity value s,
// `cat(bit)` category bit `bit`; both return something with size() that a std::string can append.
template <class Sens, class Cat>
size_t mls_text_length(const MlsRange &r, Sens &&sens, Cat &&cat) {
    size_t n = 0;
    auto level = [&](const MlsLevel &l) {
        n += 1 + sens(l.sens).size();  // ':' or '-', then the sensitivity
        ebitmap_for_each_run(l.cat, [&](uint32_t a, uint32_t b) {
            n += 1 + cat(a).size() + (b != a ? 1 + cat(b).size() : 0);
        });
    };
    level(r.level[0]);
    if (!mls_level_eq(r.level[0], r.level[1])) level(r.level[1]);
    return n;
}

template <class Sens, class Cat>
void append_mls_text(const MlsRange &r, Sens &&sens, Cat &&cat, std::string &out) {
    auto level = [&](const MlsLevel &l) {
        out += sens(l.sens);
        // Runs of set bits: one name, `a,b` for a pair, `a.b` for three or more.
        bool first = true;
        ebitmap_for_each_run(l.cat, [&](uint32_t a, uint32_t b) {
            out += first ? ':' : ',';
            first = false;
            out += cat(a);
            if (b != a) {
                out += b - a > 1 ? '.' : ',';
                out += cat(b);
            }
        });
    };
    out += ':';
    level(r.level[0]);
    if (mls_level_eq(r.level[0], r.level[1])) return;
    out += '-';
    level(r.level[1]);
}

// Looks every name up in `p` and fills `c`; no authorisation checks. Stops at an embedded NUL
// as the kernel's copy does. 0, or -EINVAL for any malformed or unknown part (an MLS field on a
// non-MLS policy, a missing one on an MLS policy, an attribute as the type, a reversed category
// range).
int context_parse(const PolicyBase &p, std::string_view str, Context &c);

// context_parse followed by policydb_context_isvalid: 0 or -EINVAL.
int string_to_context(const PolicyBase &p, std::string_view str, Context &c,
                      LevelCheck how = LevelCheck::Contains);

// The kernel's text form (categories: `c0,c1` for two in a row, `c0.c3` for three or more).
// An invalid context kept by its string prints that string.
std::string context_to_string(const PolicyBase &p, const Context &c);
void context_to_string_append(const PolicyBase &p, const Context &c, std::string &out);

// The MLS part alone (`s0-s1:c0.c3`), empty for a non-MLS policy.
std::string mls_to_string(const PolicyBase &p, const MlsRange &r);

}  // namespace locksim::ss
