#include "base/regex_text.h"

#include <fmt/format.h>

#include "base/enum_names.h"

namespace roceqos {
namespace {

namespace rc = std::regex_constants;
constexpr EnumName<rc::error_type> kRegexErrors[] = {
    {rc::error_collate, "an invalid collating element name"},
    {rc::error_ctype, "an invalid character class name"},
    {rc::error_escape, "an invalid escape, or a trailing backslash"},
    {rc::error_backref, "a back reference to a group that does not exist"},
    {rc::error_brack, "an unbalanced [ or ]"},
    {rc::error_paren,
     "an unbalanced ( or ), or a repetition (*, +, ?) with nothing before it "
     "(to match anything, write .*)"},
    {rc::error_brace, "an unbalanced { or }"},
    {rc::error_badbrace, "an invalid {n,m} range"},
    {rc::error_range, "an invalid character range such as [z-a]"},
    {rc::error_space, "not enough memory to compile it"},
    {rc::error_badrepeat,
     "a repetition (*, +, ?, {n}) with nothing before it (to match anything, "
     "write .*)"},
    {rc::error_complexity, "too complex to match"},
    {rc::error_stack, "too complex to match (stack)"},
};

}  // namespace

std::string_view RegexErrorText(rc::error_type code) {
  return NameOf(kRegexErrors, code, "not a valid regular expression");
}

Result<std::regex> CompileUserRegex(std::string_view what, const std::string& pattern) {
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return MakeError(EINVAL, fmt::format("{}: invalid regex \"{}\": {}", what, pattern,
                                         RegexErrorText(e.code())));
  }
}

}  // namespace roceqos
