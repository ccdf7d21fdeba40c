// Communicator over real MPI ranks (run by ctest under mpirun -n 2): sums, backend choice.
#include <vector>

#include "common/errors.hpp"
#include "engine/comm/communicator.hpp"
#include "engine/comm/rank_nodes.hpp"
#include "support/catch.hpp"
#include "support/catch_session.hpp"

using namespace linsweep;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("MPI all-reduce sums every rank's partial statistics") {
  auto comm = make_world_communicator("mpi");
  CHECK(comm->backend() == "mpi");
  const int r = comm->rank(), n = comm->size();
  std::vector<double> v = {1.0, static_cast<double>(r), 0.5 * r * r, 1e300};
  comm->allreduce_sum(v);
  double squares = 0, ranks = 0;
  for (int k = 0; k < n; ++k) ranks += k, squares += 0.5 * k * k;
  CHECK(v[0] == n);
  CHECK(v[1] == ranks);
  CHECK(v[2] == squares);
  CHECK(v[3] == Catch::Approx(1e300 * n));
  comm->allreduce_sum({});  // empty is a no-op on every rank
  comm->barrier();
}

TEST_CASE("backend choice: auto falls back to MPI without a GPU; unknown names are refused") {
  auto comm = make_world_communicator("auto");
  CHECK(comm->backend() == (nccl_usable() ? "nccl" : "mpi"));
  if (!nccl_usable()) CHECK_THROWS_AS(make_world_communicator("nccl"), CommError);
  CHECK_THROWS_WITH(make_world_communicator("gloo"), ContainsSubstring("known: auto, mpi, nccl"));
}

TEST_CASE("group communicators: each color sums only its own ranks, with the backend asked for") {
  auto world = make_world_communicator("mpi");
  const int r = world->rank();
  auto group = make_group_communicator(r % 2, "auto");  // even and odd world ranks
  CHECK(group->backend() == (nccl_usable() ? "nccl" : "mpi"));
  std::vector<double> v = {1.0, static_cast<double>(r)};
  group->allreduce_sum(v);
  double members = 0, ranks = 0;
  for (int k = r % 2; k < world->size(); k += 2) members += 1, ranks += k;
  CHECK(v[0] == members);
  CHECK(v[1] == ranks);
  CHECK(make_group_communicator(0, "mpi")->size() == world->size());
  if (!nccl_usable()) CHECK_THROWS_WITH(make_group_communicator(0, "nccl"), ContainsSubstring("nccl"));
  CHECK_THROWS_WITH(make_group_communicator(0, "gloo"), ContainsSubstring("known: auto, mpi, nccl"));
}

TEST_CASE("rank nodes: ranks of one host share a node; groups that span nodes are named") {
  const RankNodes here = gather_rank_nodes();
  auto world = make_world_communicator("mpi");
  REQUIRE(here.node.size() == static_cast<std::size_t>(world->size()));
  for (std::size_t r = 0; r < here.node.size(); ++r) {  // mpirun -n 2 on one host: one node
    CHECK(here.node[r] == 0);
    CHECK(here.host[r] == here.host[0]);
  }
  CHECK(group_span_error(here, 1).empty());

  // mpirun's by-slot placement of 2 nodes x 3 ranks: the coordinator is rank 0 on node a.
  const RankNodes two{{0, 0, 0, 1, 1, 1}, {"a", "a", "a", "b", "b", "b"}};
  CHECK(group_span_error(two, 1).empty());
  CHECK(group_span_error(two, 5) == "worker group 0 (ranks 1-5) spans a and b");
  const RankNodes three{{0, 0, 0, 1, 1, 1, 2, 2, 2}, {"a", "a", "a", "b", "b", "b", "c", "c", "c"}};
  CHECK(group_span_error(three, 2) == "worker group 2 (ranks 5-6) spans b and c");
  CHECK(group_span_error(three, 4) == "worker group 0 (ranks 1-4) spans a and b");
  CHECK(group_span_error(three, 8) == "worker group 0 (ranks 1-8) spans a, b and c");
  // Placed so that groups of 2 stay on their node (a rank file, or an extra rank on node a).
  const RankNodes fitted{{0, 0, 0, 1, 1}, {"a", "a", "a", "b", "b"}};
  CHECK(group_span_error(fitted, 2).empty());
}

int main(int argc, char** argv) {
  MpiSession mpi(&argc, &argv);
  const int failed = linsweep::testing::run_catch_session(argc, argv);
  // Every rank must agree on the outcome; a failure anywhere fails the test.
  auto comm = make_mpi_world_communicator();
  std::vector<double> f = {static_cast<double>(failed != 0)};
  comm->allreduce_sum(f);
  return f[0] > 0 ? 1 : 0;
}
