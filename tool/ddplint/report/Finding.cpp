#include "Finding.h"

namespace ddplint::cli {

const char *severityName(Severity s) {
  switch (s) {
  case Severity::Note:
    return "note";
  case Severity::Warning:
    return "warning";
  case Severity::Error:
    return "error";
  }
  return "warning";
}

ToolError fileError(const std::string &file, std::string message) {
  ToolError e;
  e.location.file = file;
  e.message = std::move(message);
  return e;
}

bool parseSeverity(const std::string &text, Severity &out) {
  if (text == "note")
    out = Severity::Note;
  else if (text == "warning")
    out = Severity::Warning;
  else if (text == "error")
    out = Severity::Error;
  else
    return false;
  return true;
}

} // namespace ddplint::cli
