// RUN: %check_ddp_tidy %s ddp-divergent-collective %t -- -- %mpi_cxx_flags
// C++ MPI codes wrap the C calls in small templates (the Parallel Research
// Kernels' prk::MPI::bcast): a value rank 0 parsed and then handed to such a
// wrapper's broadcast buffer is agreed after the call, as after MPI_Bcast.
#include <mpi.h>
#include <cstdlib>

namespace prk {
namespace MPI {
template <typename T>
void bcast(T *buffer, int count = 1, int root = 0, MPI_Comm comm = MPI_COMM_WORLD) {
  MPI_Bcast(buffer, count * int(sizeof(T)), MPI_BYTE, root, comm);
}
template <typename T> void bcast_ref(T &value) { bcast(&value); }
// By value: the caller's variable is not what gets broadcast.
inline void bcast_copy(int value) { MPI_Bcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD); }
// Only on some paths: nothing is agreed on the others.
inline void bcast_if(int *value, bool enabled) {
  if (enabled)
    MPI_Bcast(value, 1, MPI_INT, 0, MPI_COMM_WORLD);
}
inline void barrier() { MPI_Barrier(MPI_COMM_WORLD); }
} // namespace MPI
} // namespace prk

static int parse_on_root(int me, char **argv) {
  int iterations = 0;
  if (me == 0)
    iterations = std::atoi(argv[1]);
  return iterations;
}

// ---- true positives ---------------------------------------------------------
void copy_is_not_agreed(int me, char **argv) {
  int iterations = parse_on_root(me, argv);
  prk::MPI::bcast_copy(iterations);
  for (int iter = 0; iter < iterations; ++iter)
    prk::MPI::barrier();
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: call to 'barrier', which runs barrier 'MPI_Barrier', runs in a loop whose trip count depends on 'iter < iterations'{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:22: note: trip count decided here
}

void conditional_wrapper_is_not_agreed(int me, char **argv, bool enabled) {
  int iterations = parse_on_root(me, argv);
  prk::MPI::bcast_if(&iterations, enabled);
  for (int iter = 0; iter < iterations; ++iter)
    prk::MPI::barrier();
// CHECK-MESSAGES: :[[@LINE-1]]:5: warning: call to 'barrier', which runs barrier 'MPI_Barrier', runs in a loop whose trip count depends on 'iter < iterations'{{.*}} [ddp-divergent-collective]
// CHECK-MESSAGES: :[[@LINE-3]]:22: note: trip count decided here
}

// ---- hard negatives ---------------------------------------------------------
void template_wrapper_agrees(int me, char **argv) {
  int iterations = parse_on_root(me, argv);
  prk::MPI::bcast(&iterations);
  for (int iter = 0; iter < iterations; ++iter)
    prk::MPI::barrier();
}

void wrapper_of_wrapper_agrees(int me, char **argv) {
  int iterations = parse_on_root(me, argv);
  prk::MPI::bcast_ref(iterations);
  for (int iter = 0; iter < iterations; ++iter)
    prk::MPI::barrier();
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int me = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  copy_is_not_agreed(me, argv);
  conditional_wrapper_is_not_agreed(me, argv, argc > 2);
  template_wrapper_agrees(me, argv);
  wrapper_of_wrapper_agrees(me, argv);
  MPI_Finalize();
  return 0;
}
