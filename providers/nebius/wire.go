package nebius

import (
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protowire"
)

// The messages of nebius.compute.v1.InstanceService/List that the
// provider reads, encoded and decoded by hand from the published
// definitions (nebius/api: compute/v1/instance_service.proto,
// instance.proto, common/v1/metadata.proto); fields not listed are
// skipped. Field numbers:
//
//	ListInstancesRequest   parent_id 1, page_size 2 (int64), page_token 3
//	ListInstancesResponse  items 1 (Instance, repeated), next_page_token 2
//	Instance               metadata 1, spec 2, status 3
//	ResourceMetadata       id 1, parent_id 2, name 3
//	InstanceSpec           resources 2 {platform 1, preset 2}, gpu_cluster 3 {id 1},
//	                       hostname 20, nvl_instance_group_id 21
//	InstanceStatus         state 1 (enum), infiniband_topology_path 10 {path 1, repeated}

// listRequest is ListInstancesRequest.
type listRequest struct {
	ParentID  string
	PageSize  int64
	PageToken string
}

// listResponse is ListInstancesResponse.
type listResponse struct {
	Items         []instance
	NextPageToken string
}

// instance is the part of an Instance the provider reads.
type instance struct {
	ID, ParentID, Name string
	Platform, Preset   string
	GPUCluster         string
	Hostname           string
	NVLGroup           string
	State              int64
	// Path is status.infiniband_topology_path.path, root first.
	Path []string
}

// errWire means a message could not be decoded.
var errWire = errors.New("malformed protobuf message")

func (r *listRequest) marshal() []byte {
	var b []byte
	if r.ParentID != "" {
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendString(b, r.ParentID)
	}
	if r.PageSize != 0 {
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(r.PageSize))
	}
	if r.PageToken != "" {
		b = protowire.AppendTag(b, 3, protowire.BytesType)
		b = protowire.AppendString(b, r.PageToken)
	}
	return b
}

// fields calls fn for each field of a message: its number, wire type,
// the bytes of a length-delimited value or the varint value.
func fields(b []byte, fn func(num protowire.Number, typ protowire.Type, data []byte, v uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return fmt.Errorf("%w: %w", errWire, protowire.ParseError(n))
		}
		b = b[n:]
		var data []byte
		var v uint64
		switch typ {
		case protowire.BytesType:
			data, n = protowire.ConsumeBytes(b)
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return fmt.Errorf("%w: field %d: %w", errWire, num, protowire.ParseError(n))
		}
		b = b[n:]
		if err := fn(num, typ, data, v); err != nil {
			return err
		}
	}
	return nil
}

// strings returns the string fields of b by number.
func stringFields(b []byte, want map[protowire.Number]*string) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, data []byte, _ uint64) error {
		if dst, ok := want[num]; ok && typ == protowire.BytesType {
			*dst = string(data)
		}
		return nil
	})
}

func (r *listResponse) unmarshal(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, data []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			var in instance
			if err := in.unmarshal(data); err != nil {
				return fmt.Errorf("items[%d]: %w", len(r.Items), err)
			}
			r.Items = append(r.Items, in)
		case 2:
			r.NextPageToken = string(data)
		}
		return nil
	})
}

func (in *instance) unmarshal(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, data []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 1:
			return stringFields(data, map[protowire.Number]*string{1: &in.ID, 2: &in.ParentID, 3: &in.Name})
		case 2:
			return in.spec(data)
		case 3:
			return in.status(data)
		}
		return nil
	})
}

func (in *instance) spec(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, data []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case 2:
			return stringFields(data, map[protowire.Number]*string{1: &in.Platform, 2: &in.Preset})
		case 3:
			return stringFields(data, map[protowire.Number]*string{1: &in.GPUCluster})
		case 20:
			in.Hostname = string(data)
		case 21:
			in.NVLGroup = string(data)
		}
		return nil
	})
}

func (in *instance) status(b []byte) error {
	return fields(b, func(num protowire.Number, typ protowire.Type, data []byte, v uint64) error {
		switch {
		case num == 1 && typ == protowire.VarintType:
			in.State = int64(v)
		case num == 10 && typ == protowire.BytesType:
			return fields(data, func(num protowire.Number, typ protowire.Type, data []byte, _ uint64) error {
				if num == 1 && typ == protowire.BytesType {
					in.Path = append(in.Path, string(data))
				}
				return nil
			})
		}
		return nil
	})
}

// codec is the gRPC codec of these messages: the "proto" content
// subtype, so that the server sees an ordinary protobuf call.
type codec struct{}

// Name implements encoding.Codec.
func (codec) Name() string { return "proto" }

// Marshal implements encoding.Codec.
func (codec) Marshal(v any) ([]byte, error) {
	switch r := v.(type) {
	case *listRequest:
		return r.marshal(), nil
	case *exchangeRequest:
		return r.marshal(), nil
	}
	return nil, fmt.Errorf("nebius codec: cannot marshal %T", v)
}

// Unmarshal implements encoding.Codec.
func (codec) Unmarshal(data []byte, v any) error {
	switch r := v.(type) {
	case *listResponse:
		return r.unmarshal(data)
	case *exchangeResponse:
		return r.unmarshal(data)
	}
	return fmt.Errorf("nebius codec: cannot unmarshal into %T", v)
}
