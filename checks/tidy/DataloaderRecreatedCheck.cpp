#include "tidy/DataloaderRecreatedCheck.h"

#include "tidy/CheckSupport.h"
#include "tidy/UserCode.h"

#include "ddplint/core/Catalog.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ASTLambda.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"

#include <optional>
#include <set>

using namespace clang;
using namespace clang::ast_matchers;

namespace ddplint::tidy {

namespace {

const char kRule[] = "ddp-dataloader-recreated";

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

// The loop whose every iteration runs `s`, within its own function (a lambda
// body is a function of its own).
const Stmt *enclosingLoop(const Stmt *s, const LocalParents &lp, const CallExpr *factoryCall) {
  const Stmt *child = s;
  for (const Stmt *parent = lp.parent(s); parent; child = parent, parent = lp.parent(parent)) {
    if (isa<LambdaExpr, BlockExpr>(parent))
      return nullptr;
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
    if (loop && !(factoryCall && iteratesOverInputs(loop, factoryCall)))
      return loop;
  }
  return nullptr;
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

const char kWhy[] = "its worker threads are started and joined on every iteration; build the "
                    "loader once before the loop and iterate it every epoch";

} // namespace

DataloaderRecreatedCheck::DataloaderRecreatedCheck(llvm::StringRef name,
                                                   clang::tidy::ClangTidyContext *context)
    : ClangTidyCheck(name, context), user_(readUserApi(Options, kRule)) {
  factories_ = core::builtinApi().dataLoaderFactories;
  factories_.insert(factories_.end(), user_.dataLoaderFactories.begin(),
                    user_.dataLoaderFactories.end());
}

void DataloaderRecreatedCheck::storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) {
  storeUserApi(Options, opts, user_, kRule);
}

bool DataloaderRecreatedCheck::isFactory(const FunctionDecl *fd) const {
  return fd && clangfe::nameIn(clangfe::qualifiedName(fd), factories_, /*suffixOk=*/true);
}

void DataloaderRecreatedCheck::registerMatchers(MatchFinder *finder) {
  // The unit once; its functions are walked in check() (see UserCode.h).
  finder->addMatcher(translationUnitDecl().bind("tu"), this);
}

void DataloaderRecreatedCheck::check(const MatchFinder::MatchResult &result) {
  if (const auto *tu = result.Nodes.getNodeAs<TranslationUnitDecl>("tu"))
    // Instantiations too: in a template, make_data_loader(dataset, ...) on a
    // dependent dataset only resolves there.
    forEachUserFunction(
        tu, *result.SourceManager,
        [&](const FunctionDecl *fd) { checkFunction(fd, *result.SourceManager); },
        /*instantiations=*/true);
}

void DataloaderRecreatedCheck::checkFunction(const FunctionDecl *fd, const SourceManager &sm) {
  std::optional<LocalParents> lp;
  forEachStmt(fd->getBody(), [&](const Stmt *s) {
    const auto *call = dyn_cast<CallExpr>(s);
    if (!call || !clangfe::isUserCode(sm, call->getBeginLoc()))
      return;
    const FunctionDecl *callee = call->getDirectCallee();
    if (!callee)
      return;
    const bool factory = isFactory(callee);
    // Other callees matter only when this unit defines them: they may be helpers.
    if (!factory && (!clangfe::isUserCode(sm, callee->getLocation()) || !callee->isDefined()))
      return;
    if (!lp)
      lp.emplace(fd);
    const FunctionDecl *caller = enclosingFunction(call, *lp, fd)->getCanonicalDecl();
    if (factory) {
      if (storedInContainer(call, *lp))
        return;
      if (enclosingLoop(call, *lp, call)) {
        if (reported_.insert(call->getBeginLoc()).second)
          diag(call->getBeginLoc(), "data loader built by '%0' inside a loop; %1")
              << callee->getName() << kWhy;
        return;
      }
      helpers_.emplace(caller, callee->getNameAsString());
      return;
    }
    const bool inLoop = enclosingLoop(call, *lp, nullptr) && !storedInContainer(call, *lp);
    calls_.push_back({call, callee->getCanonicalDecl(), caller, inLoop});
  });
}

void DataloaderRecreatedCheck::onEndOfTranslationUnit() {
  // Helpers of helpers build loaders too (outside any loop of their own).
  bool changed = true;
  while (changed) {
    changed = false;
    for (const Call &c : calls_) {
      if (c.inLoop || !c.caller || helpers_.count(c.caller))
        continue;
      auto it = helpers_.find(c.callee);
      if (it != helpers_.end()) {
        helpers_.emplace(c.caller, it->second);
        changed = true;
      }
    }
  }
  for (const Call &c : calls_) {
    if (!c.inLoop)
      continue;
    auto it = helpers_.find(c.callee);
    if (it == helpers_.end())
      continue;
    // A lambda is called through its variable: name the variable.
    std::string name = c.callee->getNameAsString();
    if (const auto *op = dyn_cast<CXXOperatorCallExpr>(c.call))
      if (const auto *dre = dyn_cast<DeclRefExpr>(op->getArg(0)->IgnoreParenImpCasts()))
        name = dre->getDecl()->getNameAsString();
    // `build()` on a lambda: at the object, where every LLVM version starts the call.
    SourceLocation at = c.call->getBeginLoc();
    if (const auto *op = dyn_cast<CXXOperatorCallExpr>(c.call); op && op->getNumArgs() > 0)
      at = op->getArg(0)->getBeginLoc();
    if (!reported_.insert(at).second)
      continue;
    diag(at, "'%0' builds a data loader (via '%1') and is called inside a loop; %2")
        << name << it->second << kWhy;
  }
  helpers_.clear();
  calls_.clear();
  reported_.clear();
}

} // namespace ddplint::tidy
