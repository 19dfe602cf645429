#include "tidy/ForwardShapeBranchCheck.h"

#include "tidy/CheckSupport.h"
#include "tidy/UserCode.h"

#include "ddplint/core/Catalog.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/ASTMatchers/ASTMatchFinder.h"
#include "clang/ASTMatchers/ASTMatchers.h"
#include "clang/Lex/Lexer.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <functional>
#include <set>
#include <string>
#include <vector>

using namespace clang;
using namespace clang::ast_matchers;

namespace ddplint::tidy {

namespace {

const char kRule[] = "ddp-forward-shape-branch";

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
  const std::string q = clangfe::qualifiedName(rd);
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
    const std::string q = clangfe::qualifiedName(spec);
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
  const std::string name = clangfe::qualifiedName(rd);
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

// --- what the input reaches -------------------------------------------------------

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

  unsigned causeOf(const Stmt *s) const {
    if (!s || isa<LambdaExpr>(s))
      return NoCause;
    if (const auto *dre = dyn_cast<DeclRefExpr>(s))
      return vars_.lookup(dre->getDecl());
    if (const auto *mc = dyn_cast<CXXMemberCallExpr>(s)) {
      unsigned args = NoCause;
      for (const Expr *a : mc->arguments())
        args |= causeOf(a);
      const unsigned obj = causeOf(mc->getImplicitObjectArgument());
      const CXXMethodDecl *md = mc->getMethodDecl();
      if (obj && md && md->getDeclName().isIdentifier()) {
        if (isUniformMetadata(md->getName()))
          return args;
        if (isShapeAccessor(md->getName()))
          return ShapeCause | args;
      }
      return obj | args;
    }
    unsigned c = NoCause;
    for (const Stmt *kid : s->children())
      c |= causeOf(kid);
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

// --- what an arm does -------------------------------------------------------------

struct Features {
  std::set<std::string> modules; // submodule members it runs
  std::set<std::string> params;  // tensor members it reads
  std::multiset<std::string> shapes; // shape operations with their arguments
  bool returns = false;
  bool throws = false;

  void add(const Features &o) {
    modules.insert(o.modules.begin(), o.modules.end());
    params.insert(o.params.begin(), o.params.end());
    shapes.insert(o.shapes.begin(), o.shapes.end());
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
  std::string text(const Expr *e) const {
    return Lexer::getSourceText(CharSourceRange::getTokenRange(e->getSourceRange()),
                                ctx_.getSourceManager(), ctx_.getLangOpts())
        .str();
  }

  std::string signature(llvm::StringRef op, llvm::ArrayRef<const Expr *> args) const {
    std::string sig = op.str() + "(";
    for (const Expr *a : args) {
      if (isa<CXXDefaultArgExpr>(a))
        break;
      sig += text(a) + ",";
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
        }
        else if (isTensorRecord(recordOf(fd->getType())))
          f.params.insert(fd->getNameAsString());
      }
    } else if (const auto *mc = dyn_cast<CXXMemberCallExpr>(s)) {
      const CXXMethodDecl *md = mc->getMethodDecl();
      if (md && md->getDeclName().isIdentifier()) {
        if (isShapeOp(md->getName()) && isTensorRecord(md->getParent()))
          f.shapes.insert(signature(md->getName(),
                                    llvm::ArrayRef(mc->getArgs(), mc->getNumArgs())));
        // The module's own helper methods run what they call.
        if (isThis(mc->getImplicitObjectArgument()) && md != forward_ && depth < 3 &&
            md->hasBody() &&
            clangfe::isUserCode(ctx_.getSourceManager(), md->getLocation()))
          walk(md->getBody(), f, depth + 1);
      }
    } else if (const auto *call = dyn_cast<CallExpr>(s); call && !isa<CXXOperatorCallExpr>(s)) {
      if (const FunctionDecl *fd = call->getDirectCallee(); fd && fd->getDeclName().isIdentifier()) {
        const std::string q = clangfe::qualifiedName(fd);
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

// One arm of a branch: what it runs itself, and whether control continues
// into the statements after the branch.
struct Arm {
  Features own;
  Features effective; // own, plus the rest of the block when the arm falls through
};

struct Divergence {
  enum Kind { None, Module, Param, Shape } kind = None;
  std::string name;
};

template <class Get> std::string firstNotInAll(const std::vector<Arm> &arms, Get get) {
  std::set<std::string> common;
  bool first = true;
  for (const Arm &a : arms) {
    const std::set<std::string> &s = get(a);
    if (first) {
      common = s;
      first = false;
      continue;
    }
    std::set<std::string> keep;
    for (const auto &n : common)
      if (s.count(n))
        keep.insert(n);
    common.swap(keep);
  }
  // Name what the first arm (the `then` side) runs that not every arm does.
  for (const Arm &a : arms)
    for (const auto &n : get(a))
      if (!common.count(n))
        return n;
  return "";
}

Divergence compare(const std::vector<Arm> &arms) {
  Divergence d;
  if (arms.size() < 2)
    return d;
  for (const Arm &a : arms)
    if (a.own.throws) // an error path, not a different computation
      return d;
  if (auto n = firstNotInAll(arms, [](const Arm &a) -> const std::set<std::string> & {
        return a.effective.modules;
      });
      !n.empty())
    return {Divergence::Module, n};
  if (auto n = firstNotInAll(arms, [](const Arm &a) -> const std::set<std::string> & {
        return a.effective.params;
      });
      !n.empty())
    return {Divergence::Param, n};
  // Shapes: only when the arms reshape differently themselves, or one of them
  // returns early; a one-armed `if (x.dim() == 3) x = x.unsqueeze(0);`
  // normalises the input to one shape.
  bool differ = false, anyReturns = false;
  unsigned reshaping = 0;
  for (const Arm &a : arms) {
    differ |= a.effective.shapes != arms.front().effective.shapes;
    anyReturns |= a.own.returns;
    reshaping += !a.own.shapes.empty();
  }
  if (differ && (anyReturns || reshaping >= 2))
    return {Divergence::Shape, ""};
  return d;
}

} // namespace

ForwardShapeBranchCheck::ForwardShapeBranchCheck(llvm::StringRef name,
                                                 clang::tidy::ClangTidyContext *context)
    : ClangTidyCheck(name, context), user_(readUserApi(Options, kRule)) {}

ForwardShapeBranchCheck::~ForwardShapeBranchCheck() = default;

void ForwardShapeBranchCheck::storeOptions(clang::tidy::ClangTidyOptions::OptionMap &opts) {
  storeUserApi(Options, opts, user_, kRule);
}

clangfe::DependenceAnalyzer &ForwardShapeBranchCheck::deps(ASTContext &ctx) {
  if (!deps_ || depsCtx_ != &ctx) {
    deps_.reset();
    api_ = std::make_unique<clangfe::ApiMatcher>(core::builtinApi(), user_);
    locs_ = std::make_unique<clangfe::LocTable>();
    deps_ = std::make_unique<clangfe::DependenceAnalyzer>(ctx, *api_, *locs_);
    depsCtx_ = &ctx;
  }
  return *deps_;
}

void ForwardShapeBranchCheck::onEndOfTranslationUnit() {
  deps_.reset();
  locs_.reset();
  api_.reset();
  depsCtx_ = nullptr;
}

void ForwardShapeBranchCheck::registerMatchers(MatchFinder *finder) {
  // The unit once; its functions are walked in check() (see UserCode.h).
  finder->addMatcher(translationUnitDecl().bind("tu"), this);
}

namespace {

class BranchVisitor {
public:
  using Report = std::function<void(SourceLocation, const std::string &what, const Divergence &)>;

  BranchVisitor(ASTContext &ctx, const CXXMethodDecl *forward, const InputTaint &taint,
                std::function<bool(const Expr *)> onRank, Report report)
      : ctx_(ctx), features_(ctx, forward), taint_(taint), onRank_(std::move(onRank)),
        report_(std::move(report)) {}

  void visit(const Stmt *s, llvm::ArrayRef<const Stmt *> rest) {
    if (!s || isa<LambdaExpr>(s))
      return;
    // TORCH_CHECK and friends expand to branches: the macro's, not the user's.
    if (s->getBeginLoc().isMacroID() && (isa<IfStmt, SwitchStmt, ConditionalOperator>(s)))
      return;
    if (const auto *cs = dyn_cast<CompoundStmt>(s)) {
      std::vector<const Stmt *> kids(cs->body_begin(), cs->body_end());
      for (size_t i = 0; i < kids.size(); ++i)
        visit(kids[i], llvm::ArrayRef(kids).drop_front(i + 1));
      return;
    }
    if (const auto *is = dyn_cast<IfStmt>(s)) {
      if (!is->isConsteval() && !is->isConstexpr()) {
        std::vector<Arm> arms = {arm({is->getThen()}, rest), arm({is->getElse()}, rest)};
        if (judge(is->getIfLoc(), is->getCond(), arms))
          return;
      }
    } else if (const auto *co = dyn_cast<ConditionalOperator>(s)) {
      std::vector<Arm> arms = {arm({co->getTrueExpr()}, {}), arm({co->getFalseExpr()}, {})};
      if (judge(co->getBeginLoc(), co->getCond(), arms))
        return;
    } else if (const auto *ss = dyn_cast<SwitchStmt>(s)) {
      if (judge(ss->getSwitchLoc(), ss->getCond(), switchArms(ss, rest)))
        return;
    }
    for (const Stmt *kid : s->children())
      visit(kid, {});
  }

private:
  Arm arm(std::vector<const Stmt *> stmts, llvm::ArrayRef<const Stmt *> rest) {
    stmts.erase(std::remove(stmts.begin(), stmts.end(), nullptr), stmts.end());
    Arm a;
    a.own = features_.of(stmts);
    a.effective = a.own;
    if (!a.own.returns && !a.own.throws)
      a.effective.add(features_.of(rest));
    return a;
  }

  std::vector<Arm> switchArms(const SwitchStmt *ss, llvm::ArrayRef<const Stmt *> rest) {
    std::vector<Arm> arms;
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

  bool judge(SourceLocation at, const Expr *cond, const std::vector<Arm> &arms) {
    if (!cond || at.isInvalid())
      return false;
    const Divergence d = compare(arms);
    if (d.kind == Divergence::None)
      return false;
    const unsigned cause = taint_.causeOf(cond);
    std::string what;
    if (cause & ShapeCause)
      what = "the input's shape";
    else if (cause & ValueCause)
      what = "the input's values";
    else if (onRank_(cond))
      what = "the rank";
    else
      return false;
    report_(at, what, d);
    return true;
  }

  ASTContext &ctx_;
  FeatureCollector features_;
  const InputTaint &taint_;
  std::function<bool(const Expr *)> onRank_;
  Report report_;
};

} // namespace

void ForwardShapeBranchCheck::check(const MatchFinder::MatchResult &result) {
  const auto *tu = result.Nodes.getNodeAs<TranslationUnitDecl>("tu");
  if (!tu)
    return;
  // Cloneable<Derived> and the TORCH_MODULE Impl classes derive from Module.
  static const llvm::StringRef kModule[] = {"torch::nn::Module"};
  forEachUserFunction(tu, *result.SourceManager, [&](const FunctionDecl *fd) {
    const auto *md = dyn_cast<CXXMethodDecl>(fd);
    if (md && md->getDeclName().isIdentifier() && md->getName() == "forward" &&
        !md->isDependentContext() && derivesFrom(md->getParent(), kModule))
      checkForward(md, *result.Context);
  });
}

void ForwardShapeBranchCheck::checkForward(const CXXMethodDecl *forward, ASTContext &ctx) {
  // forward()'s tensors are the rank's own batch.  Flags and modes passed in
  // (bool, int, enums) are the caller's choice and usually uniform.
  InputTaint taint;
  for (const ParmVarDecl *p : forward->parameters())
    if (holdsTensors(p->getType()))
      taint.seed(p, ValueCause);
  taint.propagate(forward->getBody());

  auto onRank = [&](const Expr *cond) { return deps(ctx).depOf(cond) == core::Dep::Rank; };
  auto report = [&](SourceLocation at, const std::string &what, const Divergence &d) {
    switch (d.kind) {
    case Divergence::Module:
      diag(at, "branch on %0 in forward() runs submodule '%1' on some ranks only; ranks that "
               "skip it produce no gradient for its parameters and the gradient allreduce "
               "mismatches; run every submodule on every rank and mask the result")
          << what << d.name;
      break;
    case Divergence::Param:
      diag(at, "branch on %0 in forward() uses parameter '%1' on some ranks only; ranks that "
               "skip it produce no gradient for it and the gradient allreduce mismatches; use it "
               "on every rank and mask the result")
          << what << d.name;
      break;
    case Divergence::Shape:
      diag(at, "branch on %0 in forward() produces different shapes on different ranks; "
               "collectives over the activations or their gradients then mismatch; keep shapes "
               "rank-uniform (pad or mask) instead of branching")
          << what;
      break;
    case Divergence::None:
      break;
    }
  };
  BranchVisitor(ctx, forward, taint, onRank, report).visit(forward->getBody(), {});
}

} // namespace ddplint::tidy
