// NCCL process group that works with any LibTorch, including Debian's
// CPU-only build: tensors stay on the host and are staged through device
// buffers.  It exists so that the harness's NCCL path compiles against plain
// NCCL + cudart, and runs on a GPU node without a CUDA LibTorch.  Every wait
// is bounded: on timeout or an asynchronous NCCL error the communicator is
// aborted, which is what TORCH_NCCL_ASYNC_ERROR_HANDLING does in
// ProcessGroupNCCL.
#include "nccl_group.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <ATen/ATen.h>

#include <cstring>
#include <stdexcept>
#include <thread>

namespace ddpg {

namespace {

std::string cudaWhy(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }

void cudaCheck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + " failed: " + cudaWhy(e));
}

ncclDataType_t ncclType(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return ncclFloat32;
    case at::kDouble: return ncclFloat64;
    case at::kHalf: return ncclFloat16;
    case at::kBFloat16: return ncclBfloat16;
    case at::kInt: return ncclInt32;
    case at::kLong: return ncclInt64;
    case at::kByte: return ncclUint8;
    case at::kChar: return ncclInt8;
    default: throw std::runtime_error(std::string("NCCL: unsupported dtype ") + c10::toString(t));
  }
}

ncclRedOp_t ncclOp(const c10d::ReduceOp& op) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM: return ncclSum;
    case c10d::ReduceOp::PRODUCT: return ncclProd;
    case c10d::ReduceOp::MIN: return ncclMin;
    case c10d::ReduceOp::MAX: return ncclMax;
    case c10d::ReduceOp::AVG: return ncclAvg;
    default: throw std::runtime_error("NCCL: unsupported reduce op");
  }
}

}  // namespace

struct NcclGroup::Impl {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  std::chrono::milliseconds timeout;
  bool aborted = false;

  // Polls until the stream drained, NCCL reported an error or the deadline
  // passed; the latter two abort the communicator so no rank spins forever.
  void waitStream(const char* op) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
      cudaError_t q = cudaStreamQuery(stream);
      if (q == cudaSuccess) return;
      if (q != cudaErrorNotReady) throw std::runtime_error(std::string(op) + ": " + cudaWhy(q));
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm, &async);
      if (async != ncclSuccess && async != ncclInProgress) {
        abort();
        throw std::runtime_error(std::string(op) + ": NCCL async error " + ncclGetErrorString(async) +
                                 "; communicator aborted");
      }
      if (std::chrono::steady_clock::now() > deadline) {
        abort();
        throw std::runtime_error(std::string(op) + ": timed out after " + std::to_string(timeout.count()) +
                                 " ms; communicator aborted");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
  void abort() {
    if (!aborted && comm) ncclCommAbort(comm);
    aborted = true;
  }
};

namespace {

// The collective already ran to completion when the Work is created: the
// staging copies need the result on the host anyway, and the tracer still
// sees the time spent as the span between enqueue and issue.
class DoneWork : public c10d::Work {
 public:
  DoneWork() : c10d::Work(-1, c10d::OpType::UNKNOWN) {}
  bool isCompleted() override { return true; }
  bool isSuccess() const override { return true; }
  bool wait(std::chrono::milliseconds) override { return true; }
};

struct DevBuf {
  void* p = nullptr;
  explicit DevBuf(size_t n) { cudaCheck(cudaMalloc(&p, n ? n : 1), "cudaMalloc"); }
  ~DevBuf() { if (p) cudaFree(p); }
};

}  // namespace

NcclGroup::NcclGroup(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, int device,
                     std::chrono::milliseconds timeout)
    : ddpg::PGBase(rank, size), impl_(std::make_unique<Impl>()) {
  std::string why;
  if (!gpuDriverAvailable(&why)) throw std::runtime_error("NCCL backend: " + why);
  impl_->timeout = timeout;
  cudaCheck(cudaSetDevice(device), "cudaSetDevice");
  cudaCheck(cudaStreamCreateWithFlags(&impl_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  ncclUniqueId id;
  if (rank == 0) {
    if (ncclGetUniqueId(&id) != ncclSuccess) throw std::runtime_error("ncclGetUniqueId failed");
    store->set("ddpg/nccl/uid", std::vector<uint8_t>(reinterpret_cast<uint8_t*>(&id),
                                                      reinterpret_cast<uint8_t*>(&id) + sizeof id));
  } else {
    auto v = store->get("ddpg/nccl/uid");
    if (v.size() != sizeof id) throw std::runtime_error("NCCL unique id from the store has the wrong size");
    std::memcpy(&id, v.data(), sizeof id);
  }
  // Non-blocking init, so a peer that never shows up is a timeout, not a hang.
  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  ncclResult_t r = ncclCommInitRankConfig(&impl_->comm, size, id, rank, &cfg);
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (r == ncclInProgress) {
    if (std::chrono::steady_clock::now() > deadline) {
      impl_->abort();
      throw std::runtime_error("ncclCommInitRank timed out after " + std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ncclCommGetAsyncError(impl_->comm, &r);
  }
  if (r != ncclSuccess) throw std::runtime_error(std::string("ncclCommInitRank: ") + ncclGetErrorString(r));
}

NcclGroup::~NcclGroup() {
  if (impl_->comm) {
    if (impl_->aborted) {
      // ncclCommAbort already released it.
    } else {
      ncclCommDestroy(impl_->comm);
    }
  }
  if (impl_->stream) cudaStreamDestroy(impl_->stream);
}

c10::intrusive_ptr<c10d::Work> NcclGroup::allreduce(std::vector<at::Tensor>& ts, const c10d::AllreduceOptions& o) {
  for (auto& t : ts) {
    auto c = t.contiguous();
    size_t bytes = size_t(c.nbytes());
    DevBuf d(bytes);
    cudaCheck(cudaMemcpyAsync(d.p, c.data_ptr(), bytes, cudaMemcpyHostToDevice, impl_->stream), "H2D copy");
    ncclResult_t r = ncclAllReduce(d.p, d.p, size_t(c.numel()), ncclType(c.scalar_type()), ncclOp(o.reduceOp),
                                   impl_->comm, impl_->stream);
    if (r != ncclSuccess && r != ncclInProgress) throw std::runtime_error(std::string("ncclAllReduce: ") + ncclGetErrorString(r));
    cudaCheck(cudaMemcpyAsync(c.data_ptr(), d.p, bytes, cudaMemcpyDeviceToHost, impl_->stream), "D2H copy");
    impl_->waitStream("allreduce");
    if (!c.is_same(t)) t.copy_(c);
  }
  return c10::make_intrusive<DoneWork>();
}

c10::intrusive_ptr<c10d::Work> NcclGroup::broadcast(std::vector<at::Tensor>& ts, const c10d::BroadcastOptions& o) {
  for (auto& t : ts) {
    auto c = t.contiguous();
    size_t bytes = size_t(c.nbytes());
    DevBuf d(bytes);
    cudaCheck(cudaMemcpyAsync(d.p, c.data_ptr(), bytes, cudaMemcpyHostToDevice, impl_->stream), "H2D copy");
    ncclResult_t r = ncclBroadcast(d.p, d.p, size_t(c.numel()), ncclType(c.scalar_type()), int(o.rootRank),
                                   impl_->comm, impl_->stream);
    if (r != ncclSuccess && r != ncclInProgress) throw std::runtime_error(std::string("ncclBroadcast: ") + ncclGetErrorString(r));
    cudaCheck(cudaMemcpyAsync(c.data_ptr(), d.p, bytes, cudaMemcpyDeviceToHost, impl_->stream), "D2H copy");
    impl_->waitStream("broadcast");
    if (!c.is_same(t)) t.copy_(c);
  }
  return c10::make_intrusive<DoneWork>();
}

c10::intrusive_ptr<c10d::Work> NcclGroup::allgather(std::vector<std::vector<at::Tensor>>& out,
                                                    std::vector<at::Tensor>& in, const c10d::AllgatherOptions&) {
  if (in.size() != 1 || out.size() != 1 || out[0].size() != size_t(getSize()))
    throw std::runtime_error("NCCL allgather: one input and world-size outputs expected");
  auto c = in[0].contiguous();
  size_t bytes = size_t(c.nbytes());
  DevBuf src(bytes), dst(bytes * size_t(getSize()));
  cudaCheck(cudaMemcpyAsync(src.p, c.data_ptr(), bytes, cudaMemcpyHostToDevice, impl_->stream), "H2D copy");
  ncclResult_t r = ncclAllGather(src.p, dst.p, size_t(c.numel()), ncclType(c.scalar_type()), impl_->comm, impl_->stream);
  if (r != ncclSuccess && r != ncclInProgress) throw std::runtime_error(std::string("ncclAllGather: ") + ncclGetErrorString(r));
  impl_->waitStream("allgather");
  for (int i = 0; i < getSize(); ++i) {
    auto o = out[0][size_t(i)].contiguous();
    cudaCheck(cudaMemcpy(o.data_ptr(), static_cast<char*>(dst.p) + bytes * size_t(i), bytes, cudaMemcpyDeviceToHost),
              "D2H copy");
    if (!o.is_same(out[0][size_t(i)])) out[0][size_t(i)].copy_(o);
  }
  return c10::make_intrusive<DoneWork>();
}

c10::intrusive_ptr<c10d::Work> NcclGroup::barrier(const c10d::BarrierOptions&) {
  std::vector<at::Tensor> one{at::zeros({1})};
  return allreduce(one, c10d::AllreduceOptions());
}

}  // namespace ddpg
