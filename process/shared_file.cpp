#include "process/shared_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace flce {

std::string shared_memory_dir() {
  if (::access("/dev/shm", W_OK | X_OK) == 0) return "/dev/shm";
  return std::filesystem::temp_directory_path().string();
}

SharedFile::SharedFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd_ < 0) throw std::runtime_error("cannot create " + path_ + ": " + std::strerror(errno));
}

SharedFile::~SharedFile() {
  unmap();
  if (fd_ >= 0) ::close(fd_);
}

void SharedFile::unmap() {
  if (base_) ::munmap(base_, mapped_);
  base_ = nullptr;
  mapped_ = 0;
}

char* SharedFile::reserve(size_t bytes) {
  if (bytes == 0) bytes = 1;
  if (base_ && writable_ && mapped_ >= bytes) return base_;
  struct stat st{};
  if (::fstat(fd_, &st) != 0) throw std::runtime_error("fstat " + path_ + ": " + std::strerror(errno));
  size_t size = std::max(bytes, static_cast<size_t>(st.st_size));
  // Grow in steps so a campaign's varying shapes do not remap on every case.
  if (size > static_cast<size_t>(st.st_size)) {
    size = std::max(size, static_cast<size_t>(st.st_size) * 2);
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0)
      throw std::runtime_error("cannot grow " + path_ + " to " + std::to_string(size) + " bytes: " + std::strerror(errno));
  }
  unmap();
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
  if (p == MAP_FAILED) throw std::runtime_error("mmap " + path_ + ": " + std::strerror(errno));
  base_ = static_cast<char*>(p);
  mapped_ = size;
  writable_ = true;
  return base_;
}

const char* SharedFile::view(size_t* size) {
  struct stat st{};
  if (::fstat(fd_, &st) != 0) throw std::runtime_error("fstat " + path_ + ": " + std::strerror(errno));
  const size_t now = static_cast<size_t>(st.st_size);
  if (!base_ || mapped_ != now) {
    unmap();
    if (now > 0) {
      void* p = ::mmap(nullptr, now, PROT_READ, MAP_SHARED, fd_, 0);
      if (p == MAP_FAILED) throw std::runtime_error("mmap " + path_ + ": " + std::strerror(errno));
      base_ = static_cast<char*>(p);
      mapped_ = now;
      writable_ = false;
    }
  }
  *size = mapped_;
  return base_;
}

}  // namespace flce
