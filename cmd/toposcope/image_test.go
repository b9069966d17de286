package main_test

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/testenv/budget"
	"github.com/toposcope/toposcope/testenv/kubetest"
	"github.com/toposcope/toposcope/testenv/proctest"
	"github.com/toposcope/toposcope/testenv/releasebin"
)

// TestImage builds the container images with `hack/image.sh` (buildah, no
// registry) from the run's release binaries (testenv/releasebin),
// checks them with skopeo and by reading its layers (entrypoint,
// non-root user, no shell, the CA bundle), then runs it with buildah's
// chroot isolation and asks the service inside for /healthz, /v1/status
// and its version in /metrics. Without buildah it skips, except with CI=true, where
// hack/image.sh installs it.
func TestImage(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("buildah"); err != nil && !kubetest.InCI() {
		t.Skip("no buildah (hack/image.sh --tools installs it)")
	}
	if testing.Short() && !kubetest.InCI() {
		t.Skip("-short: the image needs a full static build")
	}
	ctx := budget.Context(t, 20*time.Minute)
	rel := releasebin.Get(ctx, t)
	imageVersion := rel.Version
	dir := t.TempDir()
	archive := filepath.Join(dir, "toposcope.tar")
	agentArchive := filepath.Join(dir, "toposcope-agent.tar")
	storage := filepath.Join(dir, "storage")
	build := exec.CommandContext(ctx, "bash", "hack/image.sh", archive, agentArchive)
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "VERSION="+imageVersion, "BIN="+rel.Dir)
	out, err := build.CombinedOutput()
	if err != nil {
		t.Fatalf("hack/image.sh: %v (%v)\n%s", err, context.Cause(ctx), out)
	}
	t.Logf("%s", lastLine(out))

	inspected := run(ctx, t, "skopeo", "inspect", "--config", "oci-archive:"+archive)
	var cfg struct {
		Config struct {
			User         string
			Entrypoint   []string
			Cmd          []string
			Env          []string
			ExposedPorts map[string]struct{}
			Labels       map[string]string
		} `json:"config"`
	}
	if err := json.Unmarshal(inspected, &cfg); err != nil {
		t.Fatalf("skopeo inspect --config: %v", err)
	}
	c := cfg.Config
	if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/usr/bin/toposcope"}) ||
		!slices.Equal(c.Cmd, []string{"serve", "--listen", "0.0.0.0:49021"}) || c.Labels["org.opencontainers.image.version"] != imageVersion {
		t.Errorf("image config = %+v", c)
	}
	if _, ok := c.ExposedPorts["49021/tcp"]; !ok {
		t.Errorf("port 49021 not exposed: %v", c.ExposedPorts)
	}

	files := imageFiles(t, archive)
	for path, want := range map[string]string{
		"usr/bin/toposcope":                 "0:0 755",
		"etc/ssl/certs/ca-certificates.crt": "0:0 644",
		"etc/passwd":                        "0:0 644",
		"home/nonroot/":                     "65532:65532 755",
	} {
		if got, ok := files[path]; !ok || got != want {
			t.Errorf("%s in the image: %q, want %q", path, got, want)
		}
	}
	for path := range files {
		if strings.HasPrefix(path, "bin/") || path == "usr/bin/sh" || strings.HasPrefix(path, "var/lib/dpkg") {
			t.Errorf("the image holds %s: it should have no shell or package manager", path)
		}
	}

	checkRuns(ctx, t, archive, storage, imageVersion)
	checkAgent(ctx, t, agentArchive, storage, imageVersion)
}

// checkAgent checks the node agent's image: its own small binary as the
// entrypoint, non-root, no shell and not the service's binary, and that
// it gathers a node's facts when run.
func checkAgent(ctx context.Context, t *testing.T, archive, storage, imageVersion string) {
	t.Helper()
	inspected := run(ctx, t, "skopeo", "inspect", "--config", "oci-archive:"+archive)
	var cfg struct {
		Config struct {
			User       string
			Entrypoint []string
			Labels     map[string]string
		} `json:"config"`
	}
	if err := json.Unmarshal(inspected, &cfg); err != nil {
		t.Fatalf("skopeo inspect --config: %v", err)
	}
	if c := cfg.Config; c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/usr/bin/toposcope-agent"}) ||
		c.Labels["org.opencontainers.image.version"] != imageVersion {
		t.Errorf("agent image config = %+v", c)
	}
	files := imageFiles(t, archive)
	if got := files["usr/bin/toposcope-agent"]; got != "0:0 755" {
		t.Errorf("usr/bin/toposcope-agent in the agent image: %q", got)
	}
	for path := range files {
		if path == "usr/bin/toposcope" || strings.HasPrefix(path, "bin/") || path == "usr/bin/sh" {
			t.Errorf("the agent image holds %s", path)
		}
	}
	store := []string{"--root", storage, "--runroot", storage + "-run", "--storage-driver", "vfs"}
	ctr := strings.TrimSpace(string(run(ctx, t, "buildah", append(store, "from", "--quiet", "oci-archive:"+archive)...)))
	t.Cleanup(func() { _ = exec.Command("buildah", append(store, "rm", ctr)...).Run() })
	agentRun := append(store, "run", "--isolation", "chroot", ctr, "--",
		"/usr/bin/toposcope-agent", "--node", "gpu001", "--metadata", "none", "--nvidia-smi", "", "--sysfs", "", "--log-level", "info")
	out := run(ctx, t, "buildah", agentRun...)
	if len(out) == 0 {
		// Once in a full suite run on a loaded machine, buildah's chroot
		// run exited 0 and passed on no standard output at all, while the
		// test alone passed five times out of five. Run it once more: the
		// agent must print its facts then.
		t.Log("buildah run gave no output and exit status 0; running the agent once more")
		out = run(ctx, t, "buildah", agentRun...)
	}
	var facts struct {
		Node string `json:"node"`
	}
	if err := json.Unmarshal(out, &facts); err != nil || facts.Node != "gpu001" {
		t.Errorf("toposcope-agent in its image printed %q (%v); want the facts of gpu001", out, err)
	}
}

// checkRuns runs the image's entrypoint in a buildah container (chroot
// isolation, the host's network) and checks the service answers.
func checkRuns(ctx context.Context, t *testing.T, archive, storage, imageVersion string) {
	t.Helper()
	store := []string{"--root", storage, "--runroot", storage + "-run", "--storage-driver", "vfs"}
	ctr := strings.TrimSpace(string(run(ctx, t, "buildah", append(store, "from", "--quiet", "oci-archive:"+archive)...)))
	t.Cleanup(func() { _ = exec.Command("buildah", append(store, "rm", ctr)...).Run() })

	version := run(ctx, t, "buildah", append(store, "run", "--isolation", "chroot", ctr, "--", "/usr/bin/toposcope", "--version")...)
	if !strings.Contains(string(version), imageVersion) {
		t.Errorf("toposcope --version in the image = %q, want %s", version, imageVersion)
	}

	addr := freeAddr(t)
	// buildah runs the entrypoint in a child: Start stops both.
	log := proctest.Start(ctx, t, append([]string{"buildah"}, append(store, "run", "--isolation", "chroot", ctr, "--",
		"/usr/bin/toposcope", "serve", "--listen", addr)...)...)
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		resp, err := client.Get("http://" + addr + "/healthz")
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the image's service never answered /healthz: %v\n%s", err, log.String())
		}
		time.Sleep(300 * time.Millisecond)
	}
	for path, want := range map[string]string{"/v1/status": `"provider":"sim"`, "/metrics": `version="` + imageVersion + `"`} {
		resp, err := client.Get("http://" + addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("%s = %d, want %q in\n%.2000s", path, resp.StatusCode, want, body)
		}
	}
}

// run runs a command and returns its standard output, failing the test
// with its standard error.
func run(ctx context.Context, t *testing.T, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.CommandContext(ctx, name, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// freeAddr returns a loopback address with a port that was free.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// ociIndex is the part of an OCI index or manifest the test reads.
type ociIndex struct {
	Manifests []struct {
		Digest string `json:"digest"`
	} `json:"manifests"`
	Layers []struct {
		Digest    string `json:"digest"`
		MediaType string `json:"mediaType"`
	} `json:"layers"`
}

// imageFiles reads an OCI archive (a tar of an OCI layout) and returns
// every path of the image's layers with "uid:gid mode".
func imageFiles(t *testing.T, archive string) map[string]string {
	t.Helper()
	blobs := map[string][]byte{}
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			blobs[strings.TrimPrefix(h.Name, "./")] = b
		}
	}
	blob := func(digest string) []byte {
		b, ok := blobs["blobs/"+strings.Replace(digest, ":", "/", 1)]
		if !ok {
			t.Fatalf("the archive lacks blob %s", digest)
		}
		return b
	}
	var index, manifest ociIndex
	if err := json.Unmarshal(blobs["index.json"], &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v (%d manifests)", err, len(index.Manifests))
	}
	if err := json.Unmarshal(blob(index.Manifests[0].Digest), &manifest); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, l := range manifest.Layers {
		var r io.Reader = strings.NewReader(string(blob(l.Digest)))
		if strings.HasSuffix(l.MediaType, "gzip") {
			zr, err := gzip.NewReader(r)
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		}
		lt := tar.NewReader(r)
		for {
			h, err := lt.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("layer %s: %v", l.Digest, err)
			}
			files[strings.TrimPrefix(h.Name, "./")] = fmt.Sprintf("%d:%d %o", h.Uid, h.Gid, h.Mode&0o7777)
		}
	}
	t.Logf("image: %d layers, %d paths", len(manifest.Layers), len(files))
	return files
}
