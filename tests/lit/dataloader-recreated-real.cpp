// Against the real LibTorch 1.13 headers.
// RUN: %check_ddp_tidy %s ddp-dataloader-recreated %t -- -- %torch_flags
#include <torch/torch.h>

auto makeDataset(const std::string &root) {
  return torch::data::datasets::MNIST(root).map(torch::data::transforms::Stack<>());
}

auto makeLoader(const std::string &root) {
  return torch::data::make_data_loader(makeDataset(root), torch::data::DataLoaderOptions(64));
}

void train(torch::nn::Linear &model, const std::string &root, int epochs, int rank, int size) {
  torch::optim::SGD opt(model->parameters(), torch::optim::SGDOptions(0.1));
  for (int epoch = 0; epoch < epochs; ++epoch) {
    auto sampler = torch::data::samplers::DistributedRandomSampler(60000, size, rank);
    auto loader = torch::data::make_data_loader(makeDataset(root), sampler,
                                                torch::data::DataLoaderOptions(64).workers(2));
    // CHECK-MESSAGES: :[[@LINE-2]]:19: warning: data loader built by 'make_data_loader' inside a loop; its worker threads are started and joined every epoch, which costs time on every pass and leaks memory and IPC handles; build the loader once before the loop and iterate it every epoch [ddp-dataloader-recreated]
    for (auto &batch : *loader) {
      opt.zero_grad();
      auto loss = torch::nn::functional::cross_entropy(model(batch.data.view({-1, 784})), batch.target);
      loss.backward();
      opt.step();
    }
    auto eval = makeLoader(root);
    // CHECK-MESSAGES: :[[@LINE-1]]:17: remark: 'makeLoader' builds a data loader (via 'make_data_loader') and is called inside a loop
  }
}

// Built once before the epoch loop: fine.
void trainHoisted(torch::nn::Linear &model, const std::string &root, int epochs) {
  auto loader = torch::data::make_data_loader(makeDataset(root), torch::data::DataLoaderOptions(64));
  for (int epoch = 0; epoch < epochs; ++epoch)
    for (auto &batch : *loader)
      model(batch.data.view({-1, 784}));
}
