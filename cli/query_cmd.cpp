// `locksim query --policy FILE`: a line-oriented batch interface to the security server, for
// scripts and for checking against other implementations. Every input line gets exactly one
// output line, flushed at once:
//   av SCON TCON CLASS      -> allowed=0x%08x auditallow=0x%08x auditdeny=0x%08x
//                              (with --names: allowed=read,open auditallow= auditdeny=...)
//   create SCON TCON CLASS  -> context=NEWCON
//   valid CON               -> valid=1 | valid=0
//   setbool NAME 0|1        -> ok (in force for the following lines)
//   anything that fails     -> error=ERRNO message
// Permission bits are the policy's own (bit value - 1 of the class), with no class mapping.
#include <fmt/core.h>

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "ss/avtab.h"
#include "ss/services.h"

namespace locksim::cli {
namespace {

std::vector<std::string_view> split_words(std::string_view line) {
    std::vector<std::string_view> words;
    size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r'))
            ++i;
        size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
            ++i;
        if (i > start) words.push_back(line.substr(start, i - start));
    }
    return words;
}

std::string errno_name(int rc) {
    switch (-rc) {
        case EINVAL:
            return "EINVAL";
        case EACCES:
            return "EACCES";
        case ENOENT:
            return "ENOENT";
        case ESTALE:
            return "ESTALE";
        default:
            return fmt::format("E{}", -rc);
    }
}

// The permission names of the bits set in `av`, comma-separated in bit order; a bit the class
// does not define is shown as its hex value.
std::string permission_names(const ss::ClassDatum &cls, uint32_t av) {
    std::string out;
    for (uint32_t bit = 0; bit < 32; ++bit) {
        if (!(av & (1u << bit))) continue;
        std::string_view name = cls.permissions.name_of(bit + 1);
        if (name.empty() && cls.comdatum) name = cls.comdatum->permissions.name_of(bit + 1);
        if (!out.empty()) out += ',';
        out += name.empty() ? fmt::format("{:#x}", 1u << bit) : std::string(name);
    }
    return out;
}

class QuerySession {
  public:
    QuerySession(ss::PolicyState st, bool names) : st_(std::move(st)), names_(names) {}

    std::string handle(std::string_view line) {
        std::vector<std::string_view> w = split_words(line);
        if (w.empty()) return "error=EINVAL empty line";
        std::string_view cmd = w[0];
        if (cmd == "av" || cmd == "create") {
            if (w.size() != 4) return fmt::format("error=EINVAL usage: {} SCON TCON CLASS", cmd);
            uint32_t ssid, tsid;
            if (int rc = ss::context_to_sid(st_, w[1], &ssid))
                return fmt::format("error={} invalid context '{}'", errno_name(rc), w[1]);
            if (int rc = ss::context_to_sid(st_, w[2], &tsid))
                return fmt::format("error={} invalid context '{}'", errno_name(rc), w[2]);
            const ss::ClassDatum *cls = st_.p().classes.find(w[3]);
            if (!cls) return fmt::format("error=EINVAL unknown class '{}'", w[3]);
            if (cmd == "av") {
                ss::AvDecision avd;
                if (int rc = ss::compute_av(st_, ssid, tsid, cls->value, &avd))
                    return fmt::format("error={} no decision", errno_name(rc));
                if (names_)
                    return fmt::format("allowed={} auditallow={} auditdeny={}",
                                       permission_names(*cls, avd.allowed),
                                       permission_names(*cls, avd.auditallow),
                                       permission_names(*cls, avd.auditdeny));
                return fmt::format("allowed=0x{:08x} auditallow=0x{:08x} auditdeny=0x{:08x}",
                                   avd.allowed, avd.auditallow, avd.auditdeny);
            }
            uint32_t newsid;
            if (int rc = ss::transition_sid(st_, ssid, tsid, cls->value, &newsid))
                return fmt::format("error={} no valid context for the new object", errno_name(rc));
            std::string con;
            if (int rc = ss::sid_to_context(st_, newsid, &con))
                return fmt::format("error={} unknown SID", errno_name(rc));
            return "context=" + con;
        }
        if (cmd == "valid") {
            if (w.size() != 2) return "error=EINVAL usage: valid CON";
            uint32_t sid;
            return ss::context_to_sid(st_, w[1], &sid) == 0 ? "valid=1" : "valid=0";
        }
        if (cmd == "setbool") {
            if (w.size() != 3 || (w[2] != "0" && w[2] != "1"))
                return "error=EINVAL usage: setbool NAME 0|1";
            uint32_t value = ss::bool_value(st_, w[1]);
            if (!value) return fmt::format("error=ENOENT unknown boolean '{}'", w[1]);
            std::vector<int> values = ss::get_bools(st_);
            values[value - 1] = w[2] == "1";
            if (int rc = ss::set_bools_inplace(st_, values))
                return fmt::format("error={} setbool failed", errno_name(rc));
            return "ok";
        }
        return fmt::format("error=EINVAL unknown command '{}'", cmd);
    }

  private:
    ss::PolicyState st_;
    bool names_;
};

void run_query(const std::string &policy_file, bool names) {
    QuerySession session(ss::policy_state_create(ss::policydb_read_file(policy_file)), names);
    std::ios::sync_with_stdio(false);
    std::string line;
    while (std::getline(std::cin, line)) {
        std::string out = session.handle(line);
        out += '\n';
        std::fwrite(out.data(), 1, out.size(), stdout);
        std::fflush(stdout);
    }
}

CommandRegistrar query_command([](CLI::App &app) {
    auto *cmd = app.add_subcommand(
        "query", "Answer av/create/valid/setbool queries read from stdin, one line each");
    static std::string file_storage;
    static bool names_storage = false;
    auto *file = &file_storage;
    auto *names = &names_storage;
    cmd->add_option("--policy", *file, "Binary policy file")->required();
    cmd->add_flag("--names", *names,
                  "Print the permissions of 'av' by name (comma-separated) instead of in hex");
    cmd->callback([file, names] { run_query(*file, *names); });
});

}  // namespace
}  // namespace locksim::cli
