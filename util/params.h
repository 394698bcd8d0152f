// Named, typed, documented parameters: how a workload or a strategy declares what it accepts,
// so that a scenario file is validated field by field and `locksim list` can print the docs.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace locksim {

enum class ParamType { Int, Float, Bool, String, Duration, IntList, StringList };

std::string_view param_type_name(ParamType t);

using ParamValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>,
                                std::vector<std::string>>;

struct ParamSpec {
    std::string name;
    ParamType type = ParamType::Int;
    std::string doc;
    ParamValue default_value = int64_t{0};
    // Bounds for Int, Duration (ns) and the elements of IntList; inclusive.
    std::optional<int64_t> min;
    std::optional<int64_t> max;
    // Allowed values for String and the elements of StringList; empty = any.
    std::vector<std::string> choices;
};

// Checks a value against its spec; returns an explanation when it does not fit.
std::optional<std::string> check_param(const ParamSpec &spec, const ParamValue &v);

// Values after validation, defaults filled in. Getters throw std::logic_error on a name that
// was never declared (a programming error, not a user error).
class Params {
  public:
    void set(const std::string &name, ParamValue v) { values_[name] = std::move(v); }
    bool has(const std::string &name) const { return values_.count(name) != 0; }

    int64_t get_int(const std::string &name) const { return get<int64_t>(name); }
    int64_t get_duration_ns(const std::string &name) const { return get<int64_t>(name); }
    double get_float(const std::string &name) const;
    bool get_bool(const std::string &name) const { return get<bool>(name); }
    const std::string &get_string(const std::string &name) const { return get<std::string>(name); }
    const std::vector<int64_t> &get_int_list(const std::string &name) const {
        return get<std::vector<int64_t>>(name);
    }
    const std::vector<std::string> &get_string_list(const std::string &name) const {
        return get<std::vector<std::string>>(name);
    }
    const std::map<std::string, ParamValue> &values() const { return values_; }

    // With every spec's default for names not set.
    static Params with_defaults(const std::vector<ParamSpec> &specs);

  private:
    template <class T>
    const T &get(const std::string &name) const;
    std::map<std::string, ParamValue> values_;
};

// "250ms", "2s", "40us" (or "40µs", as the tables print it), "1500ns", "1m" -> nanoseconds.
// Empty optional if malformed or beyond what int64 nanoseconds hold (about 292 years); `why`,
// when given, receives the reason in words fit for a message.
std::optional<int64_t> parse_duration_ns(std::string_view text, std::string *why = nullptr);
// 1500000 -> "1.5ms": the shortest exact-ish human form, for messages and tables.
std::string format_duration_ns(int64_t ns);

// The closest name by edit distance, for "did you mean" hints (empty when nothing is close).
std::string closest_name(std::string_view wrong, const std::vector<std::string> &names);
// " (did you mean 'b'?)" for the closest name, or "" when nothing is close.
std::string did_you_mean(std::string_view wrong, const std::vector<std::string> &names);
// "'NAME' must be one of a, b, c, not 'V' (did you mean 'b'?)": a value outside its choices.
std::string choice_error(std::string_view name, const std::vector<std::string> &choices,
                         std::string_view value);

}  // namespace locksim
