// parallel/data_parallel: torchrun's variables, the deal of samples to ranks, and the collectives of two
// ranks (two threads, each its own c10d Gloo group over a TCPStore) against hand-worked values.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <future>
#include <map>

#include <ATen/ATen.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "parallel/data_parallel.h"

namespace data_parallel_test {

using vinci::parallel::DataParallel;
using vinci::parallel::LaunchEnvironment;

// Sets the variables for one test and puts the old values back.
using Variables = std::map<std::string, const char*>;

class Environment {
 public:
  explicit Environment(const Variables& values) {
    for (const char* name : {"WORLD_SIZE", "RANK", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT",
                             "TORCHELASTIC_USE_AGENT_STORE", "TORCHELASTIC_RESTART_COUNT"}) {
      if (const char* old = std::getenv(name)) saved_[name] = old;
      unsetenv(name);
    }
    for (const auto& [name, value] : values) setenv(name.c_str(), value, 1);
  }
  ~Environment() {
    for (const auto& [name, value] : saved_) setenv(name.c_str(), value.c_str(), 1);
  }

 private:
  std::map<std::string, std::string> saved_;
};

TEST(DataParallel, LaunchEnvironmentIsTorchrunsVariables) {
  {
    Environment env(Variables{});
    EXPECT_FALSE(vinci::parallel::launch_environment().has_value());
  }
  {
    Environment env(Variables{{"WORLD_SIZE", "4"},
                              {"RANK", "3"},
                              {"LOCAL_RANK", "1"},
                              {"LOCAL_WORLD_SIZE", "2"},
                              {"MASTER_ADDR", "10.0.0.7"},
                              {"MASTER_PORT", "29411"},
                              {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                              {"TORCHELASTIC_RESTART_COUNT", "2"}});
    const auto e = vinci::parallel::launch_environment();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->world_size, 4);
    EXPECT_EQ(e->rank, 3);
    EXPECT_EQ(e->local_rank, 1);
    EXPECT_EQ(e->local_world_size, 2);
    EXPECT_EQ(e->master_addr, "10.0.0.7");
    EXPECT_EQ(e->master_port, 29411);
    EXPECT_TRUE(e->agent_store);
    EXPECT_EQ(e->restart, 2);
  }
  {
    Environment env(Variables{{"WORLD_SIZE", "1"}});  // a single process needs nothing else
    const auto e = vinci::parallel::launch_environment();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->world_size, 1);
    EXPECT_EQ(e->local_world_size, 1);
  }
}

void expect_refused(const Variables& values, const std::string& words) {
  Environment env(values);
  try {
    vinci::parallel::launch_environment();
    ADD_FAILURE() << "accepted; expected an error with: " << words;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(DataParallel, LaunchEnvironmentErrorsNameTheVariable) {
  expect_refused({{"WORLD_SIZE", "2"}}, "$RANK is unset, but WORLD_SIZE is: launch with torchrun");
  expect_refused({{"WORLD_SIZE", "two"}}, "$WORLD_SIZE='two': expected an integer");
  expect_refused({{"WORLD_SIZE", "2"}, {"RANK", "2"}, {"LOCAL_RANK", "0"}}, "$RANK='2': expected an integer in [0, 1]");
  expect_refused({{"WORLD_SIZE", "2"}, {"RANK", "1"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "1"}},
                 "$LOCAL_RANK=1 is not below $LOCAL_WORLD_SIZE=1");
  expect_refused({{"WORLD_SIZE", "2"}, {"RANK", "1"}, {"LOCAL_RANK", "1"}}, "$MASTER_ADDR is unset");
  expect_refused({{"WORLD_SIZE", "2"}, {"RANK", "1"}, {"LOCAL_RANK", "1"}, {"MASTER_ADDR", "h"}, {"MASTER_PORT", "0"}},
                 "$MASTER_PORT='0'");
}

TEST(DataParallel, RankShareDealsLongestFirstToTheLightestRank) {
  // Longest first: 9 -> rank 0 (0, 0), 7 -> rank 1 (9, 0), 5 -> rank 1 (9, 7), 3 -> rank 0 (9, 12),
  // 2 -> rank 0 on the tie (12, 12). Rank 0: samples 1, 2, 4 (14 tokens); rank 1: 0, 3 (12).
  const std::vector<int64_t> samples{5, 9, 3, 7, 2};
  EXPECT_EQ(vinci::parallel::rank_share(samples, 0, 2), (std::vector<size_t>{1, 2, 4}));
  EXPECT_EQ(vinci::parallel::rank_share(samples, 1, 2), (std::vector<size_t>{0, 3}));
  EXPECT_EQ(vinci::parallel::rank_share(samples, 0, 1), (std::vector<size_t>{0, 1, 2, 3, 4}));
  // More ranks than samples: the last rank gets none, and must still join the collectives.
  const std::vector<int64_t> two{4, 4};
  EXPECT_EQ(vinci::parallel::rank_share(two, 0, 3), (std::vector<size_t>{0}));
  EXPECT_EQ(vinci::parallel::rank_share(two, 1, 3), (std::vector<size_t>{1}));
  EXPECT_TRUE(vinci::parallel::rank_share(two, 2, 3).empty());
}

TEST(DataParallel, OneProcessIsTheIdentity) {
  const DataParallel single;
  EXPECT_EQ(single.world_size(), 1);
  EXPECT_TRUE(single.is_main());
  auto t = at::arange(4, at::kFloat);
  single.sum_({t});
  EXPECT_TRUE(t.equal(at::arange(4, at::kFloat)));
  EXPECT_EQ(single.sum({1.5, -2}), (std::vector<double>{1.5, -2}));
  EXPECT_EQ(single.all_gather("x"), (std::vector<std::string>{"x"}));
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t size = sizeof(address);
  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size);
  close(fd);
  return ntohs(address.sin_port);
}

struct RankSeen {
  at::Tensor floats, doubles, broadcast;
  std::vector<double> sums, maxima;
  std::vector<std::string> first, second;
};

RankSeen run_rank(int rank, int port) {
  LaunchEnvironment launch;
  launch.rank = launch.local_rank = rank;
  launch.world_size = launch.local_world_size = 2;
  launch.master_port = port;
  const DataParallel parallel(launch, at::kCPU, std::chrono::seconds(60));
  RankSeen seen;
  // rank r holds r + 1 everywhere (floats) and 10 (r + 1) (doubles): the sums are 3 and 30.
  seen.floats = at::full({3, 5}, rank + 1.0, at::kFloat);
  auto second = at::full({7}, rank + 1.0, at::kFloat);
  seen.doubles = at::full({2}, 10.0 * (rank + 1), at::kDouble);
  parallel.sum_({seen.floats, seen.doubles, second});
  EXPECT_TRUE(second.equal(at::full({7}, 3.0, at::kFloat)));
  seen.broadcast = at::full({4}, rank == 0 ? 7.0 : -1.0, at::kFloat);
  parallel.broadcast_({seen.broadcast});
  seen.sums = parallel.sum({rank + 1.0, 0.5});
  seen.maxima = parallel.max({rank == 0 ? 5.0 : 2.0, -static_cast<double>(rank)});
  seen.first = parallel.all_gather(fmt::format("rank {} says hello", rank));
  seen.second = parallel.all_gather(rank == 0 ? std::string(100000, 'a') : std::string());
  parallel.barrier();
  return seen;
}

TEST(DataParallel, TwoGlooRanksSumBroadcastAndGather) {
  const int port = free_port();
  auto zero = std::async(std::launch::async, run_rank, 0, port);
  auto one = std::async(std::launch::async, run_rank, 1, port);
  for (auto* f : {&zero, &one}) {
    const auto seen = f->get();
    EXPECT_TRUE(seen.floats.equal(at::full({3, 5}, 3.0, at::kFloat)));
    EXPECT_TRUE(seen.doubles.equal(at::full({2}, 30.0, at::kDouble)));
    EXPECT_TRUE(seen.broadcast.equal(at::full({4}, 7.0, at::kFloat)));
    EXPECT_EQ(seen.sums, (std::vector<double>{3.0, 1.0}));
    EXPECT_EQ(seen.maxima, (std::vector<double>{5.0, 0.0}));
    EXPECT_EQ(seen.first, (std::vector<std::string>{"rank 0 says hello", "rank 1 says hello"}));
    EXPECT_EQ(seen.second, (std::vector<std::string>{std::string(100000, 'a'), std::string()}));
  }
}

}  // namespace data_parallel_test
