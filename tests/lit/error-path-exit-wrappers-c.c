// RUN: %check_ddp_tidy %s ddp-error-path-exit %t -- \
// RUN:   -config="{CheckOptions: {ddp-error-path-exit.CollectiveFunctions: 'comm_allreduce', ddp-error-path-exit.BarrierFunctions: 'comm_barrier'}}" \
// RUN:   -- %mpi_c_flags
// Without the options the wrappers are opaque calls, and their int is no status
// (MPI's own is):
// RUN: %check_ddp_tidy --prefix NOOPT %s ddp-error-path-exit %t -- -- %mpi_c_flags
// A project's own communication layer over MPI, in C: `int` results that are
// statuses because the call is a collective.
#include <mpi.h>
#include <stdio.h>

int comm_allreduce(float *buf, int n); /* defined in the project's comm.c */
int comm_barrier(void);
int read_shard(const char *path, float *buf, int n);

int step(float *buf, int n) {
  int rc = comm_allreduce(buf, n);
  if (rc != 0) {
    fprintf(stderr, "allreduce failed: %d\n", rc);
    return rc;
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: error-path exit: when 'rc != 0' reports a failure on one rank, that rank returns here while the other ranks wait in barrier 'comm_barrier' and hang{{.*}} [ddp-error-path-exit]
// CHECK-MESSAGES: :[[@LINE-4]]:7: note: failure checked here
  }
  return comm_barrier();
}

int step_direct(float *buf, int n) {
  if (comm_allreduce(buf, n))
    return -1;
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: error-path exit: when 'comm_allreduce(buf, n)' reports a failure on one rank, that rank returns here while the other ranks wait in barrier 'comm_barrier' and hang{{.*}} [ddp-error-path-exit]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: failure checked here
  return comm_barrier();
}

// MPI's own calls return an int too: compared with 0 it is a status.
int step_mpi(float *buf, int n) {
  int rc = MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  if (rc != 0)
    return rc;
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: error-path exit: when 'rc != 0' reports a failure on one rank, that rank returns here while the other ranks wait in barrier 'MPI_Barrier'{{.*}} [ddp-error-path-exit]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: failure checked here
// NOOPT-MESSAGES: :[[@LINE-3]]:5: warning: error-path exit: when 'rc != 0' reports a failure on one rank{{.*}}'MPI_Barrier'{{.*}} [ddp-error-path-exit]
  return MPI_Barrier(MPI_COMM_WORLD);
}

// Hard negatives.
// An int from a function that is not a collective is no status: a count.
int count_then_sync(const char *path, float *buf, int n) {
  if (read_shard(path, buf, n) == 0)
    fprintf(stderr, "empty shard\n");
  return comm_barrier();
}

// The wrapper's failure aborts every rank: no exit while others wait.
int step_abort(float *buf, int n) {
  if (comm_allreduce(buf, n) != 0)
    MPI_Abort(MPI_COMM_WORLD, 1);
  return comm_barrier();
}

// Two functions, each with its own `rc`: one status does not stand for the other.
int count_rc(float *buf, int n) {
  int rc = read_shard("a", buf, n);
  if (rc != 0)
    return rc;
  return MPI_Barrier(MPI_COMM_WORLD);
}

// The failure is the last thing: no collective ahead.
int last(float *buf, int n) {
  comm_allreduce(buf, n);
  if (comm_barrier() != 0)
    return -1;
  return 0;
}
