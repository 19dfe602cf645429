// RUN: %check_ddp_tidy %s ddp-divergent-collective,ddp-error-path-exit %t -- -- %mpi_cxx_flags
// A test driver with its `main` in this unit and no handler that catches
// (mscclpp's mscclpp-test): a failed status throws, nothing catches it, and
// std::terminate aborts the process; the launcher then ends the job.  No
// rank is left waiting, so nothing is reported.  A handler that only cleans
// up and rethrows (`catch (...) { ...; throw; }`) catches nothing.
#include <mpi.h>
#include <stdexcept>

typedef enum { devSuccess = 0, devError = 1 } devStatus_t;
devStatus_t dev_malloc(void **p, unsigned long n);
devStatus_t dev_sync();

#define DEVTHROW(cmd)                                   \
  do {                                                  \
    devStatus_t err = cmd;                              \
    if (err != devSuccess)                              \
      throw std::runtime_error("device call failed");   \
  } while (false)

template <class F> void *guarded_alloc(F alloc, unsigned long n) {
  void *p = nullptr;
  try {
    alloc(&p, n);
  } catch (...) {
    throw;
  }
  return p;
}

double bench_time(int iters) {
  double t = 0, tmax = 0;
  for (int i = 0; i < iters; ++i)
    DEVTHROW(dev_sync());
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return tmax;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  void *buf = guarded_alloc(dev_malloc, 1024);
  DEVTHROW(dev_malloc(&buf, 1024));
  MPI_Barrier(MPI_COMM_WORLD);
  bench_time(10);
  MPI_Finalize();
  return 0;
}
