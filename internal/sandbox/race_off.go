//go:build !race

package sandbox

const raceEnabled = false

// childGORACE is unused without the race detector.
func childGORACE() string { return "" }
