#include "queue/job_protocol.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace vinci::queue::job_protocol_test {

nlohmann::json fixture(const char* name) {
  std::ifstream in(std::filesystem::path(VINCI_SOURCE_ROOT) / "tests/fixtures/queue" / name);
  return nlohmann::json::parse(in);
}

// The fixture's key was computed by make_queue_fixtures.py with Python's xxhash, the pool's formula
// written out a second time.
TEST(JobProtocol, KeyIsThePoolsResultKey) {
  const QueueJob job = job_from_json(fixture("job_v1.json"));
  EXPECT_EQ(result_key(job.task_source, job.candidate_source, job.evaluator), "157868bd54e2c33c07bc95ffd7b2420c");
}

TEST(JobProtocol, JobFixtureReadsAndWritesBackByteForByte) {
  const nlohmann::json j = fixture("job_v1.json");
  const QueueJob job = job_from_json(j);
  EXPECT_EQ(job.task_id, "level1/19_ReLU");
  EXPECT_EQ(job.candidate_name, "candidates/relu_clamp.py");
  EXPECT_EQ(job.evaluator.device_name, "cpu (x86_64, 2 cores)");
  EXPECT_EQ(job.evaluator.torch_version, "2.11.0");
  EXPECT_EQ(job.settings.at("scale").get<double>(), 0.05);
  EXPECT_EQ(to_json(job), j);
}

TEST(JobProtocol, StreamFieldsRoundTrip) {
  const QueueJob job = job_from_json(fixture("job_v1.json"));
  const auto fields = to_stream_fields(job);
  EXPECT_EQ(fields.at("format"), "vinci-job-v1");
  EXPECT_EQ(to_json(job_from_stream_fields(fields)), to_json(job));
}

TEST(JobProtocol, StreamEntriesThatAreNotOurJobsAreRefusedByName) {
  const QueueJob job = job_from_json(fixture("job_v1.json"));
  auto why = [](const std::map<std::string, std::string>& fields) {
    try {
      job_from_stream_fields(fields);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(why({{"hello", "world"}}).find("no 'format' field"), std::string::npos);
  EXPECT_NE(why({{"format", "celery-v2"}, {"job", "{}"}}).find("format 'celery-v2'"), std::string::npos);
  EXPECT_NE(why({{"format", kJobFormat}, {"job", "{not json"}}).find("not JSON"), std::string::npos);
  EXPECT_NE(why({{"format", kJobFormat}, {"job", "{}"}}).find("'key'"), std::string::npos);
  nlohmann::json tampered = to_json(job);
  tampered["candidate_source"] = "print('another candidate')\n";
  EXPECT_NE(why({{"format", kJobFormat}, {"job", tampered.dump()}}).find("is not its contents' key"),
            std::string::npos);
}

TEST(JobProtocol, ResultFixtureReadsAndRoundTrips) {
  const ResultRecord r = result_record_from_json(fixture("result_v1.json"));
  EXPECT_EQ(r.key, "157868bd54e2c33c07bc95ffd7b2420c");
  EXPECT_EQ(r.worker, "gpu-host-3/0");
  EXPECT_EQ(r.deliveries, 2);
  EXPECT_EQ(r.result.verdict, eval::Verdict::runtime_error);
  EXPECT_EQ(r.result.reason, "worker_lost");
  EXPECT_EQ(r.result.task_number, 19);
  const ResultRecord again = result_record_from_json(to_json(r));
  EXPECT_EQ(to_json(again), to_json(r));
  EXPECT_EQ(again.result.candidate_hash, "0fea06e44f1b0f5c6fc45284ce9c5a46");
}

}  // namespace vinci::queue::job_protocol_test
