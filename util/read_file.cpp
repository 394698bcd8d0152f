#include "util/read_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "util/error.h"

namespace locksim {

std::string read_whole_file(const std::string &path, std::string_view what) {
    auto fail = [&](std::string_view reason) {
        throw UserError(fmt::format("{}: cannot read the {}: {}", path, what, reason));
    };
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) fail("it is a directory");
    std::unique_ptr<std::FILE, int (*)(std::FILE *)> f(std::fopen(path.c_str(), "rb"),
                                                       &std::fclose);
    if (!f) fail(std::strerror(errno));
    std::string data;
    char buf[1 << 16];
    for (;;) {
        size_t n = std::fread(buf, 1, sizeof buf, f.get());
        data.append(buf, n);
        if (n < sizeof buf) break;
    }
    if (std::ferror(f.get())) fail(std::strerror(errno));
    return data;
}

void write_whole_file(const std::string &path, std::string_view text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw UserError(fmt::format("{}: cannot write", path));
}

}  // namespace locksim
