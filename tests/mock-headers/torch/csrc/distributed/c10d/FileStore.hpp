#pragma once
#include "ProcessGroup.hpp"
namespace c10d {
class FileStore : public Store {
public:
  FileStore(const std::string &path, int numWorkers) {}
};
} // namespace c10d
