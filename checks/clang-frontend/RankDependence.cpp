#include "clang-frontend/RankDependence.h"

#include "ddplint/core/Catalog.h"

#include "clang-frontend/CodeScope.h"
#include "clang-frontend/SafeAst.h"

#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMap.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include <set>
#include <unordered_map>
#include <unordered_set>

namespace ddplint::clangfe {

using namespace clang;
using core::Cond;
using core::Dep;

core::Loc LocTable::add(SourceLocation l) {
  locs_.push_back(l);
  return core::Loc(locs_.size());
}

core::Loc LocTable::addExternal(core::ExternalPlace p) {
  locs_.emplace_back();
  const core::Loc l = core::Loc(locs_.size());
  external_.emplace(l, std::move(p));
  return l;
}

const core::ExternalPlace *LocTable::external(core::Loc l) const {
  auto it = external_.find(l);
  return it == external_.end() ? nullptr : &it->second;
}

SourceLocation LocTable::get(core::Loc l) const {
  return l == 0 || l > locs_.size() ? SourceLocation() : locs_[l - 1];
}

namespace {

// Arguments that were written, ignoring trailing defaulted ones (allocators).
unsigned writtenArgs(const CXXConstructExpr *c) {
  unsigned n = c->getNumArgs();
  while (n > 0 && isa<CXXDefaultArgExpr>(c->getArg(n - 1)))
    --n;
  return n;
}

const Expr *strip(const Expr *e) {
  while (e) {
    const Expr *n = e->IgnoreParenImpCasts();
    if (const auto *c = dyn_cast<ExprWithCleanups>(n))
      n = c->getSubExpr();
    else if (const auto *m = dyn_cast<MaterializeTemporaryExpr>(n))
      n = m->getSubExpr();
    else if (const auto *b = dyn_cast<CXXBindTemporaryExpr>(n))
      n = b->getSubExpr();
    else if (const auto *f = dyn_cast<CXXFunctionalCastExpr>(n))
      n = f->getSubExpr();
    else if (const auto *s = dyn_cast<CXXStaticCastExpr>(n))
      n = s->getSubExpr();
    else if (const auto *cs = dyn_cast<CStyleCastExpr>(n))
      n = cs->getSubExpr();
    else if (const auto *ce = dyn_cast<CXXConstructExpr>(n);
             ce && writtenArgs(ce) == 1 && ce->getConstructor() &&
             (ce->getConstructor()->isCopyOrMoveConstructor() || ce->getConstructor()->isConvertingConstructor(false)) &&
             !isa<CXXTemporaryObjectExpr>(ce))
      n = ce->getArg(0);
    if (n == e)
      return e;
    e = n;
  }
  return e;
}

bool rankLikeName(llvm::StringRef n) {
  static const char *names[] = {"rank",      "global_rank", "world_rank", "local_rank",
                                "my_rank",   "rank_id",     "node_rank",  "proc_rank",
                                "process_rank", "grank",    "lrank",      "localRank",
                                "globalRank", "worldRank",  "myRank"};
  for (const char *c : names)
    if (n == c)
      return true;
  return false;
}

bool isStoiLike(const std::string &q) {
  static const char *names[] = {"std::stoi", "std::stol", "std::stoll", "std::stoul", "atoi",
                                "std::atoi", "atol",      "std::atol",  "strtol",     "std::strtol",
                                "strtoul",   "std::strtoul", "std::stoull", "atoll", "std::atoll"};
  for (const char *c : names)
    if (q == c)
      return true;
  return false;
}

} // namespace

struct DependenceAnalyzer::Impl {
  ASTContext &ctx;
  const ApiMatcher &api;
  LocTable &locs;
  ExternalReturns external;
  ExternalRankGlobal externalRankGlobal;
  // A global of the program this unit declares but never writes, which
  // another unit's summary says holds the rank.
  bool rankFromElsewhere(const ValueDecl *d) {
    const auto *v = dyn_cast<VarDecl>(d);
    return v && externalRankGlobal && v->hasGlobalStorage() && !v->isStaticLocal() &&
           v->hasExternalFormalLinkage() && !outRole.count(d) && realDefs(d).empty() &&
           externalRankGlobal(v);
  }
  // A helper of another unit, through its summary.
  const ExportedFunction *externalOf(const CallExpr *c) {
    const FunctionDecl *fd = c->getDirectCallee();
    if (!fd || !external || fd->hasBody() || isa<CXXOperatorCallExpr>(c))
      return nullptr;
    return external(fd);
  }
  std::unordered_map<const Decl *, std::vector<const Expr *>> defs;
  std::unordered_map<const Decl *, Dep> outRole; // written through &x by a rank/world source
  // Passed as the rank of a communicator's creation (`ncclCommInitRank(&c, n,
  // id, r)`): whatever `r` was read from (argv, a launcher variable, a file),
  // it is this process's rank.
  std::unordered_set<const Decl *> rankSinks;
  std::unordered_set<const Decl *> worldSizeOut;   // written through &x by MPI_Comm_size & co.
  // Communicators that hold a subset of the ranks (MPI_Comm_split & co.):
  // a collective on one is run only by its members, by design.
  std::unordered_set<const Decl *> subComms;
  // A value the root packs into a broadcast's buffer at index k and the
  // others unpack at the same k (from their own buffer or the same one) is
  // every rank's (bcastAgreed).
  std::map<const Decl *, std::set<std::pair<const Decl *, std::int64_t>>> packed, unpacked;
  std::unordered_set<const Decl *> broadcastBuffers;
  bool bcastAgreed(const Decl *v) const {
    auto p = packed.find(v), u = unpacked.find(v);
    if (p == packed.end() || u == unpacked.end())
      return false;
    for (const auto &[sent, k] : p->second)
      for (const auto &[got, j] : u->second)
        if (k == j && broadcastBuffers.count(sent) && broadcastBuffers.count(got))
          return true;
    return false;
  }
  // File handles a function opens on MPI_COMM_SELF, or on another communicator.
  std::set<std::pair<const Decl *, const Decl *>> selfFiles, sharedFiles;
  // Loop counters `for (p = 0; p < BOUND; ++p)`: the counter and its bound.
  std::unordered_map<const Decl *, const Expr *> loopCounters;
  // A counter of a `for` whose body never writes it (`for (i = 0; i < n; ++i)`):
  // inside that loop its value is the iteration number, the same on every rank
  // in the same iteration, whatever else the variable holds elsewhere in the
  // function (C code reuses `i` for a rank-local count two loops later).
  struct CounterScope {
    SourceRange range; // the condition to the end of the body
    const Expr *init;  // the value it starts from
  };
  std::unordered_map<const Decl *, std::vector<CounterScope>> counterScopes;

  // The counter scope `use` of `d` lies in, or null.
  const CounterScope *counterScopeAt(const ValueDecl *d, SourceLocation use) {
    auto it = counterScopes.find(d->getCanonicalDecl());
    if (it == counterScopes.end() || use.isInvalid())
      return nullptr;
    const SourceManager &sm = ctx.getSourceManager();
    SourceLocation u = sm.getExpansionLoc(use);
    const CounterScope *inner = nullptr;
    for (const CounterScope &c : it->second)
      if (!sm.isBeforeInTranslationUnit(u, c.range.getBegin()) &&
          !sm.isBeforeInTranslationUnit(c.range.getEnd(), u))
        inner = &c;
    return inner;
  }
  // Where a collective makes a value the same on every rank: from the end of
  // the statement that issues it to the end of the block that holds it (the
  // paths that pass through the call), and only for the collective's agreed
  // outputs (rules/api.yaml collective_buffers).  A send buffer is never
  // agreed, nor a value before the call.
  struct Agreement {
    SourceLocation after;       // the issuing statement's end (expansion location)
    SourceRange region;         // the block the agreement holds in
  };
  std::unordered_map<const Decl *, std::vector<Agreement>> agreements;
  std::unordered_map<const Stmt *, std::unique_ptr<ParentMap>> parentMaps;
  std::unordered_map<const Decl *, std::vector<const Expr *>> returns;
  std::unordered_map<const Decl *, int> callSites;
  std::unordered_set<const Decl *> distributedFns;
  std::unordered_map<const Decl *, Dep> seeds;
  std::unordered_map<const Decl *, Dep> declMemo;
  std::unordered_set<const Decl *> declBusy;
  std::unordered_map<const Decl *, bool> rankMemo;
  std::unordered_set<const Decl *> rankBusy;
  std::vector<const Expr *> empty;
  int condDepth = 0;
  // Helper calls whose parameters stand for the caller's arguments while a
  // condition is read through them (`is_main_process(rank)`).
  std::unordered_map<const Decl *, const Expr *> bindings;
  int bindDepth = 0;
  // The branch and loop conditions a definition sits under: a value assigned
  // only where `rank == 0` holds is as rank-dependent as the condition.
  std::unordered_map<const Decl *, std::vector<const Expr *>> controlDeps;
  bool distributed = false; // the user's code shows that it runs distributed

  Impl(ASTContext &c, const ApiMatcher &a, LocTable &l) : ctx(c), api(a), locs(l) { index(); }

  bool inUserCode(SourceLocation l) const {
    return isUserCode(ctx.getSourceManager(), l);
  }

  void addDef(const ValueDecl *d, const Expr *e) {
    if (d && e)
      defs[d->getCanonicalDecl()].push_back(e);
  }

  static const ValueDecl *declOf(const Expr *e) {
    e = strip(e);
    if (const auto *dr = dyn_cast_or_null<DeclRefExpr>(e))
      return dr->getDecl();
    if (const auto *me = dyn_cast_or_null<MemberExpr>(e))
      return me->getMemberDecl();
    return nullptr;
  }

  ParentMap &parentsOf(const Stmt *body) {
    auto &pm = parentMaps[body];
    if (!pm)
      pm = std::make_unique<ParentMap>(const_cast<Stmt *>(body));
    return *pm;
  }

  // The region where a statement `s` inside `body` has run on every path
  // that gets there: after its enclosing statement, to the end of the nearest
  // block, unless a branch, a loop body or a short-circuit lies between them
  // (then it ran on some paths only, and nothing is agreed).  The
  // `do { ... } while (0)` of a check macro is transparent.
  bool regionOf(const Stmt *s, const Stmt *body, Agreement &out) {
    if (!s || !body)
      return false;
    ParentMap &pm = parentsOf(body);
    const SourceManager &sm = ctx.getSourceManager();
    const Stmt *child = s;
    for (const Stmt *p = pm.getParent(child); p; child = p, p = pm.getParent(p)) {
      if (const auto *cs = dyn_cast<CompoundStmt>(p)) {
        const auto *d = dyn_cast_or_null<DoStmt>(pm.getParent(cs));
        if (d && constInt(d->getCond(), ctx) == std::optional<std::int64_t>(0))
          continue;
        out.after = sm.getExpansionRange(child->getEndLoc()).getEnd();
        out.region = SourceRange(sm.getExpansionLoc(cs->getBeginLoc()),
                                 sm.getExpansionRange(cs->getEndLoc()).getEnd());
        return out.after.isValid() && out.region.isValid();
      }
      if (const auto *i = dyn_cast<IfStmt>(p)) {
        if (child == i->getThen() || child == i->getElse())
          return false;
      } else if (const auto *f = dyn_cast<ForStmt>(p)) {
        if (child != f->getInit())
          return false;
      } else if (const auto *w = dyn_cast<WhileStmt>(p)) {
        if (child == w->getBody())
          return false;
      } else if (const auto *r = dyn_cast<CXXForRangeStmt>(p)) {
        if (child == r->getBody())
          return false;
      } else if (isa<SwitchCase, CXXCatchStmt, LambdaExpr, CoroutineBodyStmt>(p)) {
        return false;
      } else if (const auto *sw = dyn_cast<SwitchStmt>(p)) {
        if (child == sw->getBody())
          return false;
      } else if (const auto *co = dyn_cast<AbstractConditionalOperator>(p)) {
        if (child != co->getCond())
          return false;
      } else if (const auto *b = dyn_cast<BinaryOperator>(p)) {
        if (b->isLogicalOp() && child == b->getRHS())
          return false;
      }
    }
    return false;
  }

  // --- the one assignment a use of a reused local sees ---------------------
  // C code reuses a scalar local for unrelated values (miniAMR's move_blocks:
  // `k = n;` before the allreduce of a do-while, then `for (k = fcase+6; ...)`
  // further down).  Joining every assignment in the function gives the use in
  // `while (n && k != n)` the later, rank-local ones, which cannot reach it.
  // Where one assignment `v = e;` reaches the use on every path and no other
  // write can, the use is worth `e`: the assignment is a statement of a block
  // that holds the use, or of the body of the do-while whose condition holds
  // it, and nothing between them (nor the statement around the use, for the
  // loops in it) writes `v` or can be jumped into.  Only scalar locals whose
  // address is never taken nor bound to a reference.
  static const Expr *assignedBy(const Stmt *s, const Decl *v) {
    const auto *e = dyn_cast_or_null<Expr>(s);
    const auto *b = e ? dyn_cast<BinaryOperator>(strip(e)) : nullptr;
    if (!b || b->getOpcode() != BO_Assign)
      return nullptr;
    const ValueDecl *l = declOf(b->getLHS());
    return l && l->getCanonicalDecl() == v ? b->getRHS() : nullptr;
  }
  // Holds a label or a case a jump could enter by.
  static bool jumpTarget(const Stmt *s) {
    if (!s)
      return false;
    if (isa<LabelStmt, SwitchCase>(s))
      return true;
    for (const Stmt *k : s->children())
      if (jumpTarget(k))
        return true;
    return false;
  }
  // A continue of the loop whose body `s` is (it skips to the condition).
  static bool continues(const Stmt *s) {
    if (!s || isa<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt, LambdaExpr>(s))
      return false;
    if (isa<ContinueStmt>(s))
      return true;
    for (const Stmt *k : s->children())
      if (continues(k))
        return true;
    return false;
  }
  // Every mention of `v` in `body` reads it or assigns it by name.
  std::unordered_map<const Decl *, bool> escapeMemo;
  bool escapes(const Stmt *body, const Decl *v) {
    if (auto m = escapeMemo.find(v); m != escapeMemo.end())
      return m->second;
    ParentMap &pm = parentsOf(body);
    std::function<bool(const Stmt *)> walk = [&](const Stmt *s) -> bool {
      if (!s)
        return false;
      if (const auto *dr = dyn_cast<DeclRefExpr>(s); dr && dr->getDecl()->getCanonicalDecl() == v) {
        if (dr->refersToEnclosingVariableOrCapture())
          return true;
        const Stmt *child = dr, *p = pm.getParent(dr);
        while (p && isa<ParenExpr>(p))
          child = p, p = pm.getParent(p);
        if (const auto *c = dyn_cast_or_null<ImplicitCastExpr>(p); c && c->getCastKind() == CK_LValueToRValue)
          return false;
        if (const auto *b = dyn_cast_or_null<BinaryOperator>(p); b && b->isAssignmentOp() && b->getLHS() == child)
          return false;
        if (const auto *u = dyn_cast_or_null<UnaryOperator>(p); u && u->isIncrementDecrementOp())
          return false;
        return true;
      }
      for (const Stmt *k : s->children())
        if (walk(k))
          return true;
      return false;
    };
    const bool r = walk(body);
    escapeMemo[v] = r;
    return r;
  }
  const Expr *reachingDef(const DeclRefExpr *use) {
    const auto *v = dyn_cast<VarDecl>(use->getDecl());
    if (!v || isa<ParmVarDecl>(v) || !v->hasLocalStorage() || !v->getType()->isScalarType() ||
        use->refersToEnclosingVariableOrCapture())
      return nullptr;
    const Decl *key = v->getCanonicalDecl();
    if (seeds.count(key) || rankSinks.count(key) || outRole.count(key) || bcastAgreed(key))
      return nullptr;
    const auto *fn = dyn_cast_or_null<FunctionDecl>(v->getDeclContext());
    const Stmt *body = fn ? fn->getBody() : nullptr;
    if (!body || escapes(body, key))
      return nullptr;
    ParentMap &pm = parentsOf(body);
    // The statements before the use in `stmts`, nearest first: the assignment,
    // or null where another write or a jump target comes first.
    auto scan = [&](llvm::ArrayRef<const Stmt *> stmts, bool &stop) -> const Expr * {
      for (auto it = stmts.rbegin(); it != stmts.rend(); ++it) {
        if (const Expr *rhs = assignedBy(*it, key))
          return rhs;
        if (Indexer::writes(*it, key) || jumpTarget(*it)) {
          stop = true;
          return nullptr;
        }
      }
      return nullptr;
    };
    const Stmt *child = use;
    for (const Stmt *p = pm.getParent(child); p; child = p, p = pm.getParent(p)) {
      bool stop = false;
      if (const auto *cs = dyn_cast<CompoundStmt>(p)) {
        std::vector<const Stmt *> before;
        for (const Stmt *s : cs->body()) {
          if (s == child)
            break;
          before.push_back(s);
        }
        const Expr *rhs = scan(before, stop);
        if (rhs)
          return Indexer::writes(child, key) || jumpTarget(child) ? nullptr : rhs;
      } else if (const auto *d = dyn_cast<DoStmt>(p); d && child == d->getCond()) {
        // The body ran to its end before the condition, unless it continued.
        if (Indexer::writes(d->getCond(), key) || continues(d->getBody()))
          return nullptr;
        std::vector<const Stmt *> stmts;
        if (const auto *b = dyn_cast<CompoundStmt>(d->getBody()))
          stmts.assign(b->body_begin(), b->body_end());
        else
          stmts.push_back(d->getBody());
        if (const Expr *rhs = scan(stmts, stop))
          return rhs;
      } else if (isa<LambdaExpr, BlockExpr>(p)) {
        return nullptr;
      }
      if (stop)
        return nullptr;
    }
    return nullptr;
  }

  bool agreedAt(const ValueDecl *d, SourceLocation use) {
    if (!d || use.isInvalid())
      return false;
    auto it = agreements.find(d->getCanonicalDecl());
    if (it == agreements.end())
      return false;
    const SourceManager &sm = ctx.getSourceManager();
    SourceLocation u = sm.getExpansionLoc(use);
    for (const Agreement &a : it->second)
      if (sm.isBeforeInTranslationUnit(a.after, u) &&
          !sm.isBeforeInTranslationUnit(u, a.region.getBegin()) &&
          !sm.isBeforeInTranslationUnit(a.region.getEnd(), u))
        return true;
    return false;
  }

  void markAgreed(const Expr *e, const Agreement &at, int depth = 0) {
    e = strip(e);
    if (!e || depth > 3)
      return;
    if (const auto *u = dyn_cast<UnaryOperator>(e))
      return markAgreed(u->getSubExpr(), at, depth);
    // `MPI_Bcast(&grow_info[0], 8, ...)` (miniFE): the buffer from its first
    // element on, the array itself; `buf.data()` likewise.
    if (const auto *as = dyn_cast<ArraySubscriptExpr>(e))
      if (const auto *idx = dyn_cast<IntegerLiteral>(as->getIdx()->IgnoreParenImpCasts()); idx && idx->getValue() == 0)
        return markAgreed(as->getBase(), at, depth);
    if (const auto *mc = dyn_cast<CXXMemberCallExpr>(e); mc && mc->getNumArgs() == 0 && mc->getMethodDecl() &&
                                                          mc->getMethodDecl()->getDeclName().isIdentifier() &&
                                                          mc->getMethodDecl()->getName() == "data")
      return markAgreed(mc->getImplicitObjectArgument(), at, depth);
    if (const ValueDecl *d = declOf(e)) {
      agreements[d->getCanonicalDecl()].push_back(at);
      // The tensors a vector was built from are agreed too.
      for (const Expr *def : defs[d->getCanonicalDecl()]) {
        const Expr *s = strip(def);
        if (!s)
          continue;
        if (const auto *il = dyn_cast<InitListExpr>(s))
          for (const Expr *i : il->inits())
            markAgreed(i, at, depth + 1);
        if (const auto *ce = dyn_cast<CXXConstructExpr>(s))
          for (const Expr *a : ce->arguments())
            markAgreed(a, at, depth + 1);
        if (const auto *sl = dyn_cast<CXXStdInitializerListExpr>(s))
          markAgreed(sl->getSubExpr(), at, depth + 1);
      }
      return;
    }
    if (const auto *il = dyn_cast<InitListExpr>(e))
      for (const Expr *i : il->inits())
        markAgreed(i, at, depth + 1);
    if (const auto *ce = dyn_cast<CXXConstructExpr>(e))
      for (const Expr *a : ce->arguments())
        markAgreed(a, at, depth + 1);
    if (const auto *sl = dyn_cast<CXXStdInitializerListExpr>(e))
      markAgreed(sl->getSubExpr(), at, depth + 1);
  }

  // The catalog's buffers entry of a collective call (rules/api.yaml
  // collective_buffers), or null.
  const core::CollectiveBuffers *buffersOf(const CallExpr *c) const {
    const FunctionDecl *fd = c->getDirectCallee();
    if (!fd)
      return nullptr;
    const bool method = isa<CXXMethodDecl>(fd) && !isa<CXXOperatorCallExpr>(c);
    const std::string q = qualifiedName(fd);
    const std::string plain = fd->getDeclName().isIdentifier() ? fd->getName().str() : "";
    for (const auto &cb : api.api().collectiveBuffers)
      if (cb.method == method && (method ? cb.name == plain : nameIn(q, {cb.name})))
        return &cb;
    return nullptr;
  }

  // The arguments whose value is the same on every rank after the call: the
  // catalog's agreed outputs, or every argument of the user's own collective
  // wrappers (naming them says the call agrees them).
  std::vector<unsigned> agreedArgs(const CallExpr *c) const {
    std::vector<unsigned> out;
    if (const core::CollectiveBuffers *cb = buffersOf(c)) {
      for (int i : cb->agreed)
        if (i >= 0 && unsigned(i) < c->getNumArgs())
          out.push_back(unsigned(i));
      return out;
    }
    const FunctionDecl *fd = c->getDirectCallee();
    const std::string q = fd ? qualifiedName(fd) : std::string();
    if (fd && (nameIn(q, api.user().collectiveFunctions, true) || nameIn(q, api.user().barrierFunctions, true)))
      for (unsigned i = 0; i < c->getNumArgs(); ++i)
        out.push_back(i);
    return out;
  }

  struct Indexer : RecursiveASTVisitor<Indexer> {
    Impl &I;
    std::vector<const FunctionDecl *> fnStack;
    std::vector<std::pair<const CallExpr *, const FunctionDecl *>> collectives;
    std::vector<std::pair<const CallExpr *, const FunctionDecl *>> userCalls;
    explicit Indexer(Impl &i) : I(i) {}
    bool shouldVisitTemplateInstantiations() const { return true; }
    bool shouldVisitLambdaBody() const { return true; }
    bool TraverseDecl(Decl *d) {
      if (d && !isa<TranslationUnitDecl>(d) && !I.inUserCode(d->getLocation()))
        return true; // system headers: their internals are the catalog's business
      return RecursiveASTVisitor::TraverseDecl(d);
    }
    bool TraverseFunctionDecl(FunctionDecl *fd) { return traverseFn(fd, [&] { return RecursiveASTVisitor::TraverseFunctionDecl(fd); }); }
    bool TraverseCXXMethodDecl(CXXMethodDecl *fd) { return traverseFn(fd, [&] { return RecursiveASTVisitor::TraverseCXXMethodDecl(fd); }); }
    bool TraverseCXXConstructorDecl(CXXConstructorDecl *fd) { return traverseFn(fd, [&] { return RecursiveASTVisitor::TraverseCXXConstructorDecl(fd); }); }
    template <class F> bool traverseFn(FunctionDecl *fd, F base) {
      fnStack.push_back(fd);
      bool r = base();
      fnStack.pop_back();
      return r;
    }
    bool VisitVarDecl(VarDecl *v) {
      if (v->hasInit()) {
        I.addDef(v, v->getInit());
        packList(v, v->getInit());
        if (auto el = element(v->getInit()))
          I.unpacked[v->getCanonicalDecl()].insert(*el);
        setRunningIndex(v, v->getInit());
      }
      if (!I.distributed && I.api.isCommunicatorType(v->getType()))
        I.distributed = true;
      return true;
    }
    bool VisitFieldDecl(FieldDecl *f) {
      if (!I.distributed && I.api.isCommunicatorType(f->getType()))
        I.distributed = true;
      return true;
    }
    bool VisitCXXForRangeStmt(CXXForRangeStmt *s) {
      if (s->getLoopVariable())
        I.addDef(s->getLoopVariable(), s->getRangeInit());
      // The range's element is rank data when it comes from a data loader.
      return true;
    }
    bool VisitCXXConstructorDecl(CXXConstructorDecl *c) {
      for (const CXXCtorInitializer *init : c->inits())
        if (init->getMember())
          I.addDef(init->getMember(), init->getInit());
      return true;
    }
    std::vector<const Expr *> conds; // enclosing branch/loop conditions in this function
    template <class F> bool underCond(const Expr *cond, F base) {
      if (cond)
        conds.push_back(cond);
      bool r = base();
      if (cond)
        conds.pop_back();
      return r;
    }
    // Only branch conditions: a loop's own counter is not made rank-local by
    // the branch the loop sits in (every rank that enters runs the same trips).
    // Does every way through the statement leave it (return, break, continue,
    // goto, throw, a call that does not return)?
    static bool leaves(const Stmt *s) {
      if (!s)
        return false;
      if (isa<ReturnStmt, BreakStmt, ContinueStmt, GotoStmt, CXXThrowExpr>(s))
        return true;
      if (const auto *c = dyn_cast<CallExpr>(s))
        if (const FunctionDecl *fd = c->getDirectCallee())
          return fd->isNoReturn();
      if (const auto *cs = dyn_cast<CompoundStmt>(s))
        return !cs->body_empty() && leaves(cs->body_back());
      if (const auto *i = dyn_cast<IfStmt>(s))
        return i->getElse() && leaves(i->getThen()) && leaves(i->getElse());
      return false;
    }
    bool TraverseIfStmt(IfStmt *s) {
      // `if (rank < 0) return; else { n = ...; }`: the ranks that go on all
      // run the arm that does not leave, so what it assigns is not decided by
      // the condition (IMB's non-members return first).
      if (s->getElse() && (leaves(s->getThen()) || leaves(s->getElse()))) {
        const bool thenLeaves = leaves(s->getThen()), elseLeaves = leaves(s->getElse());
        if (!TraverseStmt(s->getInit()) || !TraverseStmt(s->getConditionVariableDeclStmt()) ||
            !TraverseStmt(s->getCond()))
          return false;
        if (!(elseLeaves ? TraverseStmt(s->getThen())
                         : underCond(s->getCond(), [&] { return TraverseStmt(s->getThen()); })))
          return false;
        return thenLeaves ? TraverseStmt(s->getElse())
                          : underCond(s->getCond(), [&] { return TraverseStmt(s->getElse()); });
      }
      return underCond(s->getCond(), [&] { return RecursiveASTVisitor::TraverseIfStmt(s); });
    }
    int inLoopHeader = 0;
    bool TraverseForStmt(ForStmt *s) {
      if (const auto *ds = dyn_cast_or_null<DeclStmt>(s->getInit()); ds && ds->isSingleDecl())
        if (const auto *v = dyn_cast<VarDecl>(ds->getSingleDecl()))
          if (const auto *b = dyn_cast_or_null<BinaryOperator>(s->getCond()); b && b->getOpcode() == BO_LT)
            if (declOf(b->getLHS()) == v)
              I.loopCounters[v->getCanonicalDecl()] = b->getRHS();
      counterScope(s);
      ++inLoopHeader;
      bool ok = TraverseStmt(s->getInit()) && TraverseStmt(s->getCond()) && TraverseStmt(s->getInc());
      --inLoopHeader;
      return ok && TraverseStmt(s->getBody());
    }
    // `for (i = 0; ...; ++i)` / `for (int i = 0; ...; i += 2)` whose body
    // leaves `i` alone: a counter scope (see Impl::counterScopes).
    void counterScope(const ForStmt *s) {
      const ValueDecl *v = nullptr;
      const Expr *init = nullptr;
      if (const auto *ds = dyn_cast_or_null<DeclStmt>(s->getInit()); ds && ds->isSingleDecl()) {
        if (const auto *vd = dyn_cast<VarDecl>(ds->getSingleDecl()); vd && vd->hasInit()) {
          v = vd;
          init = vd->getInit();
        }
      } else if (const auto *b = dyn_cast_or_null<BinaryOperator>(strip(dyn_cast_or_null<Expr>(s->getInit())))) {
        // `sum = j = i = 0`: the innermost assignment is the counter's when the
        // increment names it.
        while (b && b->getOpcode() == BO_Assign) {
          if (const ValueDecl *d = declOf(b->getLHS()); d && incrementOf(s->getInc()) == d->getCanonicalDecl()) {
            v = d;
            init = b->getRHS();
            break;
          }
          b = dyn_cast<BinaryOperator>(strip(b->getRHS()));
        }
      }
      if (!v || !init || !s->getBody() || incrementOf(s->getInc()) != v->getCanonicalDecl())
        return;
      const auto *vd = dyn_cast<VarDecl>(v);
      if (!vd || !vd->hasLocalStorage() || writes(s->getBody(), v->getCanonicalDecl()))
        return;
      SourceLocation from = s->getCond() ? s->getCond()->getBeginLoc() : s->getBody()->getBeginLoc();
      I.counterScopes[v->getCanonicalDecl()].push_back(
          {SourceRange(from, s->getBody()->getEndLoc()), init});
    }
    static const Decl *incrementOf(const Expr *inc) {
      inc = strip(inc);
      if (const auto *u = dyn_cast_or_null<UnaryOperator>(inc); u && u->isIncrementDecrementOp())
        if (const ValueDecl *d = declOf(u->getSubExpr()))
          return d->getCanonicalDecl();
      if (const auto *b = dyn_cast_or_null<CompoundAssignOperator>(inc))
        if (const ValueDecl *d = declOf(b->getLHS()))
          return d->getCanonicalDecl();
      return nullptr;
    }
    // Does the statement assign, increment or take the address of `d`?
    static bool writes(const Stmt *s, const Decl *d) {
      if (!s)
        return false;
      if (const auto *b = dyn_cast<BinaryOperator>(s); b && b->isAssignmentOp())
        if (const ValueDecl *l = declOf(b->getLHS()); l && l->getCanonicalDecl() == d)
          return true;
      if (const auto *u = dyn_cast<UnaryOperator>(s);
          u && (u->isIncrementDecrementOp() || u->getOpcode() == UO_AddrOf))
        if (const ValueDecl *l = declOf(u->getSubExpr()); l && l->getCanonicalDecl() == d)
          return true;
      if (const auto *c = dyn_cast<CallExpr>(s)) // passed by reference
        for (const Expr *a : c->arguments())
          if (a->isLValue() && !a->getType().isConstQualified())
            if (const ValueDecl *l = declOf(a); l && l->getCanonicalDecl() == d && !isa<ImplicitCastExpr>(a))
              return true;
      for (const Stmt *k : s->children())
        if (writes(k, d))
          return true;
      return false;
    }
    void controlled(const ValueDecl *d) {
      if (!d || conds.empty() || inLoopHeader)
        return;
      auto &v = I.controlDeps[d->getCanonicalDecl()];
      for (size_t i = conds.size() > 4 ? conds.size() - 4 : 0; i < conds.size(); ++i)
        if (std::find(v.begin(), v.end(), conds[i]) == v.end() && v.size() < 16)
          v.push_back(conds[i]);
    }
    // A running index: `std::size_t i = 0;` then `a = buf[i++]; b = buf[i++];`
    // reads slots 0, 1, ... in source order (Branson's input broadcast).  Any
    // other write of the index forgets it.
    std::unordered_map<const Decl *, std::int64_t> runningIndex;
    std::unordered_set<const UnaryOperator *> indexSteps;
    // `info[k]` (an array or a vector) with a constant k or a running index:
    // the buffer and k.
    std::optional<std::pair<const Decl *, std::int64_t>> element(const Expr *e) {
      const Expr *base = nullptr, *idx = nullptr;
      if (const auto *a = dyn_cast_or_null<ArraySubscriptExpr>(strip(e))) {
        base = a->getBase();
        idx = a->getIdx();
      } else if (const auto *op = dyn_cast_or_null<CXXOperatorCallExpr>(strip(e));
                 op && op->getOperator() == OO_Subscript && op->getNumArgs() == 2) {
        base = op->getArg(0);
        idx = op->getArg(1);
      }
      const ValueDecl *b = base ? declOf(base) : nullptr;
      if (!b)
        return std::nullopt;
      std::optional<std::int64_t> k = constInt(idx, I.ctx);
      if (const auto *u = dyn_cast_or_null<UnaryOperator>(strip(idx)); !k && u && u->getOpcode() == UO_PostInc)
        if (const ValueDecl *i = declOf(u->getSubExpr()))
          if (auto r = runningIndex.find(i->getCanonicalDecl()); r != runningIndex.end()) {
            k = r->second++;
            indexSteps.insert(u);
          }
      if (!k)
        return std::nullopt;
      return std::make_pair(b->getCanonicalDecl(), *k);
    }
    // `buf = {a, b, c}` (an array or an initializer-list constructor): the
    // root packs a, b and c at slots 0, 1 and 2.
    void packList(const Decl *buf, const Expr *init) {
      init = strip(init);
      if (const auto *ce = dyn_cast_or_null<CXXConstructExpr>(init); ce && ce->getNumArgs() >= 1)
        init = strip(ce->getArg(0));
      if (const auto *il = dyn_cast_or_null<CXXStdInitializerListExpr>(init))
        init = strip(il->getSubExpr());
      const auto *list = dyn_cast_or_null<InitListExpr>(init);
      if (!list)
        return;
      for (unsigned k = 0; k < list->getNumInits(); ++k)
        if (const ValueDecl *v = declOf(list->getInit(k)))
          I.packed[v->getCanonicalDecl()].insert({buf->getCanonicalDecl(), std::int64_t(k)});
    }
    void setRunningIndex(const ValueDecl *d, const Expr *value) {
      if (!d || !d->getType()->isIntegerType())
        return;
      if (std::optional<std::int64_t> k = constInt(value, I.ctx))
        runningIndex[d->getCanonicalDecl()] = *k;
      else
        runningIndex.erase(d->getCanonicalDecl());
    }
    bool VisitBinaryOperator(BinaryOperator *b) {
      if (b->getOpcode() == BO_Assign) {
        // The root packs `info[k] = v` for a broadcast; the others unpack
        // `v = tmp[k]` from theirs (IMB's and HPL's input broadcasts).
        if (auto el = element(b->getLHS()))
          if (const ValueDecl *v = declOf(b->getRHS()))
            I.packed[v->getCanonicalDecl()].insert(*el);
        if (const ValueDecl *v = declOf(b->getLHS())) {
          if (auto el = element(b->getRHS()))
            I.unpacked[v->getCanonicalDecl()].insert(*el);
          // `const auto n = buf[i++]; steps = n;`: unpacked through a local.
          if (const ValueDecl *w = declOf(b->getRHS()); w && isa<VarDecl>(w))
            if (auto u = I.unpacked.find(w->getCanonicalDecl()); u != I.unpacked.end()) {
              auto slots = u->second;
              I.unpacked[v->getCanonicalDecl()].insert(slots.begin(), slots.end());
            }
        }
        setRunningIndex(declOf(b->getLHS()), b->getRHS());
      } else if (b->isCompoundAssignmentOp()) {
        if (const ValueDecl *d = declOf(b->getLHS()))
          runningIndex.erase(d->getCanonicalDecl());
      }
      if (b->isAssignmentOp())
        if (const ValueDecl *d = declOf(b->getLHS())) {
          I.addDef(d, b->getRHS());
          controlled(d);
        }
      return true;
    }
    bool VisitUnaryOperator(UnaryOperator *u) {
      if (u->isIncrementDecrementOp())
        if (const ValueDecl *d = declOf(u->getSubExpr())) {
          controlled(d);
          if (!indexSteps.count(u))
            runningIndex.erase(d->getCanonicalDecl());
        }
      return true;
    }
    bool VisitCXXOperatorCallExpr(CXXOperatorCallExpr *op) {
      if (op->isAssignmentOp() && op->getNumArgs() == 2)
        if (const ValueDecl *d = declOf(op->getArg(0))) {
          I.addDef(d, op->getArg(1));
          controlled(d);
        }
      return true;
    }
    bool VisitReturnStmt(ReturnStmt *r) {
      if (!fnStack.empty() && r->getRetValue())
        I.returns[fnStack.back()->getCanonicalDecl()].push_back(r->getRetValue());
      return true;
    }
    bool TraverseLambdaExpr(LambdaExpr *l) {
      fnStack.push_back(l->getCallOperator());
      bool r = RecursiveASTVisitor::TraverseLambdaExpr(l);
      fnStack.pop_back();
      return r;
    }
    void argsToParams(const FunctionDecl *fd, llvm::ArrayRef<const Expr *> args, unsigned skip) {
      if (!fd)
        return;
      if (const auto *t = fd->getTemplateInstantiationPattern())
        fd = t;
      I.callSites[fd->getCanonicalDecl()]++;
      for (unsigned i = 0; i + skip < args.size() && i < fd->getNumParams(); ++i)
        I.addDef(fd->getParamDecl(i), args[i + skip]);
    }
    // The array or vector a buffer argument points into: `buf`, `&buf[0]`,
    // `buf.data()`.
    static const ValueDecl *bufferOf(const Expr *arg) {
      const Expr *e = stripAddr(arg);
      if (const auto *a = dyn_cast_or_null<ArraySubscriptExpr>(e))
        return declOf(a->getBase());
      if (const auto *op = dyn_cast_or_null<CXXOperatorCallExpr>(e); op && op->getOperator() == OO_Subscript)
        return declOf(op->getArg(0));
      if (const auto *m = dyn_cast_or_null<CXXMemberCallExpr>(e))
        if (const CXXMethodDecl *md = m->getMethodDecl(); md && md->getIdentifier() && md->getName() == "data")
          return declOf(m->getImplicitObjectArgument());
      return declOf(e);
    }
    bool VisitCallExpr(CallExpr *c) {
      CallInfo info = I.api.classify(c);
      if (const FunctionDecl *fd = c->getDirectCallee(); fd && c->getNumArgs() > 0) {
        static const std::vector<std::string> splitters = {
            "MPI_Comm_split", "MPI_Comm_split_type", "MPI_Comm_create", "MPI_Comm_create_group",
            "MPI_Cart_sub", "MPI_Intercomm_create", "ncclCommSplit"};
        if (nameIn(qualifiedName(fd), splitters))
          if (const ValueDecl *d = declOf(stripAddr(c->getArg(c->getNumArgs() - 1))))
            I.subComms.insert(d->getCanonicalDecl());
        if (qualifiedName(fd) == "MPI_Bcast")
          if (const ValueDecl *d = bufferOf(c->getArg(0)))
            I.broadcastBuffers.insert(d->getCanonicalDecl());
        // `MPI_File_open(MPI_COMM_SELF, ..., &fh)`: in this function, the
        // handle's collectives (set_view, set_size, close) are the rank's own,
        // unless the function also opens it on another communicator.
        if (qualifiedName(fd) == "MPI_File_open" && c->getNumArgs() == 5 && !fnStack.empty())
          if (const ValueDecl *h = declOf(stripAddr(c->getArg(4)))) {
            auto key = std::make_pair(fnStack.back()->getCanonicalDecl(), h->getCanonicalDecl());
            if (I.mpiHandle(c->getArg(0)) == "MPI_COMM_SELF")
              I.selfFiles.insert(key);
            else
              I.sharedFiles.insert(key);
          }
      }
      switch (info.role) {
      case CallRole::Collective:
      case CallRole::Barrier:
      case CallRole::PointToPoint:
      case CallRole::RankSource:
      case CallRole::MainProcess:
      case CallRole::WorldSize:
        I.distributed = true;
        break;
      default:
        break;
      }
      if (const FunctionDecl *fd = c->getDirectCallee()) {
        // The rank argument of a communicator's creation (the catalog's
        // collective_setup functions that take one).
        static const std::vector<std::pair<std::string, unsigned>> sinks = {
            {"ncclCommInitRank", 3}, {"ncclCommInitRankConfig", 3},
            {"ncclCommInitRankScalable", 2}};
        const std::string q = qualifiedName(fd);
        for (const auto &[name, arg] : sinks)
          if (q == name && arg < c->getNumArgs())
            if (const ValueDecl *d = declOf(strip(c->getArg(arg))); d && isa<VarDecl>(d))
              I.rankSinks.insert(d->getCanonicalDecl());
      }
      if ((info.role == CallRole::RankSource || info.role == CallRole::WorldSize ||
           info.role == CallRole::LocalSource) &&
          info.arg >= 0 && unsigned(info.arg) < c->getNumArgs()) {
        const Expr *a = strip(c->getArg(unsigned(info.arg)));
        if (const auto *u = dyn_cast<UnaryOperator>(a); u && u->getOpcode() == UO_AddrOf)
          if (const ValueDecl *d = declOf(u->getSubExpr()))
          {
            I.outRole[d->getCanonicalDecl()] = info.role == CallRole::RankSource ? Dep::Rank
                                               : info.role == CallRole::LocalSource ? Dep::Local
                                                                                     : Dep::Uniform;
            if (info.role == CallRole::WorldSize)
              I.worldSizeOut.insert(d->getCanonicalDecl());
          }
      }
      if (info.role == CallRole::Collective || info.role == CallRole::Barrier) {
        collectives.emplace_back(c, fnStack.empty() ? nullptr : fnStack.back());
        if (!fnStack.empty())
          I.distributedFns.insert(fnStack.back()->getCanonicalDecl());
      }
      if (info.role == CallRole::PointToPoint && !fnStack.empty())
        I.distributedFns.insert(fnStack.back()->getCanonicalDecl());
      if (info.role == CallRole::LocalSource && !fnStack.empty() && isFileProbe(c->getDirectCallee()))
        I.probeFunction[c] = fnStack.back();
      if (const FunctionDecl *fd = c->getDirectCallee(); fd && info.role == CallRole::None) {
        if (!fnStack.empty())
          userCalls.emplace_back(c, fnStack.back());
        std::vector<const Expr *> args(c->arg_begin(), c->arg_end());
        unsigned skip = isa<CXXOperatorCallExpr>(c) && isa<CXXMethodDecl>(fd) ? 1 : 0;
        argsToParams(fd, args, skip);
      }
      return true;
    }
    bool VisitCXXConstructExpr(CXXConstructExpr *c) {
      if (const auto *ctor = c->getConstructor()) {
        std::vector<const Expr *> args(c->arg_begin(), c->arg_end());
        argsToParams(ctor, args, 0);
      }
      return true;
    }
  };

  void index() {
    Indexer ix(*this);
    ix.TraverseDecl(ctx.getTranslationUnitDecl());
    // A collective's agreed outputs are identical on every rank after it.
    auto bodyOfFn = [](const FunctionDecl *fn) -> const Stmt * {
      return fn && fn->doesThisDeclarationHaveABody() ? fn->getBody() : nullptr;
    };
    // Members and globals a function agrees on every path through it: a call
    // of that function agrees them too (`sync()` then `if (stop_)`).
    std::unordered_map<const Decl *, std::vector<const Decl *>> fnAgrees;
    // The pointer and reference parameters a function hands to a collective's
    // agreed buffer on every path: its callers' arguments are agreed after the
    // call (`template <class T> void bcast(T *b) { MPI_Bcast(b, ...); }`,
    // then `bcast(&iterations)` after rank 0 parsed argv).
    std::unordered_map<const Decl *, std::vector<unsigned>> fnAgreesParam;
    auto agreesThroughParam = [&](const FunctionDecl *fn, const Expr *arg, bool wholeBody) {
      const auto *p = dyn_cast_or_null<ParmVarDecl>(declOf(stripAddr(arg)));
      if (!p || !wholeBody || !fn || p->getDeclContext() != fn ||
          !(p->getType()->isPointerType() || p->getType()->isReferenceType()))
        return false;
      // A template's instantiations share the pattern's entry: that is the
      // definition a call's callee resolves to.
      const FunctionDecl *key = fn->getTemplateInstantiationPattern() ? fn->getTemplateInstantiationPattern() : fn;
      auto &mine = fnAgreesParam[key->getCanonicalDecl()];
      if (std::find(mine.begin(), mine.end(), p->getFunctionScopeIndex()) != mine.end())
        return false;
      mine.push_back(p->getFunctionScopeIndex());
      return true;
    };
    for (const auto &[c, fn] : ix.collectives) {
      const Stmt *body = bodyOfFn(fn);
      Agreement at;
      if (!body || !regionOf(c, body, at))
        continue;
      const bool wholeBody = at.region.getBegin() == ctx.getSourceManager().getExpansionLoc(body->getBeginLoc());
      for (unsigned i : agreedArgs(c)) {
        markAgreed(c->getArg(i), at);
        agreesThroughParam(fn, c->getArg(i), wholeBody);
        if (const ValueDecl *d = declOf(stripAddr(c->getArg(i))); d && wholeBody &&
                                                                 (isa<FieldDecl>(d) || (isa<VarDecl>(d) && cast<VarDecl>(d)->hasGlobalStorage())))
          fnAgrees[fn->getCanonicalDecl()].push_back(d->getCanonicalDecl());
      }
    }
    // The outputs of a collective whose result differs across ranks (reduce,
    // gather, scan, alltoall, reduce_scatter, scatter) are rank-local data.
    for (const auto &[c, fn] : ix.collectives) {
      const core::CollectiveBuffers *cb = buffersOf(c);
      if (!cb)
        continue;
      std::vector<int> outs = cb->recv;
      outs.insert(outs.end(), cb->inout.begin(), cb->inout.end());
      for (int i : outs)
        if (i >= 0 && unsigned(i) < c->getNumArgs() &&
            std::find(cb->agreed.begin(), cb->agreed.end(), i) == cb->agreed.end())
          if (const ValueDecl *d = declOf(stripAddr(c->getArg(unsigned(i)))))
            outRole[d->getCanonicalDecl()] = Dep::Local;
    }
    for (int round = 0; round < 3 && (!fnAgrees.empty() || !fnAgreesParam.empty()); ++round) {
      bool grew = false;
      for (const auto &[c, fn] : ix.userCalls) {
        const FunctionDecl *callee = c->getDirectCallee();
        const FunctionDecl *def = callee ? bodyOf(callee) : nullptr;
        const Stmt *body = bodyOfFn(fn);
        if (auto pit = def ? fnAgreesParam.find(def->getCanonicalDecl()) : fnAgreesParam.end();
            pit != fnAgreesParam.end() && body) {
          Agreement at;
          if (regionOf(c, body, at)) {
            const bool wholeBody = at.region.getBegin() == ctx.getSourceManager().getExpansionLoc(body->getBeginLoc());
            // A member call's arguments start at 0 like the parameters; an
            // operator call's object is argument 0.
            const unsigned skip = isa<CXXOperatorCallExpr>(c) && isa<CXXMethodDecl>(callee) ? 1 : 0;
            const std::vector<unsigned> params = pit->second;
            for (unsigned i : params)
              if (i + skip < c->getNumArgs()) {
                markAgreed(c->getArg(i + skip), at);
                grew = agreesThroughParam(fn, c->getArg(i + skip), wholeBody) || grew;
              }
          }
        }
        auto it = def ? fnAgrees.find(def->getCanonicalDecl()) : fnAgrees.end();
        Agreement at;
        if (it == fnAgrees.end() || !body || !regionOf(c, body, at))
          continue;
        const bool wholeBody = at.region.getBegin() == ctx.getSourceManager().getExpansionLoc(body->getBeginLoc());
        std::vector<const Decl *> ds = it->second;
        for (const Decl *d : ds) {
          agreements[d].push_back(at);
          if (wholeBody) {
            auto &mine = fnAgrees[fn->getCanonicalDecl()];
            if (std::find(mine.begin(), mine.end(), d) == mine.end()) {
              mine.push_back(d);
              grew = true;
            }
          }
        }
      }
      if (!grew)
        break;
    }
  }

  static const Expr *stripAddr(const Expr *e) {
    e = strip(e);
    if (const auto *u = dyn_cast_or_null<UnaryOperator>(e); u && u->getOpcode() == UO_AddrOf)
      return strip(u->getSubExpr());
    return e;
  }

  const std::vector<const Expr *> &defsOf(const ValueDecl *d) {
    auto it = defs.find(d->getCanonicalDecl());
    return it == defs.end() ? empty : it->second;
  }

  // A placeholder a variable holds before the real value arrives:
  // `int rank = -1; MPI_Comm_rank(comm, &rank);`, a default member initialiser.
  bool placeholder(const Expr *e) {
    const Expr *s = strip(e);
    if (!s || isa<CXXDefaultInitExpr>(s) || isa<ImplicitValueInitExpr>(s) ||
        isa<CXXBoolLiteralExpr>(s) || isa<CXXNullPtrLiteralExpr>(s))
      return true;
    return constInt(s, ctx).has_value();
  }

  // The definitions that carry a value, placeholders left out.
  std::vector<const Expr *> realDefs(const ValueDecl *d) {
    std::vector<const Expr *> out;
    for (const Expr *e : defsOf(d))
      if (!placeholder(e))
        out.push_back(e);
    return out;
  }

  const FunctionDecl *bodyOf(const FunctionDecl *fd) const {
    if (!fd)
      return nullptr;
    if (const auto *t = fd->getTemplateInstantiationPattern())
      fd = t;
    const FunctionDecl *def = nullptr;
    if (!fd->hasBody(def) || !def || !inUserCode(def->getLocation()))
      return nullptr;
    return def;
  }

  bool heuristicRankParam(const ParmVarDecl *p) {
    if (!p->getIdentifier() || !rankLikeName(p->getName()) || p->getType().isNull() ||
        !p->getType()->isIntegralOrEnumerationType())
      return false;
    const auto *fd = dyn_cast_or_null<FunctionDecl>(p->getDeclContext());
    if (!fd || callSites.count(fd->getCanonicalDecl()))
      return false;
    if (distributedFns.count(fd->getCanonicalDecl()))
      return true;
    for (const ParmVarDecl *q : fd->parameters())
      if (api.isCommunicatorType(q->getType()))
        return true;
    if (const auto *md = dyn_cast<CXXMethodDecl>(fd)) // constructors of trainer classes
      for (const FieldDecl *f : md->getParent()->fields())
        if (api.isCommunicatorType(f->getType()))
          return true;
    return false;
  }

  // `struct DistEnv { int rank; int world_size; PG pg; }`: a rank-named integer
  // member beside a communicator, filled where this unit cannot see (aggregate
  // initialisation, another file), is the process rank.  A LoRA config's
  // `rank` has no communicator beside it.
  bool heuristicRankField(const FieldDecl *f) {
    if (!f->getIdentifier() || !rankLikeName(f->getName()) || f->getType().isNull() ||
        !f->getType()->isIntegralOrEnumerationType())
      return false;
    for (const FieldDecl *other : f->getParent()->fields())
      if (api.isCommunicatorType(other->getType()))
        return true;
    return false;
  }

  // --- dependence ---------------------------------------------------------
  Dep declDep(const ValueDecl *d) {
    if (!d)
      return Dep::Uniform;
    d = cast<ValueDecl>(d->getCanonicalDecl());
    if (auto s = seeds.find(d); s != seeds.end())
      return s->second;
    if (bcastAgreed(d))
      return Dep::Uniform;
    if (auto m = declMemo.find(d); m != declMemo.end())
      return m->second;
    if (declBusy.count(d))
      return Dep::Uniform; // cycles add nothing new
    declBusy.insert(d);
    Dep dep = Dep::Uniform;
    if (rankSinks.count(d) || rankFromElsewhere(d))
      dep = Dep::Rank;
    if (auto o = outRole.find(d); o != outRole.end())
      dep = join(dep, o->second);
    if (const auto *p = dyn_cast<ParmVarDecl>(d)) {
      // argc/argv: the same on every rank under every launcher.
      if (const auto *fd = dyn_cast_or_null<FunctionDecl>(p->getDeclContext()); fd && fd->isMain()) {
        declBusy.erase(d);
        declMemo[d] = Dep::Uniform;
        return Dep::Uniform;
      }
      if (heuristicRankParam(p))
        dep = Dep::Rank;
    }
    if (const auto *f = dyn_cast<FieldDecl>(d); f && realDefs(f).empty() && heuristicRankField(f))
      dep = Dep::Rank;
    for (const Expr *e : defsOf(d)) {
      dep = join(dep, depOf(e));
      if (dep == Dep::Local)
        break;
    }
    if (auto cd = controlDeps.find(d); cd != controlDeps.end() && dep != Dep::Local)
      for (const Expr *c : cd->second) {
        dep = join(dep, depOf(c));
        if (dep == Dep::Local)
          break;
      }
    // Elements of a data loader are the rank's own batch.
    if (const auto *v = dyn_cast<VarDecl>(d); v && v->isCXXForRangeDecl())
      for (const Expr *e : defsOf(d))
        if (isLoader(e))
          dep = Dep::Local;
    declBusy.erase(d);
    declMemo[d] = dep;
    return dep;
  }

  bool isLoader(const Expr *e) {
    e = strip(e);
    if (!e)
      return false;
    std::string t = typeText(e);
    if (t.find("DataLoader") != std::string::npos)
      return true;
    if (const auto *u = dyn_cast<UnaryOperator>(e))
      return isLoader(u->getSubExpr());
    if (const auto *op = dyn_cast<CXXOperatorCallExpr>(e); op && op->getNumArgs() >= 1)
      return isLoader(op->getArg(0));
    if (const ValueDecl *d = declOf(e))
      return !d->getType().isNull() && d->getType().getAsString().find("DataLoader") != std::string::npos;
    return false;
  }

  Dep fnReturnDep(const FunctionDecl *fd) {
    const FunctionDecl *def = bodyOf(fd);
    if (!def)
      return Dep::Uniform;
    const Decl *key = def->getCanonicalDecl();
    if (auto m = declMemo.find(key); m != declMemo.end())
      return m->second;
    if (declBusy.count(key))
      return Dep::Uniform;
    declBusy.insert(key);
    Dep dep = Dep::Uniform;
    auto it = returns.find(key);
    if (it != returns.end())
      for (const Expr *r : it->second)
        dep = join(dep, depOf(r));
    declBusy.erase(key);
    declMemo[key] = dep;
    return dep;
  }

  bool usesDistributedSampler(const CallExpr *c) {
    auto names = [&](QualType t) {
      if (t.isNull())
        return false;
      std::string s = t.getAsString();
      for (const auto &n : api.api().distributedSamplers) {
        std::string last = n.substr(n.rfind("::") == std::string::npos ? 0 : n.rfind("::") + 2);
        if (s.find(last) != std::string::npos)
          return true;
      }
      return false;
    };
    for (const Expr *a : c->arguments())
      if (names(a->getType()))
        return true;
    if (const FunctionDecl *fd = c->getDirectCallee())
      if (const auto *args = fd->getTemplateSpecializationArgs())
        for (const auto &ta : args->asArray())
          if (ta.getKind() == TemplateArgument::Type && names(ta.getAsType()))
            return true;
    return false;
  }

  bool objectAgreed(const Expr *obj) {
    obj = strip(obj);
    if (const ValueDecl *d = declOf(obj))
      return agreedAt(d, obj->getBeginLoc());
    if (const auto *op = dyn_cast_or_null<CXXOperatorCallExpr>(obj); op && op->getNumArgs() >= 1)
      return objectAgreed(op->getArg(0)); // v[0].item()
    if (const auto *m = dyn_cast_or_null<CXXMemberCallExpr>(obj))
      return objectAgreed(m->getImplicitObjectArgument());
    if (const auto *a = dyn_cast_or_null<ArraySubscriptExpr>(obj))
      return objectAgreed(a->getBase());
    return false;
  }

  Dep callDep(const CallExpr *c) {
    CallInfo info = api.classify(c);
    switch (info.role) {
    case CallRole::RankSource:
    case CallRole::MainProcess:
      return info.arg >= 0 ? Dep::Uniform : Dep::Rank;
    case CallRole::WorldSize:
    case CallRole::Collective:
    case CallRole::Barrier:
    case CallRole::EnvRead:
      return Dep::Uniform;
    case CallRole::None:
      if (const FunctionDecl *fd = c->getDirectCallee(); fd && uniformInputFunction(fd))
        return Dep::Uniform;
      break;
    case CallRole::LocalSource: {
      const auto *m = dyn_cast<CXXMemberCallExpr>(c);
      if (m && objectAgreed(m->getImplicitObjectArgument()))
        return Dep::Uniform;
      if (isFileProbe(c->getDirectCallee()) && !probeRacesWrite(c))
        return Dep::Uniform;
      return Dep::Local;
    }
    case CallRole::DataLoaderFactory:
      if (usesDistributedSampler(c))
        return Dep::Uniform;
      break;
    default:
      break;
    }
    Dep dep = Dep::Uniform;
    if (const FunctionDecl *fd = c->getDirectCallee(); fd && bodyOf(fd))
      return join(dep, fnReturnDep(fd));
    if (const ExportedFunction *x = externalOf(c); x && (x->returnsRank || x->predicate))
      return Dep::Rank;
    for (const Expr *a : c->arguments())
      dep = join(dep, depOf(a));
    if (const auto *m = dyn_cast<CXXMemberCallExpr>(c))
      dep = join(dep, depOf(m->getImplicitObjectArgument()));
    return dep;
  }

  Dep depOf(const Expr *e) {
    e = strip(e);
    if (!e)
      return Dep::Uniform;
    if (isa<IntegerLiteral>(e) || isa<FloatingLiteral>(e) || isa<StringLiteral>(e) ||
        isa<CXXBoolLiteralExpr>(e) || isa<CharacterLiteral>(e) || isa<CXXNullPtrLiteralExpr>(e) ||
        isa<CXXThisExpr>(e) || isa<LambdaExpr>(e) || isa<UnaryExprOrTypeTraitExpr>(e))
      return Dep::Uniform;
    if (const auto *dr = dyn_cast<DeclRefExpr>(e)) {
      if (const CounterScope *c = counterScopeAt(dr->getDecl(), dr->getBeginLoc()))
        return depOf(c->init);
      if (isa<VarDecl>(dr->getDecl()) || isa<FieldDecl>(dr->getDecl())) {
        if (agreedAt(dr->getDecl(), dr->getBeginLoc()))
          return Dep::Uniform;
        if (const Expr *def = reachingDef(dr))
          return depOf(def);
        return declDep(dr->getDecl());
      }
      return Dep::Uniform;
    }
    if (const auto *me = dyn_cast<MemberExpr>(e)) {
      if (isa<FieldDecl>(me->getMemberDecl()) || isa<VarDecl>(me->getMemberDecl())) {
        if (agreedAt(me->getMemberDecl(), me->getBeginLoc()))
          return Dep::Uniform;
        Dep base = depOf(me->getBase());
        return join(base, declDep(me->getMemberDecl()));
      }
      return depOf(me->getBase());
    }
    if (const auto *c = dyn_cast<CallExpr>(e))
      return callDep(c);
    if (const auto *c = dyn_cast<CXXConstructExpr>(e)) {
      CallInfo info = api.classifyConstruct(c);
      if (info.role == CallRole::LocalSource)
        return Dep::Local;
      Dep dep = Dep::Uniform;
      for (const Expr *a : c->arguments())
        dep = join(dep, depOf(a));
      return dep;
    }
    // `sum = i = 0` is worth what is assigned, not what the variables held before.
    if (const auto *b = dyn_cast<BinaryOperator>(e); b && b->getOpcode() == BO_Assign)
      return depOf(b->getRHS());
    Dep dep = Dep::Uniform;
    for (const Stmt *child : e->children())
      if (const auto *ce = dyn_cast_or_null<Expr>(child))
        dep = join(dep, depOf(ce));
    return dep;
  }

  // --- the rank itself ------------------------------------------------------
  bool isRank(const Expr *e, int depth = 0) {
    e = strip(e);
    if (!e || depth > 8)
      return false;
    if (const auto *c = dyn_cast<CallExpr>(e)) {
      CallInfo info = api.classify(c);
      if (info.role == CallRole::RankSource && info.arg < 0)
        return true;
      if (const ExportedFunction *x = externalOf(c); x && x->returnsRank && info.role == CallRole::None)
        return true;
      if (const FunctionDecl *fd = c->getDirectCallee()) {
        if (isStoiLike(qualifiedName(fd)) && c->getNumArgs() >= 1)
          return isRank(c->getArg(0), depth + 1);
        if (const FunctionDecl *def = bodyOf(fd); def && def->getNumParams() == 0) {
          auto it = returns.find(def->getCanonicalDecl());
          if (it != returns.end() && it->second.size() == 1)
            return isRank(it->second[0], depth + 1);
        }
      }
      if (const auto *m = dyn_cast<CXXMemberCallExpr>(c)) // std::string(getenv("RANK")).c_str() etc.
        if (m->getMethodDecl() && m->getMethodDecl()->getName() == "c_str")
          return isRank(m->getImplicitObjectArgument(), depth + 1);
      return false;
    }
    if (const auto *ce = dyn_cast<CXXConstructExpr>(e))
      return writtenArgs(ce) == 1 && isRank(ce->getArg(0), depth + 1);
    const ValueDecl *d = declOf(e);
    if (!d)
      return false;
    d = cast<ValueDecl>(d->getCanonicalDecl());
    if (auto b = bindings.find(d); b != bindings.end())
      return isRank(b->second, depth + 1);
    if (seeds.count(d) || agreedAt(d, e->getBeginLoc()))
      return false;
    if (rankSinks.count(d))
      return true;
    if (bindDepth > 0 && isa<ParmVarDecl>(d))
      return false; // an unbound parameter of a helper being read: not the caller's rank
    if (auto m = rankMemo.find(d); m != rankMemo.end() && bindDepth == 0)
      return m->second;
    if (rankBusy.count(d))
      return false;
    rankBusy.insert(d);
    bool res = false;
    const std::vector<const Expr *> ds = realDefs(d);
    auto o = outRole.find(d);
    if (o != outRole.end())
      res = o->second == Dep::Rank && ds.empty();
    else if (const auto *p = dyn_cast<ParmVarDecl>(d); p && defsOf(d).empty())
      res = heuristicRankParam(p);
    else if (const auto *f = dyn_cast<FieldDecl>(d); f && ds.empty())
      res = heuristicRankField(f);
    else if (ds.empty() && rankFromElsewhere(d))
      res = true;
    else if (!ds.empty()) {
      res = true;
      for (const Expr *def : ds)
        if (!isRank(def, depth + 1)) {
          res = false;
          break;
        }
    }
    rankBusy.erase(d);
    if (bindDepth == 0)
      rankMemo[d] = res;
    return res;
  }

  // The world size: a size source's result, or a variable only it wrote.
  bool isWorldSize(const Expr *e, int depth = 0) {
    e = strip(e);
    if (!e || depth > 6)
      return false;
    if (const auto *c = dyn_cast<CallExpr>(e)) {
      CallInfo info = api.classify(c);
      if (info.role == CallRole::WorldSize && info.arg < 0)
        return true;
      if (const FunctionDecl *fd = c->getDirectCallee())
        if (isStoiLike(qualifiedName(fd)) && c->getNumArgs() >= 1)
          return isWorldSize(c->getArg(0), depth + 1);
      return false;
    }
    const ValueDecl *d = declOf(e);
    if (!d)
      return false;
    if (worldSizeOut.count(d->getCanonicalDecl()))
      return realDefs(d).empty();
    const std::vector<const Expr *> ds = realDefs(d);
    if (ds.empty()) {
      // The size beside the rank in a struct that holds their communicator
      // (IMB's `comm_info { rank, num_procs, communicator }`), filled in
      // another file: as heuristicRankField.
      const auto *f = dyn_cast<FieldDecl>(d);
      if (!f || !f->getIdentifier() || !f->getType()->isIntegralOrEnumerationType())
        return false;
      static const char *names[] = {"size", "num_procs", "nprocs", "world_size", "num_ranks",
                                    "nranks", "n_procs", "numprocs", "worldSize", "numRanks"};
      bool sizeName = false;
      for (const char *n : names)
        sizeName = sizeName || f->getName() == n;
      bool comm = false, rank = false;
      for (const FieldDecl *other : f->getParent()->fields()) {
        comm = comm || api.isCommunicatorType(other->getType());
        rank = rank || (other->getIdentifier() && rankLikeName(other->getName()));
      }
      return sizeName && comm && rank;
    }
    for (const Expr *def : ds)
      if (!isWorldSize(def, depth + 1))
        return false;
    return true;
  }

  // (rank [% m]) or a constant
  // The node-local rank: read from LOCAL_RANK (or the launcher's equivalent)
  // through conversions and variables.  `local_rank == 0` passes one process
  // per node, not one per job.
  bool isLocalRank(const Expr *e, int depth = 0) {
    e = strip(e);
    if (!e || depth > 8)
      return false;
    if (const auto *c = dyn_cast<CallExpr>(e)) {
      CallInfo info = api.classify(c);
      if (info.role == CallRole::RankSource && info.arg < 0) {
        for (const auto &v : core::builtinPythonApi().localRankEnvVars)
          if (info.op.find("\"" + v + "\"") != std::string::npos)
            return true;
        return false;
      }
      if (const FunctionDecl *fd = c->getDirectCallee())
        if (isStoiLike(qualifiedName(fd)) && c->getNumArgs() >= 1)
          return isLocalRank(c->getArg(0), depth + 1);
      if (const auto *m = dyn_cast<CXXMemberCallExpr>(c))
        if (m->getMethodDecl() && m->getMethodDecl()->getName() == "c_str")
          return isLocalRank(m->getImplicitObjectArgument(), depth + 1);
      return false;
    }
    if (const auto *ce = dyn_cast<CXXConstructExpr>(e))
      return writtenArgs(ce) == 1 && isLocalRank(ce->getArg(0), depth + 1);
    const ValueDecl *d = declOf(e);
    if (!d)
      return false;
    const std::vector<const Expr *> ds = realDefs(cast<ValueDecl>(d->getCanonicalDecl()));
    if (ds.empty())
      return false;
    for (const Expr *def : ds)
      if (!isLocalRank(def, depth + 1))
        return false;
    return true;
  }

  bool rankOperand(const Expr *e, std::int64_t &mod) {
    e = strip(e);
    mod = 0;
    if (const auto *b = dyn_cast_or_null<BinaryOperator>(e); b && b->getOpcode() == BO_Rem) {
      std::optional<std::int64_t> v = constInt(b->getRHS(), ctx);
      if (v && *v > 0 && isRank(b->getLHS())) {
        mod = *v;
        return true;
      }
      return false;
    }
    return isRank(e);
  }

  std::string text(const Expr *e) const {
    const SourceManager &sm = ctx.getSourceManager();
    CharSourceRange r = CharSourceRange::getTokenRange(sm.getExpansionRange(e->getSourceRange()).getAsRange());
    // Inside a macro, the expression's own spelling reads better than the
    // whole macro invocation.
    SourceLocation b = e->getBeginLoc(), en = e->getEndLoc();
    // `e_ != MPI_SUCCESS` in a check macro: the end token is itself a macro
    // whose spelling is in mpi.h; step out to where the macro spells it.
    if (b.isMacroID())
      for (int i = 0; i < 8 && en.isMacroID() &&
                      sm.getFileID(sm.getSpellingLoc(en)) != sm.getFileID(sm.getSpellingLoc(b));
           ++i)
        en = sm.getImmediateMacroCallerLoc(en);
    if (b.isMacroID() && en.isMacroID()) {
      SourceLocation sb = sm.getSpellingLoc(b), se = sm.getSpellingLoc(en);
      if (sm.getFileID(sb) == sm.getFileID(se) && !sm.isBeforeInTranslationUnit(se, sb))
        r = CharSourceRange::getTokenRange(sb, se);
    }
    std::string s = Lexer::getSourceText(r, sm, ctx.getLangOpts()).str();
    std::string out;
    bool space = false;
    for (char c : s) { // one line, single spaces
      if (c == '\n' || c == '\t' || c == ' ') {
        space = true;
        continue;
      }
      if (space && !out.empty())
        out += ' ';
      space = false;
      out += c;
    }
    if (out.size() > 60)
      out = out.substr(0, 57) + "...";
    return out;
  }

  Cond withText(Cond c, const Expr *e) {
    c.text = text(e);
    c.loc = locs.add(e->getBeginLoc());
    if ((c.kind == Cond::Kind::Atom || c.kind == Cond::Kind::RankCmp) && c.dep != Dep::Uniform)
      c.group = rankGroup(e);
    return c;
  }

  // --- communicator holders ----------------------------------------------
  // A record with a communicator member: FasterTransformer's `NcclParam
  // {int rank_, world_size_; ncclComm_t nccl_comm_;}`, one per parallel group.
  bool commHolderType(QualType t) const {
    if (t.isNull())
      return false;
    t = t.getNonReferenceType();
    if (t->isPointerType())
      t = t->getPointeeType();
    const RecordDecl *r = t->getAsRecordDecl();
    if (!r || !r->getDefinition())
      return false;
    for (const FieldDecl *f : r->getDefinition()->fields())
      if (api.isCommunicatorType(f->getType()))
        return true;
    return false;
  }
  static std::string holderName(const Expr *e) {
    const ValueDecl *d = declOf(e);
    return d && d->getIdentifier() ? d->getName().str() : std::string();
  }
  // The one holder whose members a rank test reads (`pipeline_para_.rank_ ==
  // pipeline_para_.world_size_ - 1`, or a helper of the unit that returns such
  // a test: `isValidLayerParallelId(l)`), else "".
  std::string rankGroup(const Expr *e) {
    std::set<std::string> groups;
    bool other = false;
    std::function<void(const Stmt *, int)> walk = [&](const Stmt *s, int depth) {
      if (!s || groups.size() > 1)
        return;
      if (const auto *m = dyn_cast<MemberExpr>(s); m && commHolderType(m->getBase()->getType()) &&
                                                    isa<FieldDecl>(m->getMemberDecl())) {
        const std::string h = holderName(m->getBase());
        if (h.empty())
          other = true;
        else
          groups.insert(h);
        return;
      }
      if (const auto *c = dyn_cast<CallExpr>(s); c && depth < 2)
        if (const FunctionDecl *fd = c->getDirectCallee()) {
          const FunctionDecl *t = fd->getTemplateInstantiationPattern();
          for (const FunctionDecl *f : {fd, t})
            if (f)
              if (auto r = returns.find(f->getCanonicalDecl()); r != returns.end())
                for (const Expr *ret : r->second)
                  walk(ret, depth + 1);
        }
      for (const Stmt *k : s->children())
        walk(k, depth);
    };
    walk(e, 0);
    return groups.size() == 1 && !other ? *groups.begin() : std::string();
  }
  std::string commGroupOf(const CallExpr *c) {
    std::set<std::string> groups;
    for (const Expr *a : c->arguments()) {
      const Expr *x = strip(a);
      if (!x)
        continue;
      if (commHolderType(x->getType())) {
        groups.insert(holderName(x));
      } else if (const auto *m = dyn_cast<MemberExpr>(x);
                 m && api.isCommunicatorType(m->getType()) && commHolderType(m->getBase()->getType())) {
        groups.insert(holderName(m->getBase()));
      }
    }
    return groups.size() == 1 ? *groups.begin() : std::string();
  }

  // A call of getenv & co.: its result tested against null is a presence test.
  static bool envPresenceRead(const Expr *e) {
    const auto *c = dyn_cast_or_null<CallExpr>(e ? e->IgnoreParenImpCasts() : nullptr);
    const FunctionDecl *fd = c ? c->getDirectCallee() : nullptr;
    return fd && nameIn(qualifiedName(fd), core::builtinApi().envFunctions);
  }
  // The predefined MPI handle an expression spells (`MPI_COMM_NULL`,
  // `MPI_COMM_SELF`, `MPI_FILE_NULL`, ...), or "": by the macro the user
  // wrote, else by Open MPI's object behind it (`&ompi_mpi_comm_null`).
  std::string mpiHandle(const Expr *e) const {
    if (!e)
      return "";
    const SourceManager &sm = ctx.getSourceManager();
    e = e->IgnoreParenCasts();
    for (SourceLocation l = e->getBeginLoc(); l.isMacroID(); l = sm.getImmediateMacroCallerLoc(l)) {
      llvm::StringRef m = Lexer::getImmediateMacroName(l, sm, ctx.getLangOpts());
      if (m.starts_with("MPI_") && (m.ends_with("_NULL") || m == "MPI_COMM_SELF" || m == "MPI_COMM_WORLD"))
        return m.str();
    }
    if (const auto *u = dyn_cast<UnaryOperator>(e); u && u->getOpcode() == UO_AddrOf)
      e = u->getSubExpr()->IgnoreParenCasts();
    if (const auto *d = dyn_cast<DeclRefExpr>(e)) {
      llvm::StringRef n = d->getDecl()->getName();
      if (n.consume_front("ompi_mpi_"))
        return "MPI_" + n.upper();
    }
    return "";
  }
  // An NCCL communicator handle (`ncclComm_t`, a pointer to the opaque
  // `struct ncclComm`): null where this rank is no member (ncclCommSplit's
  // NCCL_SPLIT_NOCOLOR) or before init, as MPI_COMM_NULL is.
  static bool ncclCommHandle(const Expr *e) {
    if (!e)
      return false;
    QualType t = e->IgnoreParenImpCasts()->getType();
    if (!t->isPointerType())
      return false;
    const RecordDecl *r = t->getPointeeType()->getAsRecordDecl();
    return r && r->getName() == "ncclComm";
  }
  bool isNullPointer(const Expr *e) const {
    return e && e->IgnoreParenImpCasts()->isNullPointerConstant(
                    ctx, Expr::NPC_ValueDependentIsNotNull) != Expr::NPCK_NotNull;
  }

  Cond condOf(const Expr *e) {
    const Expr *orig = e;
    // `if (getenv("SLURM_PROCID"))`: a presence test, uniform.
    if (e && envPresenceRead(e) && e->IgnoreParenImpCasts()->getType()->isPointerType())
      return withText(Cond::atom(text(orig), Dep::Uniform), orig);
    e = strip(e);
    if (!e)
      return Cond::constant(true);
    // `if (comm)`, `if (!comm)` of an NCCL communicator: membership (above).
    if (ncclCommHandle(e))
      return withText(Cond::atom(text(orig), Dep::Uniform), orig);
    if (++condDepth > 12) {
      --condDepth;
      return withText(Cond::atom(text(orig), depOf(orig)), orig);
    }
    struct Guard {
      int &d;
      ~Guard() { --d; }
    } g{condDepth};
    if (const auto *b = dyn_cast<CXXBoolLiteralExpr>(e))
      return Cond::constant(b->getValue());
    // What the compiler folds is decided before any rank runs it (IMB's
    // `rank == 0 && strlen(OUTPUT_FILENAME) > 0` with the name "").
    if (!e->isValueDependent() && !e->isTypeDependent()) {
      bool value = false;
      if (e->EvaluateAsBooleanCondition(value, ctx))
        return Cond::constant(value);
    }
    if (const auto *u = dyn_cast<UnaryOperator>(e); u && u->getOpcode() == UO_LNot) {
      Cond c = Cond::negate(condOf(u->getSubExpr()));
      return withText(c, orig);
    }
    if (const auto *b = dyn_cast<BinaryOperator>(e)) {
      if (b->getOpcode() == BO_LAnd || b->getOpcode() == BO_LOr) {
        Cond l = condOf(b->getLHS()), r = condOf(b->getRHS());
        Cond c = b->getOpcode() == BO_LAnd ? Cond::both(l, r) : Cond::either(l, r);
        return withText(c, orig);
      }
      if (b->isComparisonOp()) {
        // `getenv("OMPI_COMM_WORLD_LOCAL_RANK") == NULL`: whether the launcher
        // set the variable, which it does for every rank alike.
        if ((b->getOpcode() == BO_EQ || b->getOpcode() == BO_NE) &&
            ((envPresenceRead(b->getLHS()) && isNullPointer(b->getRHS())) ||
             (envPresenceRead(b->getRHS()) && isNullPointer(b->getLHS()))))
          return withText(Cond::atom(text(orig), Dep::Uniform), orig);
        // `comm != MPI_COMM_NULL`, `fh != MPI_FILE_NULL`: whether this rank
        // holds the communicator or file, i.e. is a member of the group that
        // calls its collectives; membership, not a divergence.  The same for
        // an NCCL communicator tested against null (`comms[i] != NULL`).
        if (b->getOpcode() == BO_EQ || b->getOpcode() == BO_NE) {
          std::string l = mpiHandle(b->getLHS()), r = mpiHandle(b->getRHS());
          if (llvm::StringRef(l).ends_with("_NULL") || llvm::StringRef(r).ends_with("_NULL"))
            return withText(Cond::atom(text(orig), Dep::Uniform), orig);
          if ((ncclCommHandle(b->getLHS()) && isNullPointer(b->getRHS())) ||
              (ncclCommHandle(b->getRHS()) && isNullPointer(b->getLHS())))
            return withText(Cond::atom(text(orig), Dep::Uniform), orig);
        }
        std::int64_t mod = 0;
        core::CmpOp op;
        switch (b->getOpcode()) {
        case BO_EQ: op = core::CmpOp::EQ; break;
        case BO_NE: op = core::CmpOp::NE; break;
        case BO_LT: op = core::CmpOp::LT; break;
        case BO_LE: op = core::CmpOp::LE; break;
        case BO_GT: op = core::CmpOp::GT; break;
        default: op = core::CmpOp::GE; break;
        }
        auto flip = [](core::CmpOp o) {
          switch (o) {
          case core::CmpOp::LT: return core::CmpOp::GT;
          case core::CmpOp::LE: return core::CmpOp::GE;
          case core::CmpOp::GT: return core::CmpOp::LT;
          case core::CmpOp::GE: return core::CmpOp::LE;
          default: return o;
          }
        };
        // rank < size always holds; rank >= size never does (MBI's
        // `if (rank < nprocs)` guard around every code).
        for (int side = 0; side < 2; ++side) {
          const Expr *r = side ? b->getRHS() : b->getLHS();
          const Expr *w = side ? b->getLHS() : b->getRHS();
          core::CmpOp o = side ? flip(op) : op; // rank `o` size
          if (isWorldSize(w) && isRank(r)) {
            if (o == core::CmpOp::LT || o == core::CmpOp::LE || o == core::CmpOp::NE)
              return withText(Cond::constant(true), orig);
            if (o == core::CmpOp::GE || o == core::CmpOp::GT || o == core::CmpOp::EQ)
              return withText(Cond::constant(false), orig);
          }
          // rank <= size - 1 (IMB's exchange): the same bound.
          if (const auto *m = dyn_cast<BinaryOperator>(strip(w));
              m && m->getOpcode() == BO_Sub && isWorldSize(m->getLHS()) && constInt(m->getRHS(), ctx) == 1 &&
              isRank(r)) {
            if (o == core::CmpOp::LE)
              return withText(Cond::constant(true), orig);
            if (o == core::CmpOp::GT)
              return withText(Cond::constant(false), orig);
          }
        }
        // `p == rank` with `p` sweeping 0..size: each rank's turn comes once.
        if (op == core::CmpOp::EQ)
          for (int side = 0; side < 2; ++side) {
            const Expr *r = side ? b->getRHS() : b->getLHS();
            const Expr *k = side ? b->getLHS() : b->getRHS();
            const ValueDecl *kd = declOf(k);
            auto lc = kd ? loopCounters.find(kd->getCanonicalDecl()) : loopCounters.end();
            if (lc != loopCounters.end() && isWorldSize(lc->second) && isRank(r)) {
              Cond atom = Cond::atom("sweep:" + text(orig), Dep::Rank);
              atom.sweep = true;
              return withText(atom, orig);
            }
          }
        std::optional<std::int64_t> rv = constInt(b->getRHS(), ctx);
        std::optional<std::int64_t> lv = constInt(b->getLHS(), ctx);
        // `local_rank == 0`: true on local rank 0 of every node.
        for (int side = 0; side < 2; ++side) {
          const std::optional<std::int64_t> &v = side ? lv : rv;
          const Expr *r = side ? b->getRHS() : b->getLHS();
          if (!v || !isLocalRank(r))
            continue;
          const core::CmpOp o = side ? flip(op) : op; // local `o` v
          auto holds = [&](std::int64_t l) { return core::compare(o, l, *v); };
          const bool zero = holds(0), others = holds(1) || holds(2);
          Cond local = Cond::atom("local-main", Dep::Rank);
          local.localMain = true;
          if (zero && !others)
            return withText(local, orig);
          if (!zero && others)
            return withText(Cond::negate(local), orig);
          return withText(Cond::atom("local:" + text(orig), Dep::Rank), orig);
        }
        if (rv && rankOperand(b->getLHS(), mod))
          return withText(Cond::rankCmp(op, *rv, mod), orig);
        if (lv && rankOperand(b->getRHS(), mod))
          return withText(Cond::rankCmp(flip(op), *lv, mod), orig);
      }
    }
    if (const auto *c = dyn_cast<CallExpr>(e)) {
      CallInfo info = api.classify(c);
      if (info.role == CallRole::MainProcess)
        return withText(Cond::rankCmp(core::CmpOp::EQ, 0), orig);
      // `bool is_main() { return world_rank() == 0; }` in another unit.
      if (const ExportedFunction *x = externalOf(c);
          x && x->predicate && info.role == CallRole::None && c->getNumArgs() == 0) {
        Cond inner = *x->predicate;
        inner.text = text(orig);
        inner.loc = locs.add(orig->getBeginLoc());
        return inner;
      }
      // A helper with parameters, `bool is_main_process(int r) { return r == 0; }`
      // called as `is_main_process(rank)`: read its condition with the
      // parameters standing for the arguments.
      if (const FunctionDecl *def = bodyOf(c->getDirectCallee());
          def && def->getNumParams() > 0 && def->getNumParams() == c->getNumArgs() &&
          !isa<CXXOperatorCallExpr>(c) && bindDepth < 3) {
        auto it = returns.find(def->getCanonicalDecl());
        if (it != returns.end() && it->second.size() == 1) {
          std::vector<std::pair<const Decl *, const Expr *>> saved;
          bool anyRank = false;
          for (unsigned i = 0; i < def->getNumParams(); ++i) {
            const Decl *p = def->getParamDecl(i)->getCanonicalDecl();
            auto old = bindings.find(p);
            saved.emplace_back(p, old == bindings.end() ? nullptr : old->second);
            bindings[p] = c->getArg(i);
            anyRank = anyRank || isRank(c->getArg(i));
          }
          Cond inner;
          if (anyRank) {
            ++bindDepth;
            inner = condOf(it->second[0]);
            --bindDepth;
          }
          for (auto &[p, old] : saved) {
            if (old)
              bindings[p] = old;
            else
              bindings.erase(p);
          }
          if (anyRank && (inner.kind == Cond::Kind::RankCmp || inner.kind == Cond::Kind::Not ||
                          inner.kind == Cond::Kind::And || inner.kind == Cond::Kind::Or)) {
            inner.text = text(orig);
            inner.loc = locs.add(orig->getBeginLoc());
            return inner;
          }
        }
      }
      // A helper like `bool is_main() { return rank() == 0; }`.
      if (const FunctionDecl *def = bodyOf(c->getDirectCallee()); def && def->getNumParams() == 0) {
        auto it = returns.find(def->getCanonicalDecl());
        if (it != returns.end() && it->second.size() == 1 && depOf(it->second[0]) != Dep::Uniform) {
          Cond inner = condOf(it->second[0]);
          if (inner.kind == Cond::Kind::RankCmp || inner.kind == Cond::Kind::Not ||
              inner.kind == Cond::Kind::And || inner.kind == Cond::Kind::Or) {
            inner.text = text(orig);
            inner.loc = locs.add(orig->getBeginLoc());
            return inner;
          }
        }
      }
    }
    // `if (rank)`: non-zero.
    if (isIntegerTyped(e) && !e->getType()->isBooleanType() && isRank(e))
      return withText(Cond::rankCmp(core::CmpOp::NE, 0), orig);
    // A local bool defined once: `const bool is_main = rank == 0;`.
    if (const ValueDecl *d = declOf(e); d && isTruthTyped(e, ctx)) {
      const std::vector<const Expr *> ds = realDefs(d);
      if (ds.size() == 1 && !agreedAt(d, e->getBeginLoc()) && !seeds.count(d->getCanonicalDecl()) &&
          !outRole.count(d->getCanonicalDecl())) {
        Cond inner = condOf(ds[0]);
        if (inner.dependence() != Dep::Uniform) {
          inner.text = text(orig);
          inner.loc = locs.add(orig->getBeginLoc());
          return inner;
        }
      }
    }
    Dep dep = depOf(e);
    std::string key;
    bool probe = probesFile(e);
    const bool status = statusCheck(e);
    if (status)
      dep = Dep::Local; // a failure can strike one rank alone
    if (const ValueDecl *d = declOf(e))
      key = "decl:" + std::to_string(reinterpret_cast<std::uintptr_t>(d->getCanonicalDecl()));
    else
      key = "text:" + text(e) + localsKey(e);
    Cond atom = Cond::atom(key, dep);
    atom.probesFile = probe;
    atom.errorCheck = status;
    return withText(atom, orig);
  }

  // The locals an expression reads, for its atom's key: `rc != 0` in two
  // functions tests two variables (one a collective's status, one a count).
  static std::string localsKey(const Expr *e) {
    struct Walk : RecursiveASTVisitor<Walk> {
      std::string key;
      bool VisitDeclRefExpr(DeclRefExpr *r) {
        if (const auto *v = dyn_cast<VarDecl>(r->getDecl()); v && v->hasLocalStorage())
          key += "@" + std::to_string(reinterpret_cast<std::uintptr_t>(v->getCanonicalDecl()));
        return true;
      }
    } w;
    w.TraverseStmt(const_cast<Expr *>(e));
    return w.key;
  }

  // --- status checks ----------------------------------------------------------
  // The call whose result an expression holds: the call itself, or a local
  // assigned only from calls (`ncclResult_t r = cmd;` in a check macro).
  const CallExpr *statusCallOf(const Expr *e, int depth = 0) {
    e = strip(e);
    if (!e || depth > 3)
      return nullptr;
    if (const auto *c = dyn_cast<CallExpr>(e))
      return isa<CXXOperatorCallExpr>(c) ? nullptr : c;
    const ValueDecl *d = declOf(e);
    if (!d || !isa<VarDecl>(d) || isa<ParmVarDecl>(d))
      return nullptr;
    const CallExpr *first = nullptr;
    for (const Expr *def : defsOf(d)) {
      if (placeholder(def))
        continue;
      const CallExpr *c = statusCallOf(def, depth + 1);
      if (!c)
        return nullptr;
      if (!first)
        first = c;
    }
    return first;
  }

  static bool statusName(llvm::StringRef n) {
    return n.contains("Result") || n.contains("result") || n.contains("Error") ||
           n.contains("error") || n.contains("Status") || n.contains("status") ||
           n.contains("err_t") || n.contains("ret_t");
  }

  // A result type that reports success or failure: ncclResult_t, cudaError_t,
  // an enum with a *Success enumerator, a typedef named like a status.
  bool statusTyped(const CallExpr *c) {
    if (!typed(c) || c->getType()->isDependentType())
      return false;
    return statusType(c->getType());
  }
  bool statusType(QualType t) {
    if (t->isBooleanType() || !t->isIntegralOrEnumerationType())
      return false;
    if (statusName(t.getAsString()))
      return true;
    if (const auto *et = t->getAs<EnumType>())
      if (const EnumDecl *ed = et->getDecl()) {
        if (const EnumDecl *def = ed->getDefinition())
          ed = def; // LLVM 22's EnumType names the declaration it was written with
        for (const EnumConstantDecl *ec : ed->enumerators())
          if (ec->getName().contains("Success") || ec->getName().contains("SUCCESS"))
            return true;
      }
    return false;
  }

  // ncclSuccess, cudaSuccess, MPI_SUCCESS, EXIT_SUCCESS, testSuccess.
  bool successConstant(const Expr *e) {
    e = strip(e);
    if (!e)
      return false;
    const SourceManager &sm = ctx.getSourceManager();
    if (e->getBeginLoc().isMacroID()) {
      llvm::StringRef m = Lexer::getImmediateMacroName(e->getBeginLoc(), sm, ctx.getLangOpts());
      if (m.contains("SUCCESS") || m.ends_with("_OK"))
        return true;
    }
    if (const auto *dr = dyn_cast<DeclRefExpr>(e))
      if (const auto *ec = dyn_cast<EnumConstantDecl>(dr->getDecl()))
        return ec->getName().contains("Success") || ec->getName().contains("SUCCESS");
    return false;
  }

  // Values every rank parses alike: main's argc/argv and what comes from them.
  bool fromArguments(const CallExpr *c) {
    if (c->getNumArgs() == 0)
      return false;
    for (const Expr *a : c->arguments()) {
      const Expr *s = strip(a);
      if (const auto *u = dyn_cast_or_null<UnaryOperator>(s))
        s = strip(u->getSubExpr());
      if (!s || isa<IntegerLiteral, StringLiteral, CharacterLiteral>(s))
        continue;
      const auto *p = dyn_cast_or_null<ParmVarDecl>(declOf(s));
      const auto *fd = p ? dyn_cast<FunctionDecl>(p->getDeclContext()) : nullptr;
      if (!fd || !fd->isMain())
        return false;
    }
    return true;
  }

  // Does the condition test whether a call failed?
  bool statusCheck(const Expr *e, int depth = 0) {
    e = strip(e);
    if (!e || depth > 4)
      return false;
    if (const auto *u = dyn_cast<UnaryOperator>(e); u && u->getOpcode() == UO_LNot)
      return statusCheck(u->getSubExpr(), depth + 1);
    const CallExpr *c = nullptr;
    bool success = false;
    // `if (!status.ok()) return status;`: a Status object's success test
    // (absl::Status, arrow::Status, rocksdb::Status, tensorflow::Status).
    if (const auto *m = dyn_cast<CXXMemberCallExpr>(e)) {
      const CXXMethodDecl *md = m->getMethodDecl();
      const Expr *obj = m->getImplicitObjectArgument();
      if (!md || !obj || m->getNumArgs() != 0 || !md->getIdentifier())
        return false;
      const llvm::StringRef n = md->getName();
      if (n != "ok" && n != "IsOk" && n != "isOk" && n != "is_ok" && n != "Ok")
        return false;
      if (!statusName(obj->getType().getNonReferenceType().getUnqualifiedType().getAsString()))
        return false;
      c = statusCallOf(obj);
      success = true;
    } else if (const auto *b = dyn_cast<BinaryOperator>(e)) {
      if (!b->isComparisonOp())
        return false;
      for (int side = 0; side < 2 && !c; ++side) {
        const Expr *k = side ? b->getLHS() : b->getRHS();
        const Expr *v = side ? b->getRHS() : b->getLHS();
        bool isSuccess = successConstant(k);
        if (isSuccess || constInt(k, ctx)) {
          c = statusCallOf(v);
          success = isSuccess;
          // A status kept and handed on (a worker thread's result,
          // `TESTCHECK(threads[t].ret)`): a status-typed value against its
          // success constant is a failure test, whatever produced it.
          if (!c && isSuccess && typed(v) && !v->getType()->isDependentType() &&
              statusType(strip(v)->getType()))
            return true;
        }
      }
    } else {
      c = statusCallOf(e);
    }
    if (!c)
      return false;
    CallInfo info = api.classify(c);
    // A communication call's result is its status whatever its type: the
    // project's `int comm_allreduce(...)` wrapper, `MPI_Barrier(...) != 0`.
    const bool communication = info.role == CallRole::Collective ||
                               info.role == CallRole::Barrier ||
                               info.role == CallRole::PointToPoint;
    if (!success && !communication && !statusTyped(c))
      return false;
    if (info.role == CallRole::RankSource || info.role == CallRole::MainProcess ||
        info.role == CallRole::WorldSize || info.role == CallRole::LocalSource ||
        info.role == CallRole::EnvRead)
      return false;
    if (const FunctionDecl *fd = c->getDirectCallee())
      if (uniformInputFunction(fd))
        return false;
    return !fromArguments(c);
  }

  // Argument parsers: argv is the same on every rank under every launcher.
  static bool uniformInputFunction(const FunctionDecl *fd) {
    static const std::vector<std::string> names = {"getopt", "getopt_long", "getopt_long_only",
                                                   "argp_parse"};
    return nameIn(qualifiedName(fd), names);
  }

  static bool isFileProbe(const FunctionDecl *fd) {
    static const std::vector<std::string> probes = {
        "std::filesystem::exists", "std::filesystem::is_regular_file", "access", "stat",
        "std::experimental::filesystem::exists"};
    return fd && nameIn(qualifiedName(fd), probes);
  }

  // What a function writes to: the variables and literals its file writes,
  // checkpoint writes and directory creations are given as paths.
  struct WrittenPaths {
    std::set<const ValueDecl *> decls;
    std::set<std::string> literals;
  };
  std::map<const FunctionDecl *, WrittenPaths> writtenPaths;

  static void pathParts(const Expr *e, WrittenPaths &out) {
    struct Walk : RecursiveASTVisitor<Walk> {
      WrittenPaths *out;
      bool VisitDeclRefExpr(DeclRefExpr *r) {
        if (isa<VarDecl>(r->getDecl()))
          out->decls.insert(cast<ValueDecl>(r->getDecl()->getCanonicalDecl()));
        return true;
      }
      bool VisitMemberExpr(MemberExpr *m) {
        if (isa<FieldDecl>(m->getMemberDecl()))
          out->decls.insert(cast<ValueDecl>(m->getMemberDecl()->getCanonicalDecl()));
        return true;
      }
      bool VisitStringLiteral(StringLiteral *l) {
        out->literals.insert(std::string(l->getBytes()));
        return true;
      }
    } w;
    w.out = &out;
    w.TraverseStmt(const_cast<Expr *>(e));
  }

  // The function each file probe is in (filled by the indexer).
  std::unordered_map<const CallExpr *, const FunctionDecl *> probeFunction;

  // A file probe (`access(path, F_OK)`, `std::filesystem::exists(p)`)
  // answers alike on every rank of a job on shared storage, where a run's
  // inputs are.  It races when the same function writes what it asks about
  // (the create-once cache): one rank may ask after another wrote it.
  bool probeRacesWrite(const CallExpr *probe) {
    auto where = probeFunction.find(probe);
    const FunctionDecl *fn = where == probeFunction.end() ? nullptr : where->second;
    if (!fn || !fn->hasBody())
      return true;
    auto [it, fresh] = writtenPaths.try_emplace(fn->getCanonicalDecl());
    if (fresh) {
      struct Walk : RecursiveASTVisitor<Walk> {
        const ApiMatcher *api;
        WrittenPaths *out;
        bool VisitCallExpr(CallExpr *c) {
          const CallRole r = api->classify(c).role;
          const FunctionDecl *fd = c->getDirectCallee();
          const std::string q = fd ? qualifiedName(fd) : std::string();
          if (r == CallRole::FileWrite || r == CallRole::CheckpointWrite || q == "mkdir" ||
              q == "std::filesystem::create_directory" ||
              q == "std::filesystem::create_directories")
            for (const Expr *a : c->arguments())
              pathParts(a, *out);
          return true;
        }
        bool VisitCXXConstructExpr(CXXConstructExpr *c) {
          if (api->classifyConstruct(c).role == CallRole::FileWrite)
            for (const Expr *a : c->arguments())
              pathParts(a, *out);
          return true;
        }
      } w;
      w.api = &api;
      w.out = &it->second;
      w.TraverseStmt(fn->getBody());
    }
    WrittenPaths asked;
    for (const Expr *a : probe->arguments())
      pathParts(a, asked);
    for (const ValueDecl *d : asked.decls)
      if (it->second.decls.count(d))
        return true;
    for (const std::string &l : asked.literals)
      if (it->second.literals.count(l))
        return true;
    return false;
  }

  // Does the expression test for a file (std::filesystem::exists, access, stat)?
  bool probesFile(const Expr *e, int depth = 0) {
    e = strip(e);
    if (!e || depth > 6)
      return false;
    if (const auto *c = dyn_cast<CallExpr>(e))
      if (isFileProbe(c->getDirectCallee()))
        return true;
    if (const ValueDecl *d = declOf(e); d && isTruthTyped(e, ctx)) {
      const std::vector<const Expr *> ds = realDefs(d);
      if (ds.size() == 1)
        return probesFile(ds[0], depth + 1);
    }
    for (const Stmt *child : e->children())
      if (const auto *ce = dyn_cast_or_null<Expr>(child); ce && probesFile(ce, depth + 1))
        return true;
    return false;
  }
};

DependenceAnalyzer::DependenceAnalyzer(ASTContext &ctx, const ApiMatcher &api, LocTable &locs)
    : impl_(std::make_unique<Impl>(ctx, api, locs)) {}
DependenceAnalyzer::~DependenceAnalyzer() = default;

core::Dep DependenceAnalyzer::depOf(const Expr *e) { return impl_->depOf(e); }
bool DependenceAnalyzer::isRank(const Expr *e) { return impl_->isRank(e); }
core::Cond DependenceAnalyzer::condOf(const Expr *e) { return impl_->condOf(e); }
void DependenceAnalyzer::setExternalReturns(ExternalReturns lookup) {
  impl_->external = std::move(lookup);
}
void DependenceAnalyzer::setExternalRankGlobal(ExternalRankGlobal lookup) {
  impl_->externalRankGlobal = std::move(lookup);
  impl_->declMemo.clear();
  impl_->rankMemo.clear();
}
std::vector<const VarDecl *> DependenceAnalyzer::rankGlobals() {
  std::vector<const VarDecl *> out;
  auto consider = [&](const Decl *d) {
    const auto *v = dyn_cast<VarDecl>(d);
    if (v && v->hasGlobalStorage() && !v->isStaticLocal() && v->hasExternalFormalLinkage() &&
        impl_->realDefs(v).empty())
      out.push_back(v);
  };
  for (const auto &[d, dep] : impl_->outRole)
    if (dep == Dep::Rank)
      consider(d);
  for (const Decl *d : impl_->rankSinks)
    if (!impl_->outRole.count(d))
      consider(d);
  return out;
}

void DependenceAnalyzer::seed(const ValueDecl *d, core::Dep dep) {
  impl_->seeds[cast<ValueDecl>(d->getCanonicalDecl())] = dep;
  impl_->declMemo.clear();
  impl_->rankMemo.clear();
}
std::string DependenceAnalyzer::text(const Expr *e) const { return impl_->text(e); }
bool DependenceAnalyzer::distributed() const { return impl_->distributed; }
bool DependenceAnalyzer::isWorldCommunicator(const Expr *e) const {
  return impl_->mpiHandle(e) == "MPI_COMM_WORLD";
}
std::string DependenceAnalyzer::commGroupOf(const CallExpr *c) { return impl_->commGroupOf(c); }

bool DependenceAnalyzer::onSelfCommunicator(const CallExpr *c, const FunctionDecl *within) {
  for (const Expr *a : c->arguments())
    if (impl_->mpiHandle(a) == "MPI_COMM_SELF")
      return true;
  if (within && c->getNumArgs() > 0 && c->getDirectCallee() &&
      llvm::StringRef(c->getDirectCallee()->getName()).starts_with("MPI_File_"))
    if (const ValueDecl *h = Impl::declOf(Impl::stripAddr(c->getArg(0)))) {
      auto key = std::make_pair(within->getCanonicalDecl(), h->getCanonicalDecl());
      return impl_->selfFiles.count(key) && !impl_->sharedFiles.count(key);
    }
  return false;
}
bool DependenceAnalyzer::onSubCommunicator(const CallExpr *c) {
  for (const Expr *a : c->arguments()) {
    const ValueDecl *d = Impl::declOf(a);
    if (d && impl_->subComms.count(d->getCanonicalDecl()))
      return true;
  }
  return false;
}

} // namespace ddplint::clangfe
