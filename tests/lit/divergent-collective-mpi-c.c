// RUN: %check_ddp_tidy %s ddp-divergent-collective,ddp-error-path-exit %t -- -- %mpi_c_flags
// C, as MPI codes are written, against the installed OpenMPI <mpi.h> on -I
// (not -isystem): the checks run on C and stay out of the library header.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

// ---- true positives ---------------------------------------------------------

void rank0_barrier(void) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    MPI_Barrier(MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: barrier 'MPI_Barrier' runs only on ranks where 'rank == 0' holds{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: rank-dependent condition here
}

// A value agreed *after* the branch does not make the branch uniform.
void agreed_too_late(void) {
  int rank, flag;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  flag = rank % 2;
  if (flag)
    MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: collective 'MPI_Allreduce' runs only on ranks where 'flag' holds{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: rank-dependent condition here
  MPI_Bcast(&flag, 1, MPI_INT, 0, MPI_COMM_WORLD);
}

// The send buffer of an allgatherv is not agreed: `rank` stays the rank.
void send_buffer_is_not_agreed(int *counts, int *displs, int *all) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Allgatherv(&rank, 1, MPI_INT, all, counts, displs, MPI_INT, MPI_COMM_WORLD);
  if (rank % 2)
    MPI_Iscan(&rank, all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, (MPI_Request *)0);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: collective 'MPI_Iscan' runs only on ranks where 'rank % 2' holds{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: rank-dependent condition here
}

// A reduce's output is only defined on the root: not agreed either.
void reduce_output_is_not_agreed(void) {
  int rank, sum = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (sum > 3)
    MPI_Ialltoallv(0, 0, 0, MPI_INT, 0, 0, 0, MPI_INT, MPI_COMM_WORLD, (MPI_Request *)0);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: collective 'MPI_Ialltoallv' runs only on ranks where 'sum > 3' holds (a rank-local value){{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: condition on a rank-local value here
}

// A check macro's hidden return on a failed call: one error-path report for
// the whole function, not one divergence per macro use.
#define MPICHECK(cmd) do { int e_ = (cmd); if (e_ != MPI_SUCCESS) { fprintf(stderr, "MPI error\n"); return e_; } } while (0)
int step(double *buf, int n) {
  MPICHECK(MPI_Allreduce(MPI_IN_PLACE, buf, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: error-path exit: when 'e_ != MPI_SUCCESS' reports a failure on one rank, that rank returns here while the other ranks wait in collective 'MPI_Bcast' and hang; abort the communicator instead {{.*}} [ddp-error-path-exit]
// CHECK-MESSAGES: :[[@LINE-2]]:3: note: failure checked here
  MPICHECK(MPI_Bcast(buf, n, MPI_DOUBLE, 0, MPI_COMM_WORLD));
  MPICHECK(MPI_Barrier(MPI_COMM_WORLD));
  return MPI_SUCCESS;
}

// ---- hard negatives ---------------------------------------------------------

// Agreed before the branch, by the collective's output: uniform.
void agreed_first(void) {
  int rank, flag;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  flag = rank % 2;
  MPI_Allreduce(MPI_IN_PLACE, &flag, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (flag)
    MPI_Barrier(MPI_COMM_WORLD);
}

// Broadcast as received: every rank holds rank 0's value afterwards.
void broadcast_then_branch(void) {
  int rank, stop;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  stop = rank == 0;
  MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (stop)
    MPI_Barrier(MPI_COMM_WORLD);
}

// rank < size holds on every rank (MPI_Comm_size's out-parameter): the MPI
// Bugs Initiative wraps every code in it.
void rank_below_size(void) {
  int rank, nprocs;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (rank < nprocs)
    MPI_Barrier(MPI_COMM_WORLD);
  if (nprocs > rank)
    MPI_Barrier(MPI_COMM_WORLD);
  if (rank >= nprocs)
    return;
  MPI_Barrier(MPI_COMM_WORLD);
}

// Main process first: every rank runs exactly one barrier.
void main_process_first(void) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank != 0)
    MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    MPI_Barrier(MPI_COMM_WORLD);
}

// argv is the same on every rank: the usage exit is no rank decision, and a
// failed MPI call that aborts the job leaves nobody waiting.
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc < 2) {
    fprintf(stderr, "usage: %s N\n", argv[0]);
    MPI_Finalize();
    return 1;
  }
  int n = atoi(argv[1]);
  if (n <= 0)
    return 2;
  double buf[4] = {0};
  if (MPI_Allreduce(MPI_IN_PLACE, buf, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD) != MPI_SUCCESS)
    MPI_Abort(MPI_COMM_WORLD, 1);
  step(buf, 4);
  MPI_Finalize();
  return 0;
}

// Serialised printing: each rank's turn comes once as p sweeps 0..size, so
// every rank issues size + 1 barriers.
void print_in_turn(void) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int p = 0; p < size; p++) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (p == rank) {
      printf("rank %d\n", rank);
      MPI_Barrier(MPI_COMM_WORLD);
    }
  }
}

// ...but a real collective in one rank's turn is still a divergence.
void allreduce_in_turn(double *x) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (int p = 0; p < size; p++) {
    MPI_Barrier(MPI_COMM_WORLD);
    if (p == rank)
      MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:7: warning: collective 'MPI_Allreduce' runs only on ranks where 'p == rank' holds{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:9: note: rank-dependent condition here
  }
}

// A collective on a split communicator is run by that communicator's members:
// the even ranks barrier on theirs, the odd ranks' half has no collective.
void sub_communicator(void) {
  int rank;
  MPI_Comm half;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
  if (rank % 2 == 0)
    MPI_Barrier(half);
  MPI_Comm_free(&half);
}

// Rank 0 alone checks the reduced residual every tenth step and stops on
// NaN: the decision that parts the ranks is the rank test above the check.
int rank0_checks_residual(double *r, int steps) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < steps; i++) {
    MPI_Allreduce(MPI_IN_PLACE, r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: collective 'MPI_Allreduce' is skipped by ranks where 'rank == 0' holds: they return{{.*}} [ddp-divergent-collective]
    if (rank == 0) {
// CHECK-MESSAGES: :[[@LINE-1]]:9: note: rank-dependent condition here
      if (i % 10 == 0) {
        if (*r != *r)
          return 1;
      }
    }
  }
  return 0;
}

// ---- file probes ------------------------------------------------------------
// An input that is there or not on the shared storage every rank reads from
// (llm.c's `access(hellaswag_path, F_OK)` before its evaluation loop): every
// rank gets the same answer.
#include <unistd.h>
double eval_if_data_present(double acc, int steps) {
  const char *eval_path = "data/eval.bin";
  const int available = access(eval_path, F_OK) == 0;
  for (int i = 0; i < steps; i++)
    if (available)
      MPI_Allreduce(MPI_IN_PLACE, &acc, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return acc;
}

// ...but a probe of what the same function writes races with the rank that
// writes it: a rank that asks after another created the file skips the work.
void build_cache_once(double *blob, int n) {
  const char *cache = "cache/blob.bin";
  if (access(cache, F_OK) != 0) {
    MPI_Allreduce(MPI_IN_PLACE, blob, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: collective 'MPI_Allreduce' runs only on ranks where 'access(cache, F_OK) != 0' holds{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: {{.*}}
    FILE *f = fopen(cache, "wb");
    if (f) {
      fwrite(blob, sizeof *blob, (size_t)n, f);
      fclose(f);
    }
  }
}


// Hard negative (miniFE's imbalance loop): the buffer handed as the address
// of its first element, `&info[0]`, is the array, agreed after the Bcast.
void broadcast_from_first_element(int iters) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < iters; i++) {
    int v = 0;
    if (rank == 0)
      v = rand() % 2;
    int info[2] = {v, 0};
    MPI_Bcast(&info[0], 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (info[0] == 0)
      break;
    MPI_Barrier(MPI_COMM_WORLD);
  }
}
