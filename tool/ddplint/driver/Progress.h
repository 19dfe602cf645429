// The progress line of a long run on a terminal.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>

namespace ddplint::cli {

// The progress line on a terminal's stderr, shown only once a run has taken
// more than a second (a warm pre-commit run stays silent): "[done/total] what".
class Progress {
public:
  Progress(bool enabled, size_t total) : enabled_(enabled), total_(total) {
    if (!enabled_)
      return;
    // DDPLINT_PROGRESS_DELAY_MS: the tests' way to see the line on a fast run.
    long delayMs = 1000;
    if (const char *d = std::getenv("DDPLINT_PROGRESS_DELAY_MS"))
      delayMs = std::strtol(d, nullptr, 10);
    ticker_ = std::thread([this, delayMs] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, std::chrono::milliseconds(delayMs), [this] { return finished_; })) {
        shown_ = true;
        draw();
      }
    });
  }
  ~Progress() { finish(); }
  // What a worker is doing now ("preamble for 20 units: torch/torch.h").
  void status(const std::string &what) {
    if (!enabled_)
      return;
    std::lock_guard<std::mutex> lock(mu_);
    current_ = what;
    if (shown_)
      draw();
  }
  void step(const std::string &file) {
    if (!enabled_)
      return;
    std::lock_guard<std::mutex> lock(mu_);
    ++done_;
    current_ = std::filesystem::path(file).filename().string();
    if (shown_)
      draw();
  }
  void finish() {
    if (!enabled_)
      return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (finished_)
        return;
      finished_ = true;
    }
    cv_.notify_all();
    if (ticker_.joinable())
      ticker_.join();
    if (shown_)
      std::cerr << "\r\033[K" << std::flush;
  }

private:
  void draw() {
    std::cerr << "\r\033[K[" << done_ << "/" << total_ << "] " << current_ << std::flush;
  }
  bool enabled_;
  size_t total_, done_ = 0;
  std::string current_ = "starting";
  bool shown_ = false, finished_ = false;
  std::mutex mu_;
  std::condition_variable cv_;
  std::thread ticker_;
};

} // namespace ddplint::cli
