// RUN: %check_ddp_tidy %s ddp-divergent-collective %t -- -- -std=c++17 %nccl_flags
// NCCL's own example of one device per thread (examples/01_communicators/
// 02_one_device_per_pthread at NVIDIA/nccl 5067397): each thread creates the
// communicator of its slot, then tests the slot against null before
// finalizing it.  A null test of a communicator is membership, as
// `comm != MPI_COMM_NULL` is: every member holds one.
#include <nccl.h>
#include <stdlib.h>

struct threadData { int thread_id; int num_gpus; ncclUniqueId id; ncclComm_t *comms; };

void *thread_worker(void *arg) {
  threadData *data = (threadData *)arg;
  int thread_id = data->thread_id;
  if (ncclCommInitRank(&data->comms[thread_id], data->num_gpus, data->id, thread_id) != ncclSuccess)
    abort();
  if (data->comms[thread_id] != NULL) {
    ncclCommFinalize(data->comms[thread_id]);
    ncclCommDestroy(data->comms[thread_id]);
  }
  return NULL;
}

void finalize_if_held(ncclComm_t comm) {
  if (!comm)
    return;
  ncclCommFinalize(comm);
}

// ...but a rank test before a communicator-wide call still diverges.
void finalize_on_first(ncclComm_t comm) {
  int rank = 0;
  ncclCommUserRank(comm, &rank);
  if (comm != NULL && rank == 0)
    ncclCommFinalize(comm);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: 'ncclCommFinalize' (a call every rank makes together) runs only on ranks where 'rank == 0' holds{{.*}} [ddp-divergent-collective]
}
