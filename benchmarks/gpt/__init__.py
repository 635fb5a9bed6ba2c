"""HW-GPT-Bench's GPT-2-style decoder spaces (gpt-s, gpt-m, gpt-l): architectures, sizes, the table."""
