#!/usr/bin/env python3
"""Turns the multilingual Universal Sentence Encoder v3 ONNX graph into assets a Rust process can load.

The graph (as shipped, quantized) begins with a `SentencepieceTokenizer` node from the
onnxruntime-extensions domain, an operator that exists only as a Python extension library. This
script removes that node so the graph takes the tokenizer's two outputs as its inputs, keeps the
SentencePiece model the node carried, and rebuilds the same tokenization as a `tokenizer.json` for
the `tokenizers` library:

  use_m3.onnx      inputs  ids: int32[N] (every sentence's ids, concatenated, with <s> and </s>)
                           row_splits: int64[B+1] (sentence b is ids[row_splits[b]:row_splits[b+1]])
                   output  outputs: f32[B, 512], unit-norm
  sp.model         the SentencePiece model bytes, unchanged
  tokenizer.json   the same tokenization (<s> ... </s> added) for `tokenizers`

Before anything is kept it checks, on a few hundred Chinese, English and mixed strings, that the
tokenizer.json ids equal SentencePiece's and that the stripped graph fed with them gives the same
vectors as the original graph fed with the raw strings (original run with onnxruntime-extensions).

The output is deterministic for pinned package versions, so the caller checks its sha256s.

Usage: convert_embedder.py ORIGINAL_ONNX OUT_DIR
"""

import random
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
import sentencepiece
from sentencepiece import sentencepiece_model_pb2

# tokenizers' SentencePiece converter imports the protobuf module under its bare name.
sys.modules["sentencepiece_model_pb2"] = sentencepiece_model_pb2

from tokenizers import Tokenizer, normalizers, processors  # noqa: E402
from tokenizers.implementations import SentencePieceUnigramTokenizer  # noqa: E402

CONTRIB_DOMAIN = "ai.onnx.contrib"
TOKENIZER_OP = "SentencepieceTokenizer"
IDS_INPUT = "ids"
SPLITS_INPUT = "row_splits"
OUTPUT = "outputs"
DIM = 512


def fail(msg: str) -> None:
    print(f"convert_embedder: ERROR: {msg}", file=sys.stderr)
    sys.exit(1)


def say(msg: str) -> None:
    print(f"setup: embedder: {msg}", file=sys.stderr, flush=True)


def constant_inputs(model: onnx.ModelProto, node: onnx.NodeProto) -> dict:
    """The tokenizer node's scalar inputs (nbest, alpha, add_bos, add_eos, reverse) as numpy values."""
    inits = {i.name: i for i in model.graph.initializer}
    names = ["nbest_size", "alpha", "add_bos", "add_eos", "reverse"]
    values = {}
    for name, tensor_name in zip(names, node.input[1:]):
        if tensor_name not in inits:
            fail(f"tokenizer input {name} ({tensor_name}) is not a constant; cannot reproduce it")
        values[name] = numpy_helper.to_array(inits[tensor_name]).reshape(-1)[0]
    return values


def strip_tokenizer(model: onnx.ModelProto) -> tuple[onnx.ModelProto, bytes]:
    graph = model.graph
    tok_nodes = [n for n in graph.node if n.domain == CONTRIB_DOMAIN]
    if len(tok_nodes) != 1 or tok_nodes[0].op_type != TOKENIZER_OP:
        fail(f"expected exactly one {TOKENIZER_OP} node in {CONTRIB_DOMAIN}, found {[(n.op_type) for n in tok_nodes]}")
    node = tok_nodes[0]
    if len(graph.input) != 1 or graph.input[0].name != node.input[0]:
        fail("the tokenizer node does not read the graph's only input")
    if len(node.output) != 2:
        fail(f"tokenizer node has {len(node.output)} outputs, expected 2 (ids, row splits)")

    attrs = {a.name: a for a in node.attribute}
    if "model" not in attrs:
        fail("tokenizer node has no `model` attribute")
    sp_bytes = attrs["model"].s
    # out_type 6 = int32 ids, Tsplits 7 = int64 row splits; the Rust side feeds exactly these.
    if attrs.get("out_type") is not None and attrs["out_type"].i != TensorProto.INT32:
        fail(f"tokenizer out_type is {attrs['out_type'].i}, expected int32")
    if attrs.get("Tsplits") is not None and attrs["Tsplits"].i != TensorProto.INT64:
        fail(f"tokenizer Tsplits is {attrs['Tsplits'].i}, expected int64")

    consts = constant_inputs(model, node)
    # tokenizer.json reproduces plain encoding with <s> and </s>; anything else would diverge.
    if int(consts["nbest_size"]) != 0 or not bool(consts["add_bos"]) or not bool(consts["add_eos"]) or bool(consts["reverse"]):
        fail(f"unexpected tokenizer settings {consts}")

    ids_name, splits_name = node.output
    old_input = node.input[0]
    const_names = set(node.input[1:])

    kept_nodes = [n for n in graph.node if n is not node]
    for n in kept_nodes:
        for i, name in enumerate(n.input):
            if name == ids_name:
                n.input[i] = IDS_INPUT
            elif name == splits_name:
                n.input[i] = SPLITS_INPUT
            elif name == old_input:
                fail(f"node {n.name} reads the raw string input too")
    for out in graph.output:
        if out.name in (ids_name, splits_name):
            fail("the tokenizer output is a graph output; unexpected graph shape")

    still_used = {name for n in kept_nodes for name in n.input}
    kept_inits = [i for i in graph.initializer if i.name not in const_names or i.name in still_used]

    new_graph = helper.make_graph(
        nodes=kept_nodes,
        name=graph.name,
        inputs=[
            helper.make_tensor_value_info(IDS_INPUT, TensorProto.INT32, ["n_ids"]),
            helper.make_tensor_value_info(SPLITS_INPUT, TensorProto.INT64, ["batch_plus_1"]),
        ],
        outputs=list(graph.output),
        initializer=kept_inits,
        value_info=[v for v in graph.value_info if v.name not in (ids_name, splits_name)],
        doc_string=graph.doc_string,
    )
    new_graph.sparse_initializer.extend(graph.sparse_initializer)

    out = onnx.ModelProto()
    out.CopyFrom(model)
    out.graph.CopyFrom(new_graph)
    del out.opset_import[:]
    out.opset_import.extend([o for o in model.opset_import if o.domain != CONTRIB_DOMAIN])
    if [o.name for o in out.graph.output] != [OUTPUT]:
        fail(f"graph outputs are {[o.name for o in out.graph.output]}, expected [{OUTPUT}]")
    onnx.checker.check_model(out)
    return out, sp_bytes


def build_tokenizer(sp_path: Path, sp: sentencepiece.SentencePieceProcessor) -> Tokenizer:
    tok = SentencePieceUnigramTokenizer.from_spm(str(sp_path))._tokenizer
    # SentencePiece trims trailing whitespace (remove_extra_whitespaces); the converter does not.
    tok.normalizer = normalizers.Sequence([tok.normalizer, normalizers.Strip()])
    bos, eos = sp.id_to_piece(sp.bos_id()), sp.id_to_piece(sp.eos_id())
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        special_tokens=[(bos, sp.bos_id()), (eos, sp.eos_id())],
    )
    return tok


def corpus() -> list[str]:
    """Deterministic zh/en/mixed strings with the whitespace, width and punctuation cases that differ."""
    en = [
        "The weather is nice today.",
        "I like to drink coffee in the morning",
        "Where is the nearest train station?",
        "Please remind me to call my mother at 6 pm.",
        "Machine learning models need a lot of data",
        "The cat sat on the mat, and the dog barked.",
        "HELLO WORLD!!!",
        "e-mail: someone@example.org; price: $12.50 (approx.)",
        "It's 3:45 PM — don't be late…",
        "naïve café déjà vu",
    ]
    zh = [
        "今天天气很好。",
        "我喜欢早上喝咖啡",
        "最近的火车站在哪里？",
        "请提醒我下午六点给妈妈打电话。",
        "机器学习模型需要大量的数据",
        "猫坐在垫子上，狗在叫。",
        "你好，世界！",
        "我们明天去北京旅游吧",
        "这个问题的答案是４２。",
        "「记忆」系统负责保存上下文",
    ]
    extra = ["", " ", "  ", "\t", "\n", "a", "中", "１２３ＡＢＣ", "😀 ok", "...", "A  B   C", "  lead", "trail  "]
    rng = random.Random(20240604)
    out = list(en) + list(zh) + extra
    seps = ["", " ", "  ", "\t", "\n", "，", ", ", "。", "  \n "]
    pool = en + zh + extra
    while len(out) < 400:
        k = rng.randint(1, 4)
        parts = [rng.choice(pool) for _ in range(k)]
        s = parts[0]
        for p in parts[1:]:
            s += rng.choice(seps) + p
        if rng.random() < 0.2:
            s = rng.choice(seps) + s + rng.choice(seps)
        if rng.random() < 0.1:
            s = s.upper()
        out.append(s)
    return out


def check_tokenizer(tok: Tokenizer, sp: sentencepiece.SentencePieceProcessor, texts: list[str]) -> None:
    bad = 0
    for s in texts:
        want = [sp.bos_id()] + sp.encode(s) + [sp.eos_id()]
        got = tok.encode(s).ids
        if got != want:
            bad += 1
            if bad <= 5:
                print(f"  mismatch on {s!r}: tokenizer.json {got} vs SentencePiece {want}", file=sys.stderr)
    if bad:
        fail(f"tokenizer.json disagrees with SentencePiece on {bad} of {len(texts)} strings")
    say(f"convert: tokenizer.json ids equal SentencePiece's on {len(texts)} strings")


def check_graph(original: Path, stripped: Path, tok: Tokenizer, texts: list[str]) -> None:
    import onnxruntime as ort
    import onnxruntime_extensions

    def options(custom: bool) -> "ort.SessionOptions":
        o = ort.SessionOptions()
        o.intra_op_num_threads = 1
        o.inter_op_num_threads = 1
        if custom:
            o.register_custom_ops_library(onnxruntime_extensions.get_library_path())
        return o

    cpu = ["CPUExecutionProvider"]
    orig = ort.InferenceSession(str(original), options(True), providers=cpu)
    new = ort.InferenceSession(str(stripped), options(False), providers=cpu)
    names = sorted(i.name for i in new.get_inputs())
    if names != sorted([IDS_INPUT, SPLITS_INPUT]):
        fail(f"stripped graph inputs are {names}")

    worst = 0.0
    batch = 16
    for start in range(0, len(texts), batch):
        chunk = texts[start : start + batch]
        want = orig.run([OUTPUT], {orig.get_inputs()[0].name: np.array(chunk, dtype=object)})[0]
        encs = tok.encode_batch(chunk)
        ids = np.concatenate([np.asarray(e.ids, dtype=np.int32) for e in encs])
        splits = np.zeros(len(encs) + 1, dtype=np.int64)
        splits[1:] = np.cumsum([len(e.ids) for e in encs])
        got = new.run([OUTPUT], {IDS_INPUT: ids, SPLITS_INPUT: splits})[0]
        if got.shape != (len(chunk), DIM):
            fail(f"stripped graph output shape {got.shape}, expected ({len(chunk)}, {DIM})")
        worst = max(worst, float(np.max(np.abs(got - want))))
    if worst > 1e-5:
        fail(f"stripped graph output differs from the original by up to {worst}")
    norms = new.run([OUTPUT], {IDS_INPUT: ids, SPLITS_INPUT: splits})[0]
    norms = np.linalg.norm(norms, axis=1)
    if np.max(np.abs(norms - 1.0)) > 1e-3:
        fail(f"outputs are not unit-norm: {norms}")
    say(f"convert: stripped graph equals the original on {len(texts)} strings (max |diff| {worst:.1e})")


def main() -> None:
    if len(sys.argv) != 3:
        fail("usage: convert_embedder.py ORIGINAL_ONNX OUT_DIR")
    original, out_dir = Path(sys.argv[1]), Path(sys.argv[2])
    out_dir.mkdir(parents=True, exist_ok=True)

    say(f"convert: reading {original.name}")
    model = onnx.load(str(original))
    stripped, sp_bytes = strip_tokenizer(model)
    del model

    onnx_path = out_dir / "use_m3.onnx"
    sp_path = out_dir / "sp.model"
    tok_path = out_dir / "tokenizer.json"
    onnx.save(stripped, str(onnx_path))
    del stripped
    sp_path.write_bytes(sp_bytes)

    sp = sentencepiece.SentencePieceProcessor(model_proto=sp_bytes)
    tok = build_tokenizer(sp_path, sp)
    tok.save(str(tok_path), pretty=False)
    # Check what was written, not what is in memory.
    tok = Tokenizer.from_file(str(tok_path))

    texts = corpus()
    check_tokenizer(tok, sp, texts)
    check_graph(original, onnx_path, tok, texts)
    say("convert: done")


if __name__ == "__main__":
    main()
