#include "model.h"

ClassifierImpl::ClassifierImpl(const ClassifierOptions &options) : options_(options) {
  fc1_ = register_module("fc1", torch::nn::Linear(options.in_features, options.hidden));
  bn_ = register_module("bn", torch::nn::BatchNorm1d(options.hidden));
  dropout_ = register_module("dropout", torch::nn::Dropout(options.dropout));
  fc2_ = register_module("fc2", torch::nn::Linear(options.hidden, options.classes));
}

torch::Tensor ClassifierImpl::forward(torch::Tensor x) {
  TORCH_CHECK(x.dim() == 2, "expected [batch, features], got ", x.sizes());
  x = torch::relu(fc1_(x));
  // BatchNorm1d refuses a single sample in training mode, so the ragged last
  // batch of an epoch skips it.
  if (x.size(0) > 1) { // BUG(ddp-forward-shape-branch): a rank whose last batch has one sample gives bn_ no gradient; the gradient allreduce mismatches
    x = bn_(x);
  }
  // A flag fixed at construction is the same on every rank: not flagged.
  if (options_.use_dropout) {
    x = dropout_(x);
  }
  return fc2_(x);
}
