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

// IMB's benchmark state: the rank, the size and the communicator of the
// benchmark's group, filled in another file (-1 on a rank outside it).
struct comm_info { int rank, num_procs; MPI_Comm communicator; float used_mem, max_mem; };

// Members run 0 <= rank <= size - 1: every one of them reaches the barrier.
void exchange(struct comm_info *c) {
  if (c->rank != -1)
    if ((c->rank >= 0) && (c->rank <= c->num_procs - 1))
      MPI_Barrier(c->communicator);
}

// A non-member returns first; what the others compute in the `else` is
// theirs alike (before, `n` was taken as decided by the rank test).
void iterations(struct comm_info *c, int nsample) {
  int n;
  double t = 0, tmax;
  if (c->rank < 0)
    return;
  else {
    n = nsample / c->num_procs;
  }
  c->used_mem = 1.f * n;
  if (c->used_mem > c->max_mem)
    return;
  MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, c->communicator);
}

// A condition the compiler folds: the output file's name is empty, so the
// block never runs (IMB's `rank == 0 && strlen(OUTPUT_FILENAME) > 0`).
#define OUTPUT_FILENAME ""
void open_output(int rank, MPI_File *fh) {
  if (rank == 0 && sizeof(OUTPUT_FILENAME) > 1)
    MPI_File_open(MPI_COMM_WORLD, OUTPUT_FILENAME, MPI_MODE_RDWR, MPI_INFO_NULL, fh);
}

// The same early return whose `else` computes from the rank: still its own.
void iterations_by_rank(struct comm_info *c) {
  int n;
  double t = 0, tmax;
  if (c->rank < 0)
    return;
  else
    n = c->rank;
  if (n > 2)
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, c->communicator);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: collective 'MPI_Allreduce' runs only on ranks where 'n > 2' holds{{.*}} [ddp-divergent-collective]
}
