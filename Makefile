# AgentCraft developer targets. The README names `make run` and `make test`.
GO ?= go
BIN := bin/agentcraft

.PHONY: run build test test-short bench bench-modules fuzz vet fmt studio screenshots

# Start the server with zero configuration (SQLite under ./data, 127.0.0.1:8080).
run:
	$(GO) run ./cmd/agentcraft serve

# A release build: stripped of the symbol table and DWARF (-s -w), with no
# build paths (-trimpath), version and commit stamped for `agentcraft version`.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
CLI := github.com/agentcraftlab/agentcraft/cmd/agentcraft/internal/cli
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w -X $(CLI).Version=$(VERSION) -X $(CLI).Commit=$(COMMIT)" -o $(BIN) ./cmd/agentcraft

# Rebuild the web studio (web/) from its lockfile into server/studio/dist,
# which go:embed serves at /. The build is committed, so that `make run`
# and `go build` need no Node.js; run this after changing web/ and commit
# the result (CI rebuilds it and fails when it differs).
studio:
	cd web && npm ci --no-audit --no-fund && npm run build

# Screenshots of sign-in and of every page in the studio's nav (light and
# dark in English, light in Japanese) into docs/studio, taken by the
# acceptance test of every page (needs chromium, Node.js 20+).
screenshots: studio
	AGENTCRAFT_STUDIO_SCREENSHOTS=$(CURDIR)/docs/studio $(GO) test -count=1 -run '^TestEveryPage$$' ./e2e/studio/

# The full test suite: vet, then every test with the race detector.
# PostgreSQL tests run when AGENTCRAFT_TEST_POSTGRES_DSN is set (.ci/run sets it).
# -race turns on checkptr too, which checks every unsafe.Pointer conversion;
# in modernc.org/sqlite (SQLite's C translated to Go, all unsafe pointers)
# that was 40 % of the CPU of every SQLite call, and SQLite is under most
# tests. RACEFLAGS keeps the race detector on everywhere and checkptr on
# for every package but those. GORACE: a race-built program sleeps a
# second before it exits (so that other goroutines may still report);
# every test binary, and every child a test starts from it (sandboxed
# scripts, re-executed commands), did, though a race is reported when it
# is found and fails the exit status all the same.
RACEFLAGS := -race -gcflags='modernc.org/...=-d=checkptr=0'
export GORACE ?= atexit_sleep_ms=0
test:
	$(GO) vet ./...
	$(GO) test $(RACEFLAGS) -count=1 -timeout 15m $$($(GO) list ./... | grep -v '/e2e/studio$$')
	# The studio's browser tests hold time budgets (interactive in 1.5 s, a
	# 300-node canvas in 1 s at 50 fps): they run on their own, so that they
	# time the studio rather than the packages testing beside them.
	$(GO) test $(RACEFLAGS) -count=1 -timeout 10m ./e2e/studio/
	# Data-heavy checks the race detector would slow tenfold, at full size.
	$(GO) test -count=1 -run 'TestVectorRecallAgainstExact' ./search/memory/
	$(GO) test -count=1 -run 'TestPruneShrinksFile' -v ./store/retention/

test-short:
	$(GO) test -count=1 ./...

# Benchmarks, on demand (not in CI).
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# Every benchmark module under bench/ (own go.mod, replace ../..) must build
# and vet against the current main module, so that its figures stay
# reproducible: a go.sum that lacks what main gained fails here. CI runs it.
# node_modules (bench/react/js, installed by hand) is no module of ours.
bench-modules:
	@set -e; for mod in $$(find bench -name go.mod -not -path '*/testdata/*' -not -path '*/node_modules/*' | sort); do \
		dir=$$(dirname $$mod); echo "bench-modules: $$dir"; \
		(cd $$dir && $(GO) vet ./... && $(GO) test -count=1 -run '^$$' ./...); \
	done

# Every fuzz target for a bounded time (FUZZ_BUDGET seconds of wall time in
# all, 150 by default); CI runs it. A finding fails, and the output says how
# to keep it as a seed under testdata/fuzz.
fuzz:
	bash .ci/fuzz

vet:
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')
