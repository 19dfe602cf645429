// Python syntax tree -> the core's program model.  The rules themselves live in
// checks/core; this file only says what a Python program does: which calls
// are collectives (explicit, and implicit ones such as a DDP model's forward),
// which values depend on the rank or on rank-local data, and where the
// checkpoint and file writes, process groups, data loaders and forward
// methods are.
#pragma once

#include "PySyntax.h"

#include "ddplint/core/Model.h"
#include "ddplint/core/Rules.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace ddplint::pyfe {

struct PyModel {
  core::Program program; // with program.facts filled (Facts.h)
  std::vector<SourcePos> positions;  // Loc - 1 -> position
  std::vector<unsigned> byteOffsets; // Loc - 1 -> byte offset
  std::map<core::Loc, SyntaxNode> ifNodes; // Loc of an `if` -> its statement (fix-its)
  std::string distAlias;         // how the module spells torch.distributed ("dist")
  std::string timedeltaSpelling; // "datetime.timedelta", "timedelta"; "" (needs an import)
  unsigned importInsertAt = 0;   // byte offset for a new import line
  bool hasImports = false;
  unsigned functionsAnalysed = 0;
};

// `user`: the user's wrappers (the same options as the C++ checks).
PyModel buildModel(const SyntaxTree &tree, const core::Wrappers &user);

} // namespace ddplint::pyfe
