"""Parameters, FLOPs and memory of a HW-GPT-Bench sub-network, exactly, from its architecture and the
fixed parts of its supernet's evaluation config (`owt_{s,m,l}_eval.yaml`, `model` section).

The model (HW-GPT-Bench's `gpt/model.py`, `gpt/blocks/*`, litgpt-style, read at commit 795cba8):
token embedding [vocab x E] shared with the LM head (no LM-head bias: `lm_head_bias: False`), no
position embedding (rotary on half of each head: no parameters), then per layer l with h_l heads,
MLP ratio r_l and head size 64 (`head_size`):

- two LayerNorms (`norm_1`, `norm_2`; `shared_attention_norm: False`), each E weights + E biases;
- attention: `attn` E -> (h_l + 2 g_l) * 64 and `proj` h_l * 64 -> E, with g_l = h_l key/value groups:
  HW-GPT-Bench's `CausalSelfAttention.set_sample_config` sets `sample_n_query_groups = sample_n_head //
  (n_head // n_query_groups)`, and every config has `n_query_groups == n_head`, so a layer with fewer
  heads than the maximum is plain multi-head attention with h_l heads (qkv width 3 * h_l * 64) and
  costs exactly that;
- MLP (`GptNeoxMLP`): `fc` E -> r_l E and `proj` r_l E -> E;
- every linear layer of the blocks has a bias iff `sample_bias` (their `SuperLinear` samples it);

then a final LayerNorm (E weights + E biases). The vocabulary is `padded_vocab_size` (50,254).

FLOPs: one forward pass of a `block_size` (1,024)-token sequence, batch 1, with
`torch.utils.flop_counter`'s convention: a matrix product [m, k] x [k, n] costs 2 m k n; the attention
scores Q K^T and their product with V cost 2 T^2 (h_l 64) each (the full T x T, as the counter charges
`scaled_dot_product_attention`); the LM head over all T positions counts; embedding lookup, norms,
biases, softmax, rotary and activations do not.

Memory (bytes): the weights in fp16 (2 bytes per parameter) plus the key/value cache of one
`block_size`-token sequence in fp16: per layer 2 (K and V) x T x g_l x 64 x 2 bytes.
"""
from __future__ import annotations

from dataclasses import dataclass

from benchmarks.gpt.space import GPTArchitecture

BYTES_FP16 = 2


@dataclass(frozen=True)
class SupernetConfig:
    """The fixed parts of a space's supernet (its evaluation config's `model` section)."""
    vocab_size: int          # padded_vocab_size
    block_size: int          # sequence length (tokens)
    head_size: int
    n_head: int              # the maximum head count
    n_query_groups: int

    def kv_groups(self, heads: int) -> int:
        """Key/value groups of a layer with `heads` heads (HW-GPT-Bench's set_sample_config)."""
        if self.n_query_groups == 1:
            return 1
        return heads // (self.n_head // self.n_query_groups)


def layer_params(arch: GPTArchitecture, config: SupernetConfig, heads: int, ratio: int) -> int:
    e, hs = arch.embed_dim, config.head_size
    qkv = (heads + 2 * config.kv_groups(heads)) * hs
    bias = int(arch.bias)
    attention = e * qkv + bias * qkv + heads * hs * e + bias * e
    mlp = e * ratio * e + bias * ratio * e + ratio * e * e + bias * e
    norms = 2 * 2 * e
    return attention + mlp + norms


def params(arch: GPTArchitecture, config: SupernetConfig) -> int:
    """Trainable parameters of the sub-network (the shared embedding counted once)."""
    e = arch.embed_dim
    blocks = sum(layer_params(arch, config, h, r) for h, r in zip(arch.heads, arch.mlp_ratios))
    return config.vocab_size * e + blocks + 2 * e


def flops(arch: GPTArchitecture, config: SupernetConfig) -> int:
    """FLOPs of one forward pass of a block_size-token sequence (see the module docstring)."""
    t, e, hs = config.block_size, arch.embed_dim, config.head_size
    total = 2 * t * e * config.vocab_size                      # LM head
    for h, r in zip(arch.heads, arch.mlp_ratios):
        qkv = (h + 2 * config.kv_groups(h)) * hs
        total += 2 * t * e * qkv + 2 * t * h * hs * e          # attn, proj
        total += 2 * (2 * t * t * h * hs)                      # Q K^T and (scores) V
        total += 2 * (2 * t * e * r * e)                       # MLP fc and proj
    return total


def memory(arch: GPTArchitecture, config: SupernetConfig) -> int:
    """Bytes of fp16 weights plus the fp16 key/value cache of one block_size-token sequence."""
    cache = sum(2 * config.block_size * config.kv_groups(h) * config.head_size * BYTES_FP16 for h in arch.heads)
    return BYTES_FP16 * params(arch, config) + cache
