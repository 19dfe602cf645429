// The rules decided on Program::facts (Facts.h): each frontend fills the facts,
// calls the rule, emits the findings and renders their FixHints.  One rule
// engine for C++ (checks/tidy via checks/clang-frontend/FactsBuilder) and Python.
#pragma once

#include "ddplint/core/Analysis.h"
#include "ddplint/core/AsyncErrorFacts.h"
#include "ddplint/core/Model.h"

#include <vector>

namespace ddplint::core {

// ddp-init-timeout: a process group, its options or an init call without an
// explicit timeout.  Fixes: InsertTimeoutArg, InsertTimeoutOptionsArg.
std::vector<Finding> initTimeoutFindings(const Program &program);

// ddp-async-error-handling: an NCCL process group while async error handling
// is off for the target version (at the first NCCL group), and every
// deprecated spelling of the variable that version still reads (fix:
// RenameEnvVar).
std::vector<Finding> asyncErrorHandlingFindings(const Program &program,
                                                const AsyncErrorFacts &facts);
std::vector<Finding> asyncErrorHandlingFindings(const Program &program);

// ddp-dataloader-recreated: a loader built inside a loop (not one per input,
// not kept in a container), or a helper that builds one called inside a loop.
std::vector<Finding> dataLoaderRecreatedFindings(const Program &program);

// ddp-dataloader-options (Python): a loader with worker processes
// (num_workers > 0 or a variable) without persistent_workers=True, or without
// pin_memory=True in a program that trains on CUDA; one finding per loader.
// Fixes: Insert/SetPersistentWorkers(True), Insert/SetPinMemory(True).
std::vector<Finding> dataLoaderOptionsFindings(const Program &program);

// ddp-forward-shape-branch: a branch in forward() on the input's shape or
// values or on the rank whose arms run different submodules, use different
// parameters or produce different shapes.
std::vector<Finding> forwardShapeBranchFindings(const Program &program);

// The version the async rule judges, and its wording ("LibTorch 2.0 or newer
// (the headers declare c10d::Backend)").
int targetTorchVersion(const TargetVersions &v, const AsyncErrorFacts &facts);
std::string targetTorchVersionText(const TargetVersions &v, const AsyncErrorFacts &facts);

} // namespace ddplint::core
