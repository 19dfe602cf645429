// RUN: %check_ddp_tidy %s ddp-rank0-io-barrier %t -- -- %mpi_cxx_flags
// Rank 0 writes the run's output at the end (FasterTransformer's examples):
// when the next call every rank makes is MPI_Finalize, nothing reads the file
// after it and no timeout runs out while rank 0 writes.  A collective after
// the write still races with it.
#include <mpi.h>
#include <fstream>

void write_output_then_finalize(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double x = 1;
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::ofstream out("out.txt");
    out << x;
  }
  MPI_Finalize();
}

void write_output_then_reduce(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double x = 1;
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
    std::ofstream out("out.txt");
    out << x;
  }
  MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
}
