// Which node each MPI rank runs on, and whether worker groups stay within a node.
#pragma once

#include <string>
#include <vector>

namespace linsweep {

// Where the ranks of MPI_COMM_WORLD run, indexed by world rank.
struct RankNodes {
  std::vector<int> node;          // nodes numbered 0, 1, ... in the order of their lowest rank
  std::vector<std::string> host;  // gethostname() of each rank
};

// Collective over every rank of MPI_COMM_WORLD. Ranks share a node when MPI_Comm_split_type
// (MPI_COMM_TYPE_SHARED) puts them together, i.e. when the launcher placed them where they can
// share memory; hostnames only name the nodes in messages. Throws CommError.
RankNodes gather_rank_nodes();

// Empty when every worker group (world ranks 1+g·R … g·R+R, as run_sweep_mpi forms them) lies
// on one node; else which group spans which nodes, e.g. "worker group 1 (ranks 3-4) spans n1
// and n2". Requires (ranks - 1) to be a multiple of R.
std::string group_span_error(const RankNodes& nodes, int ranks_per_group);

}  // namespace linsweep
