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

// A file this function opened on MPI_COMM_SELF: its view, size and close are
// the one rank's too (IMB_init_file.c).
void create_private(struct info *c, MPI_Offset total) {
  if (c->file_rank == 0) {
    MPI_File_open(MPI_COMM_SELF, c->name, MPI_MODE_RDWR, MPI_INFO_NULL, &c->fh);
    MPI_File_set_view(c->fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_File_set_size(c->fh, total);
    MPI_File_close(&c->fh);
  }
}

// Opened by every rank on the world: its size is everyone's to set.
void resize_shared(struct info *c, MPI_Offset total, int rank) {
  MPI_File_open(MPI_COMM_WORLD, c->name, MPI_MODE_RDWR, MPI_INFO_NULL, &c->fh);
  if (rank == 0)
    MPI_File_set_size(c->fh, total);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'MPI_File_set_size' (a call every rank makes together) runs only on ranks where 'rank == 0' holds{{.*}} [ddp-divergent-collective]
  MPI_File_close(&c->fh);
}

// IMB's ping-pong on the benchmark's two-member communicator: both roles run
// the same barriers, so the chain names the members.
struct pair_info { int rank, pair0, pair1; MPI_Comm comm; };
void pingpong(struct pair_info *c) {
  int i;
  if (c->rank == c->pair0) {
    for (i = 0; i < 2; i++)
      MPI_Barrier(c->comm);
  } else if (c->rank == c->pair1) {
    for (i = 0; i < 2; i++)
      MPI_Barrier(c->comm);
  }
}

// On the world, a third rank is neither and never joins.
void pingpong_world(int rank) {
  if (rank == 0) {
    MPI_Barrier(MPI_COMM_WORLD);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: barrier 'MPI_Barrier' runs only on ranks where 'rank == 0' holds{{.*}} [ddp-divergent-collective]
  } else if (rank == 1) {
    MPI_Barrier(MPI_COMM_WORLD);
    // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: barrier 'MPI_Barrier' runs only on ranks where 'rank == 1' holds{{.*}} [ddp-divergent-collective]
  }
}

// Rank 0 parses the options and packs them for a broadcast; the others
// unpack them from theirs: every rank tests the same values (IMB_init.c).
int parse_options(int *n_cases, int *deflt);
void basic_input(int rank, int *cases) {
  int n_cases = 0, deflt = 0;
  int info[2];
  if (rank == 0) {
    parse_options(&n_cases, &deflt);
    info[0] = n_cases;
    info[1] = deflt;
    MPI_Bcast(info, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (n_cases > 0 && !deflt)
      MPI_Bcast(cases, n_cases, MPI_INT, 0, MPI_COMM_WORLD);
  } else {
    int tmp[2];
    MPI_Bcast(tmp, 2, MPI_INT, 0, MPI_COMM_WORLD);
    n_cases = tmp[0];
    deflt = tmp[1];
    if (!deflt && n_cases > 0)
      MPI_Bcast(cases, n_cases, MPI_INT, 0, MPI_COMM_WORLD);
  }
}

// Unpacked at another index than it was packed at: not the same value.
void basic_input_mixed(int rank, int *cases) {
  int n_cases = 0, deflt = 0;
  int info[2];
  if (rank == 0) {
    parse_options(&n_cases, &deflt);
    info[0] = n_cases;
    info[1] = deflt;
    MPI_Bcast(info, 2, MPI_INT, 0, MPI_COMM_WORLD);
    if (n_cases > 0)
      MPI_Bcast(cases, n_cases, MPI_INT, 0, MPI_COMM_WORLD);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: collective 'MPI_Bcast' runs only on ranks where 'n_cases > 0' holds{{.*}} [ddp-divergent-collective]
  } else {
    int tmp[2];
    MPI_Bcast(tmp, 2, MPI_INT, 0, MPI_COMM_WORLD);
    n_cases = tmp[1];
    if (n_cases > 0)
      MPI_Bcast(cases, n_cases, MPI_INT, 0, MPI_COMM_WORLD);
    // CHECK-MESSAGES: :[[@LINE-1]]:7: warning: collective 'MPI_Bcast' runs only on ranks where 'n_cases > 0' holds{{.*}} [ddp-divergent-collective]
  }
}
