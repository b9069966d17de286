package simulate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ErrTrace is wrapped by every trace parse error.
var ErrTrace = errors.New("invalid trace")

// Header is the first line of a CSV trace. HeaderV2, without the debug
// column (no job is debug work), and HeaderV1, without resumable either
// (every job then restarts when preempted), are read too.
const (
	Header   = "submit_seconds,account,gpus,duration_seconds,min_runtime_seconds,resumable,debug"
	HeaderV2 = "submit_seconds,account,gpus,duration_seconds,min_runtime_seconds,resumable"
	HeaderV1 = "submit_seconds,account,gpus,duration_seconds,min_runtime_seconds"
)

// Job is one trace line: a job submitted at Submit seconds after the
// trace start by Account, asking for GPUs GPUs for Duration seconds.
// MinRuntime is its protected runtime in seconds (0: unallocated work).
type Job struct {
	ID         int     `json:"id"`
	Submit     float64 `json:"submitSeconds"`
	Account    string  `json:"account"`
	GPUs       int     `json:"gpus"`
	Duration   float64 `json:"durationSeconds"`
	MinRuntime float64 `json:"minRuntimeSeconds"`
	// Resumable work resumes where it stopped when preempted; other
	// work restarts from the beginning.
	Resumable bool `json:"resumable"`
	// Debug work is a short test on few GPUs: allocated work whose
	// protection the replay caps at the planner's DebugMinRuntime (15
	// minutes), as a debug request's is (fairshare.md §1.2).
	Debug bool `json:"debug"`
}

// MaxTraceSeconds bounds every time of a trace (submit_seconds,
// duration_seconds, min_runtime_seconds): ten years. The replay works in
// time.Duration (at most 292 years) and counts owed GPU-hours in whole
// seconds of its span, so far larger times cannot be represented; they
// are refused, not replayed as nothing.
const MaxTraceSeconds = 10 * 365 * 24 * 3600.0

// ParseTrace reads a CSV trace (see Header). Submit times must not
// decrease; gpus and duration_seconds must be positive; min_runtime_seconds
// must be in [0, duration_seconds], and positive for debug work (it is
// allocated); no time may exceed MaxTraceSeconds. A trace needs at least
// one job. Errors name the line and column.
func ParseTrace(r io.Reader) ([]Job, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	var jobs []Job
	cols := strings.Split(Header, ",")
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrTrace, err)
		}
		line, _ := cr.FieldPos(0)
		if line == 1 {
			if cols, err = traceColumns(rec); err != nil {
				return nil, err
			}
			continue
		}
		j, err := traceRow{rec: rec, cols: cols, line: line}.job(jobs)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	if len(jobs) == 0 && cr.InputOffset() == 0 {
		return nil, fmt.Errorf("%w: line 1: missing header %q", ErrTrace, Header)
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%w: a header and no jobs: nothing to replay", ErrTrace)
	}
	return jobs, nil
}

// traceColumns returns the columns of a trace whose header is rec.
func traceColumns(rec []string) ([]string, error) {
	cols := strings.Split(Header, ",")
	switch strings.Join(rec, ",") {
	case Header:
		return cols, nil
	case HeaderV2:
		return cols[:6], nil
	case HeaderV1:
		return cols[:5], nil
	}
	return nil, fmt.Errorf("%w: line 1: header must be %q (or, without debug, %q; without resumable, %q)", ErrTrace, Header, HeaderV2, HeaderV1)
}

// traceRow is one record of a trace after its header.
type traceRow struct {
	rec  []string
	cols []string // the trace's columns
	line int
}

// bad returns the error of column col.
func (row traceRow) bad(col int, format string, a ...any) error {
	return fmt.Errorf("%w: line %d column %d (%s): %s", ErrTrace, row.line, col+1, row.cols[col], fmt.Sprintf(format, a...))
}

// job returns the job of the row, which follows jobs.
func (row traceRow) job(jobs []Job) (Job, error) {
	rec := row.rec
	if len(rec) != len(row.cols) {
		return Job{}, fmt.Errorf("%w: line %d: %d fields, want %d", ErrTrace, row.line, len(rec), len(row.cols))
	}
	j := Job{ID: len(jobs), Account: strings.TrimSpace(rec[1])}
	if err := row.times(&j); err != nil {
		return Job{}, err
	}
	g, err := strconv.Atoi(strings.TrimSpace(rec[2]))
	switch {
	case j.Account == "":
		return Job{}, row.bad(1, "account is empty")
	case err != nil || g <= 0:
		return Job{}, row.bad(2, "%q is not a positive integer", rec[2])
	case j.Duration <= 0:
		return Job{}, row.bad(3, "duration must be positive")
	case j.MinRuntime > j.Duration:
		return Job{}, row.bad(4, "min runtime %g exceeds duration %g", j.MinRuntime, j.Duration)
	case len(jobs) > 0 && j.Submit < jobs[len(jobs)-1].Submit:
		return Job{}, row.bad(0, "submit %g is before the previous line's %g", j.Submit, jobs[len(jobs)-1].Submit)
	}
	j.GPUs = g
	if err := row.flags(&j); err != nil {
		return Job{}, err
	}
	if j.Debug && j.MinRuntime <= 0 {
		return Job{}, row.bad(4, "debug work is allocated: its min runtime must be positive")
	}
	return j, nil
}

// times sets j's submit, duration and min runtime from the row.
func (row traceRow) times(j *Job) error {
	nums := [...]*float64{&j.Submit, nil, nil, &j.Duration, &j.MinRuntime}
	for c, p := range nums {
		if p == nil {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(row.rec[c]), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return row.bad(c, "%q is not a non-negative number", row.rec[c])
		}
		if v > MaxTraceSeconds {
			return row.bad(c, "%s is past the %.0f seconds (ten years) a trace's times may reach", strings.TrimSpace(row.rec[c]), MaxTraceSeconds)
		}
		*p = v
	}
	return nil
}

// flags sets j's resumable and debug flags from the columns the trace
// has of them.
func (row traceRow) flags(j *Job) error {
	for c, p := range []*bool{&j.Resumable, &j.Debug} {
		if c+5 >= len(row.cols) {
			break
		}
		switch strings.TrimSpace(row.rec[c+5]) {
		case "1", "true":
			*p = true
		case "0", "false", "":
		default:
			return row.bad(c+5, "%q: want 1 or 0", row.rec[c+5])
		}
	}
	return nil
}

// WriteTrace writes jobs as a CSV trace that ParseTrace reads back.
func WriteTrace(w io.Writer, jobs []Job) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(strings.Split(Header, ",")); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	flag := func(b bool) string {
		if b {
			return "1"
		}
		return "0"
	}
	for _, j := range jobs {
		if err := cw.Write([]string{f(j.Submit), j.Account, strconv.Itoa(j.GPUs), f(j.Duration), f(j.MinRuntime),
			flag(j.Resumable), flag(j.Debug)}); err != nil {
			return fmt.Errorf("write trace: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write trace: %w", err)
	}
	return nil
}
