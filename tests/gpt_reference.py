"""An independent PyTorch build of HW-GPT-Bench's sub-networks, for tests only: written from the model's
description (litgpt-style GPT-NeoX decoder: shared embedding, two LayerNorms per layer, fused q/k/v
projection with one key/value head per query head, GELU MLP, final LayerNorm, tied LM head without
bias), never from `benchmarks.gpt.sizes`, so the two can check each other."""
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self, embed: int, heads: int, ratio: int, bias: bool, head_size: int = 64):
        super().__init__()
        self.heads, self.head_size = heads, head_size
        self.norm_1, self.norm_2 = nn.LayerNorm(embed), nn.LayerNorm(embed)
        self.attn = nn.Linear(embed, 3 * heads * head_size, bias=bias)
        self.proj = nn.Linear(heads * head_size, embed, bias=bias)
        self.fc = nn.Linear(embed, ratio * embed, bias=bias)
        self.mlp_proj = nn.Linear(ratio * embed, embed, bias=bias)

    def forward(self, x):
        batch, steps, _ = x.shape
        q, k, v = self.attn(self.norm_1(x)).view(batch, steps, 3, self.heads, self.head_size).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2)
        y = y.reshape(batch, steps, self.heads * self.head_size)
        return x + self.proj(y) + self.mlp_proj(F.gelu(self.fc(self.norm_2(x))))     # parallel residual


class ReferenceGPT(nn.Module):
    def __init__(self, arch, vocab: int):
        super().__init__()
        self.wte = nn.Embedding(vocab, arch.embed_dim)
        self.blocks = nn.ModuleList(Block(arch.embed_dim, h, r, arch.bias) for h, r in zip(arch.heads, arch.mlp_ratios))
        self.ln_f = nn.LayerNorm(arch.embed_dim)
        self.lm_head = nn.Linear(arch.embed_dim, vocab, bias=False)
        self.lm_head.weight = self.wte.weight          # shared input/output embedding

    def forward(self, tokens):
        x = self.wte(tokens)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))
