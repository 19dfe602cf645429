#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/version.h>
#include <gloo/config.h>

#include <ATen/Parallel.h>

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "rank_launch.hpp"
#include "scenario_api.hpp"

namespace ddph {

std::vector<ScenarioDef>& registry() {
  static std::vector<ScenarioDef> r;
  return r;
}

const ScenarioDef* findScenario(const std::string& id) {
  for (auto& s : registry())
    if (s.id == id) return &s;
  return nullptr;
}

std::string torchVersion() { return TORCH_VERSION; }
std::string glooVersion() {
  return std::to_string(GLOO_VERSION_MAJOR) + "." + std::to_string(GLOO_VERSION_MINOR) + "." +
         std::to_string(GLOO_VERSION_PATCH);
}

void RankCtx::allreduce(at::Tensor& t, const char* tag) {
  ddpg::TracedProcessGroup::TagScope s(tag);
  std::vector<at::Tensor> v{t};
  pg->allreduce(v)->wait();
}

void RankCtx::broadcast(at::Tensor& t, int root, const char* tag) {
  ddpg::TracedProcessGroup::TagScope s(tag);
  std::vector<at::Tensor> v{t};
  c10d::BroadcastOptions o;
  o.rootRank = root;
  pg->broadcast(v, o)->wait();
}

void RankCtx::barrier(const char* tag) {
  ddpg::TracedProcessGroup::TagScope s(tag);
  pg->barrier()->wait();
}

void RankCtx::compute(double seconds) {
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    rec.progress();
  }
}

void RankCtx::exitProcess(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  rec.setPhase(ddpg::Phase::Done);
  _exit(code);
}

TinyModel::TinyModel(const std::vector<std::pair<std::string, std::vector<int64_t>>>& shapes, uint64_t seed) {
  auto gen = at::detail::createCPUGenerator(seed);
  for (auto& s : shapes) {
    at::Tensor t = at::randn(s.second, gen, at::TensorOptions().dtype(at::kFloat));
    t.set_requires_grad(true);
    params.emplace_back(s.first, t);
  }
}

void TinyModel::zeroGrad() {
  for (auto& p : params)
    if (p.second.grad().defined()) p.second.mutable_grad() = at::Tensor();
}

void TinyModel::sgd(double lr) {
  at::NoGradGuard g;
  for (auto& p : params)
    if (p.second.grad().defined()) p.second.sub_(p.second.grad() * lr);
}

void syncGrads(RankCtx& ctx, TinyModel& m) {
  for (auto& p : m.params) {
    at::Tensor g = p.second.grad();
    if (!g.defined()) continue;
    std::string tag = "grad:" + p.first;
    ctx.allreduce(g, tag.c_str());
    g.div_(ctx.world);
  }
}

at::Tensor trainStep(RankCtx& ctx, TinyModel& m, int step, uint64_t salt) {
  m.zeroGrad();
  auto g = at::detail::createCPUGenerator(ctx.seed + uint64_t(ctx.rank) * salt + uint64_t(step));
  at::Tensor x = at::randn({8, 4}, g);
  (x.matmul(m.params[0].second.t()) + m.params[1].second).pow(2).mean().backward();
  ctx.compute(ctx.stepS);
  syncGrads(ctx, m);
  m.sgd(0.01);
  return x;
}

void broadcastParams(RankCtx& ctx, TinyModel& m) {
  at::NoGradGuard g;
  for (auto& p : m.params) {
    at::Tensor d = p.second.detach();
    std::string tag = "init:" + p.first;
    ctx.broadcast(d, 0, tag.c_str());
  }
}

namespace {
// The supervisor sends SIGUSR2 to the main thread of a rank it is about to
// kill; the rank prints where that thread is into its log.  backtrace() is
// called once at start-up so the handler does not load libgcc_s itself.
void dumpMainStack(int) {
  static const char head[] = "\n=== ddp-harness: stack of the main thread ===\n";
  static const char tail[] = "=== end of stack ===\n";
  void* frames[64];
  int n = backtrace(frames, 64);
  ssize_t unused = write(2, head, sizeof head - 1);
  backtrace_symbols_fd(frames, n, 2);
  unused = write(2, tail, sizeof tail - 1);
  (void)unused;
}

void installStackDump() {
  void* warm[2];
  backtrace(warm, 2);
  struct sigaction sa {};
  sa.sa_handler = dumpMainStack;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR2, &sa, nullptr);
}
}  // namespace

int runRank(const RankLaunch& l) {
  installStackDump();
  // As in a Python rank: a peer that dies under a collective must reach this
  // rank as that collective's error (EPIPE), not kill it with SIGPIPE and
  // make it look like a second culprit.
  signal(SIGPIPE, SIG_IGN);
  ddpg::RankRecorder rec(l.slot);
  l.slot->pid.store(getpid());
  rec.setPhase(ddpg::Phase::Starting);
  rec.progress();
  try {
    // Four ranks on two cores: intra-op threads would only fight.
    at::set_num_threads(1);
    c10::intrusive_ptr<c10d::Store> store;
    auto storeTimeout = std::chrono::milliseconds(int64_t(l.storeTimeoutS * 1000));
    if (!l.masterAddr.empty()) {
      c10d::TCPStoreOptions o;
      o.port = uint16_t(l.masterPort);
      o.isServer = false;  // the rank-0 supervisor hosts it, so it outlives ranks
      o.numWorkers = c10::nullopt;
      o.waitWorkers = false;
      o.timeout = storeTimeout;
      auto tcp = c10::make_intrusive<c10d::TCPStore>(l.masterAddr, o);
      store = c10::make_intrusive<c10d::PrefixStore>("ranks", tcp);
    } else {
      store = c10::make_intrusive<c10d::FileStore>(l.storePath, l.world);
    }
    store->setTimeout(storeTimeout);

    const ScenarioDef& sc = *l.scenario;
    double timeoutS = sc.pgTimeoutS > 0 ? sc.pgTimeoutS : l.pgTimeoutS;
    c10::intrusive_ptr<ddpg::PGBase> pg;
    bool explicitTimeout = !(l.bad && sc.badUsesDefaultTimeout);
    if (l.backend == BackendKind::Gloo && !explicitTimeout) {
      // The pattern ddp-init-timeout flags: options without a timeout.
      auto opts = c10d::ProcessGroupGloo::Options::create();
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      l.slot->pgTimeoutMs.store(opts->timeout.count());
      pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, l.rank, l.world, opts);
    } else {
      ddpg::GroupSetup gs;
      gs.store = store;
      gs.rank = l.rank;
      gs.worldSize = l.world;
      gs.backend = l.backend == BackendKind::Gloo ? ddpg::Backend::Gloo : ddpg::Backend::Nccl;
      gs.timeout = std::chrono::milliseconds(int64_t(timeoutS * 1000));
      gs.localDevice = l.localRank;
      l.slot->pgTimeoutMs.store(gs.timeout.count());
      l.slot->pgTimeoutExplicit.store(explicitTimeout ? 1 : 0);
      pg = ddpg::createProcessGroup(gs);
    }
    auto clk = ddpg::measureClockOffset(*store, l.rank, l.world);
    l.slot->clockOffsetNs.store(clk.first);
    l.slot->clockUncertNs.store(clk.second);
    ddpg::HeartbeatWatchdog hb(l.slot, ddpg::HeartbeatWatchdog::Options{});

    RankCtx ctx;
    ctx.rank = l.rank;
    ctx.world = l.world;
    ctx.bad = l.bad;
    ctx.seed = l.seed;
    ctx.steps = l.steps;
    ctx.backend = l.backend == BackendKind::Gloo ? ddpg::Backend::Gloo : ddpg::Backend::Nccl;
    ctx.store = store;
    ctx.pg = c10::make_intrusive<ddpg::TracedProcessGroup>(pg, l.slot);
    ctx.rec = rec;
    ctx.workDir = l.workDir;
    ctx.pgTimeoutS = timeoutS;
    rec.setPhase(ddpg::Phase::Running);
    sc.run(ctx);
    rec.setPhase(ddpg::Phase::Done);

    // Leave together: a rank that closes its sockets while a peer still
    // reads the tail of the last collective would turn success into a
    // "connection reset".  Bounded, and outside the traced sequence.
    store->set("ddph/done/" + std::to_string(l.rank), std::vector<uint8_t>{1});
    std::vector<std::string> keys;
    for (int r = 0; r < l.world; ++r) keys.push_back("ddph/done/" + std::to_string(r));
    try {
      store->wait(keys, std::chrono::milliseconds(5000));
    } catch (const std::exception&) {
    }
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(0);
  } catch (const std::exception& e) {
    rec.setError(e.what());
    rec.setPhase(ddpg::Phase::Failed);
    std::fprintf(stderr, "rank %d: %s\n", l.rank, e.what());
    std::fflush(stderr);
    _exit(3);
  }
}

}  // namespace ddph
