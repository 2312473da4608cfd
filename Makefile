# The README's commands. `make test` runs every check and test, as CI does.
.PHONY: test demo bench

test:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	go vet ./...
	go test -race -shuffle=on -count=1 ./...
	cd examples/colly && go vet ./... && go test -race -count=1 ./...

demo:
	go run ./cmd/polite demo

bench:
	go test -run '^$$' -bench . -benchmem ./...
