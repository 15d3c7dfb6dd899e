//go:build race

package extract

// raceEnabled: the race detector slows the child (and parsing) several times.
const raceEnabled = true
