//go:build !race

package sandbox

// raceEnabled reports whether the tests run under the race detector.
const raceEnabled = false
