// Calibrating this host from the command line: `locksim calibrate`, and `validate --calibrate`,
// which calibrates again before each of its rounds (cli/calibrate_cmd.cpp).
#pragma once

#include <filesystem>
#include <string>

#include "calibrate/calibrate.h"
#include "sim/profile.h"

namespace locksim::cli {

struct HostCalibration {
    std::string policy = "default";  // default, mls (Debian) or a binary policy file
    std::string base = "x86-modern";
    std::string name = "host";
    bool quick = false;
    int passes = 0;  // 0: 3, or 1 with quick
};

// The options `calibrate` runs with.
CalibrateOptions calibrate_options(const HostCalibration &h);

// Writes `profile` as a profile file, and reads it back (UserError naming `out` if either
// fails).
void write_profile(const std::filesystem::path &out, const sim::CpuProfile &profile);

}  // namespace locksim::cli
