// Help wrapping as a pass over CLI11's finished text: CLI11 2.1 (Debian 12) does not wrap
// descriptions at all and later versions wrap differently, so the layout is fixed here once.
#include "cli/commands/help_format.hpp"

#include <CLI/CLI.hpp>
#include <memory>

namespace linsweep {
namespace {

// Where a line's text continues after a wrap: under the description of a two-column line
// ("  --where TEXT   col=v ..."), else under the line's first word.
std::size_t continuation_indent(const std::string& line, std::size_t columns) {
  const std::size_t lead = line.find_first_not_of(' ');
  if (lead == std::string::npos) return 0;
  const std::size_t gap = line.find("  ", lead);
  if (gap != std::string::npos) {
    const std::size_t desc = line.find_first_not_of(' ', gap);
    if (desc != std::string::npos && desc + 30 < columns) return desc;
  }
  return lead + 2 < columns / 2 ? lead : 0;
}

void wrap_line(const std::string& line, std::size_t columns, std::string* out) {
  if (line.size() <= columns) {
    *out += line + "\n";
    return;
  }
  const std::size_t indent = continuation_indent(line, columns);
  std::string rest = line;
  while (rest.size() > columns) {
    // Break at the last space that fits, but not inside the indent (or the first line's name).
    std::size_t cut = rest.rfind(' ', columns);
    if (cut == std::string::npos || cut <= indent) cut = rest.find(' ', columns);  // one long word
    if (cut == std::string::npos) break;
    *out += rest.substr(0, rest.find_last_not_of(' ', cut) + 1) + "\n";
    const std::size_t next = rest.find_first_not_of(' ', cut);
    if (next == std::string::npos) {
      rest.clear();
      break;
    }
    rest = std::string(indent, ' ') + rest.substr(next);
  }
  if (!rest.empty()) *out += rest + "\n";
}

class WrappingFormatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    return wrap_help_text(CLI::Formatter::make_help(app, std::move(name), mode), kHelpColumns);
  }
};

}  // namespace

std::string wrap_help_text(const std::string& text, std::size_t columns) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    wrap_line(text.substr(start, end - start), columns, &out);
    start = end + 1;
  }
  if (!text.empty() && text.back() != '\n' && !out.empty()) out.pop_back();
  return out;
}

void use_help_formatter(CLI::App& app) { app.formatter(std::make_shared<WrappingFormatter>()); }

}  // namespace linsweep
