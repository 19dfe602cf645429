#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "ddp_guardrails/guardrails.hpp"

namespace ddpg {

// Host-staged NCCL group (see nccl_group.cpp): allreduce, broadcast,
// allgather and barrier, enough for every harness scenario.
class NcclGroup : public ddpg::PGBase {
 public:
  NcclGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, int device,
            std::chrono::milliseconds timeout);
  ~NcclGroup() override;
  const std::string getBackendName() const override { return "nccl(host-staged)"; }
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& t,
      const c10d::AllreduceOptions& o = c10d::AllreduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& t,
      const c10d::BroadcastOptions& o = c10d::BroadcastOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& out,
      std::vector<at::Tensor>& in, const c10d::AllgatherOptions& o = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& o = c10d::BarrierOptions()) override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ddpg
