// Putting reports on disk: durable, atomic writes (a reader sees the old file or the new
// one, never a torn one, and a crash right after leaves the new one), and a Report's views
// (report/document.hpp) written to the files the caller names.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace flce {

struct Report;  // report/document.hpp

// Writes a temp file beside `path`, fsyncs it and renames it onto `path`; then syncs the
// directory. Throws std::runtime_error naming the file and the errno text.
void write_atomic(const std::filesystem::path& path, std::string_view text);
// Appends `line` and fdatasyncs it (a journal line survives a crash); returns the file's size.
uint64_t append_durable(const std::filesystem::path& path, std::string_view line);
// Makes renames inside `dir` durable.
void sync_dir(const std::filesystem::path& dir);

// The whole file; "" when it cannot be read (a worker log not written yet).
std::string read_text(const std::filesystem::path& path);

// File names under the report's directory; an empty name: that view is not written.
struct ReportFiles {
  std::string markdown = "report.md", json = "report.json", junit = "junit.xml";
};

// Writes each view the report has (Markdown blocks, a JSON payload, JUnit suites) with
// write_atomic, in that order; JSON as dump(2) and a newline.
void write_report(const std::filesystem::path& dir, const Report& report, const ReportFiles& files = {});

}  // namespace flce
