// Text for a cell of a Markdown table (the docs' generated tables): a `|` would end the cell.
#pragma once

#include <string>

namespace linsweep {

inline std::string markdown_cell(std::string text) {
  for (std::size_t i = text.find('|'); i != std::string::npos; i = text.find('|', i + 2)) text.insert(i, "\\");
  return text;
}

}  // namespace linsweep
