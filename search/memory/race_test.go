//go:build race

package memory

// raceEnabled shrinks data-heavy tests: the race detector slows the vector
// scan about tenfold and adds nothing to checking its numbers.
const raceEnabled = true
