// An HTTP/1.1 server on loopback that answers each request with the next scripted reply and
// records what it was sent. It works on raw sockets so that a test can also script what a real
// server does wrong: a body cut short, a hang, a closed connection. A GET (a client's probe of
// /models) is answered by `answer_gets` (404 unless set) and neither recorded nor counted against
// the script.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace vinci::test {

struct ScriptedReply {
  enum class Mode {
    normal,
    truncated,  // announces the full Content-Length, sends half the body, closes
    hang,       // never answers (until the server stops)
    close,      // closes the connection without a byte
  };
  int status = 200;
  std::string body;
  Mode mode = Mode::normal;
  std::chrono::milliseconds delay{0};  // before answering
  std::string content_type = "application/json";
};

struct RecordedRequest {
  std::string method, path, body;
  std::map<std::string, std::string> headers;  // names lower-cased
};

class ScriptedServer {
 public:
  ScriptedServer();  // listens on 127.0.0.1 at a free port
  ~ScriptedServer();
  ScriptedServer(const ScriptedServer&) = delete;
  ScriptedServer& operator=(const ScriptedServer&) = delete;

  int port() const { return port_; }
  std::string base_url() const;  // http://127.0.0.1:PORT/v1

  void push(ScriptedReply reply);
  void answer_gets(ScriptedReply reply);
  // Answers requests once the scripted replies run out: for conversations whose order across
  // concurrent requests is not fixed, the reply is chosen by what the request says.
  void respond_with(std::function<ScriptedReply(const RecordedRequest&)> responder);
  std::vector<RecordedRequest> requests() const;
  int max_in_flight() const;  // most requests being answered at one time

 private:
  void accept_loop();
  void serve(int fd);

  int listen_fd_ = -1;
  int port_ = 0;
  bool stopping_ = false;
  mutable std::mutex mu_;
  std::condition_variable stop_cv_;
  std::deque<ScriptedReply> script_;
  ScriptedReply get_reply_{404, ""};
  std::function<ScriptedReply(const RecordedRequest&)> responder_;
  std::vector<RecordedRequest> requests_;
  int in_flight_ = 0, max_in_flight_ = 0;
  std::vector<std::thread> connections_;
  std::thread acceptor_;
};

}  // namespace vinci::test
