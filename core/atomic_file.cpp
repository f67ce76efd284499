#include "core/atomic_file.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kport::core {

namespace fs = std::filesystem;

namespace {

std::atomic<bool> durable_writes{true};

error io_error(std::string_view what, const std::string& path) {
  return fail(error_code::io, fmt::format("cannot {} `{}`: {}", what, path,
                                          std::strerror(errno)));
}

} // namespace

void set_durable_writes(bool durable) noexcept {
  durable_writes.store(durable, std::memory_order_relaxed);
}

result<void> write_file_atomic(const std::string& path,
                               std::string_view bytes) {
  fs::path target{path};
  auto dir = target.has_parent_path() ? target.parent_path() : fs::path{"."};
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return fail(error_code::io, fmt::format("cannot create folder `{}`: {}",
                                            dir.string(), ec.message()));
  auto tmp = (dir / ("." + target.filename().string() + ".tmpXXXXXX")).string();
  int fd = ::mkstemp(tmp.data());
  if (fd < 0)
    return io_error("create a temporary file for", path);
  std::size_t done = 0;
  while (done < bytes.size()) {
    auto w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0) {
      if (errno == EINTR)
        continue;
      auto err = io_error("write", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return err;
    }
    done += static_cast<std::size_t>(w);
  }
  ::fchmod(fd, 0644);
  bool durable = durable_writes.load(std::memory_order_relaxed);
  if ((durable && ::fsync(fd) != 0) || ::close(fd) != 0) {
    auto err = io_error("flush", tmp);
    ::unlink(tmp.c_str());
    return err;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    auto err = io_error("rename into place", path);
    ::unlink(tmp.c_str());
    return err;
  }
  // The rename is durable only once the folder entry is on disk.
  int dfd =
      durable ? ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return {};
}

result<std::string> read_file(const std::string& path, std::size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return io_error("read", path);
  struct stat st {};
  if (::fstat(fd, &st) == 0 && static_cast<std::size_t>(st.st_size) > limit) {
    ::close(fd);
    return fail(error_code::io,
                fmt::format("`{}` is {} bytes, over the limit of {} bytes",
                            path, st.st_size, limit));
  }
  std::string out;
  char buf[65536];
  for (;;) {
    auto r = ::read(fd, buf, sizeof(buf));
    if (r < 0) {
      if (errno == EINTR)
        continue;
      auto err = io_error("read", path);
      ::close(fd);
      return err;
    }
    if (r == 0)
      break;
    out.append(buf, static_cast<std::size_t>(r));
    if (out.size() > limit) {
      ::close(fd);
      return fail(
          error_code::io,
          fmt::format("`{}` is over the limit of {} bytes", path, limit));
    }
  }
  ::close(fd);
  return out;
}

} // namespace kport::core
