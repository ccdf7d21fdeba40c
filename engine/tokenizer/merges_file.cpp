// Splitting a merges file into lines and each line into its two symbols.
#include "engine/tokenizer/merges_file.hpp"

#include "common/errors.hpp"

namespace linsweep {

MergesFile parse_merges(std::string_view text, const std::string& path, std::size_t limit) {
  MergesFile out;
  std::size_t pos = 0, line_no = 0;
  while (pos < text.size() && out.merges.size() < limit) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_no == 1 && line.starts_with("#version")) {
      out.version = line;
      continue;
    }
    if (line.empty()) continue;
    const std::size_t sp = line.find(' ');
    if (sp == 0 || sp == std::string_view::npos || sp + 1 >= line.size() ||
        line.find(' ', sp + 1) != std::string_view::npos)
      throw InputError(path + ":" + std::to_string(line_no) + ": a merge must be two symbols separated by one space");
    out.merges.push_back({line, line.substr(0, sp), line.substr(sp + 1), line_no});
  }
  return out;
}

}  // namespace linsweep
