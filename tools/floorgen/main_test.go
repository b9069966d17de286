package main

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/toposcope/toposcope/cmd/toposcope/cli"
)

// TestSameOutputAsGenerate: for the same arguments floorgen writes what
// `toposcope generate` writes, byte for byte, so that timing it in
// toposcope's place times the same work.
func TestSameOutputAsGenerate(t *testing.T) {
	tests := [][]string{
		{"generate", "--provider", "sim", "--model", "fat-tree-512", "--engine", "slurm", "--plugin", "topology/tree"},
		{"generate", "--provider", "sim", "--model", "nvl72", "--engine", "slurm", "--plugin", "topology/block", "--slurm-version", "24.11"},
		{"generate", "--provider", "sim", "--model", "topograph-large", "--engine", "slurm", "--plugin", "topology/yaml", "--slurm-version", "25.05"},
	}
	for _, args := range tests {
		t.Run(args[4]+" "+args[8], func(t *testing.T) {
			var want, stderr, got bytes.Buffer
			if code := cli.Main(t.Context(), args, cli.Env{Stdout: &want, Stderr: &stderr}); code != cli.ExitOK {
				t.Fatalf("toposcope %v: exit %d: %s", args, code, stderr.String())
			}
			if err := run(t.Context(), args, &got); err != nil {
				t.Fatal(err)
			}
			if got.Len() == 0 || !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("floorgen wrote %d bytes, toposcope generate %d; they differ:\n%s\n---\n%s", got.Len(), want.Len(), got.String(), want.String())
			}
		})
	}
}

// TestSameModelAsToposcope: floorgen model generate writes the model
// toposcope model generate writes.
func TestSameModelAsToposcope(t *testing.T) {
	tests := [][]string{
		{"model", "generate", "--shape", "fat-tree", "--nodes", "1000", "--domain-size", "18", "--quiet"},
		{"model", "generate", "--shape", "nvl72", "--nodes", "144", "--nodes-per-leaf", "36", "--leaves-per-spine", "2", "--prefix", "gb"},
	}
	for _, args := range tests {
		t.Run(args[3], func(t *testing.T) {
			var want, stderr, got bytes.Buffer
			if code := cli.Main(t.Context(), args, cli.Env{Stdout: &want, Stderr: &stderr}); code != cli.ExitOK {
				t.Fatalf("toposcope %v: exit %d: %s", args, code, stderr.String())
			}
			if err := run(t.Context(), args, &got); err != nil {
				t.Fatal(err)
			}
			if got.Len() == 0 || !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Errorf("floorgen wrote %d bytes, toposcope model generate %d; they differ", got.Len(), want.Len())
			}
		})
	}
}

// TestUsage: floorgen refuses what it does not do (another provider or
// engine, no model) instead of doing something else.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{
		nil,
		{"serve"},
		{"generate", "--provider", "aws", "--model", "nvl72"},
		{"generate", "--engine", "k8s-labels", "--model", "nvl72"},
		{"generate", "--provider", "sim"},
		{"model", "generate", "--nodes", "8", "extra"},
	} {
		var out bytes.Buffer
		if err := run(context.Background(), args, &out); !errors.Is(err, errUsage) || out.Len() > 0 {
			t.Errorf("%v: %v and %d bytes written, want errUsage and nothing", args, err, out.Len())
		}
	}
}
