#include "queue/redis_url.h"

#include <gtest/gtest.h>

namespace vinci::queue::redis_url_test {

TEST(RedisUrl, ReadsEveryPart) {
  const RedisUrl u = parse_redis_url("redis://evaluator:s3cret@10.0.0.5:6380/2");
  EXPECT_EQ(u.user, "evaluator");
  EXPECT_EQ(u.password, "s3cret");
  EXPECT_EQ(u.host, "10.0.0.5");
  EXPECT_EQ(u.port, 6380);
  EXPECT_EQ(u.db, 2);
}

TEST(RedisUrl, PasswordAloneAndDefaults) {
  const RedisUrl u = parse_redis_url("redis://:pw@localhost:6379");
  EXPECT_EQ(u.user, "");
  EXPECT_EQ(u.password, "pw");
  EXPECT_EQ(u.db, 0);
  const RedisUrl bare = parse_redis_url("redis://queue.internal:7000/");
  EXPECT_EQ(bare.host, "queue.internal");
  EXPECT_EQ(bare.password, "");
  EXPECT_EQ(bare.port, 7000);
}

TEST(RedisUrl, PercentEncodedPasswordKeepsItsAtAndColon) {
  const RedisUrl u = parse_redis_url("redis://w:a%40b%3Ac@h:1");
  EXPECT_EQ(u.password, "a@b:c");
}

TEST(RedisUrl, RedactedNeverShowsThePassword) {
  const RedisUrl u = parse_redis_url("redis://w:topsecret@h:1/3");
  EXPECT_EQ(u.redacted(), "redis://w:***@h:1/3");
}

TEST(RedisUrl, RefusalsNameTheProblemAndHideThePassword) {
  auto message = [](const char* url) {
    try {
      parse_redis_url(url);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  const std::string https = message("https://h:1");
  EXPECT_NE(https.find("does not start with redis://"), std::string::npos) << https;
  const std::string no_port = message("redis://:pw@h");
  EXPECT_NE(no_port.find("no ':PORT'"), std::string::npos) << no_port;
  EXPECT_EQ(no_port.find("pw"), std::string::npos) << no_port;
  const std::string bad_port = message("redis://:hunter2@h:99999");
  EXPECT_NE(bad_port.find("port '99999'"), std::string::npos) << bad_port;
  EXPECT_EQ(bad_port.find("hunter2"), std::string::npos) << bad_port;
  const std::string bad_db = message("redis://h:1/x");
  EXPECT_NE(bad_db.find("database number 'x'"), std::string::npos) << bad_db;
  const std::string no_colon = message("redis://justpassword@h:1");
  EXPECT_NE(no_colon.find("no ':'"), std::string::npos) << no_colon;
}

}  // namespace vinci::queue::redis_url_test
