// RUN: %check_ddp_tidy %s ddp-rank0-io-barrier,ddp-unguarded-save %t -- -config="{CheckOptions: {ddp-rank0-io-barrier.RequireBarrierBefore: true}}" -- %mpi_c_flags
// MPI in C: rank 0 reads the input and prints; only writing a file is IO that
// other ranks can race with.
#include <mpi.h>
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

void step(double *x) { MPI_Allreduce(MPI_IN_PLACE, x, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); }

void read_input_then_bcast(int rank, int *n) {
  if (rank == 0) {
    FILE *f = fopen("input.txt", "r");
    if (f) {
      if (fscanf(f, "%d", n) != 1)
        *n = 1;
      fclose(f);
    }
    fprintf(stderr, "read %d\n", *n);
    fputs("ok\n", stdout);
  }
  MPI_Bcast(n, 1, MPI_INT, 0, MPI_COMM_WORLD);
}

void write_results(double *x, int iters) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < iters; i++) {
    step(x);
    if (rank == 0) {
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files, with no barrier every rank reaches before or after it{{.*}} [ddp-rank0-io-barrier]
      FILE *f = fopen("results.txt", "w");
      fprintf(f, "%f\n", x[0]);
      fclose(f);
    }
  }
}

// A table of results (IOR's md-workbench latency file, `sprintf(file,
// "%s-%d.csv", ...)`; mdtest's `saveRankDetailsCSV`): read by people after the
// run, as a log is.  A name printed as a checkpoint's is still a file.
struct options { const char *saveRankDetailsCSV; const char *prefix; };

void write_tables(double *x, int iters, struct options *o) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < iters; i++) {
    step(x);
    if (rank == 0) {
      char file[256];
      sprintf(file, "%s-%d.csv", o->prefix, i);
      FILE *f = fopen(file, "w+");
      fprintf(f, "%f\n", x[0]);
      fclose(f);
    }
    if (rank == 0) {
      FILE *d = fopen(o->saveRankDetailsCSV, "w");
      fprintf(d, "rank,time\n");
      fclose(d);
    }
    if (rank == 0) {
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
      char ckpt[256];
      snprintf(ckpt, sizeof ckpt, "%s/state-%d.bin", o->prefix, i);
      FILE *c = fopen(ckpt, "wb");
      fwrite(x, sizeof *x, 1, c);
      fclose(c);
    }
  }
}

// A line appended to a log: nobody reads it during the run.
void log_progress(double *x, int iters, int rank) {
  for (int i = 0; i < iters; i++) {
    step(x);
    if (rank == 0) {
      FILE *log = fopen("progress.txt", "a");
      fprintf(log, "%d %f\n", i, x[0]);
      fclose(log);
    }
  }
}

// open(2) and creat(2) write like fopen(p, "w"); O_APPEND, or a path that
// names a log, makes them a log line.
void write_raw(double *x, int iters) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < iters; i++) {
    step(x);
    if (rank == 0) {
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
      int fd = open("state.bin", O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (write(fd, x, sizeof *x) < 0)
        break;
      close(fd);
    }
    if (rank == 0) {
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
      int fd = creat("state2.bin", 0644);
      close(fd);
    }
  }
}

void log_raw(double *x, int iters) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int i = 0; i < iters; i++) {
    step(x);
    if (rank == 0) {
      int fd = open("state.bin", O_WRONLY | O_CREAT | O_APPEND, 0644);
      if (write(fd, x, sizeof *x) < 0)
        break;
      close(fd);
    }
    if (rank == 0) {
      int fd = creat("train.log", 0644);
      close(fd);
    }
    if (rank == 0) {
      int fd = open("input.txt", O_RDONLY);
      close(fd);
    }
  }
}

// A report written in pieces (miniMD's output()): rank 0 opens it, then prints
// a few lines between each allreduce of the timings.  The open is the write
// others can race with; the lines after it add to the same file.  One report,
// at the block that opens it.
static FILE *report;
void write_report(double *t, int rank) {
  if (rank == 0) {
// CHECK-MESSAGES: :[[@LINE-1]]:3: warning: block runs only on rank 0 and writes files{{.*}} [ddp-rank0-io-barrier]
    report = fopen("report.yaml.out", "w");
    fprintf(report, "run:\n");
  }
  MPI_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    fprintf(report, "  total: %g\n", t[0]);
  MPI_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    fputs("  done\n", report);
    fwrite(t, sizeof *t, 1, report);
  }
  MPI_Allreduce(MPI_IN_PLACE, t, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    fclose(report);
}
