// Mock of <torch/torch.h>: tensors, modules, serialization, data loading.
#pragma once
#include "ddp_mock_core.h"
// Like the real <torch/torch.h> (through <torch/all.h>).
#include "version.h"
#include <functional>
#include <map>
#include <ostream>

namespace torch {
using at::Tensor;
using Device = int;
enum DeviceType { kCPU = 0, kCUDA = 1 };
inline Tensor zeros(c10::IntArrayRef) { return {}; }
inline Tensor ones(c10::IntArrayRef) { return {}; }
inline Tensor rand(c10::IntArrayRef) { return {}; }
inline Tensor randn(c10::IntArrayRef) { return {}; }
inline Tensor tensor(std::initializer_list<float>) { return {}; }
inline Tensor cat(std::vector<Tensor>, long = 0) { return {}; }
inline Tensor where(const Tensor &, const Tensor &, const Tensor &) { return {}; }
inline Tensor relu(const Tensor &) { return {}; }
inline bool isfinite(float) { return true; }
inline void manual_seed(unsigned long) {}
namespace nn {
class Module {
public:
  virtual ~Module() = default;
  template <class M> M register_module(std::string, M m) { return m; }
  Tensor register_parameter(std::string, Tensor t) { return t; }
  std::vector<Tensor> parameters() const { return {}; }
  void train(bool = true) {}
  void eval() {}
  bool is_training() const { return true; }
};
// torch/nn/cloneable.h: the CRTP base of most built-in modules.
template <class Derived> class Cloneable : public Module {
public:
  virtual void reset() = 0;
};
template <class Impl> class ModuleHolder {
public:
  ModuleHolder() : impl_(std::make_shared<Impl>()) {}
  explicit ModuleHolder(std::nullptr_t) {}
  template <class A0, class... A> ModuleHolder(A0 &&a0, A &&...a)
      : impl_(std::make_shared<Impl>(static_cast<A0 &&>(a0), static_cast<A &&>(a)...)) {}
  Impl *operator->() const { return impl_.get(); }
  template <class... A> Tensor operator()(A &&...a) { return impl_->forward(static_cast<A &&>(a)...); }
  std::shared_ptr<Impl> ptr() const { return impl_; }

private:
  std::shared_ptr<Impl> impl_;
};
struct LinearImpl : Module {
  LinearImpl(long in, long out) {}
  Tensor forward(const Tensor &x) { return x; }
};
struct Linear : ModuleHolder<LinearImpl> {
  using ModuleHolder<LinearImpl>::ModuleHolder;
};
struct DropoutImpl : Module {
  explicit DropoutImpl(double p = 0.5) {}
  Tensor forward(const Tensor &x) { return x; }
};
struct Dropout : ModuleHolder<DropoutImpl> {
  using ModuleHolder<DropoutImpl>::ModuleHolder;
};
namespace functional {
inline Tensor relu(const Tensor &x) { return x; }
inline Tensor cross_entropy(const Tensor &, const Tensor &) { return {}; }
} // namespace functional
} // namespace nn
#define TORCH_MODULE(Name)                                                      \
  class Name : public torch::nn::ModuleHolder<Name##Impl> {                    \
  public:                                                                      \
    using torch::nn::ModuleHolder<Name##Impl>::ModuleHolder;                   \
  }
namespace optim {
struct SGDOptions { SGDOptions(double) {} };
class SGD {
public:
  SGD(std::vector<Tensor>, SGDOptions) {}
  void zero_grad() {}
  void step() {}
};
} // namespace optim
namespace serialize {
class OutputArchive {
public:
  void write(const std::string &, const Tensor &) {}
  void save_to(const std::string &filename) {}
  void save_to(std::ostream &stream) {}
};
class InputArchive {
public:
  void load_from(const std::string &) {}
};
} // namespace serialize
template <class Value> void save(const Value &value, const std::string &path) {}
template <class Value> void save(const Value &value, std::ostream &stream) {}
template <class Value> void load(Value &value, const std::string &path) {}
inline std::vector<char> pickle_save(const Tensor &) { return {}; }
namespace data {
template <class Data = Tensor, class Target = Tensor> struct Example {
  Data data;
  Target target;
};
namespace samplers {
class RandomSampler { public: explicit RandomSampler(long n) {} };
class SequentialSampler { public: explicit SequentialSampler(long n) {} };
class DistributedRandomSampler {
public:
  DistributedRandomSampler(long size, long num_replicas = 1, long rank = 0, bool allow_duplicates = true) {}
};
class DistributedSequentialSampler {
public:
  DistributedSequentialSampler(long size, long num_replicas = 1, long rank = 0, bool allow_duplicates = true) {}
};
} // namespace samplers
struct DataLoaderOptions {
  DataLoaderOptions() = default;
  DataLoaderOptions(long batch) {}
  DataLoaderOptions &workers(long) { return *this; }
  DataLoaderOptions &batch_size(long) { return *this; }
};
template <class Batch> class DataLoader {
public:
  struct iterator {
    Batch &operator*();
    iterator &operator++();
    bool operator!=(const iterator &) const;
  };
  iterator begin();
  iterator end();
};
namespace datasets {
template <class Self> struct Dataset {
  using BatchType = std::vector<Example<>>;
  long size() const { return 0; }
};
class MNIST : public Dataset<MNIST> {
public:
  explicit MNIST(const std::string &root) {}
  MNIST(const std::string &root, long shard) {}
};
} // namespace datasets
template <class Sampler = samplers::RandomSampler, class Dataset>
std::unique_ptr<DataLoader<typename Dataset::BatchType>> make_data_loader(Dataset dataset,
                                                                          DataLoaderOptions options = {}) {
  return nullptr;
}
template <class Dataset, class Sampler>
std::unique_ptr<DataLoader<typename Dataset::BatchType>> make_data_loader(Dataset dataset, Sampler sampler,
                                                                          DataLoaderOptions options) {
  return nullptr;
}
} // namespace data
} // namespace torch
