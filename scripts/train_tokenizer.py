#!/usr/bin/env python3
"""Trains a byte-level BPE tokenizer for a kernel-writing model started from nothing (issue 16,
item 4) with Hugging Face `tokenizers`, the reference trainer, and writes the two files a checkpoint
carries: tokenizer.json and tokenizer_config.json with a ChatML chat template that renders the
agents' tool schemas. vinci's own tokenizer (src/text) and transformers both read them;
tests/cli/init_model_test.py checks that they agree token for token.

    python3 scripts/train_tokenizer.py --corpus CURRICULUM TEACHER prompts skills --vocab-size 4096 --out tok/

The corpus is every .py, .md, .jsonl, .txt and .jinja file under the given files and folders, read in
sorted order, so a run is reproducible. <|im_start|>, <|im_end|> and <|endoftext|> are special (never
learnt from text, dropped when decoding skips special tokens); <think>, </think>, <tool_call> and
</tool_call> are single tokens that decode as text, since the agents' parsers read them.
"""
import argparse
import json
import pathlib
import sys

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TEXT_MARKERS = ["<think>", "</think>", "<tool_call>", "</tool_call>"]
SUFFIXES = {".py", ".md", ".jsonl", ".txt", ".jinja"}

# Qwen2's pre-tokenization (one digit a piece, letters with one leading non-letter, punctuation runs
# with their newlines) and NFC. transformers gives a qwen2 checkpoint's tokenizer this pre-tokenizer
# whatever tokenizer.json says, so training with it is what keeps the two readers in agreement.
QWEN2_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

# ChatML. The tools a request carries (the selection and summary agents' function schemas) follow the
# system message, one JSON object a line, with the form of a call.
CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + message['content'] }}"
    "{%- if loop.first and message['role'] == 'system' and tools %}"
    "{{- '\\n\\n# Tools\\nCall one as <tool_call>{\"name\": ..., \"arguments\": {...}}</tool_call>.' }}"
    "{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}"
    "{%- endif %}"
    "{{- '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}"
)


def corpus_files(roots):
    for root in roots:
        path = pathlib.Path(root)
        if not path.exists():
            sys.exit(f"train_tokenizer: --corpus {root}: no such file or folder")
        if path.is_file():
            yield path
        else:
            yield from sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in SUFFIXES)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", nargs="+", required=True, help="files and folders to learn from")
    parser.add_argument("--vocab-size", type=int, default=4096, help="tokens in all, special ones included")
    parser.add_argument("--min-frequency", type=int, default=2, help="a merge must occur this often")
    parser.add_argument("--out", required=True, help="the folder to write (created; files in it are replaced)")
    args = parser.parse_args()
    floor = 256 + len(SPECIAL) + len(TEXT_MARKERS)
    if args.vocab_size <= floor:
        sys.exit(f"train_tokenizer: --vocab-size {args.vocab_size}: must exceed {floor} (the bytes and the markers)")

    files = list(corpus_files(args.corpus))
    if not files:
        sys.exit(f"train_tokenizer: --corpus {' '.join(args.corpus)}: no {'/'.join(sorted(SUFFIXES))} files")
    texts = [f.read_text(encoding="utf-8", errors="replace") for f in files]

    tokenizer = Tokenizer(models.BPE())
    tokenizer.normalizer = normalizers.NFC()
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN2_SPLIT), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=args.vocab_size - len(TEXT_MARKERS),
        min_frequency=args.min_frequency,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts, trainer=trainer)
    tokenizer.add_tokens(TEXT_MARKERS)

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(out / "tokenizer.json"))
    config = {
        "tokenizer_class": "Qwen2Tokenizer",
        "bos_token": None,
        "eos_token": "<|im_end|>",
        "pad_token": "<|endoftext|>",
        "unk_token": None,
        "add_prefix_space": False,
        "model_max_length": 131072,
        "chat_template": CHAT_TEMPLATE,
    }
    (out / "tokenizer_config.json").write_text(json.dumps(config, indent=2) + "\n")
    print(f"{tokenizer.get_vocab_size()} tokens from {len(files)} files ({sum(map(len, texts))} characters) in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
