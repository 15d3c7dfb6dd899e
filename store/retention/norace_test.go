//go:build !race

package retention_test

const raceEnabled = false
