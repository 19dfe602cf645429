#include "Baseline.h"

#include "Report.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <regex>
#include <tuple>

namespace ddplint::cli {

namespace {

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

} // namespace

std::string normaliseSourceLine(const std::string &line) {
  std::string out;
  bool pendingSpace = false;
  for (char c : line) {
    if (isSpace(c)) {
      pendingSpace = !out.empty();
      continue;
    }
    if (pendingSpace)
      out += ' ';
    pendingSpace = false;
    out += c;
  }
  return out;
}

std::string normaliseMessage(const std::string &message, const std::string &root) {
  std::string s = message;
  // A message naming another place by absolute path would differ per checkout.
  if (!root.empty()) {
    std::string prefix = root.back() == '/' ? root : root + "/";
    for (size_t at; (at = s.find(prefix)) != std::string::npos;)
      s.erase(at, prefix.size());
  }
  // "at line 12", "lines 3-5", "column 7": the numbers move with unrelated edits.
  static const std::regex words(
      R"(\b(lines?|columns?|col|ln)(\s*)\d+(\s*(-|to|and|,)\s*\d+)?)", std::regex::icase);
  s = std::regex_replace(s, words, "$1$2#");
  // "train.cpp:12:5" or "train.cpp:12".
  static const std::regex fileLineCol(R"(([A-Za-z0-9_)\]'"])\:\d+(\:\d+)?\b)");
  s = std::regex_replace(s, fileLineCol, "$1:#");
  return s;
}

void computeFingerprints(std::vector<Finding> &findings, const std::string &root) {
  std::vector<std::string> hashes(findings.size());
  for (size_t i = 0; i < findings.size(); ++i) {
    const Finding &f = findings[i];
    const std::string file = displayPath(f.location.file, root);
    llvm::SHA256 sha;
    // Unit separators keep ("ab","c") and ("a","bc") apart.
    for (const std::string &part :
         {f.ruleId, file, normaliseSourceLine(f.sourceLine), normaliseMessage(f.message, root)}) {
      sha.update(part);
      sha.update(llvm::StringRef("\x1f", 1));
    }
    std::array<uint8_t, 32> digest = sha.final();
    hashes[i] = llvm::toHex(llvm::ArrayRef<uint8_t>(digest.data(), 16), /*LowerCase=*/true);
  }
  // Occurrences count in line order, whatever order the frontends produced.
  std::vector<size_t> order(findings.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Location &la = findings[a].location, &lb = findings[b].location;
    return std::tie(hashes[a], la.line, la.column) < std::tie(hashes[b], lb.line, lb.column);
  });
  std::map<std::string, unsigned> seen;
  for (size_t i : order)
    findings[i].fingerprint = hashes[i] + ":" + std::to_string(++seen[hashes[i]]);
}

bool writeBaseline(const std::string &path, const std::vector<Finding> &findings,
                   const std::string &root, std::string &err) {
  std::vector<Finding> copy = findings;
  if (std::any_of(copy.begin(), copy.end(),
                  [](const Finding &f) { return f.fingerprint.empty(); }))
    computeFingerprints(copy, root);

  std::vector<BaselineEntry> entries;
  entries.reserve(copy.size());
  for (const Finding &f : copy)
    entries.push_back(BaselineEntry{f.ruleId, displayPath(f.location.file, root),
                                    f.fingerprint, f.message, f.location.line});
  std::sort(entries.begin(), entries.end(), [](const BaselineEntry &a, const BaselineEntry &b) {
    return std::tie(a.file, a.line, a.rule, a.fingerprint, a.message) <
           std::tie(b.file, b.line, b.rule, b.fingerprint, b.message);
  });

  llvm::Error e = llvm::writeToOutput(path, [&](llvm::raw_ostream &os) -> llvm::Error {
    llvm::json::OStream j(os, 2);
    j.object([&] {
      j.attribute("version", 1);
      j.attribute("tool", "ddplint");
      j.attributeArray("findings", [&] {
        for (const BaselineEntry &b : entries)
          j.object([&] {
            j.attribute("rule", b.rule);
            j.attribute("file", b.file);
            j.attribute("fingerprint", b.fingerprint);
            j.attribute("message", b.message);
            j.attribute("line", static_cast<int64_t>(b.line));
          });
      });
    });
    os << "\n";
    return llvm::Error::success();
  });
  if (e) {
    err = "cannot write baseline: " + llvm::toString(std::move(e));
    return false;
  }
  return true;
}

namespace {

// A JSON reader that remembers where each value starts.  llvm::json::parse
// reports syntax errors with a position but forgets positions afterwards, and a
// baseline error has to point at the wrong value, not just say it is wrong.
struct JValue {
  enum Kind { Null, Bool, Number, String, Array, Object } kind = Null;
  unsigned line = 0, column = 0;
  bool boolean = false;
  std::string text; // String: the decoded string; Number: the literal
  std::vector<JValue> items;
  std::vector<std::pair<std::string, JValue>> members;

  const JValue *get(const std::string &key) const {
    for (const auto &m : members)
      if (m.first == key)
        return &m.second;
    return nullptr;
  }
};

const char *kindName(JValue::Kind k) {
  switch (k) {
  case JValue::Null:
    return "null";
  case JValue::Bool:
    return "a boolean";
  case JValue::Number:
    return "a number";
  case JValue::String:
    return "a string";
  case JValue::Array:
    return "an array";
  case JValue::Object:
    return "an object";
  }
  return "a value";
}

class Reader {
public:
  explicit Reader(llvm::StringRef text) : p(text.begin()), end(text.end()) {
    if (text.starts_with("\xEF\xBB\xBF"))
      p += 3;
  }

  bool parseDocument(JValue &out) {
    skipSpace();
    if (!parseValue(out, 0))
      return false;
    skipSpace();
    if (p != end)
      return fail("unexpected text after the JSON value");
    return true;
  }

  std::string message;
  unsigned errLine = 0, errColumn = 0;

private:
  const char *p, *end;
  unsigned line = 1, column = 1;

  bool fail(const std::string &m) {
    message = m;
    errLine = line;
    errColumn = column;
    return false;
  }

  void advance() {
    if (*p == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    ++p;
  }

  void skipSpace() {
    while (p != end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
      advance();
  }

  bool literal(const char *word) {
    for (const char *w = word; *w; ++w) {
      if (p == end || *p != *w)
        return fail(std::string("invalid literal, expected '") + word + "'");
      advance();
    }
    return true;
  }

  bool parseValue(JValue &v, int depth) {
    if (depth > 64)
      return fail("JSON nested too deeply");
    if (p == end)
      return fail("unexpected end of file, expected a value");
    v.line = line;
    v.column = column;
    switch (*p) {
    case '{':
      return parseObject(v, depth);
    case '[':
      return parseArray(v, depth);
    case '"':
      v.kind = JValue::String;
      return parseString(v.text);
    case 't':
      v.kind = JValue::Bool;
      v.boolean = true;
      return literal("true");
    case 'f':
      v.kind = JValue::Bool;
      return literal("false");
    case 'n':
      v.kind = JValue::Null;
      return literal("null");
    default:
      if (*p == '-' || llvm::isDigit(*p)) {
        v.kind = JValue::Number;
        return parseNumber(v.text);
      }
      return fail(std::string("unexpected character '") + *p + "', expected a value");
    }
  }

  bool parseObject(JValue &v, int depth) {
    v.kind = JValue::Object;
    advance(); // {
    skipSpace();
    if (p != end && *p == '}') {
      advance();
      return true;
    }
    while (true) {
      skipSpace();
      if (p == end || *p != '"')
        return fail("expected a string key in object");
      unsigned keyLine = line, keyColumn = column;
      std::string key;
      if (!parseString(key))
        return false;
      if (v.get(key)) {
        line = keyLine;
        column = keyColumn;
        return fail("duplicate key \"" + key + "\"");
      }
      skipSpace();
      if (p == end || *p != ':')
        return fail("expected ':' after object key");
      advance();
      skipSpace();
      JValue member;
      if (!parseValue(member, depth + 1))
        return false;
      v.members.emplace_back(std::move(key), std::move(member));
      skipSpace();
      if (p != end && *p == ',') {
        advance();
        continue;
      }
      if (p != end && *p == '}') {
        advance();
        return true;
      }
      return fail("expected ',' or '}' in object");
    }
  }

  bool parseArray(JValue &v, int depth) {
    v.kind = JValue::Array;
    advance(); // [
    skipSpace();
    if (p != end && *p == ']') {
      advance();
      return true;
    }
    while (true) {
      skipSpace();
      JValue item;
      if (!parseValue(item, depth + 1))
        return false;
      v.items.push_back(std::move(item));
      skipSpace();
      if (p != end && *p == ',') {
        advance();
        continue;
      }
      if (p != end && *p == ']') {
        advance();
        return true;
      }
      return fail("expected ',' or ']' in array");
    }
  }

  bool hex4(unsigned &out) {
    out = 0;
    for (int i = 0; i < 4; ++i) {
      if (p == end || !llvm::isHexDigit(*p))
        return fail("invalid \\u escape in string");
      out = out * 16 + llvm::hexDigitValue(*p);
      advance();
    }
    return true;
  }

  static void appendUtf8(std::string &s, unsigned cp) {
    if (cp < 0x80) {
      s += static_cast<char>(cp);
    } else if (cp < 0x800) {
      s += static_cast<char>(0xC0 | (cp >> 6));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      s += static_cast<char>(0xE0 | (cp >> 12));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      s += static_cast<char>(0xF0 | (cp >> 18));
      s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      s += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  bool parseString(std::string &out) {
    advance(); // "
    while (true) {
      if (p == end)
        return fail("unterminated string");
      char c = *p;
      if (c == '"') {
        advance();
        return true;
      }
      if (static_cast<unsigned char>(c) < 0x20)
        return fail("control character in string");
      if (c != '\\') {
        out += c;
        advance();
        continue;
      }
      advance();
      if (p == end)
        return fail("unterminated string");
      char e = *p;
      switch (e) {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        advance();
        unsigned cp;
        if (!hex4(cp))
          return false;
        if (cp >= 0xD800 && cp < 0xDC00) {
          unsigned lo;
          if (p + 1 < end && p[0] == '\\' && p[1] == 'u') {
            advance();
            advance();
            if (!hex4(lo))
              return false;
            if (lo < 0xDC00 || lo > 0xDFFF)
              return fail("invalid UTF-16 surrogate pair in string");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          } else {
            return fail("unpaired UTF-16 surrogate in string");
          }
        }
        appendUtf8(out, cp);
        continue; // hex4 has advanced past the escape
      }
      default:
        return fail(std::string("invalid escape '\\") + e + "' in string");
      }
      advance();
    }
  }

  bool parseNumber(std::string &out) {
    auto digits = [&] {
      bool any = false;
      while (p != end && llvm::isDigit(*p)) {
        out += *p;
        advance();
        any = true;
      }
      return any;
    };
    if (*p == '-') {
      out += '-';
      advance();
    }
    if (p != end && *p == '0') {
      out += '0';
      advance();
    } else if (!digits()) {
      return fail("invalid number");
    }
    if (p != end && *p == '.') {
      out += '.';
      advance();
      if (!digits())
        return fail("invalid number: digits expected after '.'");
    }
    if (p != end && (*p == 'e' || *p == 'E')) {
      out += *p;
      advance();
      if (p != end && (*p == '+' || *p == '-')) {
        out += *p;
        advance();
      }
      if (!digits())
        return fail("invalid number: digits expected in exponent");
    }
    return true;
  }
};

// A non-negative integer literal that fits in unsigned, e.g. "42" but not "4.2", "-1", "1e3".
bool asUnsigned(const JValue &v, unsigned &out) {
  if (v.kind != JValue::Number || v.text.empty() ||
      v.text.find_first_not_of("0123456789") != std::string::npos || v.text.size() > 10)
    return false;
  unsigned long long n = std::strtoull(v.text.c_str(), nullptr, 10);
  if (n > 0xFFFFFFFFull)
    return false;
  out = static_cast<unsigned>(n);
  return true;
}

} // namespace

bool loadBaseline(const std::string &path, Baseline &out, std::string &err) {
  auto located = [&](unsigned line, unsigned column, const std::string &msg) {
    err = path + ":" + std::to_string(line) + ":" + std::to_string(column) +
          ": error: invalid baseline: " + msg;
    return false;
  };
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer) {
    err = path + ": error: cannot read baseline: " + buffer.getError().message();
    return false;
  }
  JValue doc;
  Reader reader((*buffer)->getBuffer());
  if (!reader.parseDocument(doc))
    return located(reader.errLine, reader.errColumn, "malformed JSON: " + reader.message);

  if (doc.kind != JValue::Object)
    return located(doc.line, doc.column,
                   std::string("expected an object, found ") + kindName(doc.kind));
  auto wrongType = [&](const JValue &v, const std::string &what, const char *expected) {
    return located(v.line, v.column,
                   what + " must be " + expected + ", found " + kindName(v.kind));
  };

  const JValue *version = doc.get("version");
  if (!version)
    return located(doc.line, doc.column, "missing \"version\" (expected 1)");
  unsigned versionNumber = 0;
  if (!asUnsigned(*version, versionNumber)) {
    if (version->kind != JValue::Number)
      return wrongType(*version, "\"version\"", "an integer");
    return located(version->line, version->column,
                   "unsupported version " + version->text + " (this ddplint reads version 1)");
  }
  if (versionNumber != 1)
    return located(version->line, version->column,
                   "unsupported version " + version->text + " (this ddplint reads version 1)");

  if (const JValue *tool = doc.get("tool")) {
    if (tool->kind != JValue::String)
      return wrongType(*tool, "\"tool\"", "a string");
    if (tool->text != "ddplint")
      return located(tool->line, tool->column,
                     "written by \"" + tool->text + "\", not by ddplint");
  }

  const JValue *findings = doc.get("findings");
  if (!findings)
    return located(doc.line, doc.column, "missing \"findings\" (an array)");
  if (findings->kind != JValue::Array)
    return wrongType(*findings, "\"findings\"", "an array");

  Baseline result;
  result.path = path;
  for (size_t i = 0; i < findings->items.size(); ++i) {
    const JValue &item = findings->items[i];
    const std::string where = "findings[" + std::to_string(i) + "]";
    if (item.kind != JValue::Object)
      return wrongType(item, where, "an object");
    BaselineEntry entry;
    for (auto [key, target] : {std::pair<const char *, std::string *>{"rule", &entry.rule},
                               {"file", &entry.file},
                               {"fingerprint", &entry.fingerprint}}) {
      const JValue *v = item.get(key);
      if (!v)
        return located(item.line, item.column,
                       where + " lacks \"" + key + "\" (a string)");
      if (v->kind != JValue::String)
        return wrongType(*v, where + "." + key, "a string");
      if (v->text.empty())
        return located(v->line, v->column, where + "." + key + " is empty");
      *target = v->text;
    }
    if (const JValue *m = item.get("message")) {
      if (m->kind != JValue::String)
        return wrongType(*m, where + ".message", "a string");
      entry.message = m->text;
    }
    if (const JValue *l = item.get("line")) {
      if (!asUnsigned(*l, entry.line))
        return located(l->line, l->column,
                       where + ".line must be a non-negative integer, found " +
                           (l->kind == JValue::Number ? l->text : kindName(l->kind)));
    }
    result.entries.push_back(std::move(entry));
  }
  out = std::move(result);
  return true;
}

unsigned applyBaseline(std::vector<Finding> &findings, const Baseline &baseline) {
  std::map<std::pair<std::string, std::string>, unsigned> remaining;
  for (const BaselineEntry &e : baseline.entries)
    ++remaining[{e.rule, e.fingerprint}];
  unsigned suppressed = 0;
  std::vector<Finding> kept;
  kept.reserve(findings.size());
  for (Finding &f : findings) {
    if (!f.fingerprint.empty()) {
      auto it = remaining.find({f.ruleId, f.fingerprint});
      if (it != remaining.end() && it->second > 0) {
        --it->second;
        ++suppressed;
        continue;
      }
    }
    kept.push_back(std::move(f));
  }
  findings = std::move(kept);
  return suppressed;
}

} // namespace ddplint::cli
