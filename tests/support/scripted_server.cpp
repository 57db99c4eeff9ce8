#include "support/scripted_server.h"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

namespace vinci::test {

namespace {

bool send_all(int fd, const std::string& data) {
  size_t sent = 0;
  while (sent < data.size()) {
    const ssize_t n = ::send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return true;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 503: return "Service Unavailable";
    default: return "Status";
  }
}

// The reply's status line and headers, then body: the whole of reply.body, or (a truncated reply)
// a part of it under the full Content-Length.
void send_reply(int fd, const ScriptedReply& reply, const std::string& body) {
  send_all(fd, fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                           reply.status, reason_phrase(reply.status), reply.content_type, reply.body.size(), body));
}

}  // namespace

ScriptedServer::ScriptedServer() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  if (listen_fd_ < 0) throw std::runtime_error("scripted server: socket() failed");
  const int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(listen_fd_, 64) != 0)
    throw std::runtime_error("scripted server: cannot listen on 127.0.0.1");
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { accept_loop(); });
}

ScriptedServer::~ScriptedServer() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  stop_cv_.notify_all();
  ::shutdown(listen_fd_, SHUT_RDWR);
  ::close(listen_fd_);
  acceptor_.join();
  for (auto& t : connections_) t.join();
}

std::string ScriptedServer::base_url() const { return fmt::format("http://127.0.0.1:{}/v1", port_); }

void ScriptedServer::respond_with(std::function<ScriptedReply(const RecordedRequest&)> responder) {
  std::lock_guard lock(mu_);
  responder_ = std::move(responder);
}

void ScriptedServer::push(ScriptedReply reply) {
  std::lock_guard lock(mu_);
  script_.push_back(std::move(reply));
}

void ScriptedServer::answer_gets(ScriptedReply reply) {
  std::lock_guard lock(mu_);
  get_reply_ = std::move(reply);
}

std::vector<RecordedRequest> ScriptedServer::requests() const {
  std::lock_guard lock(mu_);
  return requests_;
}

int ScriptedServer::max_in_flight() const {
  std::lock_guard lock(mu_);
  return max_in_flight_;
}

void ScriptedServer::accept_loop() {
  for (;;) {
    const int fd = ::accept(listen_fd_, nullptr, nullptr);
    std::lock_guard lock(mu_);
    if (stopping_) {
      if (fd >= 0) ::close(fd);
      return;
    }
    if (fd < 0) continue;
    connections_.emplace_back([this, fd] { serve(fd); });
  }
}

void ScriptedServer::serve(int fd) {
  // One request per connection: read the head, then Content-Length bytes of body.
  std::string data;
  char buf[65536];
  size_t head_end;
  while ((head_end = data.find("\r\n\r\n")) == std::string::npos) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
      ::close(fd);
      return;
    }
    data.append(buf, static_cast<size_t>(n));
  }
  RecordedRequest req;
  const std::string head = data.substr(0, head_end);
  size_t line_end = head.find("\r\n");
  const std::string request_line = head.substr(0, line_end);
  const size_t sp1 = request_line.find(' '), sp2 = request_line.rfind(' ');
  req.method = request_line.substr(0, sp1);
  req.path = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  while (line_end != std::string::npos && line_end < head.size()) {
    const size_t next = head.find("\r\n", line_end + 2);
    const std::string line =
        head.substr(line_end + 2, next == std::string::npos ? std::string::npos : next - line_end - 2);
    const size_t colon = line.find(':');
    if (colon != std::string::npos) {
      std::string name = line.substr(0, colon);
      std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
      std::string value = line.substr(colon + 1);
      value.erase(0, value.find_first_not_of(' '));
      req.headers[name] = value;
    }
    line_end = next;
  }
  const size_t length = req.headers.count("content-length") ? std::stoul(req.headers["content-length"]) : 0;
  req.body = data.substr(head_end + 4);
  while (req.body.size() < length) {
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    req.body.append(buf, static_cast<size_t>(n));
  }

  if (req.method == "GET") {  // a client's probe of /models: not one of the scripted exchanges
    ScriptedReply get;
    {
      std::lock_guard lock(mu_);
      get = get_reply_;
    }
    send_reply(fd, get, get.body);
    ::shutdown(fd, SHUT_RDWR);
    ::close(fd);
    return;
  }
  ScriptedReply reply;
  {
    std::lock_guard lock(mu_);
    requests_.push_back(req);
    if (script_.empty() && responder_) {
      reply = responder_(req);
    } else if (script_.empty()) {
      reply.status = 500;
      reply.body = R"({"error": {"message": "the scripted server has no reply left"}})";
    } else {
      reply = std::move(script_.front());
      script_.pop_front();
    }
    max_in_flight_ = std::max(max_in_flight_, ++in_flight_);
  }
  {
    std::unique_lock lock(mu_);
    if (reply.mode == ScriptedReply::Mode::hang)
      stop_cv_.wait(lock, [&] { return stopping_; });
    else
      stop_cv_.wait_for(lock, reply.delay, [&] { return stopping_; });
    // Counted out before the answer goes: a client may read it and send its next request before
    // this thread gets past send_reply, and that must not look like one more request at once.
    --in_flight_;
  }
  if (reply.mode != ScriptedReply::Mode::close && reply.mode != ScriptedReply::Mode::hang) {
    const std::string body =
        reply.mode == ScriptedReply::Mode::truncated ? reply.body.substr(0, reply.body.size() / 2) : reply.body;
    send_reply(fd, reply, body);
  }
  ::shutdown(fd, SHUT_RDWR);
  ::close(fd);
}

}  // namespace vinci::test
