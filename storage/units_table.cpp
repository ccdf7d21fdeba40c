// The schema of the `units` table.
#include "storage/units_table.hpp"

namespace linsweep {

const TableDef<UnitRow>& units_table() {
  static const TableDef<UnitRow> t =
      TableDef<UnitRow>("units", "one row per committed unit: what, where, when, and whether it is current")
          .key("unit", &UnitRow::unit, "the unit id (file name under units/)")
          .column("kind", &UnitRow::kind, "the unit kind")
          .column("slot", &UnitRow::slot, "what it measures, without its parameters")
          .column("params", &UnitRow::params, "its provenance as JSON: slot, params, inputs, deps")
          .column("version", &UnitRow::version, "the linsweep version that computed it")
          .column("host", &UnitRow::host, "the host of the rank that staged it")
          .column("rank", &UnitRow::rank, "that rank in MPI_COMM_WORLD")
          .column("group_ranks", &UnitRow::group_ranks, "ranks that computed it together")
          .column("communicator", &UnitRow::communicator, "how they summed: mpi, nccl or none (one rank)")
          .column("started", &UnitRow::started, "unix seconds")
          .column("finished", &UnitRow::finished, "unix seconds")
          .column("current", &UnitRow::current, "1: the slot's current unit; 0: superseded")
          .column("planned_by", &UnitRow::planned_by, "the latest plan record that planned it (0: none)")
          .added("dtype", &UnitRow::dtype, "the compute dtype of its model (\"\": it runs none)")
          .added("activation_dtype", &UnitRow::activation_dtype,
                 "the dtype of the activation shards it wrote or its inputs were computed from (\"\": none)")
          .added("peak_host_mib", &UnitRow::peak_host_mib, "peak resident memory of its rank while it ran, MiB")
          .added("peak_device_mib", &UnitRow::peak_device_mib,
                 "peak device memory torch allocated while it ran, MiB (NaN on a CPU)");
  return t;
}

namespace {
const TableRegistrar kUnitsTable{units_table().schema()};
}  // namespace

}  // namespace linsweep
