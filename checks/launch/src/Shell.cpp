// Slurm batch scripts and shell launch scripts.  A small POSIX-shell lexer
// (quotes, escapes, $(...), ${...}, backticks, comments, line continuations,
// here-documents) feeds a straight-line walk over the simple commands: the
// environment each launch command gets is the exports and assignments above it
// plus its own prefix, env(1) arguments and srun/mpirun options.  Branches and
// functions are walked in text order; an assignment anywhere above counts.
#include "Internal.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <cctype>
#include <optional>
#include <set>
#include <sstream>

namespace ddplint::launch::detail {
namespace {

struct CharInfo {
  unsigned line = 0, col = 0;
  bool quoted = false, expanded = false;
};

struct Word {
  std::string text;           // quotes removed, expansions kept verbatim
  std::vector<CharInfo> info; // one per char of text
  std::string raw;
  unsigned line = 0, col = 0;

  bool expandedIn(size_t from, size_t to = std::string::npos) const {
    for (size_t i = from; i < info.size() && i < to; ++i)
      if (info[i].expanded)
        return true;
    return false;
  }
};

enum class Tok { Word, Sep, Redirect };

struct Token {
  Tok kind = Tok::Word;
  Word word;
  std::string op;
  int heredoc = -1; // for `<<`: the index of its body in Lexer::bodies
};

bool isOpChar(char c) {
  return c == ';' || c == '&' || c == '|' || c == '(' || c == ')' || c == '<' || c == '>';
}
bool isBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool isNameStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool isNameChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Lexer {
public:
  explicit Lexer(const std::string &s, unsigned firstLine = 1) : s_(s), line_(firstLine) {}

  // The here-documents' bodies, in the order of their `<<` redirections.
  struct Body {
    std::string text;
    unsigned firstLine = 0;
  };
  std::vector<Body> bodies;

  std::vector<Token> run() {
    while (i_ < s_.size()) {
      char c = s_[i_];
      if (isBlank(c)) {
        adv();
      } else if (c == '\\' && peek(1) == '\n') {
        adv();
        adv();
      } else if (c == '#') {
        while (i_ < s_.size() && s_[i_] != '\n')
          adv();
      } else if (c == '\n') {
        sep("\n");
        adv();
        skipHeredocBodies();
      } else if (isOpChar(c)) {
        op();
      } else {
        word();
      }
    }
    return std::move(out_);
  }

  // Where the first unterminated quote starts (line 0 if none).
  unsigned badLine = 0, badCol = 0;

private:
  const std::string &s_;
  size_t i_ = 0;
  unsigned line_ = 1, col_ = 1;
  int heredocsSeen_ = 0;
  std::vector<Token> out_;
  std::vector<std::pair<std::string, bool>> heredocs_; // delimiter, strip tabs
  int heredocDelimNext_ = -1;                          // -1 none, 0 <<, 1 <<-

  char peek(size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }
  void adv() {
    if (s_[i_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++i_;
  }
  void sep(const std::string &op) {
    Token t;
    t.kind = Tok::Sep;
    t.op = op;
    out_.push_back(std::move(t));
  }
  void redirect(const std::string &op) {
    Token t;
    t.kind = Tok::Redirect;
    t.op = op;
    if (op == "<<")
      t.heredoc = heredocsSeen_++;
    out_.push_back(std::move(t));
  }
  void unterminated(unsigned l, unsigned c) {
    if (!badLine) {
      badLine = l;
      badCol = c;
    }
  }

  void op() {
    char c = peek(), d = peek(1);
    auto take = [&](int n) {
      for (int k = 0; k < n; ++k)
        adv();
    };
    if (c == ';') {
      take(d == ';' || d == '&' ? 2 : 1);
      sep(";");
    } else if (c == '&') {
      if (d == '&') {
        take(2);
        sep("&&");
      } else if (d == '>') {
        take(peek(2) == '>' ? 3 : 2);
        redirect("&>");
      } else {
        take(1);
        sep("&");
      }
    } else if (c == '|') {
      take(d == '|' || d == '&' ? 2 : 1);
      sep("|");
    } else if (c == '(' || c == ')') {
      take(1);
      sep(std::string(1, c));
    } else if (c == '<') {
      if (d == '<' && peek(2) == '<') {
        take(3);
        redirect("<<<");
      } else if (d == '<') {
        bool strip = peek(2) == '-';
        take(strip ? 3 : 2);
        heredocDelimNext_ = strip ? 1 : 0;
        redirect("<<");
      } else {
        take(d == '&' || d == '>' ? 2 : 1);
        redirect("<");
      }
    } else { // '>'
      take(d == '>' || d == '&' || d == '|' ? 2 : 1);
      redirect(">");
    }
  }

  void push(Word &w, char c, bool quoted, bool expanded) {
    w.text += c;
    w.info.push_back({line_, col_, quoted, expanded});
  }

  // Copies a balanced $( ... ) / ${ ... } verbatim as an expansion.
  void balanced(Word &w, char open, char close) {
    int depth = 0;
    while (i_ < s_.size()) {
      char c = peek();
      if (c == '\\' && i_ + 1 < s_.size()) {
        push(w, c, true, true);
        adv();
        push(w, peek(), true, true);
        adv();
        continue;
      }
      if (c == '\'' || (c == '"' && open == '(')) {
        char q = c;
        push(w, c, true, true);
        adv();
        while (i_ < s_.size() && peek() != q) {
          if (q == '"' && peek() == '\\' && i_ + 1 < s_.size()) {
            push(w, peek(), true, true);
            adv();
          }
          push(w, peek(), true, true);
          adv();
        }
        if (i_ < s_.size()) {
          push(w, peek(), true, true);
          adv();
        }
        continue;
      }
      push(w, c, true, true);
      adv();
      if (c == open)
        ++depth;
      else if (c == close && --depth == 0)
        return;
    }
  }

  void dollar(Word &w, bool inDouble) {
    char d = peek(1);
    if (d == '(' || d == '{') {
      push(w, '$', true, true);
      adv();
      balanced(w, d, d == '(' ? ')' : '}');
    } else if (d == '\'' && !inDouble) { // $'...': ANSI-C quoting
      unsigned l = line_, c = col_;
      adv();
      adv();
      while (i_ < s_.size() && peek() != '\'') {
        if (peek() == '\\' && i_ + 1 < s_.size())
          adv();
        push(w, peek(), true, false);
        adv();
      }
      if (i_ < s_.size())
        adv();
      else
        unterminated(l, c);
    } else if (d == '"' && !inDouble) { // $"...": a locale string, quoted like "..."
      adv();
    } else if (isNameStart(d)) {
      push(w, '$', true, true);
      adv();
      while (i_ < s_.size() && isNameChar(peek())) {
        push(w, peek(), true, true);
        adv();
      }
    } else if (std::isdigit(static_cast<unsigned char>(d)) ||
               (d && std::string("@*#?$!-").find(d) != std::string::npos)) {
      push(w, '$', true, true);
      adv();
      push(w, peek(), true, true);
      adv();
    } else {
      push(w, '$', inDouble, false);
      adv();
    }
  }

  void backtick(Word &w) {
    unsigned l = line_, c = col_;
    push(w, '`', true, true);
    adv();
    while (i_ < s_.size() && peek() != '`') {
      if (peek() == '\\' && i_ + 1 < s_.size()) {
        push(w, peek(), true, true);
        adv();
      }
      push(w, peek(), true, true);
      adv();
    }
    if (i_ < s_.size()) {
      push(w, '`', true, true);
      adv();
    } else {
      unterminated(l, c);
    }
  }

  void word() {
    Word w;
    w.line = line_;
    w.col = col_;
    size_t start = i_;
    while (i_ < s_.size()) {
      char c = peek();
      if (isBlank(c) || c == '\n' || isOpChar(c))
        break;
      if (c == '\\') {
        adv();
        if (i_ < s_.size()) {
          if (peek() != '\n')
            push(w, peek(), true, false);
          adv();
        }
      } else if (c == '\'') {
        unsigned l = line_, cc = col_;
        adv();
        while (i_ < s_.size() && peek() != '\'') {
          push(w, peek(), true, false);
          adv();
        }
        if (i_ < s_.size())
          adv();
        else
          unterminated(l, cc);
      } else if (c == '"') {
        unsigned l = line_, cc = col_;
        adv();
        while (i_ < s_.size() && peek() != '"') {
          char e = peek();
          if (e == '\\' && std::string("$`\"\\\n").find(peek(1)) != std::string::npos &&
              i_ + 1 < s_.size()) {
            adv();
            if (peek() != '\n')
              push(w, peek(), true, false);
            adv();
          } else if (e == '$') {
            dollar(w, true);
          } else if (e == '`') {
            backtick(w);
          } else {
            push(w, e, true, false);
            adv();
          }
        }
        if (i_ < s_.size())
          adv();
        else
          unterminated(l, cc);
      } else if (c == '$') {
        dollar(w, false);
      } else if (c == '`') {
        backtick(w);
      } else {
        push(w, c, false, false);
        adv();
      }
    }
    w.raw = s_.substr(start, i_ - start);
    // `2>file`: the digits name a file descriptor, not a word.
    if ((peek() == '<' || peek() == '>') && !w.text.empty() &&
        std::all_of(w.raw.begin(), w.raw.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return;
    if (heredocDelimNext_ >= 0) {
      heredocs_.emplace_back(w.text, heredocDelimNext_ == 1);
      heredocDelimNext_ = -1;
    }
    Token t;
    t.kind = Tok::Word;
    t.word = std::move(w);
    out_.push_back(std::move(t));
  }

  // The lines after the command line that opened the here-documents are data.
  void skipHeredocBodies() {
    for (const auto &[delim, strip] : heredocs_) {
      Body body;
      body.firstLine = line_;
      while (i_ < s_.size()) {
        size_t end = s_.find('\n', i_);
        std::string line = s_.substr(i_, end == std::string::npos ? std::string::npos : end - i_);
        if (!line.empty() && line.back() == '\r')
          line.pop_back();
        while (i_ < s_.size() && s_[i_] != '\n')
          adv();
        if (i_ < s_.size())
          adv();
        if (strip)
          line.erase(0, line.find_first_not_of('\t') == std::string::npos
                            ? line.size()
                            : line.find_first_not_of('\t'));
        if (line == delim)
          break;
        body.text += line + "\n";
      }
      bodies.push_back(std::move(body));
    }
    heredocs_.clear();
  }
};

std::string basename(const std::string &p) {
  size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// NAME=value with NAME written literally.  `plainOnly`: the prefix of a
// command, where a quoted NAME makes the word the command itself.
std::optional<size_t> assignmentEq(const Word &w, bool plainOnly) {
  const std::string &t = w.text;
  if (t.empty() || !isNameStart(t[0]))
    return std::nullopt;
  size_t k = 1;
  while (k < t.size() && isNameChar(t[k]))
    ++k;
  if (k >= t.size() || t[k] != '=')
    return std::nullopt;
  for (size_t j = 0; j <= k; ++j)
    if (w.info[j].expanded || (plainOnly && w.info[j].quoted))
      return std::nullopt;
  return k;
}

Setting settingOf(const Word &w, size_t nameAt, size_t eq, size_t valueEnd = std::string::npos) {
  Setting st;
  size_t end = std::min(valueEnd, w.text.size());
  st.value = w.text.substr(eq + 1, end - eq - 1);
  st.known = !w.expandedIn(eq + 1, end);
  st.line = w.info[nameAt].line;
  st.column = w.info[nameAt].col;
  return st;
}

bool isPython(const std::string &cmd) {
  if (cmd.rfind("python", 0) != 0)
    return false;
  return std::all_of(cmd.begin() + 6, cmd.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
  });
}

// Programs that srun/mpirun run which are not a training job.
bool isUtility(const std::string &cmd) {
  static const std::set<std::string> u = {
      "hostname", "nvidia-smi", "echo",   "printf", "mkdir", "rm",     "cp",       "mv",
      "ls",       "cat",        "true",   "false",  "sleep", "date",   "touch",    "df",
      "du",       "free",       "uname",  "id",     "whoami", "pwd",   "test",     "which",
      "tar",      "rsync",      "ln",     "chmod",  "chown", "nproc",  "lscpu",    "ibstat",
      "ibv_devinfo", "scontrol", "sinfo", "squeue", "printenv", "head", "tail",    "grep",
      "wc",       "find",       "sync",   "pip",    "pip3",  "module", "nvcc",     "env"};
  return u.count(cmd) > 0;
}

class ShellChecker {
public:
  ShellChecker(const Options &opts, Sink &sink) : opts_(opts), sink_(sink), watched_(watchedNames(opts)) {}

  // sbatch reads #SBATCH lines up to the first command; --export there sets
  // the batch job's environment.
  void sbatchHeader(const std::string &text) {
    std::istringstream in(text);
    std::string line;
    unsigned n = 0;
    while (std::getline(in, line)) {
      ++n;
      size_t b = line.find_first_not_of(" \t\r");
      if (b == std::string::npos)
        continue;
      if (line[b] != '#')
        break;
      if (line.compare(0, 7, "#SBATCH") != 0)
        continue;
      size_t opt = line.find("--export", 7);
      if (opt == std::string::npos)
        continue;
      size_t v = opt + 8;
      if (v < line.size() && (line[v] == '=' || line[v] == ' '))
        ++v;
      else
        continue;
      if (v < line.size() && (line[v] == '"' || line[v] == '\''))
        ++v;
      size_t end = line.find_first_of(" \t\r\"'", v);
      std::string spec = line.substr(v, end == std::string::npos ? std::string::npos : end - v);
      size_t pos = 0;
      while (pos <= spec.size()) {
        size_t comma = spec.find(',', pos);
        std::string item = spec.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        size_t eq = item.find('=');
        std::string name = item.substr(0, eq);
        if (!name.empty() && name != "ALL" && name != "NONE" && name != "NIL") {
          Setting st;
          st.line = n;
          st.column = static_cast<unsigned>(v + pos + 1);
          if (eq == std::string::npos)
            st.known = false; // passed on from the submitting shell
          else
            st.value = item.substr(eq + 1);
          vars_[name] = st;
        }
        if (comma == std::string::npos)
          break;
        pos = comma + 1;
      }
    }
  }

  void run(const std::vector<Token> &toks, const std::vector<Lexer::Body> &bodies) {
    std::vector<const Word *> words;
    std::vector<int> heredocs;
    bool skipNext = false;
    auto flush = [&] {
      command(words);
      // `sbatch <<EOF ... EOF` (or bash/sh reading a script from a
      // here-document): the body is the script that runs.
      if (!heredocs.empty() && !words.empty()) {
        const std::string cmd = basename(words.front()->text);
        if (cmd == "sbatch" || cmd == "bash" || cmd == "sh" || cmd == "srun")
          for (int h : heredocs)
            if (h >= 0 && static_cast<size_t>(h) < bodies.size() && depth_ < kMaxDepth) {
              ++depth_;
              Lexer inner(bodies[h].text, bodies[h].firstLine);
              std::vector<Token> innerToks = inner.run();
              run(innerToks, inner.bodies);
              --depth_;
            }
      }
      words.clear();
      heredocs.clear();
      skipNext = false;
    };
    for (const Token &t : toks) {
      if (t.kind == Tok::Word) {
        if (skipNext)
          skipNext = false;
        else
          words.push_back(&t.word);
      } else if (t.kind == Tok::Redirect) {
        skipNext = true;
        if (t.heredoc >= 0)
          heredocs.push_back(t.heredoc);
      } else {
        flush();
      }
    }
    flush();
  }

  void finish() {
    if (launches_ == 0 && sourceDepth_ == 0)
      sink_.skip(0, 0, "the file",
                 "no launch command (torchrun, python -m torch.distributed.run, accelerate "
                 "launch, deepspeed, srun or mpirun running a program)");
  }

  // A sourced file: its assignments count, its commands launch nothing here.
  ShellChecker(const Options &opts, Sink &sink, std::string file, int sourceDepth, Env *vars)
      : opts_(opts), sink_(sink), watched_(watchedNames(opts)), shared_(vars),
        file_(std::move(file)), sourceDepth_(sourceDepth) {}
  void setFile(std::string file) { file_ = std::move(file); }

private:
  static constexpr int kMaxDepth = 3;
  const Options &opts_;
  Sink &sink_;
  std::vector<std::string> watched_;
  Env ownVars_;
  Env *shared_ = nullptr; // a sourced file writes into its parent's variables
  Env &vars_ = shared_ ? *shared_ : ownVars_;
  bool sourced_ = false;
  std::set<std::pair<Var, Level>> missingReported_; // once per file and level
  std::string file_;     // the script, for resolving sourced files
  int sourceDepth_ = 0;  // > 0 in a sourced file
  int depth_ = 0;        // nesting of here-documents and launcher variables
  int launches_ = 0;

  // `source X` / `. X`: read X when it is a file of the repository (next to
  // the script or under one of its parent folders up to the git root), else
  // say so: the file may set the variables.
  void source(const std::vector<const Word *> &w, size_t k) {
    if (k + 1 >= w.size())
      return;
    const Word &arg = *w[k + 1];
    namespace fs = std::filesystem;
    const fs::path scriptDir = fs::path(file_).parent_path();
    std::string path;
    bool resolved = true;
    // $(dirname $0), ${BASH_SOURCE%/*}, $SCRIPT_DIR=$(cd $(dirname $0); pwd): the script's folder.
    auto scriptDirExpansion = [](const std::string &t) {
      return (t.find("dirname") != std::string::npos &&
              (t.find("$0") != std::string::npos || t.find("BASH_SOURCE") != std::string::npos)) ||
             t.find("${BASH_SOURCE%/*}") != std::string::npos ||
             t.find("${0%/*}") != std::string::npos;
    };
    const std::string &t = arg.text;
    for (size_t i = 0; i < t.size();) {
      if (!arg.info[i].expanded) {
        path += t[i++];
        continue;
      }
      size_t j = i;
      while (j < t.size() && arg.info[j].expanded)
        ++j;
      // One expansion may be followed directly by another; split at each '$'.
      size_t next = t.find('$', i + 1);
      if (next != std::string::npos && next < j && t[i] == '$' && t[i + 1] != '(')
        j = next;
      const std::string ex = t.substr(i, j - i);
      if (scriptDirExpansion(ex)) {
        path += scriptDir.string();
      } else {
        std::string name = ex.substr(ex[1] == '{' ? 2 : 1);
        if (!name.empty() && name.back() == '}')
          name.pop_back();
        auto it = vars_.find(name);
        if (it != vars_.end() && it->second.known)
          path += it->second.value;
        else if (it != vars_.end() && scriptDirExpansion(it->second.value))
          path += scriptDir.string();
        else
          resolved = false;
      }
      i = j;
    }
    fs::path found;
    std::error_code ec;
    if (resolved && !path.empty()) {
      fs::path p(path);
      if (p.is_absolute()) {
        if (fs::is_regular_file(p, ec))
          found = p;
      } else {
        for (fs::path d = scriptDir.empty() ? fs::path(".") : scriptDir;; d = d.parent_path()) {
          if (fs::is_regular_file(d / p, ec)) {
            found = d / p;
            break;
          }
          if (fs::exists(d / ".git", ec) || d == d.parent_path() || d.empty())
            break;
        }
      }
    }
    if (found.empty() || sourceDepth_ >= kMaxDepth) {
      sourced_ = true;
      const std::string why = found.empty() ? (resolved ? "not found in the repository"
                                                        : "its path is computed at run time")
                                            : "sourced files nest too deep";
      sink_.add(arg.line, arg.col, "source",
                "not checked: sources " + arg.raw + " (" + why +
                    "), which may set the variables; nothing is reported missing after it",
                Level::Policy);
      sink_.skip(arg.line, arg.col, "source " + arg.raw, why, /*visible=*/true);
      return;
    }
    std::ifstream in(found, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string body = text.str(); // the lexer keeps a reference
    Lexer lexer(body);
    std::vector<Token> toks = lexer.run();
    Sink scratch(found.string()); // findings in the sourced file belong to that file
    ShellChecker inner(opts_, scratch, found.string(), sourceDepth_ + 1, &vars_);
    inner.run(toks, lexer.bodies);
    sourced_ |= inner.sourced_;
    sink_.skip(arg.line, arg.col, "source " + arg.raw,
               "followed: " + found.lexically_normal().string());
  }

  struct Launch {
    std::string label;
    bool inheritAll = true;      // false: srun --export without ALL
    std::set<std::string> pass;  // with inheritAll false: the names passed on
    Env set;                     // --export NAME=v, mpirun -x NAME=v, env NAME=v inside
    bool single = false;         // one task: not a distributed launch by itself
    size_t program = 0;          // index of the program srun/mpirun runs
  };

  static bool reserved(const std::string &w) {
    static const std::set<std::string> r = {"if", "then", "else", "elif", "fi", "do", "done",
                                            "while", "until", "!", "{", "}", "esac", "in"};
    return r.count(w) > 0;
  }

  void defaults(const Word &w) {
    // ${NAME:=value} / ${NAME=value} assign when the variable is unset.
    for (const std::string &name : watched_)
      if ((w.raw.find("${" + name + ":=") != std::string::npos ||
           w.raw.find("${" + name + "=") != std::string::npos) &&
          !vars_.count(name)) {
        Setting st;
        st.known = false;
        vars_[name] = st;
      }
  }

  void command(const std::vector<const Word *> &w) {
    for (const Word *x : w)
      defaults(*x);
    size_t k = 0, n = w.size();
    while (k < n && reserved(w[k]->text))
      ++k;
    if (k < n && (w[k]->text == "for" || w[k]->text == "case" || w[k]->text == "select" ||
                  w[k]->text == "function"))
      return;
    Env prefix;
    for (; k < n; ++k) {
      auto eq = assignmentEq(*w[k], true);
      if (!eq)
        break;
      prefix[w[k]->text.substr(0, *eq)] = settingOf(*w[k], 0, *eq);
    }
    if (k == n) {
      for (auto &kv : prefix)
        vars_[kv.first] = kv.second;
      return;
    }
    Env envArgs;
    bool envClear = false;
    k = wrappers(w, k, envArgs, envClear);
    if (k >= n)
      return;
    if (w[k]->expandedIn(0, 1) && depth_ < kMaxDepth) {
      // $LAUNCHER $CMD, with LAUNCHER="python -u -m torch.distributed.run ...":
      // the command is the assigned value's words, then the rest.
      const std::string &t = w[k]->text;
      std::string name = t.size() > 1 ? t.substr(t[1] == '{' ? 2 : 1) : "";
      if (!name.empty() && name.back() == '}')
        name.pop_back();
      auto it = vars_.find(name);
      if (std::all_of(name.begin(), name.end(), isNameChar) && it != vars_.end() &&
          !it->second.value.empty() && it->second.value[0] != '$') {
        Lexer lexer(it->second.value, w[k]->line);
        std::vector<Token> toks = lexer.run();
        std::vector<const Word *> expanded(w.begin(), w.begin() + static_cast<long>(k));
        for (const Token &tok : toks)
          if (tok.kind == Tok::Word)
            expanded.push_back(&tok.word);
        // Positions: the expansion's words report where $LAUNCHER is written.
        std::vector<Word> placed;
        placed.reserve(expanded.size());
        for (size_t j = k; j < expanded.size(); ++j) {
          Word copy = *expanded[j];
          copy.line = w[k]->line;
          copy.col = w[k]->col;
          placed.push_back(std::move(copy));
        }
        std::vector<const Word *> all(w.begin(), w.begin() + static_cast<long>(k));
        for (const Word &pw : placed)
          all.push_back(&pw);
        all.insert(all.end(), w.begin() + static_cast<long>(k) + 1, w.end());
        ++depth_;
        command(all);
        --depth_;
        return;
      }
    }
    if (w[k]->expandedIn(0, 1) && !(k + 1 < n && (w[k + 1]->text == "-m" || w[k + 1]->text == "-u")))
      return; // "$PYTHON_BIN" -m ... is classified as python below
    const std::string cmd = basename(w[k]->text);
    if (cmd == "export" || cmd == "declare" || cmd == "typeset" || cmd == "local" ||
        cmd == "readonly") {
      declaration(w, k + 1, cmd == "export");
      return;
    }
    if (cmd == "unset") {
      for (size_t j = k + 1; j < n; ++j)
        if (w[j]->text == "-f")
          return;
        else if (w[j]->text[0] != '-')
          vars_.erase(w[j]->text);
      return;
    }
    if (cmd == "source" || cmd == ".") {
      source(w, k);
      return;
    }
    std::optional<Launch> launch = classify(w, k);
    if (!launch)
      return;
    if (sourceDepth_ > 0)
      return; // a launch in a sourced file is that file's finding
    ++launches_;

    Env eff = envClear ? Env() : vars_;
    if (!envClear)
      for (auto &kv : prefix)
        eff[kv.first] = kv.second;
    for (auto &kv : envArgs)
      eff[kv.first] = kv.second;
    if (!launch->inheritAll) {
      Env passed;
      for (const auto &name : launch->pass)
        if (eff.count(name))
          passed[name] = eff[name];
      eff = passed;
    }
    for (auto &kv : launch->set)
      eff[kv.first] = kv.second;
    // A `bash -c '...'` or a config argument may set it in a way we do not parse.
    for (size_t j = k + 1; j < n; ++j)
      for (const std::string &name : watched_)
        if (mentions(w[j]->text, name, "=") && !eff.count(name)) {
          Setting st;
          st.known = false;
          st.report = false;
          eff[name] = st;
        }

    Subject s;
    {
      std::string line;
      for (size_t j = k; j < n; ++j)
        line += w[j]->text + " ";
      if (const core::LauncherExport *l = launcherIn(line))
        s.launcherId = l->id;
      s.command = line;
    }
    s.name = "the " + launch->label + " at line " + std::to_string(w[k]->line);
    s.context = "for " + s.name;
    s.missingVerb = " runs without";
    s.line = w[k]->line;
    s.column = w[k]->col;
    s.mayInherit = sourced_ && launch->inheritAll && !envClear;
    if (launch->inheritAll)
      s.fix = [](const std::string &name, const std::string &value) {
        return "export " + name + "=" + value + " before it";
      };
    else
      s.fix = [](const std::string &name, const std::string &value) {
        return "add " + name + "=" + value + " to its --export list (--export=ALL," + name + "=" +
               value + ")";
      };
    evaluate(eff, s, opts_, sink_,
             [&](Var v, Level l) { return missingReported_.insert({v, l}).second; });
  }

  // exec/nohup/time/nice/timeout/stdbuf/command and env(1) in front of a command.
  size_t wrappers(const std::vector<const Word *> &w, size_t k, Env &envArgs, bool &envClear) {
    const size_t n = w.size();
    while (k < n) {
      const std::string cmd = basename(w[k]->text);
      auto options = [&](std::initializer_list<const char *> withValue) {
        ++k;
        while (k < n && w[k]->text.size() > 1 && w[k]->text[0] == '-') {
          bool takes = false;
          for (const char *o : withValue)
            takes |= w[k]->text == o;
          k += takes ? 2 : 1;
        }
      };
      if (cmd == "exec" || cmd == "nohup" || cmd == "command" || cmd == "builtin") {
        options({"-a"});
      } else if ((cmd == "uv" || cmd == "poetry" || cmd == "pipenv" || cmd == "pixi" ||
                  cmd == "conda" || cmd == "micromamba" || cmd == "mamba") &&
                 k + 1 < n && w[k + 1]->text == "run") {
        ++k; // `uv run [--with X] python -m ...`: the program follows its options
        options({"--with", "--python", "-p", "--project", "--directory", "--env-file", "-n",
                 "--name", "--prefix", "--group", "--extra", "--package", "-e"});
      } else if (cmd == "time") {
        options({});
      } else if (cmd == "nice") {
        options({"-n"});
      } else if (cmd == "stdbuf") {
        options({"-i", "-o", "-e"});
      } else if (cmd == "timeout") {
        options({"-s", "-k"});
        ++k; // the duration
      } else if (cmd == "env") {
        ++k;
        while (k < n) {
          const std::string &t = w[k]->text;
          if (t == "-i" || t == "-" || t == "--ignore-environment") {
            envClear = true;
            ++k;
          } else if (t == "-u" || t == "--unset") {
            if (k + 1 < n)
              envArgs.erase(w[k + 1]->text);
            k += 2;
          } else if (t == "--") {
            ++k;
          } else if (t.size() > 1 && t[0] == '-') {
            ++k;
          } else if (auto eq = assignmentEq(*w[k], false)) {
            envArgs[t.substr(0, *eq)] = settingOf(*w[k], 0, *eq);
            ++k;
          } else {
            break;
          }
        }
      } else {
        break;
      }
    }
    return k;
  }

  void declaration(const std::vector<const Word *> &w, size_t k, bool isExport) {
    bool exported = isExport, unexport = false;
    for (; k < w.size(); ++k) {
      const std::string &t = w[k]->text;
      if (t.size() > 1 && t[0] == '-') {
        if (t.find('f') != std::string::npos)
          return; // functions, not variables
        exported |= t.find('x') != std::string::npos;
        unexport |= isExport && t.find('n') != std::string::npos;
        continue;
      }
      if (auto eq = assignmentEq(*w[k], false)) {
        vars_[t.substr(0, *eq)] = settingOf(*w[k], 0, *eq);
      } else if (!t.empty() && std::all_of(t.begin(), t.end(), isNameChar)) {
        if (unexport)
          vars_.erase(t);
        else if (exported && !vars_.count(t)) {
          // `export NAME` passes on a value from the environment the script runs in.
          Setting st;
          st.known = false;
          st.line = w[k]->line;
          st.column = w[k]->col;
          vars_[t] = st;
        }
      }
    }
  }

  // srun --export=SPEC (or SLURM_EXPORT_ENV): ALL, NONE, NAME, NAME=value.
  void exportSpec(const Word &w, size_t from, Launch &l) {
    l.inheritAll = false;
    size_t pos = from;
    while (pos <= w.text.size()) {
      size_t comma = w.text.find(',', pos);
      size_t end = comma == std::string::npos ? w.text.size() : comma;
      std::string item = w.text.substr(pos, end - pos);
      size_t eq = item.find('=');
      if (item == "ALL") {
        l.inheritAll = true;
      } else if (eq != std::string::npos && eq > 0) {
        l.set[item.substr(0, eq)] = settingOf(w, pos, pos + eq, end);
      } else if (!item.empty() && item != "NONE" && item != "NIL") {
        l.pass.insert(item);
      }
      if (comma == std::string::npos)
        break;
      pos = comma + 1;
    }
  }

  bool programIsLauncher(const std::vector<const Word *> &w, size_t k) {
    if (k >= w.size())
      return false;
    std::optional<Launch> l = classify(w, k);
    return l && l->label != "srun" && l->label.rfind("mpi", 0) != 0;
  }

  std::optional<Launch> classify(const std::vector<const Word *> &w, size_t k) {
    const size_t n = w.size();
    const std::string cmd = basename(w[k]->text);
    Launch l;
    l.label = cmd;
    if (cmd == "torchrun" || cmd == "deepspeed")
      return l;
    if (cmd == "accelerate") {
      if (k + 1 >= n || w[k + 1]->text != "launch")
        return std::nullopt;
      l.label = "accelerate launch";
      return l;
    }
    if (isPython(cmd) || (w[k]->expandedIn(0, 1) && k + 1 < n &&
                          (w[k + 1]->text == "-m" || w[k + 1]->text == "-u"))) {
      for (size_t j = k + 1; j < n && w[j]->text.size() > 1 && w[j]->text[0] == '-'; ++j) {
        const std::string &t = w[j]->text;
        std::string module;
        if (t == "-m" && j + 1 < n)
          module = w[j + 1]->text;
        else if (t.rfind("-m", 0) == 0)
          module = t.substr(2);
        else if (t == "-c")
          return std::nullopt;
        else if (t == "-X" || t == "-W")
          ++j;
        if (!module.empty()) {
          static const std::set<std::string> launchers = {
              "torch.distributed.run", "torch.distributed.launch", "accelerate.commands.launch",
              "deepspeed.launcher.runner", "deepspeed.launcher.launch"};
          if (!launchers.count(module))
            return std::nullopt;
          l.label = "python -m " + module;
          return l;
        }
      }
      return std::nullopt;
    }
    size_t j = k + 1;
    if (cmd == "srun") {
      static const std::string shortWithValue = "AbcdDeiJLmMnNopqrStTwWxCGB";
      static const std::set<std::string> longWithValue = {
          "account", "begin", "cpus-per-task", "dependency", "chdir", "error", "input",
          "job-name", "licenses", "distribution", "mem", "mem-per-cpu", "mem-per-gpu", "ntasks",
          "nodes", "output", "partition", "qos", "relative", "time", "nodelist", "exclude",
          "constraint", "gres", "gpus", "gpus-per-node", "gpus-per-task", "ntasks-per-node",
          "cpu-bind", "mpi", "export", "container-image", "container-mounts", "container-workdir",
          "container-name", "threads", "wait", "reservation", "network", "cpus-per-gpu",
          "mem-bind", "gpu-bind", "cpu-freq", "jobid", "het-group", "label"};
      bool sawExport = false;
      for (; j < n; ++j) {
        const std::string &t = w[j]->text;
        if (t.rfind("--", 0) == 0 && t.size() > 2) {
          size_t eq = t.find('=');
          std::string name = t.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
          const Word *vw = w[j];
          size_t from = eq + 1;
          if (eq == std::string::npos) {
            if (!longWithValue.count(name) || name == "label")
              continue;
            if (++j >= n)
              break;
            vw = w[j];
            from = 0;
          }
          if (name == "export") {
            sawExport = true;
            exportSpec(*vw, from, l);
          } else if (name == "ntasks" && vw->text.substr(from) == "1") {
            l.single = true;
          }
        } else if (t.size() > 1 && t[0] == '-') {
          if (shortWithValue.find(t[1]) != std::string::npos) {
            std::string value = t.size() > 2 ? t.substr(2) : (j + 1 < n ? w[++j]->text : "");
            if (t[1] == 'n' && value == "1")
              l.single = true;
          }
        } else {
          break;
        }
      }
      if (!sawExport) {
        auto it = vars_.find("SLURM_EXPORT_ENV"); // srun's default for --export
        if (it != vars_.end() && it->second.known) {
          Word fake;
          fake.text = it->second.value;
          fake.info.assign(fake.text.size(), {it->second.line, it->second.column, false, false});
          exportSpec(fake, 0, l);
        }
      }
    } else if (cmd == "mpirun" || cmd == "mpiexec" || cmd == "orterun" || cmd == "prterun" ||
               cmd == "mpiexec.hydra") {
      static const std::set<std::string> withValue = {
          "-np", "-n", "-c", "--np", "-N", "-npernode", "--npernode", "-ppn", "-H", "--host",
          "-host", "-hosts", "-hostfile", "--hostfile", "-machinefile", "--machinefile", "-f",
          "--map-by", "-map-by", "--bind-to", "-bind-to", "--rank-by", "-wdir", "--wdir", "-wd",
          "--prefix", "-output-filename", "--output-filename", "-iface"};
      for (; j < n; ++j) {
        const std::string &t = w[j]->text;
        if (t == "-x" && j + 1 < n) {
          if (auto eq = assignmentEq(*w[j + 1], false))
            l.set[w[j + 1]->text.substr(0, *eq)] = settingOf(*w[j + 1], 0, *eq);
          ++j;
        } else if ((t == "-genv" || t == "-env") && j + 1 < n) {
          if (auto eq = assignmentEq(*w[j + 1], false)) {
            l.set[w[j + 1]->text.substr(0, *eq)] = settingOf(*w[j + 1], 0, *eq);
            ++j;
          } else if (j + 2 < n) {
            Setting st;
            st.value = w[j + 2]->text;
            st.known = !w[j + 2]->expandedIn(0);
            st.line = w[j + 1]->line;
            st.column = w[j + 1]->col;
            l.set[w[j + 1]->text] = st;
            j += 2;
          }
        } else if (t == "-mca" || t == "--mca" || t == "-gmca" || t == "--gmca") {
          j += 2;
        } else if (withValue.count(t)) {
          if ((t == "-np" || t == "-n" || t == "-c" || t == "--np") && j + 1 < n &&
              w[j + 1]->text == "1")
            l.single = true;
          ++j;
        } else if (t.size() > 1 && t[0] == '-') {
          continue;
        } else {
          break;
        }
      }
    } else {
      return std::nullopt;
    }
    // The program srun/mpirun starts, after env(1) and wrappers.
    bool clear = false;
    Env inner;
    j = wrappers(w, j, inner, clear);
    if (j >= n)
      return std::nullopt;
    for (auto &kv : inner)
      l.set[kv.first] = kv.second;
    if (clear) {
      l.inheritAll = false;
      l.pass.clear();
    }
    const std::string prog = basename(w[j]->text);
    if (isUtility(prog) || (l.single && !programIsLauncher(w, j)))
      return std::nullopt;
    l.program = j;
    return l;
  }
};

} // namespace

void checkShell(const std::string &text, bool slurm, const Options &opts, Sink &sink,
                std::vector<Error> &errors) {
  ShellChecker checker(opts, sink);
  checker.setFile(sink.file());
  if (slurm)
    checker.sbatchHeader(text);
  Lexer lexer(text);
  std::vector<Token> toks = lexer.run();
  checker.run(toks, lexer.bodies);
  checker.finish();
  if (lexer.badLine)
    errors.push_back({sink.file(), lexer.badLine, lexer.badCol,
                      "unterminated quote: the shell would reject this script; the commands "
                      "after it were not checked"});
}

} // namespace ddplint::launch::detail
