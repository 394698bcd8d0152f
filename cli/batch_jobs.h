// Sweeps on a batch cluster.
//
// `--shard I/N | auto | auto/N` chooses the slice of a sweep that this process runs. `auto`
// takes the slice from the environment of the job that started it:
//   Slurm array job          index SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN, count
//                            SLURM_ARRAY_TASK_COUNT (or MAX - MIN + 1); the array must be
//                            contiguous (no step, no list);
//   Kubernetes Indexed Job   index JOB_COMPLETION_INDEX, count N from `--shard auto/N` (the
//                            Job's `completions`; Kubernetes gives a pod no count).
// A count written as `auto/N` must agree with Slurm's when both are known.
//
// `sweep --slurm` writes an array job (one task per shard, each writing
// DIR/shards/<i>/results.json) and a merge job that depends on it (afterok) and joins the shard
// files into DIR/results.json, then submits both with sbatch (`--dry-run`: prints them only).
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace locksim::cli {

struct Shard {
    size_t index = 0;
    size_t count = 1;
    std::string text() const;  // "I/N", as results files record it
};

// Parses --shard; `env` is the process environment (name -> value). UserError (exit 2) with
// the reason when the text is malformed or `auto` finds no batch scheduler.
Shard resolve_shard(const std::string &text, const std::map<std::string, std::string> &env);

// The process environment as resolve_shard takes it.
std::map<std::string, std::string> process_environment();

struct SlurmArgs {
    bool enabled = false;
    std::string partition;
    std::string time;      // Slurm's --time, e.g. 30:00
    int max_parallel = 0;  // array throttle (%K); 0: none
    size_t shards = 0;     // array tasks; 0: one per run, at most kMaxSlurmShards
    bool dry_run = false;
};

inline constexpr size_t kMaxSlurmShards = 1000;  // Slurm's default MaxArraySize is 1001

// What the shards run: the scenario and the options that choose its runs, passed on as given.
struct SweepCommand {
    std::string command = "sweep";       // the subcommand each shard runs (sweep, robust)
    std::string scenario;                // absolute path
    std::vector<std::string> pass_args;  // --seed, --strategy, -j, --no-wall-clock ...
    std::string out_dir;                 // absolute
    std::string name;                    // the scenario's name (job names)
    size_t runs = 0;                     // runs in the whole sweep
    // After the merge, this subcommand with these arguments on the merged file (robust judges
    // it); empty: none.
    std::vector<std::string> after_merge;
};

// --slurm, --partition, --time, --max-parallel, --shards, --dry-run (each needs --slurm).
void add_slurm_options(CLI::App *cmd, SlurmArgs &a);

// Writes (or with dry_run prints) the two job scripts and submits them with sbatch.
void slurm_submit(const SlurmArgs &slurm, const SweepCommand &sweep);

}  // namespace locksim::cli
