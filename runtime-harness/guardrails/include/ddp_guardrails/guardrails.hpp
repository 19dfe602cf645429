// Guardrails for LibTorch c10d programs: the fixes that ddplint's checks
// point to.  Link ddp_guardrails and include this header.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <atomic>

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "ddp_guardrails/board.hpp"
#include "ddp_guardrails/nccl_probe.hpp"
#include "ddp_guardrails/tracer.hpp"

namespace ddpg {

enum class Backend { Gloo, Nccl };
const char* backendName(Backend b);

// Process-group setup that cannot forget the timeout (rule ddp-init-timeout):
// the timeout is a required argument.  For NCCL it also turns on
// TORCH_NCCL_ASYNC_ERROR_HANDLING unless the launcher set it
// (rule ddp-async-error-handling).
struct GroupSetup {
  c10::intrusive_ptr<c10d::Store> store;
  int rank = 0;
  int worldSize = 1;
  Backend backend = Backend::Gloo;
  std::chrono::milliseconds timeout;  // required: no default on purpose
  std::string glooHostname = "127.0.0.1";
  int localDevice = 0;  // NCCL: the CUDA device of this rank
};
c10::intrusive_ptr<ddpg::PGBase> createProcessGroup(const GroupSetup& s);


// Checkpoint save that every rank calls (rules ddp-unguarded-save and
// ddp-rank0-io-barrier): barrier; rank 0 writes `path`.tmp.PID, fsyncs it
// and renames it over `path`; the others wait for rank 0's status through
// the store (up to `ioTimeout`, sized for the write, independent of the
// process-group timeout); barrier.  A failed write raises on every rank.
void collectiveSave(ddpg::PGBase& pg, c10d::Store& store, const std::string& path,
                    const std::function<void(std::ostream&)>& write, RankRecorder* rec = nullptr,
                    std::chrono::milliseconds ioTimeout = std::chrono::minutes(10));

// Heartbeat watchdog.  A thread stamps `heartbeatNs` every period so an
// outside supervisor can tell a live rank from a frozen one; with a stall
// limit it also aborts this rank, with a message naming the collective or
// region it is stuck in, when the main thread makes no progress that long.
class HeartbeatWatchdog {
 public:
  struct Options {
    std::chrono::milliseconds period{100};
    std::chrono::milliseconds stallLimit{0};  // 0: never abort
    std::function<void(const std::string&)> onStall;  // default: print + abort
  };
  HeartbeatWatchdog(RankSlot* slot, Options opts);
  ~HeartbeatWatchdog();
  HeartbeatWatchdog(const HeartbeatWatchdog&) = delete;
  HeartbeatWatchdog& operator=(const HeartbeatWatchdog&) = delete;
  // Describes what the rank is doing now, from its slot.
  static std::string describe(const RankSlot& s);

 private:
  void loop();
  RankSlot* slot_;
  Options opts_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Offset of this rank's monotonic clock to rank 0's, measured through the
// store with a few request/answer rounds (the round with the smallest
// round trip wins).  Rank 0 answers everyone.  Returns {offset, +-bound}.
std::pair<int64_t, int64_t> measureClockOffset(c10d::Store& store, int rank, int worldSize,
                                               int rounds = 3);

}  // namespace ddpg
