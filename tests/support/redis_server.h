// A real redis-server for one test: its own free port on loopback, its own folder, append-only
// persistence fsynced on every write (so a kill -9 loses nothing that was acknowledged), a password.
// Killed with SIGKILL and started again on the same port and folder to test recovery.
#pragma once

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace vinci::test {

class RedisServer {
 public:
  RedisServer(std::filesystem::path dir, std::string password)
      : dir_(std::move(dir)), password_(std::move(password)), port_(free_port()) {
    std::filesystem::create_directories(dir_);
    start();
  }
  ~RedisServer() { kill9(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  int port() const { return port_; }
  std::string url(const std::string& password) const {
    return fmt::format("redis://:{}@127.0.0.1:{}", password, port_);
  }
  std::string url() const { return url(password_); }

  void kill9() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  // Starts the server and returns once it answers PING (perhaps with LOADING), so a test never races
  // its start. extra: more options, e.g. Redis' own test knob --key-load-delay (microseconds a key).
  void start(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args{VINCI_REDIS_SERVER,
                                  "--port",
                                  std::to_string(port_),
                                  "--bind",
                                  "127.0.0.1",
                                  "--dir",
                                  dir_.string(),
                                  "--appendonly",
                                  "yes",
                                  "--appendfsync",
                                  "always",
                                  "--save",
                                  "",
                                  "--requirepass",
                                  password_,
                                  "--logfile",
                                  (dir_ / "redis.log").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!answers()) {
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error(
            fmt::format("redis-server on port {} did not start; see {}", port_, (dir_ / "redis.log").string()));
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

 private:
  static int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    socklen_t len = sizeof addr;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    ::close(fd);
    return ntohs(addr.sin_port);
  }

  // A raw PING: the server is up once it answers, even if only with NOAUTH.
  bool answers() const {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port_));
    bool ok = false;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
      const std::string ping = "PING\r\n";
      char buf[64];
      ok =
          ::write(fd, ping.data(), ping.size()) == static_cast<ssize_t>(ping.size()) && ::read(fd, buf, sizeof buf) > 0;
    }
    ::close(fd);
    return ok;
  }

  std::filesystem::path dir_;
  std::string password_;
  int port_;
  pid_t pid_ = -1;
};

}  // namespace vinci::test
