// Collective tracer: a c10d process group (ProcessGroup in 1.13, Backend in 2.x) that forwards to another one and
// records every collective into a RankSlot (sequence number, op, shapes,
// dtype, root/reduce op, enqueue/issue/end timestamps, state).
//
// Unlike c10d::ProcessGroupWrapper it adds no communication: records stay
// local (in shared memory) and are compared after the fact by whoever reads
// the board, so the per-collective cost is a few clock reads and stores.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/version.h>

#include "ddp_guardrails/board.hpp"

// LibTorch 2.x moved the collective API from c10d::ProcessGroup to
// c10d::Backend (ProcessGroupGloo, ProcessGroupNCCL and ProcessGroupWrapper
// derive from it); the virtual functions kept their signatures.  Written and
// tested against 1.13; the 2.x branch is not built here.
#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
namespace ddpg {
using PGBase = c10d::Backend;
}
#else
namespace ddpg {
using PGBase = c10d::ProcessGroup;
}
#endif

namespace ddpg {

class TracedProcessGroup : public ddpg::PGBase {
 public:
  TracedProcessGroup(c10::intrusive_ptr<ddpg::PGBase> inner, RankSlot* slot);

  c10::intrusive_ptr<ddpg::PGBase> inner() const { return inner_; }
  RankSlot* slot() const { return slot_; }

  // A short label stored with the collectives issued while it is set on
  // this thread (e.g. "grad:fc.weight", "eval_metric"): it makes the
  // verdict readable without symbolizing stacks.
  static void setTag(const char* tag);
  class TagScope {
   public:
    explicit TagScope(const char* tag);
    ~TagScope();
   private:
    const char* prev_;
  };

  const std::string getBackendName() const override;

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& t,
      const c10d::BroadcastOptions& o = c10d::BroadcastOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& t,
      const c10d::AllreduceOptions& o = c10d::AllreduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(std::vector<at::Tensor>& t,
      const c10d::AllreduceCoalescedOptions& o = c10d::AllreduceCoalescedOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& t,
      const c10d::ReduceOptions& o = c10d::ReduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& out,
      std::vector<at::Tensor>& in, const c10d::AllgatherOptions& o = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& out, at::Tensor& in,
      const c10d::AllgatherOptions& o = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>>& out,
      std::vector<at::Tensor>& in, const c10d::AllgatherOptions& o = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& out,
      std::vector<at::Tensor>& in, const c10d::GatherOptions& o = c10d::GatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& out,
      std::vector<std::vector<at::Tensor>>& in, const c10d::ScatterOptions& o = c10d::ScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& out,
      std::vector<std::vector<at::Tensor>>& in,
      const c10d::ReduceScatterOptions& o = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(at::Tensor& out, at::Tensor& in,
      const c10d::ReduceScatterOptions& o = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& out, at::Tensor& in,
      std::vector<int64_t>& outSplit, std::vector<int64_t>& inSplit,
      const c10d::AllToAllOptions& o = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& out, std::vector<at::Tensor>& in,
      const c10d::AllToAllOptions& o = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& t, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& t, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& t, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& o = c10d::BarrierOptions()) override;

 private:
  template <class Issue>
  c10::intrusive_ptr<c10d::Work> trace(Op op, const std::vector<at::Tensor>& ts, int root,
                                       int reduceOp, Issue&& issue);

  c10::intrusive_ptr<ddpg::PGBase> inner_;
  RankSlot* slot_;
  std::unique_ptr<RankSlot> ownSlot_;  // when the caller has no board
};

}  // namespace ddpg
