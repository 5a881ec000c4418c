// A file in shared memory (/dev/shm, else TMPDIR) that two processes map: flce writes a
// case's inputs into one, the subject process writes its outputs into another, and each
// side reads the other's without a copy through a pipe. The writer grows it; the reader
// maps whatever size it has now.
#pragma once
#include <cstddef>
#include <string>

namespace flce {

class SharedFile {
 public:
  SharedFile() = default;
  explicit SharedFile(std::string path);  // creates (truncates) the file; throws std::runtime_error
  SharedFile(const SharedFile&) = delete;
  SharedFile& operator=(const SharedFile&) = delete;
  ~SharedFile();

  // Writer: at least `bytes` mapped read-write (the file grows, never shrinks).
  char* reserve(size_t bytes);
  // Reader: the file's current contents, mapped read-only (remapped when it grew).
  const char* view(size_t* size);
  const std::string& path() const { return path_; }

 private:
  void unmap();
  std::string path_;
  int fd_ = -1;
  char* base_ = nullptr;
  size_t mapped_ = 0;
  bool writable_ = false;
};

// Where such files go: /dev/shm when it is a writable directory, else the temp directory.
std::string shared_memory_dir();

}  // namespace flce
