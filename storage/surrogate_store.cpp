// Surrogate arrays layout.
#include "storage/surrogate_store.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/errors.hpp"

namespace linsweep {
namespace {

const ArrayData& need(const UnitResult& u, const std::string& name, std::size_t size) {
  auto it = u.arrays.find(name);
  if (it == u.arrays.end())
    throw StorageError("unit " + u.unit_id + ": array '" + name + "' is missing", ExitCode::kBadInput);
  if (it->second.values.size() != size)
    throw StorageError("unit " + u.unit_id + ": array '" + name + "' has " + std::to_string(it->second.values.size()) +
                           " values, expected " + std::to_string(size),
                       ExitCode::kBadInput);
  return it->second;
}

}  // namespace

std::string surrogate_key(const std::string& model, const std::string& corpus, std::int64_t layer) {
  return "surrogates/" + model + "/" + corpus + "/layer" + std::to_string(layer);
}

void put_surrogate(UnitResult& unit, const std::string& key, const StoredSurrogate& s) {
  const auto d = static_cast<std::size_t>(s.stats.d);
  if (s.stats.mean_x.size() != d || s.stats.mean_y.size() != d || s.stats.xcxc.size() != d * d ||
      s.stats.xcyc.size() != d * d)
    throw StorageError(key + ": statistics do not match d = " + std::to_string(d));
  const auto sd = static_cast<std::int64_t>(d);
  unit.arrays[key + "/stats/n"] = {{}, {static_cast<double>(s.stats.n)}};
  unit.arrays[key + "/stats/ycyc_trace"] = {{}, {s.stats.ycyc_trace}};
  unit.arrays[key + "/stats/mean_x"] = {{sd}, s.stats.mean_x};
  unit.arrays[key + "/stats/mean_y"] = {{sd}, s.stats.mean_y};
  unit.arrays[key + "/stats/xcxc"] = {{sd, sd}, s.stats.xcxc};
  unit.arrays[key + "/stats/xcyc"] = {{sd, sd}, s.stats.xcyc};
  for (const auto& f : s.fits) {
    if (f.weight.size() != d * d || f.bias.size() != d) throw StorageError(key + ": a fit does not match d");
    const std::string k = key + "/lambda=" + fmt::format("{}", f.lambda);
    unit.arrays[k + "/W"] = {{sd, sd}, f.weight};
    unit.arrays[k + "/b"] = {{sd}, f.bias};
  }
}

StoredSurrogate get_surrogate(const UnitResult& unit, const std::string& key) {
  StoredSurrogate s;
  auto mx = unit.arrays.find(key + "/stats/mean_x");
  if (mx == unit.arrays.end())
    throw StorageError("unit " + unit.unit_id + ": surrogate '" + key + "' is missing", ExitCode::kBadInput);
  const std::size_t d = mx->second.values.size();
  s.stats.d = static_cast<std::int64_t>(d);
  s.stats.n = static_cast<std::int64_t>(need(unit, key + "/stats/n", 1).values[0]);
  s.stats.ycyc_trace = need(unit, key + "/stats/ycyc_trace", 1).values[0];
  s.stats.mean_x = mx->second.values;
  s.stats.mean_y = need(unit, key + "/stats/mean_y", d).values;
  s.stats.xcxc = need(unit, key + "/stats/xcxc", d * d).values;
  s.stats.xcyc = need(unit, key + "/stats/xcyc", d * d).values;
  const std::string prefix = key + "/lambda=";
  for (const auto& [name, a] : unit.arrays) {
    if (name.rfind(prefix, 0) != 0 || name.size() < 2 || name.compare(name.size() - 2, 2, "/W") != 0) continue;
    const std::string lam = name.substr(prefix.size(), name.size() - prefix.size() - 2);
    SurrogateFit f;
    try {
      f.lambda = std::stod(lam);
    } catch (const std::exception&) {
      throw StorageError("unit " + unit.unit_id + ": bad lambda in '" + name + "'", ExitCode::kBadInput);
    }
    f.weight = need(unit, name, d * d).values;
    f.bias = need(unit, prefix + lam + "/b", d).values;
    s.fits.push_back(std::move(f));
  }
  std::sort(s.fits.begin(), s.fits.end(), [](const auto& a, const auto& b) { return a.lambda < b.lambda; });
  return s;
}

}  // namespace linsweep
