// Against the real LibTorch 1.13 headers: TORCH_MODULE, Cloneable, real
// built-in modules and TORCH_CHECK.
// RUN: %check_ddp_tidy %s ddp-forward-shape-branch %t -- -- %torch_flags
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

struct NetImpl : torch::nn::Module {
  NetImpl(int64_t in, int64_t out, bool use_dropout,
          const c10::intrusive_ptr<c10d::ProcessGroup> &pg)
      : use_dropout_(use_dropout), rank_(pg->getRank()) {
    fc1_ = register_module("fc1", torch::nn::Linear(in, 64));
    bn_ = register_module("bn", torch::nn::BatchNorm1d(64));
    head_ = register_module("head", torch::nn::Linear(64, out));
    aux_ = register_module("aux", torch::nn::Linear(64, out));
    drop_ = register_module("drop", torch::nn::Dropout(0.1));
  }

  torch::Tensor forward(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2, "expected a 2-d input, got ", x.dim());
    x = torch::relu(fc1_(x));
    // BatchNorm needs more than one sample: small batches skip it.
    if (x.size(0) > 1)
      // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: branch on the input's shape in forward() runs submodule 'bn_' on some ranks only; ranks that skip it produce no gradient for its parameters and the gradient allreduce mismatches; run every submodule on every rank and mask the result [ddp-forward-shape-branch]
      x = bn_(x);
    if (use_dropout_ && is_training())
      x = drop_(x);
    auto out = head_(x);
    if (rank_ == 0)
      // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: branch on the rank in forward() runs submodule 'aux_' on some ranks only
      out = out + aux_(x);
    return out;
  }

  bool use_dropout_;
  int rank_;
  torch::nn::Linear fc1_{nullptr}, head_{nullptr}, aux_{nullptr};
  torch::nn::BatchNorm1d bn_{nullptr};
  torch::nn::Dropout drop_{nullptr};
};
TORCH_MODULE(Net);

Net makeNet(const c10::intrusive_ptr<c10d::ProcessGroup> &pg) {
  return Net(784, 10, /*use_dropout=*/true, pg);
}

struct ResidualImpl : torch::nn::Cloneable<ResidualImpl> {
  explicit ResidualImpl(int64_t width) : width_(width) { reset(); }
  void reset() override {
    proj_ = register_module("proj", torch::nn::Linear(width_, width_));
  }
  torch::Tensor forward(const torch::Tensor &x) {
    // Both arms run proj_: no divergence.
    auto y = x.size(-1) == width_ ? proj_(x) : proj_(x.narrow(-1, 0, width_));
    return x.sum().item<float>() > 0 ? y.view({-1, width_}) : y.reshape({-1, 1, width_});
    // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: branch on the input's values in forward() produces different shapes on different ranks
  }
  int64_t width_;
  torch::nn::Linear proj_{nullptr};
};
TORCH_MODULE(Residual);

// A LoRA adapter: its rank is a hyper-parameter, not the process rank.
struct LoraImpl : torch::nn::Module {
  LoraImpl(int64_t in, int64_t out, int64_t rank) : rank_(rank) {
    a_ = register_module("a", torch::nn::Linear(in, rank));
    b_ = register_module("b", torch::nn::Linear(rank, out));
  }
  torch::Tensor forward(torch::Tensor x) {
    if (rank_ > 0)
      return x + b_(a_(x));
    return x;
  }
  int64_t rank_;
  torch::nn::Linear a_{nullptr}, b_{nullptr};
};
TORCH_MODULE(Lora);
