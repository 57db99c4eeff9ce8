// The protocol's settings as a job carries them (QueueJob::settings).
//
// The protocol's settings as a job carries them (QueueJob::settings): what the submitter's judge
// would measure under. A worker judges under these, not its own, because the job's key names them
// (EvalConfig::fingerprint); what the host spends (timeouts, build memory and CPU, where its cache
// is) stays the worker's. A fresh measurement (the verifier's repeats) carries a nonce of its own, so
// its key is one the store has never answered.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "eval/config.h"

namespace vinci::queue {

// fresh_nonce: empty for an ordinary job.
nlohmann::json job_settings(const eval::EvalConfig& config, const std::string& fresh_nonce = "");

// host with every measured setting replaced by the job's. Throws std::invalid_argument naming a
// missing or malformed setting.
eval::EvalConfig judged_config(eval::EvalConfig host, const nlohmann::json& settings);

// What a job under these settings is keyed by (EvaluatorIdentity::config_fingerprint): the config's
// fingerprint, or for a fresh measurement that and its nonce.
std::string settings_fingerprint(const eval::EvalConfig& judged, const nlohmann::json& settings);

bool is_fresh(const nlohmann::json& settings);

}  // namespace vinci::queue
