//go:build race

package retention_test

// raceEnabled shrinks TestPruneShrinksFile: the race detector instruments
// the SQLite engine itself (modernc.org/sqlite is Go), which slows filling
// and pruning 100k runs about fortyfold and adds nothing to checking the
// file's size. `make test` runs it once more without it, at full size.
const raceEnabled = true
