# Hearth — the two commands a newcomer needs are `make run` and `make test`.
CARGO  ?= cargo
DATA   ?= $(if $(XDG_DATA_HOME),$(XDG_DATA_HOME),$(HOME)/.local/share)/hearth
PREFIX ?= /usr/local
# Recall dev sets (`make bench`): read from here when present, never by `make test`. The last,
# leaky one is a regression check only. Ingested stores are kept, so a re-run only re-ranks.
RECALL_DATA   ?= ../shared/data
RECALL_SETS   ?= longmemeval-oracle-pooled-now longmemeval-oracle-per-question longmemeval-oracle-pooled
RECALL_STORES ?= target/recall-stores

.PHONY: setup build run test test-only bench lint loom install deb

# Installs what the build and the tests need (idempotent; prints what it does).
setup:
	@scripts/setup.sh
	@scripts/setup-mcp-servers.sh
	@scripts/setup-web-tests.sh

build: setup
	$(CARGO) build --workspace --release --bins

# Starts the daemon in the foreground with a data dir under the user's data home.
run: setup
	$(CARGO) build --release -p hearth-runtime -p hearth-plugin-web --bins
	@mkdir -p "$(DATA)"
	@echo "hearthd: data dir $(DATA); stop with Ctrl-C (graceful: every queued task is answered)"
	@echo "talk to it from another terminal:  ./target/release/hearth send \"hello\"   (or: hearth chat, hearth status)"
	@echo "or in a browser: http://127.0.0.1:8080 (the first visit sets the page's password)"
	./target/release/hearthd --data-dir "$(DATA)"

# Formatting, lints with warnings as errors, every test of the workspace, then the loom models.
test: setup lint loom test-only

# Doc tests first: the closing lines of the run are then the main runner's summary.
test-only:
	$(CARGO) test --workspace --doc
	$(CARGO) build --workspace --bins --examples
	@if $(CARGO) nextest --version >/dev/null 2>&1; then \
		$(CARGO) nextest run --workspace --no-fail-fast; \
	else \
		$(CARGO) test --workspace --no-fail-fast; \
	fi

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings

# Criterion benches and latency harnesses; each prints its same-run baseline and the ratio.
bench: setup
	$(CARGO) build --release -p hearth-runtime -p hearth-plugin-web --bins
	$(CARGO) bench -p hearth-bench
	@echo "embedded model: loops, capped answers, prompt reading and plain facts; without its tool list (its default), without the repeat penalty"
	python3 bench/scripts/embedded_repetition.py ./target/release/hearthd ./target/release/hearth \
		--arm no-tools='{"tools": null, "tool_choice": null}' --arm no-penalty='{"repeat_penalty": 1.0}'
	@echo "prompt reuse: prompt tokens the local model's server reads per turn of a long conversation, the prune's slack 0 and 0.5, at the embedded default's window and as for a 32k model"
	python3 bench/scripts/prompt_reuse.py ./target/release/hearthd ./target/release/hearth --slack 0,0.5
	python3 bench/scripts/prompt_reuse.py ./target/release/hearthd ./target/release/hearth --slack 0,0.5 \
		--ctx 8192 --window 32768
	@echo "distill: the shipped labelled sentences, rules against the default source's model"
	./target/release/hearth bench distill || { echo "distill: no model answered; the rules alone:"; \
		./target/release/hearth bench distill --no-model; }
	@found=0; \
	for set in $(RECALL_SETS); do \
		file="$(RECALL_DATA)/$$set.json"; \
		[ -f "$$file" ] || { echo "recall: $$file is absent; skipping it"; continue; }; \
		found=1; \
		case $$set in *-pooled) variants=as-is ;; *) variants=as-is,undated,named,third-person,short-turns ;; esac; \
		echo "recall: $$file ($$variants)"; \
		./target/release/hearth bench recall "$$file" --k 1,5,10 --variant $$variants --ablate --graph \
			--store-dir "$(RECALL_STORES)/$$set" --json "target/recall-$$set.json" || exit 1; \
		case $$set in *-pooled) ;; *) \
			./target/release/hearth bench knowledge "$$file" --k 1,5,10 --floors 0,0.2,0.3,0.4,0.5 \
				--json "target/knowledge-$$set.json" || exit 1 ;; esac; \
	done; \
	[ $$found = 1 ] || echo "recall: no dev set in $(RECALL_DATA) (see its README); skipping the recall benchmark"

# Model-checks with loom: the event ring's slot protocol and its readers' wake handshakes (futex
# and doorbell), the arena's generation check, the engine's park/wake handshake, and the socket
# lending protocol (who writes each streamed delta).
loom:
	RUSTFLAGS="--cfg loom" $(CARGO) test -p hearth-ipc --release --test loom_ring --lib
	LOOM_MAX_PREEMPTIONS=3 RUSTFLAGS="--cfg loom" $(CARGO) test -p hearth-engine --release --lib loom_park
	RUSTFLAGS="--cfg loom" $(CARGO) test -p hearth-lend --release --test loom_lend

# `make install` (PREFIX, DESTDIR): the binaries (hearth-web beside hearthd, which installs the
# page on start), the optional plugins (enable one with
# `hearth plugin install $(PREFIX)/lib/hearth/plugins/NAME`), the systemd unit and its user.
# BIN_DIR=target/debug NO_BUILD=1 installs binaries already built (the install test does).
BIN_DIR     ?= target/release
UNITDIR     ?= $(if $(filter /usr,$(PREFIX)),/lib/systemd/system,/etc/systemd/system)
SYSUSERSDIR ?= $(if $(filter /usr,$(PREFIX)),/usr/lib/sysusers.d,/etc/sysusers.d)
CONFDIR     ?= /etc/hearth
DOCDIR      ?= $(PREFIX)/share/doc/hearth
PLUGINS     := files timer
CARGO_DEB_VERSION := 3.8.0

install: $(if $(NO_BUILD),,build)
	install -Dm755 $(BIN_DIR)/hearthd $(DESTDIR)$(PREFIX)/bin/hearthd
	install -Dm755 $(BIN_DIR)/hearth $(DESTDIR)$(PREFIX)/bin/hearth
	# The web page is installed by hearthd itself from the binary beside it (bundled_plugins).
	install -Dm755 $(BIN_DIR)/hearth-web $(DESTDIR)$(PREFIX)/bin/hearth-web
	@for p in $(PLUGINS); do \
		install -Dm644 runtime/plugins/$$p/plugin.json $(DESTDIR)$(PREFIX)/lib/hearth/plugins/$$p/plugin.json && \
		install -Dm755 $(BIN_DIR)/hearth-$$p $(DESTDIR)$(PREFIX)/lib/hearth/plugins/$$p/hearth-$$p || exit 1; \
	done
	@mkdir -p $(DESTDIR)$(UNITDIR)
	sed -e 's|@BINDIR@|$(PREFIX)/bin|g' -e 's|@CONFDIR@|$(CONFDIR)|g' -e 's|@DOCDIR@|$(DOCDIR)|g' \
		packaging/hearthd.service.in > $(DESTDIR)$(UNITDIR)/hearthd.service
	install -Dm644 packaging/hearth.sysusers $(DESTDIR)$(SYSUSERSDIR)/hearth.conf
	install -Dm644 README.md $(DESTDIR)$(DOCDIR)/README.md
	@echo "installed under $(DESTDIR)$(PREFIX); as root: systemd-sysusers && systemctl daemon-reload && systemctl enable --now hearthd"

# A .deb of the same tree (PREFIX=/usr), built by cargo-deb pinned here and installed on
# first use (not by `make test`).
deb: build
	@$(CARGO) deb --version 2>/dev/null | grep -q " $(CARGO_DEB_VERSION)" || \
		$(CARGO) install cargo-deb --version =$(CARGO_DEB_VERSION) --locked
	rm -rf target/deb-root
	$(MAKE) install NO_BUILD=1 PREFIX=/usr DESTDIR=$(CURDIR)/target/deb-root
	$(CARGO) deb -p hearth-runtime --no-build --no-strip
