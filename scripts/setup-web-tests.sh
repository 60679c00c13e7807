#!/bin/sh
# Installs what the web channel's tests drive it with, each step skipped when already done:
# Debian's chromium (apt, as root), playwright-core from tests/web/package-lock.json (exact
# version, no browser download), and the official `openai` Python package (pinned) in the venv
# tests/web/venv. A missing tool is reported and skipped: those tests then say what to run.
set -eu
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/tests/web"
OPENAI_VERSION=3.51.0

if command -v chromium >/dev/null 2>&1; then
	echo "web tests: chromium present ($(chromium --version 2>/dev/null || echo unknown version))"
elif [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "web tests: installing Debian's chromium (apt-get)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
else
	echo "web tests: chromium is not installed and this is not root; skipping (apt-get install chromium)"
fi

if command -v npm >/dev/null 2>&1; then
	stamp="$dir/node_modules/.hearth-installed"
	want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
		echo "web tests: playwright-core already installed in tests/web/node_modules"
	else
		echo "web tests: installing playwright-core (npm ci, pinned by tests/web/package-lock.json)"
		(cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=warn)
		echo "$want" > "$stamp"
	fi
else
	echo "web tests: npm is not installed; skipping playwright-core (apt-get install nodejs npm)"
fi

py="${HEARTH_PYTHON:-python3}"
venv="$dir/venv"
if "$venv/bin/python" -c "import openai, sys; sys.exit(openai.__version__ != '$OPENAI_VERSION')" 2>/dev/null; then
	echo "web tests: openai $OPENAI_VERSION already in tests/web/venv"
elif command -v "$py" >/dev/null 2>&1; then
	echo "web tests: installing openai==$OPENAI_VERSION into tests/web/venv"
	"$py" -m venv "$venv" || { echo "web tests: python3 -m venv failed (apt-get install python3-venv)"; exit 0; }
	"$venv/bin/pip" install -q --disable-pip-version-check "openai==$OPENAI_VERSION"
else
	echo "web tests: python3 not found; skipping the openai package"
fi
