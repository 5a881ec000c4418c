// What each verb's exit status means, printed at the end of its --help. One table, so a
// verb cannot be added without saying what its exit codes are (tests/cli_conventions.cmake
// asks every verb's --help for them).
#include <map>
#include <stdexcept>
#include <string>

#include "cli/commands.hpp"

namespace flce::cli {

namespace {

const char* const kCommon = "  2  bad input (invalid case or flags, unknown or unimportable subject)\n"
                            "  4  flce itself failed";

// The verb's own lines and the common ones, in the order of the codes.
std::string codes(const std::string& verb_specific) {
  std::multimap<int, std::string> lines;
  auto add = [&](const std::string& text) {
    size_t at = 0;
    while (at < text.size()) {
      size_t nl = text.find('\n', at);
      if (nl == std::string::npos) nl = text.size();
      const std::string line = text.substr(at, nl - at);
      lines.emplace(std::stoi(line), line);
      at = nl + 1;
    }
  };
  add(verb_specific);
  add(kCommon);
  std::string out = "Exit codes:\n";
  for (auto& [code, line] : lines) out += line + "\n";
  return out;
}

const std::map<std::string, std::string>& table() {
  static const std::map<std::string, std::string> t = {
      {"case", codes("  0  every file valid / printed")},
      {"validate", codes("  0  every file valid")},
      {"example", codes("  0  printed")},
      {"canonical", codes("  0  printed")},
      {"sample", codes("  0  printed")},
      {"reference", codes("  0  printed")},
      {"run", codes("  0  every oracle within bounds\n  1  a finding (out of bounds, dtype, trace-time error)\n"
                    "  3  the subject cannot run this case here, or lacks a parameter it uses "
                    "(unsupported-by-subject:<param>); nothing judged")},
      {"calibrate", codes("  0  no case out of bounds\n  1  some case out of bounds")},
      {"main", codes("  0  the corpus replayed as expected\n  1  a corpus case regressed or changed")},
      {"env", codes("  0  printed")},
      {"replay", codes("  0  nothing regressed\n  1  a case regressed or changed")},
      {"campaign", codes("  0  no finding (with --known or --store: no new one)\n  1  findings (with --known or "
                         "--store: a new or regressed one; report.md lists them)\n"
                         "  2  the subject is unusable: its first cases all failed at the call, with one error; "
                         "a --store of another subject or not a store")},
      {"worker", codes("  0  the campaign closed the pipe, or the subject's process died")},
      {"campaign-merge", codes("  0  no finding in any shard\n  1  findings")},
      {"repro", codes("  0  REPRODUCED (--check: and the script alone gives the same verdict)\n  1  NOT REPRODUCED (--check: or the script alone gives another verdict)\n  3  the subject cannot run this case here")},
      {"minimize", codes("  0  a smaller case with the same outcome written\n  1  the case does not fail")},
      {"gate", codes("  0  no regression\n  1  regressions\n  3  nothing could be judged")},
      {"bisect", codes("  0  the first bad commit found\n"
                       "  1  not found (good and bad one commit, bad without the bad outcome, good with it, good "
                       "without the --expect-good outcome, an end that cannot run) or ambiguous (skipped commits in "
                       "the way; the candidates are listed)")},
      {"report", codes("  0  written\n  2  not a finding: no case file, or no report.json and no --subject; a bad "
                       "--matrix or --bisect")},
      {"conformance", codes("  0  table written (findings and disagreements are in it)\n"
                            "  2  bad input (--subjects names an unknown subject, or one twice); nothing run")},
      {"triage", codes("  0  the state is set\n  2  bad input: no such store or finding, an unknown --state, "
                       "a state without what it needs (triaged: --link and --owner; wontfix: --why)")},
      {"store", codes("  0  done\n  2  bad input: not a flce store, a store of another subject")},
      {"list", codes("  0  printed\n  2  not a flce store")},
      {"export", codes("  0  written\n  2  not a flce store")},
      {"record", codes("  0  recorded\n  2  not a flce store, a store of another subject, no campaign report")},
      {"identity", codes("  0  printed / index written\n  2  no such directory, repository or ref")},
      {"matrix", codes("  0  table written\n  1  --strict and a cell contradicts the corpus expectation")},
      {"bench", codes("  0  measured\n  3  no CUDA device here")},
      {"reference-cuda", codes("  0  every output within bounds\n  1  out of bounds\n  3  no CUDA device here")},
  };
  return t;
}

void footer_all(CLI::App* app) {
  for (CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    auto it = table().find(sub->get_name());
    if (it == table().end()) throw std::logic_error("verb '" + sub->get_name() + "' has no exit codes in cli/exit_codes.cpp");
    sub->footer(it->second);
    footer_all(sub);
  }
}

}  // namespace

void add_exit_code_footers(CLI::App& app) {
  app.footer(codes("  0  ok\n  1  a finding\n  3  the subject cannot run here") + "Each verb's --help says what its own codes mean.");
  footer_all(&app);
}

}  // namespace flce::cli
