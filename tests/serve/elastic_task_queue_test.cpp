// The server's connection threads (serve/elastic_task_queue.h): a thread starts whenever none is
// free, up to the cap, beyond which jobs wait their turn; idle threads end; shutdown runs what is
// queued. Jobs block on a latch the test opens, so every count below is exact, not timed.
#include "serve/elastic_task_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <thread>

namespace elastic_task_queue_test {
using vinci::serve::ElasticTaskQueue;
using namespace std::chrono_literals;

// Polls until the predicate holds or 10 s pass: a bound on a wait, never a measured speed.
template <typename F>
bool eventually(F predicate) {
  for (int i = 0; i < 1000; ++i) {
    if (predicate()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return predicate();
}

TEST(ElasticTaskQueue, StartsAThreadPerBlockedJobUpToTheCap) {
  ElasticTaskQueue queue(3);
  std::latch release(1);
  std::atomic<int> started = 0, finished = 0;
  for (int i = 0; i < 5; ++i)
    queue.enqueue([&] {
      ++started;
      release.wait();
      ++finished;
    });
  EXPECT_TRUE(eventually([&] { return started == 3; }));
  EXPECT_EQ(queue.threads(), 3u) << "the cap";
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(started, 3) << "the other two wait for a thread";
  release.count_down();
  EXPECT_TRUE(eventually([&] { return finished == 5; }));
  EXPECT_EQ(queue.threads(), 3u) << "no more threads than the cap, ever";
}

TEST(ElasticTaskQueue, AFreeThreadTakesTheNextJobAndIdleOnesEnd) {
  ElasticTaskQueue queue(8, 100ms);
  std::atomic<int> done = 0;
  queue.enqueue([&] { ++done; });
  EXPECT_TRUE(eventually([&] { return done == 1; }));
  queue.enqueue([&] { ++done; });
  EXPECT_TRUE(eventually([&] { return done == 2; }));
  EXPECT_LE(queue.threads(), 1u) << "the idle thread took the second job";
  EXPECT_TRUE(eventually([&] { return queue.threads() == 0; })) << "an idle thread ends after 100 ms";
  queue.enqueue([&] { ++done; });
  EXPECT_TRUE(eventually([&] { return done == 3; })) << "and a new one starts for the next job";
}

TEST(ElasticTaskQueue, ShutdownRunsWhatIsQueuedThenEndsEveryThread) {
  std::atomic<int> done = 0;
  ElasticTaskQueue queue(1);
  std::latch release(1);
  queue.enqueue([&] { release.wait(); });
  for (int i = 0; i < 4; ++i) queue.enqueue([&] { ++done; });
  std::thread opener([&] {
    std::this_thread::sleep_for(20ms);
    release.count_down();
  });
  queue.shutdown();
  opener.join();
  EXPECT_EQ(done, 4);
  EXPECT_EQ(queue.threads(), 0u);
}

}  // namespace elastic_task_queue_test
