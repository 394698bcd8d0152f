#include "util/params.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "util/name_table.h"

namespace locksim {

std::string_view param_type_name(ParamType t) {
    static const NameTable<ParamType> names = {{ParamType::Int, "integer"},
                                               {ParamType::Float, "number"},
                                               {ParamType::Bool, "boolean"},
                                               {ParamType::String, "string"},
                                               {ParamType::Duration, "duration"},
                                               {ParamType::IntList, "list of integers"},
                                               {ParamType::StringList, "list of strings"}};
    return names.name(t);
}

namespace {

std::optional<std::string> check_bounds(const ParamSpec &spec, int64_t v, bool duration) {
    auto show = [&](int64_t x) { return duration ? format_duration_ns(x) : std::to_string(x); };
    if (spec.min && v < *spec.min)
        return fmt::format("'{}' must be at least {}, not {}", spec.name, show(*spec.min), show(v));
    if (spec.max && v > *spec.max)
        return fmt::format("'{}' must be at most {}, not {}", spec.name, show(*spec.max), show(v));
    return std::nullopt;
}

std::optional<std::string> check_choice(const ParamSpec &spec, const std::string &v) {
    if (spec.choices.empty() || std::count(spec.choices.begin(), spec.choices.end(), v)) {
        return std::nullopt;
    }
    return choice_error(spec.name, spec.choices, v);
}

}  // namespace

std::optional<std::string> check_param(const ParamSpec &spec, const ParamValue &v) {
    switch (spec.type) {
        case ParamType::Int:
        case ParamType::Duration:
            return check_bounds(spec, std::get<int64_t>(v), spec.type == ParamType::Duration);
        case ParamType::IntList:
            for (int64_t x : std::get<std::vector<int64_t>>(v))
                if (auto e = check_bounds(spec, x, false)) return e;
            return std::nullopt;
        case ParamType::String:
            return check_choice(spec, std::get<std::string>(v));
        case ParamType::StringList:
            for (const auto &x : std::get<std::vector<std::string>>(v))
                if (auto e = check_choice(spec, x)) return e;
            return std::nullopt;
        case ParamType::Float:
        case ParamType::Bool:
            return std::nullopt;
    }
    return std::nullopt;
}

template <class T>
const T &Params::get(const std::string &name) const {
    auto it = values_.find(name);
    if (it == values_.end()) throw std::logic_error("parameter '" + name + "' was never declared");
    const T *v = std::get_if<T>(&it->second);
    if (!v) throw std::logic_error("parameter '" + name + "' read with the wrong type");
    return *v;
}

template const int64_t &Params::get<int64_t>(const std::string &) const;
template const bool &Params::get<bool>(const std::string &) const;
template const std::string &Params::get<std::string>(const std::string &) const;
template const std::vector<int64_t> &Params::get<std::vector<int64_t>>(const std::string &) const;
template const std::vector<std::string> &Params::get<std::vector<std::string>>(
    const std::string &) const;

double Params::get_float(const std::string &name) const {
    auto it = values_.find(name);
    if (it != values_.end()) {
        if (const int64_t *i = std::get_if<int64_t>(&it->second)) return static_cast<double>(*i);
    }
    return get<double>(name);
}

Params Params::with_defaults(const std::vector<ParamSpec> &specs) {
    Params p;
    for (const auto &s : specs)
        p.set(s.name, s.default_value);
    return p;
}

std::optional<int64_t> parse_duration_ns(std::string_view text, std::string *why) {
    auto fail = [&](const char *reason) -> std::optional<int64_t> {
        if (why) *why = reason;
        return std::nullopt;
    };
    constexpr const char *kMalformed = "not a duration: a number and a unit (ns, us, ms, s, m)";
    double number = 0;
    const char *begin = text.data(), *end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(begin, end, number);
    if (ec == std::errc::result_out_of_range) return fail("too large: at most about 292 years");
    if (ec != std::errc() || ptr == begin) return fail(kMalformed);
    if (number < 0) return fail("negative");
    std::string_view unit(ptr, static_cast<size_t>(end - ptr));
    double scale;
    if (unit == "ns")
        scale = 1;
    else if (unit == "us" || unit == "\u00b5s" || unit == "\u03bcs")  // micro sign, Greek mu
        scale = 1e3;
    else if (unit == "ms")
        scale = 1e6;
    else if (unit == "s")
        scale = 1e9;
    else if (unit == "m" || unit == "min")
        scale = 60e9;
    else
        return fail(kMalformed);
    double ns = number * scale;
    if (ns > 9.2e18) return fail("too large: at most about 292 years");
    return static_cast<int64_t>(ns + 0.5);
}

std::string format_duration_ns(int64_t ns) {
    struct Unit {
        int64_t size;
        const char *name;
    };
    static constexpr Unit units[] = {{1'000'000'000, "s"}, {1'000'000, "ms"}, {1'000, "us"}};
    int64_t mag = ns < 0 ? -ns : ns;
    for (const auto &u : units) {
        if (mag >= u.size) {
            if (ns % u.size == 0) return fmt::format("{}{}", ns / u.size, u.name);
            return fmt::format("{:.3g}{}", static_cast<double>(ns) / u.size, u.name);
        }
    }
    return fmt::format("{}ns", ns);
}

std::string closest_name(std::string_view wrong, const std::vector<std::string> &names) {
    auto distance = [](std::string_view a, std::string_view b) {
        std::vector<size_t> row(b.size() + 1);
        for (size_t j = 0; j <= b.size(); ++j)
            row[j] = j;
        for (size_t i = 1; i <= a.size(); ++i) {
            size_t diag = row[0];
            row[0] = i;
            for (size_t j = 1; j <= b.size(); ++j) {
                size_t up = row[j];
                row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
                diag = up;
            }
        }
        return row[b.size()];
    };
    std::string best;
    size_t best_d = std::max<size_t>(2, wrong.size() / 3) + 1;
    for (const auto &n : names) {
        size_t d = distance(wrong, n);
        if (d < best_d) best_d = d, best = n;
    }
    return best;
}

std::string choice_error(std::string_view name, const std::vector<std::string> &choices,
                         std::string_view value) {
    std::string all;
    for (const auto &c : choices)
        all += (all.empty() ? "" : ", ") + c;
    return fmt::format("'{}' must be one of {}, not '{}'{}", name, all, value,
                       did_you_mean(value, choices));
}

std::string did_you_mean(std::string_view wrong, const std::vector<std::string> &names) {
    const std::string hint = closest_name(wrong, names);
    return hint.empty() ? "" : fmt::format(" (did you mean '{}'?)", hint);
}

}  // namespace locksim
