// Each verb of the `flce` CLI registers itself on the app (one file per verb family).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>

#include "case/outputs.hpp"
#include "case/case.hpp"

namespace flce::cli {

// Exit codes (docs/cli.md "Exit codes").
enum Exit : int {
  kOk = 0,           // done; every oracle within bounds
  kFinding = 1,      // a verdict failed: out of bounds, dtype, trace-time error, regression
  kBadInput = 2,     // invalid case, unknown subject, bad flags
  kUnsupported = 3,  // the subject cannot run here (no CUDA, op missing); nothing judged
  kInternal = 4,     // flce itself failed
};

// Handlers set this; main returns it.
int& exit_code();

void add_case_commands(CLI::App& app);
void add_reference_command(CLI::App& app);
void add_run_commands(CLI::App& app);   // run, calibrate, main (need the Python oracles)
void add_replay_command(CLI::App& app);  // replay the pinned corpus (needs the Python oracles)
void add_campaign_commands(CLI::App& app);  // campaign, worker (issue: nightly campaigns)
void add_campaign_merge_command(CLI::App& app);  // campaign-merge (multi-host shards)
void add_repro_commands(CLI::App& app);     // repro, minimize
void add_gate_commands(CLI::App& app);      // gate
void add_matrix_commands(CLI::App& app);    // matrix
// expected_only: print what each case is expected to show on this torch and device, run nothing.
// subject_path: the subjects' source tree ("" the installed ones); expectations with a
// subject_version apply where the subject's version string (as loaded from there) contains it.
int replay_corpus(const std::string& expectations, const std::string& only, bool as_json, bool expected_only = false,
                  const std::string& subject_path = "");
void add_cuda_commands(CLI::App& app);
void add_bisect_command(CLI::App& app);     // bisect (first commit of a repository showing an outcome)
void add_report_command(CLI::App& app);     // report (a finding as an upstream issue body)
void add_conformance_command(CLI::App& app);  // conformance (one campaign per subject, one table)
void add_nights_commands(CLI::App& app);      // triage, store list|export|record, identity (cmd_nights.cpp)
// What names a subject run without a tree (no --subject-path): "builtin NAME (flce VERSION)".
std::string builtin_identity(const std::string& subject);
// --subject-git REPO@REF (cli/subject_git.cpp): the option, and its resolution into the
// subject path (REF's exported tree; `subject_path`, when given, is a directory inside it).
// false, with the message printed and exit code 2 set, on bad input; without a spec, a
// --subject-path that is not a directory is that bad input. `record`, when given and a spec
// was: {"repo" (absolute), "ref", "commit", "subject"}, what report.json and state.json keep
// as "subject_git" so `flce report` can say which tree ran.
void add_subject_git_option(CLI::App* cmd, std::string& spec);
bool resolve_subject_git(const std::string& spec, std::string& subject_path, const char* verb,
                         nlohmann::json* record = nullptr);
// Checks made before anything runs (cli/input_checks.cpp); each prints "flce VERB: FLAG PATH:
// why" and sets exit code 2 when it returns false. Empty values pass (the flag was not given).
bool check_dir_option(const std::string& path, const char* flag, const char* verb);    // an existing directory
bool check_out_option(const std::string& path, const char* flag, const char* verb);    // a directory or nothing yet
bool check_file_option(const std::string& path, const char* flag, const char* verb);   // a readable regular file
bool check_out_file_option(const std::string& path, const char* flag, const char* verb);  // a file to write
// The subject host's `capabilities` answer: refuses a subject whose plug-in cannot be imported,
// lacks the attribute named, or whose callable cannot take FLCE's call (params.py). Starts the host.
bool check_subject_usable(const std::string& subject, const std::string& subject_path, const char* verb);
// Every verb's --help ends with what its exit codes mean (cli/exit_codes.cpp).
void add_exit_code_footers(CLI::App& app);  // bench, reference-cuda (need CUDA)

}  // namespace flce::cli
