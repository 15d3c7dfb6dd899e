// Package eino benchmarks AgentCraft's workflow engine against CloudWeGo
// Eino's compose package on the same graphs in the same `go test -bench`
// run: a chain of 100 nodes and a fan-out to 1000 parallel branches, each
// node doing the same trivial work (strings.TrimSpace) so the numbers
// measure orchestration overhead. It is a separate module so that Eino
// never enters the product's go.mod. Run it with
//
//	cd bench/eino && go test -run '^$' -bench . -benchmem -count 5
//
// See README.md for what each benchmark measures and the measured numbers.
package eino
