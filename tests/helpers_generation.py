"""A tiny random-weight causal LM with a word-level tokenizer built offline (no cache, no hub)."""

from __future__ import annotations

from pathlib import Path

_WORDS = (
    "i you he she we they am are is was were do does did have has had not no yes a the in on at to of and "
    "dog dogs cat cats north south carolina live like play guitar man woman tea coffee paris went go home "
    "two three my your what are their names rex fido never hello hi how good bad it that this"
)
WORDS = _WORDS.split()
SPECIALS = ["<pad>", "<s>", "</s>", "<unk>", "<|im_start|>", "<|im_end|>", "system", "user", "assistant"]
PUNCT = [".", ",", "?", "!", "'m", "'s", "n't", ":", "\n"]

CHATML = (
    "{% for m in messages %}<|im_start|> {{ m['role'] }} {{ m['content'] }} <|im_end|> {% endfor %}"
    "{% if add_generation_prompt %}<|im_start|> assistant {% endif %}"
)


def build_tokenizer(chat: bool = True):
    from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {t: i for i, t in enumerate(SPECIALS + PUNCT + WORDS)}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.normalizer = normalizers.Lowercase()
    tk.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation(behavior="isolated")]
    )
    tk.decoder = decoders.WordPiece(prefix="##", cleanup=True)
    tok = PreTrainedTokenizerFast(
        tokenizer_object=tk,
        bos_token="<s>",
        eos_token="<|im_end|>" if chat else "</s>",
        pad_token="<pad>",
        unk_token="<unk>",
    )
    if chat:
        tok.chat_template = CHATML
    return tok


def build_tiny_lm(folder: Path, chat: bool = True, seed: int = 0) -> Path:
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    tok = build_tokenizer(chat)
    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=256,
        bos_token_id=tok.bos_token_id,
        eos_token_id=tok.eos_token_id,
        pad_token_id=tok.pad_token_id,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(cfg)
    with torch.no_grad():  # larger logits than the default init, so that beams differ clearly
        model.lm_head.weight.mul_(4)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder
