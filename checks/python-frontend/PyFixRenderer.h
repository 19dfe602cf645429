// The Python spelling of the fix-its the rules ask for (core::FixHint): one
// renderer for every rule.
#pragma once

#include "PyModelBuilder.h"
#include "PySyntax.h"

#include "ddplint/core/Finding.h"

#include <string>
#include <vector>

namespace ddplint::pyfe {

// One replacement: bytes [offset, offset+length) of the file become `replacement`.
struct PyEdit {
  unsigned offset = 0, length = 0;
  std::string replacement;
  SourcePos start, end;
};

class PyFixRenderer {
public:
  PyFixRenderer(const SyntaxTree &tree, const PyModel &model) : tree_(tree), m_(model) {}

  SourcePos pos(core::Loc l) const {
    return l && l <= m_.positions.size() ? m_.positions[l - 1] : SourcePos{1, 1};
  }
  // The edits of `f`'s fix-it, in the order asked for; empty when there is no
  // safe edit (a timedelta that needs an import where none can go, ...).
  std::vector<PyEdit> render(const core::Finding &f) const;

private:
  unsigned byte(core::Loc l) const {
    return l && l <= m_.byteOffsets.size() ? m_.byteOffsets[l - 1] : 0;
  }
  PyEdit insert(unsigned at, std::string text) const;
  PyEdit replace(unsigned at, unsigned len, std::string text) const;
  SourcePos posOfByte(unsigned at) const;
  std::string indentAt(unsigned at) const; // the indentation of the line `at` is on
  unsigned lineStart(unsigned at) const;
  void barrier(const core::FixHint &h, std::vector<PyEdit> &out) const;
  std::string frameworkWait(SyntaxNode ifStatement) const;
  std::string frameworkWaitOf(SyntaxNode condition) const;
  bool assignsNameIn(SyntaxNode scope, const std::string &text) const;

  const SyntaxTree &tree_;
  const PyModel &m_;
};

} // namespace ddplint::pyfe
