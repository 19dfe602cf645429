// RUN: %check_ddp_tidy %s ddp-divergent-collective %t -- -- %mpi_cxx_flags
// Rank 0 reads the input deck into its members, packs them into a vector
// for one broadcast, and the others unpack that vector in the same order
// with a running index (LANL's Branson, input.h): after the constructor every
// rank holds rank 0's values, so a branch on them is taken alike.
#include <mpi.h>
#include <cstdint>
#include <vector>

unsigned read_deck(const char *path, int which);

class Deck {
public:
  explicit Deck(const char *path) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      storage = read_deck(path, 0);
      mode = read_deck(path, 1);
      steps = read_deck(path, 2);
    }
    std::vector<std::uint32_t> all_uint = {storage, mode, steps};
    std::vector<int> flags = {verbose};
    if (rank == 0) {
      MPI_Bcast(all_uint.data(), all_uint.size(), MPI_UNSIGNED, 0, MPI_COMM_WORLD);
      MPI_Bcast(&flags[0], 1, MPI_INT, 0, MPI_COMM_WORLD);
    } else {
      MPI_Bcast(all_uint.data(), all_uint.size(), MPI_UNSIGNED, 0, MPI_COMM_WORLD);
      MPI_Bcast(&flags[0], 1, MPI_INT, 0, MPI_COMM_WORLD);
      std::size_t i = 0;
      storage = all_uint[i++];
      mode = all_uint[i++];
      const std::uint32_t n = all_uint[i++];
      steps = n;
      verbose = flags[0];
    }
  }
  unsigned get_storage() const { return storage; }
  unsigned get_mode() const { return mode; }
  unsigned get_steps() const { return steps; }
  bool get_verbose() const { return verbose; }

private:
  unsigned storage = 0, mode = 0, steps = 0;
  int verbose = 0;
};

class Skewed {
public:
  explicit Skewed(const char *path) {
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
      first = read_deck(path, 0);
      second = read_deck(path, 1);
    }
    std::vector<std::uint32_t> packed = {first, second};
    MPI_Bcast(packed.data(), 2, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
    if (rank != 0) {
      std::size_t i = 0;
      i++; // a slot skipped: 'first' reads packed[2], not what rank 0 packed at 0
      second = packed[i++];
      first = packed[i++];
    }
  }
  unsigned get_first() const { return first; }

private:
  unsigned first = 0, second = 0;
};

void reduce_all(double *v) { MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); }

void run(const char *path, double *v) {
  Deck deck(path);
  if (deck.get_storage() == 1)
    reduce_all(v);
  if (deck.get_mode() == 2)
    MPI_Barrier(MPI_COMM_WORLD);
  for (unsigned s = 0; s < deck.get_steps(); ++s)
    MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  if (deck.get_verbose())
    MPI_Barrier(MPI_COMM_WORLD);
}

// Unpacked off by one: rank 0 keeps its own 'first', the others read a slot
// past the packed values; the branch is still rank 0's alone.
void run_skewed(const char *path) {
  Skewed s(path);
  if (s.get_first() == 1)
    MPI_Barrier(MPI_COMM_WORLD);
  // CHECK-MESSAGES: :[[@LINE-1]]:5: warning: barrier 'MPI_Barrier' runs only on ranks where 's.get_first() == 1' holds{{.*}} [ddp-divergent-collective]
}
