#include "PyFixRenderer.h"

#include <cctype>

namespace ddplint::pyfe {

PyEdit PyFixRenderer::insert(unsigned at, std::string text) const {
  PyEdit e;
  e.offset = at;
  e.length = 0;
  e.replacement = std::move(text);
  e.start = e.end = posOfByte(at);
  return e;
}

PyEdit PyFixRenderer::replace(unsigned at, unsigned len, std::string text) const {
  PyEdit e = insert(at, std::move(text));
  e.length = len;
  e.end = posOfByte(at + len);
  return e;
}

SourcePos PyFixRenderer::posOfByte(unsigned at) const {
  const std::string &s = tree_.source();
  unsigned line = 1, col = 1;
  for (unsigned i = 0; i < at && i < s.size(); ++i) {
    if (s[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

std::string PyFixRenderer::indentAt(unsigned at) const {
  const std::string &s = tree_.source();
  size_t b = s.rfind('\n', at == 0 ? 0 : at - 1);
  b = (b == std::string::npos || at == 0) ? 0 : b + 1;
  size_t e = b;
  while (e < s.size() && (s[e] == ' ' || s[e] == '\t'))
    ++e;
  return s.substr(b, e - b);
}

unsigned PyFixRenderer::lineStart(unsigned at) const {
  const std::string &s = tree_.source();
  if (at == 0)
    return 0;
  size_t b = s.rfind('\n', at - 1);
  return b == std::string::npos ? 0 : static_cast<unsigned>(b + 1);
}

// A block guarded by a framework's own main-process test waits the way that
// framework does, which works with one process and with no torch.distributed
// group (Accelerate, Fabric, a Lightning trainer): "" for any other test.
std::string PyFixRenderer::frameworkWait(SyntaxNode ifStatement) const {
  return frameworkWaitOf(field(ifStatement, "condition"));
}

// `distributed_type == DEEPSPEED or accelerator.is_main_process`,
// `accelerator.is_main_process and step % k == 0`: the framework's test among
// the operands names the framework.
std::string PyFixRenderer::frameworkWaitOf(SyntaxNode c) const {
  while (is(c, "parenthesized_expression") && namedChildCount(c) == 1)
    c = namedChild(c, 0);
  if (is(c, "boolean_operator")) {
    for (const char *side : {"left", "right"})
      if (std::string w = frameworkWaitOf(field(c, side)); !w.empty())
        return w;
    return "";
  }
  if (c.isNull() || !is(c, "attribute"))
    return "";
  const std::string attr(tree_.text(field(c, "attribute")));
  const std::string recv(tree_.text(field(c, "object")));
  // A trainer's own `self.is_main` property (lucidrains' trainers: `return
  // self.accelerator.is_main_process`) tests what it returns.
  if (recv == "self") {
    SyntaxNode cls = parentOf(c);
    while (!cls.isNull() && !is(cls, "class_definition"))
      cls = parentOf(cls);
    for (SyntaxNode d : cls.isNull() ? NodeList{} : namedKids(field(cls, "body"))) {
      if (is(d, "decorated_definition"))
        d = field(d, "definition");
      if (!is(d, "function_definition") || tree_.text(field(d, "name")) != attr)
        continue;
      std::vector<SyntaxNode> body;
      for (SyntaxNode st : namedKids(field(d, "body")))
        if (!is(st, "comment") && !(is(st, "expression_statement") && namedChildCount(st) == 1 &&
                                    is(namedChild(st, 0), "string")))
          body.push_back(st); // not the docstring
      if (body.size() == 1 && is(body[0], "return_statement") && namedChildCount(body[0]) == 1)
        return frameworkWaitOf(namedChild(body[0], 0));
    }
  }
  if ((attr == "is_main_process" || attr == "is_local_main_process") &&
      endsWith(recv, "accelerator"))
    return recv + ".wait_for_everyone()";
  if (attr == "is_global_zero" && endsWith(recv, "fabric"))
    return recv + ".barrier()";
  if (attr == "is_global_zero" && endsWith(recv, "trainer"))
    return recv + ".strategy.barrier()";
  return "";
}

// Whether `scope` assigns a name that `text` reads (`best = acc` inside the
// block, where the barrier's test reads `best`): the test would then differ
// on rank 0 after the block.
bool PyFixRenderer::assignsNameIn(SyntaxNode scope, const std::string &text) const {
  auto reads = [&](const std::string &name) {
    for (size_t at = text.find(name); at != std::string::npos; at = text.find(name, at + 1)) {
      const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
      const bool before = at > 0 && (word(text[at - 1]) || text[at - 1] == '.');
      const bool after = at + name.size() < text.size() && word(text[at + name.size()]);
      if (!before && !after)
        return true;
    }
    return false;
  };
  std::vector<SyntaxNode> stack{scope};
  while (!stack.empty()) {
    SyntaxNode n = stack.back();
    stack.pop_back();
    SyntaxNode target;
    if (is(n, "assignment") || is(n, "augmented_assignment"))
      target = field(n, "left");
    else if (is(n, "for_statement"))
      target = field(n, "left");
    else if (is(n, "as_pattern_target"))
      target = n;
    if (!target.isNull()) {
      std::vector<SyntaxNode> names{target};
      while (!names.empty()) {
        SyntaxNode t = names.back();
        names.pop_back();
        if (is(t, "identifier") || is(t, "attribute") || is(t, "subscript")) {
          std::string whole(tree_.text(is(t, "subscript") ? field(t, "value") : t));
          if (reads(whole))
            return true;
          continue;
        }
        for (SyntaxNode k : namedKids(t))
          names.push_back(k);
      }
    }
    for (SyntaxNode k : namedKids(n))
      stack.push_back(k);
  }
  return false;
}

// A wait on a line of its own right before, or right after, the `if`: the
// project's barrier helper, `dist.barrier()`, or `dist.barrier()` only when a
// process group exists (PyModel::barrierHelper).
void PyFixRenderer::barrier(const core::FixHint &h, std::vector<PyEdit> &out) const {
  auto it = m_.ifNodes.find(h.anchor);
  if (it == m_.ifNodes.end() || is(it->second, "elif_clause"))
    return;
  const SyntaxNode s = it->second;
  // An Accelerate-only module has no torch.distributed name: its own wait.
  const std::string framework = frameworkWait(s);
  if (m_.barrierHelper.empty() && m_.distAlias.empty() && framework.empty())
    return;
  const unsigned start = startByte(s);
  const std::string ind = indentAt(start);
  // One level deeper, as the file indents: the `if`'s own block says how.
  std::string unit = "    ";
  if (is(s, "if_statement"))
    if (const SyntaxNode body = field(s, "consequence"); !body.isNull()) {
      const std::string inner = indentAt(startByte(body));
      if (inner.size() > ind.size() && inner.compare(0, ind.size(), ind) == 0)
        unit = inner.substr(ind.size());
    }
  std::string wait;
  if (!framework.empty())
    wait = ind + framework;
  else if (!m_.barrierHelper.empty())
    wait = ind + m_.barrierHelper + "()";
  else if (m_.initAlways)
    wait = ind + m_.distAlias + ".barrier()";
  else
    wait = ind + "if " + m_.distAlias + ".is_initialized():\n" + ind + unit + m_.distAlias +
           ".barrier()";
  // Only under the settings the block writes under (the rule's h.text), when
  // the block assigns none of the names they read: a barrier on every step
  // costs a global sync per step.
  if (h.kind == core::FixKind::InsertBarrierAfter && !h.text.empty() && is(s, "if_statement") &&
      !assignsNameIn(s, h.text)) {
    std::string nested;
    size_t from = 0;
    while (from <= wait.size()) {
      size_t nl = wait.find('\n', from);
      const std::string line = wait.substr(from, nl == std::string::npos ? std::string::npos : nl - from);
      nested += ind + unit + line.substr(std::min(line.size(), ind.size()));
      if (nl == std::string::npos)
        break;
      nested += "\n";
      from = nl + 1;
    }
    // A test written over several lines inside parentheses keeps them.
    const bool lines = h.text.find('\n') != std::string::npos;
    wait = ind + "if " + (lines ? "(" + h.text + ")" : h.text) + ":\n" + nested;
  }
  if (h.kind == core::FixKind::InsertBarrierBefore)
    out.push_back(insert(lineStart(start), wait + "\n"));
  else
    out.push_back(insert(endByte(s), "\n" + wait));
}

std::vector<PyEdit> PyFixRenderer::render(const core::Finding &f) const {
  std::vector<PyEdit> out;
  const std::string &src = tree_.source();
  for (const auto &h : f.fixes) {
    const unsigned at = byte(h.anchor);
    if (!h.anchor)
      continue;
    const bool emptyList = at > 0 && src[at - 1] == '(';
    const std::string sep = emptyList ? "" : ", ";
    switch (h.kind) {
    case core::FixKind::InsertTimeoutArg: {
      std::string td = m_.timedeltaSpelling;
      if (td.empty()) {
        if (!m_.hasImports || m_.timedeltaImport.empty())
          return {}; // no safe place or name for the import: leave the fix to the user
        out.push_back(insert(m_.importInsertAt, m_.timedeltaImport));
        td = m_.importedTimedelta;
      }
      std::string arg = sep;
      arg += "timeout=";
      arg += td;
      arg += "(seconds=";
      arg += std::to_string(h.seconds);
      arg += ")";
      out.push_back(insert(at, std::move(arg)));
      break;
    }
    case core::FixKind::InsertPersistentWorkers:
      out.push_back(insert(at, sep + "persistent_workers=True"));
      break;
    case core::FixKind::InsertPinMemory:
      out.push_back(insert(at, sep + "pin_memory=True"));
      break;
    case core::FixKind::SetPersistentWorkersTrue:
    case core::FixKind::SetPinMemoryTrue:
      if (src.compare(at, 5, "False") == 0)
        out.push_back(replace(at, 5, "True"));
      break;
    case core::FixKind::RenameEnvVar:
      // The literal at the anchor: keep its quotes.
      if (at + 1 + h.oldText.size() <= src.size() &&
          src.compare(at + 1, h.oldText.size(), h.oldText) == 0)
        out.push_back(replace(at + 1, static_cast<unsigned>(h.oldText.size()), h.text));
      break;
    case core::FixKind::InsertBarrierBefore:
    case core::FixKind::InsertBarrierAfter:
      barrier(h, out);
      break;
    default: // C++'s options argument
      break;
    }
  }
  return out;
}

} // namespace ddplint::pyfe
