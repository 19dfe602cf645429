// Stress corpus: every function body of LibTorch's C++ API, c10, ATen and
// c10d (as installed by libtorch-dev) analysed as if the user had written it.
#include <torch/torch.h>
#include <torch/script.h>
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupWrapper.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/comm.hpp>
