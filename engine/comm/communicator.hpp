// All-reduce of partial sums across the ranks of a worker group: one interface, MPI or NCCL.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

namespace linsweep {

// A group of ranks that sum partial statistics. Collective calls must be made by every rank
// of the group in the same order. A failure on any rank raises CommError on every rank that
// can still be reached (the MPI error handler returns codes; NCCL errors are checked with
// file and line). Not thread safe: one thread per rank calls it.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // In-place element-wise sum of `data` (host memory) over the group.
  virtual void allreduce_sum(std::span<double> data) = 0;
  virtual void barrier() = 0;
  virtual std::string backend() const = 0;  // "mpi" or "nccl"
  // Point to point, between the stages of a model split over ranks: `bytes` bytes of `data` to
  // rank `peer` of this group, which must call recv with the same size. `data` is host memory
  // for MPI and memory of this rank's device for NCCL (device_memory()). Blocks until the
  // transfer is done on this side.
  virtual void send(const void* data, std::size_t bytes, int peer) = 0;
  virtual void recv(void* data, std::size_t bytes, int peer) = 0;
  virtual bool device_memory() const { return false; }
};

// Owns MPI initialisation for the process (MPI_Init_thread, MPI_Finalize on destruction).
// Create at most one, in main, before any communicator. Throws CommError on failure.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  int world_rank() const noexcept { return rank_; }
  int world_size() const noexcept { return size_; }

 private:
  int rank_ = 0, size_ = 1;
};

// The MPI library's own version line ("Open MPI v4.1.4, ..."), first line only. Works before
// MPI_Init (MPI_Get_library_version may be called at any time).
std::string mpi_library_version();

// A communicator over all ranks of MPI_COMM_WORLD (duplicated, freed on destruction).
std::unique_ptr<Communicator> make_mpi_world_communicator();

// True when this build has the NCCL communicator and at least one CUDA device is visible.
bool nccl_usable();

// Splits MPI_COMM_WORLD by `color` (collective over every world rank, ordered by world rank)
// and returns a communicator over the ranks of the same color, with `backend` as for
// make_world_communicator; ranks of one color must ask for the same backend (an NCCL group
// bootstraps over its split). Throws CommError.
std::unique_ptr<Communicator> make_group_communicator(int color, const std::string& backend);

// backend "auto" (NCCL when nccl_usable(), else MPI), "mpi" or "nccl". NCCL ranks are
// bootstrapped through MPI (unique id broadcast) and use device local_rank mod device count.
// Throws CommError when the requested backend is unavailable.
std::unique_ptr<Communicator> make_world_communicator(const std::string& backend);

}  // namespace linsweep
