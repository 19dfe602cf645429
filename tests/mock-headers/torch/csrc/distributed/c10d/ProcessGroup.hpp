#pragma once
#include "ddp_mock_core.h"
namespace c10d {
constexpr auto kProcessGroupDefaultTimeout = std::chrono::milliseconds(30 * 60 * 1000);
struct AllreduceOptions {};
struct BroadcastOptions { long rootRank = 0; };
struct ReduceOptions {};
struct AllgatherOptions {};
struct GatherOptions {};
struct ScatterOptions {};
struct ReduceScatterOptions {};
struct AllToAllOptions {};
struct BarrierOptions {};
class Work {
public:
  virtual ~Work() = default;
  virtual bool wait(std::chrono::milliseconds timeout = std::chrono::milliseconds(0)) { return true; }
};
class Store {
public:
  virtual ~Store() = default;
  virtual void set(const std::string &, const std::vector<unsigned char> &) {}
  virtual std::vector<unsigned char> get(const std::string &) { return {}; }
};
class ProcessGroup {
public:
  struct Options {
    explicit Options(std::string backend = "",
                     std::chrono::milliseconds timeout = kProcessGroupDefaultTimeout)
        : timeout(timeout), backend(backend) {}
    virtual ~Options() = default;
    std::chrono::milliseconds timeout;
    std::string backend;
  };
  ProcessGroup(int rank, int size) : rank_(rank), size_(size) {}
  virtual ~ProcessGroup() = default;
  int getRank() const { return rank_; }
  int getSize() const { return size_; }
  using W = c10::intrusive_ptr<Work>;
  using TV = std::vector<at::Tensor>;
  virtual W broadcast(TV &, const BroadcastOptions & = BroadcastOptions()) { return {}; }
  virtual W allreduce(TV &, const AllreduceOptions & = AllreduceOptions()) { return {}; }
  virtual W reduce(TV &, const ReduceOptions & = ReduceOptions()) { return {}; }
  virtual W allgather(std::vector<TV> &, TV &, const AllgatherOptions & = AllgatherOptions()) { return {}; }
  virtual W gather(std::vector<TV> &, TV &, const GatherOptions & = GatherOptions()) { return {}; }
  virtual W scatter(TV &, std::vector<TV> &, const ScatterOptions & = ScatterOptions()) { return {}; }
  virtual W reduce_scatter(TV &, std::vector<TV> &, const ReduceScatterOptions & = ReduceScatterOptions()) { return {}; }
  virtual W alltoall(TV &, TV &, const AllToAllOptions & = AllToAllOptions()) { return {}; }
  virtual W send(TV &, int, int) { return {}; }
  virtual W recv(TV &, int, int) { return {}; }
  virtual W recvAnysource(TV &, int) { return {}; }
  virtual W barrier(const BarrierOptions & = BarrierOptions()) { return {}; }

protected:
  int rank_, size_;
};
} // namespace c10d
