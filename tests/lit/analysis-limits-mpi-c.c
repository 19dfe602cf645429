// RUN: %check_ddp_tidy %s ddp-divergent-collective,ddp-error-path-exit,ddp-rank0-io-barrier,ddp-unguarded-save %t -- -- %mpi_c_flags
// Long mains, as MPI and CUDA trainers write them: many uniform option tests
// before the loop.  Options that only print or log are followed one after the
// other (one path, not 2^20), so the rank-0 collective in the loop is found.
// Options that each add a collective are 2^20 real combinations: the analysis
// keeps a sample, still finds the divergence, and says once (not once per
// path check) that it stopped short, as a remark at the function.  Option
// checks that each may return early go on alike: folded, never a limit.
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double x = 0, y = 0;
  FILE *log = stderr;
  if (argc > 1 && strcmp(argv[1], "-v") == 0)
    fprintf(log, "option 0\n");
  else
    puts("default 0");
  if (argc > 2 && strcmp(argv[2], "-v") == 0)
    fprintf(log, "option 1\n");
  else
    puts("default 1");
  if (argc > 3 && strcmp(argv[3], "-v") == 0)
    fprintf(log, "option 2\n");
  else
    puts("default 2");
  if (argc > 4 && strcmp(argv[4], "-v") == 0)
    fprintf(log, "option 3\n");
  else
    puts("default 3");
  if (argc > 5 && strcmp(argv[5], "-v") == 0)
    fprintf(log, "option 4\n");
  else
    puts("default 4");
  if (argc > 6 && strcmp(argv[6], "-v") == 0)
    fprintf(log, "option 5\n");
  else
    puts("default 5");
  if (argc > 7 && strcmp(argv[7], "-v") == 0)
    fprintf(log, "option 6\n");
  else
    puts("default 6");
  if (argc > 8 && strcmp(argv[8], "-v") == 0)
    fprintf(log, "option 7\n");
  else
    puts("default 7");
  if (argc > 9 && strcmp(argv[9], "-v") == 0)
    fprintf(log, "option 8\n");
  else
    puts("default 8");
  if (argc > 10 && strcmp(argv[10], "-v") == 0)
    fprintf(log, "option 9\n");
  else
    puts("default 9");
  if (argc > 11 && strcmp(argv[11], "-v") == 0)
    fprintf(log, "option 10\n");
  else
    puts("default 10");
  if (argc > 12 && strcmp(argv[12], "-v") == 0)
    fprintf(log, "option 11\n");
  else
    puts("default 11");
  if (argc > 13 && strcmp(argv[13], "-v") == 0)
    fprintf(log, "option 12\n");
  else
    puts("default 12");
  if (argc > 14 && strcmp(argv[14], "-v") == 0)
    fprintf(log, "option 13\n");
  else
    puts("default 13");
  if (argc > 15 && strcmp(argv[15], "-v") == 0)
    fprintf(log, "option 14\n");
  else
    puts("default 14");
  if (argc > 16 && strcmp(argv[16], "-v") == 0)
    fprintf(log, "option 15\n");
  else
    puts("default 15");
  if (argc > 17 && strcmp(argv[17], "-v") == 0)
    fprintf(log, "option 16\n");
  else
    puts("default 16");
  if (argc > 18 && strcmp(argv[18], "-v") == 0)
    fprintf(log, "option 17\n");
  else
    puts("default 17");
  if (argc > 19 && strcmp(argv[19], "-v") == 0)
    fprintf(log, "option 18\n");
  else
    puts("default 18");
  if (argc > 20 && strcmp(argv[20], "-v") == 0)
    fprintf(log, "option 19\n");
  else
    puts("default 19");
  for (int step = 0; step < 10; ++step) {
    MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
      MPI_Bcast(&y, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:7: warning: collective 'MPI_Bcast' runs only on ranks where 'rank == 0' holds{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:9: note: rank-dependent condition here
  }
  MPI_Finalize();
  return 0;
}

int optional_reductions(int argc, double *x, double *y) {
// CHECK-MESSAGES: :[[@LINE-1]]:5: remark: analysis limit: 'optional_reductions' has more than 512 paths{{.*}}analysed once per call [{{ddp-[a-z0-9-]+}}]
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 1)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 2)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 3)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 4)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 5)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 6)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 7)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 8)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 9)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 10)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 11)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 12)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 13)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 14)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 15)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 16)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 17)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 18)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 19)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (argc > 20)
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    MPI_Barrier(MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: barrier 'MPI_Barrier' runs only on ranks where 'rank == 0' holds{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: rank-dependent condition here
  return 0;
}

// Ten option checks that each may end the run, before the loop: 1,024 paths
// that go on alike on every rank.  They are folded into one before any path
// is dropped, so there is no limit here and the loop's barrier is found.
int checked_options(int argc, char **argv, double *x, double *y) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 1) {
    if (strcmp(argv[1], "--bad") == 0)
      return 1;
  }
  if (argc > 2) {
    if (strcmp(argv[2], "--bad") == 0)
      return 1;
  }
  if (argc > 3) {
    if (strcmp(argv[3], "--bad") == 0)
      return 1;
  }
  if (argc > 4) {
    if (strcmp(argv[4], "--bad") == 0)
      return 1;
  }
  if (argc > 5) {
    if (strcmp(argv[5], "--bad") == 0)
      return 1;
  }
  if (argc > 6) {
    if (strcmp(argv[6], "--bad") == 0)
      return 1;
  }
  if (argc > 7) {
    if (strcmp(argv[7], "--bad") == 0)
      return 1;
  }
  if (argc > 8) {
    if (strcmp(argv[8], "--bad") == 0)
      return 1;
  }
  if (argc > 9) {
    if (strcmp(argv[9], "--bad") == 0)
      return 1;
  }
  if (argc > 10) {
    if (strcmp(argv[10], "--bad") == 0)
      return 1;
  }
  for (int it = 0; it < 10; ++it) {
    MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && it == 5)
      MPI_Barrier(MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:7: warning: barrier 'MPI_Barrier' runs only on ranks where{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:9: note: rank-dependent condition here
  }
  return 0;
}

// Long paths, not only many: eight options that each add a reduction, then
// two hundred reductions every rank runs (a long step function, as macros
// and unrolled kernels write them).  Together the 256 paths hold more events
// than the budget, so fewer are kept, and the remark says so; the rank-0
// barrier at the end is still found.
#define AR MPI_Allreduce(x, y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)
#define AR10 AR; AR; AR; AR; AR; AR; AR; AR; AR; AR
#define AR100 AR10; AR10; AR10; AR10; AR10; AR10; AR10; AR10; AR10; AR10
int long_steps(int argc, double *x, double *y, int rank) {
// CHECK-MESSAGES: :[[@LINE-1]]:5: remark: analysis limit: 'long_steps' has paths that together hold more than 50000 calls and collectives{{.*}}analysed once per call [{{ddp-[a-z0-9-]+}}]
  if (argc > 1) AR;
  if (argc > 2) AR;
  if (argc > 3) AR;
  if (argc > 4) AR;
  if (argc > 5) AR;
  if (argc > 6) AR;
  if (argc > 7) AR;
  if (argc > 8) AR;
  AR100;
  AR100;
  if (rank == 0)
    MPI_Barrier(MPI_COMM_WORLD);
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: barrier 'MPI_Barrier' runs only on ranks where 'rank == 0' holds{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:7: note: rank-dependent condition here
  return 0;
}
