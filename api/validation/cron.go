package validation

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// cronField describes one field of a standard five-field cron schedule.
type cronField struct {
	min, max int
	names    map[string]int
}

var cronFields = []cronField{
	{min: 0, max: 59},
	{min: 0, max: 23},
	{min: 1, max: 31},
	{min: 1, max: 12, names: map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "oct": 10, "nov": 11, "dec": 12}},
	{min: 0, max: 6, names: map[string]int{"sun": 0, "mon": 1, "tue": 2, "wed": 3, "thu": 4, "fri": 5, "sat": 6}},
}

var cronDescriptors = map[string]bool{"@yearly": true, "@annually": true, "@monthly": true, "@weekly": true, "@daily": true, "@midnight": true, "@hourly": true}

// parseCronSchedule checks a schedule the way the CronJob controller's
// parser reads it: five fields (minute hour day-of-month month day-of-week)
// with lists, ranges, steps and names, a descriptor such as @daily, or
// "@every <duration>", optionally after a TZ= or CRON_TZ= prefix.
func parseCronSchedule(spec string) error {
	if spec == "" {
		return fmt.Errorf("empty spec string")
	}
	spec = strings.TrimSpace(spec)
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		tz, rest, _ := strings.Cut(spec, " ")
		_, name, _ := strings.Cut(tz, "=")
		if _, err := time.LoadLocation(name); err != nil {
			return fmt.Errorf("provided bad location %s: %v", name, err)
		}
		spec = strings.TrimSpace(rest)
	}
	if strings.HasPrefix(spec, "@") {
		if cronDescriptors[spec] {
			return nil
		}
		if d, ok := strings.CutPrefix(spec, "@every "); ok {
			if _, err := time.ParseDuration(d); err != nil {
				return fmt.Errorf("failed to parse duration %s: %v", spec, err)
			}
			return nil
		}
		return fmt.Errorf("unrecognized descriptor: %s", spec)
	}
	fields := strings.Fields(spec)
	if len(fields) != len(cronFields) {
		return fmt.Errorf("expected exactly %d fields, found %d: %s", len(cronFields), len(fields), fields)
	}
	for i, f := range fields {
		for _, part := range strings.Split(f, ",") {
			if err := cronFields[i].parseRange(part); err != nil {
				return err
			}
		}
	}
	return nil
}

// parseRange checks one comma-separated part: *, ?, a value or a range,
// optionally with /step.
func (cf cronField) parseRange(expr string) error {
	rangeAndStep := strings.Split(expr, "/")
	lowAndHigh := strings.Split(rangeAndStep[0], "-")
	single := len(lowAndHigh) == 1
	start, end := cf.min, cf.max
	var err error
	if lowAndHigh[0] == "*" || lowAndHigh[0] == "?" {
		single = false
	} else {
		if start, err = cf.value(lowAndHigh[0]); err != nil {
			return err
		}
		end = start
		switch len(lowAndHigh) {
		case 1:
		case 2:
			if end, err = cf.value(lowAndHigh[1]); err != nil {
				return err
			}
		default:
			return fmt.Errorf("too many hyphens: %s", expr)
		}
	}
	switch len(rangeAndStep) {
	case 1:
	case 2:
		step, err := strconv.Atoi(rangeAndStep[1])
		if err != nil {
			return fmt.Errorf("failed to parse int from %s: %v", rangeAndStep[1], err)
		}
		if step <= 0 {
			return fmt.Errorf("step of range should be a positive number: %s", expr)
		}
		if single {
			end = cf.max
		}
	default:
		return fmt.Errorf("too many slashes: %s", expr)
	}
	switch {
	case start < cf.min:
		return fmt.Errorf("beginning of range (%d) below minimum (%d): %s", start, cf.min, expr)
	case end > cf.max:
		return fmt.Errorf("end of range (%d) above maximum (%d): %s", end, cf.max, expr)
	case start > end:
		return fmt.Errorf("beginning of range (%d) beyond end of range (%d): %s", start, end, expr)
	}
	return nil
}

func (cf cronField) value(s string) (int, error) {
	if v, ok := cf.names[strings.ToLower(s)]; ok {
		return v, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("failed to parse int from %s: %v", s, err)
	}
	if n < 0 {
		return 0, fmt.Errorf("negative number (%d) not allowed: %s", n, s)
	}
	return n, nil
}
