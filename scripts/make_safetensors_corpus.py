#!/usr/bin/env python3
"""Writes the seed corpus of tests/fuzz/fuzz_safetensors.c: small safetensors files for the harness's
fixed config (hidden 8, intermediate 12, 2 layers, 2 heads, 1 KV head, head_dim 6, vocab 5, tied), valid
ones in BF16 and F32 and a few near misses, so the fuzzer starts from files that reach every check.
Usage: scripts/make_safetensors_corpus.py [OUT_DIR]  (default tests/fuzz/corpus/fuzz_safetensors)"""
import json
import os
import struct
import sys

HIDDEN, INTER, LAYERS, HEADS, KV_HEADS, HEAD_DIM, VOCAB = 8, 12, 2, 2, 1, 6, 5


def tensors(with_lm_head=False):
    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    out = [("model.embed_tokens.weight", [VOCAB, HIDDEN]), ("model.norm.weight", [HIDDEN])]
    if with_lm_head:
        out.append(("lm_head.weight", [VOCAB, HIDDEN]))
    for l in range(LAYERS):
        p = f"model.layers.{l}."
        out += [
            (p + "self_attn.q_proj.weight", [q, HIDDEN]),
            (p + "self_attn.k_proj.weight", [kv, HIDDEN]),
            (p + "self_attn.v_proj.weight", [kv, HIDDEN]),
            (p + "self_attn.o_proj.weight", [HIDDEN, q]),
            (p + "self_attn.q_norm.weight", [HEAD_DIM]),
            (p + "self_attn.k_norm.weight", [HEAD_DIM]),
            (p + "mlp.gate_proj.weight", [INTER, HIDDEN]),
            (p + "mlp.up_proj.weight", [INTER, HIDDEN]),
            (p + "mlp.down_proj.weight", [HIDDEN, INTER]),
            (p + "input_layernorm.weight", [HIDDEN]),
            (p + "post_attention_layernorm.weight", [HIDDEN]),
        ]
    return out


def build(dtype="BF16", with_lm_head=False, metadata=None, mutate=None):
    size = 2 if dtype == "BF16" else 4
    header, data = {}, bytearray()
    if metadata:
        header["__metadata__"] = metadata
    for i, (name, shape) in enumerate(tensors(with_lm_head)):
        n = 1
        for d in shape:
            n *= d
        begin = len(data)
        for k in range(n):
            v = ((i * 31 + k * 7) % 17 - 8) / 64.0  # exact in bf16
            data += struct.pack("<f", v)[2:] if size == 2 else struct.pack("<f", v)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [begin, len(data)]}
    if mutate:
        mutate(header)
    text = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text)) + text + bytes(data)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/fuzz/corpus/fuzz_safetensors"
    os.makedirs(out, exist_ok=True)
    seeds = {
        "valid-bf16.safetensors": build("BF16"),
        "valid-f32-metadata.safetensors": build("F32", metadata={"format": "pt"}),
        "valid-tied-lm-head.safetensors": build("BF16", with_lm_head=True),
        "wrong-shape.safetensors": build(mutate=lambda h: h["model.layers.1.mlp.up_proj.weight"].update(shape=[12, 9])),
        "unknown-dtype.safetensors": build(mutate=lambda h: h["model.norm.weight"].update(dtype="F16")),
        "overlap.safetensors": build(mutate=lambda h: h["model.norm.weight"].update(data_offsets=[0, 16])),
        "missing.safetensors": build(mutate=lambda h: h.pop("model.layers.0.self_attn.k_norm.weight")),
    }
    for name, blob in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(blob)


if __name__ == "__main__":
    main()
