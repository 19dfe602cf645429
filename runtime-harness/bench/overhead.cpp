// Per-collective cost of the tracer against plain c10d and against
// c10d::ProcessGroupWrapper (what TORCH_DISTRIBUTED_DEBUG=DETAIL installs).
//
// Part 1 forks real Gloo ranks and times allreduce+wait in three modes,
// interleaved op by op so that machine noise hits all modes alike.
// Part 2 times the tracer alone over a group that does nothing, which is
// the tracer's own cost without network noise.
#include <sys/wait.h>
#include <unistd.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupWrapper.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ddp_guardrails/guardrails.hpp"

namespace {

double nowS() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

class NullWork : public c10d::Work {
 public:
  bool isCompleted() override { return true; }
  bool isSuccess() const override { return true; }
  bool wait(std::chrono::milliseconds) override { return true; }
};

class NullGroup : public ddpg::PGBase {
 public:
  NullGroup() : ddpg::PGBase(0, 1) {}
  const std::string getBackendName() const override { return "null"; }
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>&, const c10d::AllreduceOptions&) override {
    return c10::make_intrusive<NullWork>();
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

int runRank(int rank, int world, const std::string& dir, int iters, int rounds, int64_t numel, int outFd) {
  at::set_num_threads(1);
  auto store = c10::make_intrusive<c10d::FileStore>(dir + "/store", world);
  ddpg::GroupSetup gs;
  gs.store = c10::make_intrusive<c10d::PrefixStore>("main", store);
  gs.rank = rank;
  gs.worldSize = world;
  gs.timeout = std::chrono::seconds(60);
  auto plain = ddpg::createProcessGroup(gs);
  ddpg::GroupSetup hs = gs;
  hs.store = c10::make_intrusive<c10d::PrefixStore>("helper", store);
  auto helperBase = ddpg::createProcessGroup(hs);
  auto helper = c10::static_intrusive_pointer_cast<c10d::ProcessGroupGloo>(helperBase);
  auto wrapper = c10::make_intrusive<c10d::ProcessGroupWrapper>(plain, helper);
  auto slot = std::make_unique<ddpg::RankSlot>();
  auto traced = c10::make_intrusive<ddpg::TracedProcessGroup>(plain, slot.get());
  std::vector<std::pair<const char*, c10::intrusive_ptr<ddpg::PGBase>>> modes = {
      {"plain", plain}, {"tracer", traced}, {"wrapper", wrapper}};
  std::vector<at::Tensor> t{at::ones({numel})};
  for (auto& m : modes)
    for (int i = 0; i < 100; ++i) m.second->allreduce(t)->wait();
  // Each operation is timed on its own and the modes take turns op by op:
  // load from other processes then hits every mode alike, and the median
  // ignores the ops that a descheduling stretched.
  std::vector<std::vector<double>> perOp(modes.size());
  for (int r = 0; r < rounds; ++r) {
    plain->barrier()->wait();
    for (int i = 0; i < iters; ++i)
      for (size_t m = 0; m < modes.size(); ++m) {
        double t0 = nowS();
        modes[m].second->allreduce(t)->wait();
        perOp[m].push_back((nowS() - t0) * 1e6);
      }
  }
  if (rank == 0) {
    std::string out;
    for (size_t m = 0; m < modes.size(); ++m) out += std::string(modes[m].first) + " " + std::to_string(median(perOp[m])) + "\n";
    ssize_t unused = write(outFd, out.data(), out.size());
    (void)unused;
  }
  plain->barrier()->wait();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int world = 2, iters = 1000, rounds = 3;
  int64_t numel = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--world-size") world = std::atoi(argv[i + 1]);
    else if (a == "--iters") iters = std::atoi(argv[i + 1]);
    else if (a == "--rounds") rounds = std::atoi(argv[i + 1]);
    else if (a == "--numel") numel = std::atoll(argv[i + 1]);
  }
  char tmpl[] = "/tmp/ddp-bench.XXXXXX";
  if (!mkdtemp(tmpl)) return 2;
  std::string dir = tmpl;
  int fds[2];
  if (pipe(fds) != 0) return 2;
  std::vector<pid_t> kids;
  for (int r = 0; r < world; ++r) {
    pid_t p = fork();
    if (p == 0) {
      close(fds[0]);
      alarm(300);  // never outlive a broken run
      int rc = 1;
      try {
        rc = runRank(r, world, dir, iters, rounds, numel, fds[1]);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "rank %d: %s\n", r, e.what());
      }
      _exit(rc);
    }
    kids.push_back(p);
  }
  close(fds[1]);
  std::string res;
  char buf[256];
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) res.append(buf, size_t(n));
  bool ok = true;
  for (pid_t p : kids) {
    int st = 0;
    waitpid(p, &st, 0);
    ok = ok && WIFEXITED(st) && WEXITSTATUS(st) == 0;
  }
  std::string rm = "rm -rf " + dir;
  if (std::system(rm.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", dir.c_str());
  if (!ok) {
    std::fprintf(stderr, "benchmark ranks failed\n");
    return 1;
  }
  double plain = 0, tracer = 0, wrapper = 0;
  {
    char name[32];
    double v;
    const char* p = res.c_str();
    int consumed;
    while (std::sscanf(p, "%31s %lf\n%n", name, &v, &consumed) == 2) {
      std::string s = name;
      if (s == "plain") plain = v;
      else if (s == "tracer") tracer = v;
      else if (s == "wrapper") wrapper = v;
      p += consumed;
    }
  }

  // Part 2: the tracer alone (this process may start torch threads now:
  // the ranks are done).
  auto slot = std::make_unique<ddpg::RankSlot>();
  auto null = c10::make_intrusive<NullGroup>();
  auto traced = c10::make_intrusive<ddpg::TracedProcessGroup>(null, slot.get());
  std::vector<at::Tensor> t{at::ones({numel})};
  const int micro = 200000;
  std::vector<double> rawNs, trNs;
  for (int r = 0; r < 5; ++r) {
    double t0 = nowS();
    for (int i = 0; i < micro; ++i) null->allreduce(t, c10d::AllreduceOptions())->wait();
    double t1 = nowS();
    for (int i = 0; i < micro; ++i) traced->allreduce(t)->wait();
    double t2 = nowS();
    rawNs.push_back((t1 - t0) / micro * 1e9);
    trNs.push_back((t2 - t1) / micro * 1e9);
  }
  double own = median(trNs) - median(rawNs);

  std::printf("ranks %d, allreduce of %lld float32, %d x %d operations per mode, modes interleaved (median per op)\n", world,
              (long long)numel, iters, rounds);
  std::printf("%-34s %10s %14s\n", "mode", "us/op", "overhead us/op");
  std::printf("%-34s %10.2f %14s\n", "plain c10d (ProcessGroupGloo)", plain, "-");
  std::printf("%-34s %10.2f %14.2f\n", "ddpg::TracedProcessGroup", tracer, tracer - plain);
  std::printf("%-34s %10.2f %14.2f\n", "c10d::ProcessGroupWrapper", wrapper, wrapper - plain);
  std::printf("tracer bookkeeping alone (null group): %.0f ns/op\n", own);
  std::printf("RESULT plain_us=%.2f tracer_us=%.2f wrapper_us=%.2f tracer_overhead_us=%.2f wrapper_overhead_us=%.2f "
              "tracer_alone_ns=%.0f\n",
              plain, tracer, wrapper, tracer - plain, wrapper - plain, own);
  return 0;
}
