// Stress corpus, in C++: the same headers as nccl_mpi.c plus the CUDA runtime's
// C++ inline functions.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
