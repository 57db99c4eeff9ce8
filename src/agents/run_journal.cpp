#include "agents/run_journal.h"

#include <filesystem>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "core/hash.h"

namespace vinci::agents {

using nlohmann::json;

RunJournal::RunJournal(const std::filesystem::path& path) {
  // read_jsonl_lines skips a torn last line (a kill), and the writer cuts it off before appending.
  if (std::filesystem::exists(path))
    for (const auto& line : core::read_jsonl_lines(path)) {
      try {
        json j = json::parse(line.text);
        entries_[j.at("key").get<std::string>()] = std::move(j.at("value"));
      } catch (const json::exception& e) {
        // Only the last line can be torn by a kill; a complete line that does not parse is damage (or a
        // torn line an older vinci closed with a newline) worth naming. Dropping it costs only that its
        // call is made again.
        spdlog::warn("{}:{}: unreadable journal line dropped ({})", path.string(), line.number, e.what());
      }
    }
  writer_ = std::make_unique<core::LineWriter>(path, /*append=*/true);
}

std::optional<json> RunJournal::find(const std::string& key) const {
  std::lock_guard lock(mu_);
  const auto it = entries_.find(key);
  if (it == entries_.end()) return std::nullopt;
  return it->second;
}

void RunJournal::record(const std::string& key, const json& value) {
  std::lock_guard lock(mu_);
  writer_->write_line(json{{"key", key}, {"value", value}}.dump());
  entries_[key] = value;
}

std::string RunJournal::next_key(const std::string& kind, const std::string& content_hash) {
  std::lock_guard lock(mu_);
  const std::string base = kind + ":" + content_hash;
  return fmt::format("{}#{}", base, seen_[base]++);
}

json to_json(const llm::GenerationResult& r) {
  json j;
  j["prompt_ids"] = r.prompt_ids;
  j["token_ids"] = r.token_ids;
  j["text"] = r.text;
  j["logprobs"] = r.logprobs;
  j["finish_reason"] = llm::to_string(r.finish_reason);
  j["matched_stop"] = r.matched_stop;
  j["token_ids_known"] = r.token_ids_known;
  j["tool_calls"] = r.tool_calls;
  j["reasoning"] = r.reasoning;
  return j;
}

llm::GenerationResult generation_from_json(const json& j) {
  llm::GenerationResult r;
  r.prompt_ids = j.at("prompt_ids").get<std::vector<int32_t>>();
  r.token_ids = j.at("token_ids").get<std::vector<int32_t>>();
  r.text = j.at("text").get<std::string>();
  r.logprobs = j.at("logprobs").get<std::vector<float>>();
  r.finish_reason = j.at("finish_reason") == "stop" ? llm::FinishReason::stop : llm::FinishReason::length;
  r.matched_stop = j.at("matched_stop").get<std::string>();
  r.token_ids_known = j.at("token_ids_known").get<bool>();
  r.tool_calls = nlohmann::ordered_json::parse(j.at("tool_calls").dump());
  r.reasoning = j.at("reasoning").get<std::string>();
  return r;
}

namespace {

std::string request_hash(const llm::GenerationRequest& q) {
  const auto& s = q.sampling;
  const json sampling = {{"temperature", s.temperature},
                         {"top_p", s.top_p},
                         {"top_k", s.top_k},
                         {"greedy", s.greedy},
                         {"max", s.max_new_tokens},
                         {"stop_ids", s.stop_token_ids},
                         {"stop", s.stop_strings},
                         {"seed", s.seed ? json(*s.seed) : json(nullptr)},
                         {"ignore_eos", s.ignore_eos}};
  return core::content_hash(
      {llm::to_json(q.messages).dump(), q.chat_extra.dump(), json(q.prompt_ids).dump(), sampling.dump()});
}

}  // namespace

std::vector<llm::GenerationResult> ReplayBackbone::generate(std::span<const llm::GenerationRequest> requests) {
  std::vector<llm::GenerationResult> out(requests.size());
  std::vector<std::string> keys(requests.size());
  std::vector<llm::GenerationRequest> live;
  std::vector<size_t> live_index;
  for (size_t i = 0; i < requests.size(); ++i) {
    keys[i] = journal_.next_key("generate", request_hash(requests[i]));
    if (auto hit = journal_.find(keys[i])) {
      out[i] = generation_from_json(*hit);
      journal_.count_replay();
    } else {
      live.push_back(requests[i]);
      live_index.push_back(i);
    }
  }
  if (!live.empty()) {
    auto fresh = inner_.generate(live);
    for (size_t k = 0; k < live.size(); ++k) {
      const size_t i = live_index[k];
      if (!fresh[k].error) journal_.record(keys[i], to_json(fresh[k]));
      out[i] = std::move(fresh[k]);
    }
  }
  return out;
}

std::vector<eval::Result> ReplayEvaluator::evaluate(const std::vector<eval::Job>& jobs) {
  std::vector<eval::Result> out(jobs.size());
  std::vector<std::string> keys(jobs.size());
  std::vector<eval::Job> live;
  std::vector<size_t> live_index;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const auto& j = jobs[i];
    keys[i] = journal_.next_key("evaluate", core::content_hash({j.task.id, j.candidate.hash, j.fresh ? "fresh" : ""}));
    if (auto hit = journal_.find(keys[i])) {
      out[i] = eval::result_from_json(*hit);
      journal_.count_replay();
    } else {
      live.push_back(j);
      live_index.push_back(i);
    }
  }
  if (!live.empty()) {
    auto fresh = inner_.evaluate(live);
    for (size_t k = 0; k < live.size(); ++k) {
      const size_t i = live_index[k];
      journal_.record(keys[i], eval::to_json(fresh[k]));
      out[i] = std::move(fresh[k]);
    }
  }
  return out;
}

}  // namespace vinci::agents
