/* Stress corpus, in C: NCCL 2.28 (the CUDA toolkit's nccl.h, with
   cuda_runtime.h) and OpenMPI's mpi.h, both on -I. */
#include <nccl.h>
#include <mpi.h>
