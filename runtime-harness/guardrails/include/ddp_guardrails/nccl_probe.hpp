// No torch here: the supervisor asks these before it forks any rank.
#pragma once
#include <string>

namespace ddpg {
// Whether this binary was built with the NCCL path.
bool ncclCompiledIn();
// "2.28.9", or "" when not compiled in.
std::string ncclVersionString();
// Whether a GPU driver answers and at least one device is visible; `why`
// explains a false answer in words a user can act on.  It initialises the
// CUDA runtime, which is not fork-safe: a process that forks ranks afterwards
// must call probeGpuInChild() instead.
// `devices`, when given, receives how many devices are visible.
bool gpuDriverAvailable(std::string* why, int* devices = nullptr);
// Runs gpuDriverAvailable() in a short-lived child process (bounded wait).
bool probeGpuInChild(std::string* why, int* devices = nullptr);
}  // namespace ddpg
