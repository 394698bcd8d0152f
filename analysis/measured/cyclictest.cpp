// cyclictest's two outputs (rt-tests 2.x, src/cyclictest/cyclictest.c):
//
// The histogram (-h N, printed to stdout or to --histfile): "# Histogram", then one row per
// microsecond from 0 to N-1, "%06d" bin followed by one "%06lu" count per thread (the first
// separator a space, the others tabs; --histofall adds a column with the sum when there are
// several threads), then the footer, one value per thread (plus the total with --histofall):
//   # Total: <samples in the rows>           (rt-tests >= 1.x; absent in older versions)
//   # Min Latencies: / # Avg Latencies: / # Max Latencies: <µs>
//   # Histogram Overflows: <samples at or above N µs>
//   # Histogram Overflow at cycle number:
//   # Thread <n>: <cycle> ... [# <k> others]
// Status lines before "# Histogram" (the dma-latency note, "policy:", "T: 0 ...") are skipped.
//
// --json=FILE: {"thread": {"<n>": {"histogram": {"<µs>": count, ...}, "cycles", "min", "max",
// "avg", "cpu"}}, "cmdline:", "rt_test_version:", "sysinfo", ...}; the histogram holds the
// samples below N µs, so cycles minus its sum are the overflows.
//
// Overflows have no value in either file beyond "at least N µs" and the thread's maximum: one
// is recorded at the maximum, the others at N µs (a lower bound), and the facts say how many.
#include <fmt/format.h>

#include <charconv>

#include "analysis/measured/measurement.h"
#include "util/error.h"
#include "util/json_text.h"

namespace locksim::analysis::measured {

using nlohmann::json;

namespace {

constexpr uint64_t kMaxBinUs = 3'600'000'000;  // one hour: far past any latency histogram

struct Row {
    uint64_t bin = 0;
    std::vector<uint64_t> counts;
};

// Unsigned numbers separated by blanks from `text` (which starts at column `column0`); a word
// that is not one is an error at its column. Stops at '#' (cyclictest's "# 00042 others").
std::vector<uint64_t> numbers(std::string_view text, size_t column0, const std::string &file,
                              size_t line, std::string_view *rest = nullptr) {
    std::vector<uint64_t> out;
    size_t i = 0;
    while (i < text.size()) {
        if (text[i] == ' ' || text[i] == '\t') {
            ++i;
            continue;
        }
        if (text[i] == '#') {
            if (rest) *rest = text.substr(i);
            break;
        }
        size_t end = text.find_first_of(" \t", i);
        if (end == std::string_view::npos) end = text.size();
        uint64_t v = 0;
        auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + end, v);
        if (ec != std::errc() || ptr != text.data() + end)
            detail::fail(file, line, column0 + i,
                         fmt::format("'{}' is not a count", text.substr(i, end - i)));
        out.push_back(v);
        i = end;
    }
    return out;
}

struct Footer {
    std::vector<uint64_t> values;
    size_t line = 0;  // 0: absent
};

// Fills the measurement from per-thread bins, overflows and maxima (µs).
void record_threads(Measurement &m, const std::vector<std::map<uint64_t, uint64_t>> &bins,
                    const std::vector<uint64_t> &overflows, const std::vector<uint64_t> &max_us,
                    uint64_t bound_us, size_t line) {
    const std::string where = fmt::format("{}:{}", m.file, line);
    json recorded = json::array();
    for (size_t t = 0; t < bins.size(); ++t) {
        kernel::Histogram &h = m.wakeup[fmt::format("thread {}", t)];
        for (const auto &[bin, count] : bins[t])
            detail::record(h, static_cast<int64_t>(bin) * 1000, count, where);
        uint64_t over = overflows[t];
        if (over > 0 && max_us[t] >= bound_us) {
            detail::record(h, static_cast<int64_t>(max_us[t]) * 1000, 1, where);
            --over;
        }
        detail::record(h, static_cast<int64_t>(bound_us) * 1000, over, where);
        recorded.push_back(overflows[t]);
    }
    m.facts["threads"] = bins.size();
    m.facts["histogram_limit_us"] = bound_us;
    m.facts["overflows"] = std::move(recorded);
    m.facts["max_us"] = max_us;
    m.facts["overflow_note"] =
        "samples at or above the histogram's limit: one recorded at the thread's maximum, the "
        "others at the limit (a lower bound)";
}

}  // namespace

Measurement parse_cyclictest_histogram(std::string_view text, const std::string &file) {
    Measurement m;
    m.file = file;
    m.format = "cyclictest-histogram";
    const std::vector<std::string_view> lines = detail::split_lines(text);
    size_t k = 0;
    while (k < lines.size() && !lines[k].starts_with("# Histogram"))
        ++k;
    if (k == lines.size())
        detail::fail(file, 1, 0, "no '# Histogram' line: not cyclictest -h output");
    const size_t header_line = k + 1;
    std::vector<Row> rows;
    Footer total, min, avg, max, overflow;
    std::map<uint64_t, std::vector<uint64_t>> outliers;  // thread -> overflow cycles listed
    std::map<uint64_t, uint64_t> unlisted;               // thread -> "# N others"
    bool in_cycles = false;
    for (++k; k < lines.size(); ++k) {
        const size_t ln = k + 1;
        std::string_view line = lines[k];
        if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
        if (line[0] >= '0' && line[0] <= '9') {
            if (in_cycles || total.line || max.line)
                detail::fail(file, ln, 1, "a histogram row after the footer");
            std::vector<uint64_t> v = numbers(line, 1, file, ln);
            if (v.size() < 2) detail::fail(file, ln, line.size() + 1, "a row without a count");
            if (!rows.empty() && v.size() != rows.front().counts.size() + 1)
                detail::fail(file, ln, 1,
                             fmt::format("{} counts where line {} has {}", v.size() - 1,
                                         header_line + 1, rows.front().counts.size()));
            if (!rows.empty() && v[0] <= rows.back().bin)
                detail::fail(
                    file, ln, 1,
                    fmt::format("bin {} after bin {}: rows must ascend", v[0], rows.back().bin));
            if (v[0] >= kMaxBinUs) detail::fail(file, ln, 1, "a bin past one hour");
            rows.push_back(Row{v[0], std::vector<uint64_t>(v.begin() + 1, v.end())});
            continue;
        }
        auto footer = [&](std::string_view key, Footer &f) {
            if (!line.starts_with(key)) return false;
            if (f.line)
                detail::fail(file, ln, 1, fmt::format("'{}' given twice (line {})", key, f.line));
            f.values = numbers(line.substr(key.size()), key.size() + 1, file, ln);
            f.line = ln;
            return true;
        };
        if (footer("# Total:", total) || footer("# Min Latencies:", min) ||
            footer("# Avg Latencies:", avg) || footer("# Max Latencies:", max) ||
            footer("# Histogram Overflows:", overflow))
            continue;
        if (line.starts_with("# Histogram Overflow at cycle number:")) {
            in_cycles = true;
            continue;
        }
        if (in_cycles && line.starts_with("# Thread ")) {
            std::string_view rest = line.substr(9);
            size_t colon = rest.find(':');
            uint64_t thread = 0;
            auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), thread);
            if (colon == std::string_view::npos || ec != std::errc() ||
                ptr != rest.data() + colon || thread >= kMaxBinUs)
                detail::fail(file, ln, 10, "expected '# Thread <n>:'");
            std::string_view others;
            outliers[thread] = numbers(rest.substr(colon + 1), 9 + colon + 2, file, ln, &others);
            if (!others.empty()) {
                // "# 00042 others"
                std::vector<uint64_t> n =
                    numbers(others.substr(1, others.find("others") == std::string_view::npos
                                                 ? std::string_view::npos
                                                 : others.find("others") - 1),
                            0, file, ln);
                if (n.size() != 1 || others.find("others") == std::string_view::npos)
                    detail::fail(file, ln, 0, "expected '# <n> others' after the cycle numbers");
                unlisted[thread] = n[0];
            }
            continue;
        }
        if (line[0] == '#') continue;  // another comment (e.g. "# SMIs:")
        detail::fail(file, ln, 1, "neither a histogram row nor a '#' line");
    }
    const size_t last = lines.size();
    if (rows.empty()) detail::fail(file, header_line, 0, "'# Histogram' has no rows");
    if (!max.line)
        detail::fail(file, last, 0, "the file ends without '# Max Latencies:' (truncated?)");
    // Threads: the "# Thread n:" lines when present, else the maxima; --histofall adds a sum.
    const size_t columns = rows.front().counts.size();
    const size_t threads = !outliers.empty() ? outliers.size() : max.values.size();
    if (threads == 0) detail::fail(file, max.line, 0, "'# Max Latencies:' has no value");
    if (columns != threads && !(threads >= 2 && columns == threads + 1))
        detail::fail(file, header_line + 1, 0,
                     fmt::format("{} columns for {} threads (expected {}, or {} with --histofall)",
                                 columns, threads, threads, threads + 1));
    auto check_width = [&](const Footer &f, const char *what) {
        if (f.line && f.values.size() != threads && f.values.size() != threads + 1)
            detail::fail(
                file, f.line, 0,
                fmt::format("{} values in '{}' for {} threads", f.values.size(), what, threads));
    };
    check_width(total, "Total");
    check_width(min, "Min Latencies");
    check_width(avg, "Avg Latencies");
    check_width(max, "Max Latencies");
    check_width(overflow, "Histogram Overflows");
    std::vector<std::map<uint64_t, uint64_t>> bins(threads);
    std::vector<uint64_t> sums(threads, 0);
    for (const Row &r : rows)
        for (size_t t = 0; t < threads; ++t)
            if (r.counts[t]) {
                bins[t][r.bin] += r.counts[t];
                sums[t] += r.counts[t];
            }
    std::vector<uint64_t> overflows(threads, 0),
        max_us(max.values.begin(), max.values.begin() + threads);
    for (size_t t = 0; t < threads; ++t) {
        if (overflow.line) overflows[t] = overflow.values[t];
        // rt-tests counts the rows' samples in Total; some versions count the overflows too.
        if (total.line && total.values[t] != sums[t] && total.values[t] != sums[t] + overflows[t])
            detail::fail(file, total.line, 0,
                         fmt::format("thread {}: Total {} but its rows hold {} (and {} overflows)",
                                     t, total.values[t], sums[t], overflows[t]));
        if (!bins[t].empty() && bins[t].rbegin()->first > max_us[t])
            detail::fail(file, max.line, 0,
                         fmt::format("thread {}: maximum {} µs below its highest bin {}", t,
                                     max_us[t], bins[t].rbegin()->first));
    }
    record_threads(m, bins, overflows, max_us, rows.back().bin + 1, max.line);
    if (min.line)
        m.facts["min_us"] = std::vector<uint64_t>(min.values.begin(), min.values.begin() + threads);
    if (avg.line)
        m.facts["avg_us"] = std::vector<uint64_t>(avg.values.begin(), avg.values.begin() + threads);
    json cycles = json::object();
    for (const auto &[t, c] : outliers) {
        json one = {{"listed", c}};
        if (auto u = unlisted.find(t); u != unlisted.end()) one["others"] = u->second;
        cycles[fmt::format("thread {}", t)] = std::move(one);
    }
    if (!cycles.empty()) m.facts["overflow_cycles"] = std::move(cycles);
    return m;
}

namespace detail {

Measurement cyclictest_from_json(const json &j, const std::string &file) {
    Measurement m;
    m.file = file;
    m.format = "cyclictest-json";
    auto bad = [&](const std::string &path, const char *what) {
        throw UserError(fmt::format("{}: {}: {}", file, path, what));
    };
    auto count = [&](const json &v, const std::string &path) {
        if (!v.is_number_unsigned()) bad(path, "not a count");
        return v.get<uint64_t>();
    };
    const json &threads = j.at("thread");
    if (!threads.is_object() || threads.empty()) bad("thread", "not an object of threads");
    std::vector<std::map<uint64_t, uint64_t>> bins;
    std::vector<uint64_t> overflows, max_us;
    uint64_t bound = 0;
    std::vector<std::string> names;
    for (const auto &[name, t] : threads.items()) {
        const std::string path = "thread." + name;
        if (!t.is_object()) bad(path, "not an object");
        if (!t.contains("histogram"))
            bad(path, "no \"histogram\" (run cyclictest with -h N as well as --json)");
        const json &h = t.at("histogram");
        if (!h.is_object()) bad(path + ".histogram", "not an object");
        std::map<uint64_t, uint64_t> b;
        uint64_t sum = 0;
        for (const auto &[bin, c] : h.items()) {
            uint64_t us = 0;
            auto [ptr, ec] = std::from_chars(bin.data(), bin.data() + bin.size(), us);
            if (ec != std::errc() || ptr != bin.data() + bin.size() || us >= kMaxBinUs)
                bad(path + ".histogram." + bin, "not a bin in microseconds");
            const uint64_t n = count(c, path + ".histogram." + bin);
            if (n > std::numeric_limits<uint64_t>::max() - sum) bad(path, "counts too large");
            b[us] += n;
            sum += n;
            if (n) bound = std::max(bound, us + 1);
        }
        if (!t.contains("cycles") || !t.contains("max")) bad(path, "no \"cycles\" or \"max\"");
        const uint64_t cycles = count(t.at("cycles"), path + ".cycles");
        const uint64_t mx = count(t.at("max"), path + ".max");
        if (cycles < sum) bad(path + ".cycles", "fewer than the histogram holds");
        if (!b.empty() && b.rbegin()->first > mx) bad(path + ".max", "below the highest bin");
        if (mx >= kMaxBinUs) bad(path + ".max", "past one hour");
        bins.push_back(std::move(b));
        overflows.push_back(cycles - sum);
        max_us.push_back(mx);
        names.push_back(name);
    }
    // The JSON does not give the histogram's size: the overflows are at least one past the
    // highest bin seen (a lower bound).
    record_threads(m, bins, overflows, max_us, bound, 1);
    // Keep cyclictest's thread numbers.
    std::map<std::string, kernel::Histogram> renamed;
    for (size_t t = 0; t < names.size(); ++t)
        renamed["thread " + names[t]] = std::move(m.wakeup[fmt::format("thread {}", t)]);
    m.wakeup = std::move(renamed);
    for (const char *key : {"cmdline:", "cmdline", "rt_test_version:", "rt_test_version"})
        if (j.contains(key) && j.at(key).is_string())
            m.facts[std::string(key).substr(0, std::string(key).find(':'))] = j.at(key);
    if (j.contains("sysinfo") && j.at("sysinfo").is_object()) {
        const json &s = j.at("sysinfo");
        if (s.contains("release") && s.at("release").is_string()) m.facts["kernel"] = s["release"];
    }
    return m;
}

}  // namespace detail

Measurement parse_cyclictest_json(std::string_view text, const std::string &file) {
    json j = parse_json_text(text, file);
    if (!j.is_object() || !j.contains("thread"))
        detail::fail(file, 1, 0, "no \"thread\" object: not cyclictest --json output");
    return detail::cyclictest_from_json(j, file);
}

}  // namespace locksim::analysis::measured
