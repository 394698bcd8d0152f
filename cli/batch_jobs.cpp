// Sweeps on a batch cluster: `--shard auto` from a Slurm array task or a Kubernetes Indexed
// Job, and `sweep --slurm`, which writes and submits the array job and its merge job.
#include "cli/batch_jobs.h"

#include <fmt/core.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "util/error.h"
#include "util/read_file.h"

extern char **environ;

namespace locksim::cli {
namespace {

namespace fs = std::filesystem;

std::optional<size_t> parse_count(const std::string &s) {
    if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    return static_cast<size_t>(std::stoull(s));
}

// A value of the environment as a number; UserError naming the variable when it is not one.
std::optional<size_t> env_number(const std::map<std::string, std::string> &env, const char *name) {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    auto n = parse_count(it->second);
    if (!n)
        throw UserError(
            fmt::format("--shard auto: {}='{}' is not a non-negative integer", name, it->second));
    return n;
}

Shard slurm_shard(const std::map<std::string, std::string> &env, size_t id) {
    const size_t min = env_number(env, "SLURM_ARRAY_TASK_MIN").value_or(0);
    auto max = env_number(env, "SLURM_ARRAY_TASK_MAX");
    auto count = env_number(env, "SLURM_ARRAY_TASK_COUNT");
    if (!count && !max)
        throw UserError(
            "--shard auto: SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor "
            "SLURM_ARRAY_TASK_MAX is");
    if (max && *max < min)
        throw UserError(fmt::format(
            "--shard auto: SLURM_ARRAY_TASK_MAX={} is below SLURM_ARRAY_TASK_MIN={}", *max, min));
    if (count && max && *count != *max - min + 1)
        throw UserError(fmt::format(
            "--shard auto: the Slurm array {}-{} has {} tasks, not {}: it must be contiguous "
            "(no step, no list)",
            min, *max, *count, *max - min + 1));
    const size_t n = count ? *count : *max - min + 1;
    if (id < min || id - min >= n)
        throw UserError(
            fmt::format("--shard auto: SLURM_ARRAY_TASK_ID={} is outside the array {}..{}", id, min,
                        min + n - 1));
    return {id - min, n};
}

std::string shell_quote(const std::string &s) {
    std::string out = "'";
    for (char c : s) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

std::string self_executable() {
    std::error_code ec;
    fs::path p = fs::read_symlink("/proc/self/exe", ec);
    if (ec) throw std::runtime_error("cannot read /proc/self/exe: " + ec.message());
    return p.string();
}

// Runs argv, returns its standard output; UserError with its output when it fails.
std::string run_capture(const std::vector<std::string> &argv) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        dup2(fds[1], STDOUT_FILENO);
        dup2(fds[1], STDERR_FILENO);
        close(fds[0]);
        close(fds[1]);
        std::vector<char *> args;
        for (const auto &a : argv)
            args.push_back(const_cast<char *>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        dprintf(STDOUT_FILENO, "cannot run %s: %s", args[0], std::strerror(errno));
        _exit(127);
    }
    close(fds[1]);
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = read(fds[0], buf, sizeof buf)) > 0 || (n < 0 && errno == EINTR))
        if (n > 0) out.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
        out.pop_back();
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw UserError(fmt::format("{} failed: {}", argv[0], out));
    return out;
}

// `sbatch --parsable` prints "jobid" or "jobid;cluster".
std::string submit(const std::vector<std::string> &argv) {
    std::string out = run_capture(argv);
    std::string id = out.substr(0, out.find(';'));
    if (!parse_count(id)) throw UserError(fmt::format("{}: unexpected answer '{}'", argv[0], out));
    return id;
}

}  // namespace

std::string Shard::text() const {
    return fmt::format("{}/{}", index, count);
}

std::map<std::string, std::string> process_environment() {
    std::map<std::string, std::string> env;
    for (char **e = environ; e && *e; ++e) {
        std::string kv = *e;
        size_t eq = kv.find('=');
        if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    return env;
}

Shard resolve_shard(const std::string &text, const std::map<std::string, std::string> &env) {
    const size_t slash = text.find('/');
    const std::string head = text.substr(0, slash);
    std::optional<size_t> count;
    if (slash != std::string::npos) {
        count = parse_count(text.substr(slash + 1));
        if (!count || *count == 0)
            throw UserError(fmt::format("--shard: '{}' is not I/N, auto or auto/N (N > 0)", text));
    }
    if (head != "auto") {
        auto index = parse_count(head);
        if (!index || !count || *index >= *count)
            throw UserError(fmt::format("--shard: '{}' is not I/N with 0 <= I < N", text));
        return {*index, *count};
    }
    if (auto id = env_number(env, "SLURM_ARRAY_TASK_ID")) {
        Shard s = slurm_shard(env, *id);
        if (count && *count != s.count)
            throw UserError(fmt::format("--shard {}: the Slurm array has {} tasks, not {}", text,
                                        s.count, *count));
        return s;
    }
    if (auto index = env_number(env, "JOB_COMPLETION_INDEX")) {
        if (!count)
            throw UserError(
                "--shard auto: in a Kubernetes Indexed Job give the count as --shard auto/N "
                "(N = the Job's completions)");
        if (*index >= *count)
            throw UserError(fmt::format("--shard {}: JOB_COMPLETION_INDEX={} is not below {}", text,
                                        *index, *count));
        return {*index, *count};
    }
    throw UserError(
        "--shard auto: not in a Slurm array job (SLURM_ARRAY_TASK_ID is unset) nor a Kubernetes "
        "Indexed Job (JOB_COMPLETION_INDEX is unset); give --shard I/N");
}

void add_slurm_options(CLI::App *cmd, SlurmArgs &a) {
    auto *flag =
        cmd->add_flag("--slurm", a.enabled,
                      "Submit the sweep to Slurm: an array job of shards and a merge job after it");
    cmd->add_option("--partition", a.partition, "Slurm partition of both jobs")->needs(flag);
    cmd->add_option("--time", a.time, "Slurm time limit of each job, e.g. 30:00")->needs(flag);
    cmd->add_option("--max-parallel", a.max_parallel, "Shards running at once (array throttle)")
        ->check(CLI::PositiveNumber)
        ->needs(flag);
    cmd->add_option("--shards", a.shards,
                    fmt::format("Array tasks (default: one per run, at most {})", kMaxSlurmShards))
        ->check(CLI::PositiveNumber)
        ->needs(flag);
    cmd->add_flag("--dry-run", a.dry_run, "Print the job scripts and the sbatch commands only")
        ->needs(flag);
}

void slurm_submit(const SlurmArgs &slurm, const SweepCommand &sweep) {
    if (sweep.runs == 0) throw UserError("--slurm: the sweep has no runs");
    const size_t shards = slurm.shards ? slurm.shards : std::min(sweep.runs, kMaxSlurmShards);
    if (shards > sweep.runs)
        throw UserError(
            fmt::format("--shards {}: the sweep has only {} runs", slurm.shards, sweep.runs));
    const fs::path dir = sweep.out_dir;
    const fs::path jobs = dir / "slurm";
    const std::string exe = shell_quote(self_executable());

    std::string head = "#!/bin/sh\n";
    if (!slurm.partition.empty()) head += fmt::format("#SBATCH --partition={}\n", slurm.partition);
    if (!slurm.time.empty()) head += fmt::format("#SBATCH --time={}\n", slurm.time);

    std::string array = head;
    array += fmt::format("#SBATCH --job-name=locksim-{}\n", sweep.name);
    array += fmt::format("#SBATCH --array=0-{}{}\n", shards - 1,
                         slurm.max_parallel > 0 ? fmt::format("%{}", slurm.max_parallel) : "");
    array += fmt::format("#SBATCH --output={}\n", (jobs / "shard-%a.log").string());
    array += "# One slice of the runs per array task; --shard auto reads SLURM_ARRAY_TASK_*.\n";
    array += fmt::format("exec {} {} {} --shard auto -q -o {}\"$SLURM_ARRAY_TASK_ID\"", exe,
                         sweep.command, shell_quote(sweep.scenario),
                         shell_quote((dir / "shards").string() + "/"));
    for (const auto &a : sweep.pass_args)
        array += " " + shell_quote(a);
    array += "\n";

    std::string merge = head;
    merge += fmt::format("#SBATCH --job-name=locksim-{}-merge\n", sweep.name);
    merge += fmt::format("#SBATCH --output={}\n", (jobs / "merge.log").string());
    merge += "# Runs after every shard succeeded; merge checks that every shard is there, once.\n";
    merge += fmt::format("{}{} merge {}", sweep.after_merge.empty() ? "exec " : "", exe,
                         shell_quote((dir / "results.json").string()));
    for (size_t i = 0; i < shards; ++i)
        merge += " " + shell_quote((dir / "shards" / std::to_string(i) / "results.json").string());
    if (!sweep.after_merge.empty()) {
        merge += " &&\n  exec " + exe;
        for (const auto &a : sweep.after_merge)
            merge += " " + shell_quote(a);
    }
    merge += "\n";

    const fs::path array_path = jobs / "sweep.sbatch", merge_path = jobs / "merge.sbatch";
    if (slurm.dry_run) {
        fmt::print("# {}\n{}\n# {}\n{}\n", array_path.string(), array, merge_path.string(), merge);
        fmt::print("# submit with:\n#   id=$(sbatch --parsable {})\n", array_path.string());
        fmt::print("#   sbatch --parsable --dependency=afterok:$id --kill-on-invalid-dep=yes {}\n",
                   merge_path.string());
        return;
    }
    fs::create_directories(jobs);
    write_whole_file(array_path.string(), array);
    write_whole_file(merge_path.string(), merge);
    const std::string array_id = submit({"sbatch", "--parsable", array_path.string()});
    const std::string merge_id = submit({"sbatch", "--parsable", "--dependency=afterok:" + array_id,
                                         "--kill-on-invalid-dep=yes", merge_path.string()});
    fmt::print("submitted array job {} ({} shards of {} runs) and merge job {}\n", array_id, shards,
               sweep.runs, merge_id);
    fmt::print("results: {}\n", (dir / "results.json").string());
}

}  // namespace locksim::cli
