// Per-rank state that must stay readable by a supervisor after the rank dies.
//
// The board lives in memory that the ranks share with the supervisor (an
// anonymous MAP_SHARED mapping created before fork, or a file mapping).  Only
// fixed-size, trivially copyable data goes here: no pointers, no std::string,
// so a SIGKILLed or aborted rank leaves a consistent, parseable record.
// This header deliberately has no torch dependency: the supervisor, which
// must never start torch threads before it forks, links only this part.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace ddpg {

// Monotonic nanoseconds; the common time base of one host.
int64_t nowNs();

enum class Op : uint8_t {
  Broadcast, Allreduce, AllreduceCoalesced, Reduce, Allgather, AllgatherBase,
  AllgatherCoalesced, Gather, Scatter, ReduceScatter, ReduceScatterBase,
  Alltoall, AlltoallBase, Send, Recv, RecvAnysource, Barrier, Unknown
};
const char* opName(Op op);

// Life cycle of one traced collective.  Issued = handed to the backend;
// Waiting = the caller blocks in Work::wait().
enum class RecState : uint8_t { Enqueued, Issued, Waiting, Completed, Failed };
const char* recStateName(RecState s);

enum class Phase : int32_t { Empty, Starting, Running, Done, Failed };
const char* phaseName(Phase p);

constexpr size_t kMaxRecords = 4096;  // ring; old records are overwritten
constexpr size_t kMaxMarks = 256;     // ring of user-annotated regions
constexpr size_t kShapeLen = 72;
constexpr size_t kTagLen = 32;
constexpr size_t kMarkNameLen = 48;
constexpr size_t kResourceLen = 96;
constexpr size_t kErrorLen = 480;
constexpr size_t kMetricsLen = 1024;

struct CollRecord {
  std::atomic<int64_t> seq;  // -1 while the slot is being (re)written
  Op op;
  std::atomic<uint8_t> state;
  int8_t reduceOp;  // c10d::ReduceOp::RedOpType, -1 when not a reduction
  int16_t root;     // -1 when the op has no root
  int64_t numel;
  char dtype[16];
  char shapes[kShapeLen];
  char tag[kTagLen];
  std::atomic<int64_t> tEnqueue, tIssued, tEnd;
};

// A region of user code worth showing on the timeline and in the verdict
// (a checkpoint write, waiting for a batch).  `resource` lets the verdict
// see two ranks touching the same file at the same time.
enum class MarkKind : uint8_t { Compute, Write, Read, Other };
struct MarkRecord {
  std::atomic<int64_t> tBegin, tEnd;  // tEnd == 0 while open
  MarkKind kind;
  char name[kMarkNameLen];
  char resource[kResourceLen];
};

struct RankSlot {
  std::atomic<int32_t> pid;
  std::atomic<int32_t> phase;
  std::atomic<int64_t> heartbeatNs;  // the heartbeat thread: "process alive"
  std::atomic<int64_t> progressNs;   // the main thread moved: "work advances"
  std::atomic<int64_t> clockOffsetNs;  // add to local time to get rank 0 time
  std::atomic<int64_t> clockUncertNs;
  std::atomic<int64_t> pgTimeoutMs;
  std::atomic<int32_t> pgTimeoutExplicit;
  std::atomic<int64_t> nextSeq;  // collectives issued so far
  std::atomic<int64_t> openMark; // index+1 of the innermost open mark, 0 none
  std::atomic<uint64_t> nMarks;
  std::atomic<int64_t> errorNs;  // when `error` was set, 0 if never
  char error[kErrorLen];
  char errorResource[kResourceLen];
  char metrics[kMetricsLen];  // scenario-specific JSON object text
  std::atomic<int32_t> metricsReady;
  CollRecord rec[kMaxRecords];
  MarkRecord marks[kMaxMarks];
};

struct BoardHeader {
  uint64_t magic;
  int32_t worldSize;
  int32_t pad;
  int64_t createdNs;
};

// Owner of the mapping.  create() must run before fork(): the mapping is
// inherited, and writes from any rank are visible to all.
class Board {
 public:
  static constexpr uint64_t kMagic = 0x64647068726e7331ull;
  static size_t bytesFor(int worldSize);
  // Anonymous shared mapping, for ranks forked from this process.
  static Board createAnonymous(int worldSize);
  // File-backed mapping, for ranks started by an external launcher that want
  // a local supervisor (or a post-mortem reader) to see their state.
  static Board createFile(const std::string& path, int worldSize);
  static Board openFile(const std::string& path);

  Board() = default;
  Board(Board&& o) noexcept;
  Board& operator=(Board&& o) noexcept;
  Board(const Board&) = delete;
  Board& operator=(const Board&) = delete;
  ~Board();

  int worldSize() const { return hdr_ ? hdr_->worldSize : 0; }
  RankSlot& slot(int rank);
  const RankSlot& slot(int rank) const;
  bool valid() const { return hdr_ != nullptr; }

 private:
  void* base_ = nullptr;
  size_t bytes_ = 0;
  BoardHeader* hdr_ = nullptr;
};

void copyStr(char* dst, size_t cap, const std::string& s);

// Rank-side helper around one slot.  Cheap enough to call in hot loops.
class RankRecorder {
 public:
  explicit RankRecorder(RankSlot* slot = nullptr) : s_(slot) {}
  RankSlot* slot() const { return s_; }
  void progress() { if (s_) s_->progressNs.store(nowNs(), std::memory_order_relaxed); }
  void setPhase(Phase p) { if (s_) s_->phase.store(int32_t(p)); }
  // Records the first error only: later ones are usually consequences.
  void setError(const std::string& what, const std::string& resource = "");
  void setMetrics(const std::string& json);
  size_t beginMark(MarkKind kind, const std::string& name, const std::string& resource = "");
  void endMark(size_t idx);

 private:
  RankSlot* s_;
};

// RAII region: the supervisor sees "rank 0 in write_checkpoint(/x/ckpt.pt)".
class Mark {
 public:
  Mark(RankRecorder& r, MarkKind kind, const std::string& name, const std::string& resource = "")
      : r_(r), idx_(r.beginMark(kind, name, resource)) {}
  ~Mark() { r_.endMark(idx_); }
  Mark(const Mark&) = delete;
  Mark& operator=(const Mark&) = delete;

 private:
  RankRecorder& r_;
  size_t idx_;
};

}  // namespace ddpg
