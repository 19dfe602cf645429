// RUN: %check_ddp_tidy %s ddp-divergent-collective,ddp-error-path-exit %t -- -- %nccl_c_flags
// Raw NCCL in C, nccl.h on -I, with nccl-tests' style of check macros.
#include <getopt.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

typedef enum { testSuccess = 0, testNcclError = 1, testCudaError = 2 } testResult_t;

#define NCCLCHECK(cmd) do {                               \
  ncclResult_t res = cmd;                                 \
  if (res != ncclSuccess) {                               \
    printf("NCCL failure %s\n", ncclGetErrorString(res)); \
    return testNcclError;                                 \
  }                                                       \
} while (0)

#define TESTCHECK(cmd) do {                               \
  testResult_t r = cmd;                                   \
  if (r != testSuccess) {                                 \
    printf(" .. failed\n");                               \
    return r;                                             \
  }                                                       \
} while (0)

// ---- true positives: one report per function --------------------------------

testResult_t allreduce_then_broadcast(float *buf, size_t n, ncclComm_t comm, cudaStream_t s) {
  NCCLCHECK(ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s));
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: error-path exit: when 'res != ncclSuccess' reports a failure on one rank, that rank returns here while the other ranks wait in collective 'ncclBroadcast' and hang{{.*}} [ddp-error-path-exit]
// CHECK-MESSAGES: :[[@LINE-2]]:3: note: failure checked here
  NCCLCHECK(ncclBroadcast(buf, buf, n, ncclFloat, 0, comm, s));
  NCCLCHECK(ncclAllGather(buf, buf, n, ncclFloat, comm, s));
  NCCLCHECK(ncclReduceScatter(buf, buf, n, ncclFloat, ncclSum, comm, s));
  return testSuccess;
}

testResult_t run_all(float *buf, size_t n, ncclComm_t comm, cudaStream_t s) {
  TESTCHECK(allreduce_then_broadcast(buf, n, comm, s));
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: error-path exit: when 'r != testSuccess' reports a failure on one rank, that rank returns here while the other ranks wait in call to 'allreduce_then_broadcast', which runs collective 'ncclAllReduce', and hang{{.*}} [ddp-error-path-exit]
// CHECK-MESSAGES: :[[@LINE-2]]:3: note: failure checked here
  TESTCHECK(allreduce_then_broadcast(buf, n, comm, s));
  return testSuccess;
}

// ---- hard negatives ---------------------------------------------------------

// The last collective's check: nothing follows, nobody waits.
testResult_t last_call(float *buf, size_t n, ncclComm_t comm, cudaStream_t s) {
  NCCLCHECK(ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s));
  return testSuccess;
}

// A failure that ends the job: every rank's collective fails with it.
void abort_on_failure(float *buf, size_t n, ncclComm_t comm, cudaStream_t s) {
  if (ncclAllReduce(buf, buf, n, ncclFloat, ncclSum, comm, s) != ncclSuccess) {
    ncclCommAbort(comm);
    abort();
  }
  ncclBroadcast(buf, buf, n, ncclFloat, 0, comm, s);
}

static struct option longopts[] = {{"nthreads", required_argument, 0, 't'}, {0, 0, 0, 0}};

// getopt_long's argument parsing: argv is the same on every rank.
int main(int argc, char *argv[]) {
  int nThreads = 1;
  int longindex;
  while (1) {
    int c = getopt_long(argc, argv, "t:h", longopts, &longindex);
    if (c == -1)
      break;
    switch (c) {
    case 't':
      nThreads = strtol(optarg, NULL, 0);
      break;
    case 'h':
    default:
      printf("USAGE: %s [-t,--nthreads <num threads>]\n", argv[0]);
      return 0;
    }
  }
  if (nThreads < 1)
    return 1;
  ncclComm_t comm;
  ncclUniqueId id;
  ncclGetUniqueId(&id);
  ncclCommInitRank(&comm, 2, id, 0);
  float *buf = 0;
  run_all(buf, 4, comm, 0);
  return 0;
}
