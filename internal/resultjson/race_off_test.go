//go:build !race

package resultjson_test

// raceEnabled is true when the tests run under the race detector, which
// makes the random comparisons about ten times slower.
const raceEnabled = false
