// RUN: %check_ddp_tidy %s ddp-dataloader-recreated %t -- -- %mock_flags
// RUN: %check_ddp_tidy --prefix OPT %s ddp-dataloader-recreated %t-opt -- \
// RUN:   -config="{CheckOptions: {ddp-dataloader-recreated.DataLoaderFactories: 'make_loader;util::build_loader'}}" \
// RUN:   -- %mock_flags
#include <torch/torch.h>

using namespace torch;
using Loader = std::unique_ptr<data::DataLoader<std::vector<data::Example<>>>>;

void step(const Tensor &);

// A project's own factory, declared only: found through DataLoaderFactories.
Loader make_loader(const std::string &root, long batch);
namespace util {
Loader build_loader(long batch);
}

// --- true positives: per-epoch construction -----------------------------------

// A loader rebuilt to pick up the epoch (its sampler's seed): built every epoch,
// although the loop variable appears among the factory's arguments.
void rebuildForEpoch(int epochs, const std::vector<long> &seeds) {
  for (int epoch = 0; epoch < epochs; ++epoch) {
    auto loader = torch::data::make_data_loader(
// CHECK-MESSAGES: :[[@LINE-1]]:19: remark: data loader built by 'make_data_loader' inside a loop; it has no worker threads, but its sampler, shuffling and batching are set up again every epoch; build the loader once before the loop and iterate it every epoch [ddp-dataloader-recreated]
// OPT-MESSAGES: :[[@LINE-2]]:19: remark: data loader built by 'make_data_loader' inside a loop
        data::datasets::MNIST("data"), data::samplers::DistributedRandomSampler(60000, 2, seeds[epoch]),
        data::DataLoaderOptions(64));
    for (auto &batch : *loader)
      step(batch[0].data);
  }
  for (int epoch : std::vector<int>{0, 1, 2}) {
    auto loader = torch::data::make_data_loader(
// CHECK-MESSAGES: :[[@LINE-1]]:19: remark: data loader built by 'make_data_loader' inside a loop; it has no worker threads, but its sampler, shuffling and batching are set up again every epoch; build the loader once before the loop and iterate it every epoch [ddp-dataloader-recreated]
// OPT-MESSAGES: :[[@LINE-2]]:19: remark: data loader built by 'make_data_loader' inside a loop
        data::datasets::MNIST("data"), data::samplers::DistributedRandomSampler(60000, 2, epoch),
        data::DataLoaderOptions(64));
    for (auto &batch : *loader)
      step(batch[0].data);
  }
}

void trainFor(int epochs) {
  for (int epoch = 0; epoch < epochs; ++epoch) {
    auto loader = torch::data::make_data_loader(data::datasets::MNIST("data"), 64);
    // CHECK-MESSAGES: :[[@LINE-1]]:19: remark: data loader built by 'make_data_loader' inside a loop; it has no worker threads, but its sampler, shuffling and batching are set up again every epoch; build the loader once before the loop and iterate it every epoch [ddp-dataloader-recreated]
    // OPT-MESSAGES: :[[@LINE-2]]:19: remark: data loader built by 'make_data_loader' inside a loop
    for (auto &batch : *loader)
      step(batch[0].data);
  }
}

void trainWhile(int epochs) {
  int epoch = 0;
  while (epoch++ < epochs) {
    for (auto &batch : *data::make_data_loader<data::samplers::SequentialSampler>(
             data::datasets::MNIST("data"), data::DataLoaderOptions().batch_size(32).workers(4)))
      // CHECK-MESSAGES: :[[@LINE-2]]:25: warning: data loader built by 'make_data_loader' inside a loop
      // OPT-MESSAGES: :[[@LINE-3]]:25: warning: data loader built by 'make_data_loader' inside a loop
      step(batch[0].data);
  }
}

void trainDo(int epochs) {
  int epoch = 0;
  do {
    auto loader = data::make_data_loader(data::datasets::MNIST("data"),
                                         data::samplers::DistributedRandomSampler(60000, 2, 0),
                                         data::DataLoaderOptions(64));
    // CHECK-MESSAGES: :[[@LINE-3]]:19: remark: data loader built by 'make_data_loader' inside a loop
    // OPT-MESSAGES: :[[@LINE-4]]:19: remark: data loader built by 'make_data_loader' inside a loop
  } while (++epoch < epochs);
}

void trainRange(const std::vector<int> &epochs) {
  for (int e : epochs) {
    auto loader = torch::data::make_data_loader(data::datasets::MNIST("data"), 64);
    // CHECK-MESSAGES: :[[@LINE-1]]:19: remark: data loader built by 'make_data_loader' inside a loop
    // OPT-MESSAGES: :[[@LINE-2]]:19: remark: data loader built by 'make_data_loader' inside a loop
  }
}

// A helper of this unit that builds the loader, called every epoch: reported
// at the call of the helper.
Loader makeTrainLoader(long batch) {
  return torch::data::make_data_loader(data::datasets::MNIST("data"), batch);
}
Loader makeShardLoader(long batch) { return makeTrainLoader(batch); }

void trainWithHelper(int epochs) {
  for (int epoch = 0; epoch < epochs; ++epoch) {
    auto loader = makeTrainLoader(64);
    // CHECK-MESSAGES: :[[@LINE-1]]:19: remark: 'makeTrainLoader' builds a data loader (via 'make_data_loader') and is called inside a loop; it has no worker threads, but its sampler, shuffling and batching are set up again every epoch; build the loader once before the loop and iterate it every epoch [ddp-dataloader-recreated]
    // OPT-MESSAGES: :[[@LINE-2]]:19: remark: 'makeTrainLoader' builds a data loader
    auto shard = makeShardLoader(64);
    // CHECK-MESSAGES: :[[@LINE-1]]:18: remark: 'makeShardLoader' builds a data loader (via 'make_data_loader') and is called inside a loop
    // OPT-MESSAGES: :[[@LINE-2]]:18: remark: 'makeShardLoader' builds a data loader
  }
}

void trainWithLambda(int epochs) {
  auto build = [] { return torch::data::make_data_loader(data::datasets::MNIST("data"), 64); };
  for (int epoch = 0; epoch < epochs; ++epoch) {
    auto loader = build();
    // CHECK-MESSAGES: :[[@LINE-1]]:19: remark: 'build' builds a data loader (via 'make_data_loader') and is called inside a loop
    // OPT-MESSAGES: :[[@LINE-2]]:19: remark: 'build' builds a data loader
  }
}

// In a template the factory call resolves per instantiation: reported once.
template <class Dataset> void trainGeneric(Dataset ds, int epochs) {
  for (int epoch = 0; epoch < epochs; ++epoch) {
    auto loader = torch::data::make_data_loader(ds, 64);
    // CHECK-MESSAGES: :[[@LINE-1]]:19: remark: data loader built by 'make_data_loader' inside a loop
    // OPT-MESSAGES: :[[@LINE-2]]:19: remark: data loader built by 'make_data_loader' inside a loop
  }
}
void runGeneric() {
  trainGeneric(data::datasets::MNIST("a"), 2);
  trainGeneric(data::datasets::MNIST("b"), 3);
}

// A lambda stored in a namespace-scope variable is a function of its own.
static auto trainLambda = [](int epochs) {
  for (int epoch = 0; epoch < epochs; ++epoch) {
    auto loader = torch::data::make_data_loader(data::datasets::MNIST("data"), 64);
    // CHECK-MESSAGES: :[[@LINE-1]]:19: remark: data loader built by 'make_data_loader' inside a loop
    // OPT-MESSAGES: :[[@LINE-2]]:19: remark: data loader built by 'make_data_loader' inside a loop
  }
};

// Only with DataLoaderFactories: the project's own factories.
void trainWithOwnFactory(int epochs) {
  for (int epoch = 0; epoch < epochs; ++epoch) {
    auto loader = make_loader("data", 64);
    // OPT-MESSAGES: :[[@LINE-1]]:19: warning: data loader built by 'make_loader' inside a loop; its worker threads are started and joined every epoch, which costs time on every pass and leaks memory and IPC handles; build the loader once before the loop and iterate it every epoch [ddp-dataloader-recreated]
    auto eval = util::build_loader(64);
    // OPT-MESSAGES: :[[@LINE-1]]:17: warning: data loader built by 'build_loader' inside a loop
  }
}

// --- negatives -----------------------------------------------------------------

// Built once, iterated every epoch.
void trainHoisted(int epochs) {
  auto loader = torch::data::make_data_loader(data::datasets::MNIST("data"), 64);
  for (int epoch = 0; epoch < epochs; ++epoch)
    for (auto &batch : *loader)
      step(batch[0].data);
}

// The helper runs once, outside any loop.
void setupOnce() {
  auto loader = makeTrainLoader(64);
  auto own = make_loader("data", 64);
}

// A lambda merely defined in the loop and never called there.
void lambdaDefinedInLoop(int epochs, std::vector<std::function<Loader()>> &makers) {
  for (int epoch = 0; epoch < 1; ++epoch)
    makers.push_back([] { return torch::data::make_data_loader(data::datasets::MNIST("d"), 8); });
}

// One loader per dataset, built once and kept: the loop walks datasets, not epochs.
void onePerDataset(const std::vector<std::string> &roots) {
  std::vector<Loader> loaders;
  for (const auto &root : roots)
    loaders.push_back(torch::data::make_data_loader(data::datasets::MNIST(root), 64));
  std::map<std::string, Loader> byName;
  for (const auto &root : roots)
    byName[root] = torch::data::make_data_loader(data::datasets::MNIST(root), 64);
  for (size_t i = 0; i < roots.size(); ++i) {
    auto loader = torch::data::make_data_loader(data::datasets::MNIST(roots[i]), 64);
    for (auto &batch : *loader)
      step(batch[0].data);
  }
}

// Unrelated functions with a similar name.
struct Factory {
  int make_data_loader(int n) { return n; }
};
void unrelated(int epochs) {
  Factory f;
  for (int epoch = 0; epoch < epochs; ++epoch)
    f.make_data_loader(epoch);
}
