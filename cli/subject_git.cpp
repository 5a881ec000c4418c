// --subject-git REPO@REF on the verbs that run one subject (run, campaign, minimize, repro):
// the commit's tree from the cache (oracles/subject_tree.hpp) becomes the subject path.
#include <cstdio>
#include <filesystem>

#include "cli/commands.hpp"
#include "oracles/subject_tree.hpp"

namespace flce::cli {

void add_subject_git_option(CLI::App* cmd, std::string& spec) {
  cmd->add_option("--subject-git", spec,
                  "REPO@REF: run the subject from REF's tree, exported with git archive into "
                  "${XDG_CACHE_HOME:-~/.cache}/flce/trees/<commit>/ (REPO itself is only read); its src/ "
                  "(or root) is the subject path, or --subject-path inside it")
      ->type_name("REPO@REF");
}

bool resolve_subject_git(const std::string& spec, std::string& subject_path, const char* verb, nlohmann::json* record) {
  if (spec.empty()) return check_dir_option(subject_path, "--subject-path", verb);
  try {
    SubjectTree t = export_subject_tree(parse_git_spec(spec), subject_path);
    std::fprintf(stderr, "flce %s: --subject-git %s: commit %s (%s), subject path %s\n", verb, spec.c_str(),
                 t.commit.substr(0, 12).c_str(), t.subject_line.c_str(), t.subject_path.c_str());
    subject_path = t.subject_path;
    std::error_code ec;
    const std::filesystem::path repo = std::filesystem::absolute(t.repo, ec);
    if (record)
      *record = {{"repo", ec ? t.repo : repo.lexically_normal().string()}, {"ref", t.ref}, {"commit", t.commit},
                 {"subject", t.subject_line}};
    return true;
  } catch (const SubjectTreeError& e) {
    std::fprintf(stderr, "flce %s: --subject-git %s: %s\n", verb, spec.c_str(), e.what());
    exit_code() = kBadInput;
    return false;
  }
}

}  // namespace flce::cli
