// Shared pieces of the services tests: where the policies are, and deterministic generators of
// contexts (valid ones of every user/role/type, object contexts, and invalid ones of each kind).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "ss/context_string.h"
#include "ss/policydb.h"
#include "ss/services.h"

namespace locksim::ss::test {

inline std::string debian_policy(const std::string &flavour) {
    return std::string(LOCKSIM_POLICY_DIR) + "/" + flavour + ".policy.33";
}

inline std::string fixture_policy([[maybe_unused]] const std::string &name) {
#ifdef LOCKSIM_FIXTURE_DIR
    return std::string(LOCKSIM_FIXTURE_DIR) + "/" + name;
#else
    return {};
#endif
}

// The paths of policies that must be there: a missing one fails the calling test, naming it
// (the build makes every fixture; a test that quietly ran on fewer would hide it).
inline std::vector<std::string> required_policies(const std::vector<std::string> &paths) {
    std::vector<std::string> out;
    for (const std::string &path : paths) {
        if (path.empty() || !std::filesystem::exists(path)) {
            ADD_FAILURE() << "missing policy: '" << path
                          << "' (the build's target policy_fixtures makes the fixtures)";
            continue;
        }
        out.push_back(path);
    }
    return out;
}

// The policies the oracle tests run on: the Debian builds and the compiled fixtures.
inline std::vector<std::string> oracle_policies() {
    std::vector<std::string> paths = {debian_policy("default"), debian_policy("mls")};
    for (const char *f : {"basic.33", "mls.33", "bounds.33", "cond.33", "cond.24", "minimal.33"})
        paths.push_back(fixture_policy(f));
    return required_policies(paths);
}

// Policies generated from random sources (tests/fixtures/random_policy.py), MLS or not.
inline std::vector<std::string> random_policies(bool mls) {
    std::vector<std::string> paths;
    if (mls)
        for (const char *f : {"rand_m11.33", "rand_m13.33", "rand_m15.33", "rand_mx9.30"})
            paths.push_back(fixture_policy(f));
    else
        for (const char *f : {"rand_r1.33", "rand_r3.31", "rand_r5.33", "rand_x7.33"})
            paths.push_back(fixture_policy(f));
    return required_policies(paths);
}

// libsepol 3.4 prints a category run wrongly when a 64-bit word ends with a set bit and the next
// non-empty word is not adjacent (its bitmap walk jumps over the gap). True for such a set.
inline bool sepol_render_quirk(const Ebitmap &cats) {
    std::vector<uint32_t> words;  // indexes of non-zero 64-bit words
    for (uint32_t bit : cats.bits())
        if (words.empty() || words.back() != bit / 64) words.push_back(bit / 64);
    for (size_t i = 0; i + 1 < words.size(); ++i)
        if (words[i + 1] > words[i] + 1 && cats.get_bit(words[i] * 64 + 63)) return true;
    return false;
}
inline bool sepol_render_quirk(const Context &c) {
    return sepol_render_quirk(c.range.level[0].cat) || sepol_render_quirk(c.range.level[1].cat);
}

// Deterministic context generator for one policy.
class ContextGen {
  public:
    ContextGen(const PolicyBase &p, uint64_t seed) : p_(p), rng_(seed) {
        for (uint32_t t = 1; t <= p.types.nprim; ++t) {
            const TypeDatum *d = p.types.by_value(t);
            if (d && !d->attribute) types_.push_back(t);
        }
    }

    // Leave out category sets that libsepol prints wrongly (for tests that compare libsepol's
    // strings); a test that compares category sets as sets turns it off.
    bool avoid_print_quirk = true;

    uint32_t uniform(uint32_t n) { return std::uniform_int_distribution<uint32_t>(0, n - 1)(rng_); }
    std::mt19937_64 &rng() { return rng_; }
    const std::vector<uint32_t> &types() const { return types_; }

    // A concrete type for a rule's type value (an attribute gives one of its members).
    uint32_t concrete(uint32_t v) {
        const TypeDatum *d = p_.types.by_value(v);
        if (!d || !d->attribute || v > p_.attr_type_map.size()) return v;
        std::vector<uint32_t> members;
        for (uint32_t b : p_.attr_type_map[v - 1].bits())
            if (const TypeDatum *m = p_.types.by_value(b + 1); m && !m->attribute)
                members.push_back(b + 1);
        return members.empty() ? 0 : members[uniform(static_cast<uint32_t>(members.size()))];
    }

    // A random range inside [low, high] whose levels are valid for their sensitivities.
    MlsRange range_within(const MlsRange &bounds) {
        MlsRange r;
        const MlsLevel &lo = bounds.level[0], &hi = bounds.level[1];
        uint32_t s0 = lo.sens + uniform(hi.sens - lo.sens + 1);
        uint32_t s1 = s0 + uniform(hi.sens - s0 + 1);
        r.level[0].sens = s0;
        r.level[1].sens = s1;
        Ebitmap high_cats = pick_cats(hi.cat);
        for (uint32_t b : lo.cat.bits())
            high_cats.set_bit(b, true);
        Ebitmap low_cats = lo.cat;
        for (uint32_t b : high_cats.bits())
            if (uniform(3) == 0) low_cats.set_bit(b, true);
        r.level[1].cat = restrict(high_cats, s1);
        r.level[0].cat = restrict(low_cats, s0);
        return r;
    }

    MlsRange full_range() {
        MlsRange r;
        r.level[0].sens = 1;
        r.level[1].sens = p_.levels.nprim;
        for (uint32_t c = 0; c < p_.cats.nprim; ++c)
            r.level[1].cat.set_bit(c, true);
        return r;
    }

    // (user, role) pairs authorised for a type, cached.
    std::optional<std::pair<uint32_t, uint32_t>> user_role_for(uint32_t type) {
        auto it = ur_.find(type);
        if (it != ur_.end()) return it->second;
        std::vector<std::pair<uint32_t, uint32_t>> pairs;
        for (uint32_t u = 1; u <= p_.users.nprim; ++u) {
            const UserDatum *ud = p_.users.by_value(u);
            if (!ud) continue;
            for (uint32_t rb : ud->roles.bits()) {
                const RoleDatum *rd = p_.roles.by_value(rb + 1);
                if (rd && rb + 1 != OBJECT_R_VAL && rd->types.get_bit(type - 1))
                    pairs.emplace_back(u, rb + 1);
            }
        }
        std::optional<std::pair<uint32_t, uint32_t>> pick;
        if (!pairs.empty()) pick = pairs[uniform(static_cast<uint32_t>(pairs.size()))];
        ur_[type] = pick;
        return pick;
    }

    // A valid subject context for the type when some role has it, else an object context.
    Context subject(uint32_t type, bool random_range = true) {
        auto ur = user_role_for(type);
        if (!ur) return object(type, random_range);
        Context c;
        c.user = ur->first;
        c.role = ur->second;
        c.type = type;
        if (p_.mls) {
            const UserDatum *u = p_.users.by_value(c.user);
            if (random_range) {
                c.range = range_within(u->range);
            } else {
                c.range.level[0] = u->dfltlevel;
                c.range.level[1] = u->dfltlevel;
            }
        }
        return c;
    }

    Context object(uint32_t type, bool random_range = true) {
        Context c;
        c.user = 1 + uniform(p_.users.nprim);
        c.role = OBJECT_R_VAL;
        c.type = type;
        if (p_.mls) {
            if (random_range) {
                c.range = range_within(full_range());
            } else {
                c.range.level[0].sens = c.range.level[1].sens = 1;
            }
        }
        return c;
    }

    uint32_t random_type() { return types_[uniform(static_cast<uint32_t>(types_.size()))]; }
    Context random_context() { return uniform(2) ? subject(random_type()) : object(random_type()); }
    std::string str(const Context &c) { return context_to_string(p_, c); }

    // Invalid context strings of every kind, each built from a valid subject context.
    std::vector<std::string> invalid_variants() {
        std::vector<std::string> out;
        Context c = subject(random_type(), false);
        auto with = [&](auto &&change) {
            Context d = c;
            change(d);
            return d;
        };
        std::string user = std::string(p_.users.name_of(c.user));
        std::string role = std::string(p_.roles.name_of(c.role));
        std::string type = std::string(p_.types.name_of(c.type));
        std::string mls = p_.mls ? ":" + mls_to_string(p_, c.range) : "";
        out.push_back("no_such_user:" + role + ":" + type + mls);
        out.push_back(user + ":no_such_role:" + type + mls);
        out.push_back(user + ":" + role + ":no_such_type" + mls);
        out.push_back(user + ":" + role);
        out.push_back(user + ":" + role + ":" + type + mls + ":extra");
        out.push_back("");
        out.push_back(":::");
        // A role the user does not have, a type the role does not have.
        for (uint32_t r = 1; r <= p_.roles.nprim; ++r)
            if (r != OBJECT_R_VAL && !p_.users.by_value(c.user)->roles.get_bit(r - 1)) {
                out.push_back(str(with([&](Context &d) { d.role = r; })));
                break;
            }
        for (int tries = 0; tries < 50; ++tries) {
            uint32_t t = random_type();
            if (!p_.roles.by_value(c.role)->types.get_bit(t - 1)) {
                out.push_back(str(with([&](Context &d) { d.type = t; })));
                break;
            }
        }
        // An attribute as the type.
        for (uint32_t t = 1; t <= p_.types.nprim; ++t)
            if (const TypeDatum *d = p_.types.by_value(t); d && d->attribute) {
                out.push_back(user + ":" + role + ":" + d->name + mls);
                break;
            }
        if (!p_.mls) {
            out.push_back(user + ":" + role + ":" + type + ":s0");
            return out;
        }
        out.push_back(user + ":" + role + ":" + type);  // MLS field missing
        out.push_back(user + ":" + role + ":" + type + ":");
        out.push_back(user + ":" + role + ":" + type + ":no_such_sens");
        out.push_back(user + ":" + role + ":" + type + ":s0:no_such_cat");
        out.push_back(user + ":" + role + ":" + type + ":s0:c" + std::to_string(p_.cats.nprim));
        out.push_back(user + ":" + role + ":" + type + ":s0:c3.c1");  // reversed range
        out.push_back(user + ":" + role + ":" + type + ":s0:c0,");
        out.push_back(user + ":" + role + ":" + type + ":s0-");
        out.push_back(user + ":" + role + ":" + type + ":s0-s0-s0");
        // High below low.
        if (p_.levels.nprim > 1)
            out.push_back(user + ":" + role + ":" + type + ":" + std::string(p_.levels.name_of(2)) +
                          "-" + std::string(p_.levels.name_of(1)));
        // Beyond the user's clearance: the top sensitivity with every category.
        out.push_back(str(with([&](Context &d) { d.range = full_range(); })));
        // A category the sensitivity does not allow, when the policy restricts any.
        for (uint32_t s = 1; s <= p_.levels.nprim; ++s) {
            const LevelDatum *ld = p_.levels.by_value(s);
            for (uint32_t cat = 0; ld && cat < p_.cats.nprim; ++cat)
                if (!ld->level.cat.get_bit(cat)) {
                    out.push_back(str(with([&](Context &d) {
                        d.role = OBJECT_R_VAL;
                        d.range.level[0].sens = d.range.level[1].sens = s;
                        d.range.level[0].cat = Ebitmap();
                        d.range.level[0].cat.set_bit(cat, true);
                        d.range.level[1].cat = d.range.level[0].cat;
                    })));
                    s = p_.levels.nprim;
                    break;
                }
        }
        return out;
    }

  private:
    Ebitmap pick_cats(const Ebitmap &allowed) {
        std::vector<uint32_t> bits;
        for (uint32_t b : allowed.bits())
            bits.push_back(b);
        Ebitmap out;
        if (bits.empty()) return out;
        switch (uniform(5)) {
            case 0:
                break;  // none
            case 1:
                out = allowed;  // all
                break;
            case 2: {  // a run
                uint32_t a = uniform(static_cast<uint32_t>(bits.size()));
                uint32_t len =
                    1 + uniform(std::min<uint32_t>(40, static_cast<uint32_t>(bits.size()) - a));
                for (uint32_t i = a; i < a + len; ++i)
                    out.set_bit(bits[i], true);
                break;
            }
            default:
                for (uint32_t n = 1 + uniform(6); n; --n)
                    out.set_bit(bits[uniform(static_cast<uint32_t>(bits.size()))], true);
        }
        while (avoid_print_quirk && sepol_render_quirk(out)) {
            // Drop the last bit of the offending word.
            for (uint32_t b : out.bits())
                if (b % 64 == 63) {
                    out.set_bit(b, false);
                    break;
                }
        }
        return out;
    }

    Ebitmap restrict(const Ebitmap &cats, uint32_t sens) {
        const LevelDatum *ld = p_.levels.by_value(sens);
        if (!ld) return {};
        Ebitmap out = ebitmap_and(cats, ld->level.cat);
        while (avoid_print_quirk && sepol_render_quirk(out))
            for (uint32_t b : out.bits())
                if (b % 64 == 63) {
                    out.set_bit(b, false);
                    break;
                }
        return out;
    }

    const PolicyBase &p_;
    std::mt19937_64 rng_;
    std::vector<uint32_t> types_;
    std::map<uint32_t, std::optional<std::pair<uint32_t, uint32_t>>> ur_;
};

}  // namespace locksim::ss::test
