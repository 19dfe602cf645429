// How supervisors of externally launched ranks talk: flags every poll, full
// rank state on request, the verdict at the end.  Torch-free interface; the
// TCPStore behind it lives in supervisor_link.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "verdict.hpp"

namespace ddph {

struct RankFlags {
  bool seen = false, blocked = false, idle = false, bad = false, exited = false;
};

class SupervisorLink {
 public:
  // `server`: host the store (rank 0 without a torchrun agent).
  static std::unique_ptr<SupervisorLink> connect(const std::string& addr, int port, bool server, double timeoutS);
  virtual ~SupervisorLink() = default;
  virtual void publishFlags(int rank, bool blocked, bool idle, bool bad, bool exited) = 0;
  virtual std::vector<RankFlags> readFlags(int world) = 0;
  virtual void publishSnapshot(int rank, const std::string& json) = 0;
  // Waits up to timeoutS for every rank's state; a missing one is reported
  // as such in its RankView.
  virtual std::vector<RankView> collectSnapshots(int world, double timeoutS) = 0;
  virtual void set(const std::string& k, const std::string& v) = 0;
  virtual bool has(const std::string& k) = 0;
  virtual std::string get(const std::string& k) = 0;
};

}  // namespace ddph
