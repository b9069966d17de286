package slurmtest

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// slurmrestdBin is Debian's slurmrestd (package slurmrestd).
const slurmrestdBin = "/usr/sbin/slurmrestd"

// restPlugins are the OpenAPI plugins of 22.05 that talk to slurmctld.
const restPlugins = "openapi/v0.0.36,openapi/v0.0.37,openapi/v0.0.38"

// RESTD is a slurmrestd that [Controller.StartRESTD] runs beside a controller.
type RESTD struct {
	// URL is its base address, http://127.0.0.1:PORT.
	URL string
	log string
}

// Log returns what slurmrestd has logged so far.
func (r *RESTD) Log() string {
	b, err := os.ReadFile(r.log)
	if err != nil {
		return fmt.Sprintf("(cannot read %s: %v)", r.log, err)
	}
	return string(b)
}

// Token asks slurmctld for a JSON Web Token of user, valid for lifespan
// (`scontrol token username=USER lifespan=SECONDS`); the controller must
// have been started with Options.JWT.
func (c *Controller) Token(ctx context.Context, user string, lifespan time.Duration) (string, error) {
	if err := c.exitedErr(); err != nil {
		return "", err
	}
	out, errOut, err := c.scontrol(ctx, "token", "username="+user, "lifespan="+strconv.Itoa(int(lifespan.Seconds())))
	tok, ok := strings.CutPrefix(strings.TrimSpace(out), "SLURM_JWT=")
	if err != nil || !ok || tok == "" {
		return "", fmt.Errorf("slurmtest: scontrol token (%s): %s", exitText(err), strings.TrimSpace(out+errOut))
	}
	return tok, nil
}

// StartRESTD runs slurmrestd on a free loopback port with JWT
// authentication (-a rest_auth/jwt) as user nobody, against this
// controller, and waits until it answers HTTP. It is stopped when the test
// ends. The controller must have been started with Options.JWT.
func (c *Controller) StartRESTD(ctx context.Context, t testing.TB) (*RESTD, error) {
	t.Helper()
	if _, err := os.Stat(slurmrestdBin); err != nil {
		return nil, fmt.Errorf("slurmtest: %s is missing (package slurmrestd); %s", slurmrestdBin, installHint)
	}
	// slurmrestd reads slurm.conf as nobody: the folders above it must let
	// others through (t.TempDir makes them 0700).
	for d := c.dir.host; d != filepath.Dir(d) && strings.HasPrefix(d, os.TempDir()+"/"); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			return nil, fmt.Errorf("slurmtest: %w", err)
		}
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	r := &RESTD{URL: "http://" + addr, log: c.dir.hostPath("slurmrestd.log")}
	logf, err := os.Create(r.log)
	if err != nil {
		return nil, fmt.Errorf("slurmtest: %w", err)
	}
	// SLURM_JWT=daemon makes slurmrestd talk to slurmctld with auth/jwt,
	// passing on each request's token (env(1) takes the assignment before
	// the program). Only the slurmctld plugins: the slurmdbd ones refuse
	// to load without accounting.
	argv := c.command("SLURM_JWT=daemon", slurmrestdBin, "-a", "rest_auth/jwt", "-s", restPlugins, "-u", "nobody", addr)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.dir.host
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = logf.Close()
		return nil, fmt.Errorf("slurmtest: starting %s: %w", strings.Join(argv, " "), err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		_ = logf.Close()
		close(done)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(stopGrace):
			_ = killGroup(cmd.Process)
			<-done
		}
	})
	if err := waitHTTP(ctx, r.URL+"/openapi/v3", done); err != nil {
		return nil, fmt.Errorf("slurmtest: slurmrestd did not come up: %w\n%s", err, r.Log())
	}
	return r, nil
}

// waitHTTP polls url until it answers any HTTP status, the process ends
// (done closed) or startTimeout passes.
func waitHTTP(ctx context.Context, url string, done <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var last error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			return nil
		}
		last = err
		select {
		case <-done:
			return fmt.Errorf("slurmrestd exited; last try: %w", last)
		case <-ctx.Done():
			return fmt.Errorf("%w; last try: %w", ctx.Err(), last)
		case <-tick.C:
		}
	}
}

// TokenFile writes a token of user, valid for an hour, into a new file
// (mode 0600) and returns its path; it fails the test when slurmctld
// issues none.
func (c *Controller) TokenFile(ctx context.Context, t testing.TB, user string) string {
	t.Helper()
	token, err := c.Token(ctx, user, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "jwt")
	if err := os.WriteFile(file, []byte(token), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}
