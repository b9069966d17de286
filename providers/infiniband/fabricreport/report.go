// Package fabricreport hands ibnetdiscover's output from a node with an
// HCA to toposcope on a cluster that has no Slurm head node to run it
// from: `toposcope fabric-report` checks the output with the infiniband
// provider's parser and writes it, compressed, into one ConfigMap; the
// infiniband provider (configMap) reads it back at each discovery. The
// reporter's ServiceAccount may get and update that one ConfigMap and
// nothing else, so its credential is good for the fabric report alone:
// it is no node agent's token and no write token of the API.
package fabricreport

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/toposcope/toposcope/internal/kubeclient"
	"github.com/toposcope/toposcope/providers/infiniband"
)

// MaxCompressed is the largest compressed output written: a ConfigMap
// holds at most 1 MiB, annotations included. ibnetdiscover output
// compresses about tenfold.
const MaxCompressed = 1000 << 10

// ErrTooLarge means the compressed output does not fit a ConfigMap.
var ErrTooLarge = errors.New("fabric report too large for a ConfigMap")

// Write checks output (ibnetdiscover's, named source in errors) with the
// infiniband provider's parser and writes it into the report ConfigMap r,
// which must exist (the chart creates it, so the reporter needs no right
// to create). Output the parser refuses, or too large, is an error and
// nothing is written. A concurrent writer makes the update fail rather
// than be overwritten.
func Write(ctx context.Context, r infiniband.ReportConfigMap, output []byte, source, reporter string, now time.Time) error {
	if _, err := infiniband.Parse(bytes.NewReader(output), source); err != nil {
		return fmt.Errorf("fabric report not written: %w", err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(output); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if buf.Len() > MaxCompressed {
		return fmt.Errorf("%w: %d bytes compressed (%d of output), at most %d", ErrTooLarge, buf.Len(), len(output), MaxCompressed)
	}
	cms := r.Core.CoreV1().ConfigMaps(r.Namespace)
	cur, err := cms.Get(ctx, r.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get ConfigMap %s/%s: %w", r.Namespace, r.Name, err)
	}
	cm := cur.DeepCopy()
	if cm.BinaryData == nil {
		cm.BinaryData = map[string][]byte{}
	}
	if cm.Annotations == nil {
		cm.Annotations = map[string]string{}
	}
	cm.BinaryData[infiniband.ReportKey] = buf.Bytes()
	cm.Annotations[infiniband.ReportedAtAnnotation] = now.UTC().Format(time.RFC3339)
	cm.Annotations[infiniband.ReporterAnnotation] = reporter
	if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{FieldManager: kubeclient.FieldManager}); err != nil {
		return fmt.Errorf("update ConfigMap %s/%s: %w", r.Namespace, r.Name, err)
	}
	return nil
}
