// Superseded units and their files: found from the standings, deleted unit file first.
#include "storage/garbage_collection.hpp"

#include <filesystem>
#include <map>
#include <set>

#include "common/errors.hpp"
#include "common/file_io.hpp"
#include "storage/store.hpp"
#include "storage/unit_standing.hpp"

namespace linsweep {
namespace {

namespace fs = std::filesystem;

std::uint64_t size_on_disk(const std::string& path) {
  std::error_code ec;
  if (fs::is_symlink(path, ec)) return 0;
  if (fs::is_regular_file(path, ec)) {
    const auto n = fs::file_size(path, ec);
    return ec ? 0 : n;
  }
  std::uint64_t total = 0;
  for (fs::recursive_directory_iterator it(path, fs::directory_options::none, ec), end; !ec && it != end;
       it.increment(ec))
    if (!it->is_symlink(ec) && it->is_regular_file(ec)) total += it->file_size(ec);
  return total;
}

// models/<dir> -> the unit its owner file names.
std::map<std::string, std::string> model_owners(const StoreLayout& layout) {
  std::map<std::string, std::string> owners;
  std::error_code ec;
  for (fs::directory_iterator it(layout.models_dir(), ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_symlink(ec) || !it->is_directory(ec)) continue;
    const std::string marker = StoreLayout::model_owner(it->path().string());
    if (!is_regular_file(marker)) continue;  // no owner recorded: never deleted
    std::string id = read_file(marker, 4096);
    while (!id.empty() && (id.back() == '\n' || id.back() == ' ')) id.pop_back();
    owners[it->path().string()] = id;
  }
  return owners;
}

// Everything of unit `id` that exists, the unit file first.
std::vector<std::string> owned_paths(const StoreLayout& layout, const std::string& id,
                                     const std::map<std::string, std::string>& owners) {
  std::vector<std::string> candidates = {layout.unit_file(id), layout.unit_arrays_file(id), layout.unit_log(id),
                                         layout.unit_activations(id), layout.unit_checkpoints(id)};
  for (const auto& [dir, owner] : owners)
    if (owner == id) candidates.push_back(dir);
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& p : candidates)
    if (fs::symlink_status(p, ec).type() != fs::file_type::not_found) out.push_back(p);
  return out;
}

void remove_path(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) throw StorageError(path + ": cannot remove: " + ec.message());
}

}  // namespace

GcPlan plan_gc(const Store& store) {
  GcPlan plan;
  const StoreLayout& layout = store.layout();
  const auto owners = model_owners(layout);
  std::set<std::string> current_units;
  for (const auto& [id, s] : unit_standings(store)) {
    if (s.current) {
      current_units.insert(id);
      continue;
    }
    GcUnit u{id, s.slot, owned_paths(layout, id, owners), 0};
    for (const auto& p : u.paths) u.bytes += size_on_disk(p);
    plan.bytes += u.bytes;
    plan.units.push_back(std::move(u));
  }
  // A unit removed by an interrupted gc: its last journal event is "removed" and its file is gone.
  std::map<std::string, std::string> last;
  for (const auto& e : store.journal_events()) last[e.unit] = e.event;
  for (const auto& [id, event] : last) {
    if (event != "removed" || store.is_committed(id) || current_units.count(id)) continue;
    for (const auto& p : owned_paths(layout, id, owners)) {
      plan.bytes += size_on_disk(p);
      plan.leftovers.push_back(p);
    }
  }
  return plan;
}

void run_gc(Store& store, const GcPlan& plan) {
  if (!store.writable()) throw StorageError(store.dir() + ": gc needs the store's lock");
  for (const auto& u : plan.units) {
    store.journal({.event = "removed", .unit = u.unit});  // durable before anything goes
    for (const auto& p : u.paths) remove_path(p);         // the unit file first
  }
  for (const auto& p : plan.leftovers) remove_path(p);
  store.rebuild_consolidated();
}

}  // namespace linsweep
