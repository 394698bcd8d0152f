#include "ss/context_string.h"

#include <cerrno>

#include "util/work_meter.h"

namespace locksim::ss {
namespace {

// Splits `s` at the first `sep`: returns the part before, leaves the rest (after sep) in s.
// `found` tells whether the separator was there.
std::string_view split_first(std::string_view &s, char sep, bool &found) {
    size_t pos = s.find(sep);
    if (pos == std::string_view::npos) {
        found = false;
        std::string_view head = s;
        s = {};
        return head;
    }
    found = true;
    std::string_view head = s.substr(0, pos);
    s.remove_prefix(pos + 1);
    return head;
}

int parse_level(const PolicyBase &p, std::string_view part, MlsLevel &level) {
    bool has_cats = false;
    std::string_view sens = split_first(part, ':', has_cats);
    const LevelDatum *lev = p.levels.find(sens);
    if (!lev) return -EINVAL;
    level.sens = lev->level.sens;
    if (!has_cats) return 0;
    // A ':' was present: a category list follows (an empty one is an unknown name).
    bool more = true;
    while (more) {
        std::string_view cur = split_first(part, ',', more);
        bool is_range = false;
        std::string_view first = split_first(cur, '.', is_range);
        const CatDatum *cat = p.cats.find(first);
        if (!cat) return -EINVAL;
        level.cat.set_bit(cat->value - 1, true);
        if (!is_range) continue;
        const CatDatum *last = p.cats.find(cur);
        if (!last) return -EINVAL;
        if (cat->value >= last->value) return -EINVAL;
        for (uint32_t i = cat->value; i < last->value; ++i)
            level.cat.set_bit(i, true);
    }
    return 0;
}

int parse_mls(const PolicyBase &p, std::string_view mls, MlsRange &r) {
    bool has_high = false;
    std::string_view low = split_first(mls, '-', has_high);
    if (int rc = parse_level(p, low, r.level[0])) return rc;
    if (has_high) return parse_level(p, mls, r.level[1]);
    r.level[1] = r.level[0];
    return 0;
}

void append_level(const PolicyBase &p, const MlsLevel &l, std::string &out) {
    out += p.levels.name_of(l.sens);
    // Runs of set bits: one name, `a,b` for a pair, `a.b` for three or more.
    bool first = true;
    ebitmap_for_each_run(l.cat, [&](uint32_t a, uint32_t b) {
        out += first ? ':' : ',';
        first = false;
        out += p.cats.name_of(a + 1);
        if (b != a) {
            out += b - a > 1 ? '.' : ',';
            out += p.cats.name_of(b + 1);
        }
    });
}

void append_mls(const PolicyBase &p, const MlsRange &r, std::string &out) {
    append_level(p, r.level[0], out);
    if (mls_level_eq(r.level[0], r.level[1])) return;
    out += '-';
    append_level(p, r.level[1], out);
}

}  // namespace

int context_parse(const PolicyBase &p, std::string_view str, Context &c) {
    c = Context{};
    if (size_t nul = str.find('\0'); nul != std::string_view::npos) str = str.substr(0, nul);
    if (str.empty()) return -EINVAL;
    count_work(Work::StringByte, str.size());

    bool found = false;
    std::string_view user = split_first(str, ':', found);
    if (!found) return -EINVAL;
    const UserDatum *u = p.users.find(user);
    if (!u) return -EINVAL;
    c.user = u->value;

    std::string_view role = split_first(str, ':', found);
    if (!found) return -EINVAL;
    const RoleDatum *r = p.roles.find(role);
    if (!r) return -EINVAL;
    c.role = r->value;

    bool has_mls = false;
    std::string_view type = split_first(str, ':', has_mls);
    const TypeDatum *t = p.types.find(type);
    if (!t || t->attribute) return -EINVAL;
    c.type = t->value;

    if (!p.mls) return has_mls ? -EINVAL : 0;
    if (!has_mls) return -EINVAL;
    return parse_mls(p, str, c.range);
}

int string_to_context(const PolicyBase &p, std::string_view str, Context &c, LevelCheck how) {
    if (int rc = context_parse(p, str, c)) return rc;
    return policydb_context_isvalid(p, c, how) ? 0 : -EINVAL;
}

void context_to_string_append(const PolicyBase &p, const Context &c, std::string &out) {
    size_t start = out.size();
    if (c.is_invalid()) {
        out += c.str;
    } else {
        out += p.users.name_of(c.user);
        out += ':';
        out += p.roles.name_of(c.role);
        out += ':';
        out += p.types.name_of(c.type);
        if (p.mls) {
            out += ':';
            append_mls(p, c.range, out);
        }
    }
    count_work(Work::StringByte, out.size() - start);
}

std::string context_to_string(const PolicyBase &p, const Context &c) {
    std::string out;
    out.reserve(64);
    count_work(Work::Alloc);
    context_to_string_append(p, c, out);
    return out;
}

std::string mls_to_string(const PolicyBase &p, const MlsRange &r) {
    std::string out;
    if (p.mls) append_mls(p, r, out);
    return out;
}

}  // namespace locksim::ss
