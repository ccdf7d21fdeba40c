// `--help` text that fits kHelpColumns columns, whatever CLI11 version lays it out.
#pragma once

#include <cstddef>
#include <string>

namespace CLI {
class App;
}

namespace linsweep {

inline constexpr std::size_t kHelpColumns = 100;

// Gives `app` (and the subcommands added to it afterwards, which inherit it) a formatter that
// wraps every help line longer than kHelpColumns at spaces, continuing an option's or a
// subcommand's description under its first word. A single word longer than a line (a path in
// an example) is left whole.
void use_help_formatter(CLI::App& app);

// The wrapping itself, on finished help text.
std::string wrap_help_text(const std::string& text, std::size_t columns);

}  // namespace linsweep
