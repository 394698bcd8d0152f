// A temporary directory of the running test's own: created fresh under the system's temporary
// directory ($TMPDIR, else /tmp), named after the test with a unique suffix, so that tests run in
// parallel, and several test commands at once, never share a file. Removed when it goes out of
// scope, unless the test failed (then kept, and its path printed, to look at).
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <system_error>

namespace locksim::testing {

// A new directory <temporary directory>/<prefix>-XXXXXX that no one else has; empty (and the
// test failed) when it cannot be made.
inline std::filesystem::path unique_temp_dir(const std::string &prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (!mkdtemp(pattern.data())) {
        ADD_FAILURE() << "cannot create a temporary directory " << pattern;
        return {};
    }
    return pattern;
}

class TestTempDir {
  public:
    TestTempDir() {
        std::string name = "locksim-test";
        if (const ::testing::TestInfo *t =
                ::testing::UnitTest::GetInstance()->current_test_info()) {
            name += std::string("-") + t->test_suite_name() + "." + t->name();
            for (char &c : name)
                if (c == '/') c = '_';  // parameterised tests' names
        }
        path_ = unique_temp_dir(name);
    }
    ~TestTempDir() {
        if (path_.empty()) return;
        if (::testing::Test::HasFailure()) {
            std::cout << "kept the failed test's files in " << path_.string() << "\n";
            return;
        }
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TestTempDir(const TestTempDir &) = delete;
    TestTempDir &operator=(const TestTempDir &) = delete;

    const std::filesystem::path &path() const { return path_; }
    std::filesystem::path operator/(const std::string &name) const { return path_ / name; }
    // A fresh subdirectory.
    std::filesystem::path sub(const std::string &name) const {
        std::filesystem::path d = path_ / name;
        std::filesystem::create_directories(d);
        return d;
    }

  private:
    std::filesystem::path path_;
};

}  // namespace locksim::testing
