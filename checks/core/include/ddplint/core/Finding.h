// What a rule reports: a finding at a model position, its notes, and the
// fix-its it asks for.  Language-neutral: a frontend maps the positions back
// to its source and spells the fix-its in its language (one renderer per
// language: checks/clang-frontend/FixRenderer, checks/python-frontend/PyFixRenderer).
#pragma once

#include "ddplint/core/Model.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ddplint::core {

// A place outside the analysed program (a launch file that starts it).
struct ExternalPlace {
  std::string file; // absolute path; empty: none
  unsigned line = 0, column = 0;
};

struct Note {
  Note() = default;
  Note(Loc at, std::string text) : loc(at), message(std::move(text)) {}
  Loc loc = 0;
  std::string message;
  ExternalPlace external; // used instead of `loc` when its file is set
};

// A fix-it the core asks for; the frontend renders it in its language.
enum class FixKind : std::uint8_t {
  None,
  // Insert the timeout argument at `anchor` (C++: `std::chrono::seconds(N)`
  // into an empty Options::create(); Python: `, timeout=timedelta(seconds=N)`).
  InsertTimeoutArg,
  // Append an options argument with a timeout at `anchor` (C++:
  // `, <text>::create(std::chrono::seconds(N))`, `text` = the options class).
  InsertTimeoutOptionsArg,
  // The string literal at `anchor` spells `oldText`: make it spell `text`.
  RenameEnvVar,
  // Data loader arguments: insert `persistent_workers=True` /
  // `pin_memory=True` at `anchor` (the end of the argument list), or, when
  // the argument is written as False, replace the value at `anchor` by True.
  InsertPersistentWorkers,
  SetPersistentWorkersTrue,
  InsertPinMemory,
  SetPinMemoryTrue,
  // A barrier every rank reaches, right before / right after the `if` whose
  // model node is `node` (its position is `anchor`).
  InsertBarrierBefore,
  InsertBarrierAfter,
};

struct FixHint {
  FixHint() = default;
  FixHint(FixKind k, Loc at, std::string newText = "", std::string written = "", int secs = 0,
          const Node *n = nullptr)
      : kind(k), anchor(at), text(std::move(newText)), oldText(std::move(written)),
        seconds(secs), node(n) {}
  FixKind kind = FixKind::None;
  Loc anchor = 0;
  std::string text;    // InsertTimeoutOptionsArg: the options class; RenameEnvVar: the new name
  std::string oldText; // RenameEnvVar: the name written
  int seconds = 0;     // InsertTimeoutArg, InsertTimeoutOptionsArg: the timeout to pass
  const Node *node = nullptr; // InsertBarrierBefore/After: the `if`
};

// Source text or a name as a message quotes it: 'x', or `x` when x has quotes
// of its own (no nested quotes: `os.environ["RANK"] == "0"`).
// Code written over several lines, as a message spells it on one: a line
// break and its indentation read as one space, none inside brackets
// (`every_n_steps(\n    state, every\n)` is `every_n_steps(state, every)`).
inline std::string oneLine(const std::string &text) {
  if (text.find('\n') == std::string::npos)
    return text;
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\\') {
      out += c;
      ++i;
      continue;
    }
    size_t j = i;
    bool brk = false;
    while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' ||
                               text[j] == '\r' || (text[j] == '\\' && j + 1 < text.size() &&
                                                    (text[j + 1] == '\n' || text[j + 1] == '\r')))) {
      brk = brk || text[j] == '\n';
      ++j;
    }
    if (j == i) { // a backslash that continues nothing
      out += c;
      ++i;
      continue;
    }
    if (!brk) {
      out.append(text, i, j - i);
    } else {
      // A trailing comma before the closing bracket goes with the break.
      if (j < text.size() && (text[j] == ')' || text[j] == ']' || text[j] == '}') &&
          !out.empty() && out.back() == ',')
        out.pop_back();
      const bool afterOpen = !out.empty() && (out.back() == '(' || out.back() == '[' || out.back() == '{');
      const bool beforeClose = j < text.size() && (text[j] == ')' || text[j] == ']' || text[j] == '}');
      if (!out.empty() && j < text.size() && !afterOpen && !beforeClose)
        out += ' ';
    }
    i = j;
  }
  return out;
}

inline std::string quoteCode(const std::string &raw) {
  std::string text = oneLine(raw);
  if (text.find_first_of("'\"") == std::string::npos)
    return "'" + text + "'";
  if (text.find('`') == std::string::npos)
    return "`" + text + "`";
  return text;
}

struct Finding {
  std::string rule; // e.g. "ddp-divergent-collective"
  Loc loc = 0;
  std::string message;
  std::vector<Note> notes;
  // Fix-its for the frontend to render; several hints make one fix-it.
  std::vector<FixHint> fixes;
  // Reported as a note whatever the rule's severity: a policy finding (an
  // option asks for more than the hazards), or the rule's weaker form.
  bool asNote = false;
  // The code is in a function called from several places and this is the
  // call (the outermost one the rule followed) where the hazard arises: a
  // frontend that reports a callee's finding at a call picks this one.
  Loc viaCall = 0;
};

} // namespace ddplint::core
