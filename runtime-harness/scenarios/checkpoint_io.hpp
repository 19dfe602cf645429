// Checkpoint bytes and slow file IO shared by the checkpoint scenarios.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenario_api.hpp"

namespace ddph {

// torch.save-compatible bytes (zip + pickle) of the model plus extra state.
std::vector<char> serializeCheckpoint(const TinyModel& m, int64_t step, const at::Tensor& extra);
// Throws when the bytes are not a complete checkpoint; returns its step.
int64_t loadCheckpoint(const std::vector<char>& bytes);
std::vector<char> readFile(const std::string& path);
uint64_t fnv1a(const std::vector<char>& b);
// Writes in chunks with a pause after each, as a loaded network file system
// does; the rank reports progress per chunk, so it is busy, not hung.
void writeSlowly(RankCtx& ctx, const std::string& path, const std::vector<char>& bytes, double totalS,
                 bool truncate = true);

}  // namespace ddph
