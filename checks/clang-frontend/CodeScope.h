// Which code is the user's.  ddplint analyses and reports only the user's own
// code.  System headers never are, and neither are the headers of the
// libraries it models (LibTorch, c10, ATen, caffe2, gloo, NCCL, MPI, CUDA, ...)
// whichever flag brought them in: a hand-written Makefile or a vendored
// libtorch passes them with -I, so "not a system header" is not enough.  Their
// internals are the API catalog's business, and nobody can act on a finding
// inside them.
#pragma once

#include "clang/Basic/SourceLocation.h"
#include "clang/Basic/SourceManager.h"

#include <atomic>
#include <cstddef>

namespace ddplint::clangfe {

// True for a header path that belongs to a modelled or well-known library.
bool isLibraryPath(llvm::StringRef path);

// User code: a valid location, outside system headers and library headers
// (judged at the expansion location, so a library macro used in user code is
// user code).
bool isUserCode(const clang::SourceManager &sm, clang::SourceLocation loc);

// Stress testing (tests/stress): every function body, library headers
// included, is analysed as if the user had written it.  Process-wide.
void setAnalyzeLibraryCode(bool on);
bool analyzeLibraryCode();

// How many function bodies the model builders have analysed in this process
// (the stress test checks it against a floor, so it cannot analyse nothing).
std::size_t functionsAnalysed();
void countFunctionAnalysed();

} // namespace ddplint::clangfe
