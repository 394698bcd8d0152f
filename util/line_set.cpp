#include "util/line_set.h"

#include <algorithm>

#include "util/work_meter.h"

namespace locksim {

void LineSet::clear() {
    size_ = 0;
    if (++epoch_ == 0) {
        // The stamps wrapped: no slot may match a live epoch again.
        std::fill(stamps_.begin(), stamps_.end(), 0);
        epoch_ = 1;
    }
}

void LineSet::grow() {
    std::vector<uint64_t> old_tags = std::move(tags_);
    std::vector<uint8_t> old_stamps = std::move(stamps_);
    const size_t n = std::max<size_t>(1024, old_tags.size() * 2);
    tags_.assign(n, 0);
    stamps_.assign(n, 0);
    const uint8_t live = epoch_;
    epoch_ = 1;
    size_ = 0;
    for (size_t i = 0; i < old_tags.size(); ++i)
        if (old_stamps[i] == live) insert(old_tags[i]);
}

uint64_t keep_distinct_sampled(std::vector<uint64_t> &lines, int shift, LineSet &seen) {
    seen.clear();
    auto kept = lines.begin();
    for (uint64_t line : lines)
        if (seen.insert(line_tag(line)) && line_sampled(line_tag(line), shift)) *kept++ = line;
    lines.erase(kept, lines.end());
    // Tag order: the order the memo has always priced an entry's lines in.
    std::sort(lines.begin(), lines.end(),
              [](uint64_t a, uint64_t b) { return line_tag(a) < line_tag(b); });
    return seen.size();
}

}  // namespace locksim
