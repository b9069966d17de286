package simulate

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/toposcope/toposcope/placement/simulate/plot"
)

// ErrNoSeries is wrapped when a report to plot has no Series: it was
// run without Options.Samples.
var ErrNoSeries = errors.New("no series to plot")

// Figure names (plot.Chart.Figure) of the simulator's charts.
const (
	FigureWaitCDF       = "wait-cdf"
	FigureLargestWaits  = "largest-waits"
	FigureOccupancy     = "occupancy"
	FigureDeliveredOwed = "delivered-owed"
)

// comparedFigures is how many of Figures' charts compare the policies;
// the per-policy charts follow them.
const comparedFigures = 3

// largestSizes is how many of the largest job sizes the largest jobs'
// waits chart shows.
const largestSizes = 6

// maxRatioShown is the top of the delivered ÷ owed axis, in percent,
// when a value passes it.
const maxRatioShown = 200.0

// timeUnit is a unit of time for an axis.
type timeUnit struct {
	name string
	sec  float64
}

// unitFor returns minutes, hours or days, whichever keeps maxSec in a
// readable range.
func unitFor(maxSec float64) timeUnit {
	switch {
	case maxSec < 3*3600:
		return timeUnit{"minutes", 60}
	case maxSec < 4*86400:
		return timeUnit{"hours", 3600}
	}
	return timeUnit{"days", 86400}
}

// Figures returns the charts of the reports: the policies compared in
// one chart each for the wait distribution, the largest jobs' waits and
// the occupancy over time, then one chart per policy of each account's
// delivered over owed GPU-hours over time.
func Figures(reports []*Report) ([]*plot.Chart, error) {
	var span, maxWait float64
	for _, r := range reports {
		if r.Series == nil {
			return nil, fmt.Errorf("%w: policy %s", ErrNoSeries, r.Policy)
		}
		span = max(span, r.SpanSeconds)
		if q := r.Series.WaitQuantiles; len(q) > 0 {
			maxWait = max(maxWait, q[len(q)-1])
		}
	}
	charts := []*plot.Chart{waitCDF(reports, unitFor(maxWait)), largestWaits(reports, unitFor(maxWait)), occupancy(reports, unitFor(span))}
	for i, r := range reports {
		charts = append(charts, deliveredOwed(r, i, unitFor(span)))
	}
	return charts, nil
}

func waitCDF(reports []*Report, u timeUnit) *plot.Chart {
	c := &plot.Chart{ID: "fig-" + FigureWaitCDF, Figure: FigureWaitCDF, Title: "Wait-time distribution",
		X: plot.Axis{Label: "wait, start minus submit (" + u.name + ")"}, Y: plot.Axis{Label: "jobs that waited at most this long (%)", Min: 0, Max: 100}}
	var desc []string
	for _, r := range reports {
		q := r.Series.WaitQuantiles
		s := plot.Series{Name: r.Policy}
		for k, w := range q {
			s.Points = append(s.Points, plot.Point{X: w / u.sec, Y: 100 * float64(k) / float64(max(len(q)-1, 1))})
		}
		c.Series = append(c.Series, s)
		desc = append(desc, fmt.Sprintf("%s: p50 %s, p90 %s, longest %s", r.Policy, dur(r.WaitP50), dur(r.WaitP90), dur(q[len(q)-1])))
	}
	c.Desc = "Share of jobs that waited at most a given time, per policy. " + strings.Join(desc, "; ") + "."
	return c
}

func largestWaits(reports []*Report, u timeUnit) *plot.Chart {
	c := &plot.Chart{ID: "fig-" + FigureLargestWaits, Figure: FigureLargestWaits, Title: "Largest jobs' waits",
		X: plot.Axis{Label: "job size (GPUs), largest at the right"}, Y: plot.Axis{Label: "mean wait (" + u.name + ")"}}
	sizes := reports[0].Series.BySize
	sizes = sizes[max(0, len(sizes)-largestSizes):]
	for i, sw := range sizes {
		c.X.Ticks = append(c.X.Ticks, plot.Tick{V: float64(i), Label: strconv.Itoa(sw.GPUs)})
	}
	var desc []string
	for _, r := range reports {
		s := plot.Series{Name: r.Policy}
		var parts []string
		for i, want := range sizes {
			for _, sw := range r.Series.BySize {
				if sw.GPUs == want.GPUs {
					s.Points = append(s.Points, plot.Point{X: float64(i), Y: sw.MeanWait / u.sec})
					parts = append(parts, fmt.Sprintf("%d GPUs %s", sw.GPUs, dur(sw.MeanWait)))
				}
			}
		}
		c.Series = append(c.Series, s)
		desc = append(desc, r.Policy+": "+strings.Join(parts, ", "))
	}
	c.Desc = fmt.Sprintf("Mean wait of the jobs of each of the %d largest sizes, per policy. %s.", len(sizes), strings.Join(desc, "; "))
	return c
}

func occupancy(reports []*Report, u timeUnit) *plot.Chart {
	c := &plot.Chart{ID: "fig-" + FigureOccupancy, Figure: FigureOccupancy, Title: "Occupancy over time",
		X: plot.Axis{Label: "time since the first submit (" + u.name + ")"}, Y: plot.Axis{Label: "GPUs running useful work (%)", Min: 0, Max: 100}}
	var desc []string
	for _, r := range reports {
		s := plot.Series{Name: r.Policy}
		peak := 0.0
		for k, o := range r.Series.Occupancy {
			s.Points = append(s.Points, plot.Point{X: r.Series.Times[k] / u.sec, Y: 100 * o})
			peak = max(peak, o)
		}
		c.Series = append(c.Series, s)
		desc = append(desc, fmt.Sprintf("%s: %.1f%% while jobs arrived, peak %.1f%%, all done after %s", r.Policy, 100*r.Occupancy, 100*peak, dur(r.SpanSeconds)))
	}
	c.Desc = "Share of the cluster's GPUs running useful work, averaged over each of equal intervals from the first submit to the last finish, per policy. " +
		strings.Join(desc, "; ") + "."
	return c
}

func deliveredOwed(r *Report, i int, u timeUnit) *plot.Chart {
	c := &plot.Chart{ID: fmt.Sprintf("fig-%s-%d", FigureDeliveredOwed, i), Figure: FigureDeliveredOwed,
		Title: "Delivered ÷ owed GPU-hours, " + r.Policy,
		X:     plot.Axis{Label: "time since the first submit (" + u.name + ")"}, Y: plot.Axis{Label: "delivered ÷ owed GPU-hours, so far (%)"},
		Refs: []plot.Ref{{Y: 95, Label: "95% of owed"}}}
	var under []string
	top := 0.0
	for k, a := range r.Series.Accounts {
		s := plot.Series{Name: a.Account}
		for t, owed := range a.Owed {
			if owed > 0 {
				y := 100 * a.Delivered[t] / owed
				s.Points = append(s.Points, plot.Point{X: r.Series.AccountTimes[t] / u.sec, Y: y})
				top = max(top, y)
			}
		}
		c.Series = append(c.Series, s)
		if k < len(r.Accounts) && r.Accounts[k].Owed > 0 && r.Accounts[k].Ratio < 0.95 {
			under = append(under, fmt.Sprintf("%s %.0f%%", a.Account, 100*r.Accounts[k].Ratio))
		}
	}
	c.Desc = fmt.Sprintf("Under policy %s, each account's GPU-hours delivered so far over those owed so far (no point while nothing is owed). "+
		"At the end %d of %d accounts have at least 95%%", r.Policy, r.AccountsAtLeast95, len(r.Accounts))
	if len(under) > 0 {
		c.Desc += "; below it: " + strings.Join(under, ", ")
	}
	c.Desc += "."
	if top > maxRatioShown {
		// Early on an account may be owed little and delivered much.
		c.Y.Min, c.Y.Max = 0, maxRatioShown
		c.Desc += fmt.Sprintf(" Values above %.0f%% (%.0f%% at most) run off the top.", maxRatioShown, top)
	}
	return c
}
