// Little-endian readers and writers for the binary policy format, with the error reporting the
// policy reader promises: every failure is a UserError naming the source, the section and the
// byte offset of the field that was wrong. Internal to the policy database code.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ss/context.h"
#include "ss/ebitmap.h"
#include "ss/mls_types.h"
#include "ss/policydb.h"
#include "util/error.h"
#include "util/work_meter.h"

namespace locksim::ss {

// The smallest legal encoding of the variable-length pieces, from which every count check
// derives the least size of its entry: an empty ebitmap is {mapunit, highbit = 0, count = 0};
// a level is its sensitivity and an ebitmap; a range of one level is {items = 1, sens, cats}
// (the writer emits one level when low equals high); a context is {user, role, type, range}.
inline constexpr size_t kEbitmapMinBytes = 12;
inline constexpr size_t kEbitmapMapBytes = 12;  // {startbit u32, map u64}
inline constexpr size_t kMlsLevelMinBytes = 4 + kEbitmapMinBytes;
inline constexpr size_t kMlsRangeMinBytes = 4 + 4 + kEbitmapMinBytes;
inline constexpr size_t kContextMinBytes = 12 + kMlsRangeMinBytes;
// A counted string: its length, then at least one byte.
inline constexpr size_t kNameMinBytes = 4 + 1;

class BinaryReader {
  public:
    // `lines`: the image's name for the cache model (the writer's, for an image just written;
    // 0: a name of its own).
    BinaryReader(std::span<const uint8_t> data, std::string_view source,
                 std::vector<PolicySection> *sections = nullptr, uint32_t lines = 0)
        : data_(data),
          source_(source),
          sections_(sections),
          lines_(lines ? lines : next_line_object()) {}

    void section(const char *name) {
        section_ = name;
        if (sections_) sections_->push_back({name, pos_});
    }
    const char *section() const { return section_; }
    size_t pos() const { return pos_; }
    size_t remaining() const { return data_.size() - pos_; }

    // The detail may quote bytes of the file (a name): those that are not printable ASCII are
    // written as \xNN, so the message stays one line of text.
    template <class... Args>
    [[noreturn]] void fail(fmt::format_string<Args...> f, Args &&...args) const {
        std::string detail;
        for (unsigned char c : fmt::format(f, std::forward<Args>(args)...)) {
            if (c >= 0x20 && c < 0x7f)
                detail += static_cast<char>(c);
            else
                detail += fmt::format("\\x{:02x}", c);
        }
        throw UserError(fmt::format("{}: {} at byte {}: {}", source_, section_, last_, detail));
    }

    const uint8_t *take(size_t n) {
        last_ = pos_;
        if (n > remaining()) fail("truncated: {} bytes needed, {} left", n, remaining());
        const uint8_t *p = data_.data() + pos_;
        // The image is read in order: each line once, as the read reaches it.
        if (const auto [from, len] = cursor_.reach(pos_, n); len)
            touch_stream(lines_, from, len, Access::Independent);
        pos_ += n;
        count_work(Work::BytesSerialized, n);
        return p;
    }
    uint8_t u8() { return *take(1); }
    uint16_t u16() {
        const uint8_t *p = take(2);
        return static_cast<uint16_t>(p[0] | (p[1] << 8));
    }
    uint32_t u32() {
        uint32_t v;
        std::memcpy(&v, take(4), 4);
        return v;  // little-endian host
    }
    uint64_t u64() {
        uint64_t v;
        std::memcpy(&v, take(8), 8);
        return v;
    }
    // A string of `len` bytes; `what` names it in errors. Empty strings are rejected unless
    // allowed.
    std::string str(uint32_t len, const char *what, bool allow_empty = false) {
        if (len == 0 && !allow_empty) fail("{} has length 0", what);
        const uint8_t *p = take(len);
        count_work(Work::Alloc);
        return std::string(reinterpret_cast<const char *>(p), len);
    }
    // Refuses a count whose items, each at least `min_bytes` long, cannot fit in the rest of the
    // file, so no table is sized beyond what the file justifies.
    void check_count(uint64_t n, size_t min_bytes, const char *what) const {
        if (n > remaining() / min_bytes)
            fail("{} count {} is impossible: {} bytes left", what, n, remaining());
    }

  private:
    std::span<const uint8_t> data_;
    std::string source_;
    std::vector<PolicySection> *sections_;
    const char *section_ = "header";
    size_t pos_ = 0;
    size_t last_ = 0;
    uint32_t lines_;
    StreamCursor cursor_;
};

// Writes an image: its lines written in order for the cache model, and those of the structure
// it serialises (`source`, a policy's stream name; 0: none) read at the same offsets.
class BinaryWriter {
  public:
    explicit BinaryWriter(size_t reserve = 0, uint32_t source = 0) : source_(source) {
        buf_.reserve(reserve);
    }
    void u8(uint8_t v) { put(&v, 1); }
    void u16(uint16_t v) { put(&v, 2); }
    void u32(uint32_t v) { put(&v, 4); }
    void u64(uint64_t v) { put(&v, 8); }
    void bytes(std::string_view s) { put(s.data(), s.size()); }
    void put(const void *p, size_t n) {
        const auto *b = static_cast<const uint8_t *>(p);
        if (const auto [from, len] = cursor_.reach(buf_.size(), n); len) {
            if (source_) touch_stream(source_, from, len, Access::Independent);
            touch_stream(lines_, from, len, Access::Written);
        }
        buf_.insert(buf_.end(), b, b + n);
        count_work(Work::BytesSerialized, n);
    }
    std::vector<uint8_t> take() { return std::move(buf_); }
    size_t size() const { return buf_.size(); }
    uint32_t lines() const { return lines_; }  // the image's name for the cache model

  private:
    std::vector<uint8_t> buf_;
    uint32_t source_;
    uint32_t lines_ = next_line_object();
    StreamCursor cursor_;
};

// ebitmap on disk: {mapunit = 64, highbit, count} then count x {startbit u32, map u64}.
void ebitmap_read(BinaryReader &r, Ebitmap &e);
void ebitmap_write(BinaryWriter &w, const Ebitmap &e);

// MLS level {sens, cats} and range {items, sens[items], cats[items]}.
void mls_level_read(BinaryReader &r, MlsLevel &l);
void mls_level_write(BinaryWriter &w, const MlsLevel &l);
void mls_range_read(BinaryReader &r, MlsRange &range);
void mls_range_write(BinaryWriter &w, const MlsRange &range);

}  // namespace locksim::ss
