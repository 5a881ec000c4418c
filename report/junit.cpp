#include "report/junit.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "report/xml_escape.hpp"

namespace flce {

namespace {

struct Child {
  std::string operator()(const JUnitPass& p) const {
    return p.system_out.empty() ? "" : "<system-out>" + xml_escape(p.system_out) + "</system-out>";
  }
  std::string operator()(const JUnitFailure& f) const {
    return fmt::format("<failure type=\"{}\" message=\"{}\">{}</failure>", xml_escape(f.type), xml_escape(f.message),
                       xml_escape(f.body));
  }
  std::string operator()(const JUnitSkipped& s) const {
    return fmt::format("<skipped message=\"{}\"/>", xml_escape(s.message));
  }
};

std::string testcase(const JUnitCase& c) {
  return fmt::format("    <testcase classname=\"{}\" name=\"{}\"{}>{}</testcase>\n", xml_escape(c.classname),
                     xml_escape(c.name), c.time_s ? fmt::format(" time=\"{:.3f}\"", *c.time_s) : "",
                     std::visit(Child{}, c.result));
}

}  // namespace

std::string render_junit(const JUnit& junit) {
  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
  for (auto& suite : junit.suites) {
    auto failures = std::count_if(suite.cases.begin(), suite.cases.end(), [](auto& c) { return c.failed(); });
    auto skipped = std::count_if(suite.cases.begin(), suite.cases.end(), [](auto& c) { return c.skipped(); });
    s += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
                     xml_escape(suite.name), suite.cases.size(), failures, skipped, suite.time_s);
    for (auto& c : suite.cases) s += testcase(c);
    s += "  </testsuite>\n";
  }
  return s + "</testsuites>\n";
}

}  // namespace flce
