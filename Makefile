# ycsbctl build, test and benchmark targets. `make help` lists them.
SHELL   := /bin/bash
GO       ?= go
BIN      := bin/ycsbctl
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X github.com/ycsbctl/ycsbctl/internal/version.Version=$(VERSION)
PKGS     := ./...
GOLANGCI := .tools/bin/golangci-lint

# lint checks every package once with the tags of the integration and
# cluster tests on: no file is built only without them (no
# //go:build !integration or !cluster), so one pass sees every file, where
# three passes (untagged, integration, cluster) type-checked the module
# three times (golangci-lint from a cold cache: 119 s against 34 s).
LINT_TAGS := integration,cluster,robustness

# $(call failures,LOG) ends a recipe line whose first command was go test
# piped through tee LOG: it exits with go test's status and, on a failure,
# prints scripts/test-failures.sh's account of LOG last.
failures = rc=$${PIPESTATUS[0]}; [ $$rc = 0 ] || ./scripts/test-failures.sh $(1); exit $$rc

.PHONY: help build demo setup test test-all unit race lint prefetch integration cluster-test fuzz fuzz-ci bench bench-dbs capacity-knees scale proto clean

help: ## list targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/ycsbctl
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/ycsbctl

demo: build ## the main job: load and run YCSB workload A on the embedded store, with live status
	./scripts/demo.sh

# The stages of test-all, in order; scripts/stages.sh runs each as its own
# make, prints each one's duration at its end and a table of all of them
# last (also when one fails). unit is not among them: race runs the same
# tests (every package of ./..., the documentation's blocks in
# internal/doctest included, with the same non-race ycsbctl binary for the
# tests that run it; no test is built or skipped by the race tag), so CI
# ran every unit test twice. prefetch runs in the background from after
# setup (which installs Maven and the JDK) until integration: fetching
# jars waits on the network, lint and race on the CPU.
STAGES := setup bg:prefetch lint race fuzz-ci robustness-ci wait:prefetch integration cluster-test

test-all: ## everything CI runs: tool setup, lint, unit tests, race detector, integration tests against real servers, then the cluster test (root); ends with each stage's duration
	MAKE="$(MAKE)" ./scripts/stages.sh $(STAGES)

setup: ## install every test tool (JDK 17, Maven, tmux, Chromium, promtool, .venv, golangci-lint); fails if one cannot be
	./scripts/ci-setup.sh

unit: ## fast unit tests (go test ./...); a failure or timeout is summed up at the end (scripts/test-failures.sh)
	$(GO) test -count=1 -timeout 15m $(PKGS) 2>&1 | tee .unit.log; $(call failures,.unit.log)

test: unit ## alias of unit

race: ## unit tests under the race detector (a package gets 15 minutes; the slowest takes under 2)
	$(GO) test -race -count=1 -timeout 15m $(PKGS) 2>&1 | tee .race.log; $(call failures,.race.log)

lint: ## no conflict markers in tracked files, tidy go.mod files, and gofmt, go vet (also the integration tests) and the pinned golangci-lint (.golangci.yml) clean
	./scripts/check-conflict-markers.sh
	GO="$(GO)" ./scripts/check-go-mod-tidy.sh
	@out="$$(gofmt -l $$(git ls-files '*.go' | grep -v '^integration/ferretdb/'))"; \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet -tags $(LINT_TAGS) $(PKGS)
	@[ -x $(GOLANGCI) ] || { echo "$(GOLANGCI) missing: run make setup"; exit 1; }
	$(GOLANGCI) run --build-tags $(LINT_TAGS) $(PKGS)

prefetch: ## fetch what the integration tests install from Maven Central (Cassandra's and HBase's jars, Java YCSB's core), once
	./integration/servers.sh install cassandra
	./integration/servers.sh install hbase
	./integration/scripts/javaycsb.sh >/dev/null

integration: build ## integration tests: starts Cassandra, HBase and FerretDB on 127.0.0.1 through integration/servers.sh
	$(GO) test -count=1 -tags integration -timeout 80m -v ./integration/ 2>&1 | tee .integration.log | grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic|integration: )|servers\.sh|: RETRY: ' ; $(call failures,.integration.log)

cluster-test: build ## root only: 4 hosts (network namespaces, systemd, sshd), Ansible-deployed agents, a 3-node Cassandra cluster, faults, HBase with region servers on two hosts over a shared root directory; figures: grep cluster-figure: .cluster-test.log; runs one at a time on the machine (the test holds /run/lock/ycsbctl-cluster.lock)
	./integration/servers.sh install cassandra
	./integration/servers.sh install hbase
	$(GO) test -count=1 -tags cluster -timeout 75m -v ./integration/cluster/ 2>&1 | tee .cluster-test.log | grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|_test.go:' ; $(call failures,.cluster-test.log)

FUZZTIME ?= 60s
fuzz: ## every fuzz target for FUZZTIME each (default 60s; scripts/fuzz.sh: executions per target, a failing input kept under testdata/fuzz)
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

fuzz-ci: ## every fuzz target for 8 s: the short budget for CI (about 2.5 minutes on 2 cores, compile included)
	FUZZTIME=8s ./scripts/fuzz.sh

bench: ## per-operation harness cost, telemetry's sampling and internals-read cost, and end-to-end basic-DB throughput
	$(GO) test -run '^$$' -bench . -benchmem -cpu 1,16 ./internal/workload/ ./internal/generator/ ./internal/measurement/ ./adapters/cassandra/ ./internal/clock/ ./internal/telemetry/ ./adapters/mongodb/
	./scripts/bench-e2e.sh

capacity-knees: build ## how close ycsbctl capacity lands to known knees (basic with fixed delays; minutes)
	./scripts/capacity-knees.sh

scale: build ## scale run: 10 agents x 64 threads on basic through a real coordinator, 30 min (DURATION, TARGET); figures: scale-figure: lines
	./scripts/scale-run.sh

bench-dbs: ## ycsbctl beside Java YCSB on the real test servers (JAVA_YCSB_HOME: built Java YCSB for its adapters)
	./scripts/bench-dbs.sh $(DBS)

proto: ## regenerate proto/ with pinned protoc plugins
	./scripts/proto.sh

clean:
	rm -rf bin .servers

# The randomized operator test (integration/robustness, build tag
# robustness; docs/testing.md): histories of real ycsbctl commands on
# shared results directories and agents, with signals at random instants,
# each checked against the rules of results.md and exit-codes.md. A
# failing history prints its seed; YCSBCTL_ROBUST_SEED=N make robustness
# runs that history again. ROBUST_CI_SEEDS covers every kind of step,
# fault and meeting that seeds 1..3000 exercise (YCSBCTL_ROBUST_COVER=3000
# go test -tags robustness -run TestRobustnessPlans -v ./integration/robustness/).
ROBUST_DURATION ?= 20m
ROBUST_CI_SEEDS ?= 1863,422,1410,2555,421,1295,181,474,1083,2319,37,2098,176,555,655,930,1526,79,89,192,204,220,261,464,615,2742
.PHONY: robustness robustness-ci
robustness: ## the randomized operator test for ROBUST_DURATION (20m) of new random histories, or the one of YCSBCTL_ROBUST_SEED
	d=$(ROBUST_DURATION); [ -z "$${YCSBCTL_ROBUST_SEED:-}" ] || d=; \
	YCSBCTL_ROBUST_DURATION=$$d $(GO) test -count=1 -tags robustness -timeout 60m -run 'TestRobustness$$' -v ./integration/robustness/ 2>&1 | tee .robustness.log; $(call failures,.robustness.log)

robustness-ci: ## the randomized operator test's CI run: the fixed seeds ROBUST_CI_SEEDS and one new random seed (about 3 minutes)
	YCSBCTL_ROBUST_SEEDS=$(ROBUST_CI_SEEDS) YCSBCTL_ROBUST_HISTORIES=1 $(GO) test -count=1 -tags robustness -timeout 20m -run 'TestRobustness$$' -v ./integration/robustness/ 2>&1 | tee .robustness-ci.log; $(call failures,.robustness-ci.log)
