package cloudsim

import (
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/durationpb"
)

// Nebius emulates the Nebius compute API's InstanceService/List over
// gRPC on loopback. Its messages are built from protobuf descriptors
// that restate the published definitions' field numbers (nebius/api:
// compute/v1/instance_service.proto, instance.proto,
// common/v1/metadata.proto), through the standard protobuf codec, so a
// client that encodes a field wrongly reads nothing. It serves pages
// (page_size, page_token), Faults (Throttle answers RESOURCE_EXHAUSTED
// with a RetryInfo delay, ServerErrorPage INTERNAL, RepeatToken, Omit,
// NoTopology), and refuses a call whose bearer token is not Token
// (UNAUTHENTICATED).
type Nebius struct {
	*base
	// Token is the IAM token a call must carry.
	Token string
	// Project is the only parent_id listed; another gets NOT_FOUND.
	Project string
	// RetryDelay is the RetryInfo delay of a throttled answer.
	RetryDelay time.Duration
	// Keys are the service accounts whose JWTs the token exchange takes:
	// public key ID -> service account ID and its public key. A good JWT
	// is exchanged for Token.
	Keys map[string]ServiceAccountKey

	mu        sync.Mutex
	exchanges int
	pageSizes []int64
	srv       *grpc.Server
	addr      string
}

// NewNebius returns the emulator of instances (Domain is the NVLink
// instance group; Path closest first, served root first).
func NewNebius(instances []Instance, f Faults, token, project string) *Nebius {
	return &Nebius{base: newBase(instances, f), Token: token, Project: project, RetryDelay: 20 * time.Millisecond}
}

// Start serves on a loopback port until Stop; it returns the address.
func (n *Nebius) Start() (string, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	n.srv = grpc.NewServer()
	n.srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: "nebius.compute.v1.InstanceService",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "List", Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) { //nolint:revive // grpc.MethodHandler's signature
			return n.handle(ctx, dec)
		}}},
		Metadata: "nebius/compute/v1/instance_service.proto",
	}, n)
	n.srv.RegisterService(&grpc.ServiceDesc{
		ServiceName: "nebius.iam.v1.TokenExchangeService",
		HandlerType: (*any)(nil),
		Methods: []grpc.MethodDesc{{MethodName: "Exchange", Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) { //nolint:revive // grpc.MethodHandler's signature
			return n.exchange(dec)
		}}},
		Metadata: "nebius/iam/v1/token_exchange_service.proto",
	}, n)
	n.addr = lis.Addr().String()
	go func() { _ = n.srv.Serve(lis) }()
	return n.addr, nil
}

// Stop stops the server.
func (n *Nebius) Stop() {
	if n.srv != nil {
		n.srv.Stop()
	}
}

// Exchanges returns how many tokens the exchange handed out.
func (n *Nebius) Exchanges() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.exchanges
}

// PageSizes returns the page_size of every List call, in order.
func (n *Nebius) PageSizes() []int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return slices.Clone(n.pageSizes)
}

func (n *Nebius) handle(ctx context.Context, dec func(any) error) (any, error) {
	req := dynamicpb.NewMessage(nebiusTypes.listRequest)
	if err := dec(req); err != nil {
		return nil, status.Error(codes.InvalidArgument, "cannot decode ListInstancesRequest")
	}
	md, _ := metadata.FromIncomingContext(ctx)
	if auth := md.Get("authorization"); len(auth) != 1 || auth[0] != "Bearer "+n.Token {
		return nil, status.Error(codes.Unauthenticated, "invalid or missing IAM token")
	}
	if n.throttle() {
		st, err := status.New(codes.ResourceExhausted, "rate limit exceeded").
			WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(n.RetryDelay)})
		if err != nil {
			return nil, err
		}
		return nil, st.Err()
	}
	fields := nebiusTypes.listRequest.Fields()
	parent := req.Get(fields.ByName("parent_id")).String()
	size := req.Get(fields.ByName("page_size")).Int()
	tok := req.Get(fields.ByName("page_token")).String()
	n.mu.Lock()
	n.pageSizes = append(n.pageSizes, size)
	n.mu.Unlock()
	if parent != n.Project {
		return nil, status.Errorf(codes.NotFound, "project %q not found", parent)
	}
	if size <= 0 || size > 1000 {
		size = 100
	}
	items, next, num, ok := n.tokenPage("p", tok, int(size))
	if !ok {
		return nil, status.Error(codes.InvalidArgument, "invalid page_token")
	}
	if num == n.faults.ServerErrorPage {
		return nil, status.Error(codes.Internal, "internal error")
	}
	if num == n.faults.SlowPage {
		select {
		case <-time.After(n.faults.SlowDelay):
		case <-ctx.Done(): // the caller gave up
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	return nebiusResponse(items, next), nil
}

// nebiusResponse builds a ListInstancesResponse.
func nebiusResponse(items []Instance, next string) proto.Message {
	t := nebiusTypes
	resp := dynamicpb.NewMessage(t.listResponse)
	list := resp.Mutable(t.listResponse.Fields().ByName("items")).List()
	for _, in := range items {
		msg := dynamicpb.NewMessage(t.instance)
		md := dynamicpb.NewMessage(t.metadata)
		md.Set(t.metadata.Fields().ByName("id"), protoreflect.ValueOfString(in.ID))
		md.Set(t.metadata.Fields().ByName("name"), protoreflect.ValueOfString(in.Name))
		msg.Set(t.instance.Fields().ByName("metadata"), protoreflect.ValueOfMessage(md))
		spec := dynamicpb.NewMessage(t.spec)
		spec.Set(t.spec.Fields().ByName("hostname"), protoreflect.ValueOfString(in.Name))
		spec.Set(t.spec.Fields().ByName("nvl_instance_group_id"), protoreflect.ValueOfString(in.Domain))
		if in.Type != "" {
			res := dynamicpb.NewMessage(t.resources)
			res.Set(t.resources.Fields().ByName("platform"), protoreflect.ValueOfString(in.Type))
			spec.Set(t.spec.Fields().ByName("resources"), protoreflect.ValueOfMessage(res))
		}
		msg.Set(t.instance.Fields().ByName("spec"), protoreflect.ValueOfMessage(spec))
		st := dynamicpb.NewMessage(t.status)
		st.Set(t.status.Fields().ByName("state"), protoreflect.ValueOfInt32(4)) // RUNNING
		if len(in.Path) > 0 {
			ib := dynamicpb.NewMessage(t.ibPath)
			path := ib.Mutable(t.ibPath.Fields().ByName("path")).List()
			for _, s := range reversed(in.Path) {
				path.Append(protoreflect.ValueOfString(s))
			}
			st.Set(t.status.Fields().ByName("infiniband_topology_path"), protoreflect.ValueOfMessage(ib))
		}
		msg.Set(t.instance.Fields().ByName("status"), protoreflect.ValueOfMessage(st))
		list.Append(protoreflect.ValueOfMessage(msg))
	}
	resp.Set(t.listResponse.Fields().ByName("next_page_token"), protoreflect.ValueOfString(next))
	return resp
}

// nebiusMessages are the message descriptors the emulator serves.
type nebiusMessages struct {
	listRequest, listResponse, instance, metadata, spec, resources, status, ibPath protoreflect.MessageDescriptor
}

// nebiusTypes is built once from nebiusFile; it is read-only.
var nebiusTypes = buildNebiusTypes()

func buildNebiusTypes() nebiusMessages {
	fd, err := protodesc.NewFile(nebiusFile(), nil)
	if err != nil {
		panic(fmt.Sprintf("nebius descriptors: %v", err)) // a fixed literal; any test catches it
	}
	m := fd.Messages()
	return nebiusMessages{
		listRequest: m.ByName("ListInstancesRequest"), listResponse: m.ByName("ListInstancesResponse"),
		instance: m.ByName("Instance"), metadata: m.ByName("ResourceMetadata"), spec: m.ByName("InstanceSpec"),
		resources: m.ByName("ResourcesSpec"), status: m.ByName("InstanceStatus"), ibPath: m.ByName("InstanceStatusInfinibandTopologyPath"),
	}
}

// nebiusFile restates the published messages with the fields the
// emulator fills (one package for brevity; names and numbers as
// published).
func nebiusFile() *descriptorpb.FileDescriptorProto {
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING
	i64 := descriptorpb.FieldDescriptorProto_TYPE_INT64
	i32 := descriptorpb.FieldDescriptorProto_TYPE_INT32 // the InstanceState enum: a varint on the wire
	msg := descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	rep := descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	f := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label, typeName string) *descriptorpb.FieldDescriptorProto {
		fd := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Type: typ.Enum(), Label: label.Enum()}
		if typeName != "" {
			fd.TypeName = proto.String(".nebius.compute.v1." + typeName)
		}
		return fd
	}
	m := func(name string, fields ...*descriptorpb.FieldDescriptorProto) *descriptorpb.DescriptorProto {
		return &descriptorpb.DescriptorProto{Name: proto.String(name), Field: fields}
	}
	return &descriptorpb.FileDescriptorProto{
		Name: proto.String("nebius/compute/v1/toposcope_emulator.proto"), Package: proto.String("nebius.compute.v1"),
		Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			m("ListInstancesRequest", f("parent_id", 1, str, opt, ""), f("page_size", 2, i64, opt, ""), f("page_token", 3, str, opt, "")),
			m("ListInstancesResponse", f("items", 1, msg, rep, "Instance"), f("next_page_token", 2, str, opt, "")),
			m("Instance", f("metadata", 1, msg, opt, "ResourceMetadata"), f("spec", 2, msg, opt, "InstanceSpec"), f("status", 3, msg, opt, "InstanceStatus")),
			m("ResourceMetadata", f("id", 1, str, opt, ""), f("parent_id", 2, str, opt, ""), f("name", 3, str, opt, "")),
			m("InstanceSpec", f("resources", 2, msg, opt, "ResourcesSpec"), f("hostname", 20, str, opt, ""), f("nvl_instance_group_id", 21, str, opt, "")),
			m("ResourcesSpec", f("platform", 1, str, opt, ""), f("preset", 2, str, opt, "")),
			m("InstanceStatus", f("state", 1, i32, opt, ""), f("infiniband_topology_path", 10, msg, opt, "InstanceStatusInfinibandTopologyPath")),
			m("InstanceStatusInfinibandTopologyPath", f("path", 1, str, rep, "")),
		},
	}
}
