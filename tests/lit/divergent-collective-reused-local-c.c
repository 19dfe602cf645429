// RUN: %check_ddp_tidy %s ddp-divergent-collective %t -- -- %mpi_c_flags
// C reuses a scalar local for unrelated values (miniAMR's move_blocks: `k = n`
// before the allreduce of a do-while, `for (k = fcase+6; ...)` further down).
// Only the assignment that reaches a use decides it: later writes of the
// variable cannot reach the loop's condition.
#include <mpi.h>

void swap_passes(int *from, int *to, int npes) {
  int n = 0, n1, i, k;
  MPI_Alltoall(to, 1, MPI_INT, from, 1, MPI_INT, MPI_COMM_WORLD);
  do {
    k = n;
    for (n1 = i = 0; i < npes; i++)
      n1 += from[i];
    MPI_Allreduce(&n1, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  } while (n && k != n); // k is the previous agreed sum: no finding
  for (k = from[0]; k < npes; k++) // k holds rank-local data only from here on
    to[k] = 0;
}

// True positive: the loop's body writes the rank-local value back before the test.
void local_passes(int *from, int *to) {
  int n = 0, n1 = 1, k;
  MPI_Alltoall(to, 1, MPI_INT, from, 1, MPI_INT, MPI_COMM_WORLD);
  k = n;
  while (k != n1) {
    MPI_Allreduce(&n1, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: collective 'MPI_Allreduce' runs in a loop whose trip count depends on 'k != n1', which differs across ranks{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:10: note: trip count decided here
    k = from[0];
  }
}
