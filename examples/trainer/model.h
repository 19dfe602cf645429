// The classifier trained by train.cpp: an MLP with BatchNorm and an optional
// dropout layer, in LibTorch's TORCH_MODULE (Impl + holder) style.
#pragma once

#include <torch/torch.h>

struct ClassifierOptions {
  int64_t in_features = 32;
  int64_t hidden = 128;
  int64_t classes = 4;
  bool use_dropout = true; // fixed at construction: the same on every rank
  double dropout = 0.1;
};

class ClassifierImpl : public torch::nn::Module {
public:
  explicit ClassifierImpl(const ClassifierOptions &options);

  torch::Tensor forward(torch::Tensor x);

private:
  ClassifierOptions options_;
  torch::nn::Linear fc1_{nullptr};
  torch::nn::BatchNorm1d bn_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::Linear fc2_{nullptr};
};
TORCH_MODULE(Classifier);
