#include "supervisor.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <cxxabi.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>

namespace ddph {

namespace {
// Process group of the ranks of the run in progress, for signal handlers.
std::atomic<int> gActivePgid{0};

void onTerminate(int sig) {
  int pg = gActivePgid.load();
  if (pg > 0) kill(-pg, SIGKILL);
  signal(sig, SIG_DFL);
  raise(sig);
}
}  // namespace

void installTerminationHandlers() {
  struct sigaction sa {};
  sa.sa_handler = onTerminate;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

void RankProcesses::spawn(int rank, const std::string& logPath, const std::function<int()>& body) {
  pid_t parent = getpid();
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + strerror(errno));
  if (pid == 0) {
    // One process group per run: one kill(-pgid) reaches every rank.
    setpgid(0, pgid_ ? pgid_ : 0);
    // If the supervisor dies (ctest timeout, kill -9), the ranks follow.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(97);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    if (!logPath.empty()) {
      int fd = ::open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        ::close(fd);
      }
    }
    int rc = 98;
    try {
      rc = body();
    } catch (...) {
    }
    std::fflush(stdout);
    std::fflush(stderr);
    _exit(rc);
  }
  // Also set from the parent: whichever runs first wins the race.
  setpgid(pid, pgid_ ? pgid_ : pid);
  if (!pgid_) pgid_ = pid;
  gActivePgid.store(pgid_);
  kids_.push_back(Child{rank, pid});
}

void RankProcesses::poll() {
  for (auto& c : kids_) {
    if (c.exited) continue;
    int st = 0;
    pid_t r = waitpid(c.pid, &st, WNOHANG);
    if (r == c.pid) {
      c.exited = true;
      c.status = st;
      c.exitNs = ddpg::nowNs();
    }
  }
}

void RankProcesses::killAll() {
  if (pgid_) kill(-pgid_, SIGKILL);
  for (auto& c : kids_) {
    if (c.exited) continue;
    kill(c.pid, SIGKILL);
    int st = 0;
    // SIGKILL cannot be caught; the wait is bounded by the kernel tearing
    // the process down.
    while (waitpid(c.pid, &st, 0) < 0 && errno == EINTR) {}
    c.exited = true;
    c.status = st;
    c.exitNs = ddpg::nowNs();
  }
  gActivePgid.store(0);
}

std::string tailOfFile(const std::string& path, size_t maxLines, size_t maxChars) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return "";
  f.seekg(0, std::ios::end);
  std::streamoff size = f.tellg();
  std::streamoff from = size > 8192 ? size - 8192 : 0;
  f.seekg(from);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string::npos) nl = s.size();
    std::string line = s.substr(start, nl - start);
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
    start = nl + 1;
  }
  std::string out;
  for (size_t i = lines.size() > maxLines ? lines.size() - maxLines : 0; i < lines.size(); ++i)
    out += (out.empty() ? "" : " | ") + lines[i];
  if (out.size() > maxChars) out = "..." + out.substr(out.size() - maxChars);
  return out;
}

// Frames of the last stack dump in a rank's log, demangled, without the
// signal handler's own frames.
std::vector<std::string> stackFromLog(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  size_t b = s.rfind("=== ddp-harness: stack of the main thread ===");
  if (b == std::string::npos) return {};
  size_t e = s.find("=== end of stack ===", b);
  if (e == std::string::npos) return {};
  std::vector<std::string> frames;
  size_t pos = s.find('\n', b) + 1;
  bool inHandler = true;
  while (pos < e) {
    size_t nl = s.find('\n', pos);
    std::string line = s.substr(pos, nl - pos);
    pos = nl + 1;
    // "binary(symbol+0x1f) [0x...]"
    std::string where = line.substr(0, line.find('('));
    where = where.substr(where.rfind('/') + 1);
    std::string fn;
    size_t lp = line.find('('), plus = line.find('+', lp);
    if (lp != std::string::npos && plus != std::string::npos && plus > lp + 1) {
      std::string mangled = line.substr(lp + 1, plus - lp - 1);
      int st = 0;
      char* d = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &st);
      fn = st == 0 && d ? d : mangled;
      std::free(d);
    }
    if (inHandler) {
      // Skip up to and including the kernel's signal trampoline.
      if (fn.find("dumpMainStack") != std::string::npos || fn.empty() || where.find("libc") == 0) {
        if (where.find("libc") == 0) inHandler = false;
        continue;
      }
      inHandler = false;
    }
    if (fn.size() > 160) fn = fn.substr(0, 157) + "...";
    frames.push_back((fn.empty() ? "??" : fn) + " [" + where + "]");
  }
  return frames;
}

static std::string readWchan(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/wchan");
  std::string s;
  std::getline(f, s);
  return s;
}

Snapshot supervise(ddpg::Board& board, RankProcesses& procs, const SuperviseOptions& o) {
  const int64_t start = ddpg::nowNs();
  const int64_t stallNs = int64_t(o.stallS * 1e9), graceNs = int64_t(o.graceS * 1e9), wallNs = int64_t(o.wallS * 1e9);
  int64_t firstBadSeen = 0;
  Snapshot snap;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    procs.poll();
    int64_t now = ddpg::nowNs();
    bool allExited = true, anyBlocked = false, allIdle = true, anyBad = false;
    int64_t firstBad = 0;
    for (auto& c : procs.children()) {
      const ddpg::RankSlot& s = board.slot(c.rank);
      if (c.exited) {
        bool abnormal = WIFSIGNALED(c.status) || (WIFEXITED(c.status) && WEXITSTATUS(c.status) != 0);
        if (abnormal) {
          anyBad = true;
          if (!firstBad || c.exitNs < firstBad) firstBad = c.exitNs;
        }
      } else {
        allExited = false;
        int64_t n = s.nextSeq.load();
        if (n > 0) {
          const ddpg::CollRecord& r = s.rec[size_t(n - 1) % ddpg::kMaxRecords];
          if (r.seq.load() == n - 1 && r.state.load() < uint8_t(ddpg::RecState::Completed) &&
              now - r.tEnqueue.load() > stallNs)
            anyBlocked = true;
        }
        int64_t p = s.progressNs.load();
        if (!p || now - p <= stallNs) allIdle = false;
      }
      int64_t e = s.errorNs.load();
      if (e) {
        anyBad = true;
        if (!firstBad || e < firstBad) firstBad = e;
      }
    }
    bool done = false;
    if (allExited) {
      snap.trigger = anyBad ? Trigger::Failure : Trigger::AllDone;
      done = true;
    } else if (anyBad) {
      if (!firstBadSeen) firstBadSeen = now;
      if (now - firstBadSeen >= graceNs) {
        snap.trigger = Trigger::Failure;
        done = true;
      }
    } else if (anyBlocked && allIdle) {
      snap.trigger = Trigger::Hang;
      snap.cutoffNs = now;
      done = true;
    }
    if (!done && now - start > wallNs) {
      snap.trigger = Trigger::WallClock;
      snap.cutoffNs = now;
      done = true;
    }
    if (!done) continue;
    snap.triggerNs = now;
    // Ask every live rank where its main thread is before it dies.
    bool asked = false;
    for (auto& c : procs.children())
      if (!c.exited && !o.logPrefix.empty()) {
        syscall(SYS_tgkill, c.pid, c.pid, SIGUSR2);
        asked = true;
      }
    // No poll() after this: exit states are the ones from before the signal.
    if (asked) std::this_thread::sleep_for(std::chrono::milliseconds(150));
    for (auto& c : procs.children()) {
      RankView v = readSlot(board.slot(c.rank), c.rank);
      if (!v.pid) v.pid = c.pid;
      if (c.exited) {
        v.exited = true;
        v.exitNs = c.exitNs;
        if (WIFSIGNALED(c.status)) v.signal = WTERMSIG(c.status);
        else v.exitCode = WEXITSTATUS(c.status);
      } else {
        v.wchan = readWchan(c.pid);
      }
      if (!o.logPrefix.empty()) {
        std::string log = o.logPrefix + std::to_string(c.rank) + ".log";
        if (!c.exited) v.stack = stackFromLog(log);
        else v.logTail = tailOfFile(log);
      }
      snap.ranks.push_back(std::move(v));
    }
    procs.killAll();
    return snap;
  }
}

}  // namespace ddph
