#include "clang-frontend/CodeScope.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Path.h"

namespace ddplint::clangfe {

namespace {

std::atomic<bool> gAnalyzeLibraryCode{false};
std::atomic<std::size_t> gFunctionsAnalysed{0};

// Folder names that only ever hold a library's headers.
bool libraryFolder(llvm::StringRef c) {
  static const llvm::StringSet<> names = {
      "c10",     "ATen",     "caffe2", "gloo",   "pybind11", "Eigen",    "eigen3", "boost",
      "cub",     "thrust",   "cutlass", "cute",  "openmpi",  "mpich",    "nccl",   "absl",
      "tensorpipe", "fmt",   "spdlog", "yaml-cpp", "google", "grpcpp",   "grpc",   "c10d",
      "torch_xla", "kineto", "fbgemm", "onnx",    "cudnn",    "nvtx3",   "cuda",   "llvm",
      "llvm-c",  "clang",    "gtest",  "gmock",  "catch2",   "tbb",      "oneapi", "dnnl",
      "mkl",     "hip",      "rccl",   "rocm"};
  return names.contains(c);
}

// Header names of libraries that install them at the top of an include folder.
bool libraryHeader(llvm::StringRef name) {
  static const llvm::StringSet<> names = {
      "mpi.h",          "mpio.h",         "mpi_portable_platform.h", "mpif.h",
      "mpi-ext.h",      "nccl.h",         "nccl_net.h",     "nccl_device.h",
      "nccl_tuner.h",   "cuda.h",         "cuda_runtime.h", "cuda_runtime_api.h",
      "cuda_fp16.h",    "cuda_bf16.h",    "cudnn.h",        "cublas_v2.h",
      "cublas.h",       "cublasLt.h",     "curand.h",       "cusparse.h",
      "driver_types.h", "vector_types.h", "cuComplex.h",    "omp.h",
      "getopt.h",       "yaml.h",         "hdf5.h",         "cxxopts.hpp",
      "argparse.hpp",   "json.hpp",       "CLI11.hpp"};
  return names.contains(name);
}

bool classify(llvm::StringRef path) {
  llvm::SmallVector<llvm::StringRef, 16> parts;
  path.split(parts, '/', -1, false);
  if (parts.empty())
    return false;
  if (libraryHeader(parts.back()))
    return true;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    llvm::StringRef c = parts[i];
    llvm::StringRef next = parts[i + 1];
    if (libraryFolder(c) && c != "cuda" && c != "llvm" && c != "clang" && c != "google")
      return true;
    // torch/csrc, torch/include, include/torch (Debian, a vendored libtorch, site-packages)
    if ((c == "torch" && (next == "csrc" || next == "include" || next == "script.h" ||
                          next == "torch.h" || next == "extension.h")) ||
        (c == "include" && (next == "torch" || next == "c10")))
      return true;
    // The CUDA toolkit: .../cuda/include, .../cuda-13.0/targets/...
    if ((c == "cuda" || c.starts_with("cuda-")) &&
        (next == "include" || next == "targets" || next == "lib64"))
      return true;
    if ((c == "llvm" || c == "clang" || c.starts_with("llvm-")) &&
        (next == "ADT" || next == "Support" || next == "IR" || next == "AST" || next == "include" ||
         next == "Basic" || next == "Tooling"))
      return true;
    if (c == "google" && (next == "protobuf" || next == "glog" || next == "gflags"))
      return true;
  }
  return false;
}

} // namespace

bool isLibraryPath(llvm::StringRef path) {
  // A thread-local cache: a translation unit asks about the same few hundred
  // headers hundreds of thousands of times, and --jobs runs units in threads.
  thread_local llvm::StringMap<bool> cache;
  auto it = cache.find(path);
  if (it != cache.end())
    return it->second;
  bool r = classify(path);
  if (cache.size() > 100000)
    cache.clear();
  cache[path] = r;
  return r;
}

bool isUserCode(const clang::SourceManager &sm, clang::SourceLocation loc) {
  if (loc.isInvalid())
    return false;
  if (gAnalyzeLibraryCode.load(std::memory_order_relaxed))
    return true;
  clang::SourceLocation e = sm.getExpansionLoc(loc);
  if (sm.isInSystemHeader(e))
    return false;
  clang::FileID fid = sm.getFileID(e);
  if (fid == sm.getMainFileID())
    return true;
  llvm::StringRef name;
  if (auto ref = sm.getFileEntryRefForID(fid))
    name = ref->getName();
  else
    name = sm.getBufferName(e);
  return !isLibraryPath(name);
}

void setAnalyzeLibraryCode(bool on) { gAnalyzeLibraryCode.store(on); }
bool analyzeLibraryCode() { return gAnalyzeLibraryCode.load(std::memory_order_relaxed); }
std::size_t functionsAnalysed() { return gFunctionsAnalysed.load(); }
void countFunctionAnalysed() { gFunctionsAnalysed.fetch_add(1, std::memory_order_relaxed); }

} // namespace ddplint::clangfe
