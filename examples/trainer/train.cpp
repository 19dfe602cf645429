// A data-parallel trainer on LibTorch 1.13 c10d with the Gloo backend (CPU).
// Launch one process per rank, torchrun-style:
//
//   for r in 0 1; do RANK=$r WORLD_SIZE=2 DDP_STORE=/tmp/ddp-store ./ddp_trainer runs/x & done
//
// Every rank holds a replica of the model, trains on its shard of the data and
// averages gradients with an allreduce after each backward pass.
//
// Lines marked `BUG(ddp-...)` are planted bugs that ddplint must report (see
// expected-findings.txt); everything else is correct code it must leave alone.

#include "model.h"

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace {

using ProcessGroupPtr = c10::intrusive_ptr<c10d::ProcessGroup>;

struct TrainConfig {
  std::string out_dir = "runs/ddp-example";
  int64_t dataset_size = 4096;
  int64_t batch_size = 63; // the last batch of a shard is ragged
  int epochs = 20;
  int checkpoint_every = 5;
  float target_loss = 0.2f;
  double lr = 0.05;
};

// Synthetic Gaussian blobs, so the example runs without downloads.
class BlobDataset : public torch::data::datasets::Dataset<BlobDataset> {
public:
  BlobDataset(torch::Tensor inputs, torch::Tensor targets)
      : inputs_(std::move(inputs)), targets_(std::move(targets)) {}
  torch::data::Example<> get(size_t index) override { return {inputs_[index], targets_[index]}; }
  torch::optional<size_t> size() const override { return inputs_.size(0); }

private:
  torch::Tensor inputs_, targets_;
};

ProcessGroupPtr init_process_group(int rank, int world_size) {
  const char *store_path = std::getenv("DDP_STORE");
  auto store = c10::make_intrusive<c10d::FileStore>(store_path ? store_path : "/tmp/ddp-store",
                                                    world_size);
  auto options = c10d::ProcessGroupGloo::Options::create(); // BUG(ddp-init-timeout): Gloo's 30 min default: a hung rank is noticed half an hour later
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, options);
}

// Every rank calls this.  main-process-first ordering in train() makes rank 0
// build the cache alone; the others find it and load it.
std::vector<torch::Tensor> load_or_build_blobs(const TrainConfig &cfg, const ClassifierOptions &m) {
  const std::string cache = cfg.out_dir + "/blobs.pt";
  std::vector<torch::Tensor> tensors;
  if (std::filesystem::exists(cache)) {
    torch::load(tensors, cache);
    return tensors;
  }
  torch::manual_seed(1234);
  auto targets = torch::randint(m.classes, {cfg.dataset_size}, torch::kLong);
  auto centers = torch::randn({m.classes, m.in_features}) * 0.5;
  auto inputs = centers.index_select(0, targets) + torch::randn({cfg.dataset_size, m.in_features});
  tensors = {inputs, targets};
  torch::save(tensors, cache);
  return tensors;
}

// Averages the gradients across ranks in one flat buffer, as DDP's reducer
// does (without bucketing).
void allreduce_gradients(Classifier &model, const ProcessGroupPtr &pg) {
  std::vector<torch::Tensor> grads;
  for (auto &p : model->parameters())
    grads.push_back(p.grad().view({-1}));
  std::vector<torch::Tensor> flat{torch::cat(grads)};
  pg->allreduce(flat)->wait();
  flat[0].div_(pg->getSize());
  int64_t offset = 0;
  for (auto &p : model->parameters()) {
    p.grad().view({-1}).copy_(flat[0].narrow(0, offset, p.numel()));
    offset += p.numel();
  }
}

// Validation accuracy over all ranks: each rank scores its slice of the
// held-out set and the counts are summed with an allreduce.
float evaluate(Classifier &model, const torch::Tensor &inputs, const torch::Tensor &targets,
               const ProcessGroupPtr &pg) {
  torch::NoGradGuard no_grad;
  model->eval();
  const auto my_inputs = inputs.chunk(pg->getSize())[pg->getRank()];
  const auto my_targets = targets.chunk(pg->getSize())[pg->getRank()];
  const auto correct = model->forward(my_inputs).argmax(1).eq(my_targets).sum().to(torch::kFloat);
  std::vector<torch::Tensor> counts{torch::stack({correct, torch::scalar_tensor(static_cast<float>(my_targets.size(0)))})};
  pg->allreduce(counts)->wait();
  model->train();
  return (counts[0][0] / counts[0][1]).item<float>();
}

void train(const TrainConfig &cfg, const ProcessGroupPtr &pg) {
  const int rank = pg->getRank();
  const int world_size = pg->getSize();
  std::filesystem::create_directories(cfg.out_dir);

  // Main process first: rank 0 builds the dataset cache while the others wait
  // at the barrier; every rank runs exactly one barrier.
  ClassifierOptions model_options;
  if (rank != 0)
    pg->barrier()->wait();
  const auto blobs = load_or_build_blobs(cfg, model_options);
  if (rank == 0)
    pg->barrier()->wait();

  const int64_t n_train = cfg.dataset_size * 9 / 10;
  auto train_set = BlobDataset(blobs[0].narrow(0, 0, n_train), blobs[1].narrow(0, 0, n_train));
  const auto val_inputs = blobs[0].narrow(0, n_train, cfg.dataset_size - n_train);
  const auto val_targets = blobs[1].narrow(0, n_train, cfg.dataset_size - n_train);

  Classifier model(model_options);
  // Start every replica from rank 0's weights.
  {
    torch::NoGradGuard no_grad;
    for (auto &p : model->parameters()) {
      std::vector<torch::Tensor> param{p};
      pg->broadcast(param)->wait();
    }
  }
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(cfg.lr).momentum(0.9));

  for (int epoch = 0; epoch < cfg.epochs; ++epoch) {
    // A fresh sampler per epoch reshuffles the shards...
    torch::data::samplers::DistributedRandomSampler sampler(*train_set.size(), world_size, rank);
    sampler.set_epoch(epoch);
    // ...and drags a fresh loader with it.
    auto loader = torch::data::make_data_loader( // BUG(ddp-dataloader-recreated): worker threads are started and joined every epoch
        train_set.map(torch::data::transforms::Stack<>()), std::move(sampler),
        torch::data::DataLoaderOptions(cfg.batch_size).workers(2));

    float loss_sum = 0.0f;
    int64_t batches = 0;
    for (auto &batch : *loader) {
      optimizer.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model->forward(batch.data), batch.target);
      loss.backward();
      if (world_size > 1) // the same on every rank: uniform
        allreduce_gradients(model, pg); // ddplint reports the early stop of line 209 here: the collective that the stopping ranks skip
      optimizer.step();
      loss_sum += loss.item<float>();
      ++batches;
    }
    const float local_loss = loss_sum / static_cast<float>(std::max<int64_t>(batches, 1));

    // Divergence guard, agreed by every rank: one rank with a non-finite loss
    // stops them all.
    torch::Tensor diverged = torch::tensor({std::isfinite(local_loss) ? 0.0f : 1.0f});
    std::vector<torch::Tensor> flag{diverged};
    c10d::AllreduceOptions max_op;
    max_op.reduceOp = c10d::ReduceOp::MAX;
    pg->allreduce(flag, max_op)->wait();
    if (diverged.item<float>() > 0) {
      std::cerr << "rank " << rank << ": loss diverged at epoch " << epoch << "\n";
      break;
    }

    // Per-rank batch counts to rank 0, point to point.
    std::vector<torch::Tensor> my_count{torch::tensor({static_cast<float>(batches)})};
    if (rank == 0) {
      for (int src = 1; src < world_size; ++src) {
        std::vector<torch::Tensor> count{torch::zeros({1})};
        pg->recv(count, src, /*tag=*/epoch)->wait();
        std::cout << "epoch " << epoch << ": rank " << src << " ran " << count[0].item<float>()
                  << " batches\n";
      }
    } else {
      pg->send(my_count, /*dstRank=*/0, /*tag=*/epoch)->wait();
    }

    if (rank == 0) {
      const float accuracy = evaluate(model, val_inputs, val_targets, pg); // BUG(ddp-divergent-collective): evaluate() allreduces, only rank 0 calls it
      std::cout << "epoch " << epoch << ": loss " << local_loss << ", accuracy " << accuracy << "\n";
    }
    if (rank == 0) { // BUG(ddp-rank0-io-barrier): the other ranks race into the next epoch's allreduce while rank 0 writes
      // A resume point every epoch, written while the others train on.
      torch::save(model, cfg.out_dir + "/latest.pt");
    }

    if ((epoch + 1) % cfg.checkpoint_every == 0) {
      // Rank 0 writes the checkpoint between two barriers; every rank keeps its
      // own optimizer state under a rank-specific name.
      pg->barrier()->wait();
      if (rank == 0)
        torch::save(model, cfg.out_dir + "/checkpoint.pt");
      torch::save(optimizer, cfg.out_dir + "/optimizer-rank" + std::to_string(rank) + ".pt");
      pg->barrier()->wait();
    }

    // Early stopping on this rank's own training loss.
    if (local_loss < cfg.target_loss)
      break; // BUG(ddp-divergent-collective): the ranks that stop leave the others in the next epoch's allreduce
  }

  torch::save(model, cfg.out_dir + "/final.pt"); // BUG(ddp-unguarded-save): every rank writes final.pt at once
}

} // namespace

int main(int argc, char **argv) {
  const char *rank_env = std::getenv("RANK");
  const char *world_env = std::getenv("WORLD_SIZE");
  const int rank = rank_env ? std::atoi(rank_env) : 0;
  const int world_size = world_env ? std::atoi(world_env) : 1;

  TrainConfig cfg;
  if (argc > 1)
    cfg.out_dir = argv[1];
  auto pg = init_process_group(rank, world_size);
  train(cfg, pg);
  if (rank == 0)
    std::cout << "done: " << cfg.out_dir << "/final.pt\n";
  return 0;
}
