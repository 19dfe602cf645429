#include "ddp_guardrails/guardrails.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#ifdef DDPG_HAVE_NCCL
#include "nccl_group.hpp"
#endif

namespace ddpg {

const char* backendName(Backend b) { return b == Backend::Gloo ? "gloo" : "nccl"; }

c10::intrusive_ptr<ddpg::PGBase> createProcessGroup(const GroupSetup& s) {
  if (s.timeout.count() <= 0)
    throw std::invalid_argument("createProcessGroup: the timeout must be positive (rule ddp-init-timeout)");
  if (!s.store) throw std::invalid_argument("createProcessGroup: no store");
  if (s.backend == Backend::Gloo) {
    auto opts = c10d::ProcessGroupGloo::Options::create(s.timeout);
    opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname(s.glooHostname));
    return c10::make_intrusive<c10d::ProcessGroupGloo>(s.store, s.rank, s.worldSize, opts);
  }
  // Without async error handling a failed NCCL collective never returns
  // (rule ddp-async-error-handling); respect a value the launcher chose.
  setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1", 0);
#ifdef DDPG_HAVE_NCCL
  return c10::make_intrusive<NcclGroup>(s.store, s.rank, s.worldSize, s.localDevice, s.timeout);
#else
  throw std::runtime_error("NCCL backend requested, but ddp_guardrails was built without NCCL");
#endif
}

void collectiveSave(ddpg::PGBase& pg, c10d::Store& store, const std::string& path,
                    const std::function<void(std::ostream&)>& write, RankRecorder* rec,
                    std::chrono::milliseconds ioTimeout) {
  // Same call order on every rank, so the same number names the same save.
  static std::atomic<int64_t> saves{0};
  const std::string key = "ddpg/save/" + std::to_string(saves++);
  pg.barrier()->wait();
  std::string status = "ok";
  if (pg.getRank() == 0) {
    std::string tmp = path + ".tmp." + std::to_string(getpid());
    try {
      std::unique_ptr<Mark> m;
      if (rec) m = std::make_unique<Mark>(*rec, MarkKind::Write, "collective_save", path);
      {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        if (!f) throw std::runtime_error("cannot open " + tmp);
        write(f);
        f.flush();
        if (!f) throw std::runtime_error("write to " + tmp + " failed");
      }
      // fsync before rename: otherwise a crash can leave the new name
      // pointing at an empty file.
      int fd = ::open(tmp.c_str(), O_RDONLY);
      if (fd >= 0) {
        fsync(fd);
        ::close(fd);
      }
      if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("rename to " + path + " failed");
    } catch (const std::exception& e) {
      status = std::string("error: ") + e.what();
      std::remove(tmp.c_str());
    }
    store.set(key, std::vector<uint8_t>(status.begin(), status.end()));
  } else {
    // Waiting for rank 0's IO goes through the store, with a timeout sized
    // for IO: a collective here would be bound by the process-group timeout
    // (Gloo in LibTorch 1.13 ignores per-call barrier/broadcast timeouts).
    store.wait({key}, ioTimeout);
    auto v = store.get(key);
    status.assign(v.begin(), v.end());
  }
  pg.barrier()->wait();
  if (status != "ok") throw std::runtime_error("collectiveSave: rank 0 failed to write " + path + ": " + status);
}

HeartbeatWatchdog::HeartbeatWatchdog(RankSlot* slot, Options opts) : slot_(slot), opts_(std::move(opts)) {
  if (!slot_) throw std::invalid_argument("HeartbeatWatchdog needs a RankSlot");
  int64_t t = nowNs();
  slot_->heartbeatNs.store(t);
  if (slot_->progressNs.load() == 0) slot_->progressNs.store(t);
  thread_ = std::thread([this] { loop(); });
}

HeartbeatWatchdog::~HeartbeatWatchdog() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string HeartbeatWatchdog::describe(const RankSlot& s) {
  std::ostringstream o;
  int64_t n = s.nextSeq.load();
  if (n > 0) {
    const CollRecord& r = s.rec[size_t(n - 1) % kMaxRecords];
    o << "last collective #" << (n - 1) << " " << opName(r.op) << " " << r.shapes << " "
      << recStateName(RecState(r.state.load()));
    if (r.tag[0]) o << " (" << r.tag << ")";
  } else {
    o << "no collective issued yet";
  }
  int64_t m = s.openMark.load();
  if (m > 0) {
    const MarkRecord& mk = s.marks[size_t(m - 1) % kMaxMarks];
    o << "; inside '" << mk.name << "'";
    if (mk.resource[0]) o << " on " << mk.resource;
  }
  return o.str();
}

void HeartbeatWatchdog::loop() {
  while (!stop_) {
    std::this_thread::sleep_for(opts_.period);
    int64_t t = nowNs();
    slot_->heartbeatNs.store(t, std::memory_order_relaxed);
    if (opts_.stallLimit.count() > 0) {
      int64_t idle = t - slot_->progressNs.load(std::memory_order_relaxed);
      if (idle > int64_t(opts_.stallLimit.count()) * 1000000) {
        std::string msg = "ddp guardrail watchdog: no progress for " + std::to_string(idle / 1000000) +
                          " ms (limit " + std::to_string(opts_.stallLimit.count()) + " ms); " + describe(*slot_);
        RankRecorder(slot_).setError(msg);
        if (opts_.onStall) {
          opts_.onStall(msg);
          slot_->progressNs.store(nowNs());  // one report per stall
        } else {
          std::fprintf(stderr, "%s; aborting this rank\n", msg.c_str());
          std::fflush(stderr);
          std::abort();
        }
      }
    }
  }
}

namespace {
// store.get() of a FileStore polls every 10 ms, which would make the clock
// error 5 ms; polling check() keeps a round trip well under a millisecond.
void waitKey(c10d::Store& store, const std::string& key) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!store.check({key})) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("clock offset exchange: no answer for " + key + " within 60 s");
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}
}  // namespace

std::pair<int64_t, int64_t> measureClockOffset(c10d::Store& store, int rank, int worldSize, int rounds) {
  auto toBytes = [](int64_t v) {
    std::string s = std::to_string(v);
    return std::vector<uint8_t>(s.begin(), s.end());
  };
  auto fromBytes = [](const std::vector<uint8_t>& b) { return std::stoll(std::string(b.begin(), b.end())); };
  if (rank == 0) {
    for (int r = 1; r < worldSize; ++r)
      for (int i = 0; i < rounds; ++i) {
        std::string k = "ddpg/clk/" + std::to_string(r) + "/" + std::to_string(i);
        waitKey(store, k + "/q");
        store.set(k + "/a", toBytes(nowNs()));
      }
    return {0, 0};
  }
  int64_t best = 0, bestRtt = INT64_MAX;
  for (int i = 0; i < rounds; ++i) {
    std::string k = "ddpg/clk/" + std::to_string(rank) + "/" + std::to_string(i);
    int64_t t1 = nowNs();
    store.set(k + "/q", toBytes(t1));
    waitKey(store, k + "/a");
    int64_t t2a = nowNs();
    int64_t remote = fromBytes(store.get(k + "/a"));
    int64_t t2 = t2a;
    // Only the round trip of this round bounds the error: rank 0 answered
    // somewhere between t1 and t2.
    if (t2 - t1 < bestRtt) {
      bestRtt = t2 - t1;
      best = remote - (t1 + t2) / 2;
    }
  }
  return {best, bestRtt / 2};
}

}  // namespace ddpg
