// Trace-time failure signatures: the known ones are data (judge/signatures.json);
// anything else gets a stable bucket id from the root exception's type and normalized
// message, so two runs of one bug share an id (the innermost torch frame is kept, not hashed).
#pragma once
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "oracles/subject.hpp"

namespace flce {

struct KnownSignature {
  std::string id, title, stage_hint;
  std::vector<std::string> patterns, frame_patterns, upstream;
  std::string expected_torch;  // e.g. ">=2.8,<2.13"
  // A catch-all (fake-tensor-call): it names where tracing broke, not one bug, so whatever keys a
  // known signature's behaviour across graphs (one ladder per campaign) does not apply to it.
  bool generic = false;
};

struct Signature {
  std::string id;         // known id or "bucket-<hash>"
  bool known = false;
  bool generic = false;   // a known catch-all (KnownSignature::generic)
  // One bug whatever the graph: its ladder is walked once per campaign (LadderMemo::any_graph).
  bool shares_ladder() const { return known && !generic; }
  std::string title;      // known title or "Type: normalized message"
  std::string matched;    // the message text that matched
  std::string innermost_torch_frame;
  std::vector<std::string> upstream;
  std::optional<bool> expected_here;  // for known ones: does the table expect it on this torch?
};

// An error text of the CUDA errors that leave a process's CUDA context unusable (an illegal
// address, a device-side assert, ...): nothing more runs in that process, the backend ladder
// included, and a campaign restarts its worker.
bool cuda_context_lost(const std::string& text);
// signatures.json's entries for them: every one's id starts with "cuda-" (an illegal memory
// access, an address in the wrong space, cuBLAS failing to launch after an earlier fault), so a
// new one there needs no change here.
inline bool is_cuda_fault_signature(const std::string& id) { return id.rfind("cuda-", 0) == 0; }

class SignatureTable {
 public:
  static SignatureTable load(const std::string& path);  // throws std::runtime_error naming the entry
  static SignatureTable load_default();                  // FLCE_SOURCE_DIR/judge/signatures.json
  Signature classify(const ErrorChain& chain, const std::string& torch_version) const;
  const std::vector<KnownSignature>& entries() const { return entries_; }

 private:
  std::vector<KnownSignature> entries_;
};

std::string normalize_message(const std::string& msg);
std::string innermost_torch_frame(const ErrorChain& chain);
// ">=2.8,<2.13" style ranges against "2.13.0+cu130"
bool version_in_range(const std::string& version, const std::string& range);

// A stable directory name for a finding's key (its cause or outcome line): readable slug + hash
// (same key, same id).
std::string finding_id(const std::string& key);

// An expected outcome may name several ("a | b | c", from an expectation's `outcome` array): a
// memory-safety bug reads what the allocator left, so one bug shows one of a few symptoms.
inline constexpr std::string_view kOutcomeSeparator = " | ";
// True when `got` is `expected` or one of its alternatives.
bool outcome_matches(const std::string& expected, const std::string& got);
// The alternatives of an expected outcome ("a | b" -> {a, b}; "a" -> {a}).
std::vector<std::string> outcome_alternatives(const std::string& expected);

// An outcome line "<signature>@compiled:<stage>": the compiled run raised (trace, lowering,
// codegen), as opposed to a numeric finding ("judge:..."), a crash or a timeout.
bool is_compile_failure(const std::string& outcome);
// The same failure, perhaps seen at another stage: a compile failure's stage names where the
// ladder first showed it, and a campaign's memo of a walked signature moves later sightings from
// the case's backend ("inductor") to the first failing stage ("eager").
bool same_failure(const std::string& a, const std::string& b);

// Outcome lines that are no verdict on the subject: "unsupported" (cannot run here) and
// "unsupported-by-subject:<param>[+<param>...]" (the subject lacks a parameter the case uses).
inline constexpr std::string_view kUnsupportedBySubject = "unsupported-by-subject:";
bool is_unsupported_outcome(const std::string& outcome);
// The parameters an "unsupported-by-subject:a+b" outcome names ({a, b}); empty for any other.
std::vector<std::string> unsupported_params(const std::string& outcome);

}  // namespace flce
