// Which tasks each co-evolution step takes and which rank runs each (src/rl/task_schedule): every
// epoch visits every task once, the cursor alone says where a run is, and ranks split a batch.
#include <gtest/gtest.h>

#include <set>

#include "rl/task_schedule.h"

namespace task_schedule_test {

using vinci::rl::TaskCursor;
using vinci::rl::TaskSchedule;

std::vector<vinci::eval::Task> suite(int n) {
  std::vector<vinci::eval::Task> tasks(n);
  for (int i = 0; i < n; ++i) tasks[i].id = "level1/" + std::to_string(i + 1) + "_T";
  return tasks;
}

TEST(TaskSchedule, EveryEpochVisitsEveryTaskOnceAndTheCursorMovesOn) {
  const auto tasks = suite(5);
  const TaskSchedule schedule(tasks, 2, 7);
  TaskCursor cursor;
  std::multiset<std::string> first_epoch;
  // 5 tasks, 2 a step: steps 1-2 take 4 tasks of epoch 1, step 3 its last and the first of epoch 2.
  for (int step = 1; step <= 3; ++step) {
    const auto batch = schedule.next(cursor);
    ASSERT_EQ(batch.size(), 2u);
    for (size_t i = 0; i < batch.size(); ++i)
      if (step < 3 || i == 0) first_epoch.insert(batch[i]->id);
  }
  EXPECT_EQ(first_epoch.size(), 5u);
  EXPECT_EQ(std::set<std::string>(first_epoch.begin(), first_epoch.end()).size(), 5u);
  EXPECT_EQ(cursor.epoch, 2);
  EXPECT_EQ(cursor.position, 1u);
}

TEST(TaskSchedule, ACursorResumesTheSameTasks) {
  const auto tasks = suite(6);
  const TaskSchedule schedule(tasks, 4, 3);
  TaskCursor whole;
  schedule.next(whole);
  const TaskCursor saved = whole;  // what a checkpoint after step 1 keeps
  const auto step2 = schedule.next(whole);
  TaskCursor resumed = saved;
  EXPECT_EQ(schedule.next(resumed), step2);
  EXPECT_EQ(TaskSchedule(tasks, 4, 3).suite_hash(), schedule.suite_hash());
  EXPECT_NE(TaskSchedule(suite(5), 4, 3).suite_hash(), schedule.suite_hash());
}

TEST(TaskSchedule, AStepTakesAtMostTheSuiteAndAtLeastOneTask) {
  const auto tasks = suite(3);
  TaskCursor cursor;
  EXPECT_EQ(TaskSchedule(tasks, 8, 0).next(cursor).size(), 3u);
  EXPECT_EQ(TaskSchedule(tasks, 0, 0).next(cursor).size(), 1u);
  EXPECT_THROW(TaskSchedule({}, 1, 0), std::invalid_argument);
}

TEST(TaskSchedule, RanksTakeEveryWorldSizethTask) {
  EXPECT_EQ(vinci::rl::rank_tasks(5, 0, 2), (std::vector<size_t>{0, 2, 4}));
  EXPECT_EQ(vinci::rl::rank_tasks(5, 1, 2), (std::vector<size_t>{1, 3}));
  EXPECT_EQ(vinci::rl::rank_tasks(2, 2, 3), (std::vector<size_t>{}));
  EXPECT_EQ(vinci::rl::rank_tasks(3, 0, 1), (std::vector<size_t>{0, 1, 2}));
}

}  // namespace task_schedule_test
