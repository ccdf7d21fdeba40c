// Strings written so that a POSIX shell reads each back as one word, unchanged: for commands
// printed for a user to paste (batch scripts, "to continue: ..." lines, a report's overrides).
#pragma once

#include <string>
#include <string_view>

namespace linsweep {

// `s` single-quoted, with ' written as '\''. Pure; thread safe.
std::string shell_quote(std::string_view s);

// `s` bare when the shell reads it as one word unchanged (letters, digits and _./-+=:,@%),
// else shell_quote(s). Pure; thread safe.
std::string shell_word(std::string_view s);

}  // namespace linsweep
