#include "oracles/subject.hpp"

#include <nlohmann/json.hpp>

namespace flce {

std::string_view name(SubjectStatus s) {
  switch (s) {
    case SubjectStatus::OK: return "ok";
    case SubjectStatus::ERROR: return "error";
    case SubjectStatus::UNSUPPORTED: return "unsupported";
  }
  return "?";
}

std::string Environment::to_json() const {
  nlohmann::ordered_json j{{"python", python}, {"torch", torch}, {"triton", triton}, {"cuda", cuda},
                           {"gpu", gpu},       {"capability", capability}, {"platform", platform}, {"liger", liger}};
  return j.dump();
}

}  // namespace flce
