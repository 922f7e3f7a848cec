//go:build race

package server

// raceEnabled reports whether the tests run with the race detector.
const raceEnabled = true
