// RUN: %check_ddp_tidy %s ddp-forward-shape-branch %t -- -- %mock_flags
// RUN: %check_ddp_tidy --prefix OPT %s ddp-forward-shape-branch %t-opt -- \
// RUN:   -config="{CheckOptions: {ddp-forward-shape-branch.RankFunctions: 'dist::my_rank'}}" \
// RUN:   -- %mock_flags -DWITH_RANK_FUNCTION
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <stdexcept>

using torch::Tensor;

// --- true positives ----------------------------------------------------------------

// TORCH_MODULE pattern; a submodule that only big batches run.
struct AuxNetImpl : torch::nn::Module {
  AuxNetImpl() : fc_(register_module("fc", torch::nn::Linear(8, 8))),
                 aux_head_(register_module("aux", torch::nn::Linear(8, 8))) {}
  Tensor forward(Tensor x) {
    x = fc_(x);
    if (x.size(0) > 16) {
      // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: branch on the input's shape in forward() runs submodule 'aux_head_' on some ranks only; ranks that skip it produce no gradient for its parameters and the gradient allreduce mismatches; run every submodule on every rank and mask the result [ddp-forward-shape-branch]
      // OPT-MESSAGES: :[[@LINE-2]]:5: warning: branch on the input's shape in forward() runs submodule 'aux_head_'
      x = x + aux_head_(x);
    }
    return x;
  }
  torch::nn::Linear fc_, aux_head_;
};
TORCH_MODULE(AuxNet);

// A ternary choosing between two heads on a derived shape value.
struct TwoHeadsImpl : torch::nn::Module {
  Tensor forward(const Tensor &x) {
    const auto width = x.sizes()[1];
    const bool wide = width > 8;
    return wide ? fc1(x) : fc2(x);
    // CHECK-MESSAGES: :[[@LINE-1]]:12: warning: branch on the input's shape in forward() runs submodule 'fc1' on some ranks only
    // OPT-MESSAGES: :[[@LINE-2]]:12: warning: branch on the input's shape in forward() runs submodule 'fc1'
  }
  torch::nn::Linear fc1{8, 8}, fc2{8, 8};
};

// On the input's values, with an early return.
struct ValueGateImpl : torch::nn::Module {
  Tensor forward(Tensor x) {
    if (x.sum().item<float>() > 0)
      // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: branch on the input's values in forward() runs submodule 'head_a' on some ranks only
      // OPT-MESSAGES: :[[@LINE-2]]:5: warning: branch on the input's values in forward() runs submodule 'head_a'
      return head_a(x);
    return head_b(x);
  }
  torch::nn::Linear head_a{4, 4}, head_b{4, 4};
};

// On the process rank, through a member set from getRank().
struct RankExtraImpl : torch::nn::Module {
  explicit RankExtraImpl(const c10::intrusive_ptr<c10d::ProcessGroup> &pg)
      : rank_(pg->getRank()), world_size_(pg->getSize()) {}
  Tensor forward(Tensor x) {
    if (rank_ == 0)
      // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: branch on the rank in forward() runs submodule 'extra_' on some ranks only
      // OPT-MESSAGES: :[[@LINE-2]]:5: warning: branch on the rank in forward() runs submodule 'extra_'
      x = extra_(x);
    // World size is the same on every rank.
    if (world_size_ > 1)
      x = sync_(x);
    return body_(x);
  }
  int rank_, world_size_;
  torch::nn::Linear extra_{4, 4}, sync_{4, 4}, body_{4, 4};
};

// Different parameters per arm.
struct TwoWeightsImpl : torch::nn::Module {
  TwoWeightsImpl() {
    w1_ = register_parameter("w1", torch::randn({4, 4}));
    w2_ = register_parameter("w2", torch::randn({4, 4}));
  }
  Tensor forward(Tensor x) {
    if (x.dim() == 3)
      // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: branch on the input's shape in forward() uses parameter 'w2_' on some ranks only; ranks that skip it produce no gradient for it and the gradient allreduce mismatches; use it on every rank and mask the result [ddp-forward-shape-branch]
      // OPT-MESSAGES: :[[@LINE-2]]:5: warning: branch on the input's shape in forward() uses parameter 'w2_'
      return x * w2_;
    return x * w1_;
  }
  Tensor w1_, w2_;
};

// Different shapes per arm.
struct ReshaperImpl : torch::nn::Module {
  Tensor forward(Tensor x) {
    if (x.size(0) > 32)
      // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: branch on the input's shape in forward() produces different shapes on different ranks; collectives over the activations or their gradients then mismatch; keep shapes rank-uniform (pad or mask) instead of branching [ddp-forward-shape-branch]
      // OPT-MESSAGES: :[[@LINE-2]]:5: warning: branch on the input's shape in forward() produces different shapes
      return x.view({-1, 4});
    else
      return x.view({-1, 8});
  }
};

// A switch on the input's rank (number of dimensions), Cloneable base, and a
// helper method that runs a submodule.
struct SwitchNetImpl : torch::nn::Cloneable<SwitchNetImpl> {
  void reset() override {}
  Tensor project(const Tensor &x) { return proj_(x); }
  Tensor forward(Tensor x) {
    switch (x.dim()) {
      // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: branch on the input's shape in forward() runs submodule 'proj_' on some ranks only
      // OPT-MESSAGES: :[[@LINE-2]]:5: warning: branch on the input's shape in forward() runs submodule 'proj_'
    case 2:
      return project(x);
    default:
      return x;
    }
  }
  torch::nn::Linear proj_{4, 4};
};

// Through a structured binding of the input's sizes.
struct BindingsImpl : torch::nn::Module {
  Tensor forward(Tensor x) {
    auto [rows, cols] = std::make_pair(x.size(0), x.size(1));
    if (rows > cols)
      // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: branch on the input's shape in forward() runs submodule 'tall_'
      // OPT-MESSAGES: :[[@LINE-2]]:5: warning: branch on the input's shape in forward() runs submodule 'tall_'
      x = tall_(x);
    return x;
  }
  torch::nn::Linear tall_{4, 4};
};

// An empty-batch shortcut skips the layer on that rank.  One diagnostic for
// the nested branches.
struct SkipEmptyImpl : torch::nn::Module {
  Tensor forward(Tensor x) {
    if (x.numel() == 0) {
      // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: branch on the input's shape in forward() runs submodule 'fc_' on some ranks only
      // OPT-MESSAGES: :[[@LINE-2]]:5: warning: branch on the input's shape in forward() runs submodule 'fc_'
      if (x.dim() == 1)
        return x.unsqueeze(0);
      return x;
    }
    return fc_(x);
  }
  torch::nn::Linear fc_{4, 4};
};

#ifdef WITH_RANK_FUNCTION
namespace dist {
int my_rank();
}
// A user-declared rank function (RankFunctions option).
struct UserRankImpl : torch::nn::Module {
  Tensor forward(Tensor x) {
    if (dist::my_rank() == 0)
      // OPT-MESSAGES: :[[@LINE-1]]:5: warning: branch on the rank in forward() runs submodule 'extra_' on some ranks only
      x = extra_(x);
    return x;
  }
  torch::nn::Linear extra_{4, 4};
};
#endif

// --- negatives -------------------------------------------------------------------

// Flags fixed at construction, and the training mode, are the same on every rank.
struct FlagsImpl : torch::nn::Module {
  explicit FlagsImpl(bool use_dropout) : use_dropout_(use_dropout) {}
  Tensor forward(Tensor x) {
    if (use_dropout_)
      x = dropout_(x);
    if (is_training())
      x = noise_(x);
    return fc_(x);
  }
  bool use_dropout_;
  torch::nn::Dropout dropout_{0.5};
  torch::nn::Linear noise_{4, 4}, fc_{4, 4};
};

// A submodule without parameters (dropout) skipped on some ranks leaves every
// gradient in place.
struct DropSmallImpl : torch::nn::Module {
  Tensor forward(Tensor x) {
    if (x.size(0) > 8)
      x = dropout_(x);
    return fc_(x);
  }
  torch::nn::Dropout dropout_{0.1};
  torch::nn::Linear fc_{4, 4};
};

// Both arms run the same submodule, scaled differently.
struct SameArmsImpl : torch::nn::Module {
  Tensor forward(Tensor x) {
    if (x.size(0) > 1)
      x = fc1(x) / 2.0;
    else
      x = fc1(x) / 0.5;
    return x.size(1) > 4 ? fc1(x) : fc1(x) / 3.0;
  }
  torch::nn::Linear fc1{4, 4};
};

// A LoRA rank and a local matrix rank are not the process rank.
struct LoraImpl : torch::nn::Module {
  LoraImpl(long in, long out, int rank) : rank_(rank), lora_a_(in, rank), lora_b_(rank, out) {}
  Tensor forward(Tensor x) {
    int rank = 2; // rank of the low-rank update
    if (rank_ > 0 && rank > 1)
      x = x + lora_b_(lora_a_(x));
    return x;
  }
  int rank_;
  torch::nn::Linear lora_a_, lora_b_;
};

// Normalising the input's layout, rejecting bad input, optional inputs, and a
// caller-chosen mode: not a divergence.
struct NormaliseImpl : torch::nn::Module {
  Tensor forward(Tensor x, Tensor mask, bool return_features) {
    if (x.dim() == 3)
      x = x.unsqueeze(0);
    if (x.size(0) == 0)
      throw std::invalid_argument("empty batch");
    if (mask.defined())
      x = masker_(x);
    auto h = fc_(x);
    if (return_features)
      return h;
    if (x.size(1) > 2)
      x = torch::relu(x);
    return head_(h);
  }
  torch::nn::Linear masker_{4, 4}, fc_{4, 4}, head_{4, 4};
};

// forward() of a class that is not a torch::nn::Module.
struct Pipeline {
  Tensor forward(Tensor x) {
    if (x.size(0) > 1)
      return fc_(x);
    return x;
  }
  torch::nn::Linear fc_{4, 4};
};

// A branch in another method of a module is not forward().
struct HelperImpl : torch::nn::Module {
  Tensor warmup(Tensor x) {
    if (x.size(0) > 1)
      return fc_(x);
    return x;
  }
  Tensor forward(Tensor x) { return fc_(x); }
  torch::nn::Linear fc_{4, 4};
};
