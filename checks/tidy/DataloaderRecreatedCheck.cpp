#include "tidy/DataloaderRecreatedCheck.h"

#include "tidy/CheckSupport.h"

#include "ddplint/core/Catalog.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"

#include <set>

using namespace clang;
using namespace clang::ast_matchers;

namespace ddplint::tidy {

namespace {

const char kRule[] = "ddp-dataloader-recreated";

ast_matchers::internal::Matcher<NamedDecl> anyName(const std::vector<std::string> &names) {
  std::vector<llvm::StringRef> refs(names.begin(), names.end());
  return hasAnyName(llvm::ArrayRef<llvm::StringRef>(refs));
}

std::string lastComponent(const std::string &name) {
  const auto pos = name.rfind("::");
  return pos == std::string::npos ? name : name.substr(pos + 2);
}

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
// element runs once per element, not once per epoch.
bool iteratesOverInputs(const Stmt *loop, const CallExpr *call) {
  if (const auto *rf = dyn_cast<CXXForRangeStmt>(loop))
    return refersTo(call, rf->getLoopVariable());
  if (const auto *fs = dyn_cast<ForStmt>(loop))
    if (const auto *ds = dyn_cast_or_null<DeclStmt>(fs->getInit()))
      for (const Decl *d : ds->decls())
        if (const auto *vd = dyn_cast<VarDecl>(d))
          if (indexesWith(call, vd))
            return true;
  return false;
}

// The loop whose every iteration runs `s`, within its own function (a lambda
// body is a function of its own).
const Stmt *enclosingLoop(const Stmt *s, ASTContext &ctx, const CallExpr *factoryCall) {
  DynTypedNode child = DynTypedNode::create(*s);
  for (int depth = 0; depth < 512; ++depth) {
    auto parents = ctx.getParents(child);
    if (parents.empty())
      return nullptr;
    const DynTypedNode parent = parents[0];
    if (parent.get<FunctionDecl>() || parent.get<LambdaExpr>() || parent.get<BlockExpr>() ||
        parent.get<ObjCMethodDecl>())
      return nullptr;
    const Stmt *c = child.get<Stmt>();
    const Stmt *loop = nullptr;
    if (const auto *fs = parent.get<ForStmt>()) {
      if (!c || c != fs->getInit())
        loop = fs;
    } else if (const auto *rf = parent.get<CXXForRangeStmt>()) {
      if (c && c == rf->getBody())
        loop = rf;
    } else if (parent.get<WhileStmt>() || parent.get<DoStmt>()) {
      loop = parent.get<Stmt>();
    }
    if (loop && !(factoryCall && iteratesOverInputs(loop, factoryCall)))
      return loop;
    child = parent;
  }
  return nullptr;
}

// The function (or lambda call operator) a statement is written in.
const FunctionDecl *enclosingFunction(const Stmt *s, ASTContext &ctx) {
  DynTypedNode node = DynTypedNode::create(*s);
  for (int depth = 0; depth < 512; ++depth) {
    auto parents = ctx.getParents(node);
    if (parents.empty())
      return nullptr;
    node = parents[0];
    if (const auto *fd = node.get<FunctionDecl>())
      return fd;
    if (const auto *le = node.get<LambdaExpr>())
      return le->getCallOperator();
  }
  return nullptr;
}

// The loader is kept beyond the iteration: pushed into a container or stored
// into an element, e.g. one loader per dataset built in a setup loop.
bool storedInContainer(const CallExpr *call, ASTContext &ctx) {
  const Stmt *cur = call;
  for (int depth = 0; depth < 10; ++depth) {
    auto parents = ctx.getParents(*cur);
    if (parents.size() != 1)
      return false;
    const Stmt *p = parents[0].get<Stmt>();
    if (!p)
      return false;
    if (isa<ImplicitCastExpr, MaterializeTemporaryExpr, CXXBindTemporaryExpr, ExprWithCleanups,
            ParenExpr, CXXConstructExpr, CXXFunctionalCastExpr>(p)) {
      cur = p;
      continue;
    }
    if (const auto *mc = dyn_cast<CXXMemberCallExpr>(p)) {
      const auto *md = mc->getMethodDecl();
      if (!md)
        return false;
      static const std::set<std::string> kInserts = {
          "push_back", "emplace_back", "push_front", "emplace_front", "emplace",
          "insert",    "push",         "try_emplace", "insert_or_assign"};
      return kInserts.count(md->getNameAsString()) > 0;
    }
    if (const auto *ce = dyn_cast<CallExpr>(p)) {
      // std::move(make_data_loader(...)) into a container.
      if (const auto *fd = ce->getDirectCallee())
        if (fd->getNameAsString() == "move" && ce->getNumArgs() == 1) {
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
  std::vector<std::string> names;
  for (const auto &f : factories_)
    names.push_back(lastComponent(f));
  auto userCode = allOf(unless(isExpansionInSystemHeader()), unless(isInTemplateInstantiation()));
  if (!names.empty())
    finder->addMatcher(callExpr(userCode, callee(functionDecl(anyName(names)))).bind("factory"),
                       this);
  // Calls of the unit's own functions: a helper that builds a loader, called
  // in a loop, recreates it just the same.
  finder->addMatcher(
      callExpr(userCode, callee(functionDecl(unless(isExpansionInSystemHeader())))).bind("call"),
      this);
}

void DataloaderRecreatedCheck::check(const MatchFinder::MatchResult &result) {
  ASTContext &ctx = *result.Context;
  ctx_ = result.Context;
  if (const auto *call = result.Nodes.getNodeAs<CallExpr>("factory")) {
    const FunctionDecl *fd = call->getDirectCallee();
    if (!isFactory(fd))
      return;
    if (storedInContainer(call, ctx))
      return;
    if (enclosingLoop(call, ctx, call)) {
      diag(call->getBeginLoc(), "data loader built by '%0' inside a loop; %1")
          << fd->getName() << kWhy;
      return;
    }
    if (const FunctionDecl *f = enclosingFunction(call, ctx))
      helpers_.emplace(f->getCanonicalDecl(), fd->getNameAsString());
    return;
  }
  if (const auto *call = result.Nodes.getNodeAs<CallExpr>("call")) {
    const FunctionDecl *callee = call->getDirectCallee();
    if (!callee || isFactory(callee))
      return;
    const bool inLoop = enclosingLoop(call, ctx, nullptr) != nullptr;
    const FunctionDecl *caller = enclosingFunction(call, ctx);
    calls_.push_back({call, callee->getCanonicalDecl(),
                      caller ? caller->getCanonicalDecl() : nullptr, inLoop});
  }
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
    if (!c.inLoop || storedInContainer(c.call, *ctx_))
      continue;
    auto it = helpers_.find(c.callee);
    if (it == helpers_.end())
      continue;
    // A lambda is called through its variable: name the variable.
    std::string name = c.callee->getNameAsString();
    if (const auto *op = dyn_cast<CXXOperatorCallExpr>(c.call))
      if (const auto *dre = dyn_cast<DeclRefExpr>(op->getArg(0)->IgnoreParenImpCasts()))
        name = dre->getDecl()->getNameAsString();
    diag(c.call->getBeginLoc(), "'%0' builds a data loader (via '%1') and is called inside a "
                                "loop; %2")
        << name << it->second << kWhy;
  }
  helpers_.clear();
  calls_.clear();
  ctx_ = nullptr;
}

} // namespace ddplint::tidy
