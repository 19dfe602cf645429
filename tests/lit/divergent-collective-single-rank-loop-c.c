// RUN: %check_ddp_tidy %s ddp-divergent-collective %t -- -- %mpi_c_flags
// A loop that only one rank runs (under `rank == 0`) has no other rank to
// differ from in its trip count: rank 0 broadcasts its file chunk by chunk,
// the others loop over the count it broadcast first, and the two arms match.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

void broadcast_file(const char *path, int chunk) {
  int rank, n = 0;
  char *buf = malloc(chunk);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    long size = 4096 + rand() % 4096; // stands for its own file's size: rank-local
    FILE *f = fopen(path, "rb");
    n = (int)((size + chunk - 1) / chunk);
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (long off = 0; off < size; off += chunk) {
      fread(buf, 1, chunk, f);
      MPI_Bcast(buf, chunk, MPI_CHAR, 0, MPI_COMM_WORLD);
    }
    fclose(f);
  } else {
    MPI_Bcast(&n, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
      MPI_Bcast(buf, chunk, MPI_CHAR, 0, MPI_COMM_WORLD);
  }
  free(buf);
}

// True positive: every rank runs the loop, each over its own file's size.
void broadcast_own_file(const char *path, int chunk) {
  char *buf = malloc(chunk);
  long size = 4096 + rand() % 4096;
  for (long off = 0; off < size; off += chunk)
    MPI_Bcast(buf, chunk, MPI_CHAR, 0, MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: collective 'MPI_Bcast' runs in a loop whose trip count depends on {{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:22: note: trip count decided here
  free(buf);
}
