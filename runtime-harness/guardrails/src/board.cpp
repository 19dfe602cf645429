#include "ddp_guardrails/board.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdexcept>
#include <time.h>

namespace ddpg {

int64_t nowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

const char* opName(Op op) {
  switch (op) {
    case Op::Broadcast: return "broadcast";
    case Op::Allreduce: return "allreduce";
    case Op::AllreduceCoalesced: return "allreduce_coalesced";
    case Op::Reduce: return "reduce";
    case Op::Allgather: return "allgather";
    case Op::AllgatherBase: return "_allgather_base";
    case Op::AllgatherCoalesced: return "allgather_coalesced";
    case Op::Gather: return "gather";
    case Op::Scatter: return "scatter";
    case Op::ReduceScatter: return "reduce_scatter";
    case Op::ReduceScatterBase: return "_reduce_scatter_base";
    case Op::Alltoall: return "alltoall";
    case Op::AlltoallBase: return "alltoall_base";
    case Op::Send: return "send";
    case Op::Recv: return "recv";
    case Op::RecvAnysource: return "recv_anysource";
    case Op::Barrier: return "barrier";
    case Op::Unknown: break;
  }
  return "unknown";
}

const char* recStateName(RecState s) {
  switch (s) {
    case RecState::Enqueued: return "enqueued";
    case RecState::Issued: return "issued";
    case RecState::Waiting: return "waiting";
    case RecState::Completed: return "completed";
    case RecState::Failed: return "failed";
  }
  return "?";
}

const char* phaseName(Phase p) {
  switch (p) {
    case Phase::Empty: return "not started";
    case Phase::Starting: return "starting";
    case Phase::Running: return "running";
    case Phase::Done: return "done";
    case Phase::Failed: return "failed";
  }
  return "?";
}

void copyStr(char* dst, size_t cap, const std::string& s) {
  size_t n = s.size() < cap - 1 ? s.size() : cap - 1;
  std::memcpy(dst, s.data(), n);
  dst[n] = '\0';
}

size_t Board::bytesFor(int worldSize) {
  return sizeof(BoardHeader) + 64 + sizeof(RankSlot) * size_t(worldSize);
}

static BoardHeader* initHeader(void* base, int worldSize) {
  auto* h = static_cast<BoardHeader*>(base);
  h->magic = Board::kMagic;
  h->worldSize = worldSize;
  h->createdNs = nowNs();
  return h;
}

Board Board::createAnonymous(int worldSize) {
  Board b;
  b.bytes_ = bytesFor(worldSize);
  b.base_ = mmap(nullptr, b.bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (b.base_ == MAP_FAILED) {
    b.base_ = nullptr;
    throw std::runtime_error("mmap of the shared rank board failed");
  }
  b.hdr_ = initHeader(b.base_, worldSize);
  return b;
}

Board Board::createFile(const std::string& path, int worldSize) {
  Board b;
  b.bytes_ = bytesFor(worldSize);
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create board file " + path);
  if (ftruncate(fd, off_t(b.bytes_)) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot size board file " + path);
  }
  b.base_ = mmap(nullptr, b.bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (b.base_ == MAP_FAILED) {
    b.base_ = nullptr;
    throw std::runtime_error("cannot map board file " + path);
  }
  b.hdr_ = initHeader(b.base_, worldSize);
  return b;
}

Board Board::openFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDWR);
  if (fd < 0) throw std::runtime_error("cannot open board file " + path);
  struct stat st {};
  fstat(fd, &st);
  Board b;
  b.bytes_ = size_t(st.st_size);
  if (b.bytes_ < sizeof(BoardHeader)) {
    ::close(fd);
    throw std::runtime_error("board file too small: " + path);
  }
  b.base_ = mmap(nullptr, b.bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (b.base_ == MAP_FAILED) {
    b.base_ = nullptr;
    throw std::runtime_error("cannot map board file " + path);
  }
  b.hdr_ = static_cast<BoardHeader*>(b.base_);
  if (b.hdr_->magic != kMagic || b.bytes_ < bytesFor(b.hdr_->worldSize))
    throw std::runtime_error("not a ddp-harness board file: " + path);
  return b;
}

Board::Board(Board&& o) noexcept : base_(o.base_), bytes_(o.bytes_), hdr_(o.hdr_) {
  o.base_ = nullptr;
  o.hdr_ = nullptr;
}

Board& Board::operator=(Board&& o) noexcept {
  if (this != &o) {
    if (base_) munmap(base_, bytes_);
    base_ = o.base_;
    bytes_ = o.bytes_;
    hdr_ = o.hdr_;
    o.base_ = nullptr;
    o.hdr_ = nullptr;
  }
  return *this;
}

Board::~Board() {
  if (base_) munmap(base_, bytes_);
}

RankSlot& Board::slot(int rank) {
  auto* first = reinterpret_cast<RankSlot*>(static_cast<char*>(base_) + sizeof(BoardHeader) + 64);
  return first[rank];
}
const RankSlot& Board::slot(int rank) const { return const_cast<Board*>(this)->slot(rank); }

void RankRecorder::setError(const std::string& what, const std::string& resource) {
  if (!s_ || s_->errorNs.load() != 0) return;
  copyStr(s_->error, kErrorLen, what);
  copyStr(s_->errorResource, kResourceLen, resource);
  s_->errorNs.store(nowNs());
}

void RankRecorder::setMetrics(const std::string& json) {
  if (!s_) return;
  copyStr(s_->metrics, kMetricsLen, json);
  s_->metricsReady.store(1);
}

size_t RankRecorder::beginMark(MarkKind kind, const std::string& name, const std::string& resource) {
  if (!s_) return 0;
  uint64_t n = s_->nMarks.load(std::memory_order_relaxed);
  MarkRecord& m = s_->marks[n % kMaxMarks];
  m.tBegin.store(0);
  m.tEnd.store(0);
  m.kind = kind;
  copyStr(m.name, kMarkNameLen, name);
  copyStr(m.resource, kResourceLen, resource);
  int64_t t = nowNs();
  m.tBegin.store(t);
  s_->nMarks.store(n + 1, std::memory_order_release);
  s_->openMark.store(int64_t(n + 1));
  s_->progressNs.store(t, std::memory_order_relaxed);
  return size_t(n);
}

void RankRecorder::endMark(size_t idx) {
  if (!s_) return;
  int64_t t = nowNs();
  s_->marks[idx % kMaxMarks].tEnd.store(t);
  // Marks nest like scopes, so the enclosing one becomes current again.
  int64_t open = 0;
  for (int64_t i = int64_t(idx) - 1; i >= 0 && i > int64_t(idx) - int64_t(kMaxMarks); --i) {
    if (s_->marks[size_t(i) % kMaxMarks].tEnd.load() == 0) { open = i + 1; break; }
  }
  s_->openMark.store(open);
  s_->progressNs.store(t, std::memory_order_relaxed);
}

}  // namespace ddpg
