// Progress for long commands: a redrawn bar with ETA on a terminal, plain log lines otherwise
// (CI logs, pipes), so neither gets the other's noise.
#pragma once
#include <chrono>
#include <string>

namespace ekb::cli {

class Progress {
 public:
  // `total` items, `already` of them done before this process started (a resumed run).
  Progress(int total, int already);
  // One more item finished; `line` says what happened to it ("nn.softmax/x  correct 1.93x").
  void step(const std::string& line);
  void finish();

 private:
  void draw(const std::string& line);
  int total_, done_, started_with_;
  bool tty_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace ekb::cli
