// Benchmark TU without findings: a correct data-parallel training step on the
// real LibTorch 1.13 + c10d Gloo headers.  `bench/overhead.sh bench/clean_trainer.cpp`
// measures the ddp checks on code they accept (examples/trainer/train.cpp, the
// default TU, has findings).
#include <torch/torch.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

using ProcessGroupPtr = c10::intrusive_ptr<c10d::ProcessGroup>;

ProcessGroupPtr init_process_group(const std::string &store_path, int rank, int world_size) {
  auto store = c10::make_intrusive<c10d::FileStore>(store_path, world_size);
  auto options = c10d::ProcessGroupGloo::Options::create(std::chrono::seconds(120));
  options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, world_size, options);
}

void allreduce_gradients(torch::nn::Sequential &model, const ProcessGroupPtr &pg) {
  for (auto &p : model->parameters()) {
    std::vector<torch::Tensor> grad{p.grad()};
    pg->allreduce(grad)->wait();
    p.grad().div_(pg->getSize());
  }
}

void train(const ProcessGroupPtr &pg, const std::string &out_dir, int epochs) {
  const int rank = pg->getRank();
  torch::nn::Sequential model(torch::nn::Linear(32, 64), torch::nn::ReLU(), torch::nn::Linear(64, 4));
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.1));
  auto data = torch::data::datasets::TensorDataset(torch::randn({1024, 32}));
  auto loader = torch::data::make_data_loader(
      std::move(data), torch::data::samplers::DistributedRandomSampler(1024, pg->getSize(), rank),
      torch::data::DataLoaderOptions(32));
  for (int epoch = 0; epoch < epochs; ++epoch) {
    float loss_sum = 0.0f;
    for (auto &batch : *loader) {
      optimizer.zero_grad();
      std::vector<torch::Tensor> inputs;
      for (auto &example : batch)
        inputs.push_back(example.data);
      auto loss = model->forward(torch::stack(inputs)).pow(2).mean();
      loss.backward();
      allreduce_gradients(model, pg);
      optimizer.step();
      loss_sum += loss.item<float>();
    }
    torch::Tensor stop = torch::tensor({loss_sum < 1.0f ? 1.0f : 0.0f});
    std::vector<torch::Tensor> flag{stop};
    pg->allreduce(flag)->wait();
    pg->barrier()->wait();
    if (rank == 0)
      torch::save(model, out_dir + "/checkpoint.pt");
    pg->barrier()->wait();
    if (stop.item<float>() >= static_cast<float>(pg->getSize()))
      break;
  }
}
