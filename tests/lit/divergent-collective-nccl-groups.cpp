// RUN: %check_ddp_tidy %s ddp-divergent-collective %t -- -- -std=c++17 %nccl_flags
// FasterTransformer keeps one NcclParam per parallel group (`{rank_,
// world_size_, nccl_comm_}`), carved from one grid: every member of a
// tensor-parallel group shares its pipeline stage.  A collective on
// `tensor_para_` under a test of `pipeline_para_.rank_` (the last stage
// gathers the logits; a layer loop skips the layers another stage owns) is run
// by whole tensor-parallel groups, and is not a divergence of their members.
// A test of the collective's own group's rank still is.
#include <nccl.h>
#include <cuda_runtime.h>

struct NcclParam {
  int rank_{0};
  int world_size_{1};
  ncclComm_t nccl_comm_ = nullptr;
  NcclParam() = default;
  NcclParam(int rank, int world_size) : rank_(rank), world_size_(world_size) {}
};

void ftNcclAllGather(float *send, float *recv, int n, NcclParam p, cudaStream_t s) {
  ncclAllGather(send, recv, n, ncclFloat, p.nccl_comm_, s);
}

class Gpt {
public:
  void forward(float *buf, int n, cudaStream_t s) {
    for (int l = 0; l < num_layer_; ++l) {
      if (!isValidLayerParallelId(l))
        continue;
      ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, tensor_para_.nccl_comm_, s);
    }
    if (pipeline_para_.rank_ == pipeline_para_.world_size_ - 1)
      ftNcclAllGather(buf, buf, n, tensor_para_, s);
    if (tensor_para_.rank_ == 0)
      ftNcclAllGather(buf, buf, n, tensor_para_, s);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: call to 'ftNcclAllGather', which runs collective{{.*}} runs only on ranks where 'tensor_para_.rank_ == 0' holds{{.*}} [ddp-divergent-collective]
  }

private:
  bool isValidLayerParallelId(int l) {
    int local = num_layer_ / pipeline_para_.world_size_;
    return l >= local * pipeline_para_.rank_ && l < local * (pipeline_para_.rank_ + 1);
  }
  int num_layer_ = 24;
  NcclParam tensor_para_;
  NcclParam pipeline_para_;
};
