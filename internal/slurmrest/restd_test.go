package slurmrest

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/internal/httpretry"
	"github.com/toposcope/toposcope/testenv/slurmtest"
)

var update = flag.Bool("update", false, "save the real slurmrestd's answer under testdata")

// TestRealSlurmrestd reads partitions and nodes from Debian's slurmrestd
// 22.05 beside a real slurmctld, with a token slurmctld issued.
func TestRealSlurmrestd(t *testing.T) {
	slurmtest.Require(t, slurmtest.V2205)
	ctx := context.Background()
	ctl, err := slurmtest.Start(ctx, t, slurmtest.Options{
		Version:  slurmtest.V2205,
		Nodes:    []string{"cpu001", "gpu001", "gpu002", "gpu003", "gpu004"},
		Topology: "SwitchName=s1 Nodes=gpu00[1-4],cpu001\n",
		JWT:      true,
		Partitions: []slurmtest.Partition{
			{Name: "gpu", Nodes: "gpu[001-004]"},
			{Name: "debug", Nodes: "gpu001,cpu001"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	restd, err := ctl.StartRESTD(ctx, t)
	if err != nil {
		t.Fatal(err)
	}
	token, err := ctl.Token(ctx, "nobody", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	// The file holds what `scontrol token` prints.
	if err := os.WriteFile(tokenFile, []byte("SLURM_JWT="+token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := Config{Connection: httpretry.Connection{URL: restd.URL, AllowHTTP: true}, TokenFile: tokenFile, User: "nobody"}
	c, err := New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("partitions", func(t *testing.T) {
		got, err := c.Partitions(ctx)
		if err != nil {
			t.Fatalf("%v\n%s", err, restd.Log())
		}
		want := map[string][]string{
			"all":   {"cpu001", "gpu001", "gpu002", "gpu003", "gpu004"},
			"gpu":   {"gpu001", "gpu002", "gpu003", "gpu004"},
			"debug": {"cpu001", "gpu001"},
		}
		for p := range got {
			slices.Sort(got[p])
		}
		if len(got) != len(want) {
			t.Fatalf("partitions %v, want %v", got, want)
		}
		for p, nodes := range want {
			if !slices.Equal(got[p], nodes) {
				t.Errorf("partition %s: %v, want %v", p, got[p], nodes)
			}
		}
		if c.version != "v0.0.38" {
			t.Errorf("API version %q, want v0.0.38, the newest of Slurm 22.05", c.version)
		}
		if *update {
			var raw json.RawMessage
			if err := c.get(ctx, "partitions", &raw); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("testdata", "partitions-22.05-0.0.38.json"), raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})

	t.Run("nodes", func(t *testing.T) {
		raw, err := c.Nodes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Nodes []struct {
				Name       string   `json:"name"`
				Partitions []string `json:"partitions"`
			} `json:"nodes"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		parts := map[string][]string{}
		for _, n := range doc.Nodes {
			parts[n.Name] = n.Partitions
		}
		if len(parts) != 5 || !slices.Contains(parts["gpu001"], "debug") || !slices.Contains(parts["gpu004"], "gpu") {
			t.Errorf("nodes and their partitions: %v", parts)
		}
	})

	t.Run("configured version", func(t *testing.T) {
		c37, err := New(Config{Connection: cfg.Connection, TokenFile: tokenFile, User: "nobody", APIVersion: "v0.0.37"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c37.Partitions(ctx)
		if err != nil || len(got["gpu"]) != 4 {
			t.Fatalf("v0.0.37: %v, %v", got, err)
		}
	})

	t.Run("refused token is an error that does not quote it", func(t *testing.T) {
		bad := filepath.Join(dir, "bad")
		forged := token[:len(token)-4] + "AAAA"
		if err := os.WriteFile(bad, []byte(forged), 0o600); err != nil {
			t.Fatal(err)
		}
		cb, err := New(Config{Connection: cfg.Connection, TokenFile: bad, User: "nobody", APIVersion: "v0.0.38"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, err = cb.Partitions(ctx)
		// slurmrestd 22.05 passes the token on, and answers 500 with
		// "Unspecified error" when slurmctld refuses it.
		var se *httpretry.StatusError
		if !errors.As(err, &se) || se.StatusCode < 400 {
			t.Fatalf("error %v, want an HTTP error status", err)
		}
		if strings.Contains(err.Error(), forged) || strings.Contains(err.Error(), token) {
			t.Errorf("the error quotes the token: %v", err)
		}
	})

	t.Run("missing token file", func(t *testing.T) {
		cm, err := New(Config{Connection: cfg.Connection, TokenFile: filepath.Join(dir, "none")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cm.Partitions(ctx); !errors.Is(err, ErrToken) {
			t.Fatalf("error %v, want ErrToken", err)
		}
	})
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no token file", Config{Connection: httpretry.Connection{URL: "https://h:6820"}}, "tokenFile: is required"},
		{"plain http", Config{Connection: httpretry.Connection{URL: "http://h:6820"}, TokenFile: "/t"}, "allowHTTP"},
		{"bad version", Config{Connection: httpretry.Connection{URL: "https://h:6820"}, TokenFile: "/t", APIVersion: "0.0.42"}, "apiVersion"},
		{"bad user", Config{Connection: httpretry.Connection{URL: "https://h:6820"}, TokenFile: "/t", User: "a b"}, "user"},
		{"valid", Config{Connection: httpretry.Connection{URL: "https://h:6820"}, TokenFile: "/t", APIVersion: "v0.0.44", User: "slurm"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}
