// Candidates never reach Redis (issue 37's trust rule): a process under vinci-sandbox, the launcher
// every candidate runs under, that knows the server's address and password still cannot write a
// result, while the same script outside the sandbox can (so the attempt is a real one).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "core/process.h"
#include "queue/queue_layout.h"
#include "queue/redis_connection.h"
#include "support/redis_server.h"
#include "support/temp_dir.h"

namespace vinci::queue::candidate_isolation_test {

using namespace std::chrono_literals;

// Forges a result over a raw socket, as a candidate would: AUTH, then SET on the result store.
std::string forging_script(int port, const std::string& password, const std::string& key) {
  return fmt::format(
      "import socket\n"
      "try:\n"
      "    s = socket.create_connection(('127.0.0.1', {}), timeout=10)\n"
      "except OSError as e:\n"
      "    print('no connection', e.errno)\n"
      "    raise SystemExit(0)\n"
      "s.sendall(b'AUTH {}\\r\\nSET {} forged\\r\\n')\n"
      "reply = b''\n"
      "while reply.count(b'\\r\\n') < 2:\n"
      "    reply += s.recv(100)\n"
      "print(reply.decode().replace('\\r\\n', ' ').strip())\n",
      port, password, key);
}

core::Completed run(std::vector<std::string> argv) {
  core::SpawnOptions o;
  o.argv = std::move(argv);
  return core::run_to_completion(o, 60s);
}

TEST(CandidateIsolation, ASandboxedCandidateCannotReachRedis) {
  if (!std::filesystem::exists("/usr/bin/python3")) GTEST_SKIP() << "no /usr/bin/python3";
  test::TempDir dir("queue-isolation");
  const std::string password = "isolation-password";
  test::RedisServer server(dir.path() / "redis", password);
  RedisConnection redis(parse_redis_url(server.url()));
  const QueueLayout layout;

  const std::string inside_key = layout.result("forged-from-the-sandbox");
  const auto inside = run({VINCI_SANDBOX_BINARY, "--env", "PATH=/usr/bin:/bin", "--", "/usr/bin/python3", "-c",
                           forging_script(server.port(), password, inside_key)});
  EXPECT_NE(inside.out.find("no connection"), std::string::npos) << inside.out;
  EXPECT_TRUE(redis.command({"GET", inside_key}).is_nil());

  const std::string outside_key = layout.result("forged-outside");
  const auto outside = run({"/usr/bin/python3", "-c", forging_script(server.port(), password, outside_key)});
  EXPECT_EQ(outside.out, "+OK +OK\n");
  EXPECT_EQ(redis.command({"GET", outside_key}).str(), "forged");
}

}  // namespace vinci::queue::candidate_isolation_test
