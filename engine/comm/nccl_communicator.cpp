// NCCL implementation of Communicator, bootstrapped over MPI; compiled whenever nccl.h exists.
#include <cuda_runtime_api.h>
#include <mpi.h>
#include <nccl.h>

#include <memory>
#include <optional>
#include <string>

#include "common/launch_env.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/comm/mpi_check.hpp"

namespace linsweep {
namespace {

void cuda_check(cudaError_t rc, const char* call, const char* file, int line) {
  if (rc != cudaSuccess)
    throw CommError(std::string(file) + ":" + std::to_string(line) + ": " + call +
                    " failed: " + cudaGetErrorString(rc));
}
void nccl_check(ncclResult_t rc, const char* call, const char* file, int line) {
  if (rc != ncclSuccess)
    throw CommError(std::string(file) + ":" + std::to_string(line) + ": " + call +
                    " failed: " + ncclGetErrorString(rc));
}
#define CUDA_CHECK(call) cuda_check((call), #call, __FILE__, __LINE__)
#define NCCL_CHECK(call) nccl_check((call), #call, __FILE__, __LINE__)

// Owns the NCCL communicator, a stream and a device staging buffer. `bootstrap` (an MPI
// communicator over the same ranks) carries the unique id; it is not kept.
class NcclCommunicator : public Communicator {
 public:
  explicit NcclCommunicator(MPI_Comm bootstrap) {
    MPI_CHECK(MPI_Comm_rank(bootstrap, &rank_));
    MPI_CHECK(MPI_Comm_size(bootstrap, &size_));
    int devices = 0;
    CUDA_CHECK(cudaGetDeviceCount(&devices));
    device_ = local_rank() % devices;
    CUDA_CHECK(cudaSetDevice(device_));
    ncclUniqueId id;
    if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
    MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, bootstrap));
    NCCL_CHECK(ncclCommInitRank(&comm_, size_, id, rank_));
    CUDA_CHECK(cudaStreamCreate(&stream_));
  }
  ~NcclCommunicator() override {
    if (buffer_ != nullptr) cudaFree(buffer_);
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    if (comm_ != nullptr) ncclCommDestroy(comm_);
  }
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(std::span<double> data) override {
    if (data.empty()) return;
    const std::size_t bytes = data.size() * sizeof(double);
    CUDA_CHECK(cudaSetDevice(device_));
    if (bytes > capacity_) {
      if (buffer_ != nullptr) CUDA_CHECK(cudaFree(buffer_));
      buffer_ = nullptr;
      CUDA_CHECK(cudaMalloc(&buffer_, bytes));
      capacity_ = bytes;
    }
    CUDA_CHECK(cudaMemcpyAsync(buffer_, data.data(), bytes, cudaMemcpyHostToDevice, stream_));
    NCCL_CHECK(ncclAllReduce(buffer_, buffer_, data.size(), ncclFloat64, ncclSum, comm_, stream_));
    CUDA_CHECK(cudaMemcpyAsync(data.data(), buffer_, bytes, cudaMemcpyDeviceToHost, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void barrier() override {
    double x = 0;
    allreduce_sum(std::span<double>(&x, 1));
  }
  std::string backend() const override { return "nccl"; }
  // The data is on this rank's device, written by torch's stream: the device is synchronised
  // first so that NCCL's own stream reads it whole.
  void send(const void* data, std::size_t bytes, int peer) override {
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaDeviceSynchronize());
    NCCL_CHECK(ncclSend(data, bytes, ncclUint8, peer, comm_, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  void recv(void* data, std::size_t bytes, int peer) override {
    CUDA_CHECK(cudaSetDevice(device_));
    CUDA_CHECK(cudaDeviceSynchronize());
    NCCL_CHECK(ncclRecv(data, bytes, ncclUint8, peer, comm_, stream_));
    CUDA_CHECK(cudaStreamSynchronize(stream_));
  }
  bool device_memory() const override { return true; }

 private:
  int rank_ = 0, size_ = 1, device_ = 0;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  void* buffer_ = nullptr;
  std::size_t capacity_ = 0;
};

}  // namespace

bool nccl_device_visible() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

std::unique_ptr<Communicator> make_nccl_communicator(std::optional<int> color) {
  return world_or_split<NcclCommunicator>(color);
}

}  // namespace linsweep
