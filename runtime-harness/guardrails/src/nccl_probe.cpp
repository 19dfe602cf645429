#include "ddp_guardrails/nccl_probe.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#ifdef DDPG_HAVE_NCCL
#include <cuda_runtime.h>
#include <nccl.h>
#endif

namespace ddpg {

#ifdef DDPG_HAVE_NCCL
namespace {
std::string cudaWhy(cudaError_t e) { return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e); }
}  // namespace

bool ncclCompiledIn() { return true; }

std::string ncclVersionString() {
  int v = 0;
  if (ncclGetVersion(&v) != ncclSuccess) return "unknown";
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch.
  return std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." + std::to_string(v % 100);
}

bool gpuDriverAvailable(std::string* why, int* devices) {
  int driver = 0;
  cudaError_t e = cudaDriverGetVersion(&driver);
  if (e != cudaSuccess || driver == 0) {
    if (why) *why = "no NVIDIA GPU driver is available on this host (cudaDriverGetVersion: " +
                    (e != cudaSuccess ? cudaWhy(e) : std::string("no driver installed")) + ")";
    return false;
  }
  int n = 0;
  e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    if (why) *why = "no usable GPU (cudaGetDeviceCount: " +
                    (e != cudaSuccess ? cudaWhy(e) : std::string("0 devices")) +
                    ", driver API version " + std::to_string(driver) + ")";
    return false;
  }
  if (devices) *devices = n;
  return true;
}
#else
bool ncclCompiledIn() { return false; }
std::string ncclVersionString() { return ""; }
bool gpuDriverAvailable(std::string* why, int* devices) {
  if (why) *why = "this ddp-harness was built without NCCL (CUDA toolkit with NCCL not found at configure time)";
  if (devices) *devices = 0;
  return false;
}
#endif

bool probeGpuInChild(std::string* why, int* devices) {
  int fds[2];
  if (pipe(fds) != 0) {
    if (why) *why = "pipe() failed";
    return false;
  }
  pid_t pid = fork();
  if (pid < 0) {
    if (why) *why = "fork() failed";
    return false;
  }
  if (pid == 0) {
    close(fds[0]);
    std::string w;
    int n = 0;
    bool ok = gpuDriverAvailable(&w, &n);
    // "<ok><device count>:<why>"
    std::string msg = (ok ? "1" : "0") + std::to_string(n) + ":" + w;
    ssize_t unused = write(fds[1], msg.data(), msg.size());
    (void)unused;
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[512];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  int status = 0;
  for (;;) {
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      close(fds[0]);
      if (why) *why = "GPU probe did not answer within 20 s";
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ssize_t n;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) msg.append(buf, size_t(n));
  close(fds[0]);
  if (msg.empty()) {
    if (why) *why = "GPU probe crashed (status " + std::to_string(status) + ")";
    return false;
  }
  const size_t colon = msg.find(':');
  if (devices) *devices = colon == std::string::npos ? 0 : std::atoi(msg.substr(1, colon - 1).c_str());
  if (why) *why = colon == std::string::npos ? msg.substr(1) : msg.substr(colon + 1);
  return msg[0] == '1';
}

}  // namespace ddpg
