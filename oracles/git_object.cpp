#include "oracles/git_object.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <sstream>
#include <vector>

namespace flce {

namespace fs = std::filesystem;

namespace {

uint32_t rol(uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

// FIPS 180-4 SHA-1 over a whole message (git's trees and sources are small).
std::array<uint8_t, 20> sha1(std::string_view data) {
  uint32_t h[5] = {0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
  std::string m(data);
  const uint64_t bits = static_cast<uint64_t>(data.size()) * 8;
  m.push_back(static_cast<char>(0x80));
  while (m.size() % 64 != 56) m.push_back('\0');
  for (int i = 7; i >= 0; --i) m.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  for (size_t off = 0; off < m.size(); off += 64) {
    uint32_t w[80];
    for (int i = 0; i < 16; ++i) {
      const auto* p = reinterpret_cast<const uint8_t*>(m.data() + off + 4 * i);
      w[i] = (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
    }
    for (int i = 16; i < 80; ++i) w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      uint32_t f, k;
      if (i < 20) f = (b & c) | (~b & d), k = 0x5A827999;
      else if (i < 40) f = b ^ c ^ d, k = 0x6ED9EBA1;
      else if (i < 60) f = (b & c) | (b & d) | (c & d), k = 0x8F1BBCDC;
      else f = b ^ c ^ d, k = 0xCA62C1D6;
      const uint32_t t = rol(a, 5) + f + e + k + w[i];
      e = d, d = c, c = rol(b, 30), b = a, a = t;
    }
    h[0] += a, h[1] += b, h[2] += c, h[3] += d, h[4] += e;
  }
  std::array<uint8_t, 20> out{};
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<uint8_t>(h[i] >> (24 - 8 * j));
  return out;
}

std::string hex(const std::array<uint8_t, 20>& d) {
  std::string s;
  for (uint8_t b : d) s += fmt::format("{:02x}", b);
  return s;
}

std::array<uint8_t, 20> object_id(std::string_view type, std::string_view body) {
  std::string m = fmt::format("{} {}", type, body.size());
  m.push_back('\0');
  m.append(body);
  return sha1(m);
}

std::string read_all(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw GitObjectError(fmt::format("{}: cannot read it", p.string()));
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) throw GitObjectError(fmt::format("{}: read failed", p.string()));
  return s.str();
}

struct Entry {
  std::string sort_key, mode, name;
  std::array<uint8_t, 20> id;
};

// The tree's id, or nullopt-like empty flag when it holds nothing git would keep.
bool tree_of(const fs::path& dir, std::array<uint8_t, 20>* id) {
  std::vector<Entry> entries;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) throw GitObjectError(fmt::format("{}: cannot list it: {}", dir.string(), ec.message()));
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) throw GitObjectError(fmt::format("{}: cannot list it: {}", dir.string(), ec.message()));
    const fs::path p = it->path();
    const std::string name = p.filename().string();
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0)
      throw GitObjectError(fmt::format("{}: cannot stat it: {}", p.string(), std::strerror(errno)));
    if (S_ISLNK(st.st_mode)) {
      if (is_untracked_junk(name, false)) continue;
      std::error_code e2;
      const std::string target = fs::read_symlink(p, e2).string();
      if (e2) throw GitObjectError(fmt::format("{}: cannot read the link: {}", p.string(), e2.message()));
      entries.push_back({name, "120000", name, object_id("blob", target)});
    } else if (S_ISDIR(st.st_mode)) {
      if (is_untracked_junk(name, true)) continue;
      std::array<uint8_t, 20> sub{};
      if (tree_of(p, &sub)) entries.push_back({name + "/", "40000", name, sub});
    } else if (S_ISREG(st.st_mode)) {
      if (is_untracked_junk(name, false)) continue;
      entries.push_back({name, (st.st_mode & S_IXUSR) ? "100755" : "100644", name, object_id("blob", read_all(p))});
    }  // sockets, fifos, devices: git keeps none
  }
  if (entries.empty()) return false;
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.sort_key < b.sort_key; });
  std::string body;
  for (auto& e : entries) {
    body += e.mode + " " + e.name;
    body.push_back('\0');
    body.append(reinterpret_cast<const char*>(e.id.data()), e.id.size());
  }
  *id = object_id("tree", body);
  return true;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

}  // namespace

std::string sha1_hex(std::string_view data) { return hex(sha1(data)); }

std::string git_blob_id(std::string_view content) { return hex(object_id("blob", content)); }

bool is_untracked_junk(std::string_view name, bool is_dir) {
  if (is_dir) return name == "__pycache__" || name == ".git" || ends_with(name, ".egg-info");
  return ends_with(name, ".pyc") || ends_with(name, ".pyo") || name == ".git";
}

std::string git_tree_id(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw GitObjectError(fmt::format("{}: no such directory", dir));
  std::array<uint8_t, 20> id{};
  // An empty directory: git's empty tree.
  if (!tree_of(dir, &id)) return hex(object_id("tree", ""));
  return hex(id);
}

}  // namespace flce
