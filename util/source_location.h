// The place in the source a call came from (file, line, function), as std::source_location
// gives it. A standard library without std::source_location (libstdc++ 12 under clang 14, the
// compiler of the fuzzing build) gets the same members, filled by the compiler's builtins in a
// default argument, which both GCC and Clang evaluate at the caller.
#pragma once

#include <cstdint>
#include <version>

#if defined(__cpp_lib_source_location)
#include <source_location>
#endif

namespace locksim {

#if defined(__cpp_lib_source_location)
using SourceLocation = std::source_location;
#else
class SourceLocation {
  public:
    static constexpr SourceLocation current(const char *file = __builtin_FILE(),
                                            const char *function = __builtin_FUNCTION(),
                                            uint_least32_t line = __builtin_LINE(),
                                            uint_least32_t column = __builtin_COLUMN()) noexcept {
        SourceLocation l;
        l.file_ = file;
        l.function_ = function;
        l.line_ = line;
        l.column_ = column;
        return l;
    }
    constexpr SourceLocation() noexcept = default;
    constexpr const char *file_name() const noexcept { return file_; }
    constexpr const char *function_name() const noexcept { return function_; }
    constexpr uint_least32_t line() const noexcept { return line_; }
    constexpr uint_least32_t column() const noexcept { return column_; }

  private:
    const char *file_ = "";
    const char *function_ = "";
    uint_least32_t line_ = 0;
    uint_least32_t column_ = 0;
};
#endif

}  // namespace locksim
