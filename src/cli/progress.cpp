#include "cli/progress.h"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdio>

namespace ekb::cli {

namespace {
std::string clock_text(double s) {
  int t = static_cast<int>(s + 0.5);
  return t >= 3600 ? fmt::format("{}h{:02}m", t / 3600, t / 60 % 60) : fmt::format("{}m{:02}s", t / 60, t % 60);
}
}  // namespace

Progress::Progress(int total, int already)
    : total_(total), done_(already), started_with_(already), tty_(isatty(fileno(stderr)) != 0),
      start_(std::chrono::steady_clock::now()) {}

void Progress::step(const std::string& line) {
  ++done_;
  draw(line);
}

void Progress::draw(const std::string& line) {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  int fresh = done_ - started_with_;
  std::string eta = fresh > 0 ? clock_text(elapsed / fresh * (total_ - done_)) : "?";
  if (!tty_) {
    fmt::print(stderr, "[{}/{}] {}\n", done_, total_, line);
    return;
  }
  const int width = 24;
  int filled = total_ ? width * done_ / total_ : width;
  std::string bar = std::string(filled, '#') + std::string(width - filled, '.');
  std::string text = fmt::format("[{}] {}/{} ETA {}  {}", bar, done_, total_, eta, line);
  if (text.size() > 110) text = text.substr(0, 107) + "...";
  fmt::print(stderr, "\r\033[2K{}", text);
  std::fflush(stderr);
}

void Progress::finish() {
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (tty_) fmt::print(stderr, "\r\033[2K");
  fmt::print(stderr, "{} of {} done in {}\n", done_, total_, clock_text(elapsed));
}

}  // namespace ekb::cli
