#pragma once

// User-supplied regular expressions (flags, policy selectors): compiled once, with an error that
// says what is wrong in the user's terms instead of the C++ library's wording.

#include <regex>
#include <string>
#include <string_view>

#include "base/result.h"

namespace roceqos {

/// Compiles `pattern` (ECMAScript). On failure the message names `what` (the flag or policy key),
/// the pattern and the problem, e.g. `--collector.device-include: invalid regex "*": a repetition
/// (*, +, ?, {n}) has nothing before it (to match anything, write .*)`.
Result<std::regex> CompileUserRegex(std::string_view what, const std::string& pattern);

/// The plain-words reason for a regex_error code.
std::string_view RegexErrorText(std::regex_constants::error_type code);

}  // namespace roceqos
