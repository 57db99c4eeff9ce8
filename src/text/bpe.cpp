#include "text/bpe.h"

#include <fmt/format.h>

#include <array>
#include <mutex>
#include <queue>
#include <stdexcept>

#include "text/unicode.h"

namespace vinci::text {

namespace {

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

// HF caches words shorter than this; longer ones are rare and costly to key.
constexpr size_t kMaxCachedWordBytes = 256;
constexpr size_t kCacheShards = 16;
constexpr size_t kMaxWordsPerShard = 4096;

}  // namespace

// Sharded so that concurrent encodes rarely wait on one another.
struct Bpe::Cache {
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, std::vector<int32_t>, StringHash, std::equal_to<>> words;
  };
  std::array<Shard, kCacheShards> shards;
};

Bpe::Bpe(Vocab vocab, std::span<const BpeMerge> merges, BpeOptions options)
    : vocab_(std::move(vocab)), options_(std::move(options)), cache_(std::make_unique<Cache>()) {
  rules_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const BpeMerge& m = merges[rank];
    rules_[pair_key(m.left, m.right)] = Rule{static_cast<int32_t>(rank), m.merged};
  }
}

Bpe::Bpe(Bpe&&) noexcept = default;
Bpe& Bpe::operator=(Bpe&&) noexcept = default;
Bpe::~Bpe() = default;

std::optional<int32_t> Bpe::token_to_id(std::string_view token) const {
  const auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

std::optional<Bpe::Rule> Bpe::rule(int32_t left, int32_t right) const {
  const auto it = rules_.find(pair_key(left, right));
  if (it == rules_.end()) return std::nullopt;
  return it->second;
}

void Bpe::tokenize(std::string_view word, std::vector<int32_t>& ids) const {
  if (word.empty()) return;
  if (options_.ignore_merges) {
    if (const auto id = token_to_id(word)) {
      ids.push_back(*id);
      return;
    }
  }
  if (word.size() >= kMaxCachedWordBytes) {
    const std::vector<int32_t> merged = merge_word(word);
    ids.insert(ids.end(), merged.begin(), merged.end());
    return;
  }
  Cache::Shard& shard = cache_->shards[StringHash{}(word) % kCacheShards];
  {
    const std::lock_guard lock(shard.mutex);
    if (const auto it = shard.words.find(word); it != shard.words.end()) {
      ids.insert(ids.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int32_t> merged = merge_word(word);
  ids.insert(ids.end(), merged.begin(), merged.end());
  const std::lock_guard lock(shard.mutex);
  if (shard.words.size() >= kMaxWordsPerShard) shard.words.clear();  // keeps memory bounded on endless new text
  shard.words.emplace(std::string(word), std::move(merged));
}

// A port of HF's BPE::merge_word and Word::merge_all, down to the order in which the queue
// settles ties, so that every word splits as HF splits it.
std::vector<int32_t> Bpe::merge_word(std::string_view word) const {
  struct Symbol {
    int32_t id;
    int32_t prev;
    int32_t next;
    bool removed;
  };
  std::vector<Symbol> symbols;
  const auto add = [&](int32_t id) {
    const auto n = static_cast<int32_t>(symbols.size());
    if (n > 0) symbols.back().next = n;
    symbols.push_back(Symbol{id, n - 1, -1, false});
  };

  std::optional<int32_t> unk;  // a pending unk, which fuse_unk extends over following unknowns
  std::string piece;
  size_t pos = 0;
  while (pos < word.size()) {
    const size_t start = pos;
    next_code_point(word, pos);
    std::string_view ch = word.substr(start, pos - start);
    if ((start > 0 && !options_.continuing_subword_prefix.empty()) ||
        (pos == word.size() && !options_.end_of_word_suffix.empty())) {
      piece.clear();
      if (start > 0) piece += options_.continuing_subword_prefix;
      piece += ch;
      if (pos == word.size()) piece += options_.end_of_word_suffix;
      ch = piece;
    }
    if (const auto id = token_to_id(ch)) {
      if (unk) add(*unk);
      unk.reset();
      add(*id);
      continue;
    }
    if (options_.byte_fallback) {
      std::vector<int32_t> bytes;
      for (const char b : ch) {
        const auto id = token_to_id(fmt::format("<0x{:02X}>", static_cast<unsigned char>(b)));
        if (!id) break;
        bytes.push_back(*id);
      }
      if (bytes.size() == ch.size()) {
        for (const int32_t id : bytes) add(id);
        continue;
      }
    }
    if (options_.unk_token) {
      const auto unk_id = token_to_id(*options_.unk_token);
      if (!unk_id) {
        throw std::runtime_error(
            fmt::format("{:?} is not in the vocab and the unk_token {:?} is not either", ch, *options_.unk_token));
      }
      if (unk && !options_.fuse_unk) add(*unk);
      unk = *unk_id;
    }
  }
  if (unk) add(*unk);

  struct Candidate {
    int32_t pos;
    int32_t rank;
    int32_t merged;
    // The queue pops the lowest rank first, and of equal ranks the leftmost.
    bool operator<(const Candidate& other) const { return rank != other.rank ? rank > other.rank : pos > other.pos; }
  };
  std::priority_queue<Candidate> queue;
  for (size_t i = 0; i + 1 < symbols.size(); ++i) {
    if (const auto r = rule(symbols[i].id, symbols[i + 1].id))
      queue.push(Candidate{static_cast<int32_t>(i), r->rank, r->merged});
  }
  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& current = symbols[top.pos];
    if (current.removed || current.next == -1) continue;
    const Symbol right = symbols[current.next];
    const auto now = rule(current.id, right.id);
    if (!now || now->merged != top.merged) continue;  // a stale entry: a neighbour merged since

    current.id = top.merged;
    symbols[current.next].removed = true;
    current.next = right.next;
    if (right.next != -1) symbols[right.next].prev = top.pos;
    if (current.prev != -1) {
      if (const auto r = rule(symbols[current.prev].id, current.id))
        queue.push(Candidate{current.prev, r->rank, r->merged});
    }
    if (current.next != -1) {
      if (const auto r = rule(current.id, symbols[current.next].id)) queue.push(Candidate{top.pos, r->rank, r->merged});
    }
  }

  std::vector<int32_t> ids;
  for (const Symbol& s : symbols)
    if (!s.removed) ids.push_back(s.id);
  return ids;
}

}  // namespace vinci::text
