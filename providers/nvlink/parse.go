package nvlink

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// GPU is the NVLink fabric information of one GPU.
type GPU struct {
	// BusID is the GPU's PCI bus ID ("00000008:01:00.0"); empty in CSV.
	BusID string
	// State and Status are the fabric registration state ("Completed",
	// "In Progress", "Not Started", "Not Supported") and its result
	// ("Success"); empty in CSV, which has neither.
	State, Status string
	// Clique is the GPU's NVLink domain; valid only when HasClique.
	Clique    Clique
	HasClique bool
	// ChassisSerial is the serial number of the chassis (rack) holding
	// the GPU, from the -q "Platform Info" section; empty when absent.
	ChassisSerial string
}

// Formats of nvidia-smi output.
const (
	// FormatAuto detects the format.
	FormatAuto = "auto"
	// FormatCSV is --query-gpu=fabric.clusterUuid,fabric.cliqueId
	// --format=csv (with or without noheader).
	FormatCSV = "csv"
	// FormatQuery is the text of nvidia-smi -q.
	FormatQuery = "query"
)

// Parse reads nvidia-smi output in the given format (FormatAuto detects
// it: -q output has an "Attached GPUs" line or "GPU <bus id>" sections).
func Parse(data []byte, format string) ([]GPU, error) {
	if format == FormatAuto || format == "" {
		format = FormatCSV
		if bytes.Contains(data, []byte("Attached GPUs")) || bytes.Contains(data, []byte("NVSMI LOG")) ||
			bytes.HasPrefix(bytes.TrimSpace(data), []byte("GPU ")) {
			format = FormatQuery
		}
	}
	if format == FormatQuery {
		return ParseQuery(data)
	}
	return ParseCSV(data)
}

// ParseCSV reads the output of
// `nvidia-smi --query-gpu=fabric.clusterUuid,fabric.cliqueId --format=csv`
// (a header line is skipped when present): one "<uuid>, <clique>" line
// per GPU. "N/A", "[N/A]" and "[Not Supported]" mean no fabric, and so
// does the all-zero UUID.
func ParseCSV(data []byte) ([]GPU, error) {
	var gpus []GPU
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		fields := strings.Split(text, ",")
		if len(fields) != 2 {
			return nil, fmt.Errorf("%w: csv line %d: want 2 fields (clusterUuid, cliqueId), got %d: %q", ErrSyntax, line, len(fields), text)
		}
		uuid, clique := strings.TrimSpace(fields[0]), strings.TrimSpace(fields[1])
		if strings.HasPrefix(strings.ToLower(uuid), "fabric.") || strings.EqualFold(uuid, "clusterUuid") {
			continue // header
		}
		g, err := fabricGPU(uuid, clique)
		if err != nil {
			return nil, fmt.Errorf("%w: csv line %d: %w", ErrSyntax, line, err)
		}
		gpus = append(gpus, g)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	return gpus, nil
}

// fabricGPU builds a GPU from its UUID and clique values.
func fabricGPU(uuid, clique string) (GPU, error) {
	var g GPU
	if notAvailable(uuid) || notAvailable(clique) {
		return g, nil
	}
	u, err := normUUID(uuid)
	if err != nil {
		return g, err
	}
	n, err := strconv.ParseUint(clique, 10, 32)
	if err != nil {
		return g, fmt.Errorf("clique ID %q is not a 32-bit number", clique)
	}
	if u != zeroUUID {
		g.Clique, g.HasClique = Clique{ClusterUUID: u, ID: uint32(n)}, true
	}
	return g, nil
}

// ParseQuery reads the text of `nvidia-smi -q`: per "GPU <bus id>"
// section, the "Fabric" subsection (State, Status, CliqueId,
// ClusterUUID) and the "Platform Info" subsection (Chassis Serial
// Number, or RACK Serial Number from drivers 565 to 570). A GPU without a Fabric section (older drivers) has no fabric.
func ParseQuery(data []byte) ([]GPU, error) {
	var gpus []GPU
	var cur *GPU
	var uuid, clique, section string
	attached := -1
	flush := func() error {
		if cur == nil {
			return nil
		}
		f, err := fabricGPU(uuid, clique)
		if err != nil {
			return fmt.Errorf("%w: GPU %s: %w", ErrSyntax, cur.BusID, err)
		}
		cur.Clique, cur.HasClique = f.Clique, f.HasClique
		gpus = append(gpus, *cur)
		cur, uuid, clique, section = nil, "", "", ""
		return nil
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		raw := strings.ReplaceAll(sc.Text(), "\t", "    ")
		text := strings.TrimSpace(raw)
		if text == "" {
			continue
		}
		indent := len(raw) - len(strings.TrimLeft(raw, " "))
		key, value, kv := strings.Cut(text, ":")
		key, value = strings.TrimSpace(key), strings.TrimSpace(value)
		switch {
		case indent == 0 && isBusIDHeader(text):
			if err := flush(); err != nil {
				return nil, err
			}
			cur = &GPU{BusID: strings.TrimSpace(strings.TrimPrefix(text, "GPU "))}
		case indent == 0 && kv && key == "Attached GPUs":
			n, err := strconv.Atoi(value)
			if err != nil {
				return nil, fmt.Errorf("%w: Attached GPUs %q", ErrSyntax, value)
			}
			attached = n
		case cur == nil:
		case indent <= 4:
			section = ""
			if !kv || value == "" {
				section = key
			}
		case indent == 8 && section == "Fabric":
			switch key {
			case "State":
				cur.State = value
			case "Status":
				cur.Status = value
			case "CliqueId":
				clique = value
			case "ClusterUUID":
				uuid = value
			}
		case indent == 8 && section == "Platform Info" && rackKey(key) && !notAvailable(value):
			cur.ChassisSerial = value
		}
	}
	if err := flush(); err != nil {
		return nil, err
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	if attached < 0 && len(gpus) == 0 {
		return nil, fmt.Errorf("%w: no \"Attached GPUs\" line and no GPU section: not nvidia-smi -q output", ErrSyntax)
	}
	if attached >= 0 && attached != len(gpus) {
		return nil, fmt.Errorf("%w: %d GPUs attached but %d GPU sections (output cut short?)", ErrSyntax, attached, len(gpus))
	}
	return gpus, nil
}

// rackKey reports whether key names the rack's serial number under
// Platform Info: "Chassis Serial Number", or "RACK Serial Number" as
// drivers 565 to 570 call it.
func rackKey(key string) bool {
	return key == "Chassis Serial Number" || key == "RACK Serial Number"
}

// isBusIDHeader reports whether text is "GPU 0000:…" (a section header).
func isBusIDHeader(text string) bool {
	rest, ok := strings.CutPrefix(text, "GPU ")
	return ok && strings.Count(rest, ":") >= 1 && !strings.Contains(rest, " ")
}
