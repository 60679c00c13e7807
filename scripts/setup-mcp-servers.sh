#!/bin/sh
# Installs the MCP servers the hearth-mcp tests run against (tests/mcp/package-lock.json, exact
# versions) into tests/mcp/node_modules. Skipped when that lock file is already installed.
set -eu
dir="$(cd "$(dirname "$0")/../tests/mcp" && pwd)"
stamp="$dir/node_modules/.hearth-installed"
if ! command -v npm >/dev/null 2>&1; then
	echo "mcp test servers: npm is not installed; skipping (the hearth-mcp server tests need it: apt-get install nodejs npm)"
	exit 0
fi
want="$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	echo "mcp test servers: already installed in tests/mcp/node_modules"
	exit 0
fi
echo "mcp test servers: installing server-everything and server-filesystem (npm ci, pinned by tests/mcp/package-lock.json)"
(cd "$dir" && npm ci --no-audit --no-fund --loglevel=warn)
echo "$want" > "$stamp"
echo "mcp test servers: installed"
