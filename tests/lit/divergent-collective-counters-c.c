// RUN: %check_ddp_tidy %s ddp-divergent-collective %t -- -- %mpi_c_flags
// C reuses one loop counter for loops of different bounds (miniAMR's rcb.c):
// inside a loop that only its header advances, the counter is the iteration
// number, the same on every rank, whatever the variable holds elsewhere.
#include <mpi.h>
#include <stdlib.h>

void bin_then_split(int *bin, int *gbin, int nbins) {
  int i, sum, extra;
  for (i = 0; i < nbins; i++)
    bin[i] = 0;
  MPI_Scan(&nbins, &i, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); // `i` is this rank's own here
  bin[i % nbins]++;
  MPI_Allreduce(bin, gbin, nbins, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (sum = i = 0; i < nbins; i++) // `sum = i = 0` is worth 0, whatever `i` held
    sum += gbin[i]; // the agreed histogram at the iteration number: agreed
  extra = sum - nbins;
  if (extra)
    MPI_Barrier(MPI_COMM_WORLD); // every rank agrees on `extra`: no finding
}

// True positives: the value really is the rank's own.
void local_sum(void) {
  int i, sum = 0;
  for (i = 0; i < 8; i++)
    sum += rand() % 3;
  if (sum)
    MPI_Barrier(MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: barrier 'MPI_Barrier' runs only on ranks where 'sum' holds (a rank-local value){{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: condition on a rank-local value here
}

// The body moves the counter itself: not the iteration number.
void skipping(const int *gbin, int n) {
  int i, sum = 0;
  for (i = 0; i < n; i++) {
    if (rand() % 2)
      i += 2;
    sum += gbin[i];
  }
  if (sum)
    MPI_Barrier(MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: barrier 'MPI_Barrier' runs only on ranks where 'sum' holds (a rank-local value){{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: condition on a rank-local value here
}
