// A throwaway PostgreSQL server for tests of the shared results store (docs/SCALE_OUT.md): Debian's
// postgresql 15, its own data directory in a temporary folder, reachable only through a unix
// socket in that folder (no TCP port, so nothing on the machine can clash with it). PostgreSQL
// refuses to run as root, so under root it runs as `nobody` (setpriv), owning its folder.
#pragma once
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace ekb::testing {

class PostgresServer {
 public:
  static constexpr const char* kBin = "/usr/lib/postgresql/15/bin";

  PostgresServer() = default;
  PostgresServer(const PostgresServer&) = delete;
  PostgresServer& operator=(const PostgresServer&) = delete;
  ~PostgresServer() { stop(); }

  // Starts the server; false, with the reason in *why, when it cannot run here (the caller skips).
  // `durable`: each commit flushed to disk, as a production server does (bench/store_throughput.sh).
  bool start(std::string* why, bool durable = false) {
    namespace fs = std::filesystem;
    if (!fs::exists(std::string(kBin) + "/postgres")) {
      *why = std::string(kBin) + "/postgres is missing (postgresql: scripts/install-deps.sh)";
      return false;
    }
    std::string tmpl = ::testing::TempDir() + "/ekb_pg_XXXXXX";
    if (!::mkdtemp(tmpl.data())) {
      *why = "mkdtemp failed";
      return false;
    }
    dir_ = tmpl;
    ::chmod(dir_.c_str(), 0755);  // `nobody` reaches its data and socket directories inside
    const std::string data = dir_ + "/data", sockets = dir_ + "/sockets";
    fs::create_directories(data);
    fs::create_directories(sockets);
    std::string as_user;
    if (::geteuid() == 0) {
      if (::access("/usr/bin/setpriv", X_OK) != 0) {
        *why = "running as root without /usr/bin/setpriv to run postgres as another user";
        return false;
      }
      for (const auto& d : {dir_, data, sockets})
        if (::chown(d.c_str(), 65534, 65534) != 0) {
          *why = "cannot give " + d + " to nobody";
          return false;
        }
      as_user = "/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups ";
    }
    const std::string init = as_user + kBin + "/initdb -D " + data + " -U ekb --auth=trust -E UTF8 --no-sync >" + dir_ +
                             "/initdb.log 2>&1";
    if (std::system(init.c_str()) != 0) {
      *why = "initdb failed: " + read(dir_ + "/initdb.log");
      return false;
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string log = dir_ + "/postgres.log";
      std::freopen(log.c_str(), "w", stderr);
      std::freopen("/dev/null", "w", stdout);
      // fsync off unless durable: the tests are about concurrent writers and killed clients, not power loss.
      const std::string command = "exec " + as_user + kBin + "/postgres -D " + data + " -k " + sockets + " -p " +
                                  std::to_string(kPort) + " -c listen_addresses= -c max_connections=100" +
                                  (durable ? "" : " -c fsync=off");
      ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    // Ready when a client connects; polled, for a busy machine may take long to start it.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    const std::string probe = std::string(kBin) + "/pg_isready -q -h " + sockets + " -p " + std::to_string(kPort);
    while (std::chrono::steady_clock::now() < deadline) {
      if (std::system(probe.c_str()) == 0) {
        url_ = "postgresql://ekb@/postgres?host=" + sockets + "&port=" + std::to_string(kPort);
        return true;
      }
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    *why = "postgres did not start: " + read(dir_ + "/postgres.log");
    return false;
  }

  // libpq's URL of the server's `postgres` database.
  const std::string& url() const { return url_; }

  // A new, empty database on the server, and its URL: one per test, so that tests sharing a
  // server never see each other's runs.
  std::string create_database(const std::string& name) {
    const std::string sql = std::string(kBin) + "/psql -q -X \"" + url_ + "\" -c 'CREATE DATABASE " +
                            name + "' >/dev/null 2>&1";
    if (std::system(sql.c_str()) != 0) return "";
    std::string url = url_;
    url.replace(url.find("/postgres?"), 10, "/" + name + "?");
    return url;
  }

  void stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGINT);  // fast shutdown: clients are cut off, nothing to wait for
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    if (!dir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(dir_, ignored);
      dir_.clear();
    }
  }

 private:
  static constexpr int kPort = 5432;  // names the socket file only: there is no TCP listener

  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string dir_;
  std::string url_;
  pid_t pid_ = -1;
};

}  // namespace ekb::testing
