// A data loader built inside the epoch loop: its worker threads start, open
// their shard and build their index again every epoch.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <numeric>
#include <chrono>
#include <fstream>
#include <thread>

#include <torch/data.h>

#include "scenario_api.hpp"

namespace ddph {
namespace {

struct Churn {
  std::atomic<int> workerInits{0};
  std::atomic<int> filesOpened{0};
  std::atomic<int> filesOpen{0};
  std::atomic<int> peakOpen{0};
};

// Per worker thread: the shard handle and index a real reader would keep.
// The destructor runs when the loader joins its workers.
struct WorkerState {
  int fd = -1;
  Churn* churn = nullptr;
  ~WorkerState() {
    if (fd >= 0) {
      ::close(fd);
      churn->filesOpen--;
    }
  }
};
thread_local WorkerState tlsWorker;

class ShardDataset : public torch::data::datasets::Dataset<ShardDataset> {
 public:
  ShardDataset(std::string path, Churn* c, size_t n) : path_(std::move(path)), churn_(c), n_(n) {}
  torch::data::Example<> get(size_t i) override {
    if (tlsWorker.fd < 0) {
      tlsWorker.churn = churn_;
      tlsWorker.fd = ::open(path_.c_str(), O_RDONLY);
      if (tlsWorker.fd < 0) throw std::runtime_error("cannot open shard " + path_);
      churn_->workerInits++;
      churn_->filesOpened++;
      int now = ++churn_->filesOpen;
      int peak = churn_->peakOpen.load();
      while (now > peak && !churn_->peakOpen.compare_exchange_weak(peak, now)) {}
      // Reading the shard header and building the sample index: the fixed
      // cost a worker pays once per life.
      std::vector<char> buf(1 << 20);
      ssize_t unused = pread(tlsWorker.fd, buf.data(), buf.size(), 0);
      (void)unused;
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
    }
    return {at::full({4}, float(i)), at::full({1}, float(i % 2))};
  }
  c10::optional<size_t> size() const override { return n_; }

 private:
  std::string path_;
  Churn* churn_;
  size_t n_;
};

int threadsNow() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  return -1;
}

void run(RankCtx& ctx) {
  const std::string shard = ctx.workDir + "/shard-" + std::to_string(ctx.rank) + ".bin";
  {
    std::ofstream f(shard, std::ios::binary);
    std::vector<char> zeros(1 << 20, 0);
    f.write(zeros.data(), std::streamsize(zeros.size()));
  }
  const int workers = 2, epochs = std::max(3, ctx.steps / 2);
  Churn churn;
  auto options = torch::data::DataLoaderOptions().batch_size(8).workers(workers);
  auto make = [&] {
    return torch::data::make_data_loader<torch::data::samplers::SequentialSampler>(
        ShardDataset(shard, &churn, 64).map(torch::data::transforms::Stack<>()), options);
  };
  TinyModel m({{"fc.weight", {1, 4}}, {"fc.bias", {1}}}, ctx.seed);
  broadcastParams(ctx, m);
  decltype(make()) loader;
  if (!ctx.bad) loader = make();  // built once, iterated every epoch
  std::vector<double> epochS;
  int peakThreads = 0;
  for (int e = 0; e < epochs; ++e) {
    auto t0 = std::chrono::steady_clock::now();
    ddpg::Mark mark(ctx.rec, ddpg::MarkKind::Compute, "epoch " + std::to_string(e));
    if (ctx.bad) loader = make();  // the pattern ddp-dataloader-recreated flags
    at::Tensor epochLoss = at::zeros({1});
    for (auto& b : *loader) {
      m.zeroGrad();
      at::Tensor loss = (b.data.matmul(m.params[0].second.t()) + m.params[1].second - b.target).pow(2).mean();
      loss.backward();
      syncGrads(ctx, m);
      m.sgd(0.01);
      epochLoss += loss.detach();
      peakThreads = std::max(peakThreads, threadsNow());
      ctx.rec.progress();
    }
    ctx.allreduce(epochLoss, "epoch_loss");
    epochS.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  loader.reset();
  std::string es;
  for (double s : epochS) es += (es.empty() ? "" : ",") + std::to_string(s);
  std::string json = "{\"epochs\":" + std::to_string(epochs) + ",\"workers\":" + std::to_string(workers) +
                     ",\"worker_threads_started\":" + std::to_string(churn.workerInits.load()) +
                     ",\"shard_files_opened\":" + std::to_string(churn.filesOpened.load()) +
                     ",\"peak_open_shard_fds\":" + std::to_string(churn.peakOpen.load()) +
                     ",\"peak_threads\":" + std::to_string(peakThreads) + ",\"epoch_s\":[" + es + "]";
  if (churn.workerInits.load() > workers) {
    char b[400];
    snprintf(b, sizeof b,
             "%d worker threads started and %d shard files opened over %d epochs for %d workers: the loader is "
             "rebuilt every epoch; epochs after the first took %.3f s on average",
             churn.workerInits.load(), churn.filesOpened.load(), epochs, workers,
             epochs > 1 ? (std::accumulate(epochS.begin() + 1, epochS.end(), 0.0) / (epochs - 1)) : epochS[0]);
    json += ",\"finding\":\"" + std::string(b) + "\"";
  }
  json += "}";
  ctx.rec.setMetrics(json);
}

}  // namespace

DDPH_REGISTER_SCENARIO(reg, "dataloader-recreated", "data loader rebuilt every epoch",
                       "make_data_loader inside the epoch loop: workers restart and reopen shards each epoch",
                       "the loader is built once and iterated every epoch", 1, false, 0, &run);

}  // namespace ddph
