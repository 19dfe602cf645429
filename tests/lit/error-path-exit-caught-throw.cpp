// RUN: %check_ddp_tidy %s ddp-divergent-collective,ddp-error-path-exit %t -- -- %mpi_cxx_flags
// The same driver as error-path-exit-uncaught-throw.cpp, but `main` catches
// what the benchmark throws and goes on to finalize: the failing rank leaves
// the benchmark before its all-reduce, which the others wait in.
#include <mpi.h>
#include <cstdio>
#include <stdexcept>

typedef enum { devSuccess = 0, devError = 1 } devStatus_t;
devStatus_t dev_sync();

#define DEVTHROW(cmd)                                   \
  do {                                                  \
    devStatus_t err = cmd;                              \
    if (err != devSuccess)                              \
      throw std::runtime_error("device call failed");   \
  } while (false)

double bench_time(int iters) {
  double t = 0, tmax = 0;
  for (int i = 0; i < iters; ++i)
    DEVTHROW(dev_sync());
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: error-path exit: when 'err != devSuccess' reports a failure on one rank, that rank throws here while the other ranks wait in collective 'MPI_Allreduce' and hang{{.*}} [ddp-error-path-exit]
// CHECK-MESSAGES: :[[@LINE-2]]:5: note: failure checked here
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  try {
    bench_time(10);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s\n", e.what());
  }
  MPI_Finalize();
  return 0;
}
