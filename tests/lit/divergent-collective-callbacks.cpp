// RUN: %check_ddp_tidy %s ddp-divergent-collective,ddp-error-path-exit %t -- -- %mpi_cxx_flags -std=c++17
// A collective handed in as a callback (TransformerEngine's Userbuffers keeps
// `_barrier` and `_allgather` in its communicator, set by the caller to MPI or
// to torch.distributed): a call through a function pointer or a std::function
// named for a collective is that collective.
#include <mpi.h>
#include <functional>
#include <stdexcept>

typedef void (*ExtBarrierOp)(MPI_Comm);
typedef void (*ExtAllgatherOp)(void *, size_t, void *, size_t, MPI_Comm);
struct communicator {
  int myrank;
  MPI_Comm comm_world;
  ExtBarrierOp _barrier;
  ExtAllgatherOp _allgather;
  std::function<void(MPI_Comm)> barrier_fn;
  int (*compare)(const void *, const void *);
};

typedef enum { drvSuccess = 0, drvError = 1 } drvResult_t;
drvResult_t mcCreate(void **handle);

int create(communicator *comm) {
  void *handle = nullptr;
  drvResult_t r = mcCreate(&handle);
  if (r != drvSuccess)
    throw std::runtime_error("multicast object");
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: error-path exit{{.*}}'_barrier (a callback)'{{.*}} [ddp-error-path-exit]
  comm->_barrier(comm->comm_world);
  return 0;
}

void exchange(communicator *comm, int *sizes, int *all) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    comm->_allgather(sizes, sizeof(int), all, sizeof(int), comm->comm_world);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: {{.*}}'_allgather (a callback)' runs only on ranks where{{.*}} [ddp-divergent-collective]
  (*comm->_barrier)(comm->comm_world);
}

void through_std_function(communicator *comm) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0)
    comm->barrier_fn(comm->comm_world);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: {{.*}}'barrier_fn (a callback)' runs only on ranks where{{.*}} [ddp-divergent-collective]
}

// Hard negatives: a callback named for something else, and a collective
// callback every rank calls.
int sort_on_root(communicator *comm, const void *a, const void *b) {
  int r = 0, rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    r = comm->compare(a, b);
  comm->_barrier(comm->comm_world);
  return r;
}
