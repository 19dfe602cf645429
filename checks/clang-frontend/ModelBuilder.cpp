#include "clang-frontend/ModelBuilder.h"

#include "clang-frontend/CodeScope.h"
#include "clang-frontend/SafeAst.h"

#include "ddplint/core/ModelIO.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/Mangle.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"

#include <unordered_set>
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <deque>
#include <functional>
#include <set>
#include <unordered_map>

namespace ddplint::clangfe {

using namespace clang;
using core::Node;

struct ModelBuilder::Impl {
  ModelBuilder &self;
  core::Program program;
  bool built = false;
  std::deque<const FunctionDecl *> queue;
  std::set<std::string> queued;
  std::unordered_map<core::Loc, const Stmt *> stmts;
  std::unordered_map<core::Loc, const FunctionDecl *> owners;
  const FunctionDecl *current = nullptr;
  int tryDepth = 0;
  std::map<std::string, const FunctionDecl *> declOf; // the unit's own functions by key
  std::unique_ptr<ASTNameGenerator> namer;
  LinkedCode linked;
  std::vector<std::string> unresolved;
  std::optional<std::shared_ptr<const SummaryIndex>> summaries; // read once, when first needed
  std::string mainPath;

  const SummaryIndex *index() {
    if (!summaries)
      summaries = summariesFor(mainFilePath());
    return summaries->get();
  }

  explicit Impl(ModelBuilder &s) : self(s) {}

  // Which functions a try block of this unit can be on the stack of.  When
  // the unit holds `main`, the whole call chain is here: a throw in a
  // function that no try block reaches is never caught (mscclpp's test
  // drivers throw from CUDATHROW with no handler anywhere).  Without `main`,
  // a caller elsewhere may catch it, and every throw is taken as caught.
  struct Handlers {
    bool hasMain = false;
    bool anyIndirect = false; // a try block reaches a call through a pointer
    std::unordered_set<const FunctionDecl *> reached;
    std::set<std::string> virtualNames; // virtual methods called under a try
    bool catchable(const FunctionDecl *fd) const {
      if (!hasMain || anyIndirect || !fd)
        return true;
      const FunctionDecl *c = fd->getCanonicalDecl();
      if (reached.count(c))
        return true;
      if (const auto *md = dyn_cast<CXXMethodDecl>(fd); md && md->isVirtual() && md->getIdentifier())
        return virtualNames.count(md->getName().str()) > 0;
      return false;
    }
  };
  std::optional<Handlers> handlers_;
  const Handlers &handlers() {
    if (!handlers_)
      handlers_ = scanHandlers();
    return *handlers_;
  }
  Handlers scanHandlers() {
    Handlers h;
    struct Scan : RecursiveASTVisitor<Scan> {
      Impl &I;
      Handlers &h;
      std::vector<const Stmt *> tryBlocks;
      Scan(Impl &i, Handlers &hh) : I(i), h(hh) {}
      bool shouldVisitTemplateInstantiations() const { return true; }
      bool TraverseDecl(Decl *d) {
        if (d && !isa<TranslationUnitDecl>(d) && !I.userCode(d->getLocation()))
          return true;
        return RecursiveASTVisitor::TraverseDecl(d);
      }
      bool VisitFunctionDecl(FunctionDecl *fd) {
        if (fd->isMain() && fd->doesThisDeclarationHaveABody())
          h.hasMain = true;
        return true;
      }
      // `catch (...) { cleanup(); throw; }` hands the exception on: only a
      // handler that can end otherwise catches it.
      static bool rethrows(const CXXCatchStmt *h) {
        const auto *body = dyn_cast_or_null<CompoundStmt>(h->getHandlerBlock());
        if (!body || body->body_empty())
          return false;
        const auto *t = dyn_cast<CXXThrowExpr>(body->body_back());
        return t && !t->getSubExpr();
      }
      bool VisitCXXTryStmt(CXXTryStmt *t) {
        for (unsigned i = 0; i < t->getNumHandlers(); ++i)
          if (!rethrows(t->getHandler(i))) {
            tryBlocks.push_back(t->getTryBlock());
            break;
          }
        return true;
      }
    } scan(*this, h);
    scan.TraverseDecl(ctx().getTranslationUnitDecl());
    // Everything the try blocks call, transitively through this unit's bodies.
    std::vector<const Stmt *> work = scan.tryBlocks;
    auto callee = [&](const FunctionDecl *fd) {
      if (!fd)
        return;
      if (const auto *md = dyn_cast<CXXMethodDecl>(fd); md && md->isVirtual() && md->getIdentifier())
        h.virtualNames.insert(md->getName().str());
      const FunctionDecl *def = nullptr;
      if (fd->hasBody(def) && def && h.reached.insert(def->getCanonicalDecl()).second)
        work.push_back(def->getBody());
      if (const auto *t = fd->getTemplateInstantiationPattern(); t && t->getBody() &&
          h.reached.insert(t->getCanonicalDecl()).second)
        work.push_back(t->getBody());
    };
    while (!work.empty() && h.reached.size() < 100000) {
      const Stmt *s = work.back();
      work.pop_back();
      if (!s)
        continue;
      if (const auto *c = dyn_cast<CallExpr>(s)) {
        if (const FunctionDecl *fd = c->getDirectCallee())
          callee(fd);
        else if (!isa<CXXPseudoDestructorExpr>(c->getCallee()->IgnoreParenImpCasts()))
          h.anyIndirect = true;
      } else if (const auto *ce = dyn_cast<CXXConstructExpr>(s)) {
        callee(ce->getConstructor());
      } else if (const auto *l = dyn_cast<LambdaExpr>(s)) {
        work.push_back(l->getBody());
      }
      for (const Stmt *k : s->children())
        work.push_back(k);
    }
    return h;
  }

  ASTContext &ctx() { return self.ctx_; }
  const ApiMatcher &api() { return self.api_; }
  DependenceAnalyzer &deps() { return *self.deps_; }

  core::Loc loc(SourceLocation l) { return self.locs_.add(l); }

  bool userCode(SourceLocation l) {
    return isUserCode(ctx().getSourceManager(), l);
  }

  // The definition to model for a call, or null for library code.
  const FunctionDecl *definition(const FunctionDecl *fd) {
    if (!fd)
      return nullptr;
    const FunctionDecl *def = nullptr;
    if (!fd->hasBody(def) || !def || !userCode(def->getLocation()) || def->isDependentContext())
      return nullptr;
    return def;
  }

  std::string enqueue(const FunctionDecl *def) {
    std::string key = ModelBuilder::keyOf(def);
    if (queued.insert(key).second)
      queue.push_back(def);
    return key;
  }

  // A function the unit declares and another unit defines: the key its
  // summary is linked by ("ext:" and its symbol), or "" for library code,
  // builtins, templates and virtual calls (the callee is not known here).
  std::string externalKey(const FunctionDecl *fd) {
    if (!fd || fd->isDependentContext() || fd->getBuiltinID() || fd->hasBody() ||
        !userCode(fd->getLocation()) || fd->isDeleted())
      return "";
    if (const auto *md = dyn_cast<CXXMethodDecl>(fd); md && (md->isVirtual() || md->getParent()->isLambda()))
      return "";
    if (!namer)
      namer = std::make_unique<ASTNameGenerator>(ctx());
    std::string symbol = namer->getName(fd);
    return symbol.empty() ? "" : "ext:" + symbol;
  }

  static std::string displayName(const FunctionDecl *fd) {
    if (const auto *md = dyn_cast<CXXMethodDecl>(fd); md && md->getParent()->isLambda())
      return "lambda";
    return fd->getNameAsString();
  }

  // --- expressions: events in evaluation order --------------------------
  void expr(const Expr *e, std::vector<Node> &out) {
    if (!e)
      return;
    e = e->IgnoreParens();
    if (isa<LambdaExpr>(e))
      return; // a lambda body runs when the lambda is called
    if (const auto *co = dyn_cast<AbstractConditionalOperator>(e)) {
      expr(co->getCond(), out);
      core::Cond c = deps().condOf(co->getCond());
      core::Loc l = loc(co->getQuestionLoc());
      std::vector<Node> t, f;
      expr(co->getTrueExpr(), t);
      expr(co->getFalseExpr(), f);
      if (!t.empty() || !f.empty())
        out.push_back(Node::makeIf(std::move(c), Node::block(std::move(t)),
                                   Node::block(std::move(f)), l));
      return;
    }
    if (const auto *b = dyn_cast<BinaryOperator>(e); b && (b->getOpcode() == BO_LAnd || b->getOpcode() == BO_LOr)) {
      expr(b->getLHS(), out);
      std::vector<Node> rhs;
      expr(b->getRHS(), rhs);
      if (!rhs.empty()) {
        core::Cond c = deps().condOf(b->getLHS());
        if (b->getOpcode() == BO_LOr)
          c = core::Cond::negate(c);
        out.push_back(Node::makeIf(c, Node::block(std::move(rhs)), Node::block(), loc(b->getOperatorLoc())));
      }
      return;
    }
    if (const auto *t = dyn_cast<CXXThrowExpr>(e)) {
      expr(t->getSubExpr(), out);
      // Inside a try block the handler catches it: not an exit of the function.
      // One that no handler of the program can catch ends in std::terminate:
      // the process aborts and the launcher tears the job down.
      if (tryDepth == 0)
        out.push_back(Node::makeExit(handlers().catchable(current) ? core::ExitKind::Throw
                                                                   : core::ExitKind::Terminate,
                                     loc(t->getThrowLoc())));
      return;
    }
    // Children first: arguments are evaluated before the call.
    for (const Stmt *child : e->children())
      if (const auto *ce = dyn_cast_or_null<Expr>(child))
        expr(ce, out);
    if (const auto *call = dyn_cast<CallExpr>(e)) {
      // Lambdas handed to another function (parallel_for, for_each) run in it.
      for (const Expr *a : call->arguments())
        if (const auto *l = dyn_cast<LambdaExpr>(a->IgnoreParenImpCasts()))
          if (const FunctionDecl *def = definition(l->getCallOperator()))
            out.push_back(Node::makeCall(enqueue(def), "lambda", loc(l->getBeginLoc())));
      this->call(call, out);
      return;
    }
    if (const auto *ce = dyn_cast<CXXConstructExpr>(e)) {
      CallInfo info = api().classifyConstruct(ce);
      if (info.role == CallRole::FileWrite) {
        Node n = Node::makeEvent(info.log ? core::EventKind::LogWrite : core::EventKind::FileWrite, info.op,
                                 loc(ce->getBeginLoc()));
        n.pathDep = ce->getNumArgs() ? deps().depOf(ce->getArg(0)) : core::Dep::Uniform;
        out.push_back(std::move(n));
        return;
      }
      if (const FunctionDecl *def = definition(ce->getConstructor()))
        out.push_back(Node::makeCall(enqueue(def), displayName(def), loc(ce->getBeginLoc())));
      else if (std::string key = externalKey(ce->getConstructor()); !key.empty())
        out.push_back(Node::makeCall(key, displayName(ce->getConstructor()), loc(ce->getBeginLoc())));
    }
  }

  void call(const CallExpr *c, std::vector<Node> &out) {
    CallInfo info = api().classify(c);
    core::Loc l = loc(c->getExprLoc());
    switch (info.role) {
    case CallRole::Collective:
    case CallRole::Barrier:
      // Which ranks are members of a split communicator is not known here: a
      // collective on one is left out of the comparison (precision first).
      if (deps().onSelfCommunicator(c, current))
        return;
      if (deps().onSubCommunicator(c)) {
        out.push_back(Node::makeEvent(core::EventKind::PointToPoint, info.op, l));
        return;
      }
      out.push_back(Node::makeEvent(info.role == CallRole::Barrier ? core::EventKind::Barrier
                                                                   : core::EventKind::Collective,
                                    info.op, l));
      out.back().group = deps().commGroupOf(c);
      return;
    case CallRole::PointToPoint:
      out.push_back(Node::makeEvent(core::EventKind::PointToPoint, info.op, l));
      return;
    case CallRole::Exit:
      out.push_back(Node::makeExit(core::ExitKind::Terminate, l));
      return;
    case CallRole::CheckpointWrite: {
      if (info.arg < 0 || unsigned(info.arg) >= c->getNumArgs())
        return;
      Node n = Node::makeEvent(core::EventKind::CheckpointWrite, info.op, l);
      n.pathDep = deps().depOf(c->getArg(unsigned(info.arg)));
      out.push_back(std::move(n));
      return;
    }
    case CallRole::FileWrite: {
      Node n = Node::makeEvent(info.log ? core::EventKind::LogWrite : core::EventKind::FileWrite, info.op, l);
      out.push_back(std::move(n));
      return;
    }
    case CallRole::None:
      break;
    default:
      return;
    }
    const FunctionDecl *callee = c->getDirectCallee();
    if (const FunctionDecl *def = definition(callee)) {
      std::string name = displayName(def);
      // A lambda is known by the variable that holds it: `sync()`.
      if (const auto *op = dyn_cast<CXXOperatorCallExpr>(c); op && name == "lambda" && op->getNumArgs())
        name = deps().text(op->getArg(0));
      out.push_back(Node::makeCall(enqueue(def), name, l));
      out.back().group = deps().commGroupOf(c);
    } else if (std::string key = externalKey(callee); !key.empty()) {
      out.push_back(Node::makeCall(key, displayName(callee), l));
      out.back().group = deps().commGroupOf(c);
    }
  }

  // --- statements -----------------------------------------------------------
  Node stmt(const Stmt *s) {
    std::vector<Node> out;
    stmtInto(s, out);
    return Node::block(std::move(out));
  }

  // `rank == A` (a test of this process's rank against a value).
  bool rankEquality(const Expr *e) {
    const auto *b = dyn_cast_or_null<BinaryOperator>(e ? e->IgnoreParenImpCasts() : nullptr);
    return b && b->getOpcode() == BO_EQ && (deps().isRank(b->getLHS()) || deps().isRank(b->getRHS()));
  }
  // The collectives and calls of a branch in order, loops spelled with their
  // trip text; false where it decides anything itself.
  static bool syncSignature(const Node &n, std::string &sig) {
    switch (n.kind) {
    case Node::Kind::Event:
      if (n.event == core::EventKind::Collective || n.event == core::EventKind::Barrier)
        sig += n.name + ";";
      return true;
    case Node::Kind::Call:
      sig += "call " + n.callee + ";";
      return true;
    case Node::Kind::Loop:
      sig += "loop " + n.tripText + "{";
      for (const Node &k : n.kids)
        if (!syncSignature(k, sig))
          return false;
      sig += "}";
      return true;
    case Node::Kind::Block:
      for (const Node &k : n.kids)
        if (!syncSignature(k, sig))
          return false;
      return true;
    default:
      return false;
    }
  }
  // A communicator argument spelled MPI_COMM_WORLD anywhere in the statement.
  bool onWorld(const Stmt *s) {
    if (!s)
      return false;
    if (const auto *c = dyn_cast<CallExpr>(s))
      for (const Expr *a : c->arguments())
        if (deps().isWorldCommunicator(a))
          return true;
    for (const Stmt *k : s->children())
      if (onWorld(k))
        return true;
    return false;
  }
  // IMB's ping-pong: `if (rank == pair0) { barrier; send } else if (rank ==
  // pair1) { barrier; recv }` on the benchmark's two-member communicator.
  // Both roles run the same collectives: the chain names the members, and
  // the rank that is neither is not one (on the world it would be: kept).
  void pairedRoles(const IfStmt *is, const Node &thenB, Node &elseB) {
    const auto *inner = dyn_cast_or_null<IfStmt>(is->getElse());
    if (!inner || inner->getElse() || !rankEquality(is->getCond()) || !rankEquality(inner->getCond()) ||
        elseB.kids.size() != 1 || elseB.kids[0].kind != Node::Kind::If)
      return;
    std::string a, b;
    if (!syncSignature(thenB, a) || !syncSignature(elseB.kids[0].kids[0], b) || a.empty() || a != b ||
        a.find("call ") != std::string::npos || onWorld(is->getThen()) || onWorld(inner->getThen()))
      return;
    Node second = std::move(elseB.kids[0].kids[0]);
    elseB = std::move(second);
  }

  void stmtInto(const Stmt *s, std::vector<Node> &out) {
    if (!s)
      return;
    if (const auto *cs = dyn_cast<CompoundStmt>(s)) {
      for (const Stmt *k : cs->body())
        stmtInto(k, out);
      return;
    }
    if (const auto *is = dyn_cast<IfStmt>(s)) {
      stmtInto(is->getInit(), out);
      if (const auto *dsv = is->getConditionVariableDeclStmt())
        stmtInto(dsv, out);
      expr(is->getCond(), out);
      core::Cond c = is->isConstexpr() ? core::Cond::atom("constexpr", core::Dep::Uniform)
                                       : deps().condOf(is->getCond());
      if (is->isConsteval())
        c = core::Cond::atom("consteval", core::Dep::Uniform);
      core::Loc l = loc(is->getIfLoc());
      stmts[l] = is;
      owners[l] = current;
      // Sequenced on purpose: Loc ids follow source order, and the core uses
      // them to pick the earlier of two collectives.
      Node thenB = stmt(is->getThen());
      Node elseB = stmt(is->getElse());
      pairedRoles(is, thenB, elseB);
      out.push_back(Node::makeIf(std::move(c), std::move(thenB), std::move(elseB), l));
      return;
    }
    if (const auto *fs = dyn_cast<ForStmt>(s)) {
      stmtInto(fs->getInit(), out);
      std::vector<Node> body;
      stmtInto(fs->getBody(), body);
      expr(fs->getInc(), body);
      const Expr *cond = fs->getCond();
      loop(cond, cond ? deps().depOf(cond) : core::Dep::Uniform, std::move(body), fs->getForLoc(), out);
      return;
    }
    if (const auto *ws = dyn_cast<WhileStmt>(s)) {
      std::vector<Node> body;
      expr(ws->getCond(), body);
      stmtInto(ws->getBody(), body);
      loop(ws->getCond(), deps().depOf(ws->getCond()), std::move(body), ws->getWhileLoc(), out);
      return;
    }
    if (const auto *ds = dyn_cast<DoStmt>(s)) {
      // `do { ... } while (0)`, the wrapper of a statement-like macro, runs
      // its body once: it is a block, not a loop (its exits are the function's).
      if (constInt(ds->getCond(), ctx()) == std::optional<std::int64_t>(0) &&
          !breaksOut(ds->getBody())) {
        stmtInto(ds->getBody(), out);
        return;
      }
      std::vector<Node> body;
      stmtInto(ds->getBody(), body);
      expr(ds->getCond(), body);
      loop(ds->getCond(), deps().depOf(ds->getCond()), std::move(body), ds->getDoLoc(), out);
      return;
    }
    if (const auto *rs = dyn_cast<CXXForRangeStmt>(s)) {
      stmtInto(rs->getInit(), out);
      expr(rs->getRangeInit(), out);
      std::vector<Node> body;
      stmtInto(rs->getBody(), body);
      loop(rs->getRangeInit(), deps().depOf(rs->getRangeInit()), std::move(body), rs->getForLoc(), out);
      return;
    }
    if (const auto *sw = dyn_cast<SwitchStmt>(s)) {
      switchInto(sw, out);
      return;
    }
    if (const auto *r = dyn_cast<ReturnStmt>(s)) {
      expr(r->getRetValue(), out);
      out.push_back(Node::makeExit(core::ExitKind::Return, loc(r->getReturnLoc())));
      return;
    }
    if (isa<BreakStmt>(s)) {
      out.push_back(Node::makeExit(core::ExitKind::Break, loc(s->getBeginLoc())));
      return;
    }
    if (isa<ContinueStmt>(s)) {
      out.push_back(Node::makeExit(core::ExitKind::Continue, loc(s->getBeginLoc())));
      return;
    }
    if (const auto *ts = dyn_cast<CXXTryStmt>(s)) {
      // Handlers run on exceptional paths only; the try block is the normal path.
      ++tryDepth;
      stmtInto(ts->getTryBlock(), out);
      --tryDepth;
      return;
    }
    if (const auto *ds = dyn_cast<DeclStmt>(s)) {
      for (const Decl *d : ds->decls())
        if (const auto *v = dyn_cast<VarDecl>(d); v && v->hasInit())
          expr(v->getInit(), out);
      return;
    }
    if (const auto *ls = dyn_cast<LabelStmt>(s)) {
      stmtInto(ls->getSubStmt(), out);
      return;
    }
    if (const auto *as = dyn_cast<AttributedStmt>(s)) {
      stmtInto(as->getSubStmt(), out);
      return;
    }
    if (const auto *e = dyn_cast<Expr>(s)) {
      expr(e, out);
      return;
    }
  }

  // A break or continue that would leave the statement itself (not one of a
  // nested loop or switch).
  static bool breaksOut(const Stmt *s) {
    if (!s)
      return false;
    if (isa<BreakStmt, ContinueStmt>(s))
      return true;
    if (isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt, SwitchStmt, LambdaExpr>(s))
      return false;
    for (const Stmt *k : s->children())
      if (breaksOut(k))
        return true;
    return false;
  }

  void loop(const Expr *cond, core::Dep trip, std::vector<Node> body, SourceLocation kw,
            std::vector<Node> &out) {
    std::string text = cond ? deps().text(cond) : "";
    core::Loc tl = cond ? loc(cond->getBeginLoc()) : 0;
    out.push_back(Node::makeLoop(trip, text, tl, Node::block(std::move(body)), loc(kw)));
  }

  // A switch becomes an if-chain on `subject == case`; a case ends at its break.
  void switchInto(const SwitchStmt *sw, std::vector<Node> &out) {
    stmtInto(sw->getInit(), out);
    expr(sw->getCond(), out);
    const auto *body = dyn_cast_or_null<CompoundStmt>(sw->getBody());
    if (!body)
      return;
    struct Case {
      const Expr *value; // null: default
      std::vector<const Stmt *> stmts;
    };
    std::vector<Case> cases;
    for (const Stmt *k : body->body()) {
      const Stmt *cur = k;
      while (cur) {
        if (const auto *c = dyn_cast<CaseStmt>(cur)) {
          cases.push_back({c->getLHS(), {}});
          cur = c->getSubStmt();
        } else if (const auto *d = dyn_cast<DefaultStmt>(cur)) {
          cases.push_back({nullptr, {}});
          cur = d->getSubStmt();
        } else {
          if (!cases.empty())
            cases.back().stmts.push_back(cur);
          cur = nullptr;
        }
      }
    }
    // Fallthrough: a case without a break runs the next case's statements too.
    auto segment = [&](size_t i) {
      std::vector<Node> nodes;
      for (size_t j = i; j < cases.size(); ++j) {
        bool broke = false;
        for (const Stmt *st : cases[j].stmts) {
          if (isa<BreakStmt>(st)) {
            broke = true;
            break;
          }
          stmtInto(st, nodes);
        }
        if (broke)
          break;
      }
      return Node::block(std::move(nodes));
    };
    const Expr *subject = sw->getCond();
    Node chain = Node::block();
    for (size_t i = 0; i < cases.size(); ++i)
      if (!cases[i].value)
        chain = segment(i);
    for (size_t i = cases.size(); i-- > 0;) {
      if (!cases[i].value)
        continue;
      core::Cond c;
      std::optional<std::int64_t> v = constInt(cases[i].value, ctx());
      if (v && deps().isRank(subject))
        c = core::Cond::rankCmp(core::CmpOp::EQ, *v);
      else
        c = core::Cond::atom("switch:" + deps().text(subject) + "==" + deps().text(cases[i].value),
                             deps().depOf(subject));
      c.text = deps().text(subject) + " == " + deps().text(cases[i].value);
      c.loc = loc(sw->getSwitchLoc());
      Node n = Node::makeIf(std::move(c), segment(i), std::move(chain), loc(sw->getSwitchLoc()));
      chain = Node::block();
      chain.kids.push_back(std::move(n));
    }
    for (auto &k : chain.kids)
      out.push_back(std::move(k));
  }

  void build() {
    if (built)
      return;
    built = true;
    // Roots: functions and lambdas written in the main file.
    struct Roots : RecursiveASTVisitor<Roots> {
      Impl &I;
      explicit Roots(Impl &i) : I(i) {}
      bool shouldVisitTemplateInstantiations() const { return true; }
      bool shouldVisitLambdaBody() const { return true; }
      bool TraverseDecl(Decl *d) {
        if (d && !isa<TranslationUnitDecl>(d)) {
          const SourceManager &sm = I.ctx().getSourceManager();
          SourceLocation l = sm.getExpansionLoc(d->getLocation());
          if (l.isValid() && !isa<NamespaceDecl>(d) && !isa<LinkageSpecDecl>(d) &&
              (analyzeLibraryCode() ? !isUserCode(sm, l) : !sm.isInMainFile(l)))
            return true;
        }
        return RecursiveASTVisitor::TraverseDecl(d);
      }
      bool VisitFunctionDecl(FunctionDecl *fd) {
        if (fd->doesThisDeclarationHaveABody() && !fd->isDependentContext())
          I.enqueue(fd);
        return true;
      }
      // A template declared in a header and defined here: the visitor walks
      // instantiations at the first declaration only, which is the header's,
      // so those made here (explicit `template void f<double>(...)` included)
      // are taken from the definition.
      bool VisitFunctionTemplateDecl(FunctionTemplateDecl *t) {
        if (t->isThisDeclarationADefinition() && t != t->getCanonicalDecl())
          for (FunctionDecl *spec : t->specializations())
            if (spec->doesThisDeclarationHaveABody() && !spec->isDependentContext())
              I.enqueue(spec);
        return true;
      }
      bool VisitLambdaExpr(LambdaExpr *l) {
        if (const FunctionDecl *def = I.definition(l->getCallOperator()))
          I.enqueue(def);
        return true;
      }
    } roots(*this);
    roots.TraverseDecl(ctx().getTranslationUnitDecl());
    program.distributed = deps().distributed() || analyzeLibraryCode();
    while (!queue.empty()) {
      const FunctionDecl *fd = queue.front();
      queue.pop_front();
      current = fd;
      countFunctionAnalysed();
      core::Function f;
      f.key = ModelBuilder::keyOf(fd);
      declOf[f.key] = fd;
      f.name = displayName(fd);
      f.loc = loc(fd->getLocation());
      std::vector<Node> body;
      if (const auto *ctor = dyn_cast<CXXConstructorDecl>(fd))
        for (const CXXCtorInitializer *init : ctor->inits())
          if (init->isWritten())
            expr(init->getInit(), body);
      stmtInto(fd->getBody(), body);
      f.body = Node::block(std::move(body));
      program.functions.push_back(std::move(f));
    }
    current = nullptr;
    linked.ownFunctions = program.functions.size();
    linked.ownDistributed = program.distributed;
    if (!analyzeLibraryCode())
      link();
  }

  // --- other units ------------------------------------------------------------
  const std::string &mainFilePath() {
    if (mainPath.empty()) {
      const SourceManager &sm = ctx().getSourceManager();
      if (OptionalFileEntryRef f = sm.getFileEntryRefForID(sm.getMainFileID()))
        mainPath = realPath(*f);
    }
    return mainPath;
  }

  static std::string realPath(FileEntryRef f) {
    llvm::StringRef real = f.getFileEntry().tryGetRealPathName();
    if (!real.empty())
      return real.str();
    llvm::SmallString<256> p(f.getName());
    if (llvm::sys::fs::make_absolute(p))
      return std::string(f.getName()); // no working folder: the name as Clang has it
    llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
    return std::string(p);
  }

  static void callsIn(const Node &n, const std::function<void(const Node &)> &f) {
    if (n.kind == Node::Kind::Call)
      f(n);
    for (const Node &k : n.kids)
      callsIn(k, f);
  }

  // Adds the functions of other units that the unit's own functions call
  // (and theirs), from the summaries of the database's units.
  void link() {
    // The symbols called, in the unit's order, with the first call of each.
    std::vector<std::pair<std::string, Node const *>> wanted;
    std::set<std::string> seen;
    for (size_t i = 0; i < linked.ownFunctions; ++i)
      callsIn(program.functions[i].body, [&](const Node &c) {
        if (llvm::StringRef(c.callee).starts_with("ext:") && seen.insert(c.callee).second)
          wanted.emplace_back(c.callee, &c);
      });
    if (wanted.empty())
      return;
    const std::string thisUnit = mainFilePath();
    const SummaryIndex *index = this->index();
    std::map<std::pair<const SummaryIndex::Unit *, std::string>, std::string> keyIn; // (unit, its key) -> ours
    std::deque<std::pair<const SummaryIndex::Unit *, std::string>> todo;
    std::set<std::string> linkedKeys, refused;
    auto keyFor = [&](const SummaryIndex::Unit *u, const std::string &k) {
      auto it = keyIn.find({u, k});
      if (it != keyIn.end())
        return it->second;
      std::string ours = "xu" + std::to_string(reinterpret_cast<std::uintptr_t>(u)) + ":" + k;
      for (const ExportedFunction &e : u->summary.exports)
        if (e.key == k)
          ours = "ext:" + e.symbol;
      keyIn[{u, k}] = ours;
      todo.emplace_back(u, k);
      return ours;
    };
    // Only what can matter at a call is linked: a function that
    // communicates, writes, exits or throws, itself or through its callees.
    // The rest of a large project (geometry, parsing, physics) stays out.
    std::map<std::pair<const SummaryIndex::Unit *, std::string>, int> relevance; // 1 yes, 0 no, -1 visiting
    std::function<bool(const SummaryIndex::Unit *, const std::string &, int)> relevant =
        [&](const SummaryIndex::Unit *u, const std::string &k, int depth) -> bool {
      auto [it, fresh] = relevance.emplace(std::make_pair(u, k), -1);
      if (!fresh)
        return it->second == 1;
      const core::Function *fn = nullptr;
      for (const core::Function &f : u->summary.functions)
        if (f.key == k)
          fn = &f;
      bool yes = false;
      std::function<void(const Node &)> scan = [&](const Node &n) {
        if (yes)
          return;
        if (n.kind == Node::Kind::Event ||
            (n.kind == Node::Kind::Exit &&
             (n.exit == core::ExitKind::Terminate || n.exit == core::ExitKind::Throw))) {
          yes = true;
          return;
        }
        if (n.kind == Node::Kind::Call && depth < 32) {
          if (llvm::StringRef(n.callee).starts_with("ext:")) {
            std::optional<SummaryIndex::Hit> h = index ? index->find(n.callee.substr(4), thisUnit)
                                                       : std::nullopt;
            yes = !h || h->unit->stale || relevant(h->unit, h->function->key, depth + 1);
          } else {
            yes = relevant(u, n.callee, depth + 1);
          }
        }
        for (const Node &kid : n.kids)
          scan(kid);
      };
      if (fn)
        scan(fn->body);
      relevance[{u, k}] = yes ? 1 : 0;
      return yes;
    };

    // A symbol: the function of the unit that exports it, or why not.
    auto resolve = [&](const std::string &extKey, const Node *firstCall) {
      const std::string symbol = extKey.substr(4);
      std::optional<SummaryIndex::Hit> hit = index ? index->find(symbol, thisUnit) : std::nullopt;
      if (!hit) {
        unresolved.push_back(symbol);
        return;
      }
      if (hit->unit->stale) {
        unresolved.push_back(symbol);
        if (firstCall && refused.insert(hit->unit->summary.unit).second) {
          core::AnalysisNotice n;
          n.loc = firstCall->loc;
          n.function = hit->function->name;
          n.message = std::string(core::kAnalysisLimitPrefix) + core::quoteCode(hit->function->name) +
                      " is defined in " + hit->unit->summary.unit +
                      ", whose stored summary is out of date (" + hit->unit->staleWhy +
                      "); calls into that file are not followed until ddplint lints the whole "
                      "compilation database again";
          linked.notices.push_back(std::move(n));
        }
        return;
      }
      if (relevant(hit->unit, hit->function->key, 0))
        keyFor(hit->unit, hit->function->key);
    };
    for (const auto &[k, call] : wanted)
      resolve(k, call);
    bool capped = false;
    while (!todo.empty()) {
      auto [u, k] = todo.front();
      todo.pop_front();
      const std::string ours = keyIn[{u, k}];
      if (!linkedKeys.insert(ours).second)
        continue;
      const core::Function *src = nullptr;
      for (const core::Function &f : u->summary.functions)
        if (f.key == k)
          src = &f;
      if (!src)
        continue;
      if (program.functions.size() - linked.ownFunctions >= ModelBuilder::kMaxLinkedFunctions) {
        capped = true;
        break;
      }
      core::Function f = *src;
      f.key = ours;
      LinkedCode::Range r;
      r.first = 0;
      core::remapLocs(f, [&](core::Loc place) -> core::Loc {
        if (place > u->summary.places.size())
          return 0;
        const core::Loc l = self.locs_.addExternal(u->summary.places[place - 1]);
        if (!r.first)
          r.first = l;
        r.last = l;
        return l;
      });
      std::function<void(Node &)> rekey = [&](Node &n) {
        if (n.kind == Node::Kind::Call) {
          if (llvm::StringRef(n.callee).starts_with("ext:")) {
            if (!linkedKeys.count(n.callee) && !seen.count(n.callee)) {
              seen.insert(n.callee);
              resolve(n.callee, nullptr);
            }
          } else {
            n.callee = relevant(u, n.callee, 0) ? keyFor(u, n.callee) : std::string();
          }
        }
        for (Node &kid : n.kids)
          rekey(kid);
      };
      rekey(f.body);
      r.key = f.key;
      r.name = f.name;
      r.unit = u->summary.unit;
      if (r.first)
        linked.ranges.push_back(r);
      program.distributed = program.distributed || u->summary.distributed;
      program.functions.push_back(std::move(f));
    }
    if (capped) {
      core::AnalysisNotice n;
      n.loc = wanted.front().second->loc;
      n.message = std::string(core::kAnalysisLimitPrefix) + "this unit reaches more than " +
                  std::to_string(ModelBuilder::kMaxLinkedFunctions) +
                  " functions of other translation units; the others are not followed";
      linked.notices.push_back(std::move(n));
    }
    // Which of the unit's calls first reaches each linked function.
    for (size_t i = 0; i < linked.ownFunctions; ++i)
      callsIn(program.functions[i].body, [&](const Node &c) {
        if (!linkedKeys.count(c.callee))
          return;
        std::deque<std::string> q{c.callee};
        while (!q.empty()) {
          std::string k = q.front();
          q.pop_front();
          if (!linked.entry.emplace(k, c.loc).second)
            continue;
          if (const core::Function *f = program.find(k))
            callsIn(f->body, [&](const Node &cc) {
              if (linkedKeys.count(cc.callee))
                q.push_back(cc.callee);
            });
        }
      });
  }
};

ModelBuilder::ModelBuilder(ASTContext &ctx, const ApiMatcher &api)
    : ctx_(ctx), api_(api), deps_(std::make_unique<DependenceAnalyzer>(ctx, api, locs_)),
      impl_(std::make_unique<Impl>(*this)) {
  if (!analyzeLibraryCode()) {
    deps_->setExternalReturns([this](const FunctionDecl *fd) -> const ExportedFunction * {
      const std::string key = impl_->externalKey(fd);
      if (key.empty())
        return nullptr;
      const SummaryIndex *index = impl_->index();
      std::optional<SummaryIndex::Hit> hit =
          index ? index->find(key.substr(4), impl_->mainFilePath()) : std::nullopt;
      return hit && !hit->unit->stale ? hit->function : nullptr;
    });
    deps_->setExternalRankGlobal([this](const VarDecl *v) {
      const SummaryIndex *index = impl_->index();
      if (!index)
        return false;
      if (!impl_->namer)
        impl_->namer = std::make_unique<ASTNameGenerator>(ctx_);
      const std::string symbol = impl_->namer->getName(v);
      if (symbol.empty())
        return false;
      if (index->rankGlobal(symbol, impl_->mainFilePath()))
        return true;
      // Not known yet: linted again once this run's summaries know it.
      const std::string wanted = kRankGlobalPrefix + symbol;
      if (std::find(impl_->unresolved.begin(), impl_->unresolved.end(), wanted) == impl_->unresolved.end())
        impl_->unresolved.push_back(wanted);
      return false;
    });
  }
}

ModelBuilder::~ModelBuilder() = default;

const core::Program &ModelBuilder::program() {
  impl_->build();
  return impl_->program;
}

const Stmt *ModelBuilder::stmtOf(const core::Node *n) const {
  if (!n)
    return nullptr;
  auto it = impl_->stmts.find(n->loc);
  return it == impl_->stmts.end() ? nullptr : it->second;
}

const FunctionDecl *ModelBuilder::functionOf(const core::Node *n) const {
  if (!n)
    return nullptr;
  auto it = impl_->owners.find(n->loc);
  return it == impl_->owners.end() ? nullptr : it->second;
}

const LinkedCode &ModelBuilder::linked() {
  impl_->build();
  return impl_->linked;
}

const LinkedCode::Range *LinkedCode::rangeOf(core::Loc l) const {
  for (const Range &r : ranges)
    if (l >= r.first && l <= r.last)
      return &r;
  return nullptr;
}

namespace {
// The return statements of a body, not those of lambdas inside it.
void returnsIn(const Stmt *s, std::vector<const ReturnStmt *> &out) {
  if (!s || isa<LambdaExpr>(s))
    return;
  if (const auto *r = dyn_cast<ReturnStmt>(s))
    out.push_back(r);
  for (const Stmt *k : s->children())
    returnsIn(k, out);
}
} // namespace

UnitSummary ModelBuilder::summary() {
  impl_->build();
  UnitSummary s;
  const SourceManager &sm = ctx_.getSourceManager();
  s.unit = impl_->mainFilePath();
  s.configKey = summaryConfigKey(api_.user());
  s.distributed = impl_->linked.ownDistributed;
  s.unresolved = impl_->unresolved;
  std::map<core::Loc, std::uint32_t> placeOf;
  std::map<FileID, std::string> pathOf;
  auto fileOf = [&](FileID fid) -> std::string {
    auto it = pathOf.find(fid);
    if (it != pathOf.end())
      return it->second;
    std::string p;
    if (OptionalFileEntryRef f = sm.getFileEntryRefForID(fid))
      p = Impl::realPath(*f);
    return pathOf[fid] = p;
  };
  auto place = [&](core::Loc l) -> core::Loc {
    auto it = placeOf.find(l);
    if (it != placeOf.end())
      return it->second;
    SourceLocation sl = locs_.get(l);
    std::uint32_t n = 0;
    if (sl.isValid()) {
      SourceLocation e = sm.getExpansionLoc(sl);
      const std::string file = fileOf(sm.getFileID(e));
      if (!file.empty()) {
        s.places.push_back({file, sm.getExpansionLineNumber(e), sm.getExpansionColumnNumber(e)});
        n = std::uint32_t(s.places.size());
      }
    }
    return placeOf[l] = n;
  };
  for (size_t i = 0; i < impl_->linked.ownFunctions; ++i) {
    core::Function f = impl_->program.functions[i];
    core::remapLocs(f, place);
    s.functions.push_back(std::move(f));
    const core::Function &own = impl_->program.functions[i];
    auto d = impl_->declOf.find(own.key);
    if (d == impl_->declOf.end())
      continue;
    const FunctionDecl *fd = d->second;
    if (!fd->isExternallyVisible() || !sm.isInMainFile(sm.getExpansionLoc(fd->getLocation())))
      continue;
    if (const auto *md = dyn_cast<CXXMethodDecl>(fd); md && md->getParent()->isLambda())
      continue;
    if (!impl_->namer)
      impl_->namer = std::make_unique<ASTNameGenerator>(ctx_);
    ExportedFunction e;
    e.symbol = impl_->namer->getName(fd);
    if (e.symbol.empty())
      continue;
    e.key = own.key;
    e.name = own.name;
    std::vector<const ReturnStmt *> rets;
    returnsIn(fd->getBody(), rets);
    if (rets.size() == 1 && rets[0]->getRetValue() && fd->getNumParams() == 0) {
      const Expr *v = rets[0]->getRetValue();
      e.returnsRank = deps_->isRank(v);
      core::Cond c = deps_->condOf(v);
      if (c.kind == core::Cond::Kind::RankCmp || c.kind == core::Cond::Kind::Not ||
          c.kind == core::Cond::Kind::And || c.kind == core::Cond::Kind::Or) {
        core::remapLocs(c, [](core::Loc) { return core::Loc(0); });
        if (c.dependence() != core::Dep::Uniform)
          e.predicate = std::move(c);
      }
    }
    s.exports.push_back(std::move(e));
  }
  if (!impl_->namer)
    impl_->namer = std::make_unique<ASTNameGenerator>(ctx_);
  for (const VarDecl *v : deps_->rankGlobals())
    if (std::string symbol = impl_->namer->getName(v); !symbol.empty() &&
        std::find(s.rankGlobals.begin(), s.rankGlobals.end(), symbol) == s.rankGlobals.end())
      s.rankGlobals.push_back(std::move(symbol));
  // What the summary was made from: the unit and every file its code is in.
  std::set<std::string> files{s.unit};
  for (const auto &p : s.places)
    files.insert(p.file);
  for (const std::string &f : files) {
    if (f.empty())
      continue;
    auto buf = llvm::MemoryBuffer::getFile(f, /*IsText=*/false);
    llvm::sys::fs::file_status st;
    if (!buf || llvm::sys::fs::status(f, st))
      continue;
    SummaryInput in;
    in.path = f;
    in.size = st.getSize();
    in.mtime = std::chrono::duration_cast<std::chrono::seconds>(
                   st.getLastModificationTime().time_since_epoch())
                   .count();
    in.hash = contentHash((*buf)->getBuffer().str());
    s.inputs.push_back(std::move(in));
  }
  return s;
}

std::string ModelBuilder::keyOf(const FunctionDecl *fd) {
  return fd->getNameAsString() + "@" +
         std::to_string(reinterpret_cast<std::uintptr_t>(fd->getCanonicalDecl()));
}

} // namespace ddplint::clangfe
