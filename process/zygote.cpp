#include "process/zygote.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

namespace flce {

namespace {

struct Fds {  // closes what it holds unless released
  std::vector<int> fds;
  ~Fds() {
    for (int fd : fds)
      if (fd >= 0) ::close(fd);
  }
};

bool send_request(int sock, const std::string& body, const int (&pass)[3]) {
  iovec iov{const_cast<char*>(body.data()), body.size()};
  alignas(cmsghdr) char ctl[CMSG_SPACE(sizeof pass)] = {};
  msghdr m{};
  m.msg_iov = &iov;
  m.msg_iovlen = 1;
  m.msg_control = ctl;
  m.msg_controllen = sizeof ctl;
  cmsghdr* c = CMSG_FIRSTHDR(&m);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof pass);
  std::memcpy(CMSG_DATA(c), pass, sizeof pass);
  for (;;) {
    const ssize_t n = ::sendmsg(sock, &m, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    return n == static_cast<ssize_t>(body.size());
  }
}

}  // namespace

bool spawn_through_zygote(Process& p, const ProcessSpec& spec, const std::string& socket_path, double wait_s,
                          std::string* why) {
  sockaddr_un addr{};
  if (socket_path.empty() || socket_path.size() >= sizeof addr.sun_path) {
    *why = fmt::format("no usable zygote socket path ({} characters)", socket_path.size());
    return false;
  }
  std::optional<ChildFds> fds;
  try {
    fds.emplace(spec);
  } catch (const std::exception& e) {
    *why = e.what();
    return false;
  }
  Fds own;
  const int sock = ::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (sock < 0) {
    *why = std::string("socket: ") + std::strerror(errno);
    return false;
  }
  own.fds.push_back(sock);
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size());
  // A campaign starts its zygote and its first workers together: the socket appears once that
  // Python has started (a tenth of a second, more on a loaded box).
  const auto connect_until = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (::connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    if ((err != ENOENT && err != ECONNREFUSED && err != EINTR) || std::chrono::steady_clock::now() >= connect_until) {
      *why = fmt::format("cannot reach the zygote at {}: {}", socket_path, std::strerror(err));
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  nlohmann::json env = nlohmann::json::object();
  for (auto& kv : merged_environment(spec.env, spec.unset)) env[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
  rlimit rl{};
  const bool limited = ::getrlimit(RLIMIT_DATA, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY;
  std::error_code ec;
  nlohmann::json req{{"exe", spec.exe},
                     {"args", spec.args},
                     {"env", env},
                     {"cwd", spec.cwd.empty() ? std::filesystem::current_path(ec).string() : spec.cwd},
                     {"rlimit_data", limited ? static_cast<uint64_t>(rl.rlim_cur) : 0}};
  const int pass[3] = {fds->child_in, fds->child_out, fds->log};
  if (!send_request(sock, req.dump(), pass)) {
    *why = fmt::format("cannot send to the zygote: {}", std::strerror(errno));
    return false;
  }

  // Its answer comes once its preload ended (a host asked for at a campaign's start waits for it).
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(wait_s);
  char msg[4096];
  ssize_t n = -1;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      *why = fmt::format("no answer from the zygote within {:g} s", wait_s);
      return false;
    }
    pollfd pf{sock, POLLIN, 0};
    if (::poll(&pf, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000))) <= 0) continue;
    n = ::recv(sock, msg, sizeof msg - 1, 0);
    if (n < 0 && errno == EINTR) continue;
    break;
  }
  if (n <= 0) {
    *why = "the zygote closed the connection without an answer";
    return false;
  }
  const nlohmann::json reply = nlohmann::json::parse(std::string(msg, static_cast<size_t>(n)), nullptr, false);
  if (!reply.is_object() || !reply.contains("pid") || !reply["pid"].is_number_integer()) {
    *why = reply.is_object() && reply.contains("refused") ? "the zygote refused: " + reply["refused"].get<std::string>()
                                                          : "unreadable answer from the zygote";
    return false;
  }
  // The host holds its ends now; ours are the write end of its stdin, the read end of its
  // stdout, and the connection its exit comes back on.
  fds->close_child_ends();
  own.fds.clear();
  p.adopt(static_cast<pid_t>(reply["pid"].get<int64_t>()), fds->our_in, fds->our_out, sock);
  fds->release_ours();
  return true;
}

std::string new_zygote_socket_path() {
  std::string tmpl = (std::filesystem::temp_directory_path() / "flce-zygote-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) return "";
  const std::string path = tmpl + "/socket";
  return path.size() < sizeof(sockaddr_un{}.sun_path) ? path : "";
}

}  // namespace flce
