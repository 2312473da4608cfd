# The README's commands. `make test` checks gofmt, then in every module of
# go.work (the root, limiter/redislimiter, metrics, otelpolite, cmd/polite,
# benchmarks, examples/colly, examples/resty, examples/retryablehttp) that
# go.mod is tidy (.ci/tidy-diff), go vet, staticcheck and the tests, as CI (.ci/run) does. A failing module does
# not stop the others; the target fails at the end, naming them.
#
# It needs only Go: staticcheck is fetched and built by the go command at the
# version pinned here, the one place it is written (CI runs this Makefile
# too). STATICCHECK=staticcheck uses one on your PATH instead.
.PHONY: test fmt licenses lint staticcheck-version apidiff release-check demo bench sweep

MODULES := $(shell go list -m -f '{{.Dir}}')
# The version about to be tagged, at which the modules require each other.
RELEASE_VERSION ?= v0.2.0
# staticcheck 2026.2.2, which supports Go 1.26.
STATICCHECK_VERSION := v0.8.2
STATICCHECK ?= go run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

# each runs $(1) in every module's directory.
each = @failed=; for dir in $(MODULES); do \
		echo "== $$dir"; (cd "$$dir" && $(1)) || failed="$$failed $$dir"; \
	done; \
	if [ -n "$$failed" ]; then echo "FAILED in:$$failed"; exit 1; fi

test: fmt licenses staticcheck-version
	$(call each,$(CURDIR)/.ci/tidy-diff && go vet ./... && $(STATICCHECK) ./... && go test -race -shuffle=on -count=1 ./...)

# sweep runs the generated Go-versus-Lua test (limiter.Memory against the
# Redis scripts) on SCENARIOS scenarios, with the scripts' slip and without,
# where make test runs 300; CI runs it. About a minute on 2 loaded cores.
SCENARIOS ?= 5000
sweep:
	cd limiter/redislimiter && go test -count=1 -run '^TestGeneratedScriptsMatchMemory$$' -scenarios $(SCENARIOS) .

fmt:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi

# Every module's zip carries the license: each module has a copy of LICENSE.
licenses:
	@for dir in $(MODULES); do cmp -s LICENSE "$$dir/LICENSE" || { echo "$$dir/LICENSE is not a copy of LICENSE"; exit 1; }; done

lint: staticcheck-version
	$(call each,$(STATICCHECK) ./...)

# staticcheck-version fetches and builds staticcheck once, before the
# modules use it, and prints its version.
staticcheck-version:
	$(STATICCHECK) -version

# apidiff reports each module's API difference from its last tag (gorelease).
apidiff:
	HEAD_VERSION=$(RELEASE_VERSION) .ci/apidiff

# release-check proves the README's install commands at RELEASE_VERSION,
# before any tag, from a local module proxy (.ci/release-check); it works
# from a cold module cache. RELEASING.md says how to make a release.
release-check:
	RELEASE_VERSION=$(RELEASE_VERSION) .ci/release-check

demo:
	go run ./cmd/polite demo

bench:
	$(call each,go test -run '^$$' -bench . -benchmem ./...)
