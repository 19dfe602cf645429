// Classifies Clang calls against the API catalog (rules/api.yaml) plus the
// user's own wrappers from check options.
#pragma once

#include "ddplint/core/Catalog.h"
#include "ddplint/core/Rules.h"

#include "clang/AST/Decl.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/Expr.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace ddplint::clangfe {

// The user's wrappers (RankFunctions, ... from the check options).
using UserApi = core::Wrappers;

enum class CallRole {
  None,
  Collective,
  Barrier,
  PointToPoint,
  NotCollective,
  Exit,
  CheckpointWrite,
  FileWrite,
  RankSource,   // returns the rank (or writes it to `arg`)
  MainProcess,  // true on rank 0 only
  WorldSize,    // returns the world size (or writes it to `arg`)
  LocalSource,  // a rank-local value: clock, randomness, file check, tensor item
  EnvRead,      // getenv of some other variable
  DataLoaderFactory,
};

struct CallInfo {
  CallRole role = CallRole::None;
  std::string op; // "allreduce", "torch::save", ...
  int arg = -1;   // out-parameter or path argument index, when the role has one
  // FileWrite: the file is a log (opened for appending, or named for one).
  bool log = false;
};

// Fully qualified name without inline namespaces (std::__cxx11, chrono::_V2)
// and without template arguments, e.g. "std::chrono::steady_clock::now".
std::string qualifiedName(const clang::NamedDecl *d);

// `names` entries are fully qualified ("torch::save"); with `suffixOk` an entry
// also matches as a trailing component sequence ("is_main" matches "util::is_main").
bool nameIn(const std::string &qualified, const std::vector<std::string> &names,
            bool suffixOk = false);

class ApiMatcher {
public:
  ApiMatcher(const core::ApiCatalog &api, UserApi user);

  CallInfo classify(const clang::CallExpr *call) const;
  // A constructor call that opens a file (std::ofstream) or yields rank-local values.
  CallInfo classifyConstruct(const clang::CXXConstructExpr *ctor) const;
  // c10d::ProcessGroup, Backend or a class derived from one of them.
  bool isProcessGroupClass(const clang::CXXRecordDecl *rd) const;
  bool isProcessGroupType(clang::QualType t) const;
  // Types that carry a communicator: process groups, ncclComm_t, MPI_Comm.
  bool isCommunicatorType(clang::QualType t) const;

  const core::ApiCatalog &api() const { return api_; }
  const UserApi &user() const { return user_; }

private:
  CallInfo classifyCallee(const clang::FunctionDecl *fd, const clang::CallExpr *call) const;
  const core::ApiCatalog &api_;
  UserApi user_;
  // The catalog's functions by qualified name, in the catalog's precedence
  // (collective, barrier, point-to-point, exit, not-a-collective, rank and
  // world-size out-parameters, checkpoint and file writers, loaders, local
  // sources): every call of a unit is classified, and the catalog lists
  // hundreds of MPI and NCCL functions.
  std::unordered_map<std::string, CallInfo> functions_;
};

// The string literal an expression spells, through casts and std::string
// construction; empty when it is not a literal.
std::string stringLiteralOf(const clang::Expr *e);

} // namespace ddplint::clangfe
