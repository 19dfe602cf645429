// RUN: %check_ddp_tidy %s ddp-divergent-collective %t -- -- %mpi_c_flags
// Intel MPI Benchmarks' file setup (IMB_init_file.c): a rank that is not in
// the file's group holds MPI_COMM_NULL; the others hold MPI_COMM_SELF (one
// private file each) or the benchmark's communicator.  A test of a handle
// against its NULL is membership: the collectives under it are the members'
// own.  A collective on MPI_COMM_SELF is one rank's alone.
#include <mpi.h>

struct info { MPI_Comm file_comm; MPI_File fh; int file_rank; char *name; };

void setup(struct info *c) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank % 2) {
    c->file_comm = MPI_COMM_NULL;
    c->file_rank = -1;
  } else {
    c->file_comm = MPI_COMM_SELF;
    c->file_rank = 0;
  }
}

void recreate(struct info *c) {
  if (c->file_comm != MPI_COMM_NULL) {
    if (c->fh != MPI_FILE_NULL)
      MPI_File_close(&c->fh);
    if (c->file_rank == 0) {
      MPI_File_open(MPI_COMM_SELF, c->name, MPI_MODE_RDWR, MPI_INFO_NULL, &c->fh);
      MPI_File_delete(c->name, MPI_INFO_NULL);
    }
  }
}

void open_shared(struct info *c) {
  if (c->file_comm == MPI_COMM_NULL)
    return;
  MPI_File_open(c->file_comm, c->name, MPI_MODE_RDWR, MPI_INFO_NULL, &c->fh);
}

// The same open on the world, by rank 0 only: the others never join it.
void open_on_rank0(struct info *c) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    MPI_File_open(MPI_COMM_WORLD, c->name, MPI_MODE_RDWR, MPI_INFO_NULL, &c->fh);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'MPI_File_open' (a call every rank makes together) runs only on ranks where 'rank == 0' holds{{.*}} [ddp-divergent-collective]
}
