package slurmtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toposcope/toposcope/testenv/dbtest"
)

// Host binaries of the accounting daemon (Debian bookworm: slurmdbd);
// its MariaDB is dbtest's.
const (
	slurmdbdBin   = "/usr/sbin/slurmdbd"
	sacctmgrBin   = "/usr/bin/sacctmgr"
	dbdClusterKey = "topotest" // ClusterName of every slurm.conf this package writes
)

// DBD is a running slurmdbd (Slurm 22.05) on a MariaDB server of its own,
// both in a temporary folder and stopped with the test. Start a
// controller with [Options.DBD] set to it to read fair share back with
// sshare.
type DBD struct {
	dir    string
	port   int // slurmdbd's port
	procs  []*exec.Cmd
	dbdLog string
}

// RequireDBD skips the test when slurmdbd and MariaDB cannot run here (or
// fails it when CI is "true"), as [Require] does for slurmctld.
func RequireDBD(t testing.TB) {
	t.Helper()
	Require(t, V2205)
	dbtest.Require(t, dbtest.MariaDB)
	for _, bin := range []string{slurmdbdBin, sacctmgrBin} {
		if _, err := os.Stat(bin); err != nil {
			msg := fmt.Sprintf("slurmtest: %s is missing (package slurmdbd); %s", bin, installHint)
			if os.Getenv("CI") == "true" {
				t.Fatal(msg + " (CI=true, so this is a failure, not a skip)")
			}
			t.Skip(msg)
		}
	}
}

// StartDBD starts a MariaDB server (dbtest's) with a user for slurmdbd,
// then slurmdbd, and waits until sacctmgr answers through it.
func StartDBD(ctx context.Context, t testing.TB) (*DBD, error) {
	d := &DBD{dir: t.TempDir()}
	t.Cleanup(d.stop)
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	d.port = ports[0]
	db := dbtest.Start(ctx, t, dbtest.MariaDB)
	dbPort := db.Port()
	if err := db.Exec(ctx, "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurmtest'", "GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1'"); err != nil {
		return nil, err
	}
	conf := fmt.Sprintf(`AuthType=auth/munge
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=%d
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=%d
StorageLoc=slurm_acct_db
StorageUser=slurm
StoragePass=slurmtest
PidFile=%s
LogFile=%s
`, d.port, dbPort, filepath.Join(d.dir, "slurmdbd.pid"), filepath.Join(d.dir, "slurmdbd.log"))
	d.dbdLog = filepath.Join(d.dir, "slurmdbd.log")
	// slurmdbd reads slurmdbd.conf beside $SLURM_CONF, which must be
	// private; sacctmgr reads slurm.conf for the slurmdbd's address.
	if err := os.WriteFile(filepath.Join(d.dir, "slurmdbd.conf"), []byte(conf), 0o600); err != nil {
		return nil, fmt.Errorf("slurmtest: %w", err)
	}
	client := fmt.Sprintf("ClusterName=%s\nSlurmctldHost=localhost(127.0.0.1)\nAuthType=auth/munge\n%s", dbdClusterKey, d.accountingLines())
	if err := os.WriteFile(filepath.Join(d.dir, "slurm.conf"), []byte(client), 0o644); err != nil {
		return nil, fmt.Errorf("slurmtest: %w", err)
	}
	if err := d.start(slurmdbdBin, "-D"); err != nil {
		return nil, err
	}
	if err := poll(ctx, "slurmdbd to answer sacctmgr", func() (bool, string) {
		out, err := d.Sacctmgr(ctx, "-n", "show", "cluster")
		return err == nil, out + d.tail(d.dbdLog)
	}); err != nil {
		return nil, err
	}
	return d, nil
}

// Cluster is the cluster name that the slurm.conf files of this package
// give (ClusterName): the name a sacctmgr load file must carry.
func (d *DBD) Cluster() string { return dbdClusterKey }

// accountingLines are the slurm.conf lines that point at this slurmdbd.
func (d *DBD) accountingLines() string {
	return fmt.Sprintf("AccountingStorageType=accounting_storage/slurmdbd\nAccountingStorageHost=127.0.0.1\nAccountingStoragePort=%d\n", d.port)
}

// Sacctmgr runs `sacctmgr -i args` against this slurmdbd and returns its
// combined output.
func (d *DBD) Sacctmgr(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, envBin, append([]string{"-i", "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		"SLURM_CONF=" + filepath.Join(d.dir, "slurm.conf"), sacctmgrBin, "-i"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("slurmtest: sacctmgr %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// start runs bin in d's folder with SLURM_CONF set, in its own process
// group (stopped with the test).
func (d *DBD) start(bin string, args ...string) error {
	cmd := exec.Command(bin, args...)
	cmd.Dir = d.dir
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "SLURM_CONF=" + filepath.Join(d.dir, "slurm.conf")}
	out, err := os.Create(filepath.Join(d.dir, filepath.Base(bin)+".out"))
	if err != nil {
		return fmt.Errorf("slurmtest: %w", err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		_ = out.Close()
		return fmt.Errorf("slurmtest: start %s: %w", bin, err)
	}
	go func() { _ = cmd.Wait(); _ = out.Close() }()
	d.procs = append(d.procs, cmd)
	return nil
}

// stop kills what StartDBD started, by process group, last first.
func (d *DBD) stop() {
	for i := len(d.procs) - 1; i >= 0; i-- {
		_ = killGroup(d.procs[i].Process)
	}
	d.procs = nil
}

// tail is the end of a log file, for an error message.
func (d *DBD) tail(path string) string {
	data, _ := os.ReadFile(path)
	if len(data) > 2000 {
		data = data[len(data)-2000:]
	}
	return "\n" + string(data)
}

// poll calls cond every pollEvery until it is true or startTimeout passes.
func poll(ctx context.Context, what string, cond func() (bool, string)) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	last := ""
	for {
		ok, out := cond()
		if ok {
			return nil
		}
		last = out
		select {
		case <-ctx.Done():
			return fmt.Errorf("slurmtest: waiting for %s: %w; last: %s", what, ctx.Err(), last)
		case <-time.After(pollEvery):
		}
	}
}
