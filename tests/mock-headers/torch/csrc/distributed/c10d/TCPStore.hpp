#pragma once
#include "ProcessGroup.hpp"
namespace c10d {
struct TCPStoreOptions {
  unsigned short port = 29500;
  bool isServer = false;
  int numWorkers = -1;
  bool waitWorkers = true;
  std::chrono::milliseconds timeout = std::chrono::milliseconds(300000);
};
class TCPStore : public Store {
public:
  TCPStore(std::string host, const TCPStoreOptions &opts = {}) {}
};
} // namespace c10d
