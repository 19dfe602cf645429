// RUN: %check_ddp_tidy %s ddp-divergent-collective,ddp-error-path-exit %t -- -- %mock_flags
// Rank facts from launchers and status objects (issue 16): a rank read from
// argv or a launcher variable and handed to ncclCommInitRank is the rank; a
// launcher variable's presence test is the same on every rank; a member's
// null test is not a rank decision; `if (!st.ok()) return st;` is an error
// path like a failed ncclResult_t.
#include <cstdlib>
#include <mpi.h>
#include <nccl.h>

struct Status {
  bool ok() const;
  static Status OK();
};
Status loadShard(int which);

void argvRank(int argc, char **argv, ncclUniqueId id, float *buf, cudaStream_t s) {
  int rank = atoi(argv[1]);
  int nranks = atoi(argv[2]);
  ncclComm_t comm;
  ncclCommInitRank(&comm, nranks, id, rank);
  if (rank == 0)
    ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, s);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: collective 'ncclAllReduce' runs only on ranks where 'rank == 0' holds; {{.*}} [ddp-divergent-collective]
}

void launcherRank(ncclUniqueId id, float *buf, cudaStream_t s) {
  int rank = atoi(getenv("SLURM_PROCID"));
  ncclComm_t comm;
  ncclCommInitRank(&comm, 8, id, rank);
  if (rank != 0)
    return;
  ncclAllReduce(buf, buf, 1, ncclFloat, ncclSum, comm, s);
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: collective 'ncclAllReduce' is never reached by ranks where 'rank != 0' holds{{.*}} [ddp-divergent-collective]
}

// Hard negative: every rank sees the launcher's variables alike.
void presenceTests(ncclComm_t comm, float *buf, cudaStream_t s) {
  int local = 0;
  if (getenv("OMPI_COMM_WORLD_LOCAL_RANK") == NULL)
    local = 1;
  if (getenv("SLURM_PROCID"))
    MPI_Barrier(MPI_COMM_WORLD);
  if (nullptr != std::getenv("OMPI_COMM_WORLD_RANK"))
    MPI_Barrier(MPI_COMM_WORLD);
  ncclAllReduce(buf, buf, local, ncclFloat, ncclSum, comm, s);
}

// Hard negative: a member's null test.
class Trainer {
  void *contextFactory_ = nullptr;

public:
  void step() {
    if (!contextFactory_)
      return;
    MPI_Barrier(MPI_COMM_WORLD);
  }
};

Status restore(int shard) {
  Status st = loadShard(shard);
  if (!st.ok())
    return st;
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: error-path exit: when 'st.ok()' reports a failure on one rank, that rank returns here while the other ranks wait in barrier 'MPI_Barrier' and hang; {{.*}} [ddp-error-path-exit]
  MPI_Barrier(MPI_COMM_WORLD);
  return Status::OK();
}
