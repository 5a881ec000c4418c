// Does the reproducer run alone? An emitted repro.py is run the way a maintainer runs it on
// their machine: a fresh interpreter in an empty directory, fresh Inductor and Triton caches,
// none of flce's variables, and flce's subjects/ on PYTHONPATH only for flce's own subjects (as
// the script's header asks). Its last stdout line is its verdict; flce compares it with its own.
// A script that gives another verdict alone than flce does in its worker is a reproducer that
// would fail its maintainer: `flce repro --check` exits 1 on it and `flce report` says so.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace flce {

struct ScriptCheck {
  std::string verdict;  // "REPRODUCED", "NOT REPRODUCED", "SKIP"; "" when it printed none
  std::string line;     // its last stdout line
  int exit = -1;        // its exit status; -1: killed at the timeout, by a signal, or never started
  bool timed_out = false;  // killed at the timeout: no verdict either way
  double seconds = 0;
  std::string tail;     // its last lines of stdout and stderr
  std::string how;      // the interpreter and what was set apart, for the report
  nlohmann::json to_json() const;
};

struct ScriptCheckOptions {
  std::string python;               // empty: the subjects' interpreter (default_python())
  bool flce_subjects = false;       // the script imports flce's own subjects (subjects/ on PYTHONPATH)
  double timeout_s = 900;
};

// Whether `subject`'s script imports flce's own subjects/: every built-in but liger and
// torch-native ("+workaround" included); a plug-in ("pkg.module:callable") loads from its own path.
bool script_imports_flce_subjects(const std::string& subject);

// Never throws for the script's own failure; throws std::runtime_error when it cannot be started
// (no such script, no interpreter, no temporary directory).
ScriptCheck check_script_alone(const std::string& script_path, const ScriptCheckOptions& opt);

// Whether the script alone answered as flce did: the same verdict line (a compile failure at any
// stage: same_failure), or flce's "cannot run this case here" (its exit 3) against the script's
// SKIP (exit 2).
bool same_verdict(const ScriptCheck& c, const std::string& flce_line, int flce_exit);
// The outcome a verdict line names: "REPRODUCED: X" and "NOT REPRODUCED: got X, expected Y" -> X.
std::string outcome_in(const std::string& line);

// Where `flce repro --check -o FILE` keeps a check beside its script (repro.py -> repro.check.json).
std::string check_path_for(const std::string& script_path);

// A script's fingerprint (FNV-1a 64, hex): a check is quoted only for the text it ran.
std::string script_fingerprint(const std::string& text);

// The command that reproduces `case_path` in flce ("flce repro CASE --subject S [--subject-git R|--subject-path P]").
std::string reproduce_command(const std::string& case_path, const std::string& subject, const std::string& subject_path,
                              const std::string& subject_git = "");

// Writes check_path_for(script_path): the script's fingerprint, flce's verdict line and exit,
// the check, whether they agree, and `reproduce_with`. Returns whether they agree.
bool write_check(const std::string& script_path, const std::string& flce_line, int flce_exit, const ScriptCheck& c,
                 const std::string& reproduce_with);

}  // namespace flce
