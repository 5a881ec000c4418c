// junit.xml: JUnit XML of a report's suites (report/document.hpp), for CI. Each suite's
// tests, failures and skipped attributes are counted from its cases; every name, message
// and body is escaped (report/xml_escape.hpp).
#pragma once
#include <string>

#include "report/document.hpp"

namespace flce {

std::string render_junit(const JUnit& junit);

}  // namespace flce
