#include "report/write.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "report/document.hpp"
#include "report/junit.hpp"
#include "report/markdown.hpp"

namespace flce {

namespace fs = std::filesystem;

namespace {

[[noreturn]] void fail(const std::string& what, const fs::path& p) {
  throw std::runtime_error(fmt::format("{} {}: {}", what, p.string(), std::strerror(errno)));
}

void write_all(int fd, std::string_view text, const fs::path& p) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail("cannot write", p);
    text.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

// A rename is durable only once the directory entry is on disk.
void sync_dir(const fs::path& dir) {
  int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) fail("cannot open directory", dir);
  ::fsync(fd);
  ::close(fd);
}

void write_atomic(const fs::path& path, std::string_view text) {
  fs::path tmp = path;
  tmp += fmt::format(".tmp.{}", ::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create", tmp);
  try {
    write_all(fd, text, tmp);
    if (::fsync(fd) != 0) fail("cannot fsync", tmp);
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmp.c_str());
    errno = saved;
    fail("cannot rename onto", path);
  }
  sync_dir(path.parent_path());
}

void write_report(const fs::path& dir, const Report& report, const ReportFiles& files) {
  if (!files.markdown.empty() && !report.markdown.empty())
    write_atomic(dir / files.markdown, render_markdown(report.markdown));
  if (!files.json.empty() && report.json) write_atomic(dir / files.json, report.json->dump(2) + "\n");
  if (!files.junit.empty() && !report.junit.empty()) write_atomic(dir / files.junit, render_junit(report.junit));
}

uint64_t append_durable(const fs::path& path, std::string_view line) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot open", path);
  write_all(fd, line, path);
  ::fdatasync(fd);
  off_t size = ::lseek(fd, 0, SEEK_END);
  ::close(fd);
  return static_cast<uint64_t>(size);
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace flce
