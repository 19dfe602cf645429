// RUN: %check_ddp_tidy %s ddp-divergent-collective,ddp-error-path-exit %t -- -- %mpi_c_flags
// nccl-tests' run(): worker threads hand their status back in a struct, and
// the main thread checks each with the same macro it uses on calls.  A status
// against its success constant is a failure test whatever produced it, so
// the early return is an error path, not a rank divergence (before, it was
// reported as "ranks where 'proc == 0' does not hold return early").
#include <mpi.h>
#include <stdio.h>

typedef enum { testSuccess = 0, testInternalError = 1 } testResult_t;
struct worker { testResult_t ret; };
testResult_t get_id(int *id);

#define TESTCHECK(cmd) do {          \
  testResult_t r = cmd;              \
  if (r != testSuccess) {            \
    printf("failure\n");             \
    return r;                        \
  }                                  \
} while (0)

testResult_t join_workers(struct worker *w, int n, int *errors) {
  int proc = 0, id = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &proc);
  if (proc == 0) {
    TESTCHECK(get_id(&id));
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: error-path exit: when 'r != testSuccess' reports a failure on one rank, that rank returns here while the other ranks wait in collective 'MPI_Bcast' and hang{{.*}} [ddp-error-path-exit]
// CHECK-MESSAGES: :[[@LINE-2]]:5: note: failure checked here
  }
  MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int t = n - 1; t >= 0; t--)
    TESTCHECK(w[t].ret); // one report per function: the one above
  MPI_Allreduce(MPI_IN_PLACE, errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return testSuccess;
}

testResult_t join_only(struct worker *w, int n, int *errors) {
  for (int t = n - 1; t >= 0; t--)
    TESTCHECK(w[t].ret);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: error-path exit: when 'r != testSuccess' reports a failure on one rank, that rank returns here while the other ranks wait in collective 'MPI_Allreduce' and hang{{.*}} [ddp-error-path-exit]
// CHECK-MESSAGES: :[[@LINE-2]]:5: note: failure checked here
  MPI_Allreduce(MPI_IN_PLACE, errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return testSuccess;
}

// Hard negative: a plain int compared with 0 is no status.
int count_then_reduce(const int *counts, int n, int *total) {
  for (int t = 0; t < n; t++)
    if (counts[t] != 0)
      printf("worker %d has work\n", t);
  MPI_Allreduce(counts, total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  return 0;
}
