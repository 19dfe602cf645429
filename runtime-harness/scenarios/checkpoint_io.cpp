#include "checkpoint_io.hpp"

#include <torch/csrc/jit/serialization/pickle.h>

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace ddph {

std::vector<char> serializeCheckpoint(const TinyModel& m, int64_t step, const at::Tensor& extra) {
  c10::Dict<std::string, at::Tensor> d;
  for (auto& p : m.params) d.insert(p.first, p.second.detach());
  d.insert("step", at::full({1}, step, at::kLong));
  d.insert("extra", extra);
  return torch::jit::pickle_save(c10::IValue(d));
}

int64_t loadCheckpoint(const std::vector<char>& bytes) {
  if (bytes.empty()) throw std::runtime_error("checkpoint file is empty");
  c10::IValue v = torch::jit::pickle_load(bytes);
  auto d = v.toGenericDict();
  return d.at("step").toTensor().item<int64_t>();
}

std::vector<char> readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error("cannot open " + path);
  return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

uint64_t fnv1a(const std::vector<char>& b) {
  uint64_t h = 1469598103934665603ull;
  for (char c : b) {
    h ^= uint8_t(c);
    h *= 1099511628211ull;
  }
  return h;
}

void writeSlowly(RankCtx& ctx, const std::string& path, const std::vector<char>& bytes, double totalS, bool truncate) {
  // Raw fds: each rank's O_TRUNC and positional writes interleave the way
  // concurrent writers really do, with no stdio buffering in between.
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | (truncate ? O_TRUNC : 0), 0644);
  if (fd < 0) throw std::runtime_error("cannot open " + path + " for writing");
  const size_t chunks = 16;
  size_t chunk = (bytes.size() + chunks - 1) / chunks;
  auto pause = std::chrono::duration<double>(totalS / double(chunks));
  for (size_t off = 0; off < bytes.size(); off += chunk) {
    size_t n = std::min(chunk, bytes.size() - off);
    if (pwrite(fd, bytes.data() + off, n, off_t(off)) != ssize_t(n)) {
      ::close(fd);
      throw std::runtime_error("write to " + path + " failed");
    }
    ctx.rec.progress();
    std::this_thread::sleep_for(pause);
  }
  ::close(fd);
}

}  // namespace ddph
