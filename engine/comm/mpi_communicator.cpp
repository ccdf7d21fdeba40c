// MPI implementation of Communicator and the MPI session owner.
#include <mpi.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "engine/comm/communicator.hpp"
#include "engine/comm/mpi_check.hpp"

namespace linsweep {

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (MPI_Get_library_version(text, &length) != MPI_SUCCESS) return "MPI (version unknown)";
  std::string v(text, static_cast<std::size_t>(std::max(0, length)));
  const auto end = v.find_first_of("\n,");
  return v.substr(0, end);
}

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided));
  // Errors come back as codes so that MPI_CHECK can raise CommError instead of aborting.
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank_));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size_));
}

MpiSession::~MpiSession() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

namespace {

constexpr std::size_t kPiece = std::size_t{1} << 30;
constexpr int kStageTag = 21;  // this communicator is a duplicate: no other message shares it

// RAII owner of a duplicated MPI communicator.
class MpiCommunicator : public Communicator {
 public:
  explicit MpiCommunicator(MPI_Comm parent) {
    MPI_CHECK(MPI_Comm_dup(parent, &comm_));
    MPI_CHECK(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN));
    MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    MPI_CHECK(MPI_Comm_size(comm_, &size_));
  }
  ~MpiCommunicator() override {
    if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(std::span<double> data) override {
    if (data.empty()) return;
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data.data(), static_cast<int>(data.size()), MPI_DOUBLE, MPI_SUM, comm_));
  }
  void barrier() override { MPI_CHECK(MPI_Barrier(comm_)); }
  std::string backend() const override { return "mpi"; }
  // In pieces of at most 1 GiB: MPI counts are int.
  void send(const void* data, std::size_t bytes, int peer) override {
    const auto* p = static_cast<const char*>(data);
    for (std::size_t at = 0; at < bytes; at += kPiece)
      MPI_CHECK(MPI_Send(p + at, static_cast<int>(std::min(kPiece, bytes - at)), MPI_BYTE, peer, kStageTag, comm_));
  }
  void recv(void* data, std::size_t bytes, int peer) override {
    auto* p = static_cast<char*>(data);
    for (std::size_t at = 0; at < bytes; at += kPiece)
      MPI_CHECK(MPI_Recv(p + at, static_cast<int>(std::min(kPiece, bytes - at)), MPI_BYTE, peer, kStageTag, comm_,
                         MPI_STATUS_IGNORE));
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> make_mpi_communicator(std::optional<int> color) {
  return world_or_split<MpiCommunicator>(color);
}

}  // namespace linsweep
