#include "core/http_client.h"

#include <memory>
#include <mutex>

#include <curl/curl.h>
#include <fmt/format.h>

namespace vinci::core {

namespace {

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

size_t append_body(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

HttpError::Kind kind_of(CURLcode code) {
  switch (code) {
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY: return HttpError::Kind::refused;
    case CURLE_OPERATION_TIMEDOUT: return HttpError::Kind::timeout;
    case CURLE_PARTIAL_FILE:
    case CURLE_GOT_NOTHING:
    case CURLE_RECV_ERROR: return HttpError::Kind::truncated;
    default: return HttpError::Kind::transport;
  }
}

}  // namespace

HttpError::HttpError(Kind kind, std::string url, const std::string& what)
    : std::runtime_error(what), kind_(kind), url_(std::move(url)) {}

const char* http_error_kind_name(HttpError::Kind kind) {
  switch (kind) {
    case HttpError::Kind::refused: return "refused";
    case HttpError::Kind::timeout: return "timeout";
    case HttpError::Kind::truncated: return "truncated";
    case HttpError::Kind::transport: return "transport";
  }
  return "?";
}

HttpResponse http_send(const HttpRequest& request) {
  global_init_once();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) throw HttpError(HttpError::Kind::transport, request.url, "libcurl could not create a handle");
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(nullptr, curl_slist_free_all);
  for (const auto& [name, value] : request.headers) {
    curl_slist* grown = curl_slist_append(headers.get(), fmt::format("{}: {}", name, value).c_str());
    if (!grown) throw HttpError(HttpError::Kind::transport, request.url, "libcurl could not add a header");
    headers.release();
    headers.reset(grown);
  }
  HttpResponse response;
  char error[CURL_ERROR_SIZE] = {0};
  CURL* h = curl.get();
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  if (request.method != "GET") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(request.connect_timeout.count()));
  // Worker threads must not receive SIGALRM from the resolver's timeout.
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, append_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &response.body);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, error);
  const CURLcode code = curl_easy_perform(h);
  if (code != CURLE_OK) {
    const std::string detail = error[0] ? error : curl_easy_strerror(code);
    throw HttpError(kind_of(code), request.url, fmt::format("{} {}: {}", request.method, request.url, detail));
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  const char* type = nullptr;
  curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &type);
  if (type) response.content_type = type;
  return response;
}

}  // namespace vinci::core
