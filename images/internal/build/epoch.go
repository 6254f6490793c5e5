package build

import (
	"fmt"
	"strconv"
	"time"
)

// SourceDateEpoch reads the reproducible-builds SOURCE_DATE_EPOCH convention through
// getenv (os.Getenv in production): the value in Unix seconds, or the zero time (which
// Spec treats as the epoch) when it is unset.
func SourceDateEpoch(getenv func(string) string) (time.Time, error) {
	v := getenv("SOURCE_DATE_EPOCH")
	if v == "" {
		return time.Time{}, nil
	}
	secs, err := strconv.ParseInt(v, 10, 64)
	if err != nil || secs < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want non-negative Unix seconds", v)
	}
	return time.Unix(secs, 0).UTC(), nil
}
