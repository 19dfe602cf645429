#include "supervisor_link.hpp"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <yaml-cpp/yaml.h>

#include <chrono>
#include <thread>

#include "report.hpp"

namespace ddph {

namespace {

class StoreLink : public SupervisorLink {
 public:
  StoreLink(const std::string& addr, int port, bool server, double timeoutS) {
    c10d::TCPStoreOptions o;
    o.port = uint16_t(port);
    o.isServer = server;
    o.waitWorkers = false;
    o.timeout = std::chrono::milliseconds(int64_t(timeoutS * 1000));
    tcp_ = c10::make_intrusive<c10d::TCPStore>(addr, o);
    store_ = c10::make_intrusive<c10d::PrefixStore>("ddph-sup", tcp_);
  }
  void publishFlags(int rank, bool blocked, bool idle, bool bad, bool exited) override {
    std::string v = {blocked ? 'b' : '-', idle ? 'i' : '-', bad ? 'x' : '-', exited ? 'e' : '-'};
    set("flags/" + std::to_string(rank), v);
  }
  std::vector<RankFlags> readFlags(int world) override {
    std::vector<RankFlags> f(static_cast<size_t>(world));
    for (int r = 0; r < world; ++r) {
      std::string k = "flags/" + std::to_string(r);
      if (!has(k)) continue;
      std::string v = get(k);
      if (v.size() < 4) continue;
      f[size_t(r)] = RankFlags{true, v[0] == 'b', v[1] == 'i', v[2] == 'x', v[3] == 'e'};
    }
    return f;
  }
  void publishSnapshot(int rank, const std::string& json) override { set("snap/" + std::to_string(rank), json); }
  std::vector<RankView> collectSnapshots(int world, double timeoutS) override {
    std::vector<RankView> out;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeoutS);
    for (int r = 0; r < world; ++r) {
      std::string k = "snap/" + std::to_string(r);
      while (!has(k) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (!has(k)) {
        RankView v;
        v.rank = r;
        v.error = "no state from this rank's supervisor within " + std::to_string(int(timeoutS)) +
                  " s (its node or launcher is gone)";
        v.errorNs = 1;
        out.push_back(v);
        continue;
      }
      try {
        out.push_back(rankFromJson(YAML::Load(get(k))));
      } catch (const std::exception& e) {
        RankView v;
        v.rank = r;
        v.error = std::string("unreadable state from this rank's supervisor: ") + e.what();
        out.push_back(v);
      }
    }
    return out;
  }
  void set(const std::string& k, const std::string& v) override {
    store_->set(k, std::vector<uint8_t>(v.begin(), v.end()));
  }
  bool has(const std::string& k) override { return store_->check({k}); }
  std::string get(const std::string& k) override {
    auto v = store_->get(k);
    return std::string(v.begin(), v.end());
  }

 private:
  c10::intrusive_ptr<c10d::TCPStore> tcp_;
  c10::intrusive_ptr<c10d::Store> store_;
};

}  // namespace

std::unique_ptr<SupervisorLink> SupervisorLink::connect(const std::string& addr, int port, bool server,
                                                        double timeoutS) {
  return std::make_unique<StoreLink>(addr, port, server, timeoutS);
}

}  // namespace ddph
