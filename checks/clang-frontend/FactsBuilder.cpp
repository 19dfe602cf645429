#include "clang-frontend/FactsBuilder.h"

#include "clang-frontend/UserCode.h"
#include "ddplint/core/AsyncErrorFacts.h"
#include "ddplint/core/Catalog.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ASTLambda.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Lex/Lexer.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>

using namespace clang;

namespace ddplint::clangfe {

FactsBuilder::FactsBuilder(ASTContext &ctx, const ApiMatcher &api) : ctx_(ctx), api_(api) {}
FactsBuilder::~FactsBuilder() = default;

core::Loc FactsBuilder::loc(SourceLocation l) {
  if (l.isInvalid())
    return 0;
  auto [it, inserted] = interned_.try_emplace(l, 0);
  if (inserted)
    it->second = locs_.add(l);
  return it->second;
}

DependenceAnalyzer &FactsBuilder::deps() {
  if (!deps_)
    deps_ = std::make_unique<DependenceAnalyzer>(ctx_, api_, locs_);
  return *deps_;
}

namespace {

// A key for a function of the unit (canonical: a declaration and its
// definition are one function).
std::string keyOf(const FunctionDecl *fd) {
  if (!fd)
    return "";
  return "fn@" + std::to_string(reinterpret_cast<std::uintptr_t>(fd->getCanonicalDecl()));
}

// Arguments the user wrote: default arguments are filled in by Sema.
template <class CallLike> unsigned writtenArgs(const CallLike *call) {
  unsigned n = 0;
  for (const Expr *a : call->arguments()) {
    if (isa<CXXDefaultArgExpr>(a))
      break;
    ++n;
  }
  return n;
}

// ===== process groups ===========================================================

std::string shortName(const std::string &qualified) {
  // "c10d::ProcessGroupGloo::Options" -> "ProcessGroupGloo::Options"
  const auto first = qualified.find("::");
  return first == std::string::npos ? qualified : qualified.substr(first + 2);
}

const ValueDecl *declOf(const Expr *e) {
  e = e->IgnoreParenImpCasts();
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(e))
    if (op->getOperator() == OO_Arrow && op->getNumArgs() >= 1)
      return declOf(op->getArg(0));
  if (const auto *dre = dyn_cast<DeclRefExpr>(e))
    return dre->getDecl();
  if (const auto *me = dyn_cast<MemberExpr>(e))
    return me->getMemberDecl();
  return nullptr;
}

// The variable or member a freshly created object is stored in, looking
// through the conversions and temporaries an initialisation adds.
const ValueDecl *storedInto(const Expr *created, const LocalParents &lp) {
  const Stmt *cur = created;
  for (int depth = 0; depth < 10; ++depth) {
    if (const ValueDecl *d = lp.initialised(cur))
      return d;
    const auto *p = dyn_cast_or_null<Expr>(lp.parent(cur));
    if (!p)
      return nullptr;
    const Expr *curE = cast<Expr>(cur)->IgnoreImplicit();
    if (isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ExprWithCleanups,
            ParenExpr, CXXFunctionalCastExpr>(p)) {
      cur = p;
      continue;
    }
    if (const auto *ce = dyn_cast<CXXConstructExpr>(p)) {
      if (ce->getNumArgs() >= 1 && ce->getArg(0)->IgnoreImplicit() == curE) {
        cur = p;
        continue;
      }
      return nullptr;
    }
    if (const auto *bo = dyn_cast<BinaryOperator>(p))
      return bo->isAssignmentOp() && bo->getRHS()->IgnoreImplicit() == curE ? declOf(bo->getLHS())
                                                                            : nullptr;
    if (const auto *op = dyn_cast<CXXOperatorCallExpr>(p))
      return op->getOperator() == OO_Equal && op->getNumArgs() == 2 &&
                     op->getArg(1)->IgnoreImplicit() == curE
                 ? declOf(op->getArg(0))
                 : nullptr;
    return nullptr;
  }
  return nullptr;
}

// The body of the lambda (or else the function) the expression is written in.
const Stmt *enclosingBody(const Stmt *s, const LocalParents &lp, const FunctionDecl *fd) {
  for (const Stmt *p = lp.parent(s); p; p = lp.parent(p))
    if (const auto *le = dyn_cast<LambdaExpr>(p))
      return le->getBody();
  return fd->getBody();
}

bool isAssignedTo(const Expr *lhs, const LocalParents &lp) {
  const Stmt *cur = lhs;
  while (const Stmt *p = lp.parent(cur)) {
    if (isa<ParenExpr, ImplicitCastExpr>(p)) {
      cur = p;
      continue;
    }
    if (const auto *bo = dyn_cast<BinaryOperator>(p))
      return bo->isAssignmentOp() && bo->getLHS()->IgnoreParenImpCasts() == lhs;
    if (const auto *op = dyn_cast<CXXOperatorCallExpr>(p))
      return op->isAssignmentOp() && op->getArg(0)->IgnoreParenImpCasts() == lhs;
    return false;
  }
  return false;
}

// `opts->timeout = ...` or `opts.timeout = ...` anywhere in `body`.
bool timeoutAssigned(const ValueDecl *options, const Stmt *s, const LocalParents &lp) {
  if (!options || !s)
    return false;
  if (const auto *me = dyn_cast<MemberExpr>(s))
    if (me->getMemberDecl()->getDeclName().isIdentifier() &&
        me->getMemberDecl()->getName() == "timeout" && declOf(me->getBase()) == options &&
        isAssignedTo(me, lp))
      return true;
  for (const Stmt *kid : s->children())
    if (timeoutAssigned(options, kid, lp))
      return true;
  return false;
}

// A process-group backend from rules/api.yaml.
struct GroupClass {
  std::string className; // c10d::ProcessGroupGloo
  std::string backend;
  int optionsArg = -1;
};
struct OptionsClass {
  std::string className; // c10d::ProcessGroupGloo::Options
  std::string factory;   // c10d::ProcessGroupGloo::Options::create
  std::string backend;
  int timeoutArg = -1;
};

class GroupScanner {
public:
  GroupScanner(FactsBuilder &b, core::Facts &facts) : b_(b), facts_(facts) {
    const core::ApiCatalog &api = core::builtinApi();
    for (const auto &pg : api.processGroups)
      groups_.push_back({pg.className, pg.backend, pg.optionsArg});
    // Options objects with a factory `...::Options::create` (MPI has none).
    for (const auto &opt : api.processGroupOptions) {
      const std::string suffix = "::create";
      if (opt.factory.size() <= suffix.size() ||
          opt.factory.compare(opt.factory.size() - suffix.size(), suffix.size(), suffix) != 0)
        continue;
      options_.push_back({opt.factory.substr(0, opt.factory.size() - suffix.size()), opt.factory,
                          opt.backend, opt.timeoutArg});
    }
  }

  void examine(const Expr *e, const LocalParents &lp, const FunctionDecl *fd) {
    const Expr *created = nullptr;
    std::string cls;       // the class being created
    unsigned written = 0;  // arguments the user wrote
    SourceLocation rparen; // where a missing argument would go
    bool viaFactory = false;

    if (const auto *call = dyn_cast<CallExpr>(e)) {
      const FunctionDecl *callee = call->getDirectCallee();
      if (!callee || !callee->getDeclName().isIdentifier())
        return;
      const llvm::StringRef last = callee->getName();
      if (last == "create") {
        const std::string name = qualifiedName(callee);
        for (const auto &o : options_)
          if (o.factory == name)
            cls = o.className;
        if (cls.empty())
          return;
        viaFactory = true;
        written = writtenArgs(call);
      } else if (last == "make_intrusive" || last == "make_shared" || last == "make_unique") {
        // c10::make_intrusive, std::make_shared, std::make_unique (and a
        // project's own make_* of the same name).
        const TemplateArgumentList *targs = callee->getTemplateSpecializationArgs();
        if (!targs || targs->size() == 0 || targs->get(0).getKind() != TemplateArgument::Type)
          return;
        const auto *rd = targs->get(0).getAsType()->getAsCXXRecordDecl();
        if (!rd)
          return;
        cls = qualifiedName(rd);
        written = call->getNumArgs();
      } else {
        return;
      }
      created = call;
      rparen = call->getRParenLoc();
    } else if (const auto *ctor = dyn_cast<CXXConstructExpr>(e)) {
      // `new T(...)` and `T x(...)`; the constructions inside make_intrusive
      // live in a system header and are judged at the make_intrusive call.
      const CXXConstructorDecl *cd = ctor->getConstructor();
      if (!cd || cd->isCopyOrMoveConstructor())
        return;
      cls = qualifiedName(cd->getParent());
      created = ctor;
      written = writtenArgs(ctor);
      rparen = ctor->getParenOrBraceRange().getEnd();
    }
    if (!created || cls.empty())
      return;
    const GroupClass *group = nullptr;
    const OptionsClass *options = nullptr;
    for (const auto &g : groups_)
      if (g.className == cls)
        group = &g;
    if (!group)
      for (const auto &o : options_)
        if (o.className == cls)
          options = &o;
    if (!group && !options)
      return;
    // A template instantiated twice creates at one place: the first visit
    // (the instantiation, before its pattern) speaks for it.
    if (!seen_.insert(created->getBeginLoc()).second)
      return;
    // An instantiation shares its text with other instantiations: no edits there.
    const bool fixable = rparen.isValid() && !rparen.isMacroID() &&
                         !created->getBeginLoc().isMacroID() && !isInstantiation(fd);

    core::ProcessGroupCreation pg;
    pg.loc = b_.loc(created->getBeginLoc());
    pg.api = shortName(cls);
    const std::string backend = group ? group->backend : options->backend;
    pg.backend = backend;
    const OptionsClass *backendOptions = options;
    if (!backendOptions)
      for (const auto &o : options_)
        if (o.backend == backend)
          backendOptions = &o;
    pg.optionsTakeTimeoutArg = backendOptions && backendOptions->timeoutArg >= 0;
    pg.optionsApi = backendOptions ? backendOptions->className : "";
    if (group) {
      pg.kind = core::ProcessGroupCreation::Kind::Group;
      pg.acceptsOptions = group->optionsArg >= 0;
      pg.optionsGiven = group->optionsArg >= 0 && written > static_cast<unsigned>(group->optionsArg);
      // The options go last: insert them after the arguments written before.
      if (fixable && group->optionsArg >= 0 && written == static_cast<unsigned>(group->optionsArg) &&
          written > 0)
        pg.fixAnchor = b_.loc(rparen);
    } else {
      pg.kind = core::ProcessGroupCreation::Kind::Options;
      pg.timeoutGiven = options->timeoutArg >= 0 && written > static_cast<unsigned>(options->timeoutArg);
      const ValueDecl *stored = storedInto(created, lp);
      pg.timeoutAssignedLater = timeoutAssigned(stored, enclosingBody(created, lp, fd), lp);
      pg.optionsVar = stored ? stored->getNameAsString() : "";
      const bool pointer = !stored || stored->getType().isNull() ||
                           !stored->getType()->getAsCXXRecordDecl() ||
                           qualifiedName(stored->getType()->getAsCXXRecordDecl()) != cls;
      pg.optionsAccess = pointer ? "->" : ".";
      // Options::create() and make_intrusive<Options>() take the timeout first.
      if (fixable && written == 0 && options->timeoutArg == 0 &&
          (viaFactory || isa<CallExpr>(created) || isa<CXXTemporaryObjectExpr>(created)))
        pg.fixAnchor = b_.loc(rparen);
    }
    facts_.processGroups.push_back(std::move(pg));
  }

private:
  FactsBuilder &b_;
  core::Facts &facts_;
  std::vector<GroupClass> groups_;
  std::vector<OptionsClass> options_;
  llvm::DenseSet<SourceLocation> seen_;
};

// ===== environment ===============================================================

const Expr *ignoreStringWrappers(const Expr *e) {
  while (true) {
    // Explicit casts too: putenv(const_cast<char *>("NAME=1")).
    e = e->IgnoreParenCasts();
    if (const auto *bind = dyn_cast<CXXBindTemporaryExpr>(e)) {
      e = bind->getSubExpr();
      continue;
    }
    if (const auto *mt = dyn_cast<MaterializeTemporaryExpr>(e)) {
      e = mt->getSubExpr();
      continue;
    }
    if (const auto *ctor = dyn_cast<CXXConstructExpr>(e)) {
      if (ctor->getNumArgs() >= 1) {
        e = ctor->getArg(0);
        continue;
      }
      return e;
    }
    // std::string("X").c_str()
    if (const auto *mc = dyn_cast<CXXMemberCallExpr>(e)) {
      const auto *md = mc->getMethodDecl();
      if (md && (md->getName() == "c_str" || md->getName() == "data")) {
        e = mc->getImplicitObjectArgument();
        continue;
      }
      return e;
    }
    return e;
  }
}

// The string an argument spells: a literal, or a constant initialised with one
// (c10d::NCCL_ASYNC_ERROR_HANDLING in LibTorch 1.13).
std::optional<std::string> stringOf(const Expr *e, const StringLiteral **literal, int depth = 0) {
  if (!e || depth > 4)
    return std::nullopt;
  e = ignoreStringWrappers(e);
  if (const auto *sl = dyn_cast<StringLiteral>(e)) {
    if (!sl->isOrdinary() && !sl->isUTF8())
      return std::nullopt;
    if (literal && depth == 0)
      *literal = sl;
    return sl->getString().str();
  }
  if (const auto *dre = dyn_cast<DeclRefExpr>(e))
    if (const auto *vd = dyn_cast<VarDecl>(dre->getDecl()))
      if (vd->getType().isNull() || vd->getType().isConstQualified() ||
          vd->getType()->isPointerType() || vd->isConstexpr())
        if (const Expr *init = vd->getAnyInitializer())
          return stringOf(init, literal, depth + 1);
  return std::nullopt;
}

// ===== data loaders ==============================================================

bool refersTo(const Stmt *s, const ValueDecl *d) {
  if (!s || !d)
    return false;
  if (const auto *dre = dyn_cast<DeclRefExpr>(s))
    if (dre->getDecl() == d)
      return true;
  for (const Stmt *c : s->children())
    if (refersTo(c, d))
      return true;
  return false;
}

// `datasets[i]` or `datasets.at(i)` with `i` the loop's counter.
bool indexesWith(const Stmt *s, const ValueDecl *counter) {
  if (!s)
    return false;
  if (const auto *ase = dyn_cast<ArraySubscriptExpr>(s))
    if (refersTo(ase->getIdx(), counter))
      return true;
  if (const auto *op = dyn_cast<CXXOperatorCallExpr>(s))
    if (op->getOperator() == OO_Subscript && op->getNumArgs() == 2 &&
        refersTo(op->getArg(1), counter))
      return true;
  if (const auto *mc = dyn_cast<CXXMemberCallExpr>(s))
    if (const auto *md = mc->getMethodDecl())
      if (md->getName() == "at" && mc->getNumArgs() == 1 && refersTo(mc->getArg(0), counter))
        return true;
  for (const Stmt *c : s->children())
    if (indexesWith(c, counter))
      return true;
  return false;
}

// A loop that walks a collection of datasets and builds one loader per
// element runs once per element, not once per epoch.  Only the dataset
// argument counts: a loader rebuilt with the epoch as its sampler's seed
// (`for (auto epoch : c10::irange(n))`, `seeds[epoch]`) is rebuilt every epoch.
bool iteratesOverInputs(const Stmt *loop, const CallExpr *call) {
  if (call->getNumArgs() == 0)
    return false;
  const Expr *dataset = call->getArg(0);
  if (const auto *rf = dyn_cast<CXXForRangeStmt>(loop)) {
    const VarDecl *v = rf->getLoopVariable();
    return v && !v->getType().isNull() && !v->getType()->isIntegralOrEnumerationType() &&
           refersTo(dataset, v);
  }
  if (const auto *fs = dyn_cast<ForStmt>(loop))
    if (const auto *ds = dyn_cast_or_null<DeclStmt>(fs->getInit()))
      for (const Decl *d : ds->decls())
        if (const auto *vd = dyn_cast<VarDecl>(d))
          if (indexesWith(dataset, vd))
            return true;
  return false;
}

// The loops whose every iteration runs `s`, innermost first, within its own
// function (a lambda body is a function of its own).  With `factoryCall`,
// whether the call's dataset argument depends on each loop.
// A loop whose header names epochs (`for (int epoch = 0; ...)`, `while (epoch++ < n)`),
// as the Python frontend judges `for epoch in range(...)`: what runs in it runs once
// per epoch.
bool isEpochLoop(const Stmt *loop, const ASTContext &ctx) {
  const Stmt *body = nullptr;
  if (const auto *fs = dyn_cast<ForStmt>(loop))
    body = fs->getBody();
  else if (const auto *rf = dyn_cast<CXXForRangeStmt>(loop))
    body = rf->getBody();
  else if (const auto *ws = dyn_cast<WhileStmt>(loop))
    body = ws->getBody();
  if (!body || loop->getBeginLoc().isMacroID() || body->getBeginLoc().isMacroID())
    return false;
  const SourceManager &sm = ctx.getSourceManager();
  const llvm::StringRef header = Lexer::getSourceText(
      CharSourceRange::getCharRange(loop->getBeginLoc(), body->getBeginLoc()), sm,
      ctx.getLangOpts());
  return header.lower().find("epoch") != std::string::npos;
}

std::vector<core::LoopInfo> enclosingLoops(const Stmt *s, const LocalParents &lp,
                                           const CallExpr *factoryCall, FactsBuilder &b) {
  std::vector<core::LoopInfo> loops;
  const Stmt *child = s;
  for (const Stmt *parent = lp.parent(s); parent; child = parent, parent = lp.parent(parent)) {
    if (isa<LambdaExpr, BlockExpr>(parent))
      break;
    const Stmt *loop = nullptr;
    if (const auto *fs = dyn_cast<ForStmt>(parent)) {
      if (child != fs->getInit())
        loop = fs;
    } else if (const auto *rf = dyn_cast<CXXForRangeStmt>(parent)) {
      if (child == rf->getBody())
        loop = rf;
    } else if (isa<WhileStmt, DoStmt>(parent)) {
      loop = parent;
    }
    if (!loop)
      continue;
    core::LoopInfo info;
    info.loc = b.loc(loop->getBeginLoc());
    info.datasetDependsOnLoop = factoryCall && iteratesOverInputs(loop, factoryCall);
    info.perEpoch = isEpochLoop(loop, b.context());
    loops.push_back(info);
  }
  return loops;
}

// The function (or lambda call operator) a statement is written in.
const FunctionDecl *enclosingFunction(const Stmt *s, const LocalParents &lp,
                                      const FunctionDecl *fd) {
  for (const Stmt *p = lp.parent(s); p; p = lp.parent(p))
    if (const auto *le = dyn_cast<LambdaExpr>(p))
      return le->getCallOperator();
  return fd;
}

// The loader is kept beyond the iteration: pushed into a container or stored
// into an element, e.g. one loader per dataset built in a setup loop.
bool storedInContainer(const CallExpr *call, const LocalParents &lp) {
  const Stmt *cur = call;
  for (int depth = 0; depth < 10; ++depth) {
    const Stmt *p = lp.parent(cur);
    if (!p)
      return false;
    if (isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ExprWithCleanups,
            ParenExpr, CXXConstructExpr, CXXFunctionalCastExpr>(p)) {
      cur = p;
      continue;
    }
    if (const auto *mc = dyn_cast<CXXMemberCallExpr>(p)) {
      const auto *md = mc->getMethodDecl();
      if (!md || !md->getDeclName().isIdentifier())
        return false;
      static const std::set<std::string> kInserts = {
          "push_back", "emplace_back", "push_front", "emplace_front", "emplace",
          "insert",    "push",         "try_emplace", "insert_or_assign"};
      return kInserts.count(md->getName().str()) > 0;
    }
    if (const auto *ce = dyn_cast<CallExpr>(p)) {
      // std::move(make_data_loader(...)) into a container.
      if (const auto *fd = ce->getDirectCallee())
        if (fd->getDeclName().isIdentifier() && fd->getName() == "move" &&
            ce->getNumArgs() == 1) {
          cur = p;
          continue;
        }
    }
    const Expr *lhs = nullptr;
    if (const auto *bo = dyn_cast<BinaryOperator>(p); bo && bo->isAssignmentOp())
      lhs = bo->getLHS();
    else if (const auto *op = dyn_cast<CXXOperatorCallExpr>(p);
             op && op->getOperator() == OO_Equal && op->getNumArgs() == 2)
      lhs = op->getArg(0);
    if (!lhs)
      return false;
    lhs = lhs->IgnoreParenImpCasts();
    if (isa<ArraySubscriptExpr>(lhs))
      return true;
    if (const auto *sub = dyn_cast<CXXOperatorCallExpr>(lhs))
      return sub->getOperator() == OO_Subscript;
    return false;
  }
  return false;
}

} // namespace

// ===== the walks ===================================================================

void FactsBuilder::addProcessGroups(core::Facts &facts) {
  const SourceManager &sm = ctx_.getSourceManager();
  GroupScanner scanner(*this, facts);
  forEachUserFunction(ctx_.getTranslationUnitDecl(), sm, [&](const FunctionDecl *fd) {
    std::optional<LocalParents> lp;
    auto visit = [&](const Stmt *s) {
      if (!isa<CallExpr, CXXConstructExpr>(s) || !isUserCode(sm, s->getBeginLoc()))
        return;
      if (!lp)
        lp.emplace(fd);
      scanner.examine(cast<Expr>(s), *lp, fd);
    };
    // Constructor initialisers first (source order: the async rule reports at
    // the first NCCL group): `opts_(Options::create())`, `pg_(make_intrusive<PG>(...))`.
    if (const auto *ctor = dyn_cast<CXXConstructorDecl>(fd))
      for (const CXXCtorInitializer *init : ctor->inits())
        if (init->isWritten())
          forEachStmt(init->getInit(), visit);
    forEachStmt(fd->getBody(), visit);
  }, /*instantiations=*/true);
}

void FactsBuilder::addEnvironment(core::Facts &facts) {
  const SourceManager &sm = ctx_.getSourceManager();
  std::vector<std::string> envFunctions = {"setenv", "putenv"};
  for (const auto &f : api_.api().envFunctions)
    envFunctions.push_back(f);
  forEachUserFunction(ctx_.getTranslationUnitDecl(), sm, [&](const FunctionDecl *fd) {
    auto visit = [&](const Stmt *s) {
      const auto *call = dyn_cast<CallExpr>(s);
      if (!call || !isUserCode(sm, call->getBeginLoc()))
        return;
      const FunctionDecl *callee = call->getDirectCallee();
      if (!callee || !callee->getDeclName().isIdentifier() || call->getNumArgs() == 0 ||
          !llvm::is_contained(envFunctions, qualifiedName(callee)))
        return;
      const llvm::StringRef fn = callee->getName();
      core::EnvSetting use;
      use.loc = loc(call->getBeginLoc());
      use.isSet = fn == "setenv" || fn == "putenv";
      const StringLiteral *literal = nullptr;
      std::optional<std::string> name = stringOf(call->getArg(0), &literal);
      if (!name) {
        use.nameKnown = false;
        facts.env.push_back(use);
        return;
      }
      std::optional<std::string> value;
      if (fn == "putenv") {
        // putenv("NAME=VALUE")
        const auto eq = name->find('=');
        if (eq != std::string::npos) {
          value = name->substr(eq + 1);
          name->resize(eq);
        }
      } else if (fn == "setenv" && call->getNumArgs() >= 2) {
        value = stringOf(call->getArg(1), nullptr);
      }
      use.name = *name;
      use.valueKnown = value.has_value();
      use.value = value.value_or("");
      if (literal) {
        const SourceLocation at = literal->getBeginLoc();
        use.nameLoc = loc(at);
        // The new name is the old one with a prefix: inserted after the quote.
        use.renameFixable =
            !at.isMacroID() && literal->getNumConcatenated() == 1 && literal->isOrdinary();
      }
      facts.env.push_back(std::move(use));
    };
    // Constructor initialisers first: they run before the body.
    if (const auto *ctor = dyn_cast<CXXConstructorDecl>(fd))
      for (const CXXCtorInitializer *init : ctor->inits())
        if (init->isWritten())
          forEachStmt(init->getInit(), visit);
    forEachStmt(fd->getBody(), visit);
  }, /*instantiations=*/true);
}

void FactsBuilder::addVersions(core::Facts &facts, std::optional<int> major,
                               std::optional<int> minor) {
  core::TargetVersions &v = facts.versions;
  v.torchProduct = "LibTorch";
  if (major && minor) {
    v.torchBasis = core::TargetVersions::Basis::Exact;
    v.torchMajor = *major;
    v.torchMinor = *minor;
    return;
  }
  // What the headers declare: c10d::TORCH_NCCL_ASYNC_ERROR_HANDLING (from 2.2),
  // c10d::Backend (from 2.0).
  auto declaresInC10d = [&](llvm::StringRef name) {
    for (const NamedDecl *ns : ctx_.getTranslationUnitDecl()->lookup(&ctx_.Idents.get("c10d")))
      if (const auto *dc = dyn_cast<NamespaceDecl>(ns))
        if (!dc->lookup(&ctx_.Idents.get(name)).empty())
          return true;
    return false;
  };
  const core::AsyncErrorFacts &af = core::builtinAsyncErrorFacts();
  auto set = [&](core::TargetVersions::Basis basis, int version, std::string evidence) {
    v.torchBasis = basis;
    v.torchMajor = version / 100;
    v.torchMinor = version % 100;
    v.torchEvidence = std::move(evidence);
  };
  const core::AsyncErrorVersionRange *newest = af.versions.empty() ? nullptr : &af.versions.back();
  if (newest && !newest->reads.empty() && declaresInC10d(newest->reads.front()))
    set(core::TargetVersions::Basis::AtLeast, newest->from,
        "the headers declare c10d::" + newest->reads.front());
  else if (declaresInC10d("Backend"))
    set(core::TargetVersions::Basis::AtLeast, 200, "the headers declare c10d::Backend");
  else
    set(core::TargetVersions::Basis::AtMost, 113, "the headers declare no c10d::Backend");
}

namespace {
// `DataLoaderOptions().batch_size(64).workers(4)` among a loader factory's
// arguments: its worker threads (LibTorch's default is none).
core::DataLoaderCreation::Workers loaderWorkers(const CallExpr *call) {
  using Workers = core::DataLoaderCreation::Workers;
  Workers out = Workers::Absent;
  std::function<void(const Stmt *)> visit = [&](const Stmt *s) {
    if (!s)
      return;
    if (const auto *m = dyn_cast<CXXMemberCallExpr>(s))
      if (const auto *md = m->getMethodDecl();
          md && md->getName() == "workers" && m->getNumArgs() == 1) {
        Expr::EvalResult r;
        const Expr *n = m->getArg(0)->IgnoreParenImpCasts();
        if (!n->isValueDependent() && n->EvaluateAsInt(r, md->getASTContext()))
          out = r.Val.getInt().isZero() ? Workers::Zero : Workers::Positive;
        else
          out = Workers::Unknown;
      }
    for (const Stmt *k : s->children())
      visit(k);
  };
  for (const Expr *a : call->arguments())
    visit(a);
  return out;
}
} // namespace

void FactsBuilder::addDataLoaders(core::Facts &facts, const std::vector<std::string> &factories) {
  const SourceManager &sm = ctx_.getSourceManager();
  forEachUserFunction(ctx_.getTranslationUnitDecl(), sm, [&](const FunctionDecl *fd) {
    std::optional<LocalParents> lp;
    forEachStmt(fd->getBody(), [&](const Stmt *s) {
      const auto *call = dyn_cast<CallExpr>(s);
      if (!call || !isUserCode(sm, call->getBeginLoc()))
        return;
      const FunctionDecl *callee = call->getDirectCallee();
      if (!callee)
        return;
      const bool factory = nameIn(qualifiedName(callee), factories, /*suffixOk=*/true);
      // Other callees matter only when this unit defines them: they may be helpers.
      if (!factory && (!isUserCode(sm, callee->getLocation()) || !callee->isDefined()))
        return;
      if (!lp)
        lp.emplace(fd);
      const FunctionDecl *caller = enclosingFunction(call, *lp, fd);
      if (factory) {
        core::DataLoaderCreation dl;
        dl.loc = loc(call->getBeginLoc());
        dl.api = callee->getName().str();
        dl.function = keyOf(caller);
        dl.loops = enclosingLoops(call, *lp, call, *this);
        dl.storedInContainer = storedInContainer(call, *lp);
        dl.argsEnd = call->getRParenLoc().isMacroID() ? 0 : loc(call->getRParenLoc());
        dl.numWorkers = loaderWorkers(call);
        // A project's own factory may well start workers: no options seen is not none.
        if (dl.numWorkers == core::DataLoaderCreation::Workers::Absent &&
            !nameIn(qualifiedName(callee), core::builtinApi().dataLoaderFactories, true))
          dl.numWorkers = core::DataLoaderCreation::Workers::Unknown;
        facts.dataLoaders.push_back(std::move(dl));
        return;
      }
      core::HelperCall hc;
      // A lambda is called through its variable: name the variable, and
      // report at the object, where every LLVM version starts the call.
      hc.calleeName = callee->getNameAsString();
      SourceLocation at = call->getBeginLoc();
      if (const auto *op = dyn_cast<CXXOperatorCallExpr>(call)) {
        if (const auto *dre = dyn_cast<DeclRefExpr>(op->getArg(0)->IgnoreParenImpCasts()))
          hc.calleeName = dre->getDecl()->getNameAsString();
        if (op->getNumArgs() > 0)
          at = op->getArg(0)->getBeginLoc();
      }
      hc.loc = loc(at);
      hc.caller = keyOf(caller);
      hc.callee = keyOf(callee);
      hc.loops = enclosingLoops(call, *lp, nullptr, *this);
      hc.storedInContainer = storedInContainer(call, *lp);
      facts.calls.push_back(std::move(hc));
    });
  }, /*instantiations=*/true);
}

// ===== forward() ===================================================================

namespace {

// What a condition reads from forward()'s input.
enum Cause : unsigned { NoCause = 0, ShapeCause = 1, ValueCause = 2 };

// Tensor accessors that read the shape.
bool isShapeAccessor(llvm::StringRef n) {
  return n == "size" || n == "sizes" || n == "dim" || n == "ndimension" || n == "numel" ||
         n == "sym_size" || n == "sym_sizes" || n == "stride" || n == "strides";
}

// Tensor properties that are the same on every rank (device type, dtype, layout,
// whether an optional input was given): not the input's shape or values.
bool isUniformMetadata(llvm::StringRef n) {
  return n == "defined" || n == "is_cuda" || n == "is_cpu" || n == "device" || n == "dtype" ||
         n == "scalar_type" || n == "options" || n == "layout" || n == "is_sparse" ||
         n == "requires_grad" || n == "get_device" || n == "is_contiguous" ||
         n == "is_floating_point" || n == "is_complex" || n == "is_quantized" || n == "type";
}

// Operations whose result shape is given by their arguments.
bool isShapeOp(llvm::StringRef n) {
  static const std::set<std::string> kOps = {
      "view",    "reshape", "flatten",   "unflatten",  "squeeze", "unsqueeze", "expand",
      "narrow",  "slice",   "select",    "permute",    "transpose", "repeat",  "cat",
      "stack",   "concat",  "view_as",   "reshape_as", "expand_as", "pad",     "split",
      "chunk",   "index_select", "repeat_interleave", "movedim"};
  return kOps.count(n.str()) > 0;
}

bool derivesFrom(const CXXRecordDecl *rd, llvm::ArrayRef<llvm::StringRef> names, int depth = 0) {
  if (!rd || depth > 32)
    return false;
  rd = rd->getDefinition();
  if (!rd)
    return false;
  const std::string q = qualifiedName(rd);
  for (llvm::StringRef n : names)
    if (q == n)
      return true;
  for (const CXXBaseSpecifier &b : rd->bases())
    if (!b.getType().isNull() && derivesFrom(b.getType()->getAsCXXRecordDecl(), names, depth + 1))
      return true;
  return false;
}

const CXXRecordDecl *recordOf(QualType t) {
  t = t.getNonReferenceType();
  if (t->isPointerType())
    t = t->getPointeeType();
  return t->getAsCXXRecordDecl();
}

// The pointee of std::shared_ptr<T> / std::unique_ptr<T>, else the type itself.
const CXXRecordDecl *heldRecord(QualType t) {
  const CXXRecordDecl *rd = recordOf(t);
  if (const auto *spec = dyn_cast_or_null<ClassTemplateSpecializationDecl>(rd)) {
    const std::string q = qualifiedName(spec);
    if ((q == "std::shared_ptr" || q == "std::unique_ptr") && spec->getTemplateArgs().size() > 0 &&
        spec->getTemplateArgs()[0].getKind() == TemplateArgument::Type)
      return recordOf(spec->getTemplateArgs()[0].getAsType());
  }
  return rd;
}

// LibTorch's built-in modules without parameters: skipping one leaves every
// gradient in place.  Some of them change the shape.
enum class Builtin { None, Parameterless, Reshaping };
Builtin builtinKind(const CXXRecordDecl *rd) {
  if (!rd)
    return Builtin::None;
  llvm::StringRef q;
  const std::string name = qualifiedName(rd);
  q = name;
  if (!q.consume_front("torch::nn::") || q.contains("::"))
    return Builtin::None;
  q.consume_back("Impl");
  static const std::set<std::string> kElementwise = {
      "Dropout", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout", "ReLU",
      "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Sigmoid", "Tanh",
      "Softmax", "LogSoftmax", "Softmin", "Softplus", "Softsign", "Hardtanh", "Hardshrink",
      "Softshrink", "Tanhshrink", "Threshold", "LogSigmoid", "Identity"};
  static const std::set<std::string> kReshaping = {
      "Flatten", "Unflatten", "MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d",
      "AvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AdaptiveMaxPool3d",
      "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "LPPool1d", "LPPool2d",
      "Upsample", "PixelShuffle", "PixelUnshuffle", "Fold", "Unfold", "GLU", "ZeroPad2d",
      "ConstantPad1d", "ConstantPad2d", "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d",
      "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d"};
  if (kElementwise.count(q.str()))
    return Builtin::Parameterless;
  if (kReshaping.count(q.str()))
    return Builtin::Reshaping;
  return Builtin::None;
}

bool isModuleType(QualType t) {
  static const llvm::StringRef kModules[] = {"torch::nn::Module", "torch::nn::ModuleHolder"};
  return derivesFrom(heldRecord(t), kModules);
}

bool isTensorRecord(const CXXRecordDecl *rd) {
  static const llvm::StringRef kTensor[] = {"at::Tensor", "at::TensorBase"};
  return derivesFrom(rd, kTensor);
}

// A tensor, or a container of tensors (std::vector, c10::optional, TensorList).
bool holdsTensors(QualType t, int depth = 0) {
  const CXXRecordDecl *rd = recordOf(t);
  if (!rd || depth > 4)
    return false;
  if (isTensorRecord(rd))
    return true;
  if (const auto *spec = dyn_cast<ClassTemplateSpecializationDecl>(rd))
    for (const TemplateArgument &a : spec->getTemplateArgs().asArray())
      if (a.getKind() == TemplateArgument::Type && holdsTensors(a.getAsType(), depth + 1))
        return true;
  return false;
}

bool isThis(const Expr *e) { return e && isa<CXXThisExpr>(e->IgnoreParenImpCasts()); }

std::string sourceText(const ASTContext &ctx, const Expr *e) {
  return Lexer::getSourceText(CharSourceRange::getTokenRange(e->getSourceRange()),
                              ctx.getSourceManager(), ctx.getLangOpts())
      .str();
}

// --- what the input reaches ----------------------------------------------------

class InputTaint {
public:
  void seed(const ValueDecl *d, unsigned cause) { vars_[d] |= cause; }

  // Locals computed from the input, to a fixed point (flow-insensitive).
  void propagate(const Stmt *body) {
    std::vector<std::pair<const ValueDecl *, const Expr *>> defs;
    collectDefs(body, defs);
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto &[d, e] : defs) {
        const unsigned c = causeOf(e);
        unsigned &slot = vars_[d];
        if ((slot | c) != slot) {
          slot |= c;
          changed = true;
        }
      }
    }
  }

  // `shapeRead`: the first shape accessor on the input, for the facts.
  unsigned causeOf(const Stmt *s, const Expr **shapeRead = nullptr) const {
    if (!s || isa<LambdaExpr>(s))
      return NoCause;
    if (const auto *dre = dyn_cast<DeclRefExpr>(s))
      return vars_.lookup(dre->getDecl());
    if (const auto *mc = dyn_cast<CXXMemberCallExpr>(s)) {
      unsigned args = NoCause;
      for (const Expr *a : mc->arguments())
        args |= causeOf(a, shapeRead);
      const unsigned obj = causeOf(mc->getImplicitObjectArgument(), shapeRead);
      const CXXMethodDecl *md = mc->getMethodDecl();
      if (obj && md && md->getDeclName().isIdentifier()) {
        if (isUniformMetadata(md->getName()))
          return args;
        if (isShapeAccessor(md->getName())) {
          if (shapeRead && !*shapeRead)
            *shapeRead = mc;
          return ShapeCause | args;
        }
      }
      return obj | args;
    }
    unsigned c = NoCause;
    for (const Stmt *kid : s->children())
      c |= causeOf(kid, shapeRead);
    return c;
  }

private:
  static void collectDefs(const Stmt *s,
                          std::vector<std::pair<const ValueDecl *, const Expr *>> &defs) {
    if (!s || isa<LambdaExpr>(s))
      return;
    if (const auto *ds = dyn_cast<DeclStmt>(s)) {
      for (const Decl *d : ds->decls())
        if (const auto *vd = dyn_cast<VarDecl>(d))
          if (const Expr *init = vd->getInit()) {
            defs.emplace_back(vd, init);
            // auto [rows, cols] = std::make_pair(x.size(0), x.size(1));
            if (const auto *dd = dyn_cast<DecompositionDecl>(vd))
              for (const BindingDecl *b : dd->bindings())
                defs.emplace_back(b, init);
          }
    } else if (const auto *bo = dyn_cast<BinaryOperator>(s)) {
      if (bo->isAssignmentOp())
        if (const auto *dre = dyn_cast<DeclRefExpr>(bo->getLHS()->IgnoreParenImpCasts()))
          defs.emplace_back(dre->getDecl(), bo->getRHS());
    } else if (const auto *op = dyn_cast<CXXOperatorCallExpr>(s)) {
      if (op->isAssignmentOp() && op->getNumArgs() == 2)
        if (const auto *dre = dyn_cast<DeclRefExpr>(op->getArg(0)->IgnoreParenImpCasts()))
          defs.emplace_back(dre->getDecl(), op->getArg(1));
    } else if (const auto *rf = dyn_cast<CXXForRangeStmt>(s)) {
      defs.emplace_back(rf->getLoopVariable(), rf->getRangeInit());
    }
    for (const Stmt *kid : s->children())
      collectDefs(kid, defs);
  }

  llvm::DenseMap<const ValueDecl *, unsigned> vars_;
};

// --- what an arm does ------------------------------------------------------------

struct Features {
  std::set<std::string> modules;     // submodule members it runs
  std::set<std::string> params;      // tensor members it reads
  std::multiset<std::string> shapes; // shape operations with their arguments
  bool returns = false;
  bool throws = false;

  void add(const Features &o) {
    modules.insert(o.modules.begin(), o.modules.end());
    params.insert(o.params.begin(), o.params.end());
    shapes.insert(o.shapes.begin(), o.shapes.end());
  }

  core::ArmUse use() const {
    core::ArmUse u;
    u.modules.assign(modules.begin(), modules.end());
    u.params.assign(params.begin(), params.end());
    u.shapes.assign(shapes.begin(), shapes.end());
    return u;
  }
};

class FeatureCollector {
public:
  FeatureCollector(ASTContext &ctx, const CXXMethodDecl *forward) : ctx_(ctx), forward_(forward) {}

  Features of(llvm::ArrayRef<const Stmt *> stmts) {
    Features f;
    for (const Stmt *s : stmts)
      walk(s, f, 0);
    return f;
  }

private:
  std::string signature(llvm::StringRef op, llvm::ArrayRef<const Expr *> args) const {
    std::string sig = op.str() + "(";
    for (const Expr *a : args) {
      if (isa<CXXDefaultArgExpr>(a))
        break;
      sig += sourceText(ctx_, a) + ",";
    }
    return sig + ")";
  }

  void walk(const Stmt *s, Features &f, int depth) {
    if (!s || isa<LambdaExpr>(s))
      return;
    if (isa<ReturnStmt>(s))
      f.returns = true;
    if (isa<CXXThrowExpr>(s))
      f.throws = true;
    if (const auto *me = dyn_cast<MemberExpr>(s)) {
      if (const auto *fd = dyn_cast<FieldDecl>(me->getMemberDecl()); fd && isThis(me->getBase())) {
        if (isModuleType(fd->getType())) {
          switch (builtinKind(heldRecord(fd->getType()))) {
          case Builtin::None:
            f.modules.insert(fd->getNameAsString());
            break;
          case Builtin::Reshaping:
            f.shapes.insert(fd->getNameAsString() + "()");
            break;
          case Builtin::Parameterless:
            break;
          }
        } else if (isTensorRecord(recordOf(fd->getType()))) {
          f.params.insert(fd->getNameAsString());
        }
      }
    } else if (const auto *mc = dyn_cast<CXXMemberCallExpr>(s)) {
      const CXXMethodDecl *md = mc->getMethodDecl();
      if (md && md->getDeclName().isIdentifier()) {
        if (isShapeOp(md->getName()) && isTensorRecord(md->getParent()))
          f.shapes.insert(signature(md->getName(),
                                    llvm::ArrayRef(mc->getArgs(), mc->getNumArgs())));
        // The module's own helper methods run what they call.
        if (isThis(mc->getImplicitObjectArgument()) && md != forward_ && depth < 3 &&
            md->hasBody() && isUserCode(ctx_.getSourceManager(), md->getLocation()))
          walk(md->getBody(), f, depth + 1);
      }
    } else if (const auto *call = dyn_cast<CallExpr>(s); call && !isa<CXXOperatorCallExpr>(s)) {
      if (const FunctionDecl *fd = call->getDirectCallee(); fd && fd->getDeclName().isIdentifier()) {
        const std::string q = qualifiedName(fd);
        if (isShapeOp(fd->getName()) &&
            (llvm::StringRef(q).starts_with("torch::") || llvm::StringRef(q).starts_with("at::")))
          f.shapes.insert(signature(fd->getName(),
                                    llvm::ArrayRef(call->getArgs(), call->getNumArgs())));
      }
    }
    for (const Stmt *kid : s->children())
      walk(kid, f, depth);
  }

  ASTContext &ctx_;
  const CXXMethodDecl *forward_;
};

// Records every branch of forward() with what its arms run and what its
// condition reads.  Nested branches name their parent; the core decides which
// are reported (a branch inside a reported one is not).
class BranchVisitor {
public:
  BranchVisitor(ASTContext &ctx, const CXXMethodDecl *forward, const InputTaint &taint,
                FactsBuilder &b, core::ForwardMethod &out)
      : ctx_(ctx), features_(ctx, forward), taint_(taint), b_(b), out_(out) {}

  void visit(const Stmt *s, llvm::ArrayRef<const Stmt *> rest, int parent) {
    if (!s || isa<LambdaExpr>(s))
      return;
    // TORCH_CHECK and friends expand to branches: the macro's, not the user's.
    if (s->getBeginLoc().isMacroID() && (isa<IfStmt, SwitchStmt, ConditionalOperator>(s)))
      return;
    if (const auto *cs = dyn_cast<CompoundStmt>(s)) {
      std::vector<const Stmt *> kids(cs->body_begin(), cs->body_end());
      for (size_t i = 0; i < kids.size(); ++i)
        visit(kids[i], llvm::ArrayRef(kids).drop_front(i + 1), parent);
      return;
    }
    int self = parent;
    if (const auto *is = dyn_cast<IfStmt>(s)) {
      if (!is->isConsteval() && !is->isConstexpr())
        self = record(core::ForwardBranch::Kind::If, is->getIfLoc(), is->getCond(),
                      {arm({is->getThen()}, rest), arm({is->getElse()}, rest)}, parent);
    } else if (const auto *co = dyn_cast<ConditionalOperator>(s)) {
      self = record(core::ForwardBranch::Kind::Conditional, co->getBeginLoc(), co->getCond(),
                    {arm({co->getTrueExpr()}, {}), arm({co->getFalseExpr()}, {})}, parent);
    } else if (const auto *ss = dyn_cast<SwitchStmt>(s)) {
      self = record(core::ForwardBranch::Kind::Switch, ss->getSwitchLoc(), ss->getCond(),
                    switchArms(ss, rest), parent);
    }
    for (const Stmt *kid : s->children())
      visit(kid, {}, self);
  }

private:
  core::ForwardArm arm(std::vector<const Stmt *> stmts, llvm::ArrayRef<const Stmt *> rest) {
    stmts.erase(std::remove(stmts.begin(), stmts.end(), nullptr), stmts.end());
    const Features own = features_.of(stmts);
    Features effective = own;
    if (!own.returns && !own.throws)
      effective.add(features_.of(rest));
    core::ForwardArm a;
    a.own = own.use();
    a.effective = effective.use();
    a.returns = own.returns;
    a.throws = own.throws;
    return a;
  }

  std::vector<core::ForwardArm> switchArms(const SwitchStmt *ss, llvm::ArrayRef<const Stmt *> rest) {
    std::vector<core::ForwardArm> arms;
    const auto *body = dyn_cast_or_null<CompoundStmt>(ss->getBody());
    if (!body)
      return arms;
    std::vector<const Stmt *> segment;
    bool hasDefault = false;
    auto flush = [&] {
      if (!segment.empty())
        arms.push_back(arm(segment, rest));
      segment.clear();
    };
    for (const Stmt *kid : body->body()) {
      if (isa<SwitchCase>(kid)) {
        flush();
        const Stmt *sub = kid;
        while (const auto *sc = dyn_cast<SwitchCase>(sub)) {
          hasDefault |= isa<DefaultStmt>(sc);
          sub = sc->getSubStmt();
        }
        segment.push_back(sub);
      } else {
        segment.push_back(kid);
      }
    }
    flush();
    if (!hasDefault)
      arms.push_back(arm({}, rest));
    return arms;
  }

  // Returns the index of the recorded branch (the parent of branches inside
  // it), or `parent` when there is nothing to record.
  int record(core::ForwardBranch::Kind kind, SourceLocation at, const Expr *cond,
             std::vector<core::ForwardArm> arms, int parent) {
    if (!cond || at.isInvalid())
      return parent;
    core::ForwardBranch br;
    br.kind = kind;
    br.loc = b_.loc(at);
    br.condText = sourceText(ctx_, cond);
    const Expr *shapeRead = nullptr;
    const unsigned cause = taint_.causeOf(cond, &shapeRead);
    br.onShape = cause & ShapeCause;
    br.onValues = cause & ValueCause;
    if (shapeRead)
      br.shapeExpr = sourceText(ctx_, shapeRead);
    br.arms = std::move(arms);
    br.parent = parent;
    // The rank matters only when the input does not: the dependence analysis
    // (built on first use) runs only for those conditions, and only when the
    // arms run something at all.
    if (!br.onShape && !br.onValues && br.arms.size() >= 2 && armsDiffer(br.arms))
      br.onRank = b_.deps().depOf(cond) == core::Dep::Rank;
    out_.branches.push_back(std::move(br));
    return static_cast<int>(out_.branches.size() - 1);
  }

  // A cheap necessary condition for any divergence the core could find.
  static bool armsDiffer(const std::vector<core::ForwardArm> &arms) {
    for (const auto &a : arms)
      if (a.effective.modules != arms.front().effective.modules ||
          a.effective.params != arms.front().effective.params ||
          a.effective.shapes != arms.front().effective.shapes)
        return true;
    return false;
  }

  ASTContext &ctx_;
  FeatureCollector features_;
  const InputTaint &taint_;
  FactsBuilder &b_;
  core::ForwardMethod &out_;
};

} // namespace

void FactsBuilder::addForwards(core::Facts &facts) {
  // Cloneable<Derived> and the TORCH_MODULE Impl classes derive from Module.
  static const llvm::StringRef kModule[] = {"torch::nn::Module"};
  forEachUserFunction(ctx_.getTranslationUnitDecl(), ctx_.getSourceManager(),
                      [&](const FunctionDecl *fd) {
    const auto *md = dyn_cast<CXXMethodDecl>(fd);
    if (!md || !md->getDeclName().isIdentifier() || md->getName() != "forward" ||
        md->isDependentContext() || !derivesFrom(md->getParent(), kModule))
      return;
    // forward()'s tensors are the rank's own batch.  Flags and modes passed in
    // (bool, int, enums) are the caller's choice and usually uniform.
    InputTaint taint;
    for (const ParmVarDecl *p : md->parameters())
      if (holdsTensors(p->getType()))
        taint.seed(p, ValueCause);
    taint.propagate(md->getBody());
    core::ForwardMethod fm;
    fm.loc = loc(md->getLocation());
    fm.className = md->getParent()->getNameAsString();
    BranchVisitor(ctx_, md, taint, *this, fm).visit(md->getBody(), {}, -1);
    facts.forwards.push_back(std::move(fm));
  });
}

} // namespace ddplint::clangfe
