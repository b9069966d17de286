package cli

import (
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/toposcope/toposcope/internal/progress"
)

// tickEvery is how often a progress line of unknown total is redrawn.
const tickEvery = 200 * time.Millisecond

// progressFlag adds --quiet to cmd and returns where progress is drawn:
// standard error when it is a terminal and --quiet is not given, nowhere
// otherwise (the returned func gives nil then).
func progressFlag(cmd *cobra.Command, env *Env) func() io.Writer {
	quiet := cmd.Flags().Bool("quiet", false, "draw no progress line (none is drawn when standard error is not a terminal)")
	return func() io.Writer {
		if *quiet || !progress.Terminal(env.Stderr) {
			return nil
		}
		return env.Stderr
	}
}

// during draws an elapsed-time line labelled label on w while f runs.
func during[T any](w io.Writer, label string, f func() (T, error)) (T, error) {
	l := progress.New(w, label, 0, nil)
	l.Tick(tickEvery)
	defer l.Finish()
	return f()
}
