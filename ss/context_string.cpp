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

// Names from the policy, for the MLS text.
struct PolicyNames {
    const PolicyBase &p;
    auto sens() const {
        return [this](uint32_t s) -> decltype(auto) { return p.levels.name_of(s); };
    }
    auto cat() const {
        return [this](uint32_t bit) -> decltype(auto) { return p.cats.name_of(bit + 1); };
    }
};

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
        // context_struct_to_string: the length first (the names, then the MLS part's), the
        // text after.
        const PolicyNames names{p};
        const std::string_view user = p.users.name_of(c.user), role = p.roles.name_of(c.role),
                               type = p.types.name_of(c.type);
        size_t len = user.size() + role.size() + type.size() + 2;
        if (p.mls) len += mls_text_length(c.range, names.sens(), names.cat());
        out.reserve(start + len);
        out += user;
        out += ':';
        out += role;
        out += ':';
        out += type;
        if (p.mls) append_mls_text(c.range, names.sens(), names.cat(), out);
    }
    count_work(Work::StringByte, out.size() - start);
}

std::string context_to_string(const PolicyBase &p, const Context &c) {
    std::string out;
    count_work(Work::Alloc);  // the append sizes it (kmalloc of the computed length)
    context_to_string_append(p, c, out);
    return out;
}

std::string mls_to_string(const PolicyBase &p, const MlsRange &r) {
    std::string out;
    if (!p.mls) return out;
    const PolicyNames names{p};
    append_mls_text(r, names.sens(), names.cat(), out);
    return out.substr(1);  // without the ':' that joins it to the type
}

}  // namespace locksim::ss
