// Node of every rank: a shared-memory split, its leaders' world ranks and the hostnames gathered.
#include "engine/comm/rank_nodes.hpp"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "common/errors.hpp"
#include "engine/comm/mpi_check.hpp"

namespace linsweep {
namespace {

constexpr int kHostBytes = 256;

}  // namespace

RankNodes gather_rank_nodes() {
  int rank = 0, size = 1;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  MPI_Comm local = MPI_COMM_NULL;
  MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &local));
  // The node's lowest world rank names it: the key ranks are split by is their world rank, so
  // local rank 0 holds it; a broadcast on the node shares it.
  int leader = rank;
  const int bcast = MPI_Bcast(&leader, 1, MPI_INT, 0, local);
  MPI_Comm_free(&local);
  MPI_CHECK(bcast);
  std::vector<int> leaders(static_cast<std::size_t>(size));
  MPI_CHECK(MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD));

  char mine[kHostBytes] = {};
  if (::gethostname(mine, sizeof(mine) - 1) != 0) throw CommError(std::string("gethostname: ") + std::strerror(errno));
  std::vector<char> hosts(static_cast<std::size_t>(size) * kHostBytes);
  MPI_CHECK(MPI_Allgather(mine, kHostBytes, MPI_CHAR, hosts.data(), kHostBytes, MPI_CHAR, MPI_COMM_WORLD));

  RankNodes out;
  std::map<int, int> index;  // leader's world rank -> node number; leaders ascend with rank
  for (int r = 0; r < size; ++r) {
    const auto [it, fresh] = index.emplace(leaders[static_cast<std::size_t>(r)], static_cast<int>(index.size()));
    out.node.push_back(it->second);
    const char* h = hosts.data() + static_cast<std::size_t>(r) * kHostBytes;
    out.host.emplace_back(h, strnlen(h, kHostBytes));
  }
  return out;
}

std::string group_span_error(const RankNodes& nodes, int ranks_per_group) {
  const std::size_t size = nodes.node.size(), rpg = static_cast<std::size_t>(ranks_per_group);
  for (std::size_t first = 1, g = 0; first + rpg <= size; first += rpg, ++g) {
    std::vector<int> seen;           // the group's nodes, in rank order
    std::vector<std::string> names;  // and their hosts
    for (std::size_t r = first; r < first + rpg; ++r)
      if (std::find(seen.begin(), seen.end(), nodes.node[r]) == seen.end()) {
        seen.push_back(nodes.node[r]);
        names.push_back(nodes.host[r]);
      }
    if (seen.size() == 1) continue;
    std::string joined;
    for (std::size_t i = 0; i < names.size(); ++i)
      joined += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
    return "worker group " + std::to_string(g) + " (ranks " + std::to_string(first) + "-" +
           std::to_string(first + rpg - 1) + ") spans " + joined;
  }
  return "";
}

}  // namespace linsweep
