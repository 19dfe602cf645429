#include "tidy/DataloaderRecreatedCheck.h"

namespace ddplint::tidy {

DataloaderRecreatedCheck::DataloaderRecreatedCheck(llvm::StringRef name,
                                                   clang::tidy::ClangTidyContext *context)
    : FactBasedCheck(name, context, "ddp-dataloader-recreated") {
  factories_ = core::builtinApi().dataLoaderFactories;
  factories_.insert(factories_.end(), user_.dataLoaderFactories.begin(),
                    user_.dataLoaderFactories.end());
}

void DataloaderRecreatedCheck::run(core::Program &program, clangfe::FactsBuilder &facts,
                                   clang::ASTContext &) {
  // Instantiations too: in a template, make_data_loader(dataset, ...) on a
  // dependent dataset only resolves there.
  facts.addDataLoaders(program.facts, factories_);
  for (const core::Finding &f : core::dataLoaderRecreatedFindings(program))
    emit(f, facts);
}

} // namespace ddplint::tidy
