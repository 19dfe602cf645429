// RUN: %check_ddp_tidy %s ddp-divergent-collective %t -- -- %mpi_c_flags
// A clock read into an argument is this rank's own (IOR's GetTimeStamp():
// gettimeofday(&tv, NULL)): a deadline tested on it splits the ranks, as
// MPI_Wtime() does.  Broadcast first, the decision is every rank's.
#define _POSIX_C_SOURCE 199309L
#include <mpi.h>
#include <stddef.h>
#include <sys/time.h>
#include <stdio.h>
#include <time.h>

static double now(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

static double monotonic(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec;
}

void timed_loop(int *flag, double min_time) {
  double start = now();
  do {
    MPI_Bcast(flag, 1, MPI_INT, 0, MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: collective 'MPI_Bcast' runs in a loop whose trip count depends on '(now() - start) < min_time', which differs across ranks{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE+1]]:12: note: trip count decided here
  } while ((now() - start) < min_time);
}

void deadline_phase(double start, double limit) {
  if (monotonic() - start < limit)
    MPI_Barrier(MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: barrier 'MPI_Barrier' runs only on ranks where 'monotonic() - start < limit' holds (a rank-local value){{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: condition on a rank-local value here
}

// Hard negative: rank 0's clock decides, broadcast to every rank.
void agreed_deadline(int *flag, double min_time) {
  double start = now();
  for (int i = 0; i < 100; i++) {
    int go = (now() - start) < min_time;
    MPI_Bcast(&go, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!go)
      break;
    MPI_Bcast(flag, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
}

// A deadline before the allreduce splits the ranks whatever rank 0 does later
// in the iteration: the staying ranks pass rank 0's report after the test,
// so it is not why they went on.
void deadline_then_rank0_report(double *x, const char *path, double limit) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < 100; i++) {
    if (MPI_Wtime() > limit)
      break;
    MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: collective 'MPI_Allreduce' is skipped by ranks where 'MPI_Wtime() > limit' holds (a rank-local value){{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-4]]:9: note: condition on a rank-local value here
    if (rank == 0) {
      FILE *f = fopen(path, "wb");
      fwrite(x, sizeof *x, 1, f);
      fclose(f);
    }
  }
}
