// One HTTP/1.1 request through libcurl, with errors sorted by what the caller should do about them.
#pragma once

#include <chrono>
#include <map>
#include <stdexcept>
#include <string>

namespace vinci::core {

struct HttpRequest {
  std::string method = "POST";
  std::string url;
  std::map<std::string, std::string> headers;
  std::string body;
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};  // the whole exchange
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(10)};
};

struct HttpResponse {
  long status = 0;
  std::string body;
  std::string content_type;
};

// Transport failures only: an HTTP status, 4xx or 5xx, is a response, not an HttpError.
class HttpError : public std::runtime_error {
 public:
  enum class Kind {
    refused,    // nothing listens there, or the name does not resolve
    timeout,    // no complete answer within the request's timeout
    truncated,  // the connection closed before the announced body was complete
    transport,  // anything else libcurl reports (TLS, malformed HTTP...)
  };
  HttpError(Kind kind, std::string url, const std::string& what);
  Kind kind() const { return kind_; }
  const std::string& url() const { return url_; }

 private:
  Kind kind_;
  std::string url_;
};

const char* http_error_kind_name(HttpError::Kind kind);

// Thread-safe: each call uses its own libcurl handle.
HttpResponse http_send(const HttpRequest& request);

}  // namespace vinci::core
